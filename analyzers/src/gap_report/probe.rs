//! A probe's result document in a folder: its verdicts, typed, each filed under the
//! catalogue finding it decides. A verdict that HOLDS is the finding reproduced (high
//! confidence); one that DOES NOT HOLD is evidence against it; a CANNOT TELL is said beside
//! the finding with its reason. Nothing here re-decides a verdict: the catalogue's rule did.

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;

use serde_json::{json, Value};

use super::outcome::Outcome;
use super::report::Signal;
use crate::engine::input::Input;
use crate::findings::probe_result::{ProbeResult, SCHEMA, SCHEMA_VERSION};
use crate::findings::{self, Outcome as Decision, Strength};

/// A result is kilobytes; a hostile file that only looks like one stops at 64 MiB.
const MAX_BYTES: u64 = 64 << 20;

pub(crate) fn probe_result(path: &Path, rel: &str) -> Outcome {
    match File::open(path) {
        Ok(f) => read(f, rel),
        Err(e) => Outcome {
            reason: Some(format!("cannot open: {e}")),
            ..Outcome::default()
        },
    }
}

/// A probe result read from any reader (plain or gzip): what `gap-report` makes of it, or
/// why it cannot use it. For the fuzz target: the reader's whole path on arbitrary bytes.
pub fn read_probe_result<R: Read>(input: R) -> Result<String, String> {
    let o = read(input, "result.json");
    match o.reason {
        Some(reason) => Err(reason),
        None => Ok(o.summary),
    }
}

fn read<R: Read>(input: R, rel: &str) -> Outcome {
    let unusable = |reason: String| Outcome {
        reason: Some(reason),
        ..Outcome::default()
    };
    let f = match Input::detect(input) {
        Ok(f) => f,
        Err(e) => return unusable(e.to_string()),
    };
    let v: Value = match serde_json::from_reader(BufReader::new(f.take(MAX_BYTES))) {
        Ok(v) => v,
        Err(e) => return unusable(format!("probe result, but not valid JSON: {e}")),
    };
    if v.get("schema").and_then(Value::as_str) != Some(SCHEMA) {
        return unusable(
            "a probe result of an older kgap (no schema: its verdicts were decided outside \
             the catalogue): re-run the probe with this version"
                .into(),
        );
    }
    let version = v.get("schema_version").and_then(Value::as_u64).unwrap_or(0);
    if version != u64::from(SCHEMA_VERSION) {
        return unusable(format!(
            "probe result schema version {version}; this gap-report reads {SCHEMA_VERSION}"
        ));
    }
    let r: ProbeResult = match serde_json::from_value(v) {
        Ok(r) => r,
        Err(e) => return unusable(format!("probe result that does not fit its schema: {e}")),
    };
    outcome(&r, rel)
}

/// The signals and verdicts against of one probe result.
pub(crate) fn outcome(r: &ProbeResult, rel: &str) -> Outcome {
    let runs: usize = r.points.iter().map(|p| p.runs.len()).sum();
    let verdicts: Vec<String> = r
        .verdicts
        .iter()
        .map(|v| format!("{} {}", v.finding, v.outcome.label()))
        .collect();
    let mut o = Outcome {
        analyzers: vec![r.probe.clone()],
        summary: format!(
            "{} on {} {}, {} point{}, {runs} run{}{}; verdicts: {}",
            r.probe,
            if r.broker.is_mock() {
                "librdkafka's embedded mock"
            } else {
                "the cluster"
            },
            r.broker.bootstrap,
            r.points.len(),
            if r.points.len() == 1 { "" } else { "s" },
            if runs == 1 { "" } else { "s" },
            if r.interrupted { " (interrupted)" } else { "" },
            if verdicts.is_empty() {
                "none".to_string()
            } else {
                verdicts.join(", ")
            }
        ),
        broker: Some(r.broker.describe()),
        ..Outcome::default()
    };
    // A slow path caps every figure of the document: say it beside every verdict.
    let slow_path = r.preflight.as_ref().and_then(|p| p.warning.as_deref());
    if let Some(w) = slow_path {
        o.summary.push_str(&format!("; preflight warning: {w}"));
    }
    for v in &r.verdicts {
        match v.outcome {
            Decision::Holds => o.signals.push(Signal {
                file: rel.to_string(),
                source: r.probe.clone(),
                id: v.finding.clone(),
                strength: findings::get(&v.finding).map(|_| Strength::Direct),
                title: format!(
                    "{}: {} HOLDS{}",
                    r.probe,
                    v.finding,
                    if r.broker.is_mock() {
                        " (on librdkafka's embedded mock: its per-request cost is not \
                         Apache Kafka's)"
                    } else if slow_path.is_some() {
                        " (through a slow path: see the preflight warning)"
                    } else {
                        ""
                    }
                ),
                cause: v.reason.clone(),
                fix: v.fix.clone(),
                evidence: json!({"checks": v.checks, "evidence": v.evidence, "post": v.post}),
                window: None,
                examples: Vec::new(),
                question: None,
            }),
            Decision::DoesNotHold | Decision::CannotTell => o.not_held.push((
                v.finding.clone(),
                format!("{rel}: {} {}: {}", r.probe, v.outcome.label(), v.reason),
            )),
        }
    }
    o
}
