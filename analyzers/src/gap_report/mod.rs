//! `gap-report`: everything a folder holds, read by the matching analyzers, into one report
//! of the post's gaps.
//!
//! Every file under the folder (recursively, in byte order of names, so two runs agree) is
//! sniffed by content, never by name: librdkafka debug logs in any wrapper (gzip too),
//! statistics JSON, JVM GC logs, JFR recordings and `jfr print --json` exports, per-thread
//! CPU recordings, and probe results. Each goes to its analyzer as a library call (they all
//! stream), and each diagnosis is mapped onto the [findings catalogue](crate::findings).
//! The report then says, per finding of the post: found (with evidence, the window, example
//! lines, cause, fix and confidence), or looked for and not found (in which files), or not
//! checked (what input would show it); and which files could not be used, and why.
//!
//! ```
//! use kgap_analyzers::gap_report::{gap_report, Options};
//! let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/librdkafka/consumer-kafka431-backoff-1000ms");
//! let report = gap_report(std::path::Path::new(dir), &Options::default()).unwrap();
//! assert_eq!(report.gaps[0].finding, "fetch-backoff");
//! ```

mod analyze;
mod probe;
mod render;
pub mod sniff;
mod statistics;

use std::collections::BTreeSet;
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::engine::input::Input;
use crate::findings::{self, Side, Strength};
use crate::librdkafka::RecordFinder;
use crate::vocab::report::{Diagnosis, ExampleLine};
use serde_json::Value;

pub use probe::read_probe_result;
pub use render::relative_path;

/// How to run.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Build SVG charts ([`GapReport::charts`]) for `--svg-dir`.
    pub charts: bool,
    /// Parser threads for librdkafka logs (as the log analyzers' `--threads`).
    pub workers: Option<usize>,
}

/// Why the folder itself could not be read.
#[derive(Debug, thiserror::Error)]
pub enum GapReportError {
    #[error("{path}: {source}")]
    Unreadable {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{0}: not a directory or a regular file")]
    NotADirectory(String),
}

/// The report: the documented `--json` contract.
#[derive(Debug, Clone, Serialize)]
pub struct GapReport {
    /// `"gap-report"`.
    pub tool: &'static str,
    /// The folder, as given.
    pub dir: String,
    /// Files found under it.
    pub files_seen: usize,
    /// … of which an analyzer could read.
    pub files_used: usize,
    /// Findings of the post with evidence, in the catalogue's order.
    pub gaps: Vec<Gap>,
    /// Findings looked for and not found, or not checked for lack of input.
    pub not_found: Vec<NotFound>,
    /// Diagnoses the analyzers made that are not findings of the post.
    pub other_diagnoses: Vec<Signal>,
    /// Every file, in the order read, with what was done with it.
    pub files: Vec<FileEntry>,
    /// Charts (with [`Options::charts`]): written by `--svg-dir`.
    #[serde(skip)]
    pub charts: Vec<Chart>,
}

/// How sure the report is of a gap.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Confidence {
    Low,
    Medium,
    High,
}

impl Confidence {
    pub fn as_str(self) -> &'static str {
        match self {
            Confidence::Low => "low",
            Confidence::Medium => "medium",
            Confidence::High => "high",
        }
    }
}

/// A finding of the post, detected.
#[derive(Debug, Clone, Serialize)]
pub struct Gap {
    /// The catalogue id.
    pub finding: &'static str,
    pub title: &'static str,
    pub side: Side,
    pub confidence: Confidence,
    /// Why this confidence, in words.
    pub confidence_why: String,
    /// The post's claim and figures.
    pub post: &'static str,
    /// The cause, in the post's terms.
    pub cause: &'static str,
    pub fix: &'static str,
    /// The command that reproduces it (a planned probe says so).
    pub reproduce: &'static str,
    /// The evidence, in file order.
    pub signals: Vec<Signal>,
    /// Evidence against it (a probe whose verdict did not hold).
    pub against: Vec<String>,
}

/// One diagnosis (or probe verdict) from one file.
#[derive(Debug, Clone, Serialize)]
pub struct Signal {
    /// The file, relative to the folder.
    pub file: String,
    /// The analyzer or probe that said it.
    pub source: String,
    /// Its diagnosis id (or the probe's verdict finding).
    pub id: String,
    /// How strongly it speaks for the finding (null outside the catalogue).
    pub strength: Option<Strength>,
    pub title: String,
    pub cause: String,
    pub fix: String,
    /// The analyzer's numbers.
    pub evidence: serde_json::Value,
    /// The span of the input it was read from.
    pub window: Option<SignalWindow>,
    /// Input lines that show it.
    pub examples: Vec<ExampleLine>,
}

/// The time span a signal was read from.
#[derive(Debug, Clone, Serialize)]
pub struct SignalWindow {
    /// `epoch` (seconds since 1970), `uptime` (JVM), `wrapper` (the log wrapper's clock),
    /// or `recording` (seconds from the recording's start).
    pub clock: String,
    pub start_s: Option<f64>,
    pub end_s: Option<f64>,
    pub duration_s: Option<f64>,
    /// Where in it the gap first shows, on the same clock, when the analyzer says
    /// (a GC log's first collapsed window, a thread's first saturated second).
    pub shows_from_s: Option<f64>,
}

/// A finding not detected.
#[derive(Debug, Clone, Serialize)]
pub struct NotFound {
    pub finding: &'static str,
    pub title: &'static str,
    /// Files whose analyzer could have shown it.
    pub checked_in: Vec<String>,
    /// "not found" with what was checked, or "not checked" with what input would show it.
    pub result: String,
    /// Probes whose verdict said it did not hold, with their summaries.
    pub probe_verdicts: Vec<String>,
    /// How to reproduce it instead.
    pub reproduce: &'static str,
}

/// One file and what became of it.
#[derive(Debug, Clone, Serialize)]
pub struct FileEntry {
    /// Relative to the folder.
    pub path: String,
    /// What its content is (`librdkafka-log`, `gc-log`, …, or `unusable`).
    pub kind: &'static str,
    pub gzip: bool,
    pub used: bool,
    /// The analyzers that read it.
    pub analyzers: Vec<String>,
    /// One line on what was read.
    pub summary: String,
    /// Why it could not be used.
    pub reason: Option<String>,
    /// Diagnosis ids found in it.
    pub diagnoses: Vec<String>,
}

/// An SVG chart for the Markdown report.
#[derive(Debug, Clone)]
pub struct Chart {
    /// File name in the SVG folder.
    pub file: String,
    pub title: String,
    /// The input it was drawn from.
    pub source: String,
    /// The finding it illustrates, when it does.
    pub finding: Option<&'static str>,
    pub svg: String,
}

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
}

/// Deepest folder nesting followed.
const MAX_DEPTH: usize = 32;

/// Read everything under `dir` (or the one file `dir` names) and build the report. Only a
/// folder that cannot be listed is an error; every file that cannot be used is listed in
/// the report with its reason.
pub fn gap_report(dir: &Path, opts: &Options) -> Result<GapReport, GapReportError> {
    let shown = dir.display().to_string();
    let meta = fs::metadata(dir).map_err(|source| GapReportError::Unreadable {
        path: shown.clone(),
        source,
    })?;
    let mut paths = Vec::new();
    let mut problems = Vec::new();
    if meta.is_dir() {
        let mut visited = BTreeSet::new();
        if let Ok(c) = fs::canonicalize(dir) {
            visited.insert(c);
        }
        let top = fs::read_dir(dir).map_err(|source| GapReportError::Unreadable {
            path: shown.clone(),
            source,
        })?;
        walk(top, dir, "", 0, &mut visited, &mut paths, &mut problems);
    } else if meta.is_file() {
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| shown.clone());
        paths.push((dir.to_path_buf(), name));
    } else {
        return Err(GapReportError::NotADirectory(shown));
    }

    let finder = RecordFinder::new();
    let mut files = Vec::new();
    let mut signals = Vec::new();
    let mut not_held = Vec::new();
    let mut charts = Vec::new();
    let mut sources_by_file: Vec<(String, Vec<String>)> = Vec::new();
    let mut cut_files: Vec<(String, String)> = Vec::new();
    let mut progress = crate::engine::progress::Files::new("gap-report", paths.len());
    for (path, rel) in &paths {
        progress.next(rel);
        let o = analyze::file(path, rel, &finder, opts);
        let used = o.reason.is_none();
        if used {
            sources_by_file.push((rel.clone(), o.analyzers.clone()));
            if let Some(c) = &o.cut {
                cut_files.push((rel.clone(), c.clone()));
            }
        }
        files.push(FileEntry {
            path: rel.clone(),
            kind: o.kind,
            gzip: o.gzip,
            used,
            analyzers: o.analyzers,
            summary: o.summary,
            reason: o.reason,
            diagnoses: o.signals.iter().map(|s| s.id.clone()).collect(),
        });
        signals.extend(o.signals);
        not_held.extend(o.not_held);
        charts.extend(o.charts);
    }
    drop(progress);
    for (rel, reason) in problems {
        files.push(FileEntry {
            path: rel,
            kind: "unusable",
            gzip: false,
            used: false,
            analyzers: Vec::new(),
            summary: String::new(),
            reason: Some(reason),
            diagnoses: Vec::new(),
        });
    }
    // Listing problems join the files they belong among.
    files.sort_by(|a, b| a.path.cmp(&b.path));

    let (gaps, not_found, other) = assemble(signals, &not_held, &sources_by_file, &cut_files);
    // Charts only for files that show a gap: the Markdown stays about the gaps.
    let shown_files: BTreeSet<&str> = gaps
        .iter()
        .flat_map(|g| g.signals.iter().map(|s| s.file.as_str()))
        .collect();
    let charts = charts
        .into_iter()
        .filter(|c| shown_files.contains(c.source.as_str()))
        .collect();
    Ok(GapReport {
        tool: "gap-report",
        dir: shown,
        files_seen: files.len(),
        files_used: files.iter().filter(|f| f.used).count(),
        gaps,
        not_found,
        other_diagnoses: other,
        files,
        charts,
    })
}

/// List `dir` recursively, names in byte order, following symlinks (each real folder once).
fn walk(
    entries: fs::ReadDir,
    dir: &Path,
    rel: &str,
    depth: usize,
    visited: &mut BTreeSet<PathBuf>,
    out: &mut Vec<(PathBuf, String)>,
    problems: &mut Vec<(String, String)>,
) {
    let mut names: Vec<std::ffi::OsString> = Vec::new();
    for e in entries {
        match e {
            Ok(e) => names.push(e.file_name()),
            Err(e) => problems.push((format!("{rel}<entry>"), format!("cannot list: {e}"))),
        }
    }
    names.sort();
    for name in names {
        let path = dir.join(&name);
        let r = format!("{rel}{}", name.to_string_lossy());
        let meta = match fs::metadata(&path) {
            Ok(m) => m,
            Err(e) => {
                problems.push((r, format!("cannot read: {e}")));
                continue;
            }
        };
        if meta.is_dir() {
            let canon = fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
            if depth + 1 > MAX_DEPTH {
                problems.push((
                    r,
                    format!("folder nested deeper than {MAX_DEPTH}: not read"),
                ));
            } else if !visited.insert(canon) {
                problems.push((
                    r,
                    "folder already read (a symlink loop or a second link)".into(),
                ));
            } else {
                match fs::read_dir(&path) {
                    Ok(sub) => walk(
                        sub,
                        &path,
                        &format!("{r}/"),
                        depth + 1,
                        visited,
                        out,
                        problems,
                    ),
                    Err(e) => problems.push((r, format!("cannot list: {e}"))),
                }
            }
        } else if meta.is_file() {
            out.push((path, r));
        } else {
            // FIFOs and devices would block or never end.
            problems.push((
                r,
                "not a regular file (FIFO, socket or device): not read".into(),
            ));
        }
    }
}

/// The first [`sniff::HEAD_BYTES`] of a file, decompressed when gzip.
pub(crate) fn head(path: &Path) -> Result<(Vec<u8>, bool), String> {
    let f = fs::File::open(path).map_err(|e| format!("cannot open: {e}"))?;
    let input = Input::detect(f).map_err(|e| format!("cannot read: {e}"))?;
    let gzip = input.is_gzip();
    let cut = input.gzip_cut();
    let mut head = Vec::with_capacity(sniff::HEAD_BYTES);
    match input.take(sniff::HEAD_BYTES as u64).read_to_end(&mut head) {
        // Cut before anything inflated: not an empty file, a broken gzip.
        Ok(_) if head.is_empty() && cut.get().is_some() => Err(format!(
            "looks like gzip but does not decompress: {}",
            cut.get().unwrap_or_default()
        )),
        Ok(_) => Ok((head, gzip)),
        // A gzip stream cut short still gives its head; the analyzer then says where it broke.
        Err(_) if gzip && !head.is_empty() => Ok((head, gzip)),
        Err(e) if gzip => Err(format!("looks like gzip but does not decompress: {e}")),
        Err(e) => Err(format!("cannot read: {e}")),
    }
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

/// What a source needs as input, for "not checked" lines.
fn needs(source: &str) -> String {
    match source {
        "analyze-protocol-log" => "a librdkafka log with debug=protocol".into(),
        "analyze-fetch-log" => "a librdkafka consumer log with debug=fetch".into(),
        "analyze-gc-log" => "a JVM GC log (-Xlog:gc*)".into(),
        "analyze-jfr" => "a JFR recording (.jfr, or `jfr print --json`)".into(),
        "analyze-thread-cpu" => {
            "a per-thread CPU recording (analyze-thread-cpu --save, or a probe's threads.csv)"
                .into()
        }
        "analyze-stats" => {
            "librdkafka statistics JSON (statistics.interval.ms, as a stats callback or log \
             writes it)"
                .into()
        }
        probe => format!("the result.json of `{probe} --out DIR`"),
    }
}

/// Group signals by finding, decide confidence, and say what was not found.
fn assemble(
    signals: Vec<Signal>,
    not_held: &[(String, String)],
    sources_by_file: &[(String, Vec<String>)],
    cut_files: &[(String, String)],
) -> (Vec<Gap>, Vec<NotFound>, Vec<Signal>) {
    let mut gaps = Vec::new();
    let mut not_found = Vec::new();
    let mut other = Vec::new();
    let mut by_finding: Vec<Vec<Signal>> = vec![Vec::new(); findings::CATALOGUE.len()];
    for s in signals {
        let op = s.evidence.get("op").and_then(|v| v.as_str());
        // A probe's verdict names its finding by catalogue id; an analyzer's diagnosis is
        // mapped by the catalogue's sources.
        let finding = if s.source.starts_with("probe-") {
            findings::get(&s.id)
        } else {
            findings::evidence_from(&s.id, Some(&s.source), op).map(|(f, _)| f)
        };
        match finding {
            Some(f) => {
                let i = findings::CATALOGUE
                    .iter()
                    .position(|c| c.id == f.id)
                    .expect("catalogue entry");
                by_finding[i].push(s);
            }
            None if findings::ALL_CLEAR_IDS.contains(&s.id.as_str()) => {}
            None => other.push(s),
        }
    }
    for (f, sigs) in findings::CATALOGUE.iter().zip(by_finding) {
        let against: Vec<String> = not_held
            .iter()
            .filter(|(id, _)| id == f.id)
            .map(|(_, summary)| summary.clone())
            .collect();
        let sources: BTreeSet<&str> = f.sources.iter().map(|e| e.source).collect();
        if sigs.is_empty() {
            let checked_in: Vec<String> = sources_by_file
                .iter()
                .filter(|(_, an)| an.iter().any(|a| sources.contains(a.as_str())))
                .map(|(file, _)| file.clone())
                .collect();
            let cut: Vec<String> = checked_in
                .iter()
                .filter_map(|f| {
                    cut_files
                        .iter()
                        .find(|(c, _)| c == f)
                        .map(|(c, why)| format!("{c} is {why}"))
                })
                .collect();
            let result = if !cut.is_empty() {
                format!(
                    "cannot tell: {}; what was lost may hold it, so not finding it here \
                     means nothing",
                    cut.join("; ")
                )
            } else if !checked_in.is_empty() {
                format!(
                    "not found in {} file{} that could show it",
                    checked_in.len(),
                    if checked_in.len() == 1 { "" } else { "s" }
                )
            } else if sources.is_empty() {
                "not checked: no analyzer reads it from a capture; run its probe".into()
            } else {
                let wants: Vec<String> = sources.iter().map(|s| needs(s)).collect();
                format!("not checked: needs {}", wants.join(", or "))
            };
            not_found.push(NotFound {
                finding: f.id,
                title: f.title,
                checked_in,
                result,
                probe_verdicts: against,
                reproduce: f.reproduce.command,
            });
            continue;
        }
        let files: BTreeSet<&str> = sigs.iter().map(|s| s.file.as_str()).collect();
        let direct_files: BTreeSet<&str> = sigs
            .iter()
            .filter(|s| s.strength == Some(Strength::Direct))
            .map(|s| s.file.as_str())
            .collect();
        let direct = direct_files.len();
        let probe = sigs.iter().find(|s| s.source.starts_with("probe-"));
        let (mut confidence, mut why) = if let Some(p) = probe {
            (
                Confidence::High,
                format!(
                    "reproduced: {}'s verdict HOLDS by the catalogue's rule, with its mechanism",
                    p.source
                ),
            )
        } else if direct > 0 && files.len() >= 2 {
            (
                Confidence::High,
                format!(
                    "{} files agree, {direct} of them showing the finding's own mechanism",
                    files.len()
                ),
            )
        } else if direct > 0 {
            (
                Confidence::Medium,
                "one file shows the finding's mechanism; no second source confirms it".into(),
            )
        } else {
            (
                Confidence::Low,
                "only indirect signs (consistent with it, but other causes look the same)".into(),
            )
        };
        if !against.is_empty() && confidence == Confidence::High && probe.is_none() {
            confidence = Confidence::Medium;
            why.push_str("; but a probe's verdict did not hold");
        }
        gaps.push(Gap {
            finding: f.id,
            title: f.title,
            side: f.side,
            confidence,
            confidence_why: why,
            post: f.claim,
            cause: f.cause,
            fix: f.fix,
            reproduce: f.reproduce.command,
            signals: sigs,
            against,
        });
    }
    (gaps, not_found, other)
}

impl GapReport {
    /// At least one file could be read.
    pub fn is_usable(&self) -> bool {
        self.files_used > 0
    }

    /// The terminal report (80 columns).
    pub fn render_text(&self) -> String {
        render::text(self)
    }

    /// The Markdown report; charts are linked from `svg_dir` as seen from `md_dir`.
    pub fn render_markdown(&self, svg_link_prefix: Option<&str>) -> String {
        render::markdown(self, svg_link_prefix)
    }
}
