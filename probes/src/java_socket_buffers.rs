//! `probe-java-socket-buffers`: the post's two Java socket-buffer defaults.
//!
//! kafka-clients fixes the socket's buffers: send.buffer.bytes 128 KB (producer) and
//! receive.buffer.bytes 64 KB (consumer); librdkafka leaves them to the OS. The post: with big
//! requests each producer write takes only ~298 KB, and the JDK re-copies the unsent rest of
//! a heap buffer on every write (1 MB batches 630k → 875k msg/s with -1); each consumer read
//! takes ~56 KB on the thread that polls (1 KB consumer 1229k → 1427k msg/s with -1). The
//! probe runs the Java companion with each default and with -1 (OS autotuning), records the
//! window with JFR (every jdk.SocketWrite / jdk.SocketRead, threshold 0) and counts the bytes
//! per socket call with the native JFR reader (`kgap_analyzers::jfr`).

use crate::broker::Broker;
use crate::cli::CommonArgs;
use crate::error::{ProbeError, Result};
use crate::interrupt;
use crate::java::{self, CompanionResult, Java, Jvm};
use crate::measure::round3;
use crate::payload::{PayloadKind, Pool};
use crate::produce;
use crate::result::{self, OutDir, ProbeResult, SettingResult, Table, Verdict};
use kgap_analyzers::jfr::{analyze_jfr, JfrReport, ReportOptions, SocketOp};
use serde::Serialize;
use serde_json::{json, Map, Value};
use std::path::Path;
use std::time::Duration;

pub const PROBE: &str = "probe-java-socket-buffers";
pub const FINDING: &str = "java-fixed-socket-buffers";

#[derive(Debug, Clone)]
pub struct Options {
    pub common: CommonArgs,
    /// Producer batch.size values (1 KB records, as in the post).
    pub batch_sizes: Vec<u64>,
    /// Consumer record sizes (each consumed from its own prefilled topic).
    pub consume_sizes: Vec<usize>,
    /// Bytes prefilled per consume topic.
    pub consume_bytes: u64,
    pub partitions: i32,
    pub window: Duration,
    pub heap: String,
    /// kafka-clients properties for every client, applied last.
    pub java_properties: Vec<(String, String)>,
}

/// One run's figures: the companion's and the socket calls of its window recording.
#[derive(Debug, Clone, Serialize)]
pub struct RunFigures {
    pub messages: u64,
    pub seconds: f64,
    pub msgs_per_s: f64,
    pub mb_per_s: f64,
    pub process_cpu_s: f64,
    pub gc_time_ms: u64,
    /// The measured direction's socket calls (writes for the producer, reads for the
    /// consumer) on the busiest thread: count, per second, bytes per call (mean, p50, max).
    pub socket_thread: Option<String>,
    pub socket_calls: u64,
    pub socket_calls_per_s: f64,
    pub bytes_per_call_mean: f64,
    pub bytes_per_call_p50: u64,
    pub bytes_per_call_max: u64,
    pub socket_mb: f64,
}

fn params(side: &str, knob: &str, value: &str, x: u64) -> Map<String, Value> {
    let mut p = Map::new();
    p.insert("side".into(), json!(side));
    p.insert(
        if side == "produce" {
            "batch.size"
        } else {
            "record_bytes"
        }
        .into(),
        json!(x),
    );
    p.insert(knob.into(), json!(value));
    p
}

#[derive(Debug, Clone, Copy)]
struct Point {
    produce: bool,
    /// batch.size (produce) or record size (consume).
    x: u64,
    /// false: kafka-clients' fixed default; true: -1 (the OS autotunes).
    os: bool,
}

impl Point {
    fn knob(&self) -> &'static str {
        if self.produce {
            "send.buffer.bytes"
        } else {
            "receive.buffer.bytes"
        }
    }
    fn value(&self) -> &'static str {
        match (self.os, self.produce) {
            (true, _) => "-1",
            (false, true) => "default (131072)",
            (false, false) => "default (65536)",
        }
    }
}

pub fn run(opts: &Options, progress: &dyn Fn(&str)) -> Result<ProbeResult> {
    let brokers = java::require_brokers(opts.common.brokers.as_deref())?;
    let java = Java::locate()?;
    let broker = Broker::start(Some(brokers), &opts.common.property)?;
    let out = OutDir::new(opts.common.out.as_deref(), PROBE)?;
    let produce_pool = Pool::new(1024, PayloadKind::Random);
    let mut points = Vec::new();
    for &b in &opts.batch_sizes {
        for os in [false, true] {
            points.push(Point {
                produce: true,
                x: b,
                os,
            });
        }
    }
    for &s in &opts.consume_sizes {
        for os in [false, true] {
            points.push(Point {
                produce: false,
                x: s as u64,
                os,
            });
        }
    }
    let mut result = ProbeResult::new(
        PROBE,
        &broker,
        &produce_pool,
        opts.common.reps,
        points
            .iter()
            .map(|p| {
                params(
                    if p.produce { "produce" } else { "consume" },
                    p.knob(),
                    p.value(),
                    p.x,
                )
            })
            .collect(),
    );
    result.not_measured = vec![
        "the copy cost itself (the post measured it with per-thread CPU and the JDK source): \
         only the bytes per socket call are counted here"
            .into(),
        "the broker's side of the socket".into(),
    ];
    let load_before = java::load_average();
    progress(&format!(
        "broker: {}; {}; load average {}",
        broker.label(),
        java.version,
        load_before.as_deref().unwrap_or("?")
    ));

    // Consume topics: one per record size, prefilled once, read by every consume run.
    let mut consume_topics = Vec::new();
    for &size in &opts.consume_sizes {
        let topic = broker.create_topic(PROBE, opts.partitions)?;
        let pool = Pool::new(size, PayloadKind::Random);
        let messages = (opts.consume_bytes / size as u64).max(1);
        progress(&format!(
            "prefilling {} with {messages} × {size} B (librdkafka, not measured)",
            topic.name
        ));
        produce::prefill(
            &broker,
            &topic.name,
            opts.partitions,
            &pool,
            messages,
            "none",
            progress,
        )?;
        consume_topics.push((size, topic, messages));
    }

    'reps: for rep in 1..=opts.common.reps {
        for pi in result::rep_order(rep, points.len()) {
            if interrupt::stopped() {
                result.interrupted = true;
                break 'reps;
            }
            let p = points[pi];
            let dir = out.run_dir(
                &format!(
                    "{}-{}-{}",
                    if p.produce {
                        "produce-batch"
                    } else {
                        "consume-size"
                    },
                    p.x,
                    if p.os { "os" } else { "default" }
                ),
                rep,
            )?;
            let mut client: Vec<(String, String)> =
                vec![("bootstrap.servers".into(), broker.bootstrap().to_string())];
            if p.os {
                client.push((p.knob().into(), "-1".into()));
            }
            let jvm = Jvm {
                jfr: true,
                ..Jvm::heap(&opts.heap)
            };
            let timeout = opts.window + Duration::from_secs(120);
            let run = if p.produce {
                client.extend([
                    ("acks".to_string(), "1".to_string()),
                    ("enable.idempotence".to_string(), "false".to_string()),
                    ("batch.size".to_string(), p.x.to_string()),
                    ("linger.ms".to_string(), "5".to_string()),
                ]);
                client.extend(opts.java_properties.iter().cloned());
                java::run_point(
                    &java,
                    &broker,
                    PROBE,
                    opts.partitions,
                    &dir,
                    &jvm,
                    &[
                        ("mode", "produce".into()),
                        ("size", "1024".into()),
                        ("producers", "1".into()),
                        ("warmup", "50000".into()),
                        ("seconds", format!("{:.3}", opts.window.as_secs_f64())),
                    ],
                    &client,
                    timeout,
                    &result.payload_sha256,
                )?
                .map(|(run, _)| run)
            } else {
                let (_, topic, messages) = consume_topics
                    .iter()
                    .find(|(s, _, _)| *s as u64 == p.x)
                    .expect("a topic per consume size");
                client.extend(opts.java_properties.iter().cloned());
                match java::run(
                    &java,
                    &dir,
                    &jvm,
                    &[
                        ("mode", "consume".into()),
                        ("topic", topic.name.clone()),
                        ("messages", messages.to_string()),
                        ("size", p.x.to_string()),
                        ("seconds", "120".into()),
                    ],
                    &client,
                    timeout,
                ) {
                    Err(_) if interrupt::stopped() => None,
                    r => Some(r?),
                }
            };
            let Some(run) = run else {
                progress("interrupted: the Java companion was stopped");
                result.interrupted = true;
                break 'reps;
            };
            let Some(jfr) = run.jfr.as_deref() else {
                return Err(ProbeError::Kafka("the run kept no JFR recording".into()));
            };
            let report = read_jfr(jfr)?;
            let f = figures(&run.result, &report, p.produce);
            progress(&format!(
                "{} {}={} {}={}: {} msg/s, {} socket {}s of {} B (p50)",
                if p.produce { "produce" } else { "consume" },
                if p.produce {
                    "batch.size"
                } else {
                    "record bytes"
                },
                p.x,
                p.knob(),
                p.value(),
                result::si(f.msgs_per_s),
                f.socket_calls,
                if p.produce { "write" } else { "read" },
                f.bytes_per_call_p50
            ));
            result.settings[pi].push_run(&f);
            out.write(&result)?;
        }
    }
    for (_, topic, _) in consume_topics {
        result.topic = topic.name.clone();
        topic.delete()?;
    }
    result.notes = vec![
        format!(
            "Java companion: {}, kafka-clients 4.3.1, -Xms=-Xmx={}; the window (producer {:.1} s \
             after 50,000 messages flushed; consumer: first records to the last) is recorded with \
             JFR, every jdk.SocketWrite and jdk.SocketRead (window.jfr in each run's folder)",
            java.version,
            opts.heap,
            opts.window.as_secs_f64()
        ),
        format!(
            "producer: 1 KB records, one KafkaProducer, acks=1, idempotence off, linger.ms 5, \
             {} partitions; consumer: assign() and seek to the start of a topic prefilled by \
             librdkafka with {} MB of records",
            opts.partitions,
            opts.consume_bytes / 1_000_000
        ),
        format!(
            "load average (1/5/15 min) before {} and after {}",
            load_before.as_deref().unwrap_or("?"),
            java::load_average().as_deref().unwrap_or("?")
        ),
    ];
    result.verdict = Some(verdict(&result.settings));
    out.write(&result)?;
    Ok(result)
}

fn read_jfr(path: &Path) -> Result<JfrReport> {
    let f = std::fs::File::open(path)
        .map_err(|e| ProbeError::io(format!("reading {}", path.display()), e))?;
    analyze_jfr(f, &path.display().to_string(), &ReportOptions::default())
        .map_err(|e| ProbeError::Kafka(format!("reading {}: {e}", path.display())))
}

/// The run's figures: the busiest thread's calls in the measured direction.
pub fn figures(r: &CompanionResult, jfr: &JfrReport, produce: bool) -> RunFigures {
    let op = if produce {
        SocketOp::Write
    } else {
        SocketOp::Read
    };
    let row = jfr
        .socket
        .iter()
        .filter(|s| s.op == op)
        .max_by_key(|s| s.bytes_total);
    let secs = if r.seconds > 0.0 { r.seconds } else { 1.0 };
    RunFigures {
        messages: r.messages,
        seconds: r.seconds,
        msgs_per_s: r.msgs_per_s,
        mb_per_s: r.mb_per_s,
        process_cpu_s: r.process_cpu_s,
        gc_time_ms: r.gc_time_ms,
        socket_thread: row.and_then(|s| s.thread.clone()),
        socket_calls: row.map_or(0, |s| s.count),
        socket_calls_per_s: round3(row.map_or(0, |s| s.count) as f64 / secs),
        bytes_per_call_mean: row
            .filter(|s| s.count > 0)
            .map_or(0.0, |s| round3(s.bytes_total as f64 / s.count as f64)),
        bytes_per_call_p50: row.map_or(0, |s| s.bytes_p50),
        bytes_per_call_max: row.map_or(0, |s| s.bytes_max),
        socket_mb: row.map_or(0.0, |s| round3(s.bytes_total as f64 / 1e6)),
    }
}

fn key(s: &SettingResult) -> (bool, u64, bool) {
    let produce = s.params.get("side").and_then(Value::as_str) == Some("produce");
    let x = s
        .params
        .get(if produce {
            "batch.size"
        } else {
            "record_bytes"
        })
        .and_then(Value::as_u64)
        .unwrap_or(0);
    let os = s.params.values().any(|v| v.as_str() == Some("-1"));
    (produce, x, os)
}

/// Holds when, for the producer at the largest batch.size or the consumer at some record
/// size, -1 made the median socket call at least 1.5x larger than the fixed default: the
/// default buffer was what limited each call. The msg/s change is reported beside it.
pub fn verdict(settings: &[SettingResult]) -> Verdict {
    let med = |s: &SettingResult, k: &str| s.median_of(k).unwrap_or(0.0);
    let mut lines = Vec::new();
    let mut evidence = Vec::new();
    let mut holds = false;
    let measured: Vec<&SettingResult> = settings.iter().filter(|s| !s.runs.is_empty()).collect();
    for d in measured.iter().filter(|s| !key(s).2) {
        let (produce, x, _) = key(d);
        let Some(o) = measured.iter().find(|s| key(s) == (produce, x, true)) else {
            continue;
        };
        let (bd, bo) = (med(d, "bytes_per_call_p50"), med(o, "bytes_per_call_p50"));
        let gain = if bd > 0.0 { bo / bd } else { 0.0 };
        let rate = if med(d, "msgs_per_s") > 0.0 {
            med(o, "msgs_per_s") / med(d, "msgs_per_s")
        } else {
            0.0
        };
        let bigger = gain >= 1.5;
        holds |= bigger;
        lines.push(format!(
            "{} {}: {} B per socket {} with the fixed default, {} B with -1 ({:.1}x); {} → {} msg/s ({:+.0}%)",
            if produce { "producer, batch.size" } else { "consumer, records of" },
            kgap_analyzers::svg::bytes_label(x as f64),
            bd,
            if produce { "write" } else { "read" },
            bo,
            gain,
            result::si(med(d, "msgs_per_s")),
            result::si(med(o, "msgs_per_s")),
            100.0 * (rate - 1.0)
        ));
        evidence.push(json!({
            "side": if produce { "produce" } else { "consume" },
            "x": x,
            "bytes_per_call_p50_default": bd,
            "bytes_per_call_p50_os": bo,
            "call_size_gain": round3(gain),
            "msgs_per_s_default": med(d, "msgs_per_s"),
            "msgs_per_s_os": med(o, "msgs_per_s"),
        }));
    }
    let summary = if lines.is_empty() {
        "nothing comparable was measured".to_string()
    } else if holds {
        format!(
            "the fixed socket buffers cap each socket call: {}. Fix: send.buffer.bytes=-1 and \
             receive.buffer.bytes=-1 let the OS size them (the post: 1 MB batches 630k → 875k \
             msg/s, 1 KB consumer 1229k → 1427k)",
            lines.join("; ")
        )
    } else {
        format!(
            "-1 did not make socket calls larger here: {}",
            lines.join("; ")
        )
    };
    Verdict {
        finding: FINDING.into(),
        holds,
        decided: true,
        summary,
        evidence: json!({"pairs": evidence, "post": {"write_bytes_default": 298_000, "write_bytes_os": 692_000, "read_bytes_default": 56_000}}),
    }
}

pub fn render_text(r: &ProbeResult) -> String {
    let mut s = format!(
        "{}: Java socket buffers, fixed default against -1 (OS autotuning), {} reps\nbroker: {}\n\n",
        r.probe,
        r.reps,
        result::broker_line(r)
    );
    let mut t = Table::new([
        "side",
        "size",
        "buffer",
        "msg/s median (min–max)",
        "MB/s",
        "socket calls/s",
        "B/call p50",
        "B/call mean",
        "B/call max",
    ]);
    for set in &r.settings {
        if set.runs.is_empty() {
            continue;
        }
        let (produce, x, os) = key(set);
        let g = |k: &str| set.median_of(k).unwrap_or(0.0);
        t.row(vec![
            if produce {
                "produce write"
            } else {
                "consume read"
            }
            .into(),
            format!(
                "{}{}",
                kgap_analyzers::svg::bytes_label(x as f64),
                if produce { " batch" } else { " records" }
            ),
            if os {
                "-1".into()
            } else if produce {
                "128K".into()
            } else {
                "64K".into()
            },
            set.median_range_si("msgs_per_s"),
            format!("{:.0}", g("mb_per_s")),
            result::si(g("socket_calls_per_s")),
            format!("{:.0}", g("bytes_per_call_p50")),
            format!("{:.0}", g("bytes_per_call_mean")),
            format!("{:.0}", g("bytes_per_call_max")),
        ]);
    }
    s.push_str(&t.render());
    s.push_str(
        "\nbuffer: send.buffer.bytes (produce) or receive.buffer.bytes (consume), kafka-clients' \
         fixed default or -1; socket calls: jdk.SocketWrite (produce) or jdk.SocketRead \
         (consume) events of the busiest thread in the window's JFR recording (threshold 0, \
         read by kgap's native JFR reader); B/call: bytes per call.\n",
    );
    s.push_str(&result::render_footer(r, &[]));
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(side: &str, x: u64, os: bool, rate: f64, p50: f64) -> SettingResult {
        let knob = if side == "produce" {
            "send.buffer.bytes"
        } else {
            "receive.buffer.bytes"
        };
        let mut s = SettingResult::new(params(side, knob, if os { "-1" } else { "default" }, x));
        s.push_run(&json!({"msgs_per_s": rate, "bytes_per_call_p50": p50}));
        s
    }

    #[test]
    fn bigger_calls_with_os_buffers_hold() {
        let v = verdict(&[
            set("produce", 1 << 20, false, 630e3, 298e3),
            set("produce", 1 << 20, true, 875e3, 692e3),
        ]);
        assert!(v.holds, "{}", v.summary);
        assert!(v.summary.contains("2.3x"), "{}", v.summary);
        let v = verdict(&[
            set("consume", 1024, false, 1e6, 56e3),
            set("consume", 1024, true, 1e6, 60e3),
        ]);
        assert!(!v.holds, "{}", v.summary);
        assert!(!verdict(&[]).holds);
    }
}
