//! The diagnoses in the post's terms, read from the report and the threads' samples:
//! a fixed socket buffer, one consumer at one core, GC pressure, deflate.

use std::collections::HashMap;
use std::rc::Rc;

use super::aggregator::ThreadSamples;
use super::report::*;
use serde_json::json;

use crate::findings::scope::{self, KafkaClient};
use crate::vocab::report::{human_bytes, round3, Diagnosis};

/// Largest write that still points at a fixed send buffer: the kernel doubles
/// SO_SNDBUF (128 KB → 256 KB) and a write takes a little more than that (the
/// post: ~298 KB); autotuned buffers let writes grow to MBs (~692 KB in the post).
const FIXED_SNDBUF_CEILING_MAX: u64 = 512 * 1024;
/// Same for reads: receive.buffer.bytes 64 KB gave ~56 KB reads in the post.
const FIXED_RCVBUF_CEILING_MAX: u64 = 256 * 1024;
/// Operations needed before a ceiling is believed.
const MIN_OPS: u64 = 50;
/// ... and this often (a few large messages a second are not a buffer cap).
const MIN_OPS_PER_S: f64 = 20.0;
/// A thread this busy (in cores) counts as "at one core".
const ONE_CORE: f64 = crate::findings::saturation::SATURATED_CORES;

pub(super) fn diagnose(r: &JfrReport, samples: &HashMap<Rc<str>, ThreadSamples>) -> Vec<Diagnosis> {
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
            && s.bytes_max >= 32 * 1024
            && s.bytes_p50 as f64 >= 0.5 * s.bytes_max as f64
            && s.bytes_p90 as f64 >= 0.8 * s.bytes_max as f64;
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
                    "{}% of the {} writes of '{tname}' are within 10% of the largest ({}): \
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
        out.push(Diagnosis {
            id: "fixed-socket-buffer".into(),
            title: format!(
                "{} sizes clustered at a fixed socket buffer ({knob})",
                s.op.as_str()
            ),
            evidence,
            cause,
            fix,
            examples: Vec::new(),
        });
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
        out.push(Diagnosis {
            id: "single-core-consumer".into(),
            title: format!("'{tname}' reads the socket and runs at one core"),
            evidence: json!({
                "thread": tname,
                "cores_mean": cores,
                "cores_max": t.cores_max,
                "reads": s.count,
                "read_bytes_p50": s.bytes_p50,
                "samples_in_socket_read": sample_share(tname, |t| t.socket_read),
            }),
            cause: format!(
                "'{tname}' does the socket reads and the per-byte work on one thread at \
                 {cores:.2} cores: in the classic consumer the thread that calls poll() also \
                 reads the socket (the post: 0.95 to 0.98 cores, ~1.4 GB/s per consumer)."
            ),
            fix: "receive.buffer.bytes=-1 first; past that, add consumers (and partitions): \
                  one KafkaConsumer's per-byte work stays on one core"
                .into(),
            examples: Vec::new(),
        });
    }

    if let Some(gc) = &r.gc {
        let heap_share = match (gc.heap_after_gc_p50_mb, gc.heap_committed_max_mb) {
            (Some(after), Some(committed)) if committed > 0.0 => Some(after / committed),
            _ => None,
        };
        let heap_full = heap_share.is_some_and(|h| h >= 0.8);
        if gc.pause_share >= 0.10 || (heap_full && gc.collections >= 5) {
            out.push(Diagnosis {
                id: "gc-pressure".into(),
                title: "GC takes a large share of the recording".into(),
                evidence: json!({
                    "collections": gc.collections,
                    "pause_share": gc.pause_share,
                    "pause_total_ms": gc.pause_total_ms,
                    "pause_max_ms": gc.pause_max_ms,
                    "heap_after_gc_p50_mb": gc.heap_after_gc_p50_mb,
                    "heap_committed_max_mb": gc.heap_committed_max_mb,
                }),
                cause: format!(
                    "pauses take {:.0}% of the recording and {}: {} (the post, 16 producers \
                     in one JVM: records waiting in the accumulators, ~190 B of objects per \
                     100 B record, survive young collections; 37% of the window in GC).",
                    gc.pause_share * 100.0,
                    match (gc.heap_after_gc_p50_mb, gc.heap_committed_max_mb) {
                        (Some(a), Some(c)) => format!("the heap after GC is {a:.0} of {c:.0} MB"),
                        _ => "the recording has no heap summary (how full the heap stays after \
                              GC is not known)"
                            .to_string(),
                    },
                    match heap_share {
                        Some(h) if h >= 0.8 => "live data fills the heap",
                        Some(_) =>
                            "the heap is not full after GC, so no live set fills it: \
                                    the time goes to collecting",
                        None => "whether live data fills the heap is not shown",
                    }
                ),
                fix: "bound the backlog: a smaller buffer.memory per producer (2 MB took 16 \
                      producers from 6.6M to 10.1M msg/s in the post); fewer busy threads than \
                      CPUs; a bigger heap helps less"
                    .into(),
                examples: Vec::new(),
            });
        }
    }

    for (name, t) in samples {
        if t.total < 20 || t.deflate * 2 < t.total {
            continue;
        }
        let share = round3(t.deflate as f64 / t.total as f64);
        out.push(Diagnosis {
            id: "deflate-dominates".into(),
            title: format!("'{name}' spends most samples in zlib deflate"),
            evidence: json!({
                "thread": name.to_string(),
                "samples": t.total,
                "deflate_share": share,
                "thread_cores_mean": thread(name).and_then(|t| t.cores_mean),
            }),
            cause: format!(
                "{:.0}% of this thread's samples are in java.util.zip.Deflater (gzip): Java \
                 closes a gzip batch when its estimated compressed size reaches batch.size, so \
                 a 16 KB batch holds ~43 KB of input, and zlib is slower per byte on longer \
                 input (the post: 96% of the sending thread in deflate).",
                share * 100.0
            ),
            fix: "compare at equal input per batch: a smaller batch.size for gzip (3000 B gave \
                  48.2k against 33.9k msg/s), compression.gzip.level=1, or lz4/zstd"
                .into(),
            examples: Vec::new(),
        });
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
