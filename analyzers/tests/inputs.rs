//! Every analyzer's input (issue 14 §5): a FIFO nobody writes to is named at once and said
//! to be quiet after 10 s, then read to its end when a writer comes; SIGINT ends the wait;
//! `-` (stdin) and gzip give the report a plain file gives; a directory, a cut gzip stream,
//! an empty file and binary garbage each exit 2 with a clear first line, never a panic.

#[path = "common/gzip.rs"]
mod gzip;

use gzip::gzip;
use std::io::{BufRead, BufReader, Read, Write};
#[cfg(unix)]
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// One analyzer: its binary, the arguments before the input, and a fixture it analyses.
struct Tool {
    name: &'static str,
    exe: &'static str,
    before: &'static [&'static str],
    fixture: &'static str,
}

const TOOLS: &[Tool] = &[
    Tool {
        name: "analyze-protocol-log",
        exe: env!("CARGO_BIN_EXE_analyze-protocol-log"),
        before: &["--json"],
        fixture: "librdkafka/producer-kafka431-batch1m-6p-protocol/debug.log.gz",
    },
    Tool {
        name: "analyze-fetch-log",
        exe: env!("CARGO_BIN_EXE_analyze-fetch-log"),
        before: &["--json"],
        fixture: "librdkafka/consumer-kafka431-backoff-10ms/debug.log",
    },
    Tool {
        name: "analyze-gc-log",
        exe: env!("CARGO_BIN_EXE_analyze-gc-log"),
        before: &["--json"],
        fixture: "gc/g1-jdk17-unbounded.log",
    },
    Tool {
        name: "analyze-jfr",
        exe: env!("CARGO_BIN_EXE_analyze-jfr"),
        before: &["--json"],
        fixture: "jfr/socket-os-buffers-jdk17.jfr",
    },
    Tool {
        name: "analyze-stats",
        exe: env!("CARGO_BIN_EXE_analyze-stats"),
        before: &["--json"],
        fixture: "stats/kafka431-producer-ceiling-16k.jsonl",
    },
    Tool {
        name: "analyze-thread-cpu",
        exe: env!("CARGO_BIN_EXE_analyze-thread-cpu"),
        before: &["--json", "--from"],
        fixture: "threads/spin-top-batch.txt",
    },
];

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures")
        .join(rel)
}

/// The fixture's bytes, decompressed when it is gzip: what a plain file of it holds.
fn plain_bytes(t: &Tool) -> Vec<u8> {
    let raw = std::fs::read(fixture(t.fixture)).unwrap();
    if raw.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        flate2::read::MultiGzDecoder::new(&raw[..])
            .read_to_end(&mut out)
            .unwrap();
        out
    } else {
        raw
    }
}

struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> Self {
        let d = std::env::temp_dir().join(format!("kgap-inputs-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        TempDir(d)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn mkfifo(p: &Path) {
    let c = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

/// Runs `t` on `input` (a path, or `-` with `stdin` fed), returning (exit code, stdout,
/// stderr).
fn run(t: &Tool, input: &Path, stdin: Option<&[u8]>) -> (i32, String, String) {
    let mut child = Command::new(t.exe)
        .args(t.before)
        .arg(input)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    if let Some(bytes) = stdin {
        let mut w = child.stdin.take().unwrap();
        let bytes = bytes.to_vec();
        // A writer thread: the tool may finish before it has read everything.
        std::thread::spawn(move || {
            let _ = w.write_all(&bytes);
        });
    }
    let o = child.wait_with_output().unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// The report without what names or describes the input itself (its name, gzip, bytes).
fn analysis(t: &Tool, stdout: &str) -> serde_json::Value {
    let mut v: serde_json::Value = serde_json::from_str(stdout)
        .unwrap_or_else(|e| panic!("{}: not JSON ({e}):\n{stdout}", t.name));
    let o = v.as_object_mut().unwrap();
    for k in ["input", "input_name", "files", "source"] {
        o.remove(k);
    }
    v
}

/// A child's stderr, line by line, on a channel (so a test can wait with a deadline).
fn stderr_lines(child: &mut Child) -> mpsc::Receiver<String> {
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for l in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = tx.send(l);
        }
    });
    rx
}

/// Waits for a line holding `needle`; returns it and when it came.
fn wait_for(
    rx: &mpsc::Receiver<String>,
    needle: &str,
    limit: Duration,
) -> Result<(String, Duration), String> {
    let start = Instant::now();
    let mut seen = Vec::new();
    loop {
        let left = limit.saturating_sub(start.elapsed());
        match rx.recv_timeout(left) {
            Ok(l) if l.contains(needle) => return Ok((l, start.elapsed())),
            Ok(l) => seen.push(l),
            Err(e) => {
                return Err(format!(
                    "no {needle:?} after {:?} ({e}); saw {seen:?}",
                    start.elapsed()
                ))
            }
        }
    }
}

fn spawn_on(t: &Tool, input: &Path) -> Child {
    Command::new(t.exe)
        .args(t.before)
        .arg(input)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

#[cfg(unix)]
#[test]
fn a_fifo_nobody_writes_to_is_named_said_quiet_after_10_s_then_read_to_its_end() {
    let d = TempDir::new("fifo");
    // Every tool at once: the 10 s are waited once, not six times.
    let runs: Vec<_> = TOOLS
        .iter()
        .map(|t| {
            let fifo = d.0.join(format!("{}.fifo", t.name));
            mkfifo(&fifo);
            let mut child = spawn_on(t, &fifo);
            let rx = stderr_lines(&mut child);
            (t, fifo, child, rx)
        })
        .collect();
    let mut failures = Vec::new();
    for (t, fifo, mut child, rx) in runs {
        let shown = fifo.display().to_string();
        let note = wait_for(
            &rx,
            &format!("reading a FIFO: {shown}"),
            Duration::from_secs(5),
        );
        let quiet = wait_for(
            &rx,
            &format!(
                "{}: nothing read from {shown} for 10 s; waiting (Ctrl-C to stop)",
                t.name
            ),
            Duration::from_secs(20),
        );
        match (&note, &quiet) {
            (Ok(_), Ok((_, at))) if at.as_secs_f64() < 16.0 => {}
            _ => failures.push(format!("{}: note {note:?}, quiet {quiet:?}", t.name)),
        }
        // A writer comes: the whole fixture is read and analysed as from a file.
        let mut w = std::fs::OpenOptions::new().write(true).open(&fifo).unwrap();
        w.write_all(&plain_bytes(t)).unwrap();
        drop(w);
        let mut out = String::new();
        child
            .stdout
            .take()
            .unwrap()
            .read_to_string(&mut out)
            .unwrap();
        let status = child.wait().unwrap();
        if status.code() != Some(0) {
            failures.push(format!("{}: exit {status} after the writer closed", t.name));
            continue;
        }
        let (code, from_file, err) = run(t, &fixture(t.fixture), None);
        assert_eq!(code, 0, "{}: {err}", t.name);
        if analysis(t, &out) != analysis(t, &from_file) {
            failures.push(format!(
                "{}: the FIFO's report differs from the file's",
                t.name
            ));
        }
        // Told once: no second quiet line while the data flowed.
        let again: Vec<String> = rx
            .try_iter()
            .filter(|l| l.contains("nothing read"))
            .collect();
        if !again.is_empty() {
            failures.push(format!("{}: told again: {again:?}", t.name));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

#[cfg(unix)]
#[test]
fn sigint_ends_the_wait_on_a_fifo() {
    let d = TempDir::new("sigint");
    for t in TOOLS {
        let fifo = d.0.join(format!("{}.fifo", t.name));
        mkfifo(&fifo);
        // As at a terminal: SIGINT at its default. A suite started in the background by a
        // shell without job control inherits it ignored (POSIX), and a tool rightly keeps
        // an ignored signal ignored, as nohup relies on.
        let mut child = {
            let mut c = Command::new(t.exe);
            c.args(t.before)
                .arg(&fifo)
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            unsafe {
                c.pre_exec(|| {
                    libc::signal(libc::SIGINT, libc::SIG_DFL);
                    Ok(())
                });
            }
            c.spawn().unwrap()
        };
        let rx = stderr_lines(&mut child);
        wait_for(&rx, "reading a FIFO", Duration::from_secs(5)).unwrap();
        assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
        let start = Instant::now();
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break s;
            }
            assert!(
                start.elapsed() < Duration::from_secs(5),
                "{}: still waiting after SIGINT",
                t.name
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        use std::os::unix::process::ExitStatusExt;
        assert!(
            status.signal() == Some(libc::SIGINT) || status.code() == Some(130),
            "{}: {status}",
            t.name
        );
    }
}

#[test]
fn stdin_and_gzip_give_the_report_a_plain_file_gives() {
    let d = TempDir::new("stdin-gzip");
    for t in TOOLS {
        let plain = plain_bytes(t);
        let file = d.0.join(format!("{}.in", t.name));
        std::fs::write(&file, &plain).unwrap();
        let gz = d.0.join(format!("{}.in.gz", t.name));
        std::fs::write(&gz, gzip(&plain)).unwrap();
        let (code, want, err) = run(t, &file, None);
        assert_eq!(code, 0, "{}: {err}", t.name);
        let want = analysis(t, &want);
        for (how, input, stdin) in [
            ("stdin", Path::new("-"), Some(plain.clone())),
            ("gzip file", gz.as_path(), None),
            ("gzip on stdin", Path::new("-"), Some(gzip(&plain))),
        ] {
            let (code, got, err) = run(t, input, stdin.as_deref());
            assert_eq!(code, 0, "{} on {how}: {err}", t.name);
            assert_eq!(analysis(t, &got), want, "{} on {how}", t.name);
            assert!(!err.contains("nothing read"), "{} on {how}: {err}", t.name);
        }
    }
}

#[test]
fn a_directory_an_empty_file_and_garbage_exit_2_with_a_clear_word() {
    let d = TempDir::new("bad");
    let dir = d.0.join("a-folder");
    std::fs::create_dir(&dir).unwrap();
    let empty = d.0.join("empty");
    std::fs::write(&empty, b"").unwrap();
    // Deterministic bytes with a NUL early: binary by any measure.
    let garbage = d.0.join("garbage");
    let bytes: Vec<u8> = (0..65_536u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    std::fs::write(&garbage, &bytes).unwrap();
    for t in TOOLS {
        for (case, input, says) in [
            ("a directory", dir.as_path(), "a directory, not a file"),
            ("an empty file", empty.as_path(), "empty"),
            ("garbage", garbage.as_path(), ""),
        ] {
            let (code, _, err) = run(t, input, None);
            assert_eq!(code, 2, "{} on {case}: {err}", t.name);
            let first = err.lines().next().unwrap_or("");
            assert!(
                first.starts_with(&format!("{}: ", t.name)),
                "{} on {case}: {err}",
                t.name
            );
            assert!(err.contains(says), "{} on {case}: {err}", t.name);
            assert!(!err.contains("panicked"), "{} on {case}: {err}", t.name);
        }
    }
}

#[test]
fn a_gzip_cut_short_is_analysed_up_to_the_cut_and_says_so() {
    // Half of each fixture's gzip: the tool reads what inflated, reports it and says where
    // the stream ended (it used to exit 2 with "incomplete deflate stream" and keep nothing).
    let d = TempDir::new("cut-gzip");
    for t in TOOLS {
        let gz = gzip(&plain_bytes(t));
        let cut = d.0.join(format!("{}.cut.gz", t.name));
        std::fs::write(&cut, gzip::cut_in_half(&gz)).unwrap();
        let (code, out, err) = run(t, &cut, None);
        assert!(!err.contains("panicked"), "{}: {err}", t.name);
        // The 2 KB top -H paste's first half inflates to its header lines only: nothing to
        // analyse (exit 2), and the error says the stream was cut.
        if t.name == "analyze-thread-cpu" {
            assert_eq!(code, 2, "{}: {err}\n{out}", t.name);
            assert!(
                err.contains("the gzip stream ends early"),
                "{}: {err}",
                t.name
            );
            continue;
        }
        assert_eq!(code, 0, "{}: {err}\n{out}", t.name);
        assert!(
            out.contains("the gzip stream ends early"),
            "{} does not say where the stream ended:\n{out}",
            t.name
        );
        let v: serde_json::Value = serde_json::from_str(&out)
            .unwrap_or_else(|e| panic!("{}: not JSON ({e}): {out}", t.name));
        assert!(v.is_object(), "{}", t.name);
    }
    // A larger paste (top -H then gdb, 33 KB) cut in half still holds snapshots: read.
    let gz = gzip(&std::fs::read(fixture("threads/probe-top-then-gdb.txt")).unwrap());
    let cut = d.0.join("paste.cut.gz");
    std::fs::write(&cut, gzip::cut_in_half(&gz)).unwrap();
    let (code, out, err) = run(&TOOLS[5], &cut, None);
    assert_eq!(code, 0, "{err}\n{out}");
    assert!(out.contains("the gzip stream ends early"), "{out}");
}

#[cfg(unix)]
#[test]
fn gap_report_lists_a_fifo_in_its_folder_without_waiting_for_it() {
    let d = TempDir::new("gap-fifo");
    mkfifo(&d.0.join("pipe"));
    std::fs::copy(fixture("gc/g1-jdk17-unbounded.log"), d.0.join("gc.log")).unwrap();
    let start = Instant::now();
    let o = Command::new(env!("CARGO_BIN_EXE_gap-report"))
        .arg("--json")
        .arg(&d.0)
        .output()
        .unwrap();
    assert!(
        start.elapsed() < Duration::from_secs(9),
        "waited {:?}",
        start.elapsed()
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let pipe = v["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == "pipe")
        .expect("the FIFO is listed");
    assert_eq!(pipe["used"], false);
    assert!(
        pipe["reason"]
            .as_str()
            .unwrap()
            .contains("not a regular file"),
        "{pipe}"
    );
}

#[cfg(unix)]
#[test]
fn rotated_gc_logs_with_a_fifo_among_them_are_read_in_the_order_given() {
    // Ordering rotated files peeks at each one's first timestamp: on a FIFO that would block
    // before any word, and eat what it read.
    let d = TempDir::new("gc-fifo");
    let fifo = d.0.join("gc.log.fifo");
    mkfifo(&fifo);
    let log = fixture("gc/g1-jdk17-unbounded.log");
    let mut child = Command::new(env!("CARGO_BIN_EXE_analyze-gc-log"))
        .arg("--json")
        .arg(&fifo)
        .arg(&log)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let rx = stderr_lines(&mut child);
    wait_for(&rx, "reading a FIFO", Duration::from_secs(5)).unwrap();
    let mut w = std::fs::OpenOptions::new().write(true).open(&fifo).unwrap();
    w.write_all(&std::fs::read(&log).unwrap()[..20_000])
        .unwrap();
    drop(w);
    let mut out = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    let status = child.wait().unwrap();
    let err: Vec<String> = rx.try_iter().collect();
    assert_eq!(status.code(), Some(0), "{err:?}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(v["pauses"]["count"].as_u64().unwrap() > 0, "{out}");
}

/// Runs `t` on `input` under a terminal of its own (`script`: stdout and stderr both go to
/// the pseudo-terminal), returning everything it wrote there.
fn run_on_a_terminal(t: &Tool, input: &Path, extra: &[&str]) -> String {
    let mut cmd = vec![t.exe.to_string()];
    cmd.extend(extra.iter().map(|s| s.to_string()));
    cmd.extend(t.before.iter().map(|s| s.to_string()));
    cmd.push(input.display().to_string());
    let line = cmd
        .iter()
        .map(|a| format!("'{a}'"))
        .collect::<Vec<_>>()
        .join(" ");
    let o = Command::new("script")
        .args(["-qec", &line, "/dev/null"])
        .stdin(Stdio::null())
        .output()
        .expect("util-linux script, for a terminal");
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn a_read_longer_than_2_s_shows_progress_on_a_terminal_and_q_hides_it() {
    // A writer that pauses 3 s half-way makes the read long; the bar names the input.
    let handles: Vec<_> = TOOLS
        .iter()
        .map(|t| {
            std::thread::spawn(move || {
                let d = TempDir::new(&format!("progress-{}", t.name));
                let bytes = plain_bytes(t);
                let mut seen = Vec::new();
                for quiet in [false, true] {
                    let fifo = d.0.join(format!("in-{quiet}.fifo"));
                    mkfifo(&fifo);
                    let (w, b) = (fifo.clone(), bytes.clone());
                    let writer = std::thread::spawn(move || {
                        let mut f = std::fs::OpenOptions::new().write(true).open(&w).unwrap();
                        let half = b.len() / 2;
                        f.write_all(&b[..half]).unwrap();
                        std::thread::sleep(Duration::from_secs(3));
                        let _ = f.write_all(&b[half..]);
                    });
                    let extra: &[&str] = if quiet { &["-q"] } else { &[] };
                    let out = run_on_a_terminal(t, &fifo, extra);
                    writer.join().unwrap();
                    let name = format!("in-{quiet}.fifo: reading");
                    seen.push((quiet, out.contains(&name), out));
                }
                (t.name, seen)
            })
        })
        .collect();
    for h in handles {
        let (name, seen) = h.join().unwrap();
        for (quiet, shown, out) in seen {
            assert_eq!(
                shown, !quiet,
                "{name} (-q: {quiet}): progress shown {shown}:\n{out}"
            );
        }
    }
}

#[test]
fn gap_report_shows_its_files_on_a_terminal_and_q_hides_it() {
    // The folder bar, shown at once (KGAP_PROGRESS_AFTER_MS=0) on the GC fixtures' folder.
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/gc");
    for quiet in [false, true] {
        let line = format!(
            "KGAP_PROGRESS_AFTER_MS=0 '{}' {} '{}'",
            env!("CARGO_BIN_EXE_gap-report"),
            if quiet { "-q" } else { "" },
            dir.display()
        );
        let o = Command::new("script")
            .args(["-qec", &line, "/dev/null"])
            .stdin(Stdio::null())
            .output()
            .expect("util-linux script, for a terminal");
        let out = String::from_utf8_lossy(&o.stdout);
        // The report itself follows, whatever the bar did.
        assert!(out.contains("[java-gc-collapse]"), "{out}");
        assert_eq!(
            out.contains("gap-report: file "),
            !quiet,
            "-q: {quiet}: {out}"
        );
    }
}
