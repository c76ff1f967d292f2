//! What analyze-stats reads in a probe's own statistics: every run that wrote `stats.jsonl`
//! is read by the statistics analyzer's library, and its headline and diagnoses go beside
//! the probe's own figures (the first rep of each point, so a sweep of many reps stays
//! short). The same reading a user gets from their service's statistics, on a run whose
//! cause is known: where the two disagree, one of them is wrong.

use crate::kit::out::OutDir;
use crate::kit::probe::{Probe, Sweep};
use kgap_analyzers::stats::{analyze_stats, StatsOptions};
use serde_json::{json, Value};

/// One entry of the result's `diagnoses` per point whose first measured rep wrote
/// statistics.
pub fn read<P: Probe>(out: &OutDir, sweep: &Sweep<P>) -> Vec<Value> {
    let mut v = Vec::new();
    for (i, p) in sweep.result.points.iter().enumerate() {
        let Some(rep) = sweep
            .result
            .order
            .runs
            .iter()
            .filter(|s| s.point == i)
            .map(|s| s.rep)
            .min()
        else {
            continue;
        };
        let path = out
            .root
            .join(format!("{}-rep{rep}", p.label))
            .join("stats.jsonl");
        let Ok(f) = std::fs::File::open(&path) else {
            continue;
        };
        let opts = StatsOptions {
            input_name: format!("{}-rep{rep}/stats.jsonl", p.label),
            ..StatsOptions::default()
        };
        let Ok(report) = analyze_stats(f, &opts) else {
            continue;
        };
        v.push(json!({
            "tool": "analyze-stats",
            "point": p.label,
            "rep": rep,
            "headline": report.headline,
            "diagnoses": report
                .diagnoses
                .iter()
                .map(|d| json!({"id": d.id, "finding": d.finding, "title": d.title}))
                .collect::<Vec<_>>(),
        }));
    }
    v
}

/// The lines the text report prints for them.
pub fn lines(diagnoses: &[Value]) -> Vec<String> {
    diagnoses
        .iter()
        .filter(|d| d["tool"] == "analyze-stats")
        .map(|d| {
            format!(
                "{}: {}",
                d["point"].as_str().unwrap_or("?"),
                d["headline"].as_str().unwrap_or("")
            )
        })
        .collect()
}
