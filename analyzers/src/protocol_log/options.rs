//! How `analyze-protocol-log` reads a log: the time window and the longest line.

/// How to read the log. `Default` reads everything.
#[derive(Debug, Clone, Default)]
pub struct ProtocolLogOptions {
    /// Ignore records timed before this (epoch seconds, or the log's own clock for
    /// time-only wrapper stamps). Records without a time are kept.
    pub window_start: Option<f64>,
    /// Ignore records timed after this.
    pub window_end: Option<f64>,
    /// Longest line analysed whole (default 1 MiB); longer lines are cut.
    pub max_line_bytes: Option<usize>,
}
