//! capture end to end against live targets on this machine, no broker: a JVM that is not a
//! Kafka client (captured, no finding of the post, its GC logging and JFR state as before),
//! a JVM that exits mid-capture (a partial bundle, exit 1), a process that is not a client
//! (exit 3), one this user may not read (exit 4) and a pid that does not exist (exit 2).
//! The Kafka clients' captures are in probes/tests/capture.rs (they need the probes).
//!
//! The JVM target is a small program compiled here with javac (a JDK is a test
//! prerequisite: scripts/setup); it allocates so that its GC log has lines to read.

use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use kgap_analyzers::capture::catches_sigquit;
use serde_json::Value;

fn capture() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_capture"));
    c.stdin(Stdio::null());
    c
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("kgap-capture-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn out(o: &Output) -> (i32, String, String) {
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// A target that is killed when the test ends, however it ends.
struct Target(Child);

impl Drop for Target {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Target {
    fn pid(&self) -> i32 {
        self.0.id() as i32
    }
    fn alive(&mut self) -> bool {
        self.0.try_wait().map(|s| s.is_none()).unwrap_or(false)
    }
}

/// Allocates 64 KB arrays, keeping the last 256 (16 MB live), about 30 MB/s in a 64 MB
/// heap: young collections every second or so. Exits once the file `args[0]` exists, when
/// given (the test says when: a timer would race the JVM's start on a loaded machine).
const ALLOC_JAVA: &str = r#"
public class Alloc {
    public static void main(String[] a) throws Exception {
        java.io.File end = a.length > 0 ? new java.io.File(a[0]) : null;
        byte[][] keep = new byte[256][];
        int i = 0;
        while (true) {
            keep[i++ % keep.length] = new byte[64 * 1024];
            if (i % 16 == 0) {
                if (end != null && end.exists()) return;
                Thread.sleep(30);
            }
        }
    }
}
"#;

const SECRET: &str = "hunter2-not-for-bundles";

/// Every file under `dir` that holds `needle`.
fn files_holding(dir: &std::path::Path, needle: &[u8]) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            found.extend(files_holding(&p, needle));
        } else if std::fs::read(&p)
            .unwrap()
            .windows(needle.len())
            .any(|w| w == needle)
        {
            found.push(p);
        }
    }
    found
}

/// Compiles the target program once per test binary (javac is slow on 2 cores).
fn alloc_classes() -> PathBuf {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let d = tmp("classes");
        std::fs::write(d.join("Alloc.java"), ALLOC_JAVA).unwrap();
        let o = Command::new("javac")
            .arg("Alloc.java")
            .current_dir(&d)
            .output()
            .expect("javac runs (a JDK: scripts/setup)");
        assert!(o.status.success(), "javac: {}", out(&o).2);
        d
    })
    .clone()
}

/// A JVM running Alloc; `jmx`: with its local JMX agent started at launch
/// (`-Dcom.sun.management.jmxremote`, a local connector only), as a service may run.
fn start_jvm(exit_when: Option<&std::path::Path>, jmx: bool) -> Target {
    let mut c = Command::new("nice");
    // A secret on its command line, as a service's -D settings carry them: never copied.
    c.args([
        "-n",
        "19",
        "java",
        "-Xmx64m",
        &format!("-Dsasl.password={SECRET}"),
        "-cp",
    ])
    .arg(alloc_classes())
    .args(jmx.then_some("-Dcom.sun.management.jmxremote"))
    .arg("Alloc")
    .args(exit_when);
    // Its output kept, so that a JVM that dies says why.
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let log = alloc_classes().join(format!("jvm-{n}.out"));
    let file = std::fs::File::create(&log).unwrap();
    c.stdout(file.try_clone().unwrap()).stderr(file);
    let mut t = Target(c.spawn().expect("java runs"));
    // Attachable once the JVM is up: its attach listener answers jcmd. Not before it
    // catches SIGQUIT: JDK 17's jcmd sends that signal, which ends a JVM still starting.
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_secs(60) {
        if catches_sigquit(t.pid()) == Some(true) && jcmd(t.pid(), &["VM.version"]).is_some() {
            return t;
        }
        if let Some(status) = t.0.try_wait().unwrap() {
            panic!(
                "the JVM exited at its start ({status}): {}",
                std::fs::read_to_string(&log).unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    panic!("the JVM did not answer jcmd in 60 s");
}

fn jcmd(pid: i32, args: &[&str]) -> Option<String> {
    let o = Command::new("jcmd")
        .arg(pid.to_string())
        .args(args)
        .output()
        .ok()?;
    o.status
        .success()
        .then(|| String::from_utf8_lossy(&o.stdout).into_owned())
}

/// What a JVM's logging and recordings are, as the user would check them.
fn jvm_state(pid: i32) -> (Vec<String>, Vec<String>) {
    let list = jcmd(pid, &["VM.log", "list"]).expect("VM.log list");
    let outputs = list
        .lines()
        .skip_while(|l| !l.starts_with("Log output configuration"))
        .skip(1)
        .map(str::to_string)
        .collect();
    let check = jcmd(pid, &["JFR.check"]).expect("JFR.check");
    let recordings = check
        .lines()
        .filter(|l| l.starts_with("Recording "))
        .map(str::to_string)
        .collect();
    (outputs, recordings)
}

/// A capture of `pid` for 60 s into `dir`, running: the tests end it before that.
fn spawn_long_capture(pid: i32, dir: &std::path::Path) -> std::process::Child {
    capture()
        .args(["--pid", &pid.to_string(), "--duration", "60s", "--out"])
        .arg(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits until the capture in `dir` has taken `n` per-thread samples (at most 120 s); with
/// the capture's process, also that it is still running meanwhile.
fn wait_for_samples(
    dir: &std::path::Path,
    n: usize,
    mut running: Option<&mut std::process::Child>,
) {
    let t0 = Instant::now();
    while std::fs::read_to_string(dir.join("threads.jsonl")).map_or(0, |s| s.lines().count()) < n {
        assert!(
            t0.elapsed() < Duration::from_secs(120),
            "capture never sampled"
        );
        if let Some(c) = running.as_deref_mut() {
            assert!(c.try_wait().unwrap().is_none(), "capture ended early");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn json(stdout: &str) -> Value {
    serde_json::from_str(stdout).unwrap_or_else(|e| panic!("not JSON ({e}):\n{stdout}"))
}

fn files(v: &Value) -> Vec<String> {
    v["manifest"]["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_jvm_that_is_no_kafka_client_gets_no_finding_and_is_left_as_it_was() {
    let mut jvm = start_jvm(None, true);
    let before = jvm_state(jvm.pid());
    let dir = tmp("plain-jvm").join("bundle");
    let o = capture()
        .args([
            "--pid",
            &jvm.pid().to_string(),
            "--duration",
            "6s",
            "--json",
            "--out",
        ])
        .arg(&dir)
        .output()
        .unwrap();
    let (code, stdout, stderr) = out(&o);
    assert_eq!(code, 0, "{stderr}\n{stdout}");
    let v = json(&stdout);
    // Captured: the JVM's artifacts, read by gap-report.
    let f = files(&v);
    for want in [
        "jvm/recording.jfr",
        "jvm/gc.log",
        "jvm/threads-start.txt",
        "jvm/threads-middle.txt",
        "jvm/threads-end.txt",
        "jvm/jmx.txt",
        "threads.jsonl",
    ] {
        assert!(f.iter().any(|p| p == want), "{want} not in {f:?}");
        assert!(dir.join(want).is_file(), "{want}");
    }
    let gc = std::fs::read_to_string(dir.join("jvm/gc.log")).unwrap();
    assert!(
        gc.contains("Pause Young"),
        "the GC log has the capture's pauses:\n{gc}"
    );
    let used: Vec<&str> = v["report"]["files"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["used"].as_bool() == Some(true))
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert!(
        used.contains(&"jvm/recording.jfr") && used.contains(&"jvm/gc.log"),
        "{used:?}"
    );
    // No claim beyond evidence: no Kafka thread, no finding of the post.
    assert_eq!(
        v["report"]["gaps"].as_array().unwrap().len(),
        0,
        "{}",
        v["report"]["gaps"]
    );
    assert!(v["manifest"]["kafka_client"].is_null());
    // Its JMX agent ran already: read, and it holds no kafka-clients MBean.
    let jmx = &v["manifest"]["jmx"];
    assert_eq!(jmx["reachable"], true, "{jmx}");
    assert!(
        jmx["how"].as_str().unwrap().contains("already running"),
        "{jmx}"
    );
    let beans: Vec<u64> = jmx["mbeans"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d[1].as_u64().unwrap())
        .collect();
    assert_eq!(beans, vec![0, 0, 0], "{jmx}");
    let cannot: Vec<&str> = v["cannot_see"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|l| l.as_str())
        .collect();
    assert!(
        cannot.iter().any(|l| l.contains("no kafka-clients thread")),
        "{cannot:?}"
    );
    assert!(
        !cannot
            .iter()
            .any(|l| l.contains("kafka-clients' own metrics")),
        "{cannot:?}"
    );
    // The JVM runs on, its logging and recordings as before, as the user checks them.
    assert!(jvm.alive());
    assert_eq!(
        v["manifest"]["jvm_restored"]["as_before"], true,
        "{}",
        v["manifest"]
    );
    let after = jvm_state(jvm.pid());
    assert_eq!(before, after);
    // Its secret is in no file of the bundle (the recording included) and not in the report.
    assert!(
        files_holding(&dir, SECRET.as_bytes()).is_empty(),
        "{:?}",
        files_holding(&dir, SECRET.as_bytes())
    );
    assert!(!stdout.contains(SECRET));
    assert!(v["manifest"]["target"]["command"]
        .as_str()
        .unwrap()
        .contains("-Dsasl.password=[redacted]"));
    let _ = std::fs::remove_dir_all(dir.parent().unwrap());
}

#[test]
fn a_jvm_that_exits_mid_capture_leaves_a_partial_bundle() {
    let dir = tmp("exits").join("bundle");
    let exit_file = dir.parent().unwrap().join("exit-now");
    let jvm = start_jvm(Some(&exit_file), false);
    let c = spawn_long_capture(jvm.pid(), &dir);
    // The JVM exits once the capture has sampled a few seconds.
    wait_for_samples(&dir, 4, None);
    std::fs::write(&exit_file, b"").unwrap();
    let o = c.wait_with_output().unwrap();
    let (code, stdout, stderr) = out(&o);
    assert_eq!(code, 1, "partial: {stderr}\n{stdout}");
    assert!(stdout.contains("the process exited"), "{stdout}");
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["complete"], false);
    assert_eq!(manifest["ended"], "the process exited");
    // Usable: the seconds before the exit were recorded and read.
    assert!(stdout.contains("threads.jsonl [thread-cpu]"), "{stdout}");
    let _ = std::fs::remove_dir_all(dir.parent().unwrap());
}

#[test]
fn a_process_that_is_not_a_client_is_refused_and_nothing_is_written() {
    let t = Target(Command::new("sleep").arg("60").spawn().unwrap());
    let dir = tmp("not-client").join("bundle");
    let o = capture()
        .args(["--pid", &t.pid().to_string(), "--out"])
        .arg(&dir)
        .output()
        .unwrap();
    let (code, _, stderr) = out(&o);
    assert_eq!(code, 3, "{stderr}");
    assert!(stderr.contains("is not a Kafka client"), "{stderr}");
    assert!(!dir.exists());
    // A pid that does not exist: usage, with how to find the right one.
    let o = capture().args(["--pid", "2147483646"]).output().unwrap();
    let (code, _, stderr) = out(&o);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("no such process") && stderr.contains("pgrep"),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(dir.parent().unwrap());
}

fn my_uid() -> u32 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap();
    let l = s.lines().find(|l| l.starts_with("Uid:")).unwrap();
    l.split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[test]
fn a_process_of_another_user_is_refused_with_the_fix() {
    // Root may read any process: the capture then runs as nobody against root's. Otherwise
    // pid 1 is another user's.
    let root = my_uid() == 0;
    let sleeper = root.then(|| Target(Command::new("sleep").arg("60").spawn().unwrap()));
    let pid = sleeper.as_ref().map_or(1, Target::pid);
    let dir = tmp("no-permission");
    let mut c = if root {
        let mut c = Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(env!("CARGO_BIN_EXE_capture"));
        c
    } else {
        capture()
    };
    let o = c
        .args(["--pid", &pid.to_string(), "--out"])
        .arg(dir.join("b"))
        .output()
        .unwrap();
    let (code, _, stderr) = out(&o);
    assert_eq!(code, 4, "{stderr}");
    assert!(
        stderr.contains("permission denied") && stderr.contains("sudo -u"),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn ctrl_c_stops_the_capture_and_undoes_the_jvm_s_changes() {
    let mut jvm = start_jvm(None, false);
    let before = jvm_state(jvm.pid());
    let dir = tmp("interrupted").join("bundle");
    let mut c = spawn_long_capture(jvm.pid(), &dir);
    // Interrupted while it samples: the recording and GC logging are on by then.
    wait_for_samples(&dir, 3, Some(&mut c));
    // SAFETY: a signal to the child this test started.
    unsafe { libc::kill(c.id() as i32, libc::SIGINT) };
    let o = c.wait_with_output().unwrap();
    let (code, stdout, stderr) = out(&o);
    assert_eq!(code, 130, "{stderr}\n{stdout}");
    assert!(stdout.contains("restored"), "{stdout}");
    // Its JMX agent does not run, and capture left it so: the report says how to get it.
    let words = stdout.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        words.contains("jmx not reachable") && words.contains("`capture --jmx` starts"),
        "{stdout}"
    );
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["ended"], "interrupted");
    assert!(jvm.alive());
    assert_eq!(jvm_state(jvm.pid()), before);
    let _ = std::fs::remove_dir_all(dir.parent().unwrap());
}
