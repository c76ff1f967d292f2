//! Captured fixture logs (issue 3 §5) against their expected reports.
//!
//! Drop `<name>.log` (or `.log.gz`) into `fixtures/librdkafka/` with a
//! `<name>.expected.json` beside it: a subset of the report. `"tool"` picks the
//! analyzer (`analyze-protocol-log` or `analyze-fetch-log`); objects match when every
//! expected key matches, arrays when every expected element matches some element,
//! numbers within 1e-9 relative, or `{"approx": x, "tol": t}` within `t` relative;
//! an empty expected array means the report's must be empty too (no diagnosis);
//! `{"none_of": [..]}` against an array means no element may match any of those (a
//! diagnosis that must be absent), with an optional `"all_of": [..]` beside it.
//! Captures kept in a folder (`<dir>/debug.log`) are found one level down.

use std::path::{Path, PathBuf};

use serde_json::Value;

use kgap_analyzers::fetch_log::{analyze_fetch_log, FetchLogOptions};
use kgap_analyzers::protocol_log::{analyze_protocol_log, ProtocolLogOptions};

use crate::common::*;

fn matches(expected: &Value, actual: &Value, path: &str) -> Result<(), String> {
    match (expected, actual) {
        (Value::Object(e), _) if e.contains_key("approx") => {
            let x = e["approx"]
                .as_f64()
                .ok_or(format!("{path}: approx must be a number"))?;
            let tol = e.get("tol").and_then(Value::as_f64).unwrap_or(0.05);
            let a = actual
                .as_f64()
                .ok_or(format!("{path}: expected a number, got {actual}"))?;
            if (a - x).abs() <= tol * x.abs().max(1e-12) {
                Ok(())
            } else {
                Err(format!("{path}: {a} is not within {tol} of {x}"))
            }
        }
        (Value::Object(e), Value::Array(a)) if e.contains_key("none_of") => {
            if let Some(all) = e.get("all_of") {
                matches(all, actual, path)?;
            }
            for (i, ev) in e["none_of"].as_array().into_iter().flatten().enumerate() {
                if a.iter().any(|av| matches(ev, av, "").is_ok()) {
                    return Err(format!("{path}: none_of[{i}] {ev} is present"));
                }
            }
            Ok(())
        }
        (Value::Object(e), Value::Object(a)) => {
            for (k, ev) in e {
                let av = a.get(k).ok_or(format!("{path}.{k}: missing"))?;
                matches(ev, av, &format!("{path}.{k}"))?;
            }
            Ok(())
        }
        (Value::Array(e), Value::Array(a)) if e.is_empty() => {
            if a.is_empty() {
                Ok(())
            } else {
                Err(format!("{path}: expected none, got {}", a.len()))
            }
        }
        (Value::Array(e), Value::Array(a)) => {
            for (i, ev) in e.iter().enumerate() {
                if !a.iter().any(|av| matches(ev, av, "").is_ok()) {
                    return Err(format!("{path}[{i}]: no element matches {ev}"));
                }
            }
            Ok(())
        }
        (Value::Number(e), Value::Number(a)) => {
            let (e, a) = (e.as_f64().unwrap(), a.as_f64().unwrap());
            if (e - a).abs() <= 1e-9 * e.abs().max(1.0) {
                Ok(())
            } else {
                Err(format!("{path}: expected {e}, got {a}"))
            }
        }
        (e, a) if e == a => Ok(()),
        (e, a) => Err(format!("{path}: expected {e}, got {a}")),
    }
}

/// Analyse `log` with the tool its expectation names and compare.
fn check_fixture(log: &Path, expected: &Path) -> Result<(), String> {
    let want: Value =
        serde_json::from_str(&std::fs::read_to_string(expected).map_err(|e| e.to_string())?)
            .map_err(|e| format!("{}: {e}", expected.display()))?;
    let file = std::fs::File::open(log).map_err(|e| e.to_string())?;
    let got = match want["tool"].as_str() {
        Some("analyze-protocol-log") => serde_json::to_value(
            analyze_protocol_log(file, &ProtocolLogOptions::default())
                .map_err(|e| e.to_string())?,
        ),
        Some("analyze-fetch-log") => serde_json::to_value(
            analyze_fetch_log(file, &FetchLogOptions::default()).map_err(|e| e.to_string())?,
        ),
        other => return Err(format!("{}: unknown tool {other:?}", expected.display())),
    }
    .unwrap();
    matches(&want, &got, &log.display().to_string())
}

fn fixture_pairs(dir: &Path) -> Vec<(PathBuf, PathBuf)> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            // A capture's folder (debug.log beside the probe's other outputs): only
            // logs that have an expectation are fixtures of this test.
            out.extend(
                fixture_pairs(&p)
                    .into_iter()
                    .filter(|(_, expected)| expected.exists()),
            );
            continue;
        }
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        if let Some(stem) = name
            .strip_suffix(".log")
            .or_else(|| name.strip_suffix(".log.gz"))
        {
            out.push((p.clone(), dir.join(format!("{stem}.expected.json"))));
        }
    }
    out.sort();
    out
}

#[test]
fn the_expectation_matcher_catches_a_wrong_number() {
    // The harness itself, on a constructed log: a right and a wrong expectation.
    let dir = std::env::temp_dir().join(format!("kgap-fixture-selftest-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let log = dir.join("protocol-selftest.log");
    std::fs::write(&log, raw(&ceiling_log(4, 2000, 15_621))).unwrap();
    let good = dir.join("good.expected.json");
    std::fs::write(
        &good,
        r#"{"tool":"analyze-protocol-log","timestamps":"librdkafka",
        "requests":[{"request":"Produce","count":8000,"rtt_ms_max":{"approx":0.44,"tol":0.01}}],
        "diagnoses":[{"id":"per-request-ceiling"}]}"#,
    )
    .unwrap();
    check_fixture(&log, &good).unwrap();
    let bad = dir.join("bad.expected.json");
    std::fs::write(
        &bad,
        r#"{"tool":"analyze-protocol-log","requests":[{"request":"Produce","count":7999}]}"#,
    )
    .unwrap();
    assert!(check_fixture(&log, &bad).is_err());
}

#[test]
fn captured_fixtures_match_their_expected_reports() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/librdkafka");
    let pairs = fixture_pairs(&dir);
    // The probe kit's captures of the consumer at 1000 ms and 10 ms (issue 3 §5).
    assert!(
        pairs.len() >= 2,
        "fixtures/librdkafka lost its captures: {pairs:?}"
    );
    for (log, expected) in pairs {
        assert!(
            expected.exists(),
            "{} has no {}",
            log.display(),
            expected.display()
        );
        if let Err(e) = check_fixture(&log, &expected) {
            panic!("{e}");
        }
    }
}

#[test]
fn the_produce_size_histogram_stays_in_line_up_to_a_mebibyte() {
    // 1 MB batches put "512.0 KiB -> 1024.0 KiB" in the histogram: its bars must start in
    // the same column as the smaller buckets'.
    let log = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures/librdkafka/producer-kafka431-batch1m-6p-protocol/debug.log.gz");
    let r = analyze_protocol_log(
        std::fs::File::open(&log).unwrap(),
        &ProtocolLogOptions::default(),
    )
    .unwrap();
    let text = r.to_string();
    let bars: Vec<&str> = text
        .lines()
        .filter(|l| l.contains(" -> ") && l.ends_with('|'))
        .collect();
    assert!(
        bars.iter().any(|l| l.contains("1024.0 KiB")),
        "no bucket up to 1024 KiB in:\n{text}"
    );
    let columns: Vec<usize> = bars.iter().map(|l| l.find('|').unwrap()).collect();
    assert!(
        columns.windows(2).all(|w| w[0] == w[1]),
        "bars out of line at columns {columns:?}:\n{}",
        bars.join("\n")
    );
}
