//! Faults mid-run, on a broker of the test's own (never the shared one): each with the
//! probe's exit code, its message and what it kept.
//! - the broker paused (SIGSTOP) and resumed: the sweep goes on; the run that overlapped
//!   the stall is set aside with why, and no verdict counts it;
//! - the broker killed (SIGKILL): a clear error well within 30 s naming the topic, exit 1,
//!   and result.json with what was measured, marked failed;
//! - SIGTERM: what was measured, exit 130, the topic deleted (as Ctrl-C).

use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

const PORT: u16 = 9620;

fn kafka(args: &[&str]) -> std::process::Output {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/kafka");
    Command::new(script)
        .args(args)
        .env("KGAP_KAFKA_PORT", PORT.to_string())
        .env("KGAP_KAFKA_HEAP", "512m")
        .output()
        .expect("scripts/kafka runs")
}

/// The test's own broker: started here, stopped (and its data dropped) on drop.
struct OwnBroker;

impl OwnBroker {
    fn up() -> OwnBroker {
        let out = kafka(&["up"]);
        assert!(
            out.status.success(),
            "scripts/kafka up on port {PORT}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        OwnBroker
    }

    fn pid(&self) -> i32 {
        let state = PathBuf::from(format!("/tmp/kgap-kafka-{PORT}/kafka.pid"));
        std::fs::read_to_string(state)
            .expect("pid file")
            .trim()
            .parse()
            .expect("pid")
    }

    fn signal(&self, sig: nix::sys::signal::Signal) {
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(self.pid()), sig).unwrap();
    }
}

impl Drop for OwnBroker {
    fn drop(&mut self) {
        // A stopped broker must get its SIGCONT before SIGTERM can reach it.
        if let Ok(pid) = std::fs::read_to_string(format!("/tmp/kgap-kafka-{PORT}/kafka.pid")) {
            if let Ok(pid) = pid.trim().parse::<i32>() {
                let _ = nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(pid),
                    nix::sys::signal::Signal::SIGCONT,
                );
            }
        }
        let _ = kafka(&["down"]);
    }
}

/// A fetch-backoff sweep long enough to be hit mid-run: every rep naps for seconds.
fn start_probe(out: &Path, reps: &str) -> (Child, mpsc::Receiver<String>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_probe-fetch-backoff"))
        .args([
            "--brokers",
            &format!("127.0.0.1:{PORT}"),
            "--messages",
            "120000",
            "--partitions",
            "2",
            "--reps",
            reps,
            "--duration",
            "4s",
            "-X",
            "queued.min.messages=5000",
            "--out",
            out.to_str().unwrap(),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("probe starts");
    let stderr = BufReader::new(child.stderr.take().unwrap());
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in stderr.lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    (child, rx)
}

/// Waits for a stderr line containing `needle`; returns every line seen so far.
fn wait_for(rx: &mpsc::Receiver<String>, needle: &str, seen: &mut Vec<String>) {
    let deadline = Instant::now() + Duration::from_secs(120);
    while Instant::now() < deadline {
        if let Ok(line) = rx.recv_timeout(Duration::from_secs(1)) {
            let hit = line.contains(needle);
            seen.push(line);
            if hit {
                return;
            }
        }
    }
    panic!("no {needle:?} on stderr within 120 s: {seen:#?}");
}

fn result(dir: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(dir.join("result.json")).expect("result.json"))
        .expect("result.json is JSON")
}

#[test]
fn faults_mid_run_each_end_in_a_clear_outcome() {
    let broker = OwnBroker::up();

    // 1. Paused for 10 s, then resumed: the sweep goes on, the stalled run is set aside.
    let dir = tempfile::tempdir().unwrap();
    let (mut child, rx) = start_probe(dir.path(), "3");
    let mut seen = Vec::new();
    wait_for(&rx, "] backoff-", &mut seen);
    broker.signal(nix::sys::signal::Signal::SIGSTOP);
    std::thread::sleep(Duration::from_secs(10));
    broker.signal(nix::sys::signal::Signal::SIGCONT);
    let status = child.wait().unwrap();
    seen.extend(rx.try_iter());
    assert_eq!(status.code(), Some(0), "{seen:#?}");
    let r = result(dir.path());
    let discarded = r["discarded"].as_array().expect("a run set aside");
    assert!(!discarded.is_empty(), "{r}");
    assert!(
        discarded[0]["reason"]
            .as_str()
            .unwrap()
            .contains("did not answer"),
        "{r}"
    );
    assert!(r["warnings"].to_string().contains("set aside"), "{r}");
    let kept: usize = r["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["runs"].as_array().unwrap().len())
        .sum();
    assert_eq!(kept + discarded.len(), 6, "every run is kept or set aside: {r}");

    // 2. Killed: a clear error within 30 s, naming the topic; what was measured is kept.
    let dir = tempfile::tempdir().unwrap();
    let (mut child, rx) = start_probe(dir.path(), "5");
    let mut seen = Vec::new();
    wait_for(&rx, "] backoff-", &mut seen);
    let topic = seen
        .iter()
        .find_map(|l| l.split("topic ").nth(1))
        .and_then(|rest| rest.split_whitespace().next())
        .map(str::to_string)
        .expect("the probe names its topic");
    broker.signal(nix::sys::signal::Signal::SIGKILL);
    let killed = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(
            killed.elapsed() < Duration::from_secs(30),
            "no clear outcome 30 s after the broker died"
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    seen.extend(rx.try_iter());
    let text = seen.join("\n");
    assert_eq!(status.code(), Some(1), "{text}");
    assert!(text.contains("stopped answering"), "{text}");
    assert!(text.contains(&topic), "the error names the topic: {text}");
    let r = result(dir.path());
    assert!(r["failed"].as_str().unwrap().contains("stopped answering"), "{r}");
    assert!(r["points"].to_string().contains("msgs_per_s"), "a run was measured: {r}");
    drop(broker);

    // 3. SIGTERM: as Ctrl-C, what was measured, exit 130, the topic deleted.
    let broker = OwnBroker::up();
    let dir = tempfile::tempdir().unwrap();
    let (child, rx) = start_probe(dir.path(), "5");
    let mut seen = Vec::new();
    wait_for(&rx, "] backoff-", &mut seen);
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("interrupted"), "{text}");
    let r = result(dir.path());
    assert_eq!(r["interrupted"], true);
    let topic = r["topics"][0].as_str().unwrap().to_string();
    let list = Command::new(Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/kafka"))
        .args(["status"])
        .env("KGAP_KAFKA_PORT", PORT.to_string())
        .output()
        .unwrap();
    assert!(
        !String::from_utf8_lossy(&list.stdout).contains(&topic),
        "{topic} left behind"
    );
    drop(broker);
}
