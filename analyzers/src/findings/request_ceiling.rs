//! `request-ceiling`: Gap 1: the producer bound by the broker's cost per request.

use super::{direct, indirect, Finding, Reproduce, Side, STATS_SMALL_PRODUCE_REQUESTS};

pub const FINDING: Finding = Finding {
    id: "request-ceiling",
    title: "Gap 1: the producer bound by the broker's cost per request",
    side: Side::Librdkafka,
    post: "~240k × 1 KB msg/s in 15.6 KB requests whatever the partitions; batch.size 16K→1M: 233k→991k msg/s",
    claim: "The Rust producer stayed at about 240k msg/s (1 KB, ~250 MB/s) whatever the \
            partitions (1, 6, 12), linger.ms (0, 5, 50) or acks. Every ProduceRequest was \
            one 15.6 KB partition batch (`Sent ProduceRequest (v10, 15621 bytes …)`, rtt \
            0.39 ms): ~15,400 requests/s, ~65 µs of broker time each. batch.size 16K→1M: \
            Rust 233k→991k msg/s, Java peaks at 1042k at 128 KB.",
    cause: "librdkafka sends one partition's batch per ProduceRequest and the broker \
            handles one connection's requests one at a time, so the broker's fixed cost \
            per request sets the ceiling; Java packs all partitions' batches for a broker \
            into one request.",
    fix: "raise batch.size (librdkafka's own default, 1 MB, avoids it; the post's Rust \
          producer peaks there at ~1.0M msg/s)",
    reproduce: Reproduce {
        probe: "probe-request-ceiling",
        exists: true,
        command: "probe-request-ceiling --brokers 127.0.0.1:9092",
    },
    expected_shape: "at 16 KB, throughput flat across partition counts; requests are \
                     full batches; throughput climbs with batch.size",
    rule: "partitions gain ≤ 1.25x at the smallest batch.size, bytes per request ≥ half \
           of batch.size, and the best batch.size ≥ 1.5x the smallest",
    rule_fn: "rules::request_ceiling",
    sources: &[
        direct("request-ceiling", "probe-request-ceiling"),
        direct("per-request-ceiling", "analyze-protocol-log"),
        indirect(STATS_SMALL_PRODUCE_REQUESTS, "gap-report (statistics)"),
    ],
};
