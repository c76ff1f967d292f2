//! The findings catalogue: each finding of the post ("Java vs Rust Kafka Clients: Chasing
//! Down the Gaps") with its claim and figures, the command that reproduces it, the shape a
//! reproduction should show, and the rule that decides whether it held.
//!
//! Rules are pure functions over given numbers (medians a probe measured, or figures an
//! analyzer read), so they can be tested both ways with the post's own numbers. The
//! catalogue also maps every diagnosis id the analyzers emit and every probe verdict id
//! onto the finding it is evidence for; `gap-report` uses that map.
//!
//! ```
//! use kgap_analyzers::findings::{self, rules};
//! // Gap 2: 389k msg/s at the default 1000 ms backoff, 1.48M at 10 ms, naps seen.
//! assert!(rules::fetch_backoff(6.0, 389_000.0, 1_480_000.0));
//! assert_eq!(findings::for_diagnosis("fetch-queue-backoff", None).unwrap().id, "fetch-backoff");
//! ```

use serde::Serialize;

/// Which client a finding is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Side {
    Librdkafka,
    Java,
    /// A difference between the two clients, not a fault of either.
    Both,
    /// The benchmark's own code (a harness bug).
    Harness,
}

/// How a probe reproduces a finding.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Reproduce {
    /// The probe binary.
    pub probe: &'static str,
    /// False for probes that are planned but not in the project yet.
    pub exists: bool,
    /// The command line.
    pub command: &'static str,
}

/// How strongly an analyzer's diagnosis speaks for a finding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Strength {
    /// The analyzer's rule is the finding's mechanism (e.g. `Fetch backoff … Queue full`).
    Direct,
    /// Consistent with the finding, but other causes give the same sign (a saturated
    /// thread, small requests in statistics).
    Indirect,
}

/// An analyzer diagnosis (or probe verdict) id that is evidence for a finding.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Evidence {
    /// The diagnosis id as the analyzer emits it, or a probe's verdict `finding`.
    pub id: &'static str,
    /// Who emits it (`analyze-fetch-log`, `probe-fetch-backoff`, `gap-report (stats)`, …).
    pub source: &'static str,
    /// For ids used with several meanings (analyze-jfr's `fixed-socket-buffer`), the
    /// evidence field `op` it must carry.
    pub op: Option<&'static str>,
    pub strength: Strength,
}

/// One finding of the post.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Finding {
    /// Stable id (kebab-case); probes use the same ids in their verdicts where they exist.
    pub id: &'static str,
    pub title: &'static str,
    pub side: Side,
    /// What the post claims, with its figures quoted.
    pub claim: &'static str,
    /// The cause, in the post's terms.
    pub cause: &'static str,
    /// The fix the post found.
    pub fix: &'static str,
    pub reproduce: Reproduce,
    /// What a reproduction should show.
    pub expected_shape: &'static str,
    /// The rule (see [`rules`]) in words.
    pub rule: &'static str,
    /// The name of the function in [`rules`] that decides it.
    pub rule_fn: &'static str,
    /// Analyzer diagnoses and probe verdicts that are evidence for it.
    pub evidence: &'static [Evidence],
}

const fn direct(id: &'static str, source: &'static str) -> Evidence {
    Evidence {
        id,
        source,
        op: None,
        strength: Strength::Direct,
    }
}

const fn indirect(id: &'static str, source: &'static str) -> Evidence {
    Evidence {
        id,
        source,
        op: None,
        strength: Strength::Indirect,
    }
}

/// Statistics-derived evidence `gap-report` computes itself (librdkafka stats JSON).
pub const STATS_SMALL_PRODUCE_REQUESTS: &str = "stats-small-produce-requests";

/// Every finding of the post, in the order the post tells them.
pub const CATALOGUE: &[Finding] = &[
    Finding {
        id: "request-ceiling",
        title: "Gap 1: the producer bound by the broker's cost per request",
        side: Side::Librdkafka,
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
        evidence: &[
            direct("request-ceiling", "probe-request-ceiling"),
            direct("per-request-ceiling", "analyze-protocol-log"),
            indirect(STATS_SMALL_PRODUCE_REQUESTS, "gap-report (statistics)"),
        ],
    },
    Finding {
        id: "fetch-backoff",
        title: "Gap 2: the consumer that took naps (fetch.queue.backoff.ms)",
        side: Side::Librdkafka,
        claim: "The 100 B consumer ran at 389k msg/s on 0.46 cores, per-second counts lumpy \
                (457k, 571k, 400k, then 53k). `Fetch backoff for 1000ms: Local: Queue full`. \
                fetch.queue.backoff.ms=10: 1.48M msg/s (3.8x); =0: 948k (spins); =100: 1338k.",
        cause: "when a partition's local queue reaches queued.min.messages (100,000), \
                librdkafka stops fetching it for fetch.queue.backoff.ms (1000 ms by default) \
                while the application drains the queue in milliseconds",
        fix: "fetch.queue.backoff.ms=10 (0 spins)",
        reproduce: Reproduce {
            probe: "probe-fetch-backoff",
            exists: true,
            command: "probe-fetch-backoff --brokers 127.0.0.1:9092 --backoff-ms 1000,10",
        },
        expected_shape: "Queue-full backoffs and idle seconds at 1000 ms; none at 10 ms, and a \
                         clear speed-up",
        rule: "queue-full backoffs > 0 at the slow setting and fast/slow throughput ≥ 1.3",
        rule_fn: "rules::fetch_backoff",
        evidence: &[
            direct("fetch-backoff", "probe-fetch-backoff"),
            direct("fetch-queue-backoff", "analyze-fetch-log"),
        ],
    },
    Finding {
        id: "batch-consume",
        title: "poll() one message per call, then the broker thread's per-message limit",
        side: Side::Librdkafka,
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
        evidence: &[
            indirect("app-thread-saturated", "analyze-thread-cpu"),
            indirect("rdk-broker-saturated", "analyze-thread-cpu"),
        ],
    },
    Finding {
        id: "batch-wrapper-latency",
        title: "The batch wrapper that waits for a full batch",
        side: Side::Harness,
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
        evidence: &[],
    },
    Finding {
        id: "inflight-latency",
        title: "In-flight window and latency at linger.ms=0",
        side: Side::Librdkafka,
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
        evidence: &[
            direct("inflight-latency", "probe-inflight-latency"),
            direct("inflight-queueing", "analyze-protocol-log"),
        ],
    },
    Finding {
        id: "per-partition-linger",
        title: "librdkafka lingers per partition, Java per broker",
        side: Side::Librdkafka,
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
        evidence: &[],
    },
    Finding {
        id: "gzip-batch-semantics",
        title: "gzip: the same batch.size is not the same batch",
        side: Side::Both,
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
        evidence: &[
            direct("gzip-batch-semantics", "probe-gzip-batch"),
            indirect("deflate-dominates", "analyze-jfr"),
        ],
    },
    Finding {
        id: "java-send-buffer",
        title: "Java's fixed send buffer and the tail copied on every write",
        side: Side::Java,
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
        evidence: &[
            Evidence {
                id: "fixed-socket-buffer",
                source: "analyze-jfr",
                op: Some("write"),
                strength: Strength::Direct,
            },
            indirect("java-producer-network-saturated", "analyze-thread-cpu"),
        ],
    },
    Finding {
        id: "java-receive-buffer",
        title: "Java's fixed receive buffer and one core per consumer",
        side: Side::Java,
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
        evidence: &[
            Evidence {
                id: "fixed-socket-buffer",
                source: "analyze-jfr",
                op: Some("read"),
                strength: Strength::Direct,
            },
            direct("single-core-consumer", "analyze-jfr"),
            indirect("java-consumer-thread-saturated", "analyze-thread-cpu"),
        ],
    },
    Finding {
        id: "java-gc-collapse",
        title: "Java producers' GC collapse (K=16 in one JVM)",
        side: Side::Java,
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
        evidence: &[
            direct("gc-collapse", "analyze-gc-log"),
            direct("concurrent-gc-behind", "analyze-gc-log"),
            indirect("evacuation-failures", "analyze-gc-log"),
            indirect("gc-pressure", "analyze-jfr"),
            indirect("gc-threads-dominate", "analyze-thread-cpu"),
        ],
    },
];

/// The finding with this id.
pub fn get(id: &str) -> Option<&'static Finding> {
    CATALOGUE.iter().find(|f| f.id == id)
}

/// The finding an analyzer diagnosis (or probe verdict) id is evidence for, and how
/// strongly. `op` is the diagnosis evidence's `op` field when it has one.
pub fn for_diagnosis(id: &str, op: Option<&str>) -> Option<&'static Finding> {
    evidence_for(id, op).map(|(f, _)| f)
}

/// [`for_diagnosis`] with the strength of the evidence.
pub fn evidence_for(id: &str, op: Option<&str>) -> Option<(&'static Finding, Strength)> {
    CATALOGUE.iter().find_map(|f| {
        f.evidence
            .iter()
            .find(|e| e.id == id && (e.op.is_none() || e.op == op))
            .map(|e| (f, e.strength))
    })
}

/// Diagnosis ids that say "looked, and found no problem" rather than a gap.
pub const ALL_CLEAR_IDS: &[&str] = &["no-gc-problem", "no-saturated-thread"];

/// The rules: pure functions over given numbers, one per finding.
pub mod rules {
    /// Gap 1 (the probe's rule): `partition_gain` = throughput at the most partitions over
    /// the fewest at the smallest batch.size; `bytes_per_request_share` = bytes per
    /// ProduceRequest over batch.size; `batch_gain` = the best batch.size's throughput over
    /// the smallest's.
    pub fn request_ceiling(
        partition_gain: f64,
        bytes_per_request_share: f64,
        batch_gain: f64,
    ) -> bool {
        partition_gain <= 1.25 && bytes_per_request_share >= 0.5 && batch_gain >= 1.5
    }

    /// Gap 2 (the probe's rule): Queue-full backoffs at the slow setting and a speed-up of
    /// at least 1.3x at the fast one (the post saw 3.8x; 1.3x is clear on a 2-core box).
    pub fn fetch_backoff(
        slow_queue_full_backoffs: f64,
        slow_msgs_per_s: f64,
        fast_msgs_per_s: f64,
    ) -> bool {
        slow_queue_full_backoffs > 0.0
            && slow_msgs_per_s > 0.0
            && fast_msgs_per_s / slow_msgs_per_s >= 1.3
    }

    /// Batch consume: the batch API at least 1.2x poll() (the post: 1.48M → 2.02M, 1.37x)
    /// and librdkafka's broker thread near a core under it (the post: 0.94).
    pub fn batch_consume(
        poll_msgs_per_s: f64,
        batch_msgs_per_s: f64,
        broker_thread_cores: f64,
    ) -> bool {
        poll_msgs_per_s > 0.0
            && batch_msgs_per_s / poll_msgs_per_s >= 1.2
            && broker_thread_cores >= 0.9
    }

    /// The wait a batch call that returns at `batch_messages` or `timeout_ms` adds at most.
    pub fn batch_wait_ms(rate_per_s: f64, batch_messages: f64, timeout_ms: f64) -> f64 {
        if rate_per_s <= 0.0 {
            return timeout_ms;
        }
        (batch_messages / rate_per_s * 1000.0).min(timeout_ms)
    }

    /// The batch wrapper's latency bug: the expected wait is long enough to matter
    /// (≥ 10 ms) and the measured p99 sits at it (0.5x–1.5x).
    pub fn batch_wrapper_latency(
        rate_per_s: f64,
        batch_messages: f64,
        timeout_ms: f64,
        p99_ms: f64,
    ) -> bool {
        let wait = batch_wait_ms(rate_per_s, batch_messages, timeout_ms);
        wait >= 10.0 && p99_ms >= 0.5 * wait && p99_ms <= 1.5 * wait
    }

    /// In-flight latency (the probe's rule): p99 with the default window at least 3x the
    /// p99 with max.in.flight=5 (the post: 26.4 vs 1.28 ms, 20.6x).
    pub fn inflight_latency(p99_default_window_ms: f64, p99_inflight5_ms: f64) -> bool {
        p99_inflight5_ms > 0.0 && p99_default_window_ms / p99_inflight5_ms >= 3.0
    }

    /// Per-partition linger: when each partition sees less than one message per linger,
    /// librdkafka's p50 is close to the whole linger (the post: 5.1 ms at 5 ms; Java 2.8).
    /// False when the rate is too high for the rule to apply.
    pub fn per_partition_linger(
        linger_ms: f64,
        rate_per_s: f64,
        partitions: f64,
        p50_ms: f64,
    ) -> bool {
        if linger_ms <= 0.0 || rate_per_s <= 0.0 {
            return false;
        }
        let gap_ms = partitions / rate_per_s * 1000.0;
        gap_ms >= linger_ms && p50_ms >= 0.8 * linger_ms
    }

    /// gzip batch semantics (the probe's rule), smallest vs largest batch.size: input per
    /// batch follows batch.size (≥ 1.5x), compresses better (≥ 1.02x) and runs slower (≤ 0.95x).
    pub fn gzip_batch(
        input_lo: f64,
        input_hi: f64,
        ratio_lo: f64,
        ratio_hi: f64,
        rate_lo: f64,
        rate_hi: f64,
    ) -> bool {
        input_hi >= 1.5 * input_lo
            && ratio_hi >= 1.02 * ratio_lo
            && rate_lo > 0.0
            && rate_hi <= 0.95 * rate_lo
    }

    /// Writes and bytes copied for one request when each write takes `write_bytes` and the
    /// JDK copies the whole unsent rest on every write. (6.29 MB at 298 KB: 22 writes,
    /// 69.6 MB.)
    pub fn tail_copy(request_bytes: f64, write_bytes: f64) -> (u64, f64) {
        if request_bytes <= 0.0 || write_bytes <= 0.0 {
            return (0, 0.0);
        }
        let writes = (request_bytes / write_bytes).ceil() as u64;
        let copied = (0..writes)
            .map(|i| (request_bytes - i as f64 * write_bytes).max(0.0))
            .sum();
        (writes, copied)
    }

    /// Java's send buffer: a request takes ≥ 4 writes and writes sit between 1x and 3x the
    /// fixed send buffer, i.e. the buffer caps them (the kernel doubles it; the post saw
    /// 298 KB at 128 KB, and ~692 KB writes once autotuned up to 4 MB).
    pub fn java_send_buffer(
        request_bytes: f64,
        write_bytes_p50: f64,
        send_buffer_bytes: f64,
    ) -> bool {
        let (writes, _) = tail_copy(request_bytes, write_bytes_p50);
        send_buffer_bytes > 0.0
            && writes >= 4
            && write_bytes_p50 >= send_buffer_bytes
            && write_bytes_p50 <= 3.0 * send_buffer_bytes
    }

    /// Java's receive buffer: reads at or under the fixed receive buffer on a thread near
    /// one core (the post: ~56 KB reads at 64 KB, 0.95–0.98 cores).
    pub fn java_receive_buffer(
        read_bytes_p50: f64,
        receive_buffer_bytes: f64,
        thread_cores: f64,
    ) -> bool {
        receive_buffer_bytes > 0.0 && read_bytes_p50 <= receive_buffer_bytes && thread_cores >= 0.9
    }

    /// GC collapse (analyze-gc-log's rule): a window ≥ 20% in GC while the heap after young
    /// GC stays ≥ 80% of the maximum (the post: 37%, 1846 of 2048 MB).
    pub fn java_gc_collapse(gc_share_worst_window: f64, heap_after_young_share: f64) -> bool {
        gc_share_worst_window >= 0.20 && heap_after_young_share >= 0.80
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_every_rule_is_named() {
        for (i, f) in CATALOGUE.iter().enumerate() {
            assert!(CATALOGUE[i + 1..].iter().all(|g| g.id != f.id), "{}", f.id);
            assert!(f.rule_fn.starts_with("rules::"));
            assert!(f.reproduce.exists || f.reproduce.command.contains("(planned)"));
        }
        assert_eq!(CATALOGUE.len(), 10);
    }

    #[test]
    fn diagnosis_ids_map_onto_findings() {
        let f = |id, op| for_diagnosis(id, op).map(|f| f.id);
        assert_eq!(f("per-request-ceiling", None), Some("request-ceiling"));
        assert_eq!(f("inflight-queueing", None), Some("inflight-latency"));
        assert_eq!(f("fetch-queue-backoff", None), Some("fetch-backoff"));
        assert_eq!(
            f("fixed-socket-buffer", Some("write")),
            Some("java-send-buffer")
        );
        assert_eq!(
            f("fixed-socket-buffer", Some("read")),
            Some("java-receive-buffer")
        );
        assert_eq!(f("gc-collapse", None), Some("java-gc-collapse"));
        assert_eq!(
            f("gzip-batch-semantics", None),
            Some("gzip-batch-semantics")
        );
        // Not findings of the post.
        assert_eq!(f("request-timeouts", None), None);
        assert_eq!(f("long-pauses", None), None);
        assert_eq!(f("no-gc-problem", None), None);
    }
}
