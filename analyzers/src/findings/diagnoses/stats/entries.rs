//! analyze-stats' diagnoses as the catalogue lists them: id, level, scope, the rule in words
//! and the thresholds it judges by (their defaults: `-X`-free, `Thresholds::default()`).

use super::thresholds::*;
use crate::findings::diagnoses::rule::{DiagnosisRule, Level, Scope, Threshold};

/// The analyzer these diagnoses belong to.
pub const ANALYZER: &str = "analyze-stats";

const fn t(name: &'static str, value: f64, unit: &'static str, source: &'static str) -> Threshold {
    Threshold {
        name,
        value,
        unit,
        source,
    }
}

const SHARE: Threshold = t(
    "MIN_SHARE_OF_INTERVALS",
    MIN_SHARE_OF_INTERVALS,
    "share of the intervals",
    "the post's runs hold their state throughout; half keeps a passing spike out",
);

pub const PER_REQUEST_CEILING: DiagnosisRule = DiagnosisRule {
    id: "per-request-ceiling",
    analyzer: ANALYZER,
    level: Level::Problem,
    scope: Scope::KafkaClient,
    rule: "per connection: ≥ 1000 ProduceRequests/s of ≤ 64 KiB, ≥ 0.8 batches per request, \
           messages waiting (int_latency p50 ≥ max(10 ms, 2 × linger.ms) or the queue ≥ 50% \
           full), in ≥ half the intervals",
    thresholds: &[
        t(
            "CEILING_MIN_REQUESTS_PER_S",
            CEILING_MIN_REQUESTS_PER_S,
            "requests/s",
            "the post: ~15,400/s at ~65 µs each",
        ),
        t(
            "SMALL_REQUEST_BYTES",
            SMALL_REQUEST_BYTES,
            "bytes",
            "4 × the post's 15.6 KB requests",
        ),
        t(
            "ONE_BATCH_PER_REQUEST_MIN",
            ONE_BATCH_PER_REQUEST_MIN,
            "batches per request",
            "librdkafka 2.12: one batch a request",
        ),
        t(
            "CEILING_WAIT_MS",
            CEILING_WAIT_MS,
            "ms",
            "a margin above a linger-free send",
        ),
        t(
            "CEILING_WAIT_LINGER_FACTOR",
            CEILING_WAIT_LINGER_FACTOR,
            "× linger.ms",
            "waiting for linger is not waiting for the broker",
        ),
        t(
            "CEILING_QUEUE_SHARE",
            CEILING_QUEUE_SHARE,
            "share of the queue",
            "a margin below backlog's 80%",
        ),
        t(
            "FULL_BATCH_SHARE",
            FULL_BATCH_SHARE,
            "share of batch.size",
            "closed by size, a margin for the last message",
        ),
        SHARE,
    ],
};

pub const INFLIGHT_QUEUEING: DiagnosisRule = DiagnosisRule {
    id: "inflight-queueing",
    analyzer: ANALYZER,
    level: Level::Problem,
    scope: Scope::KafkaClient,
    rule: "per connection: ≥ 10 requests waiting for a response, rtt p50 ≥ 2 ms and ≥ 4 × the \
           interval's fastest rtt, small requests (≤ 4 messages or ≤ 4 KB each), in ≥ half the \
           intervals",
    thresholds: &[
        t(
            "INFLIGHT_WAITING_MIN",
            INFLIGHT_WAITING_MIN,
            "requests",
            "well above Java's max.in.flight 5",
        ),
        t(
            "INFLIGHT_RTT_OVER_MIN",
            INFLIGHT_RTT_OVER_MIN,
            "× the fastest rtt",
            "the post: 14.1 ms against 0.47 ms",
        ),
        t(
            "INFLIGHT_RTT_P50_MS",
            INFLIGHT_RTT_P50_MS,
            "ms",
            "a healthy local broker answers faster",
        ),
        t(
            "INFLIGHT_MAX_MESSAGES_PER_REQUEST",
            INFLIGHT_MAX_MESSAGES_PER_REQUEST,
            "messages per request",
            "the post: a message or two",
        ),
        t(
            "INFLIGHT_MAX_REQUEST_BYTES",
            INFLIGHT_MAX_REQUEST_BYTES,
            "bytes",
            "a few 100 B messages with framing",
        ),
        SHARE,
    ],
};

pub const PRODUCER_BACKLOG: DiagnosisRule = DiagnosisRule {
    id: "producer-backlog",
    analyzer: ANALYZER,
    level: Level::Problem,
    scope: Scope::KafkaClient,
    rule: "the queue ≥ 80% of queue.buffering.max.messages/kbytes in an interval, or int_latency \
           p50 ≥ max(100 ms, 2 × linger.ms) and rising while the queue fills past 40%",
    thresholds: &[
        t(
            "BACKLOG_QUEUE_SHARE",
            BACKLOG_QUEUE_SHARE,
            "share of the queue",
            "QueueFull is next",
        ),
        t(
            "BACKLOG_INT_LATENCY_MS",
            BACKLOG_INT_LATENCY_MS,
            "ms",
            "far above the post's linger-bound p50s",
        ),
    ],
};

pub const LINGER_BOUND_LATENCY: DiagnosisRule = DiagnosisRule {
    id: "linger-bound-latency",
    analyzer: ANALYZER,
    level: Level::Note,
    scope: Scope::KafkaClient,
    rule: "int_latency p50 within 0.5–1.5 × linger.ms, batches ≤ 25% of batch.size and \
           batch.num.messages, queue ≤ 10%, in ≥ half the intervals",
    thresholds: &[
        t(
            "LINGER_BAND_LOW",
            LINGER_BAND_LOW,
            "× linger.ms",
            "the post: p50 5.1 ms at linger.ms=5",
        ),
        t(
            "LINGER_BAND_HIGH",
            LINGER_BAND_HIGH,
            "× linger.ms",
            "the same band",
        ),
        t(
            "LINGER_BATCH_FILL_MAX",
            LINGER_BATCH_FILL_MAX,
            "share of batch.size",
            "closed by linger, not size",
        ),
        t(
            "LINGER_QUEUE_SHARE_MAX",
            LINGER_QUEUE_SHARE_MAX,
            "share of the queue",
            "no backlog behind the linger",
        ),
        SHARE,
    ],
};

pub const BROKER_THROTTLE: DiagnosisRule = DiagnosisRule {
    id: "broker-throttle",
    analyzer: ANALYZER,
    level: Level::Problem,
    scope: Scope::KafkaClient,
    rule: "a throttle window max ≥ 1 ms on a connection",
    thresholds: &[t(
        "THROTTLE_MIN_MS",
        THROTTLE_MIN_MS,
        "ms",
        "brokers report whole milliseconds",
    )],
};

pub const REQUEST_TIMEOUTS: DiagnosisRule = DiagnosisRule {
    id: "request-timeouts",
    analyzer: ANALYZER,
    level: Level::Problem,
    scope: Scope::KafkaClient,
    rule: "timeouts or retries, or an rtt max ≥ 1 s on a connection that was not throttled",
    thresholds: &[t(
        "SLOW_RTT_MS",
        SLOW_RTT_MS,
        "ms",
        "far above the post's 26 ms p99",
    )],
};

pub const BROKER_SILENT: DiagnosisRule = DiagnosisRule {
    id: "broker-silent",
    analyzer: ANALYZER,
    level: Level::Problem,
    scope: Scope::KafkaClient,
    rule: "per learned connection, not throttled: requests awaiting a response and not one \
           response for ≥ 2 s of intervals, the connection UP",
    thresholds: &[t(
        "SILENT_MIN_S",
        SILENT_MIN_S,
        "s",
        "one slow interval is a long round trip",
    )],
};

pub const BROKER_DOWN: DiagnosisRule = DiagnosisRule {
    id: "broker-down",
    analyzer: ANALYZER,
    level: Level::Problem,
    scope: Scope::KafkaClient,
    rule: "a broker with partitions or queued requests not UP, or a disconnect, fewer than 3 \
           times",
    thresholds: &[],
};

pub const BROKER_FLAPPING: DiagnosisRule = DiagnosisRule {
    id: "broker-flapping",
    analyzer: ANALYZER,
    level: Level::Problem,
    scope: Scope::KafkaClient,
    rule: "a broker the client needs lost ≥ 3 times (disconnects or separate outages)",
    thresholds: &[t(
        "FLAPPING_DISCONNECTS_MIN",
        FLAPPING_DISCONNECTS_MIN,
        "disconnects",
        "three outages is a pattern",
    )],
};

pub const FETCH_QUEUE_BACKOFF: DiagnosisRule = DiagnosisRule {
    id: "fetch-queue-backoff",
    analyzer: ANALYZER,
    level: Level::Problem,
    scope: Scope::KafkaClient,
    rule: "a partition's fetch queue ≥ 90% of queued.min.messages (or kbytes) in some interval, \
           and naps: intervals with empty queues and messages waiting that received < 10% of \
           the mean rate; or, in any interval, the fetcher busy (fetches × rtt p50) ≤ 5% of \
           it while ≥ 1000 messages wait on the broker and every fetch queue is below 90% of \
           queued.min.messages, outside a throttle's time",
    thresholds: &[
        t(
            "FETCHER_BUSY_MAX",
            FETCHER_BUSY_MAX,
            "share of the interval",
            "the probe's 1000 ms capture fetched 2% of an interval, 10 ms 13-48%",
        ),
        t(
            "NAP_MIN_UNFETCHED",
            NAP_MIN_UNFETCHED,
            "messages",
            "a caught-up fetcher has nothing to fetch",
        ),
        t(
            "FETCHQ_FULL_SHARE",
            FETCHQ_FULL_SHARE,
            "share of queued.min.messages",
            "librdkafka backs off at the threshold",
        ),
        t(
            "FETCHQ_EMPTY_SHARE",
            FETCHQ_EMPTY_SHARE,
            "share of queued.min.messages",
            "an empty queue",
        ),
        t(
            "BURST_IDLE_SHARE",
            BURST_IDLE_SHARE,
            "share of the mean receive rate",
            "received almost nothing",
        ),
    ],
};

pub const FETCH_QUEUE_EMPTY_LAG_GROWING: DiagnosisRule = DiagnosisRule {
    id: "fetch-queue-empty-lag-growing",
    analyzer: ANALYZER,
    level: Level::Problem,
    scope: Scope::KafkaClient,
    rule: "empty queues with messages waiting in ≥ half the intervals, and the lag grows",
    thresholds: &[
        t(
            "FETCHQ_EMPTY_SHARE",
            FETCHQ_EMPTY_SHARE,
            "share of queued.min.messages",
            "an empty queue",
        ),
        t(
            "LAG_GROWTH_MIN_MESSAGES",
            LAG_GROWTH_MIN_MESSAGES,
            "messages",
            "less is sampling noise",
        ),
        t(
            "LAG_GROWTH_MIN_SHARE",
            LAG_GROWTH_MIN_SHARE,
            "share of the first lag",
            "a margin",
        ),
        SHARE,
    ],
};

pub const FETCH_QUEUE_FULL_LAG_GROWING: DiagnosisRule = DiagnosisRule {
    id: "fetch-queue-full-lag-growing",
    analyzer: ANALYZER,
    level: Level::Problem,
    scope: Scope::KafkaClient,
    rule: "a full queue in ≥ half the intervals, no naps, and the lag grows",
    thresholds: &[
        t(
            "FETCHQ_FULL_SHARE",
            FETCHQ_FULL_SHARE,
            "share of queued.min.messages",
            "librdkafka backs off at the threshold",
        ),
        t(
            "LAG_GROWTH_MIN_MESSAGES",
            LAG_GROWTH_MIN_MESSAGES,
            "messages",
            "less is sampling noise",
        ),
        t(
            "LAG_GROWTH_MIN_SHARE",
            LAG_GROWTH_MIN_SHARE,
            "share of the first lag",
            "a margin",
        ),
        SHARE,
    ],
};

pub const CONSUMER_LAG_GROWING: DiagnosisRule = DiagnosisRule {
    id: "consumer-lag-growing",
    analyzer: ANALYZER,
    level: Level::Problem,
    scope: Scope::KafkaClient,
    rule: "a partition's lag grows by ≥ 1000 messages and ≥ 10%, trend > 0",
    thresholds: &[
        t(
            "LAG_GROWTH_MIN_MESSAGES",
            LAG_GROWTH_MIN_MESSAGES,
            "messages",
            "less is sampling noise",
        ),
        t(
            "LAG_GROWTH_MIN_SHARE",
            LAG_GROWTH_MIN_SHARE,
            "share of the first lag",
            "a margin",
        ),
    ],
};

pub const APP_NOT_POLLING: DiagnosisRule = DiagnosisRule {
    id: "app-not-polling",
    analyzer: ANALYZER,
    level: Level::Problem,
    scope: Scope::KafkaClient,
    rule: "≥ 1000 fetched messages wait for the application (next_offset - app_offset) in the \
           fetch queue and it takes none of them (app_offset still) for ≥ 1 s of intervals \
           with that many waiting at both ends; or, in a capture of one emit, it has taken \
           ≤ 25% of what was fetched (rxmsgs) with ≥ 1000 waiting in the queue; or the \
           group's rebalance_reason is librdkafka's 'max.poll.interval.ms exceeded'",
    thresholds: &[
        t(
            "APP_WAITING_MIN",
            APP_WAITING_MIN,
            "messages",
            "fewer are one fetch response being worked through",
        ),
        t(
            "APP_STALL_MIN_S",
            APP_STALL_MIN_S,
            "s",
            "one short moment is a pause",
        ),
        t(
            "APP_TAKEN_SHARE_MAX",
            APP_TAKEN_SHARE_MAX,
            "share of the messages fetched",
            "a polling application took 55% at its fullest queue, the issue's paste 18%",
        ),
    ],
};

pub const CONSUMER_REBALANCES: DiagnosisRule = DiagnosisRule {
    id: "consumer-rebalances",
    analyzer: ANALYZER,
    level: Level::Problem,
    scope: Scope::KafkaClient,
    rule: "≥ 2 rebalances within the capture, beyond the consumer's own join and leave",
    thresholds: &[t(
        "REBALANCES_MIN",
        REBALANCES_MIN,
        "rebalances",
        "one is joining",
    )],
};

pub const FATAL_ERROR: DiagnosisRule = DiagnosisRule {
    id: "fatal-error",
    analyzer: ANALYZER,
    level: Level::Problem,
    scope: Scope::KafkaClient,
    rule: "the emit carries `fatal`",
    thresholds: &[],
};

pub const SHORT_EPISODE: DiagnosisRule = DiagnosisRule {
    id: "short-episode",
    analyzer: ANALYZER,
    level: Level::Note,
    scope: Scope::KafkaClient,
    rule: "per-request-ceiling or inflight-queueing held on a connection in ≥ 1 interval but \
           in fewer than half: the intervals are named with their figures, no finding is filed",
    thresholds: &[SHARE],
};

pub const RULES: &[DiagnosisRule] = &[
    PER_REQUEST_CEILING,
    INFLIGHT_QUEUEING,
    SHORT_EPISODE,
    PRODUCER_BACKLOG,
    LINGER_BOUND_LATENCY,
    BROKER_THROTTLE,
    REQUEST_TIMEOUTS,
    BROKER_SILENT,
    BROKER_DOWN,
    BROKER_FLAPPING,
    FETCH_QUEUE_BACKOFF,
    FETCH_QUEUE_EMPTY_LAG_GROWING,
    FETCH_QUEUE_FULL_LAG_GROWING,
    CONSUMER_LAG_GROWING,
    APP_NOT_POLLING,
    CONSUMER_REBALANCES,
    FATAL_ERROR,
];
