//! Secrets never leave the process: a secret passed on every channel a probe takes (-X
//! properties, a refused configuration) appears in no byte the probe wrote — stdout,
//! stderr, and every file of its --out folder.

use std::path::Path;
use std::process::Command;

const SECRET: &str = "KGAP-SECRET-7f3a";

fn files_under(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            files_under(&p, out);
        } else {
            out.push(p);
        }
    }
}

fn assert_nowhere(what: &str, bytes: &[u8]) {
    let hay = String::from_utf8_lossy(bytes);
    assert!(!hay.contains(SECRET), "the secret is in {what}");
}

#[test]
fn a_secret_passed_with_x_is_in_no_output_and_no_file() {
    let out_dir = tempfile::tempdir().unwrap();
    for json in [false, true] {
        let mut args = vec![
            "--messages",
            "20000",
            "--partitions",
            "1",
            "--reps",
            "1",
            "--duration",
            "2s",
            "-X",
            "queued.min.messages=5000",
            "-X",
            "sasl.username=alice",
            "-X",
        ];
        let secret_arg = format!("sasl.password={SECRET}");
        args.push(&secret_arg);
        let dir = out_dir.path().join(if json { "json" } else { "text" });
        let dir_s = dir.to_str().unwrap().to_string();
        args.extend(["--out", &dir_s]);
        if json {
            args.push("--json");
        }
        let out = Command::new(env!("CARGO_BIN_EXE_probe-fetch-backoff"))
            .args(&args)
            .output()
            .expect("probe runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_nowhere("stdout", &out.stdout);
        assert_nowhere("stderr", &out.stderr);
        let mut files = Vec::new();
        files_under(&dir, &mut files);
        assert!(files.len() >= 4, "{files:?}");
        // The HTML page too: its command line and notes carry the -X values.
        assert!(dir.join("report.html").is_file(), "{files:?}");
        for f in files {
            assert_nowhere(&f.display().to_string(), &std::fs::read(&f).unwrap());
        }
        // The property is still named, so the user sees it was applied.
        let shown = if json {
            String::from_utf8_lossy(&out.stdout).into_owned()
        } else {
            std::fs::read_to_string(dir.join("report.txt")).unwrap()
        };
        assert!(shown.contains("sasl.password=[redacted]"), "{shown}");
        // The probe's own statistics, read by analyze-stats beside its figures.
        if json {
            let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
            assert!(
                r["diagnoses"]
                    .as_array()
                    .is_some_and(|d| d.iter().any(|d| d["tool"] == "analyze-stats")),
                "{}",
                r["diagnoses"]
            );
        }
    }
}

#[test]
fn a_refused_secret_is_named_but_not_shown() {
    // librdkafka refuses an unknown value: its error names the property and must not
    // quote the secret.
    let arg = format!("sasl.mechanism={SECRET}");
    let pw = format!("ssl.key.password={SECRET}");
    for a in [&arg, &pw] {
        let out = Command::new(env!("CARGO_BIN_EXE_probe-fetch-backoff"))
            .args([
                "--messages",
                "1000",
                "--reps",
                "1",
                "-X",
                a,
                "-X",
                "security.protocol=nope",
            ])
            .output()
            .expect("probe runs");
        assert_eq!(out.status.code(), Some(2), "{a}");
        assert_nowhere("stdout", &out.stdout);
        if a.starts_with("ssl.key.password") {
            assert_nowhere("stderr", &out.stderr);
        }
    }
}

#[test]
fn bootstrap_servers_in_x_is_refused_with_a_pointer_to_brokers() {
    let out = Command::new(env!("CARGO_BIN_EXE_probe-fetch-backoff"))
        .args(["-X", "bootstrap.servers=10.0.0.1:9092", "--reps", "1"])
        .output()
        .expect("probe runs");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--brokers"), "{err}");
}

#[test]
fn a_bad_broker_list_is_a_usage_error_before_anything_starts() {
    for b in ["", "127.0.0.1:99999", "kafka-1", "a:1,,b:2"] {
        let t = std::time::Instant::now();
        let out = Command::new(env!("CARGO_BIN_EXE_probe-fetch-backoff"))
            .args(["--brokers", b, "--reps", "1"])
            .output()
            .expect("probe runs");
        assert_eq!(out.status.code(), Some(2), "{b:?}");
        assert!(
            t.elapsed() < std::time::Duration::from_secs(2),
            "{b:?} waited"
        );
        assert!(!out.stderr.is_empty());
    }
}

#[test]
fn an_out_folder_that_cannot_be_written_is_exit_2_before_the_broker() {
    let t = std::time::Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_probe-fetch-backoff"))
        // An unreachable broker would take 8 s: the path is checked first.
        .args([
            "--brokers",
            "127.0.0.1:1",
            "--out",
            "/proc/nope",
            "--reps",
            "1",
        ])
        .output()
        .expect("probe runs");
    assert_eq!(out.status.code(), Some(2));
    assert!(t.elapsed() < std::time::Duration::from_secs(3));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--out"));
}
