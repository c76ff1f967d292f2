//! What the fetch analysis judges by: the partition cap, librdkafka's default
//! `fetch.wait.max.ms`, and the share of backoff that makes `fetch-queue-backoff`.

/// Most partitions tracked; hostile input with endless topic names is pooled
/// into the last one (and said so in `warnings`).
pub const MAX_PARTITIONS: usize = 100_000;

/// librdkafka's default `fetch.wait.max.ms`.
pub const DEFAULT_FETCH_WAIT_MAX_MS: u64 = 500;

/// Share of the window a partition must spend backed off on a full queue before
/// `fetch-queue-backoff` is reported.
pub const QUEUE_BACKOFF_FRACTION_THRESHOLD: f64 = 0.05;
