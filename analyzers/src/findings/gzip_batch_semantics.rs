//! `gzip-batch-semantics`: gzip: the same batch.size is not the same batch.

use super::{direct, indirect, Finding, Reproduce, Side};

pub const FINDING: Finding = Finding {
    id: "gzip-batch-semantics",
    title: "gzip: the same batch.size is not the same batch",
    side: Side::Both,
    post: "librdkafka's batch.size caps gzip input (16 KB: 46.4k msg/s, ratio 4.70; 88 KB: 27.5k, 5.71)",
    claim: "At batch.size 16 KB, Java 33.9k msg/s of gzip'd 1 KB text (ratio 5.39) \
            against librdkafka 46.4k (4.70). Java closes a batch on its estimated \
            compressed size (~43 KB of input), librdkafka on uncompressed bytes (16 KB). \
            librdkafka at 88 KB: 27.5k, 5.71; Java at 3000 B: 48.2k, 4.15.",
    cause: "Java's batch.size limits the estimated compressed size, librdkafka's the \
            input; zlib is slower per byte on longer input and compresses it better",
    fix: "compare at matched input per batch, not matched batch.size; choose the trade of \
          speed for ratio on purpose (or gzip level 1)",
    reproduce: Reproduce {
        probe: "probe-gzip-batch",
        exists: true,
        command: "probe-gzip-batch --brokers 127.0.0.1:9092",
    },
    expected_shape: "input per batch follows batch.size; bigger batches compress better \
                     and run slower",
    rule: "input per batch at the largest batch.size ≥ 1.5x the smallest, ratio ≥ 1.02x, \
           throughput ≤ 0.95x",
    rule_fn: "rules::gzip_batch",
    sources: &[
        direct("gzip-batch-semantics", "probe-gzip-batch"),
        indirect("deflate-dominates", "analyze-jfr"),
    ],
};
