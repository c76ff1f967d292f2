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
mod options;
mod outcome;
mod probe;
mod render;
mod report;
pub mod sniff;
mod statistics;

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use crate::findings::scope::{self, Filing, JvmRole};
use crate::findings::{self, Strength};
use crate::librdkafka::RecordFinder;

pub use options::Options;
pub use probe::read_probe_result;
pub use render::relative_path;
pub(crate) use render::window_text;
pub use report::{Chart, Confidence, FileEntry, Gap, GapReport, NotFound, Signal, SignalWindow};

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
    let mut brokers: Vec<String> = Vec::new();
    let mut sources_by_file: Vec<(String, Vec<String>)> = Vec::new();
    let mut cut_files: Vec<(String, String)> = Vec::new();
    let mut progress = crate::engine::progress::Files::new("gap-report", paths.len());
    for (path, rel) in &paths {
        progress.next(rel);
        let o = analyze::file(path, rel, &finder, opts);
        let used = o.reason.is_none();
        if let Some(b) = &o.broker {
            if !brokers.contains(b) {
                brokers.push(b.clone());
            }
        }
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

    let (gaps, not_found, other) = assemble(
        signals,
        &not_held,
        &sources_by_file,
        &cut_files,
        opts.jvm_role,
    );
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
        brokers,
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

/// Group signals by finding (by the catalogue's filing rule: a diagnosis of an artifact
/// any JVM leaves is filed only with Kafka evidence, or the user's `--jvm-role`), decide
/// confidence, and say what was not found.
fn assemble(
    signals: Vec<Signal>,
    not_held: &[(String, String)],
    sources_by_file: &[(String, Vec<String>)],
    cut_files: &[(String, String)],
    role: Option<JvmRole>,
) -> (Vec<Gap>, Vec<NotFound>, Vec<Signal>) {
    let mut gaps = Vec::new();
    let mut not_found = Vec::new();
    let mut other = Vec::new();
    // Each signal with whether the user's word (not the artifact) made it a Kafka client's.
    let mut by_finding: Vec<Vec<(Signal, bool)>> = vec![Vec::new(); findings::CATALOGUE.len()];
    for mut s in signals {
        let op = s.evidence.get("op").and_then(|v| v.as_str());
        // A probe's verdict names its finding by catalogue id; an analyzer's diagnosis is
        // filed by the catalogue's sources and scope.
        let filed = if s.source.starts_with("probe-") {
            findings::get(&s.id).map(|f| (f, false))
        } else {
            match findings::source_entry(&s.id, &s.source, op) {
                None => None,
                Some((f, entry)) => match scope::filing(f, entry, &s.evidence, role) {
                    Filing::Under {
                        finding, by_role, ..
                    } => Some((finding, by_role)),
                    Filing::Generic { question, .. } => {
                        s.question = Some(question);
                        s.strength = None;
                        None
                    }
                },
            }
        };
        match filed {
            Some((f, by_role)) => {
                let i = findings::CATALOGUE
                    .iter()
                    .position(|c| c.id == f.id)
                    .expect("catalogue entry");
                by_finding[i].push((s, by_role));
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
        // Independent sources: each file that shows a Kafka client on its own; files made
        // a Kafka client's by --jvm-role count once per kind (five GC logs are one kind of
        // evidence, whatever they show).
        let source_of = |(s, by_role): &(Signal, bool)| -> String {
            if *by_role {
                format!("every {} file", s.source)
            } else {
                s.file.clone()
            }
        };
        let independent: BTreeSet<String> = sigs.iter().map(source_of).collect();
        let direct_sources: BTreeSet<String> = sigs
            .iter()
            .filter(|(s, _)| s.strength == Some(Strength::Direct))
            .map(source_of)
            .collect();
        let direct = direct_sources.len();
        let by_role = sigs.iter().any(|(_, r)| *r);
        let sigs: Vec<Signal> = sigs.into_iter().map(|(s, _)| s).collect();
        let probe = sigs.iter().find(|s| s.source.starts_with("probe-"));
        let (mut confidence, mut why) = if let Some(p) = probe {
            (
                Confidence::High,
                format!(
                    "reproduced: {}'s verdict HOLDS by the catalogue's rule, with its mechanism",
                    p.source
                ),
            )
        } else if direct > 0 && independent.len() >= 2 {
            (
                Confidence::High,
                format!(
                    "{} independent sources agree, {direct} of them showing the finding's own \
                     mechanism",
                    independent.len()
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
        if by_role && probe.is_none() {
            why.push_str(
                "; the JVM's files are a Kafka client's by --jvm-role, not by what they show",
            );
        }
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
