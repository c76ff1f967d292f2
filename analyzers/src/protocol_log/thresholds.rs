//! The thresholds the protocol diagnoses judge by: librdkafka's default `batch.size`, how
//! many ProduceRequests a shape needs, and what counts as a small in-flight request.

/// librdkafka's default `batch.size` (1,000,000 bytes).
pub const LIBRDKAFKA_DEFAULT_BATCH_SIZE: u64 = 1_000_000;
/// Fewest ProduceRequests on a connection before its shape is diagnosed.
pub const MIN_REQUESTS_FOR_DIAGNOSIS: u64 = 100;
/// In-flight queueing is a window of *small* requests queueing behind each other: at most
/// this many messages per ProduceRequest (the post: "a message or two").
pub const INFLIGHT_MAX_MESSAGES_PER_REQUEST: u64 = 4;
/// Without debug=msg lines (messages per request unknown), requests count as small at
/// most this size and when they are not full batches (p50 below 0.8 × p99).
pub const INFLIGHT_MAX_REQUEST_BYTES: u64 = 4096;
