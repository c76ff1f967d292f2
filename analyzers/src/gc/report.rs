//! The report's types: the documented JSON contract of `analyze-gc-log --json`, and how
//! its numbers are rounded.

use serde::Serialize;

use super::rounding::round3;
use super::series::Point;
use crate::vocab::report::{Diagnosis, Dist, ExampleLine, Examples};

/// One closed window, as the report and the timeline see it.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct WindowSummary {
    /// Window start on the log's clock (seconds).
    pub start_s: f64,
    /// Stop-the-world GC time in the window.
    pub gc_ms: f64,
    /// `gc_ms` over the part of the window the log covers.
    pub gc_fraction: f64,
    /// Heap after young GC (fraction of max) that held in this window: the lowest seen in
    /// it, or the last one before it.
    pub heap_after_young: Option<f64>,
    /// Same, for any collection.
    pub heap_after_gc: Option<f64>,
    /// The heap share the collapse rule used: after young GC when the window had one,
    /// else after its other collections (Parallel and Serial stop running young GCs
    /// once the old generation is full), else the last one before it.
    pub heap_considered: Option<f64>,
}

/// Pause statistics (milliseconds).
#[derive(Debug, Clone, Default, Serialize)]
pub struct PauseStats {
    pub count: u64,
    pub total_ms: f64,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
}

/// Pause statistics of one pause type (`Pause Young (Normal)`, `Pause Full`, …).
#[derive(Debug, Clone, Serialize)]
pub struct PauseTypeStats {
    pub kind: String,
    #[serde(flatten)]
    pub stats: PauseStats,
}

/// How often something happened, by name.
#[derive(Debug, Clone, Serialize)]
pub struct Count {
    pub what: String,
    pub count: u64,
}

/// Heap after collections as a share of the maximum heap, and where it is heading.
#[derive(Debug, Clone, Serialize)]
pub struct HeapTrend {
    /// Collections measured.
    pub count: u64,
    pub first_pct: f64,
    pub last_pct: f64,
    pub min_pct: f64,
    pub max_pct: f64,
    pub mean_pct: f64,
    /// Collections that left the heap at least the collapse share full.
    pub at_or_above_collapse_share: u64,
    /// Least-squares slope, percentage points of the max per minute of log time.
    pub trend_pct_per_min: Option<f64>,
    /// `rising`, `flat` or `falling` (±1 point per minute).
    pub trend: &'static str,
}

/// G1 humongous objects (at least half a region each).
#[derive(Debug, Clone, Default, Serialize)]
pub struct Humongous {
    /// Pauses whose cause was a humongous allocation.
    pub gcs_caused: u64,
    /// Most humongous regions after a GC.
    pub max_regions: Option<u64>,
    pub max_mb: Option<f64>,
}

/// ZGC allocation stalls: application threads waiting for the collector.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Stalls {
    pub count: u64,
    pub total_ms: f64,
    pub max_ms: f64,
    /// Stalls counted by ZGC's own per-cycle table, when it prints one.
    pub counted_by_gc: u64,
}

/// What young collections moved into the old generation, and what old collections
/// then found dead there.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Promotion {
    /// Young GCs with old-generation numbers (gen lines, or G1 old regions).
    pub young_gcs_measured: u64,
    pub promoted_mb: f64,
    /// Full GCs: heap freed, and heap before them.
    pub full_gc_freed_mb: f64,
    pub full_gc_before_mb: f64,
    /// `new threshold N (max threshold M)` lines, and those with N ≤ 1 < M.
    pub tenuring_lines: u64,
    pub tenuring_threshold_low: u64,
}

/// What the input looked like as a whole.
#[derive(Debug, Clone, Default, Serialize)]
pub struct GcInputSummary {
    pub bytes: u64,
    pub lines: u64,
    /// Lines parsed (the rest held no anchor word and were only counted).
    pub lines_parsed: u64,
    pub gzip: bool,
    pub lines_truncated: u64,
    pub binary_at_offset: Option<u64>,
    pub unterminated_last_line: bool,
    /// A gzip file's stream ended early (the decoder's words); what came before was read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gzip_cut: Option<String>,
}

/// The report: the documented JSON contract of `analyze-gc-log --json`.
#[derive(Debug, Clone, Serialize)]
pub struct GcReport {
    pub tool: &'static str,
    pub files: Vec<String>,
    /// `G1`, `Parallel`, `Serial`, `CMS`, `ZGC`, `ZGC (generational)`, `Shenandoah`,
    /// `mixed: …` when several appear, or null.
    pub collector: Option<String>,
    /// `unified` (JDK 9+) or `legacy` (JDK 8 PrintGCDetails); `mixed` when both.
    pub format: Option<&'static str>,
    /// The JVM's version when the log says it.
    pub jdk: Option<String>,
    /// What the log's wording implies about the JDK when it does not say.
    pub jdk_hint: Option<String>,
    /// The clock windows are measured on: `uptime`, `wall` (epoch seconds) or `none`.
    pub clock: &'static str,
    pub start_s: Option<f64>,
    pub end_s: Option<f64>,
    pub duration_s: Option<f64>,
    /// First and last `GC(N)` ids (a log that starts at GC(1415) started mid-stream).
    pub gc_id_first: Option<u64>,
    pub gc_id_last: Option<u64>,
    pub max_heap_mb: Option<f64>,
    /// `log`, `largest heap capacity seen` (a lower bound), `option`, or null.
    pub max_heap_source: Option<&'static str>,
    pub pauses: PauseStats,
    pub pauses_by_type: Vec<PauseTypeStats>,
    pub causes: Vec<Count>,
    pub full_gcs: u64,
    pub full_gc_ms: f64,
    pub degenerated_gcs: u64,
    pub evacuation_failures: u64,
    pub window_s: f64,
    /// GC time over wall time in the worst window (null without timestamps).
    pub gc_fraction_max_window: Option<f64>,
    pub worst_window: Option<WindowSummary>,
    /// The GC-heaviest window that also left the heap at least the collapse share full
    /// (the window `gc-collapse` quotes), or null when none did.
    pub worst_collapse_window: Option<WindowSummary>,
    /// Windows with GC ≥ the collapse share, and those with the heap also full.
    pub windows: u64,
    pub windows_gc_over_share: u64,
    pub windows_collapsed: u64,
    pub heap_after_young: Option<HeapTrend>,
    pub heap_after_gc: Option<HeapTrend>,
    pub humongous: Humongous,
    pub allocation_stalls: Stalls,
    pub concurrent_failures: Vec<Count>,
    pub promotion: Promotion,
    pub diagnoses: Vec<Diagnosis>,
    pub warnings: Vec<String>,
    /// Why the input could not be analysed (exit status 2), or null.
    pub unsupported: Option<String>,
    pub input: GcInputSummary,
    pub timeline_rows: Option<u64>,
    /// Heap after GC (% of max) and pause (ms) over time, for `--svg`.
    #[serde(skip)]
    pub heap_points: Vec<Point>,
    #[serde(skip)]
    pub pause_points: Vec<Point>,
}

impl GcReport {
    /// The input held a GC log this tool could read.
    pub fn is_usable(&self) -> bool {
        self.unsupported.is_none()
    }
}

pub(super) fn pause_stats(d: &Dist, total_ms: f64) -> PauseStats {
    if d.is_empty() {
        return PauseStats::default();
    }
    PauseStats {
        count: d.len(),
        total_ms: round3(total_ms),
        p50_ms: round3(d.quantile(0.5) as f64 / 1000.0),
        p99_ms: round3(d.quantile(0.99) as f64 / 1000.0),
        max_ms: round3(d.max() as f64 / 1000.0),
    }
}

pub(super) fn examples(e: &Examples) -> Vec<ExampleLine> {
    e.take(Examples::CAP)
}
