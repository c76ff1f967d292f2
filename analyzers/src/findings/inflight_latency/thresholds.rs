//! The windows and thresholds of the inflight-latency rule.

/// librdkafka's default max.in.flight.requests.per.connection.
pub const DEFAULT_WINDOW: u64 = 1_000_000;
/// The window the post's fix sets.
pub const SMALL_WINDOW: u64 = 5;
/// The p99 gap the default window must show (the post: 26.4 / 1.28 ms = 20.6x).
pub const MIN_P99_GAP: f64 = 3.0;
/// Requests awaiting a response (mean of the statistics emits) that only a window wider
/// than 5 allows: twice the small window.
pub const MIN_WAITING_REQUESTS: f64 = 10.0;
/// More ProduceRequests per second for the same messages: smaller requests.
pub const MIN_MORE_REQUESTS: f64 = 1.2;
/// A run sustained its rate when it handed librdkafka at least this share of the target.
pub const SUSTAINED_SHARE: f64 = 0.97;
/// The post's rate; it says the queue never builds at 1k and 10k msg/s.
pub const POST_RATE: u64 = 50_000;
