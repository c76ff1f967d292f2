//! `java-gc-collapse`: Java producers' GC collapse (K=16 in one JVM).

use super::{direct, indirect, Finding, Reproduce, Side};

pub const FINDING: Finding = Finding {
    id: "java-gc-collapse",
    title: "Java producers' GC collapse (K=16 in one JVM)",
    side: Side::Java,
    post: "K=16 producers: GC 37% of the window, heap 1846 of 2048 MB after young GC; buffer.memory 2 MB: 10.1M msg/s",
    claim: "At K=16 producers of 100 B, the heap stays almost full after young GCs (1913 MB \
            → 1846 MB of 2048 MB), evacuations fail, a 105–117 ms full GC runs about once a \
            second, GC takes 37% of the window (1% at K=8); p99 514 ms. buffer.memory 2 MB \
            per instance: 10.1M msg/s at 54 ms p99.",
    cause: "records waiting in the accumulators (~190 B of objects per 100 B record) \
            survive young collections and fill the old generation once the network \
            threads fall behind",
    fix: "bound the backlog: buffer.memory ~2 MB per producer; fewer busy threads than \
          CPUs; a bigger heap helps less",
    reproduce: Reproduce {
        probe: "probe-java-producers",
        exists: true,
        command: "probe-java-producers --brokers 127.0.0.1:9092 --producers 16",
    },
    expected_shape: "GC share of a window jumps and heap after young GC stays ≥ 80% of the \
                     maximum at the high instance count",
    rule: "a window with ≥ 20% GC time while the heap after young GC is ≥ 80% of the \
           maximum",
    rule_fn: "rules::java_gc_collapse",
    sources: &[
        direct("gc-collapse", "analyze-gc-log"),
        direct("concurrent-gc-behind", "analyze-gc-log"),
        indirect("evacuation-failures", "analyze-gc-log"),
        indirect("gc-pressure", "analyze-jfr"),
        indirect("gc-threads-dominate", "analyze-thread-cpu"),
    ],
};
