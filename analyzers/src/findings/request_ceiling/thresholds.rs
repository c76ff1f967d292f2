//! The thresholds of the request-ceiling rule.

/// More partitions at the smallest batch.size run within this band of the fewest's rate.
pub const MIN_PARTITION_GAIN: f64 = 0.8;
pub const MAX_PARTITION_GAIN: f64 = 1.25;
/// Bytes per ProduceRequest over batch.size: a full batch plus the request's framing (the
/// post: 15,621 B at 16,384, 0.95).
pub const MIN_REQUEST_FILL: f64 = 0.8;
pub const MAX_REQUEST_FILL: f64 = 1.1;
/// Partition batches per ProduceRequest: one, give or take the requests built but not yet
/// sent at the window's edges (a client that packs partitions, as Java does, shows ~N).
pub const MIN_BATCHES_PER_REQUEST: f64 = 0.9;
pub const MAX_BATCHES_PER_REQUEST: f64 = 1.1;
/// The best batch.size's rate over the smallest's, ranges apart (the post: 995k / 233k, 4.3x).
pub const MIN_BATCH_GAIN: f64 = 1.5;
/// A client thread at or above this many cores may be the limit itself.
pub use super::super::saturation::SATURATED_CORES;
/// The next batch.size step adding less than this factor is where throughput stops rising.
pub const KNEE_STEP: f64 = 1.10;
/// Requests awaiting a response on a connection (statistics `waitresp_cnt`, mean of the
/// emits) that show it kept busy: at least one always at the broker, the next one waiting
/// (the post: 15.4k requests/s × 0.39 ms rtt ≈ 6).
pub const MIN_WAITING_REQUESTS: f64 = 1.0;
