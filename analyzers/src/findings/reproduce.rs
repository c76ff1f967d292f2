//! A `scripts/reproduce` folder read back: which finding each run decides (its
//! `summary.json`: the run, the command, how long it took, its exit status) and every run's
//! typed [`ProbeResult`] (`<run>/result.json`), whose verdicts are the catalogue's own.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use super::probe_result::{ProbeResult, SCHEMA};
use super::verdict::Verdict;

/// The summary's schema name (written by scripts/reproduce).
pub const SUMMARY_SCHEMA: &str = "kgap.reproduce-summary";

/// `summary.json`: the machine, the broker, and one row per finding.
#[derive(Debug, Clone, Deserialize)]
pub struct SummaryDoc {
    pub schema: String,
    pub broker: String,
    pub machine_cores: usize,
    pub load_average_at_start: String,
    pub seconds: u64,
    pub reps: u32,
    pub findings: Vec<Row>,
}

/// One finding and the run that decides it.
#[derive(Debug, Clone, Deserialize)]
pub struct Row {
    pub finding: String,
    pub run: String,
    #[serde(default)]
    pub probe: Option<String>,
    #[serde(default)]
    pub command: Option<String>,
    #[serde(default)]
    pub seconds: Option<u64>,
    #[serde(default)]
    pub exit: Option<i32>,
}

/// A reproduce folder: its summary and the result of every run that left one.
#[derive(Debug, Clone)]
pub struct Reproduction {
    /// The folder's name (the run's UTC time stamp).
    pub name: String,
    pub summary: SummaryDoc,
    pub results: BTreeMap<String, ProbeResult<Value>>,
    /// Runs whose result.json could not be read, and why.
    pub unreadable: BTreeMap<String, String>,
}

impl Reproduction {
    /// Reads `base/summary.json` and every run's `result.json`. A missing or malformed
    /// summary is an error; a run without a usable result is kept with its reason (the
    /// probe failed: its row says so).
    pub fn read(base: &Path) -> Result<Reproduction, String> {
        let path = base.join("summary.json");
        let text =
            std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let summary: SummaryDoc = serde_json::from_str(&text).map_err(|e| {
            format!(
                "{}: not a reproduce summary ({SUMMARY_SCHEMA}): {e}",
                path.display()
            )
        })?;
        if summary.schema != SUMMARY_SCHEMA {
            return Err(format!(
                "{}: schema {:?}, not {SUMMARY_SCHEMA}",
                path.display(),
                summary.schema
            ));
        }
        let mut results = BTreeMap::new();
        let mut unreadable = BTreeMap::new();
        for row in &summary.findings {
            if results.contains_key(&row.run) || unreadable.contains_key(&row.run) {
                continue;
            }
            let p = base.join(&row.run).join("result.json");
            match read_result(&p) {
                Ok(r) => {
                    results.insert(row.run.clone(), r);
                }
                Err(e) => {
                    unreadable.insert(row.run.clone(), e);
                }
            }
        }
        let name = base
            .canonicalize()
            .ok()
            .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .unwrap_or_else(|| base.display().to_string());
        Ok(Reproduction {
            name,
            summary,
            results,
            unreadable,
        })
    }

    /// The verdict of a row's finding, from its run's result.
    pub fn verdict(&self, row: &Row) -> Option<&Verdict> {
        self.results.get(&row.run)?.verdict(&row.finding)
    }
}

fn read_result(p: &Path) -> Result<ProbeResult<Value>, String> {
    let text = std::fs::read_to_string(p).map_err(|e| format!("no result: {e}"))?;
    let r: ProbeResult<Value> =
        serde_json::from_str(&text).map_err(|e| format!("result.json does not fit: {e}"))?;
    if r.schema != SCHEMA {
        return Err(format!("result.json has schema {:?}", r.schema));
    }
    Ok(r)
}
