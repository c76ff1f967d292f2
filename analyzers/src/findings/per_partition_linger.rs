//! `per-partition-linger`: librdkafka lingers per partition, Java per broker.

use super::{Finding, Reproduce, Side};

pub const FINDING: Finding = Finding {
    id: "per-partition-linger",
    title: "librdkafka lingers per partition, Java per broker",
    side: Side::Librdkafka,
    post: "linger.ms 5 at 1k msg/s over 6 partitions: librdkafka p50 5.1 ms, Java 2.8 ms",
    claim: "At linger.ms=5 and 1k msg/s over 6 partitions, Java's producer p50 is 2.8 ms \
            and librdkafka's 5.1 ms: a partition sees one message every 6 ms, so nearly \
            every message waits the full linger; at 10k/s both meet at ~3 ms.",
    cause: "librdkafka counts linger for each partition; Java's linger only decides when \
            a broker connection is ready, then drains every partition's batch",
    fix: "nothing to fix: expect p50 ≈ linger.ms on librdkafka when each partition sees \
          less than one message per linger; lower linger.ms if that matters",
    reproduce: Reproduce {
        probe: "probe-inflight-latency",
        exists: true,
        command: "probe-inflight-latency --brokers 127.0.0.1:9092 --rates 1000 \
                  --linger-ms 5",
    },
    expected_shape: "at a rate where partitions × 1000 / rate ≥ linger.ms, send-to-ack p50 \
                     ≈ linger.ms",
    rule: "when a partition's gap between messages ≥ linger.ms, p50 ≥ 0.8 × linger.ms",
    rule_fn: "rules::per_partition_linger",
    sources: &[],
};
