//! How `analyze-fetch-log` reads a log: the time window, the consumer's `fetch.wait.max.ms`
//! and the longest line.

/// How to read the log. `Default` reads everything with librdkafka's defaults.
#[derive(Debug, Clone, Default)]
pub struct FetchLogOptions {
    /// Ignore records timed before this (epoch seconds, or the log's own clock for
    /// time-only wrapper stamps). Records without a time are kept.
    pub window_start: Option<f64>,
    /// Ignore records timed after this.
    pub window_end: Option<f64>,
    /// The consumer's `fetch.wait.max.ms` (default 500): an empty fetch that took at
    /// least 90% of it was held by the broker waiting for data.
    pub fetch_wait_max_ms: Option<u64>,
    /// Longest line analysed whole (default 1 MiB); longer lines are cut.
    pub max_line_bytes: Option<usize>,
}
