//! `batch-wrapper-latency`: The batch wrapper that waits for a full batch.

use super::{Finding, Reproduce, Side};

pub const FINDING: Finding = Finding {
    id: "batch-wrapper-latency",
    title: "The batch wrapper that waits for a full batch",
    side: Side::Harness,
    post: "naive wrapper p50/p99 50/99 ms at 1k msg/s; fixed 0.21 ms p99",
    claim: "consume_batch_queue(q, 100 ms, buf, 500) returns at 500 messages or 100 ms: \
            p50/p99 50/99 ms at 1k msg/s, 25/50 ms at 10k msg/s, exactly the arithmetic. \
            Fixed (take what is queued, block only when empty): 0.21/0.23 ms p99, \
            throughput unchanged (2.12M–2.14M msg/s).",
    cause: "a batch call that waits for N messages or the timeout adds up to \
            min(timeout, N / rate) to every message at low rates",
    fix: "take whatever is queued with timeout 0; block only when the queue is empty",
    reproduce: Reproduce {
        probe: "probe-batch-consume",
        exists: true,
        command: "probe-batch-consume --brokers 127.0.0.1:9092 --rate 1000,10000",
    },
    expected_shape: "end-to-end p99 ≈ min(timeout, N/rate), p50 about half, with the \
                     waiting wrapper; sub-millisecond with the fixed one",
    rule: "the expected wait min(timeout, N/rate) is ≥ 10 ms and the measured p99 is within \
           0.5x–1.5x of it",
    rule_fn: "rules::batch_wrapper_latency",
    sources: &[],
};
