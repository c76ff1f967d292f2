//! analyze-jfr against real recordings: the socket-buffer fixtures captured by
//! fixtures/jfr/capture/capture.sh, checked against what the JDK's own `jfr` tool
//! said about the same files (committed beside them), and bad input of every kind.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/jfr")
}

fn fixture(name: &str) -> PathBuf {
    fixtures().join(name)
}

fn analyze_jfr(args: &[&str], file: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_analyze-jfr"))
        .args(args)
        .arg(file)
        .output()
        .expect("run analyze-jfr")
}

fn json_of(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}); stderr:\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// `jfr summary`'s table: event type → (count, bytes).
fn summary_counts(text: &str) -> Vec<(String, u64, u64)> {
    text.lines()
        .filter_map(|l| {
            let mut it = l.split_whitespace();
            let (name, count, bytes) = (it.next()?, it.next()?, it.next()?);
            if it.next().is_some() || !l.starts_with(' ') {
                return None;
            }
            Some((name.to_string(), count.parse().ok()?, bytes.parse().ok()?))
        })
        .collect()
}

const RECORDINGS: [&str; 4] = [
    "socket-fixed-buffers-jdk17",
    "socket-fixed-buffers-jdk25",
    "socket-os-buffers-jdk17",
    // The Java companion's own window recording (kafka-clients 4.3.1, batch.size 1 MB).
    "companion/produce-1m-fixed-send-buffer-jdk17",
];

#[test]
fn event_counts_equal_jfr_summary_on_every_fixture() {
    for name in RECORDINGS {
        let summary = std::fs::read_to_string(fixture(&format!("{name}.summary.txt"))).unwrap();
        let theirs = summary_counts(&summary);
        assert!(theirs.len() > 50, "{name}: summary table not parsed");
        let out = analyze_jfr(&["--events", "--json"], &fixture(&format!("{name}.jfr")));
        assert!(out.status.success(), "{name}: {}", stderr(&out));
        let ours = json_of(&out);
        for (ty, count, bytes) in &theirs {
            assert_eq!(
                ours["events"][ty].as_u64(),
                Some(*count),
                "{name}: {ty} count"
            );
            assert_eq!(
                ours["bytes"][ty].as_u64(),
                Some(*bytes),
                "{name}: {ty} bytes"
            );
        }
        assert_eq!(
            ours["events"].as_object().unwrap().len(),
            theirs.len(),
            "{name}: same event types as jfr summary"
        );
    }
}

#[test]
fn socket_sizes_and_diagnoses_match_the_jdk_reading_of_each_fixture() {
    for name in RECORDINGS {
        let expected: Value = serde_json::from_str(
            &std::fs::read_to_string(fixture(&format!("{name}.expected.json"))).unwrap(),
        )
        .unwrap();
        let out = analyze_jfr(&["--json"], &fixture(&format!("{name}.jfr")));
        assert!(out.status.success(), "{name}: {}", stderr(&out));
        let report = json_of(&out);
        let rows = report["socket"].as_array().unwrap();
        for want in expected["socket"].as_array().unwrap() {
            let got = rows
                .iter()
                .find(|r| r["op"] == want["op"] && r["thread"] == want["thread"])
                .unwrap_or_else(|| panic!("{name}: no row for {want}"));
            for exact in ["count", "bytes_total", "bytes_max"] {
                assert_eq!(got[exact], want[exact], "{name} {}: {exact}", want["op"]);
            }
            // The report's quantiles come from an HDR histogram (3 significant digits).
            let (p50, want_p50) = (
                got["bytes_p50"].as_f64().unwrap(),
                want["bytes_p50"].as_f64().unwrap(),
            );
            assert!(
                (p50 - want_p50).abs() <= want_p50 * 0.001 + 1.0,
                "{name}: p50 {p50} vs {want_p50}"
            );
        }
        let found: Vec<String> = report["diagnoses"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| {
                format!(
                    "{}:{}",
                    d["id"].as_str().unwrap(),
                    d["evidence"]["op"].as_str().unwrap_or("")
                )
            })
            .collect();
        let wanted: Vec<&str> = expected["diagnoses"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d.as_str().unwrap())
            .collect();
        for w in &wanted {
            assert!(found.iter().any(|f| f == w), "{name}: {w} not in {found:?}");
        }
        if wanted.is_empty() {
            // OS-sized buffers: writes and reads spread to MBs, nothing to diagnose.
            assert!(
                !found.iter().any(|f| f.starts_with("fixed-socket-buffer")),
                "{name}: unexpected {found:?}"
            );
        }
    }
}

#[test]
fn fixed_send_buffer_diagnosis_names_the_knobs_and_its_evidence() {
    let out = analyze_jfr(&["--json"], &fixture("socket-fixed-buffers-jdk17.jfr"));
    let report = json_of(&out);
    let d = report["diagnoses"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["id"] == "fixed-socket-buffer" && d["evidence"]["op"] == "write")
        .expect("write diagnosis");
    assert!(d["fix"].as_str().unwrap().contains("send.buffer.bytes=-1"));
    assert!(d["fix"].as_str().unwrap().contains("max.request.size"));
    assert_eq!(d["evidence"]["thread"], "socket-writer");
    // Evidence is the report's own numbers, not a restatement.
    let row = report["socket"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["op"] == "write")
        .unwrap();
    assert_eq!(d["evidence"]["bytes_max"], row["bytes_max"]);
    assert_eq!(d["evidence"]["ops"], row["count"]);
}

#[test]
fn report_has_the_documented_json_contract() {
    let report = json_of(&analyze_jfr(
        &["--json"],
        &fixture("socket-fixed-buffers-jdk17.jfr"),
    ));
    let t = &report["threads"][0];
    for k in ["name", "cpu_mean", "cpu_max"] {
        assert!(!t[k].is_null(), "threads[].{k}");
    }
    let s = &report["socket"][0];
    for k in ["op", "thread", "count", "bytes_p50", "bytes_max"] {
        assert!(!s[k].is_null(), "socket[].{k}");
    }
    let h = &report["hot_methods"][0];
    for k in ["frame", "self_samples", "total_samples"] {
        assert!(!h[k].is_null(), "hot_methods[].{k}");
    }
    let d = &report["diagnoses"][0];
    for k in ["id", "evidence", "cause", "fix"] {
        assert!(!d[k].is_null(), "diagnoses[].{k}");
    }
    assert_eq!(report["input"]["version"], "2.1");
    assert!(report["jvm"]["version"].as_str().unwrap().contains("17."));
}

#[test]
fn a_jfr_print_json_export_reads_like_the_recording() {
    // Same recording two ways: our binary reader, and the JDK's export read as JSON.
    let bin = json_of(&analyze_jfr(
        &["--json"],
        &fixture("socket-fixed-buffers-jdk25.jfr"),
    ));
    let exp = json_of(&analyze_jfr(
        &["--json"],
        &fixture("socket-fixed-buffers-jdk25.export.json.gz"),
    ));
    assert_eq!(exp["input"]["format"], "jfr-json+gzip");
    let (a, b) = (
        bin["socket"].as_array().unwrap(),
        exp["socket"].as_array().unwrap(),
    );
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(b) {
        for k in [
            "op",
            "thread",
            "count",
            "bytes_total",
            "bytes_p50",
            "bytes_p90",
            "bytes_max",
        ] {
            assert_eq!(x[k], y[k], "socket {k}");
        }
        // Durations: ticks (binary) vs ISO-8601 text (export), same nanoseconds.
        assert!((x["time_ms"].as_f64().unwrap() - y["time_ms"].as_f64().unwrap()).abs() < 0.01);
    }
    for (x, y) in bin["threads"]
        .as_array()
        .unwrap()
        .iter()
        .zip(exp["threads"].as_array().unwrap())
    {
        assert_eq!(x["name"], y["name"]);
        assert_eq!(x["cpu_mean"], y["cpu_mean"]);
    }
    assert_eq!(bin["hw_threads"], exp["hw_threads"]);
}

#[test]
fn export_on_stdin_is_streamed() {
    let data = std::fs::read(fixture("socket-fixed-buffers-jdk25.export.json.gz")).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_analyze-jfr"))
        .args(["--events", "--json"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child.stdin.take().unwrap().write_all(&data).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let summary =
        std::fs::read_to_string(fixture("socket-fixed-buffers-jdk25.summary.txt")).unwrap();
    let writes = summary_counts(&summary)
        .into_iter()
        .find(|(n, _, _)| n == "jdk.SocketWrite")
        .unwrap()
        .1;
    assert_eq!(
        json_of(&out)["events"]["jdk.SocketWrite"].as_u64(),
        Some(writes)
    );
}

fn temp_file(name: &str, bytes: &[u8]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("kgap-jfr-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

#[test]
fn zero_length_input_is_unusable_with_a_reason() {
    let out = analyze_jfr(&[], &temp_file("empty.jfr", b""));
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("empty"), "{}", stderr(&out));
}

#[test]
fn not_jfr_is_unusable_and_says_so() {
    let out = analyze_jfr(&[], &temp_file("log.jfr", b"[0.003s][info][gc] Using G1\n"));
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("not a JFR recording"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_chunk_cut_short_reports_what_it_read() {
    let full = std::fs::read(fixture("socket-fixed-buffers-jdk17.jfr")).unwrap();
    let whole = json_of(&analyze_jfr(
        &["--events", "--json"],
        &fixture("socket-fixed-buffers-jdk17.jfr"),
    ));
    let whole_total: u64 = whole["events"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_u64().unwrap())
        .sum();
    // A JVM that died mid-chunk leaves a file ending anywhere: try several cuts.
    for frac in [0.15, 0.5, 0.93] {
        let cut = (full.len() as f64 * frac) as usize;
        let p = temp_file(&format!("cut-{cut}.jfr"), &full[..cut]);
        let out = analyze_jfr(&["--events", "--json"], &p);
        let err = stderr(&out);
        assert!(!err.contains("panicked"), "{err}");
        assert!(err.contains("cut short"), "cut at {cut}: {err}");
        let report = json_of(&out);
        let total: u64 = report["events"]
            .as_object()
            .map_or(0, |m| m.values().map(|v| v.as_u64().unwrap()).sum());
        assert!(
            total < whole_total,
            "cut at {cut}: {total} events of {whole_total}"
        );
        if out.status.success() {
            assert!(total > 0);
        } else {
            assert_eq!(out.status.code(), Some(2));
        }
    }
}

#[test]
fn a_newer_format_version_is_read_and_named() {
    let mut data = std::fs::read(fixture("socket-fixed-buffers-jdk25.jfr")).unwrap();
    data[4..6].copy_from_slice(&3u16.to_be_bytes());
    let out = analyze_jfr(&["--json"], &temp_file("v3.jfr", &data));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("3.1 is newer"), "{}", stderr(&out));
    assert_eq!(json_of(&out)["input"]["version"], "3.1");
}

#[test]
fn a_header_only_or_garbage_chunk_never_panics() {
    let full = std::fs::read(fixture("socket-os-buffers-jdk17.jfr")).unwrap();
    let mut garbage = full[..68].to_vec();
    garbage.extend((0..4096u32).map(|i| (i.wrapping_mul(2654435761) >> 13) as u8));
    for (name, bytes) in [
        ("magic.jfr", b"FLR\0".to_vec()),
        ("header.jfr", full[..68].to_vec()),
        ("garbage.jfr", garbage),
    ] {
        let out = analyze_jfr(&[], &temp_file(name, &bytes));
        let err = stderr(&out);
        assert!(!err.contains("panicked"), "{name}: {err}");
        assert!(
            err.contains("analyze-jfr:"),
            "{name}: no problem named: {err}"
        );
        // Garbage may happen to decode as a few events of unknown types; the
        // others hold no event at all.
        if name != "garbage.jfr" {
            assert_eq!(out.status.code(), Some(2), "{name}: {err}");
        }
    }
}

#[test]
fn help_teaches_and_ends_with_examples() {
    let out = Command::new(env!("CARGO_BIN_EXE_analyze-jfr"))
        .arg("--help")
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let examples = text.rfind("examples:").expect("examples block");
    assert!(
        text[examples..]
            .lines()
            .skip(1)
            .filter(|l| l.contains("  # "))
            .count()
            >= 4
    );
    assert!(text.contains("send.buffer.bytes"));
}

/// Stable-toolchain cousin of fuzz/fuzz_targets/jfr_reader.rs: real recordings with
/// bytes flipped, ranges zeroed or duplicated, and cut anywhere, through the
/// library. Any panic fails the test; every report must render and serialize.
#[test]
fn mutated_recordings_never_panic() {
    use kgap_analyzers::jfr::{analyze_jfr, ReportOptions};
    let base = std::fs::read(fixture("socket-os-buffers-jdk17.jfr")).unwrap();
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        // xorshift64*: reproducible, no dev-dependency.
        seed ^= seed >> 12;
        seed ^= seed << 25;
        seed ^= seed >> 27;
        seed.wrapping_mul(0x2545_f491_4f6c_dd1d)
    };
    let mut read_something = 0;
    // KGAP_JFR_MUTATIONS=5000 for a longer local run.
    let rounds: u32 = std::env::var("KGAP_JFR_MUTATIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(120);
    for round in 0..rounds {
        let mut data = base.clone();
        let len = data.len() as u64;
        match round % 4 {
            0 => {
                for _ in 0..1 + next() % 16 {
                    let i = (next() % len) as usize;
                    data[i] ^= 1 << (next() % 8);
                }
            }
            1 => {
                let i = (next() % len) as usize;
                let n = (next() % 512) as usize;
                let end = (i + n).min(data.len());
                data[i..end].fill(0);
            }
            2 => {
                let i = (next() % len) as usize;
                let n = (next() % 4096) as usize;
                let end = (i + n).min(data.len());
                let copy = data[i..end].to_vec();
                data.splice(i..i, copy);
            }
            _ => data.truncate((next() % len) as usize),
        }
        let report = analyze_jfr(&data[..], "mutated", &ReportOptions::default())
            .expect("a slice gives no I/O error");
        let _ = report.render_text();
        let _ = report.render_events();
        serde_json::to_string(&report).unwrap();
        read_something += report.is_usable() as u32;
    }
    // Most mutations leave most of the recording readable.
    assert!(
        read_something > rounds / 2,
        "only {read_something} of {rounds} readable"
    );
}

#[test]
fn a_mapped_file_reports_what_the_read_file_reports() {
    // analyze_jfr_file maps a recording's chunks where they lie; analyze_jfr reads them. On
    // every fixture, and on copies cut short, with bytes zeroed or not JFR at all, the two
    // reports (problems included) must be the same.
    use kgap_analyzers::jfr::{analyze_jfr, analyze_jfr_file, ReportOptions};
    let both = |p: &Path| {
        let opts = ReportOptions::default();
        let read = analyze_jfr(std::fs::File::open(p).unwrap(), "x", &opts).unwrap();
        let mapped = analyze_jfr_file(std::fs::File::open(p).unwrap(), "x", &opts).unwrap();
        (
            serde_json::to_string(&read).unwrap(),
            serde_json::to_string(&mapped).unwrap(),
        )
    };
    let mut files: Vec<PathBuf> = RECORDINGS
        .iter()
        .map(|n| fixture(&format!("{n}.jfr")))
        .collect();
    let base = std::fs::read(fixture("socket-fixed-buffers-jdk17.jfr")).unwrap();
    let n = base.len();
    for cut in [0, 3, 4, 60, 68, 69, 5000, n / 3, n / 2, n - 1] {
        files.push(temp_file(&format!("mapped-cut-{cut}.jfr"), &base[..cut]));
    }
    let mut zeroed = base.clone();
    zeroed[n / 2..n / 2 + 300].fill(0);
    files.push(temp_file("mapped-zeroed.jfr", &zeroed));
    files.push(temp_file(
        "mapped-two.jfr",
        &[&base[..], &base[..]].concat(),
    ));
    files.push(temp_file("mapped-text.jfr", b"not a recording\n"));
    for f in &files {
        let (read, mapped) = both(f);
        assert_eq!(read, mapped, "{}", f.display());
    }
}
