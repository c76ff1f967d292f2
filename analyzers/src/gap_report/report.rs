//! The report's types: the documented `--json` contract (gaps, findings not found, other
//! diagnoses, files) and the charts for `--svg-dir`.

use serde::Serialize;

use crate::findings::{Side, Strength};
use crate::vocab::report::ExampleLine;

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
    /// Charts (with [`Options::charts`](crate::gap_report::Options::charts)): written by `--svg-dir`.
    #[serde(skip)]
    pub charts: Vec<Chart>,
    /// The brokers the folder's probe results ran against, each once (the HTML page's
    /// environment; the JSON has each in its file's summary).
    #[serde(skip)]
    pub brokers: Vec<String>,
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
    /// For a diagnosis of an artifact that does not show a Kafka client: the finding it
    /// might be, as a question (it is not filed under it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub question: Option<String>,
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
