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
            min_share_of_intervals: MIN_SHARE_OF_INTERVALS,
            ceiling_min_requests_per_s: CEILING_MIN_REQUESTS_PER_S,
            small_request_bytes: SMALL_REQUEST_BYTES,
            one_batch_per_request_min: ONE_BATCH_PER_REQUEST_MIN,
            ceiling_wait_ms: CEILING_WAIT_MS,
            ceiling_wait_linger_factor: CEILING_WAIT_LINGER_FACTOR,
            ceiling_queue_share: CEILING_QUEUE_SHARE,
            full_batch_share: FULL_BATCH_SHARE,
            inflight_waiting_min: INFLIGHT_WAITING_MIN,
            inflight_rtt_over_min: INFLIGHT_RTT_OVER_MIN,
            inflight_rtt_p50_ms: INFLIGHT_RTT_P50_MS,
            inflight_max_messages_per_request: INFLIGHT_MAX_MESSAGES_PER_REQUEST,
            inflight_max_request_bytes: INFLIGHT_MAX_REQUEST_BYTES,
            backlog_queue_share: BACKLOG_QUEUE_SHARE,
            backlog_int_latency_ms: BACKLOG_INT_LATENCY_MS,
            linger_band_low: LINGER_BAND_LOW,
            linger_band_high: LINGER_BAND_HIGH,
            linger_batch_fill_max: LINGER_BATCH_FILL_MAX,
            linger_queue_share_max: LINGER_QUEUE_SHARE_MAX,
            throttle_min_ms: THROTTLE_MIN_MS,
            slow_rtt_ms: SLOW_RTT_MS,
            fetchq_full_share: FETCHQ_FULL_SHARE,
            burst_idle_share: BURST_IDLE_SHARE,
            fetchq_empty_share: FETCHQ_EMPTY_SHARE,
            lag_growth_min_messages: LAG_GROWTH_MIN_MESSAGES,
            lag_growth_min_share: LAG_GROWTH_MIN_SHARE,
            rebalances_min: REBALANCES_MIN,
            flapping_disconnects_min: FLAPPING_DISCONNECTS_MIN,
        }
    }
}

// The defaults (`--json` prints the values used), each with its source; the `Threshold`s of
// `RULES` (entries.rs) quote the same sources.

/// The post's runs hold their state throughout; half the intervals keeps a passing spike from
/// naming a run (a reasoned margin).
pub const MIN_SHARE_OF_INTERVALS: f64 = 0.5;
/// The post: ~15,400 requests/s at ~65 µs each; 1000/s leaves room for a slower broker.
pub const CEILING_MIN_REQUESTS_PER_S: f64 = 1000.0;
/// 4 × the post's 15.6 KB requests (Java packs up to max.request.size).
pub const SMALL_REQUEST_BYTES: f64 = 65536.0;
/// librdkafka 2.12 puts one partition's batch in each request (1.0); 0.8 for rounding.
pub const ONE_BATCH_PER_REQUEST_MIN: f64 = 0.8;
/// A wait of 10 ms is above any linger-free send on a healthy connection (a margin).
pub const CEILING_WAIT_MS: f64 = 10.0;
/// Twice linger.ms: waiting for linger is not waiting for the broker (a margin).
pub const CEILING_WAIT_LINGER_FACTOR: f64 = 2.0;
/// A producer queue half full is backed up (a margin below backlog's 80%).
pub const CEILING_QUEUE_SHARE: f64 = 0.5;
/// A batch p50 at 90% of batch.size was closed by size (a margin for the last message).
pub const FULL_BATCH_SHARE: f64 = 0.9;
/// "Well above" Java's max.in.flight 5: the post's default window held up to 128.
pub const INFLIGHT_WAITING_MIN: f64 = 10.0;
/// The post: rtt p50 14.1 ms against 0.47 ms at max.in.flight=5; 4× is queueing, not jitter.
pub const INFLIGHT_RTT_OVER_MIN: f64 = 4.0;
/// A sub-2 ms round trip is a healthy local broker, whatever its ratio (a margin).
pub const INFLIGHT_RTT_P50_MS: f64 = 2.0;
/// The post: with linger.ms=0 a request leaves with "a message or two"; 4 for a margin.
pub const INFLIGHT_MAX_MESSAGES_PER_REQUEST: f64 = 4.0;
/// A few messages of the post's 100 B with their framing (a margin).
pub const INFLIGHT_MAX_REQUEST_BYTES: f64 = 4096.0;
/// 80% of queue.buffering.max: QueueFull is next (a margin).
pub const BACKLOG_QUEUE_SHARE: f64 = 0.8;
/// 100 ms in the queue is far above a linger-bound wait (the post's p50s were ≤ 15 ms).
pub const BACKLOG_INT_LATENCY_MS: f64 = 100.0;
/// The post's p50 5.1 ms at linger.ms=5: the band around linger.ms, low edge.
pub const LINGER_BAND_LOW: f64 = 0.5;
/// The same band's high edge.
pub const LINGER_BAND_HIGH: f64 = 1.5;
/// A batch at a quarter of its limits was closed by linger, not size (a margin).
pub const LINGER_BATCH_FILL_MAX: f64 = 0.25;
/// A queue at most 10% full has no backlog behind the linger (a margin).
pub const LINGER_QUEUE_SHARE_MAX: f64 = 0.1;
/// Any throttle: brokers report whole milliseconds.
pub const THROTTLE_MIN_MS: f64 = 1.0;
/// A round trip of a second is a stall, not load (a margin far above the post's 26 ms p99).
pub const SLOW_RTT_MS: f64 = 1000.0;
/// librdkafka backs off at queued.min.messages; 90% for the emit's sampling moment.
pub const FETCHQ_FULL_SHARE: f64 = 0.9;
/// An interval below a tenth of the mean rate received almost nothing (a margin).
pub const BURST_IDLE_SHARE: f64 = 0.1;
/// 1% of queued.min.messages is an empty queue (a margin).
pub const FETCHQ_EMPTY_SHARE: f64 = 0.01;
/// Lag growing by fewer than 1000 messages is noise of the sampling (a margin).
pub const LAG_GROWTH_MIN_MESSAGES: f64 = 1000.0;
/// …and by 10% of its first value (a margin).
pub const LAG_GROWTH_MIN_SHARE: f64 = 0.1;
/// One rebalance is joining; two within a capture is the group moving (a margin).
pub const REBALANCES_MIN: f64 = 2.0;
/// Three separate outages is a pattern, not an incident (a margin).
pub const FLAPPING_DISCONNECTS_MIN: f64 = 3.0;
/// A fetcher busy (fetches × their rtt p50) at most this share of an interval naps: the
/// probe's capture at fetch.queue.backoff.ms=1000 fetched 2% of its interval, at 10 ms the
/// fetcher was busy 13 to 48% (fixtures/stats); a fetcher that long-polls an idle topic is
/// busy the whole interval (rtt ≈ fetch.wait.max.ms).
pub const FETCHER_BUSY_MAX: f64 = 0.05;
/// Messages on the broker not yet fetched for a nap to count: a caught-up fetcher has
/// nothing to fetch (a margin above a few in-flight messages).
pub const NAP_MIN_UNFETCHED: f64 = 1000.0;
/// Seconds (summed over its silent intervals) a connection must be silent: one slow
/// interval on a loaded machine is a long round trip, not a stopped broker (a margin).
pub const SILENT_MIN_S: f64 = 2.0;
/// Fetched messages waiting for the application for app-not-polling to judge: fewer are a
/// fetch response being worked through (a margin, as NAP_MIN_UNFETCHED).
pub const APP_WAITING_MIN: f64 = 1000.0;
/// One emit: the application took at most this share of what was fetched. The fetcher stops
/// at the queue's limit, so over a client's life a polling application takes most of what
/// arrives: the slow-app capture (polling, 0.5 ms a message) took 55% at its fullest queue;
/// the paste took 6,143 of 34,784 (18%); a quarter is the margin between.
pub const APP_TAKEN_SHARE_MAX: f64 = 0.25;
/// Seconds (summed over its intervals) the application took nothing with messages waiting:
/// one short moment is a pause, not an application that stopped polling (a margin; the
/// throttled capture's consumer, not polled during the producer's flush, stalled 3.5 s).
pub const APP_STALL_MIN_S: f64 = 1.0;
