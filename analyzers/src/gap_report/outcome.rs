//! What reading one file gave, and what every reader builds it with: the file opened, a
//! diagnosis as a signal of the report, a chart's file name.

use std::fs;
use std::path::Path;

use serde_json::Value;

use super::report::{Chart, Signal, SignalWindow};
use crate::findings;
use crate::vocab::report::Diagnosis;

/// What reading one file gave.
#[derive(Default)]
pub(crate) struct Outcome {
    pub kind: &'static str,
    pub gzip: bool,
    pub analyzers: Vec<String>,
    pub summary: String,
    pub reason: Option<String>,
    pub signals: Vec<Signal>,
    /// (finding id, summary) of probe verdicts that did not hold.
    pub not_held: Vec<(String, String)>,
    pub charts: Vec<Chart>,
    /// Where the file ends early, in words ("cut at byte 312,000: a chunk cut short"): a
    /// finding not found in it may be in what was lost.
    pub cut: Option<String>,
    /// The broker a probe result ran against, in words.
    pub broker: Option<String>,
}

/// Open a file for its analyzer; what goes wrong becomes the outcome's reason.
pub(crate) fn open(path: &Path) -> Result<fs::File, String> {
    fs::File::open(path).map_err(|e| format!("cannot open: {e}"))
}

/// One diagnosis of an analyzer as a signal of the report, its strength from the catalogue.
pub(crate) fn signal(
    rel: &str,
    source: &str,
    d: &Diagnosis,
    window: Option<SignalWindow>,
) -> Signal {
    let op = d.evidence.get("op").and_then(Value::as_str);
    // The analyzers name where a gap starts under a few keys; the first one present wins.
    let from = ["first_collapse_s", "worst_window_start_s", "from_s"]
        .iter()
        .find_map(|k| d.evidence.get(*k).and_then(Value::as_f64));
    let window = window.map(|mut w| {
        w.shows_from_s = from;
        w
    });
    Signal {
        file: rel.to_string(),
        source: source.to_string(),
        id: d.id.clone(),
        strength: findings::evidence_from(&d.id, Some(source), op).map(|(_, s)| s),
        title: d.title.clone(),
        cause: d.cause.clone(),
        fix: d.fix.clone(),
        evidence: d.evidence.clone(),
        window,
        examples: d.examples.clone(),
        question: None,
    }
}

/// Chart file name from the file's relative path: stable and flat.
pub(crate) fn chart_name(rel: &str, what: &str) -> String {
    let base: String = rel
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("{base}.{what}.svg")
}
