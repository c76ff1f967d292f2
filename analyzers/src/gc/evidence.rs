//! What the diagnoses read beside the report: the analysis's own counters and the example
//! lines kept for each diagnosis, gathered once the log is read.

use super::report::WindowSummary;
use crate::vocab::report::ExampleLine;

/// The typed evidence of one analysis that the report does not carry.
#[derive(Debug, Clone, Default)]
pub(crate) struct GcEvidence {
    /// The collector keeps young and old apart (or none was named: assumed so).
    pub generational: bool,
    /// The GC-heaviest window that left the heap full, and the first such window.
    pub worst_collapse: Option<WindowSummary>,
    pub first_collapse: Option<WindowSummary>,
    pub collapse_windows: u64,
    pub windows_closed: u64,
    /// Pauses of at least the long-pause option, and the full GCs among them.
    pub long_pauses: u64,
    pub long_full: u64,
    /// The options the analysis ran with (the rules' words quote them).
    pub long_pause_ms: f64,
    pub collapse_gc_share: f64,
    /// Example lines: full GCs and evacuation failures; long pauses; concurrent
    /// failures then stalls; humongous allocations.
    pub ex_collapse: Vec<ExampleLine>,
    pub ex_long: Vec<ExampleLine>,
    pub ex_behind: Vec<ExampleLine>,
    pub ex_humongous: Vec<ExampleLine>,
    /// Full GCs whose fill for the collapse rule was the old generation's (the heap's
    /// was below the share, the old generation's at or above it).
    pub old_full_after_full_gcs: u64,
    /// `Out Of Memory` / `OutOfMemoryError` lines, and the first few.
    pub out_of_memory: u64,
    pub ex_oom: Vec<ExampleLine>,
}
