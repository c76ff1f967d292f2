//! `java-receive-buffer`: Java's fixed receive buffer and one core per consumer.

use super::{direct, indirect, Finding, Reproduce, Side, Source, Strength};

pub const FINDING: Finding = Finding {
    id: "java-receive-buffer",
    title: "Java's fixed receive buffer and one core per consumer",
    side: Side::Java,
    post: "receive.buffer.bytes 64 KB: ~56 KB reads, poll thread 0.95–0.98 cores; -1: 1229k → 1427k msg/s",
    claim: "receive.buffer.bytes (64 KB) gives ~56 KB reads, 22,500/s at 1.25 GB/s, on a \
            poll thread at 0.95–0.98 cores. receive.buffer.bytes=-1: 1 KB consumer \
            1229k → 1427k msg/s (+16 to 17%); past that one KafkaConsumer stays at ~1.4 to \
            1.6 GB/s.",
    cause: "the thread that calls poll() also reads the socket, in reads capped by a fixed \
            64 KB receive buffer, and does the per-byte work on one core",
    fix: "receive.buffer.bytes=-1; past that, more consumers",
    reproduce: Reproduce {
        probe: "probe-java-socket-buffers",
        exists: true,
        command: "probe-java-socket-buffers --brokers 127.0.0.1:9092 (the consumer \
                  pairs)",
    },
    expected_shape: "socket reads at or under receive.buffer.bytes on a thread near one \
                     core",
    rule: "median read ≤ receive.buffer.bytes and the reading thread ≥ 0.9 cores",
    rule_fn: "rules::java_receive_buffer",
    sources: &[
        Source {
            id: "fixed-socket-buffer",
            source: "analyze-jfr",
            op: Some("read"),
            strength: Strength::Direct,
        },
        direct("single-core-consumer", "analyze-jfr"),
        indirect("java-consumer-thread-saturated", "analyze-thread-cpu"),
    ],
};
