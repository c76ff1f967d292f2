//! `probe-java-producers`: the post's "producer that collapsed at K=16", on this machine.
//!
//! K KafkaProducer instances in one JVM (one sending thread each) send 100 B records as fast
//! as they can. Each producer keeps up to buffer.memory (32 MB by default) of unsent batches,
//! and for every record in them a handful of small objects (callback, future, headers, thunk):
//! once the network threads fall behind, that backlog is live data, survives young
//! collections and fills the heap; GC then eats the CPU the network threads needed. The post
//! saw it at K=16 on 16 vCPUs (GC 37% of the window, full GCs ~1/s) and fixed it with
//! buffer.memory=2 MB per producer. The probe sweeps K and buffer.memory, reads GC from the
//! JVM's MXBeans and from its own unified GC log (`kgap_analyzers::gc`), and says where
//! throughput collapses and whether the bounded buffer removes it.

use crate::broker::Broker;
use crate::cli::CommonArgs;
use crate::error::{ProbeError, Result};
use crate::interrupt;
use crate::java::{self, CompanionResult, Java, Jvm};
use crate::measure::round3;
use crate::payload::{PayloadKind, Pool};
use crate::result::{self, OutDir, ProbeResult, SettingResult, Table, Verdict};
use kgap_analyzers::gc::{analyze_gc_logs, GcInput, GcLogOptions, GcReport};
use serde::Serialize;
use serde_json::{json, Map, Value};
use std::time::Duration;

pub const PROBE: &str = "probe-java-producers";
pub const FINDING: &str = "java-producer-gc-collapse";

/// A run collapsed when GC took at least this share of a second (the GC log's worst 1 s
/// window, analyze-gc-log's unit) or of the whole window (the MXBeans) *and* the heap ran out
/// (a full GC or an evacuation failure, or analyze-gc-log's gc-collapse: GC-heavy windows
/// with the heap ≥ 80% full after young GC). GC time alone is not enough: on a CPU-starved
/// machine young pauses stretch without any backlog. A collapse is an episode: it often
/// starts seconds into the window, so the window's mean alone would dilute it.
pub const COLLAPSE_GC_FRACTION: f64 = 0.20;

/// The collapse rule for one run (see [`COLLAPSE_GC_FRACTION`]).
pub fn run_collapsed(
    gc_fraction_window: f64,
    gc_fraction_worst_second: Option<f64>,
    full_gcs: u64,
    evacuation_failures: u64,
    gc_collapse_diagnosed: bool,
) -> bool {
    let gc_heavy =
        gc_fraction_window.max(gc_fraction_worst_second.unwrap_or(0.0)) >= COLLAPSE_GC_FRACTION;
    let heap_ran_out = full_gcs > 0 || evacuation_failures > 0 || gc_collapse_diagnosed;
    gc_heavy && heap_ran_out
}

#[derive(Debug, Clone)]
pub struct Options {
    pub common: CommonArgs,
    /// K values (producers in one JVM).
    pub producers: Vec<u32>,
    /// buffer.memory per producer; None = kafka-clients' default (32 MB).
    pub buffer_memory: Vec<Option<u64>>,
    pub heap: String,
    pub partitions: i32,
    pub size: usize,
    pub window: Duration,
    /// Messages per producer sent and flushed before the window.
    pub warmup_messages: u64,
    /// kafka-clients properties for every producer, applied last.
    pub java_properties: Vec<(String, String)>,
}

/// The post's heap per vCPU: 2 GB for K=16 on 16 vCPUs.
pub const POST_HEAP_MB_PER_CORE: usize = 2048 / 16;

/// The default heap on a machine with `cores`: the post's heap per vCPU times the cores, at
/// least 256m. Senders, and so the backlog they build, scale with the cores; a fixed heap
/// would hide the collapse on a big machine and fake it on a small one.
pub fn default_heap(cores: usize) -> String {
    format!("{}m", (POST_HEAP_MB_PER_CORE * cores).max(256))
}

/// The producer settings of one run; `-J` comes after these.
pub fn producer_settings(buffer_memory: Option<u64>) -> Vec<(String, String)> {
    let mut v = vec![
        // The seed's baseline producer: acks=1, idempotence off (linger.ms 5 and batch.size
        // 16384 are kafka-clients 4.3.1's defaults already).
        ("acks".to_string(), "1".to_string()),
        ("enable.idempotence".to_string(), "false".to_string()),
    ];
    if let Some(b) = buffer_memory {
        v.push(("buffer.memory".to_string(), b.to_string()));
    }
    v
}

/// One run's figures: the companion's window figures and the GC log's reading.
#[derive(Debug, Clone, Serialize)]
pub struct RunFigures {
    pub messages: u64,
    pub seconds: f64,
    pub msgs_per_s: f64,
    pub mb_per_s: f64,
    pub send_to_ack_ms_p50: Option<f64>,
    pub send_to_ack_ms_p99: Option<f64>,
    pub send_to_ack_ms_max: Option<f64>,
    pub latency_samples: u64,
    /// GC over the window (MXBeans): collections, pause time and its share of the window,
    /// full collections (old-generation collector).
    pub gc_count: u64,
    pub gc_time_ms: u64,
    pub gc_fraction: f64,
    pub full_gcs: u64,
    pub process_cpu_s: f64,
    pub cpu_s_per_million: f64,
    pub rss_mb: f64,
    pub delivery_errors: u64,
    /// The backlog at the window's end: messages sent and not acknowledged, the accumulators'
    /// bytes in use (all producers), and the seconds send() spent blocked on a full
    /// buffer.memory during the window (summed over producers).
    pub sent_per_s: Option<f64>,
    pub backlog_messages_end: Option<i64>,
    pub buffer_used_mb_end: Option<f64>,
    pub buffer_wait_s: Option<f64>,
    /// From analyze-gc-log on the run's whole gc.log (JVM start to exit, warmup included).
    pub log_full_gcs: u64,
    pub log_evacuation_failures: u64,
    pub log_gc_fraction_max_window: Option<f64>,
    /// Heap after young GC, % of the maximum: mean and last over the log.
    pub heap_after_young_mean_pct: Option<f64>,
    pub heap_after_young_last_pct: Option<f64>,
    pub log_diagnoses: Vec<String>,
    /// 1 when this run collapsed (see [`COLLAPSE_GC_FRACTION`]), else 0; its median over
    /// reps is the majority.
    pub collapsed: u8,
    /// 1 when the JVM threw OutOfMemoryError before the window ended (then collapsed is 1
    /// and the window figures are 0: nothing more was acknowledged).
    pub out_of_memory: u8,
}

fn params(k: u32, buffer_memory: Option<u64>) -> Map<String, Value> {
    let mut p = Map::new();
    p.insert(
        "buffer.memory".into(),
        buffer_memory.map_or(json!("default"), |b| json!(b)),
    );
    p.insert("producers".into(), json!(k));
    p
}

fn point_of(s: &SettingResult) -> (Option<u64>, u32) {
    (
        s.params.get("buffer.memory").and_then(Value::as_u64),
        s.params
            .get("producers")
            .and_then(Value::as_u64)
            .unwrap_or(0) as u32,
    )
}

pub fn run(opts: &Options, progress: &dyn Fn(&str)) -> Result<ProbeResult> {
    let brokers = java::require_brokers(opts.common.brokers.as_deref())?;
    let java = Java::locate()?;
    let broker = Broker::start(Some(brokers), &opts.common.property)?;
    let out = OutDir::new(opts.common.out.as_deref(), PROBE)?;
    let pool = Pool::new(opts.size, PayloadKind::Random);
    let points: Vec<(Option<u64>, u32)> = opts
        .buffer_memory
        .iter()
        .flat_map(|&b| opts.producers.iter().map(move |&k| (b, k)))
        .collect();
    let mut result = ProbeResult::new(
        PROBE,
        &broker,
        &pool,
        opts.common.reps,
        points.iter().map(|&(b, k)| params(k, b)).collect(),
    );
    result.not_measured = not_measured();
    let load_before = java::load_average();
    progress(&format!(
        "broker: {}; {}; load average {}",
        broker.label(),
        java.version,
        load_before.as_deref().unwrap_or("?")
    ));
    let mut versions: Option<(String, String)> = None;

    'reps: for rep in 1..=opts.common.reps {
        for pi in result::rep_order(rep, points.len()) {
            if interrupt::stopped() {
                result.interrupted = true;
                break 'reps;
            }
            let (bm, k) = points[pi];
            let dir = out.run_dir(
                &format!(
                    "bm{}-k{k}",
                    bm.map_or("default".to_string(), |b| b.to_string())
                ),
                rep,
            )?;
            let mut client: Vec<(String, String)> =
                vec![("bootstrap.servers".into(), broker.bootstrap().to_string())];
            client.extend(producer_settings(bm));
            client.extend(opts.java_properties.iter().cloned());
            let point = java::run_point(
                &java,
                &broker,
                PROBE,
                opts.partitions,
                &dir,
                &Jvm::heap(&opts.heap),
                &[
                    ("mode", "produce".into()),
                    ("size", opts.size.to_string()),
                    ("kind", "random".into()),
                    ("producers", k.to_string()),
                    ("warmup", opts.warmup_messages.to_string()),
                    ("seconds", format!("{:.3}", opts.window.as_secs_f64())),
                ],
                &client,
                opts.window + Duration::from_secs(120),
                &result.payload_sha256,
            );
            let figures = match point {
                Ok(Some((run, topic))) => {
                    result.topic = topic;
                    let r = &run.result;
                    versions
                        .get_or_insert((r.java_version.clone(), r.kafka_clients_version.clone()));
                    figures(r, &read_gc_log(&run.gc_log)?)
                }
                Ok(None) => {
                    progress("interrupted: the Java companion was stopped");
                    result.interrupted = true;
                    break 'reps;
                }
                // The heap ran out for good: the finding's end state, not a failed probe.
                Err(ProbeError::JavaOutOfMemory(msg)) => {
                    progress(&format!(
                        "buffer.memory={} K={k} rep {rep}/{}: out of memory, counted as \
                         collapsed with 0 msg/s ({msg})",
                        bm.map_or("default".into(), bytes),
                        opts.common.reps,
                    ));
                    let f = figures_out_of_memory(&read_gc_log(&dir.join("gc.log"))?);
                    result.settings[pi].push_run(&f);
                    out.write(&result)?;
                    continue;
                }
                Err(e) => return Err(e),
            };
            progress(&format!(
                "buffer.memory={} K={k} rep {rep}/{}: {} msg/s, p99 {} ms, GC {:.0}% of the window, {} full GCs",
                bm.map_or("default".into(), bytes),
                opts.common.reps,
                result::si(figures.msgs_per_s),
                figures
                    .send_to_ack_ms_p99
                    .map_or("?".into(), |x| format!("{x:.1}")),
                100.0 * figures.gc_fraction,
                figures.full_gcs,
            ));
            result.settings[pi].push_run(&figures);
            out.write(&result)?;
        }
    }
    result.notes = notes(
        opts,
        &java,
        versions.as_ref(),
        load_before,
        java::load_average(),
    );
    result.verdict = Some(verdict(&result.settings, &opts.heap));
    out.write(&result)?;
    Ok(result)
}

fn bytes(b: u64) -> String {
    kgap_analyzers::svg::bytes_label(b as f64)
}

fn read_gc_log(path: &std::path::Path) -> Result<GcReport> {
    let f = std::fs::File::open(path)
        .map_err(|e| ProbeError::io(format!("reading {}", path.display()), e))?;
    analyze_gc_logs(
        vec![GcInput {
            name: path.display().to_string(),
            reader: Box::new(f),
        }],
        &GcLogOptions::default(),
        None,
    )
    .map_err(|e| ProbeError::Kafka(format!("analyzing {}: {e}", path.display())))
}

/// A run's figures from the companion's result and its GC log.
pub fn figures(r: &CompanionResult, gc: &GcReport) -> RunFigures {
    RunFigures {
        messages: r.messages,
        seconds: r.seconds,
        msgs_per_s: r.msgs_per_s,
        mb_per_s: r.mb_per_s,
        send_to_ack_ms_p50: r.send_to_ack_ms_p50.filter(|x| *x >= 0.0),
        send_to_ack_ms_p99: r.send_to_ack_ms_p99.filter(|x| *x >= 0.0),
        send_to_ack_ms_max: r.send_to_ack_ms_max.filter(|x| *x >= 0.0),
        latency_samples: r.latency_samples.unwrap_or(0),
        gc_count: r.gc_count,
        gc_time_ms: r.gc_time_ms,
        gc_fraction: r.gc_fraction,
        full_gcs: r.full_gcs(),
        process_cpu_s: r.process_cpu_s,
        cpu_s_per_million: if r.messages > 0 {
            round3(r.process_cpu_s / (r.messages as f64 / 1e6))
        } else {
            0.0
        },
        rss_mb: round3(r.rss_bytes as f64 / 1e6),
        delivery_errors: r.delivery_errors.unwrap_or(0),
        sent_per_s: r.sent_per_s,
        backlog_messages_end: r.backlog_messages_end,
        buffer_used_mb_end: r.buffer_used_bytes_end.map(|b| round3(b as f64 / 1e6)),
        buffer_wait_s: r.buffer_wait_s,
        log_full_gcs: gc.full_gcs,
        log_evacuation_failures: gc.evacuation_failures,
        log_gc_fraction_max_window: gc.gc_fraction_max_window.map(round3),
        heap_after_young_mean_pct: gc.heap_after_young.as_ref().map(|h| round3(h.mean_pct)),
        heap_after_young_last_pct: gc.heap_after_young.as_ref().map(|h| round3(h.last_pct)),
        log_diagnoses: gc.diagnoses.iter().map(|d| d.id.to_string()).collect(),
        collapsed: u8::from(run_collapsed(
            r.gc_fraction,
            gc.gc_fraction_max_window,
            r.full_gcs().max(gc.full_gcs),
            gc.evacuation_failures,
            gc.diagnoses.iter().any(|d| d.id == "gc-collapse"),
        )),
        out_of_memory: 0,
    }
}

/// A run whose JVM threw OutOfMemoryError: the collapse run to its end. No RESULT line, so
/// the window figures are 0 (a producer that died acknowledges nothing more) and GC comes
/// from the run's gc.log alone (its whole life, warmup included).
pub fn figures_out_of_memory(gc: &GcReport) -> RunFigures {
    let mut f = figures(&CompanionResult::default(), gc);
    f.gc_count = gc.pauses.count;
    f.gc_time_ms = gc.pauses.total_ms.round() as u64;
    f.gc_fraction = match gc.duration_s {
        Some(d) if d > 0.0 => round3(gc.pauses.total_ms / 1000.0 / d),
        _ => 0.0,
    };
    f.full_gcs = gc.full_gcs;
    f.collapsed = 1;
    f.out_of_memory = 1;
    f
}

fn not_measured() -> Vec<String> {
    vec![
        "send-to-ack latency of every message: one message in 16 is timed (a reusable slot, so \
         timing allocates nothing); a sample whose slot is still in flight is skipped"
            .to_string(),
        "the broker's CPU and GC (only the companion JVM is measured)".to_string(),
        "a class histogram of what is live (run jmap -histo on the companion for that)".to_string(),
    ]
}

fn notes(
    opts: &Options,
    java: &Java,
    versions: Option<&(String, String)>,
    load_before: Option<String>,
    load_after: Option<String>,
) -> Vec<String> {
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let mut v = vec![
        format!(
            "Java companion: {} ({}), kafka-clients {}; one JVM per run, G1, -Xms=-Xmx={}{}, \
             unified GC log kept as gc.log in each run's folder",
            java.version,
            versions.map_or("?", |v| v.0.as_str()),
            versions.map_or("?", |v| v.1.as_str()),
            opts.heap,
            if opts.heap == default_heap(cores) {
                format!(" (the post's {POST_HEAP_MB_PER_CORE} MB per vCPU × {cores} cores)")
            } else {
                String::new()
            }
        ),
        format!(
            "each run: its own topic of {} partitions (deleted after it); every producer sends \
             {} messages and flushes them, then a {:.1} s window counting acknowledged messages",
            opts.partitions,
            opts.warmup_messages,
            opts.window.as_secs_f64()
        ),
        "producers: acks=1, enable.idempotence=false (the seed's baseline); other settings are \
         kafka-clients 4.3.1's defaults (buffer.memory 32 MB, batch.size 16384, linger.ms 5)"
            .to_string(),
        format!(
            "load average (1/5/15 min) before {} and after {}: other work on this machine \
             shares its {cores} cores",
            load_before.as_deref().unwrap_or("?"),
            load_after.as_deref().unwrap_or("?"),
        ),
    ];
    for (k, val) in &opts.java_properties {
        v.push(format!("-J {k}={val} (applied last to every producer)"));
    }
    v
}

/// The rule, on medians: a point collapsed when most of its reps did ([`run_collapsed`]). The finding
/// holds when some K collapsed at the default buffer.memory (its throughput against the best
/// smaller K says how much that cost) and a bounded buffer.memory at that K did not collapse.
pub fn verdict(settings: &[SettingResult], heap: &str) -> Verdict {
    let med = |s: &SettingResult, k: &str| s.median_of(k).unwrap_or(0.0);
    let measured: Vec<&SettingResult> = settings.iter().filter(|s| !s.runs.is_empty()).collect();
    let mut default: Vec<&SettingResult> = measured
        .iter()
        .filter(|s| point_of(s).0.is_none())
        .copied()
        .collect();
    default.sort_by_key(|s| point_of(s).1);
    let collapsed = |s: &SettingResult| med(s, "collapsed") > 0.5;
    let first = default.iter().find(|s| collapsed(s)).copied();
    let row = |s: &SettingResult| {
        json!({
            "producers": point_of(s).1,
            "buffer_memory": point_of(s).0,
            "msgs_per_s": med(s, "msgs_per_s"),
            "send_to_ack_ms_p99": s.median_of("send_to_ack_ms_p99"),
            "gc_fraction": med(s, "gc_fraction"),
            "full_gcs": med(s, "full_gcs"),
            "heap_after_young_mean_pct": s.median_of("heap_after_young_mean_pct"),
            "buffer_used_mb_end": s.median_of("buffer_used_mb_end"),
            "collapsed": collapsed(s),
        })
    };
    let Some(c) = first else {
        let worst = default
            .iter()
            .max_by(|a, b| med(a, "gc_fraction").total_cmp(&med(b, "gc_fraction")));
        return Verdict {
            finding: FINDING.into(),
            holds: false,
            decided: true,
            summary: match worst {
                Some(w) => format!(
                    "no GC collapse at the default buffer.memory up to K={} with a {heap} heap: \
                     GC took at most {:.0}% of a window (at K={}, {} MB of batches waiting at \
                     its end). The backlog only builds once the producers' network threads (and \
                     the broker) fall behind the sending threads, i.e. with more busy threads \
                     than cores, and only fills a heap sized like the post's (2 GB on 16 vCPUs, \
                     128 MB per vCPU): try a smaller --heap or more producers (--producers 16,32)",
                    default.last().map_or(0, |s| point_of(s).1),
                    100.0 * med(w, "gc_fraction"),
                    point_of(w).1,
                    w.median_of("buffer_used_mb_end")
                        .map_or("?".into(), |x| format!("{x:.0}")),
                ),
                None => "nothing was measured at the default buffer.memory".into(),
            },
            evidence: json!({"default": default.iter().map(|s| row(s)).collect::<Vec<_>>()}),
        };
    };
    let k = point_of(c).1;
    let best_before = default
        .iter()
        .filter(|s| point_of(s).1 < k)
        .max_by(|a, b| med(a, "msgs_per_s").total_cmp(&med(b, "msgs_per_s")))
        .copied();
    let bounded: Vec<&SettingResult> = measured
        .iter()
        .filter(|s| point_of(s).0.is_some() && point_of(s).1 == k)
        .copied()
        .collect();
    let fixed = bounded.iter().find(|s| !collapsed(s)).copied();
    let holds = fixed.is_some();
    let drop = best_before.map(|b| {
        format!(
            " against {} at K={}",
            result::si(med(b, "msgs_per_s")),
            point_of(b).1
        )
    });
    let collapse = format!(
        "at the default buffer.memory (32 MB per producer) GC collapses at K={k} with a {heap} \
         heap: {} MB of batches waiting, GC {:.0}% of the window, {} full GCs, heap after young \
         GC {} full, send-to-ack p99 {} ms, {} msg/s{}",
        c.median_of("buffer_used_mb_end")
            .map_or("?".into(), |x| format!("{x:.0}")),
        100.0 * med(c, "gc_fraction"),
        med(c, "full_gcs"),
        c.median_of("heap_after_young_mean_pct")
            .map_or("?".into(), |x| format!("{x:.0}%")),
        c.median_of("send_to_ack_ms_p99")
            .map_or("?".into(), |x| format!("{x:.0}")),
        result::si(med(c, "msgs_per_s")),
        drop.unwrap_or_default()
    );
    let oom = c.runs.iter().filter(|r| r["out_of_memory"] == 1).count();
    let collapse = if oom > 0 {
        format!(
            "{collapse}; {oom} of {} reps ran out of memory (OutOfMemoryError)",
            c.runs.len()
        )
    } else {
        collapse
    };
    let summary = match (fixed, bounded.first()) {
        (Some(f), _) => format!(
            "{collapse}. buffer.memory={} removes it: heap after young GC {} full, {} full GCs, \
             GC {:.0}% of the window, {} msg/s, p99 {} ms (the post: 2 MB per producer → 10.1M \
             msg/s, p99 54 ms at K=16). Fix: bound buffer.memory per producer (the backlog, not \
             the heap, is the problem).",
            point_of(f).0.map_or("?".into(), bytes),
            f.median_of("heap_after_young_mean_pct")
                .map_or("?".into(), |x| format!("{x:.0}%")),
            med(f, "full_gcs"),
            100.0 * med(f, "gc_fraction"),
            result::si(med(f, "msgs_per_s")),
            f.median_of("send_to_ack_ms_p99")
                .map_or("?".into(), |x| format!("{x:.0}")),
        ),
        (None, Some(b)) => format!(
            "{collapse}. The bounded buffer.memory={} did not remove it (GC {:.0}%): try a \
             smaller bound or a larger heap",
            point_of(b).0.map_or("?".into(), bytes),
            100.0 * med(b, "gc_fraction")
        ),
        (None, None) => format!(
            "{collapse}. No bounded buffer.memory was run at K={k}, so the fix is untested \
             (add --buffer-memory default,2M)"
        ),
    };
    Verdict {
        finding: FINDING.into(),
        holds,
        decided: true,
        summary,
        evidence: json!({
            "collapse_gc_fraction": COLLAPSE_GC_FRACTION,
            "heap": heap,
            "collapsed_at": row(c),
            "best_before": best_before.map(row),
            "bounded": bounded.iter().map(|s| row(s)).collect::<Vec<_>>(),
            "post": {"k": 16, "gc_fraction": 0.37, "bounded_msgs_per_s": 10.1e6, "bounded_p99_ms": 54},
        }),
    }
}

pub fn render_text(r: &ProbeResult) -> String {
    let mut s = format!(
        "{}: K Java producers in one JVM, {} B {} messages, {} reps\nbroker: {}\npayload pool sha256: {} (the Java companion's, checked equal to the Rust kit's)\n\n",
        r.probe,
        r.payload.size_bytes,
        r.payload.kind,
        r.reps,
        result::broker_line(r),
        r.payload_sha256
    );
    let mut t = Table::new([
        "buffer.memory",
        "K",
        "msg/s median (min–max)",
        "ack p50/p99 ms",
        "GCs",
        "GC ms",
        "GC %",
        "worst s",
        "full GCs",
        "heap after young",
        "buffer MB",
        "blocked s",
        "CPU s/M",
        "RSS MB",
        "collapsed",
    ]);
    for set in &r.settings {
        if set.runs.is_empty() {
            continue;
        }
        let g = |k: &str| set.median_of(k);
        let (bm, k) = point_of(set);
        let opt = |x: Option<f64>, f: &dyn Fn(f64) -> String| x.map_or("-".to_string(), f);
        t.row(vec![
            bm.map_or("default".into(), bytes),
            k.to_string(),
            set.median_range_si("msgs_per_s"),
            format!(
                "{}/{}",
                opt(g("send_to_ack_ms_p50"), &|x| format!("{x:.1}")),
                opt(g("send_to_ack_ms_p99"), &|x| format!("{x:.0}"))
            ),
            opt(g("gc_count"), &|x| format!("{x:.0}")),
            opt(g("gc_time_ms"), &|x| format!("{x:.0}")),
            opt(g("gc_fraction"), &|x| format!("{:.0}%", 100.0 * x)),
            opt(g("log_gc_fraction_max_window"), &|x| {
                format!("{:.0}%", 100.0 * x)
            }),
            opt(g("full_gcs"), &|x| format!("{x:.0}")),
            opt(g("heap_after_young_mean_pct"), &|x| format!("{x:.0}%")),
            opt(g("buffer_used_mb_end"), &|x| format!("{x:.0}")),
            opt(g("buffer_wait_s"), &|x| format!("{x:.1}")),
            opt(g("cpu_s_per_million"), &|x| format!("{x:.2}")),
            opt(g("rss_mb"), &|x| format!("{x:.0}")),
            {
                let count = |k: &str| set.runs.iter().filter(|r| r[k] == 1).count();
                let oom = count("out_of_memory");
                format!(
                    "{}/{}{}",
                    count("collapsed"),
                    set.runs.len(),
                    if oom > 0 {
                        format!(", {oom} OOM")
                    } else {
                        String::new()
                    }
                )
            },
        ]);
    }
    s.push_str(&t.render());
    s.push_str(
        "\nmsg/s: acknowledged messages in the window, all producers; ack p50/p99: send-to-ack \
         of sampled messages; GCs, GC ms, GC %, full GCs: the JVM's GC MXBeans over the window \
         (GC % = pause time / window); worst s: GC's share of the worst second in the run's gc.log; heap after young: mean heap after young GC as a share of \
         the maximum, from analyze-gc-log on the run's gc.log (whole run); buffer MB: the \
         accumulators' bytes in use at the window's end (the backlog buffer.memory bounds); \
         blocked s: time send() waited for buffer.memory in the window, summed over producers; CPU s/M: the JVM's CPU \
         seconds per million messages; collapsed: reps where GC took ≥ 20% of the window or of its worst second \
         and the heap ran out (a full GC or an evacuation failure); OOM: reps whose JVM threw \
         OutOfMemoryError (counted as collapsed, at 0 msg/s).\n",
    );
    s.push_str(&result::render_footer(r, &[]));
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(bm: Option<u64>, k: u32, rate: f64, gc: f64) -> SettingResult {
        let mut s = SettingResult::new(params(k, bm));
        // Collapsed when GC-heavy, as if the heap had also run out.
        let collapsed = u8::from(gc >= COLLAPSE_GC_FRACTION);
        s.push_run(
            &json!({"msgs_per_s": rate, "gc_fraction": gc, "full_gcs": 0, "collapsed": collapsed,
            "send_to_ack_ms_p99": 10.0, "heap_after_young_mean_pct": 50.0}),
        );
        s
    }

    #[test]
    fn collapse_and_fix() {
        let two_mb = Some(2 << 20);
        let v = verdict(
            &[
                point(None, 1, 1e6, 0.01),
                point(None, 2, 1.5e6, 0.02),
                point(None, 4, 0.9e6, 0.35),
                point(None, 8, 0.5e6, 0.5),
                point(two_mb, 4, 1.6e6, 0.03),
            ],
            "512m",
        );
        assert!(v.holds, "{v:?}");
        assert_eq!(v.evidence["collapsed_at"]["producers"], 4);
        assert_eq!(v.evidence["best_before"]["producers"], 2);
        assert!(v.summary.contains("K=4"), "{}", v.summary);
        assert!(v.summary.contains("removes it"), "{}", v.summary);
        assert!(
            v.summary.contains("900k msg/s against 1.50M at K=2"),
            "{}",
            v.summary
        );
    }

    #[test]
    fn no_collapse_or_no_fix() {
        let v = verdict(
            &[point(None, 1, 1e6, 0.01), point(None, 8, 1e6, 0.1)],
            "512m",
        );
        assert!(!v.holds);
        assert!(v.summary.contains("no GC collapse"), "{}", v.summary);
        let v = verdict(
            &[point(None, 4, 1e6, 0.4), point(Some(2 << 20), 4, 1e6, 0.3)],
            "512m",
        );
        assert!(!v.holds);
        assert!(v.summary.contains("did not remove it"), "{}", v.summary);
        let v = verdict(&[point(None, 4, 1e6, 0.4)], "512m");
        assert!(!v.holds);
        assert!(v.summary.contains("untested"), "{}", v.summary);
        assert!(!verdict(&[], "512m").holds);
    }

    #[test]
    fn a_collapse_needs_heavy_gc_and_a_heap_that_ran_out() {
        // A run seen here: 19.6% over the window, 37.5% in its worst second, a full GC.
        assert!(run_collapsed(0.196, Some(0.375), 1, 2, false));
        assert!(run_collapsed(0.25, None, 0, 0, true));
        // Heavy GC, but the heap never ran out: CPU starvation, not a backlog.
        assert!(!run_collapsed(0.30, Some(0.45), 0, 0, false));
        // The heap ran out once, but GC stayed light.
        assert!(!run_collapsed(0.05, Some(0.12), 1, 0, false));
        assert!(!run_collapsed(0.0, None, 0, 0, false));
    }

    #[test]
    fn default_heap_is_the_posts_heap_per_vcpu() {
        assert_eq!(default_heap(16), "2048m"); // the post's machine: its 2 GB
        assert_eq!(default_heap(2), "256m");
        assert_eq!(default_heap(1), "256m"); // the floor: the JVM and the pool need room
        assert_eq!(default_heap(64), "8192m");
    }
}
