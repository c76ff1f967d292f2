//! The result contract every probe follows (issue: Foundation §7), and its exports.
//!
//! `--json` prints one [`ProbeResult`]; `--out DIR` keeps it as `result.json` (rewritten after
//! every run, so an interrupted sweep loses nothing) beside `runs.csv`, one row per run.
//! Field names are snake_case with units in the name (`_ms`, `_bytes`, `_per_s`).

use crate::broker::BrokerInfo;
use crate::error::{ProbeError, Result};
use crate::measure::{median, round3};
use serde::Serialize;
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Serialize)]
pub struct PayloadInfo {
    pub size_bytes: usize,
    pub kind: crate::payload::PayloadKind,
    pub pool_count: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct Verdict {
    /// Stable id of the post's finding (e.g. "fetch-backoff").
    pub finding: String,
    pub holds: bool,
    /// False when the run cannot decide (nothing measured, one point of a sweep that needs
    /// two): the report then says "cannot tell", not "does not hold".
    pub decided: bool,
    pub summary: String,
    pub evidence: Value,
}

impl Verdict {
    /// A verdict the measured points cannot support either way.
    pub fn cannot_tell(finding: &str, summary: impl Into<String>, evidence: Value) -> Verdict {
        Verdict {
            finding: finding.into(),
            holds: false,
            decided: false,
            summary: summary.into(),
            evidence,
        }
    }
}

/// One swept setting: its librdkafka params, every rep, and median/min/max over reps.
#[derive(Debug, Clone, Serialize)]
pub struct SettingResult {
    pub params: Map<String, Value>,
    pub runs: Vec<Value>,
    pub median: Map<String, Value>,
    pub min: Map<String, Value>,
    pub max: Map<String, Value>,
}

impl SettingResult {
    pub fn new(params: Map<String, Value>) -> SettingResult {
        SettingResult {
            params,
            runs: Vec::new(),
            median: Map::new(),
            min: Map::new(),
            max: Map::new(),
        }
    }

    /// Adds a run (any serializable figures) and recomputes the summaries.
    pub fn push_run(&mut self, run: &impl Serialize) {
        self.runs
            .push(serde_json::to_value(run).expect("run figures serialize"));
        let (median, min, max) = summarize(&self.runs);
        self.median = median;
        self.min = min;
        self.max = max;
    }

    /// "389k (330k–573k)": a rate's median with min and max over reps, for tables.
    pub fn median_range_si(&self, key: &str) -> String {
        let get = |m: &Map<String, Value>| m.get(key).and_then(Value::as_f64).unwrap_or(0.0);
        format!(
            "{} ({}–{})",
            si(get(&self.median)),
            si(get(&self.min)),
            si(get(&self.max))
        )
    }

    /// Median of a numeric figure, if every run has it.
    pub fn median_of(&self, key: &str) -> Option<f64> {
        self.median.get(key).and_then(Value::as_f64)
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct ProbeResult {
    pub probe: String,
    pub kgap_version: &'static str,
    pub librdkafka_version: String,
    pub broker: BrokerInfo,
    /// The topic this run created (and deleted).
    pub topic: String,
    /// How the topic was filled before the runs (not measured).
    pub prefill: Option<crate::produce::Prefill>,
    pub payload_sha256: String,
    pub payload: PayloadInfo,
    pub reps: u32,
    pub settings: Vec<SettingResult>,
    pub verdict: Option<Verdict>,
    /// An analyzer's reading of the probe's own capture, where the probe runs one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diagnosis: Option<Value>,
    /// What this probe did not measure, said plainly.
    pub not_measured: Vec<String>,
    /// Settings that differ from the defaults besides the swept knob, and why.
    pub notes: Vec<String>,
    pub interrupted: bool,
}

impl ProbeResult {
    /// A result with one empty [`SettingResult`] per entry of `params`, to be filled run by
    /// run.
    pub fn new(
        probe: &str,
        broker: &crate::broker::Broker,
        pool: &crate::payload::Pool,
        reps: u32,
        params: Vec<Map<String, Value>>,
    ) -> ProbeResult {
        ProbeResult {
            probe: probe.into(),
            kgap_version: env!("CARGO_PKG_VERSION"),
            librdkafka_version: librdkafka_version(),
            broker: broker.info(),
            topic: String::new(),
            prefill: None,
            payload_sha256: pool.sha256_hex(),
            payload: PayloadInfo {
                size_bytes: pool.size(),
                kind: pool.kind(),
                pool_count: pool.count(),
            },
            reps,
            settings: params.into_iter().map(SettingResult::new).collect(),
            verdict: None,
            diagnosis: None,
            not_measured: Vec::new(),
            notes: Vec::new(),
            interrupted: false,
        }
    }
}

/// librdkafka's version string as linked (e.g. "2.12.1").
pub fn librdkafka_version() -> String {
    rdkafka::util::get_rdkafka_version().1
}

/// Median, min and max of every numeric field over runs; `threads` ([{name, cores}]) by name.
/// Arrays such as `timeline` are per run only.
pub fn summarize(runs: &[Value]) -> (Map<String, Value>, Map<String, Value>, Map<String, Value>) {
    let (mut med, mut lo, mut hi) = (Map::new(), Map::new(), Map::new());
    let Some(Value::Object(first)) = runs.first() else {
        return (med, lo, hi);
    };
    for (key, v) in first {
        if v.is_number() {
            let mut xs: Vec<f64> = runs
                .iter()
                .filter_map(|r| r.get(key).and_then(Value::as_f64))
                .collect();
            if xs.len() != runs.len() {
                continue;
            }
            let all_int = runs.iter().all(|r| r[key].is_u64() || r[key].is_i64());
            let (mn, mx) = xs
                .iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| {
                    (a.min(x), b.max(x))
                });
            let m = median(&mut xs);
            med.insert(key.clone(), num(m, all_int && m.fract() == 0.0));
            lo.insert(key.clone(), num(mn, all_int));
            hi.insert(key.clone(), num(mx, all_int));
        }
    }
    // Threads: median cores per thread name over the runs (absent = 0 cores).
    let mut names: Vec<String> = Vec::new();
    for r in runs {
        for t in r
            .get("threads")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(n) = t.get("name").and_then(Value::as_str) {
                if !names.iter().any(|x| x == n) {
                    names.push(n.to_string());
                }
            }
        }
    }
    if !names.is_empty() {
        let mut threads: Vec<(String, f64)> = names
            .into_iter()
            .map(|n| {
                let mut xs: Vec<f64> = runs
                    .iter()
                    .map(|r| {
                        r.get("threads")
                            .and_then(Value::as_array)
                            .and_then(|ts| {
                                ts.iter()
                                    .find(|t| t.get("name").and_then(Value::as_str) == Some(&n))
                            })
                            .and_then(|t| t.get("cores").and_then(Value::as_f64))
                            .unwrap_or(0.0)
                    })
                    .collect();
                (n, median(&mut xs))
            })
            .collect();
        threads.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        med.insert(
            "threads".into(),
            Value::Array(
                threads
                    .into_iter()
                    .map(|(n, c)| serde_json::json!({"name": n, "cores": round3(c)}))
                    .collect(),
            ),
        );
    }
    (med, lo, hi)
}

fn num(x: f64, int: bool) -> Value {
    if int && x >= 0.0 {
        Value::from(x as u64)
    } else {
        serde_json::Number::from_f64(round3(x))
            .map(Value::Number)
            .unwrap_or(Value::Null)
    }
}

/// The `--out` folder: result.json and runs.csv at the top, one sub-folder per run.
pub struct OutDir {
    pub root: PathBuf,
    /// A temporary folder (no `--out`): removed when done.
    temporary: bool,
}

impl OutDir {
    pub fn new(out: Option<&Path>, probe: &str) -> Result<OutDir> {
        let (root, temporary) = match out {
            Some(p) => (p.to_path_buf(), false),
            None => (
                std::env::temp_dir().join(format!("kgap-{probe}-{}", std::process::id())),
                true,
            ),
        };
        std::fs::create_dir_all(&root)
            .map_err(|e| ProbeError::io(format!("creating {}", root.display()), e))?;
        Ok(OutDir { root, temporary })
    }

    pub fn is_temporary(&self) -> bool {
        self.temporary
    }

    /// The folder of one run (`<setting>-rep<k>`), created.
    pub fn run_dir(&self, setting: &str, rep: u32) -> Result<PathBuf> {
        let d = self.root.join(format!("{setting}-rep{rep}"));
        std::fs::create_dir_all(&d)
            .map_err(|e| ProbeError::io(format!("creating {}", d.display()), e))?;
        Ok(d)
    }

    /// Rewrites result.json and runs.csv (called after every run).
    pub fn write(&self, result: &ProbeResult) -> Result<()> {
        if self.temporary {
            return Ok(());
        }
        let json = serde_json::to_vec_pretty(result).expect("result serializes");
        let p = self.root.join("result.json");
        std::fs::write(&p, json)
            .map_err(|e| ProbeError::io(format!("writing {}", p.display()), e))?;
        let p = self.root.join("runs.csv");
        write_runs_csv(&p, result)
            .map_err(|e| ProbeError::io(format!("writing {}", p.display()), e))
    }
}

impl Drop for OutDir {
    fn drop(&mut self) {
        if self.temporary {
            let _ = std::fs::remove_dir_all(&self.root);
        }
    }
}

/// One CSV row per run: probe, broker, the setting's params, rep, then every scalar figure.
pub fn write_runs_csv(path: &Path, result: &ProbeResult) -> std::io::Result<()> {
    let mut w = csv::Writer::from_path(path)?;
    let mut header: Vec<String> = vec!["probe".into(), "broker".into()];
    let mut param_keys: Vec<String> = Vec::new();
    let mut figure_keys: Vec<String> = Vec::new();
    for s in &result.settings {
        for k in s.params.keys() {
            if !param_keys.contains(k) {
                param_keys.push(k.clone());
            }
        }
        for r in &s.runs {
            for (k, v) in r.as_object().into_iter().flatten() {
                if (v.is_number() || v.is_string() || v.is_boolean()) && !figure_keys.contains(k) {
                    figure_keys.push(k.clone());
                }
            }
        }
    }
    header.extend(param_keys.iter().cloned());
    header.push("rep".into());
    header.extend(figure_keys.iter().cloned());
    w.write_record(&header)?;
    for s in &result.settings {
        for (i, r) in s.runs.iter().enumerate() {
            let kind = serde_json::to_value(result.broker.kind)
                .ok()
                .and_then(|v| v.as_str().map(String::from))
                .unwrap_or_default();
            let mut row: Vec<String> = vec![result.probe.clone(), kind];
            row.extend(
                param_keys
                    .iter()
                    .map(|k| s.params.get(k).map(scalar).unwrap_or_default()),
            );
            row.push((i + 1).to_string());
            row.extend(
                figure_keys
                    .iter()
                    .map(|k| r.get(k).map(scalar).unwrap_or_default()),
            );
            w.write_record(&row)?;
        }
    }
    w.flush()
}

fn scalar(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// A plain-text table with right-aligned numeric columns.
pub struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Table {
    pub fn new<S: Into<String>>(header: impl IntoIterator<Item = S>) -> Table {
        Table {
            header: header.into_iter().map(Into::into).collect(),
            rows: Vec::new(),
        }
    }

    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    pub fn render(&self) -> String {
        let n = self.header.len();
        let mut width = vec![0; n];
        for r in std::iter::once(&self.header).chain(&self.rows) {
            for (i, c) in r.iter().enumerate().take(n) {
                width[i] = width[i].max(c.chars().count());
            }
        }
        let mut out = String::new();
        for (ri, r) in std::iter::once(&self.header).chain(&self.rows).enumerate() {
            let cells: Vec<String> = (0..n)
                .map(|i| {
                    let c = r.get(i).map(String::as_str).unwrap_or("");
                    if i == 0 {
                        format!("{c:<w$}", w = width[i])
                    } else {
                        format!("{c:>w$}", w = width[i])
                    }
                })
                .collect();
            out.push_str(cells.join("  ").trim_end());
            out.push('\n');
            if ri == 0 {
                out.push_str(&"-".repeat(width.iter().sum::<usize>() + 2 * (n - 1)));
                out.push('\n');
            }
        }
        out
    }
}

/// The order of settings in rep `rep` (1-based): alternating, so drift over a sweep does not
/// favour the settings that run first.
pub fn rep_order(rep: u32, settings: usize) -> Vec<usize> {
    if rep % 2 == 1 {
        (0..settings).collect()
    } else {
        (0..settings).rev().collect()
    }
}

/// The first lines of every probe's text report: what ran, on which broker, with which bytes.
pub fn render_header(r: &ProbeResult, what: &str) -> String {
    let broker = broker_line(r);
    format!(
        "{}: {what}, {} reps, librdkafka {}\nbroker: {broker}\npayload pool: {} × {} B {}, sha256 {}\n\n",
        r.probe,
        r.reps,
        r.librdkafka_version,
        r.payload.pool_count,
        r.payload.size_bytes,
        r.payload.kind,
        r.payload_sha256
    )
}

/// Which broker, with the mock's caveat.
pub fn broker_line(r: &ProbeResult) -> String {
    match &r.broker.note {
        Some(note) => format!("{} — {}", r.broker.bootstrap, note),
        None => format!("{} (external Kafka cluster)", r.broker.bootstrap),
    }
}

/// The last lines of every probe's text report: notes, what an analyzer said of the probe's
/// own capture (`analyzer_lines`), verdict, interruption, what was not measured.
pub fn render_footer(r: &ProbeResult, analyzer_lines: &[String]) -> String {
    let mut s = String::new();
    for n in &r.notes {
        s.push_str(&format!("note: {n}\n"));
    }
    for l in analyzer_lines {
        s.push_str(&format!("\n{l}\n"));
    }
    if let Some(v) = &r.verdict {
        s.push_str(&format!(
            "\nverdict ({}): {}\n  {}\n",
            v.finding,
            match (v.decided, v.holds) {
                (false, _) => "cannot tell",
                (true, true) => "HOLDS",
                (true, false) => "does not hold",
            },
            v.summary
        ));
    }
    if r.interrupted {
        s.push_str("\ninterrupted: the table shows the runs completed before Ctrl-C\n");
    }
    s.push_str(&format!("not measured: {}\n", r.not_measured.join("; ")));
    s
}

/// `1234567.0` → `1.23M`, `389000` → `389k`: the post's way of writing rates.
pub fn si(x: f64) -> String {
    let a = x.abs();
    if a >= 1e6 {
        format!("{:.2}M", x / 1e6)
    } else if a >= 1e4 {
        format!("{:.0}k", x / 1e3)
    } else if a >= 1e3 {
        format!("{:.1}k", x / 1e3)
    } else {
        format!("{x:.0}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn summaries_are_median_min_max_per_numeric_field() {
        let runs = vec![
            json!({"msgs_per_s": 300.0, "backoffs": 7, "timeline": [1, 2], "threads": [{"name": "app", "cores": 0.5}]}),
            json!({"msgs_per_s": 100.0, "backoffs": 5, "timeline": [3], "threads": [{"name": "app", "cores": 0.7}, {"name": "rdk:broker1", "cores": 0.2}]}),
            json!({"msgs_per_s": 200.0, "backoffs": 6, "timeline": [], "threads": [{"name": "app", "cores": 0.6}]}),
        ];
        let (med, lo, hi) = summarize(&runs);
        assert_eq!(med["msgs_per_s"], json!(200.0));
        assert_eq!(lo["msgs_per_s"], json!(100.0));
        assert_eq!(hi["msgs_per_s"], json!(300.0));
        assert_eq!(med["backoffs"], json!(6));
        assert!(!med.contains_key("timeline"));
        assert_eq!(
            med["threads"],
            json!([{"name": "app", "cores": 0.6}, {"name": "rdk:broker1", "cores": 0.0}])
        );
    }

    #[test]
    fn median_range_cell() {
        let mut s = SettingResult::new(Map::new());
        for x in [330e3, 389e3, 573e3] {
            s.push_run(&json!({"msgs_per_s": x}));
        }
        assert_eq!(s.median_range_si("msgs_per_s"), "389k (330k–573k)");
    }

    #[test]
    fn even_count_median_of_integers_may_be_fractional() {
        let runs = vec![json!({"n": 1}), json!({"n": 2})];
        let (med, _, _) = summarize(&runs);
        assert_eq!(med["n"], json!(1.5));
    }

    #[test]
    fn table_aligns_columns() {
        let mut t = Table::new(["setting", "msg/s"]);
        t.row(vec!["1000".into(), "389k".into()]);
        t.row(vec!["10".into(), "1.48M".into()]);
        let s = t.render();
        let lines: Vec<&str> = s.lines().collect();
        assert_eq!(lines[0], "setting  msg/s");
        assert_eq!(lines[2], "1000      389k");
        assert_eq!(lines[3], "10       1.48M");
    }

    #[test]
    fn reps_alternate_the_order_of_settings() {
        assert_eq!(rep_order(1, 3), vec![0, 1, 2]);
        assert_eq!(rep_order(2, 3), vec![2, 1, 0]);
        assert_eq!(rep_order(3, 3), vec![0, 1, 2]);
        assert!(rep_order(1, 0).is_empty());
    }

    #[test]
    fn si_units() {
        assert_eq!(si(389_000.0), "389k");
        assert_eq!(si(1_480_000.0), "1.48M");
        assert_eq!(si(2_500.0), "2.5k");
        assert_eq!(si(12.0), "12");
    }
}
