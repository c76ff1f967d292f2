//! The binary's contract: exit codes, --help, --json, --csv, --svg-dir, stdin.

use std::io::Write;
use std::process::{Command, Stdio};

use crate::common::*;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_analyze-stats"))
}

fn tmp(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("kgap-analyze-stats-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn help_teaches_and_ends_with_examples_and_exit_codes() {
    let out = bin().arg("--help").output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let ex = text.find("examples:").expect("examples");
    assert!(text[ex..].contains("exit status"));
    assert!(text.contains("per-request-ceiling"));
}

#[test]
fn exit_2_for_no_statistics_missing_files_and_bad_settings() {
    let d = tmp("exit2");
    let empty = d.join("empty.json");
    std::fs::write(&empty, b"").unwrap();
    let out = bin().arg(&empty).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.starts_with("analyze-stats: "), "{err}");
    assert!(err.contains("empty"), "{err}");
    assert_eq!(
        bin().arg(d.join("nope")).output().unwrap().status.code(),
        Some(2)
    );
    let out = bin()
        .args(["-X", "batch.sise=1"])
        .arg(fixture("kafka431-producer-linger5-1k.jsonl"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8(out.stderr)
        .unwrap()
        .contains("batch.sise"));
}

#[test]
fn bad_objects_are_named_by_file_and_line_on_stderr() {
    let d = tmp("lines");
    let f = d.join("cut.jsonl");
    let two = two_emits();
    let mut bytes = two[..two.len() / 4].to_vec();
    bytes.push(b'\n');
    bytes.extend_from_slice(&two);
    std::fs::write(&f, &bytes).unwrap();
    let out = bin().arg(&f).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains(&format!("{}:1: truncated object", f.display())),
        "{err}"
    );
}

#[test]
fn json_csv_and_svg_outputs() {
    let d = tmp("outputs");
    let csv = d.join("t.csv");
    let svg = d.join("svg");
    let out = bin()
        .args(["--json", "-X", "linger.ms=0", "--csv"])
        .arg(&csv)
        .arg("--svg-dir")
        .arg(&svg)
        .arg(fixture("kafka431-producer-linger0-window-default.jsonl"))
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["tool"], "analyze-stats");
    assert_eq!(v["config"]["linger_ms"]["source"], "given");
    assert!(v["diagnoses"]
        .as_array()
        .unwrap()
        .iter()
        .any(|d| d["id"] == "inflight-queueing"));
    let emits = v["clients"][0]["emits"].as_u64().unwrap();
    let brokers = v["clients"][0]["brokers"].as_array().unwrap().len() as u64;
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut rows = text.lines();
    let header: Vec<&str> = rows.next().unwrap().split(',').collect();
    assert_eq!(header, kgap_analyzers::stats::timeline::COLUMNS);
    let rows: Vec<&str> = rows.collect();
    // One row per emit for the client and one per broker present.
    assert!(rows.len() as u64 >= emits && rows.len() as u64 <= emits * (brokers + 1));
    assert!(rows.iter().all(|r| r.split(',').count() == header.len()));
    let files: Vec<String> = std::fs::read_dir(&svg)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(files.len(), 3, "{files:?}");
    for f in files {
        let s = std::fs::read_to_string(svg.join(&f)).unwrap();
        assert!(s.starts_with("<svg") && s.contains("polyline"), "{f}");
    }
}

#[test]
fn stdin_reads_like_a_file() {
    let mut child = bin()
        .arg("-")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(&two_emits()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.lines()
            .next()
            .unwrap()
            .starts_with("rdkafka#producer-"),
        "{text}"
    );
}
