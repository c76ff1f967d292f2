//! The binaries: exit codes, --json, --timeline, --help, stdin, gzip.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use crate::common::*;

const PROTOCOL: &str = env!("CARGO_BIN_EXE_analyze-protocol-log");
const FETCH: &str = env!("CARGO_BIN_EXE_analyze-fetch-log");

/// A fresh directory per test, removed when the test ends.
struct TempDir(PathBuf);

impl TempDir {
    fn join(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn temp_dir(name: &str) -> TempDir {
    let dir = std::env::temp_dir().join(format!("kgap-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    TempDir(dir)
}

fn run(bin: &str, args: &[&str], stdin: Option<&[u8]>) -> Output {
    let mut child = Command::new(bin)
        .args(args)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    if let Some(data) = stdin {
        child.stdin.take().unwrap().write_all(data).unwrap();
    }
    child.wait_with_output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn protocol_report_from_a_file() {
    let dir = temp_dir("proto-file");
    let log = dir.join("rdkafka.log");
    std::fs::write(&log, raw(&ceiling_log(4, 2000, 15_621))).unwrap();
    let out = run(PROTOCOL, &[log.to_str().unwrap()], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    assert!(s.contains("per-request ceiling"), "{s}");
    assert!(s.contains("Produce"), "{s}");
    // The default output fits 80 columns.
    for line in s.lines() {
        assert!(line.chars().count() <= 80, "too wide: {line}");
    }
}

#[test]
fn json_is_the_contract() {
    let out = run(
        PROTOCOL,
        &["--json"],
        Some(raw(&ceiling_log(4, 2000, 15_621)).as_bytes()),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for key in [
        "lines_read",
        "records_recognised",
        "timestamps",
        "requests",
        "diagnoses",
    ] {
        assert!(v.get(key).is_some(), "missing {key}");
    }
    let r = &v["requests"][0];
    for key in [
        "broker",
        "request",
        "count",
        "bytes_total",
        "bytes_p50",
        "rtt_ms_p50",
        "rtt_ms_p99",
        "rtt_ms_max",
    ] {
        assert!(r.get(key).is_some(), "requests[] missing {key}");
    }
    let d = &v["diagnoses"][0];
    assert_eq!(d["id"], "per-request-ceiling");
    for key in ["evidence", "cause", "fix"] {
        assert!(d.get(key).is_some(), "diagnoses[] missing {key}");
    }
}

#[test]
fn fetch_json_has_partitions() {
    let out = run(
        FETCH,
        &["--json", "-"],
        Some(raw(&fetch_backoff_log(2, 5, 1000)).as_bytes()),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let p = &v["partitions"][0];
    for key in [
        "topic",
        "partition",
        "backoffs",
        "backoff_ms_total",
        "backoff_fraction",
    ] {
        assert!(p.get(key).is_some(), "partitions[] missing {key}");
    }
    assert_eq!(v["diagnoses"][0]["id"], "fetch-queue-backoff");
}

#[test]
fn timeline_file_is_written() {
    let dir = temp_dir("timeline");
    let csv = dir.join("t.csv");
    let out = run(
        FETCH,
        &["--timeline", csv.to_str().unwrap()],
        Some(raw(&fetch_backoff_log(2, 5, 1000)).as_bytes()),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let t = std::fs::read_to_string(&csv).unwrap();
    assert!(t.starts_with("second,fetch_requests,"), "{t}");
    assert!(t.lines().count() >= 5);
}

#[test]
fn gzip_file_is_read() {
    let dir = temp_dir("gzip");
    let path = dir.join("log.gz");
    let gz = crate::gzip::gzip(raw(&ceiling_log(4, 2000, 15_621)).as_bytes());
    std::fs::write(&path, gz).unwrap();
    let out = run(PROTOCOL, &["--json", path.to_str().unwrap()], None);
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["input"]["gzip"], true);
    assert_eq!(v["requests"][0]["count"], 8000);
}

#[test]
fn unusable_input_exits_2_and_says_what_was_read() {
    let out = run(PROTOCOL, &[], Some(b"hello\nworld\n"));
    assert_eq!(out.status.code(), Some(2));
    let e = text(&out.stderr);
    assert!(e.contains("read 2 lines"), "{e}");
    assert!(e.contains("recognised 0 librdkafka records"), "{e}");
    assert!(e.contains("debug=protocol"), "{e}");
    assert!(!e.contains("panicked"));

    let out = run(FETCH, &[], Some(b""));
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("the input is empty"));

    let out = run(PROTOCOL, &[], Some(b"\x00\x01\x02binary\x00"));
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("binary file"));
}

#[test]
fn a_fetch_only_log_is_unusable_for_the_protocol_tool_and_vice_versa() {
    let out = run(
        PROTOCOL,
        &[],
        Some(raw(&fetch_backoff_log(1, 2, 1000)).as_bytes()),
    );
    assert_eq!(out.status.code(), Some(2));
    let out = run(FETCH, &[], Some(raw(&ceiling_log(1, 10, 1000)).as_bytes()));
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn missing_file_and_bad_flags_exit_2() {
    let out = run(PROTOCOL, &["/nonexistent/rdkafka.log"], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("/nonexistent/rdkafka.log"));
    let out = run(FETCH, &["--no-such-flag"], None);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn help_teaches_and_ends_with_examples() {
    for bin in [PROTOCOL, FETCH] {
        let out = run(bin, &["--help"], None);
        assert_eq!(out.status.code(), Some(0));
        let h = text(&out.stdout);
        let tail = &h[h.rfind("examples:").expect("an examples: block")..];
        assert!(
            tail.lines()
                .skip(1)
                .all(|l| l.trim().is_empty() || l.contains('#')),
            "{tail}"
        );
        assert!(h.contains("Exit status"), "{h}");
    }
}
