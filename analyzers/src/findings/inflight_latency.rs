//! `inflight-latency`: In-flight window and latency at linger.ms=0.

use super::{direct, Finding, Reproduce, Side};

pub const FINDING: Finding = Finding {
    id: "inflight-latency",
    title: "In-flight window and latency at linger.ms=0",
    side: Side::Librdkafka,
    post: "linger.ms 0, 50k msg/s: default window p50/p99 14.1/26.4 ms against 0.47/1.28 ms with 5",
    claim: "At linger.ms=0 and 50k msg/s, librdkafka's default window (1,000,000 in \
            flight): send-to-ack p50/p99 14.1/26.4 ms; max.in.flight=5: 0.47/1.28 ms, \
            throughput unchanged. The rerun: 17.6/32.9 ms against 0.66/1.93 ms (Java \
            0.64/0.93 ms).",
    cause: "with linger.ms=0 and an unlimited window librdkafka sends a request as soon \
            as a message or two is ready; the broker handles them one at a time with a \
            fixed cost each, so tiny requests queue",
    fix: "max.in.flight.requests.per.connection=5 (it does not conflict with a large \
          batch.size)",
    reproduce: Reproduce {
        probe: "probe-inflight-latency",
        exists: true,
        command: "probe-inflight-latency --brokers 127.0.0.1:9092",
    },
    expected_shape: "at a sustained rate, p99 send-to-ack several times higher with the \
                     default window than with 5, with more and smaller requests",
    rule: "p99 (default window) / p99 (max.in.flight=5) ≥ 3 at a sustained rate",
    rule_fn: "rules::inflight_latency",
    sources: &[
        direct("inflight-latency", "probe-inflight-latency"),
        direct("inflight-queueing", "analyze-protocol-log"),
    ],
};
