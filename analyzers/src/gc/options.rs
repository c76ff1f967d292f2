//! The options of one analysis, and their defaults.

use super::scan;
use crate::findings::diagnoses::gc as rules;

/// Options of one analysis.
#[derive(Debug, Clone)]
pub struct GcLogOptions {
    /// Width of the windows GC time is measured in (seconds).
    pub window_s: f64,
    /// Pauses at least this long count as long (G1's default pause goal is 200 ms).
    pub long_pause_ms: f64,
    /// The collapse rule: a window with at least this share of GC time…
    pub collapse_gc_share: f64,
    /// …while the heap after young GC is at least this share of the maximum.
    pub collapse_heap_share: f64,
    /// The maximum heap (bytes) when the log does not say (`-Xmx`).
    pub max_heap_bytes: Option<f64>,
    /// Read buffer; lines longer than this are analysed by their head.
    pub buffer_bytes: usize,
    /// Parse every line, not only those holding an anchor word: the slow reference path
    /// that tests hold the fast scan to (the same report, but `input.lines_parsed`).
    pub every_line: bool,
    /// Threads: a plain file ([`Source::File`](crate::engine::input::Source::File)) is
    /// read and parsed in chunks by `N` of them, the analysing one among them; a stream
    /// by `N` parsers beside the reading and analysing one. `Some(0)` reads, parses and
    /// analyses on one thread, `None` reads line by line there (the reference the block
    /// front end is held to; the same report). Default: one per core.
    pub threads: Option<usize>,
}

impl Default for GcLogOptions {
    fn default() -> Self {
        GcLogOptions {
            window_s: 1.0,
            long_pause_ms: rules::LONG_PAUSE_MS,
            collapse_gc_share: rules::COLLAPSE_GC_SHARE,
            collapse_heap_share: rules::COLLAPSE_HEAP_SHARE,
            max_heap_bytes: None,
            buffer_bytes: scan::BUFFER_BYTES,
            every_line: false,
            threads: Some(default_threads()),
        }
    }
}

/// Threads by default: one per core.
pub fn default_threads() -> usize {
    crate::engine::cores::available()
}
