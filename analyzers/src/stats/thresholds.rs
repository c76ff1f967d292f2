//! Every threshold the diagnoses use, named, in one place, with why it has its value.
//! The report prints them (`thresholds` in `--json`) so a verdict can be checked by hand.

use serde::Serialize;

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Thresholds {
    /// A per-interval rule holds for the run when it held in at least this share of the
    /// intervals it applied to (an episode rule such as a broker down needs one).
    pub min_share_of_intervals: f64,

    // --- per-request ceiling (the post's Gap 1) -----------------------------------------
    /// ProduceRequests per second from which the broker's fixed cost per request binds (the
    /// post: ~15,400/s of 15.6 KB at ~65 µs each; the mock serves more, a slow broker less).
    pub ceiling_min_requests_per_s: f64,
    /// Bytes per ProduceRequest below which a request is small (Java packs a broker's
    /// partitions into requests of up to max.request.size; 64 KiB is 4 of the post's).
    pub small_request_bytes: f64,
    /// Batches (topic `batchsize.cnt`) per ProduceRequest at least this: each request carries
    /// one partition's batch (librdkafka 2.12 never puts two in one).
    pub one_batch_per_request_min: f64,
    /// Messages wait to be sent: int_latency p50 at least this (ms)…
    pub ceiling_wait_ms: f64,
    /// …and at least this many times linger.ms (waiting for linger is not waiting for the
    /// broker).
    pub ceiling_wait_linger_factor: f64,
    /// …or the producer queue at least this full (of queue.buffering.max.messages/kbytes).
    pub ceiling_queue_share: f64,
    /// A batch p50 at least this share of batch.size is full (closed by size).
    pub full_batch_share: f64,

    // --- in-flight queueing ----------------------------------------------------------------
    /// Requests waiting for a response on one connection ("well above" Java's 5).
    pub inflight_waiting_min: f64,
    /// rtt p50 at least this many times the interval's fastest round trip: requests queue
    /// behind each other at the broker instead of being served on arrival.
    pub inflight_rtt_over_min: f64,
    /// …and at least this long (ms), so a sub-millisecond jitter is not queueing.
    pub inflight_rtt_p50_ms: f64,
    /// …of small requests: at most this many messages per request waiting (waitresp_msg_cnt
    /// over waitresp_cnt; the post: "a message or two"). Full batches queueing are the
    /// per-request ceiling's signature, not the in-flight window's.
    pub inflight_max_messages_per_request: f64,
    /// …or, where the message counts are absent, at most this many bytes per request.
    pub inflight_max_request_bytes: f64,

    // --- producer backlog ------------------------------------------------------------------
    /// The producer queue this full (msg_cnt/msg_max or msg_size/msg_size_max): QueueFull is
    /// next.
    pub backlog_queue_share: f64,
    /// int_latency p50 at least this (ms, and 2 × linger.ms) counts as high when it rises
    /// while the queue fills past half of backlog_queue_share.
    pub backlog_int_latency_ms: f64,

    // --- linger-bound latency --------------------------------------------------------------
    /// int_latency p50 within this band around linger.ms (low, high factors).
    pub linger_band_low: f64,
    pub linger_band_high: f64,
    /// Batches below this share of batch.size and of batch.num.messages: closed by linger,
    /// not by size.
    pub linger_batch_fill_max: f64,
    /// The producer queue at most this full (no backlog behind the linger).
    pub linger_queue_share_max: f64,

    // --- broker throttling, timeouts -----------------------------------------------------
    /// A throttle window max at least this (ms).
    pub throttle_min_ms: f64,
    /// A round trip this long (ms) is "in seconds": the broker or the network stalls.
    pub slow_rtt_ms: f64,

    // --- consumer ----------------------------------------------------------------------------
    /// A partition's fetch queue at least this share of queued.min.messages (or of
    /// queued.max.messages.kbytes) is full: its fetcher backs off fetch.queue.backoff.ms.
    pub fetchq_full_share: f64,
    /// A nap: a starved interval (fetch queues empty, messages waiting on the broker) that
    /// received less than this share of the mean receive rate.
    pub burst_idle_share: f64,
    /// Fetch queues are empty: all partitions together at most this share of
    /// queued.min.messages.
    pub fetchq_empty_share: f64,
    /// Lag grows: by at least this many messages over the run…
    pub lag_growth_min_messages: f64,
    /// …and at least this share of its first value.
    pub lag_growth_min_share: f64,
    /// Rebalances within the capture (beyond the first assignment) to report.
    pub rebalances_min: f64,

    // --- brokers -----------------------------------------------------------------------------
    /// Disconnects (or separate outages: UP to not UP) of one broker within the capture
    /// that make it flapping.
    pub flapping_disconnects_min: f64,
}

impl Default for Thresholds {
    fn default() -> Self {
        Thresholds {
            min_share_of_intervals: 0.5,
            ceiling_min_requests_per_s: 1000.0,
            small_request_bytes: 65536.0,
            one_batch_per_request_min: 0.8,
            ceiling_wait_ms: 10.0,
            ceiling_wait_linger_factor: 2.0,
            ceiling_queue_share: 0.5,
            full_batch_share: 0.9,
            inflight_waiting_min: 10.0,
            inflight_rtt_over_min: 4.0,
            inflight_rtt_p50_ms: 2.0,
            inflight_max_messages_per_request: 4.0,
            inflight_max_request_bytes: 4096.0,
            backlog_queue_share: 0.8,
            backlog_int_latency_ms: 100.0,
            linger_band_low: 0.5,
            linger_band_high: 1.5,
            linger_batch_fill_max: 0.25,
            linger_queue_share_max: 0.1,
            throttle_min_ms: 1.0,
            slow_rtt_ms: 1000.0,
            fetchq_full_share: 0.9,
            burst_idle_share: 0.1,
            fetchq_empty_share: 0.01,
            lag_growth_min_messages: 1000.0,
            lag_growth_min_share: 0.1,
            rebalances_min: 2.0,
            flapping_disconnects_min: 3.0,
        }
    }
}
