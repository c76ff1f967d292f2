//! `java-send-buffer`: Java's fixed send buffer and the tail copied on every write.

use super::{indirect, Finding, Reproduce, Side, Source, Strength};

pub const FINDING: Finding = Finding {
    id: "java-send-buffer",
    title: "Java's fixed send buffer and the tail copied on every write",
    side: Side::Java,
    post: "send.buffer.bytes 128 KB: ~298 KB writes, 22 per 6.29 MB request; -1: ~692 KB, 1 MB batches 630k → 875k msg/s",
    claim: "send.buffer.bytes (128 KB) caps each write at ~298 KB; a 6.29 MB request \
            needs 22 writes and copies 69.6 MB (11x) into temporary direct buffers. \
            send.buffer.bytes=-1: ~692 KB writes, 1 MB batches 630k → 875k msg/s, the \
            128 KB peak 1.12M.",
    cause: "the JDK copies a heap buffer's whole unsent rest into a temporary direct \
            buffer on every write, and a fixed send buffer takes only ~298 KB per write",
    fix: "send.buffer.bytes=-1 (kernel autotuning), or keep requests small \
          (max.request.size=1100000); keep batch.size ≤ 256 KB",
    reproduce: Reproduce {
        probe: "probe-java-socket-buffers",
        exists: true,
        command: "probe-java-socket-buffers --brokers 127.0.0.1:9092 (the producer \
                  pairs)",
    },
    expected_shape: "socket writes clustered at one size a few times send.buffer.bytes; \
                     copy amplification grows with the request",
    rule: "writes per request ≥ 4 and the median write between 1x and 3x \
           send.buffer.bytes (tail copying then costs about writes/2 times the request)",
    rule_fn: "rules::java_send_buffer",
    sources: &[
        Source {
            id: "fixed-socket-buffer",
            source: "analyze-jfr",
            op: Some("write"),
            strength: Strength::Direct,
        },
        indirect("java-producer-network-saturated", "analyze-thread-cpu"),
    ],
};
