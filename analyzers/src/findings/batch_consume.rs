//! `batch-consume`: poll() one message per call, then the broker thread's per-message limit.

use super::{indirect, Finding, Reproduce, Side};

pub const FINDING: Finding = Finding {
    id: "batch-consume",
    title: "poll() one message per call, then the broker thread's per-message limit",
    side: Side::Librdkafka,
    post: "poll() limits at 1.48M msg/s; the batch API reads 2.02M (1.37x)",
    claim: "After the backoff fix the polling thread was saturated: rust-rdkafka's poll() \
            returns one message per call. rd_kafka_consume_batch_queue at 500 per call: \
            1.48M → 2.02M msg/s (5.2x where it started), then librdkafka's broker thread \
            saturates (0.94 cores, ~2.1M msg/s): one queue entry per fetched message.",
    cause: "one message per poll() call costs the application thread per message; with \
            the batch API the limit moves to librdkafka's broker thread, which builds an \
            internal entry for every fetched message",
    fix: "consume with the batch API (rd_kafka_consume_batch_queue, ~500 per call); past \
          the broker thread's limit, more consumer instances",
    reproduce: Reproduce {
        probe: "probe-batch-consume",
        exists: true,
        command: "probe-batch-consume --brokers 127.0.0.1:9092",
    },
    expected_shape: "batch API faster than poll(); the application thread saturated \
                     under poll(), rdk:broker near one core under the batch API",
    rule: "batch/poll throughput ≥ 1.2 and the broker thread ≥ 0.9 cores under the batch \
           API",
    rule_fn: "rules::batch_consume",
    sources: &[
        indirect("app-thread-saturated", "analyze-thread-cpu"),
        indirect("rdk-broker-saturated", "analyze-thread-cpu"),
    ],
};
