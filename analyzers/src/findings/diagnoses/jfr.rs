//! analyze-jfr's diagnoses: a recording's socket operations, threads' CPU and samples, GC
//! and deflate, read into [`JfrReport`] and [`ThreadSamples`], judged here. A recording is
//! any JVM's (Scope::AnyProcess): each diagnosis says which Kafka client the recording
//! shows, if any (`kafka_client`), and a socket cap with none says it may be the program's
//! own buffer.

use std::collections::HashMap;
use std::rc::Rc;

use serde_json::json;

use super::rule::{DiagnosisRule, Level, Scope, Threshold};
use crate::findings::saturation::SATURATED_CORES;
use crate::findings::scope::{self, KafkaClient};
use crate::jfr::analysis::aggregator::ThreadSamples;
use crate::jfr::analysis::report::{JfrReport, SocketOp};
use crate::vocab::report::{human_bytes, round3, Diagnosis};

const ANALYZER: &str = "analyze-jfr";

/// Largest write that still points at a fixed send buffer: the kernel doubles
/// SO_SNDBUF (128 KB → 256 KB) and a write takes a little more than that (the
/// post: ~298 KB); autotuned buffers let writes grow to MBs (~692 KB in the post).
pub const FIXED_SNDBUF_CEILING_MAX: u64 = 512 * 1024;
/// Same for reads: receive.buffer.bytes 64 KB gave ~56 KB reads in the post.
pub const FIXED_RCVBUF_CEILING_MAX: u64 = 256 * 1024;
/// Smallest ceiling taken for a socket buffer: a reasoned margin below the post's ~56 KB
/// reads (smaller piles are the program's own messages).
pub const MIN_CEILING_BYTES: u64 = 32 * 1024;
/// Operations needed before a ceiling is believed (a reasoned margin).
pub const MIN_OPS: u64 = 50;
/// ... and this often (a few large messages a second are not a buffer cap).
pub const MIN_OPS_PER_S: f64 = 20.0;
/// Clustered under a ceiling: the median at least this share of the largest…
pub const CEILING_P50_SHARE: f64 = 0.5;
/// …and the 90th percentile at least this share (sizes pile up under a cap instead of
/// spreading to MBs as with autotuned buffers; the post's capped writes: ~298 KB nearly all).
pub const CEILING_P90_SHARE: f64 = 0.8;
/// Sizes within this percent of the largest count as "at the ceiling" (`near_max_share`
/// of a socket row; the words quote it).
pub const NEAR_MAX_WITHIN_PCT: u64 = 10;
/// A thread this busy (in cores) counts as "at one core": the catalogue's saturated thread.
pub const ONE_CORE: f64 = SATURATED_CORES;
/// GC pressure when pauses take at least this share of the recording: a reasoned margin,
/// below the post's 37% of the window at K=16 and far above its 1% at K=8.
pub const GC_PAUSE_SHARE: f64 = 0.10;
/// …or when the heap after GC (median) is at least this share of the committed heap…
/// (the post: 1846 of 2048 MB after young GC, 90%; the same bar as analyze-gc-log's).
pub const GC_HEAP_FULL_SHARE: f64 = 0.8;
/// …over at least this many collections (a reasoned margin: one or two are start-up).
pub const GC_MIN_COLLECTIONS: u64 = 5;
/// Samples of a thread needed before its deflate share is believed (a reasoned margin).
pub const DEFLATE_MIN_SAMPLES: u64 = 20;
/// Deflate dominates at this share of a thread's samples (the post: 96% of the sending
/// thread; half is a reasoned margin).
pub const DEFLATE_SHARE: f64 = 0.5;

pub const FIXED_SOCKET_BUFFER: DiagnosisRule = DiagnosisRule {
    id: "fixed-socket-buffer",
    analyzer: ANALYZER,
    level: Level::Problem,
    scope: Scope::AnyProcess,
    rule: "one thread's socket writes (reads) pile up under a ceiling: at least MIN_OPS of them \
           at MIN_OPS_PER_S, the largest between MIN_CEILING_BYTES and FIXED_SNDBUF_CEILING_MAX \
           (FIXED_RCVBUF_CEILING_MAX), the median at least CEILING_P50_SHARE and the 90th \
           percentile CEILING_P90_SHARE of the largest",
    thresholds: &[
        Threshold {
            name: "FIXED_SNDBUF_CEILING_MAX",
            value: FIXED_SNDBUF_CEILING_MAX as f64,
            unit: "bytes",
            source: "the post: ~298 KB writes under send.buffer.bytes 128 KB (doubled by the kernel), ~692 KB autotuned",
        },
        Threshold {
            name: "FIXED_RCVBUF_CEILING_MAX",
            value: FIXED_RCVBUF_CEILING_MAX as f64,
            unit: "bytes",
            source: "the post: ~56 KB reads under receive.buffer.bytes 64 KB",
        },
        Threshold {
            name: "MIN_CEILING_BYTES",
            value: MIN_CEILING_BYTES as f64,
            unit: "bytes",
            source: "a reasoned margin below the post's ~56 KB reads",
        },
        Threshold {
            name: "MIN_OPS",
            value: MIN_OPS as f64,
            unit: "operations",
            source: "a reasoned margin",
        },
        Threshold {
            name: "MIN_OPS_PER_S",
            value: MIN_OPS_PER_S,
            unit: "operations per second",
            source: "a reasoned margin: a few large messages a second are not a buffer cap",
        },
        Threshold {
            name: "CEILING_P50_SHARE",
            value: CEILING_P50_SHARE,
            unit: "median over the largest",
            source: "a reasoned margin: sizes pile up under a cap",
        },
        Threshold {
            name: "CEILING_P90_SHARE",
            value: CEILING_P90_SHARE,
            unit: "90th percentile over the largest",
            source: "a reasoned margin: sizes pile up under a cap",
        },
    ],
};
pub const SINGLE_CORE_CONSUMER: DiagnosisRule = DiagnosisRule {
    id: "single-core-consumer",
    analyzer: ANALYZER,
    level: Level::Problem,
    scope: Scope::AnyProcess,
    rule: "a thread with at least MIN_OPS socket reads runs at ONE_CORE cores or more",
    thresholds: &[Threshold {
        name: "ONE_CORE",
        value: ONE_CORE,
        unit: "cores",
        source: "findings::saturation::SATURATED_CORES: the post's limiting threads at 0.95 to 0.98 cores",
    }],
};
pub const GC_PRESSURE: DiagnosisRule = DiagnosisRule {
    id: "gc-pressure",
    analyzer: ANALYZER,
    level: Level::Problem,
    scope: Scope::AnyProcess,
    rule: "GC pauses take at least GC_PAUSE_SHARE of the recording, or the heap after GC \
           (median) is at least GC_HEAP_FULL_SHARE of the committed heap over at least \
           GC_MIN_COLLECTIONS collections",
    thresholds: &[
        Threshold {
            name: "GC_PAUSE_SHARE",
            value: GC_PAUSE_SHARE,
            unit: "share of the recording in GC pauses",
            source: "a reasoned margin: the post saw 37% at K=16 and 1% at K=8",
        },
        Threshold {
            name: "GC_HEAP_FULL_SHARE",
            value: GC_HEAP_FULL_SHARE,
            unit: "heap after GC over committed heap",
            source: "the post: 1846 of 2048 MB after young GC at K=16",
        },
        Threshold {
            name: "GC_MIN_COLLECTIONS",
            value: GC_MIN_COLLECTIONS as f64,
            unit: "collections",
            source: "a reasoned margin: one or two are start-up",
        },
    ],
};
pub const DEFLATE_DOMINATES: DiagnosisRule = DiagnosisRule {
    id: "deflate-dominates",
    analyzer: ANALYZER,
    level: Level::Problem,
    scope: Scope::AnyProcess,
    rule: "at least DEFLATE_SHARE of a thread's samples (of at least DEFLATE_MIN_SAMPLES) are \
           in java.util.zip.Deflater",
    thresholds: &[
        Threshold {
            name: "DEFLATE_MIN_SAMPLES",
            value: DEFLATE_MIN_SAMPLES as f64,
            unit: "samples of the thread",
            source: "a reasoned margin",
        },
        Threshold {
            name: "DEFLATE_SHARE",
            value: DEFLATE_SHARE,
            unit: "share of the thread's samples",
            source: "the post: 96% of the sending thread in deflate; half is a reasoned margin",
        },
    ],
};

pub const RULES: &[DiagnosisRule] = &[
    DEFLATE_DOMINATES,
    FIXED_SOCKET_BUFFER,
    GC_PRESSURE,
    SINGLE_CORE_CONSUMER,
];

/// The diagnoses of one recording: its report and where each thread's samples were.
pub(crate) fn diagnose(r: &JfrReport, samples: &HashMap<Rc<str>, ThreadSamples>) -> Vec<Diagnosis> {
    let mut out = Vec::new();
    let thread = |name: &str| r.threads.iter().find(|t| t.name == name);
    let sample_share = |name: &str, pick: fn(&ThreadSamples) -> u64| {
        samples
            .iter()
            .find(|(n, _)| &***n == name)
            .filter(|(_, t)| t.total > 0)
            .map(|(_, t)| round3(pick(t) as f64 / t.total as f64))
    };
    for s in &r.socket {
        let Some(tname) = s.thread.as_deref() else {
            continue;
        };
        let ceiling = match s.op {
            SocketOp::Write => FIXED_SNDBUF_CEILING_MAX,
            SocketOp::Read => FIXED_RCVBUF_CEILING_MAX,
        };
        // Clustered under a ceiling: the median at least half the largest and the
        // 90th percentile near it (sizes pile up under a cap instead of spreading
        // to MBs as with autotuned buffers), the largest small enough to be a
        // fixed buffer, and often enough to matter.
        let clustered = s.count >= MIN_OPS
            && s.ops_per_s >= MIN_OPS_PER_S
            && s.bytes_max <= ceiling
            && s.bytes_max >= MIN_CEILING_BYTES
            && s.bytes_p50 as f64 >= CEILING_P50_SHARE * s.bytes_max as f64
            && s.bytes_p90 as f64 >= CEILING_P90_SHARE * s.bytes_max as f64;
        if !clustered {
            continue;
        }
        let t = thread(tname);
        let (knob, pick): (&str, fn(&ThreadSamples) -> u64) = match s.op {
            SocketOp::Write => ("send.buffer.bytes", |t| t.socket_write),
            SocketOp::Read => ("receive.buffer.bytes", |t| t.socket_read),
        };
        let evidence = json!({
            "op": s.op.as_str(),
            "thread": tname,
            "ops": s.count,
            "bytes_p50": s.bytes_p50,
            "bytes_p90": s.bytes_p90,
            "bytes_max": s.bytes_max,
            "near_max_share": s.near_max_share,
            "ops_per_s": s.ops_per_s,
            "thread_cores_mean": t.and_then(|t| t.cores_mean),
            "thread_cpu_mean": t.map(|t| t.cpu_mean),
            "samples_in_socket_op": sample_share(tname, pick),
        });
        let (cause, fix) = match s.op {
            SocketOp::Write => (
                format!(
                    "{}% of the {} writes of '{tname}' are within {NEAR_MAX_WITHIN_PCT}% of the largest ({}): \
                     writes are capped by a fixed socket send buffer (send.buffer.bytes, 128 KB \
                     by default; the kernel doubles it). A large request then takes many writes, \
                     and for a heap buffer the JDK copies the whole unsent rest into a temporary \
                     direct buffer on every one (the post: ~298 KB per write, 22 writes and \
                     copies for a 6.29 MB request).",
                    (s.near_max_share * 100.0).round(),
                    s.count,
                    human_bytes(s.bytes_max as f64)
                ),
                "send.buffer.bytes=-1 (let the kernel autotune: ~692 KB per write in the \
                 post, 1 MB batches from 630k to 875k msg/s), or keep requests small with \
                 max.request.size (e.g. 1100000, one batch per request)"
                    .to_string(),
            ),
            SocketOp::Read => (
                format!(
                    "the {} reads of '{tname}' pile up under {} (median {}): \
                     reads are capped by a fixed socket receive buffer (receive.buffer.bytes, \
                     64 KB by default), so a large fetch response arrives in many small reads \
                     on the polling thread (the post: ~56 KB reads, 22,500 per second).",
                    s.count,
                    human_bytes(s.bytes_max as f64),
                    human_bytes(s.bytes_p50 as f64)
                ),
                "receive.buffer.bytes=-1 (let the kernel autotune: halves the reads, +16 to 17% \
                 for one consumer in the post)"
                    .to_string(),
            ),
        };
        out.push(FIXED_SOCKET_BUFFER.emit(
            format!(
                "{} sizes clustered at a fixed socket buffer ({knob})",
                s.op.as_str()
            ),
            evidence,
            cause,
            fix,
            Vec::new(),
        ));
    }

    // One consumer at one core: a thread that reads the socket itself and is
    // near a whole core (CPU load or, without it, read-heavy samples).
    for s in r
        .socket
        .iter()
        .filter(|s| s.op == SocketOp::Read && s.count >= MIN_OPS)
    {
        let Some(tname) = s.thread.as_deref() else {
            continue;
        };
        let Some(t) = thread(tname) else { continue };
        let Some(cores) = t.cores_mean else { continue };
        if cores < ONE_CORE {
            continue;
        }
        out.push(
            SINGLE_CORE_CONSUMER.emit(
                format!("'{tname}' reads the socket and runs at one core"),
                json!({
                    "thread": tname,
                    "cores_mean": cores,
                    "cores_max": t.cores_max,
                    "reads": s.count,
                    "read_bytes_p50": s.bytes_p50,
                    "samples_in_socket_read": sample_share(tname, |t| t.socket_read),
                }),
                format!(
                    "'{tname}' does the socket reads and the per-byte work on one thread at \
                 {cores:.2} cores: in the classic consumer the thread that calls poll() also \
                 reads the socket (the post: 0.95 to 0.98 cores, ~1.4 GB/s per consumer)."
                ),
                "receive.buffer.bytes=-1 first; past that, add consumers (and partitions): \
                  one KafkaConsumer's per-byte work stays on one core"
                    .into(),
                Vec::new(),
            ),
        );
    }

    if let Some(gc) = &r.gc {
        let heap_share = match (gc.heap_after_gc_p50_mb, gc.heap_committed_max_mb) {
            (Some(after), Some(committed)) if committed > 0.0 => Some(after / committed),
            _ => None,
        };
        let heap_full = heap_share.is_some_and(|h| h >= GC_HEAP_FULL_SHARE);
        if gc.pause_share >= GC_PAUSE_SHARE || (heap_full && gc.collections >= GC_MIN_COLLECTIONS) {
            out.push(
                GC_PRESSURE.emit(
                    "GC takes a large share of the recording".into(),
                    json!({
                        "collections": gc.collections,
                        "pause_share": gc.pause_share,
                        "pause_total_ms": gc.pause_total_ms,
                        "pause_max_ms": gc.pause_max_ms,
                        "heap_after_gc_p50_mb": gc.heap_after_gc_p50_mb,
                        "heap_committed_max_mb": gc.heap_committed_max_mb,
                    }),
                    format!(
                        "pauses take {:.0}% of the recording and {}: {} (the post, 16 producers \
                     in one JVM: records waiting in the accumulators, ~190 B of objects per \
                     100 B record, survive young collections; 37% of the window in GC).",
                        gc.pause_share * 100.0,
                        match (gc.heap_after_gc_p50_mb, gc.heap_committed_max_mb) {
                            (Some(a), Some(c)) =>
                                format!("the heap after GC is {a:.0} of {c:.0} MB"),
                            _ =>
                                "the recording has no heap summary (how full the heap stays after \
                              GC is not known)"
                                    .to_string(),
                        },
                        match heap_share {
                            Some(h) if h >= GC_HEAP_FULL_SHARE => "live data fills the heap",
                            Some(_) =>
                                "the heap is not full after GC, so no live set fills it: \
                                    the time goes to collecting",
                            None => "whether live data fills the heap is not shown",
                        }
                    ),
                    "bound the backlog: a smaller buffer.memory per producer (2 MB took 16 \
                      producers from 6.6M to 10.1M msg/s in the post); fewer busy threads than \
                      CPUs; a bigger heap helps less"
                        .into(),
                    Vec::new(),
                ),
            );
        }
    }

    for (name, t) in samples {
        if t.total < DEFLATE_MIN_SAMPLES || (t.deflate as f64) < DEFLATE_SHARE * t.total as f64 {
            continue;
        }
        let share = round3(t.deflate as f64 / t.total as f64);
        out.push(
            DEFLATE_DOMINATES.emit(
                format!("'{name}' spends most samples in zlib deflate"),
                json!({
                    "thread": name.to_string(),
                    "samples": t.total,
                    "deflate_share": share,
                    "thread_cores_mean": thread(name).and_then(|t| t.cores_mean),
                }),
                format!(
                    "{:.0}% of this thread's samples are in java.util.zip.Deflater (gzip): Java \
                 closes a gzip batch when its estimated compressed size reaches batch.size, so \
                 a 16 KB batch holds ~43 KB of input, and zlib is slower per byte on longer \
                 input (the post: 96% of the sending thread in deflate).",
                    share * 100.0
                ),
                "compare at equal input per batch: a smaller batch.size for gzip (3000 B gave \
                  48.2k against 33.9k msg/s), compression.gzip.level=1, or lz4/zstd"
                    .into(),
                Vec::new(),
            ),
        );
    }
    for d in &mut out {
        match kafka_client(r, d) {
            Some(k) => d.evidence[scope::KAFKA_CLIENT_KEY] = k,
            // Sizes piled under a cap are a socket buffer for kafka-clients, which hands
            // whole requests and responses to the socket; any other program may be writing
            // or reading through a fixed array of its own.
            None if d.id == "fixed-socket-buffer" => {
                d.title = format!(
                    "{} (or the program's own buffer: nothing here shows a Kafka client)",
                    d.title
                );
                d.cause.push_str(
                    " Nothing in this recording shows a Kafka client (no kafka-clients thread \
                     or frame): a program that reads or writes through a fixed array of its \
                     own shows the same cap, so the knob above applies only if this JVM runs \
                     one.",
                );
            }
            None => {}
        }
    }
    out.sort_by(|a, b| a.id.cmp(&b.id));
    out
}

/// What in the recording shows the Kafka client a diagnosis is about: a socket write's
/// own thread (only kafka-clients' network thread writes a producer's requests); for reads
/// (on the application's poll thread, any name) a consumer's threads or frames anywhere in
/// the recording; for GC and deflate, any Kafka client, a producer first.
fn kafka_client(r: &JfrReport, d: &Diagnosis) -> Option<serde_json::Value> {
    let names = || {
        r.threads
            .iter()
            .map(|t| t.name.as_str())
            .chain(r.socket.iter().filter_map(|s| s.thread.as_deref()))
    };
    let frames = || {
        r.hot_methods.iter().map(|m| m.frame.as_str()).chain(
            r.top_stacks
                .iter()
                .flat_map(|s| s.frames.iter().map(String::as_str)),
        )
    };
    match (d.id.as_str(), d.evidence.get("op").and_then(|v| v.as_str())) {
        ("fixed-socket-buffer", Some("write")) => {
            let thread = d.evidence.get("thread").and_then(|v| v.as_str())?;
            scope::shown_by([thread], [], Some(KafkaClient::JavaProducer))
        }
        ("fixed-socket-buffer", _) | ("single-core-consumer", _) => {
            scope::shown_by(names(), frames(), Some(KafkaClient::JavaConsumer))
        }
        _ => scope::shown_by(names(), frames(), Some(KafkaClient::JavaProducer))
            .or_else(|| scope::shown_by(names(), frames(), None)),
    }
}

#[cfg(test)]
mod tests {
    //! The diagnoses, from observations fed to the aggregator.

    use std::rc::Rc;

    use crate::jfr::analysis::aggregator::Aggregator;
    use crate::jfr::analysis::report::{InputInfo, JfrReport, ReportOptions, SocketOp};

    #[test]
    fn writes_at_a_ceiling_are_diagnosed_and_spread_writes_are_not() {
        let run = |sizes: &[u64]| {
            let mut a = Aggregator::default();
            let t: Rc<str> = Rc::from("net");
            a.span(0, 10_000_000_000);
            for (i, &b) in sizes.iter().enumerate() {
                a.socket(SocketOp::Write, &t, "10.0.0.1", 9092, b as i64, i as i64, 0);
            }
            a.finish(InputInfo::default(), &ReportOptions::default())
        };
        let capped: Vec<u64> = (0..200)
            .map(|i| if i % 10 == 0 { 90_000 } else { 300_000 })
            .collect();
        let r = run(&capped);
        assert_eq!(r.diagnoses.len(), 1);
        assert_eq!(r.diagnoses[0].id, "fixed-socket-buffer");
        // Autotuned: sizes spread up to MBs.
        let spread: Vec<u64> = (0..200).map(|i| 50_000 + i * 20_000).collect();
        assert!(run(&spread).diagnoses.is_empty());
        // Too few writes to believe a ceiling.
        assert!(run(&capped[..20]).diagnoses.is_empty());
    }

    fn ids(r: &JfrReport) -> Vec<&str> {
        r.diagnoses.iter().map(|d| d.id.as_str()).collect()
    }

    #[test]
    fn a_reading_thread_at_one_core_is_a_single_core_consumer() {
        let run = |load: f64| {
            let mut a = Aggregator::default();
            a.hw_threads = Some(16);
            a.span(0, 10_000_000_000);
            let t: Rc<str> = Rc::from("main");
            // 1/16 of the machine is one core.
            a.thread_cpu(&t, load * 0.9 / 16.0, load * 0.1 / 16.0);
            for i in 0..500 {
                a.socket(SocketOp::Read, &t, "b1", 9092, 20_000 + i * 7_000, i, 0);
            }
            a.finish(InputInfo::default(), &ReportOptions::default())
        };
        assert_eq!(ids(&run(0.97)), ["single-core-consumer"]);
        assert!(ids(&run(0.5)).is_empty());
    }

    #[test]
    fn gc_pauses_over_a_tenth_of_the_recording_are_gc_pressure() {
        let run = |pause_ms: i64| {
            let mut a = Aggregator::default();
            a.span(0, 10_000_000_000);
            for _ in 0..10 {
                a.gc(
                    "G1Old",
                    "G1 Evacuation Pause",
                    pause_ms * 1_000_000,
                    pause_ms * 1_000_000,
                );
                a.heap_after_gc(100 << 20, 2048 << 20);
            }
            a.finish(InputInfo::default(), &ReportOptions::default())
        };
        assert_eq!(ids(&run(110)), ["gc-pressure"]); // 1.1 s of 10 s
        assert!(ids(&run(2)).is_empty());
    }

    #[test]
    fn a_thread_mostly_in_deflate_is_diagnosed() {
        let mut a = Aggregator::default();
        a.span(0, 1_000_000_000);
        let t: Rc<str> = Rc::from("kafka-producer-network-thread | p1");
        let deflate: Vec<Rc<str>> = vec![
            Rc::from("java.util.zip.Deflater.deflateBytesBytes"),
            Rc::from("org.apache.kafka.common.compress.GzipOutputStream.write"),
        ];
        let other: Vec<Rc<str>> = vec![Rc::from("sun.nio.ch.SocketChannelImpl.write")];
        a.samples(&t, &deflate, 96);
        a.samples(&t, &other, 4);
        let r = a.finish(InputInfo::default(), &ReportOptions::default());
        assert_eq!(ids(&r), ["deflate-dominates"]);
        // Deflate in less than half of the thread's samples, or too few samples: none.
        let run = |deflating: u64, other_samples: u64| {
            let mut a = Aggregator::default();
            a.span(0, 1_000_000_000);
            a.samples(&t, &deflate, deflating);
            a.samples(&t, &other, other_samples);
            a.finish(InputInfo::default(), &ReportOptions::default())
        };
        assert!(ids(&run(40, 60)).is_empty());
        assert!(ids(&run(15, 1)).is_empty());
        assert_eq!(ids(&run(50, 50)), ["deflate-dominates"]);
        assert_eq!(r.diagnoses[0].evidence["deflate_share"], 0.96);
        assert_eq!(
            r.hot_methods[0].frame,
            "java.util.zip.Deflater.deflateBytesBytes"
        );
        assert_eq!(r.hot_methods[0].self_samples, 96);
    }

    #[test]
    fn gc_without_heap_summaries_says_the_heap_is_unknown_never_a_figure() {
        let mut a = Aggregator::default();
        a.span(0, 10_000_000_000);
        for _ in 0..10 {
            a.gc("G1Old", "G1 Evacuation Pause", 110_000_000, 110_000_000);
        }
        let r = a.finish(InputInfo::default(), &ReportOptions::default());
        let gc = r.gc.as_ref().expect("collections");
        assert_eq!(gc.heap_after_gc_p50_mb, None);
        assert_eq!(gc.heap_committed_max_mb, None);
        assert_eq!(ids(&r), ["gc-pressure"]);
        let cause = &r.diagnoses[0].cause;
        assert!(cause.contains("no heap summary"), "{cause}");
        assert!(!cause.contains("17592186044416"), "{cause}");
        assert!(r.render_text().contains("not recorded"));
    }

    #[test]
    fn a_socket_cap_names_its_kafka_client_only_when_the_recording_shows_one() {
        let run = |thread: &str, frames: &[&str]| {
            let mut a = Aggregator::default();
            let t: Rc<str> = Rc::from(thread);
            a.span(0, 10_000_000_000);
            for i in 0..200i64 {
                let b: i64 = if i % 10 == 0 { 90_000 } else { 300_000 };
                a.socket(SocketOp::Write, &t, "10.0.0.1", 9092, b, i, 0);
            }
            let fs: Vec<Rc<str>> = frames.iter().map(|f| Rc::from(*f)).collect();
            if !fs.is_empty() {
                a.samples(&t, &fs, 10);
            }
            a.finish(InputInfo::default(), &ReportOptions::default())
        };
        // kafka-clients' network thread: the producer's requests, filed as such.
        let r = run("kafka-producer-network-thread | p1", &[]);
        let d = &r.diagnoses[0];
        assert_eq!(
            d.evidence["kafka_client"]["client"], "java-producer",
            "{d:#?}"
        );
        // A program writing through its own array: the same cap, no Kafka client, and it says so.
        let r = run("main", &["java.net.SocketOutputStream.write", "Main.main"]);
        let d = &r.diagnoses[0];
        assert!(d.evidence.get("kafka_client").is_none(), "{d:#?}");
        assert!(
            d.title.contains("nothing here shows a Kafka client"),
            "{}",
            d.title
        );
        // A consumer's frames elsewhere do not make a write a producer's.
        let r = run(
            "main",
            &["org.apache.kafka.clients.consumer.KafkaConsumer.poll"],
        );
        assert!(r.diagnoses[0].evidence.get("kafka_client").is_none());
    }
}
