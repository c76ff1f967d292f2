//! `probe-request-ceiling`: Gap 1 of the post, the producer that would not go faster.
//!
//! librdkafka 2.12.1 puts exactly one partition's batch in each ProduceRequest, and a Kafka
//! broker serves one connection's requests one at a time. So a producer with small batches is
//! bound by the broker's fixed cost per request, whatever the partitions, linger or window:
//! the post saw ~240k × 1 KB msg/s in 15.6 KB requests, ~15.4k requests/s ≈ 65 µs each. The
//! probe sweeps batch.size × partitions, reads ProduceRequests/s and bytes per request from
//! librdkafka's statistics, and says where the ceiling is and where raising batch.size stops
//! paying. A last short run with debug=protocol is handed to analyze-protocol-log, so the
//! probe also shows what the log analyzer concludes from the wire.

use crate::broker::{Broker, Producer};
use crate::capture::Sink;
use crate::cli::CommonArgs;
use crate::error::{ProbeError, Result};
use crate::interrupt;
use crate::java::{self, is_java_setting as is_java};
use crate::measure::{self, WindowFigures};
use crate::payload::{PayloadKind, Pool};
use crate::produce::{self, StatsFigures, ThroughputSpec, TopicHandle};
use crate::result::{self, OutDir, ProbeResult, SettingResult, Table, Verdict};
use kgap_analyzers::protocol_log::{self, ProtocolLogOptions};
use kgap_analyzers::svg::{self, LineChart, Scale, Series};
use serde::Serialize;
use serde_json::{json, Map, Value};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

pub const PROBE: &str = "probe-request-ceiling";
pub const FINDING: &str = "request-ceiling";

/// The post's Rust batch.size sweep at 1 KB, 6 partitions (msg/s), 16K … 1M.
pub const POST_RUST_SWEEP: [(u64, f64); 7] = [
    (16384, 233e3),
    (32768, 390e3),
    (65536, 577e3),
    (131072, 768e3),
    (262144, 903e3),
    (524288, 991e3),
    (1048576, 995e3),
];

/// Which librdkafka values the knobs not swept take.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Profile {
    /// librdkafka's defaults for every knob the probe does not sweep.
    Native,
    /// The seed benchmark's Java-like values (max.in.flight 5, batch.num.messages 1000000, …).
    Matched,
}

pub use crate::java::Client;

#[derive(Debug, Clone)]
pub struct Options {
    pub common: CommonArgs,
    pub client: Client,
    pub batch_sizes: Vec<u64>,
    pub partitions: Vec<i32>,
    pub profile: Profile,
    pub size: usize,
    pub kind: PayloadKind,
    pub window: Duration,
    pub warmup_messages: u64,
    /// Payloads in the pool; None: the seed's (16384 × 1 KB = 16 MiB, beyond the CPU cache).
    pub pool_messages: Option<usize>,
    /// Run the short debug=protocol pass for analyze-protocol-log at the end.
    pub diagnose: bool,
}

/// The producer settings of one point; `-X` overrides come after these.
pub fn producer_settings(profile: Profile, batch_size: u64) -> Vec<(&'static str, String)> {
    let mut v = vec![
        // The scenario: acks=1 like the post's baseline (acks did not move the ceiling).
        ("acks", "1".to_string()),
        ("batch.size", batch_size.to_string()),
        ("statistics.interval.ms", "1000".to_string()),
    ];
    if profile == Profile::Matched {
        v.extend([
            ("linger.ms", "5".to_string()),
            ("batch.num.messages", "1000000".to_string()),
            ("max.in.flight.requests.per.connection", "5".to_string()),
            ("queue.buffering.max.kbytes", "32768".to_string()),
            ("message.send.max.retries", "2147483647".to_string()),
            ("request.timeout.ms", "30000".to_string()),
            ("message.timeout.ms", "120000".to_string()),
            ("enable.idempotence", "false".to_string()),
            ("socket.nagle.disable", "true".to_string()),
        ]);
    }
    v
}

/// One run's figures.
#[derive(Debug, Clone, Serialize)]
pub struct RunFigures {
    #[serde(flatten)]
    pub window: WindowFigures,
    /// ProduceRequests per second (statistics: brokers[].req.Produce).
    pub produce_requests_per_s: Option<f64>,
    /// Bytes sent per ProduceRequest (txbytes over requests).
    pub bytes_per_request: Option<f64>,
    /// Mean batch size in bytes and messages (statistics: topics[].batchsize, batchcnt).
    pub batch_bytes_mean: Option<f64>,
    pub msgs_per_batch_mean: Option<f64>,
    /// Broker round trip, median of the per-second p50s and the worst p99 (statistics rtt).
    pub rtt_ms_p50: Option<f64>,
    pub rtt_ms_p99: Option<f64>,
    /// librdkafka's broker threads (rdk:broker*) and the producing thread.
    pub broker_thread_cores: f64,
    pub app_cores: f64,
    pub mock_cores: f64,
    pub delivery_errors: u64,
    pub stats_emits: usize,
}

fn params(batch_size: u64, partitions: i32) -> Map<String, Value> {
    let mut p = Map::new();
    p.insert("partitions".into(), json!(partitions));
    p.insert("batch.size".into(), json!(batch_size));
    p
}

pub fn run(opts: &Options, progress: &dyn Fn(&str)) -> Result<ProbeResult> {
    let java = match opts.client {
        Client::Rust => None,
        _ => {
            crate::java::require_brokers(opts.common.brokers.as_deref())?;
            Some(crate::java::Java::locate()?)
        }
    };
    let broker = Broker::start(opts.common.brokers.as_deref(), &opts.common.property)?;
    for &b in &opts.batch_sizes {
        broker.validate(&producer_settings(opts.profile, b))?;
    }
    let out = OutDir::new(opts.common.out.as_deref(), PROBE)?;
    let pool = match opts.pool_messages {
        None => Pool::new(opts.size, opts.kind),
        Some(_) if opts.client != Client::Rust => {
            return Err(ProbeError::Usage(
                "--pool-messages is for --client rust: the Java companion always builds the \
                 seed's pool, and both clients must send the same bytes"
                    .into(),
            ))
        }
        Some(n) => Pool::with_count(opts.size, opts.kind, n),
    };
    let points: Vec<(i32, u64)> = opts
        .partitions
        .iter()
        .flat_map(|&p| opts.batch_sizes.iter().map(move |&b| (p, b)))
        .collect();
    let rust = opts.client != Client::Java;
    let (all_params, java_base) = crate::java::sweep_params(
        points.iter().map(|&(p, b)| params(b, p)).collect(),
        opts.client,
    );
    let mut result = ProbeResult::new(PROBE, &broker, &pool, opts.common.reps, all_params);
    result.not_measured = not_measured(&broker);
    result.notes = notes(opts);
    progress(&format!("broker: {}", broker.label()));

    'reps: for rep in 1..=opts.common.reps {
        for pi in result::rep_order(rep, points.len()) {
            if interrupt::stopped() {
                result.interrupted = true;
                break 'reps;
            }
            let (parts, batch) = points[pi];
            if let Some(java) = &java {
                let dir = out.run_dir(&format!("java-p{parts}-batch{batch}"), rep)?;
                let Some(run) = java_once(java, &broker, opts, parts, batch, &dir, &result)? else {
                    result.interrupted = true;
                    break 'reps;
                };
                progress(&format!(
                    "java partitions={parts} batch.size={batch} rep {rep}/{}: {} msg/s",
                    opts.common.reps,
                    result::si(run.msgs_per_s),
                ));
                result.settings[java_base + pi].push_run(&JavaFigures::of(&run));
                out.write(&result)?;
            }
            if !rust {
                continue;
            }
            let dir = out.run_dir(&format!("p{parts}-batch{batch}"), rep)?;
            let run = produce_once(&broker, opts, &pool, parts, batch, &dir, false)?;
            result.topic = run.1.clone();
            let run = run.0;
            progress(&format!(
                "partitions={parts} batch.size={batch} rep {rep}/{}: {} msg/s, {} ProduceRequests/s of {} B",
                opts.common.reps,
                result::si(run.window.msgs_per_s),
                run.produce_requests_per_s.map_or("?".into(), result::si),
                run.bytes_per_request.map_or("?".into(), |b| format!("{b:.0}")),
            ));
            let interrupted = interrupt::stopped();
            result.settings[pi].push_run(&run);
            out.write(&result)?;
            if interrupted {
                result.interrupted = true;
                break 'reps;
            }
        }
    }
    result.verdict = Some(verdict(&result.settings, opts.profile));

    // The wire's view: a short debug=protocol,msg run at the smallest batch.size.
    if rust && opts.diagnose && !result.interrupted {
        let parts = *opts.partitions.iter().max().unwrap_or(&1);
        let batch = *opts.batch_sizes.iter().min().unwrap_or(&16384);
        let dir = out.run_dir(&format!("diagnose-p{parts}-batch{batch}"), 1)?;
        progress("a short debug=protocol run for analyze-protocol-log (not part of the table)");
        let short = Options {
            window: Duration::from_millis(1500),
            warmup_messages: opts.warmup_messages.min(20_000),
            ..opts.clone()
        };
        produce_once(&broker, &short, &pool, parts, batch, &dir, true)?;
        let log = dir.join("debug.log");
        let f = std::fs::File::open(&log)
            .map_err(|e| ProbeError::io(format!("reading {}", log.display()), e))?;
        let report = protocol_log::analyze_protocol_log(f, &ProtocolLogOptions::default())
            .map_err(|e| ProbeError::Kafka(format!("analyzing {}: {e}", log.display())))?;
        result.diagnosis = Some(json!({
            "tool": "analyze-protocol-log",
            "log": if out.is_temporary() { Value::Null } else { json!(log) },
            "params": params(batch, parts),
            "diagnoses": report.diagnoses,
        }));
    }
    if !out.is_temporary() {
        let svg = chart(&result).render();
        let p = out.root.join("request-ceiling.svg");
        std::fs::write(&p, svg)
            .map_err(|e| ProbeError::io(format!("writing {}", p.display()), e))?;
    }
    out.write(&result)?;
    Ok(result)
}

fn not_measured(broker: &Broker) -> Vec<String> {
    let mut v = vec![
        "latency (throughput runs measure how fast acks return, not how long a message waits)"
            .to_string(),
        "the broker's own CPU (only this process's threads are sampled)".to_string(),
        "messages still unacknowledged when the window closed (they are not counted)".to_string(),
    ];
    if broker.is_mock() {
        v.push(
            "Apache Kafka's per-request cost: the broker was librdkafka's in-process mock, whose \
             rdk:mock thread shares this machine's cores"
                .to_string(),
        );
    }
    v
}

fn notes(opts: &Options) -> Vec<String> {
    let mut v = vec![format!(
        "profile {}: {}",
        match opts.profile {
            Profile::Native => "native",
            Profile::Matched => "matched",
        },
        match opts.profile {
            Profile::Native => "librdkafka's defaults for every knob not swept (acks=1 as the post's scenario)",
            Profile::Matched => "the seed's Java-like values: linger.ms=5, max.in.flight=5, batch.num.messages=1000000, queue.buffering.max.kbytes=32768, socket.nagle.disable=true",
        }
    )];
    v.push(format!(
        "each run has its own topic (deleted after it), a warmup of {} messages fully acknowledged, then a {:.1} s window counting acknowledged messages",
        opts.warmup_messages,
        opts.window.as_secs_f64()
    ));
    for (k, val) in &opts.common.property {
        v.push(format!("-X {k}={val} (applied last)"));
    }
    v
}

/// The Java companion's figures at one point (one KafkaProducer, the same payloads).
#[derive(Debug, Clone, Serialize)]
pub struct JavaFigures {
    pub messages: u64,
    pub msgs_per_s: f64,
    pub mb_per_s: f64,
    pub cpu_s_per_million: f64,
    pub gc_time_ms: u64,
}

impl JavaFigures {
    fn of(r: &crate::java::CompanionResult) -> JavaFigures {
        JavaFigures {
            messages: r.messages,
            msgs_per_s: r.msgs_per_s,
            mb_per_s: r.mb_per_s,
            cpu_s_per_million: if r.messages > 0 {
                measure::round3(r.process_cpu_s / (r.messages as f64 / 1e6))
            } else {
                0.0
            },
            gc_time_ms: r.gc_time_ms,
        }
    }
}

/// One Java run on a fresh topic: kafka-clients 4.3.1 with acks=1 and batch.size, the rest
/// its defaults (linger.ms 5, max.in.flight 5); the same warmup and window as the Rust runs.
fn java_once(
    java: &crate::java::Java,
    broker: &Broker,
    opts: &Options,
    partitions: i32,
    batch_size: u64,
    dir: &Path,
    result: &ProbeResult,
) -> Result<Option<crate::java::CompanionResult>> {
    let client = vec![
        (
            "bootstrap.servers".to_string(),
            broker.bootstrap().to_string(),
        ),
        ("acks".to_string(), "1".to_string()),
        ("enable.idempotence".to_string(), "false".to_string()),
        ("batch.size".to_string(), batch_size.to_string()),
    ];
    crate::java::run_point(
        java,
        broker,
        PROBE,
        partitions,
        dir,
        &crate::java::Jvm::heap("1g"),
        &[
            ("mode", "produce".into()),
            ("size", opts.size.to_string()),
            ("kind", opts.kind.to_string()),
            ("producers", "1".into()),
            ("warmup", opts.warmup_messages.to_string()),
            ("seconds", format!("{:.3}", opts.window.as_secs_f64())),
        ],
        &client,
        opts.window + Duration::from_secs(180),
        &result.payload_sha256,
    )
    .map(|r| r.map(|(run, _)| run.result))
}

/// One run on a fresh topic: warmup, window, statistics. Returns the figures and the topic.
fn produce_once(
    broker: &Broker,
    opts: &Options,
    pool: &Pool,
    partitions: i32,
    batch_size: u64,
    dir: &Path,
    debug_protocol: bool,
) -> Result<(RunFigures, String)> {
    let topic = broker.create_topic(PROBE, partitions)?;
    let stats_path = dir.join("stats.jsonl");
    let log_path = dir.join("debug.log");
    let sink = Arc::new(
        Sink::to_files(Some(&log_path), Some(&stats_path))
            .map_err(|e| ProbeError::io(format!("creating files in {}", dir.display()), e))?,
    );
    let mut settings = producer_settings(opts.profile, batch_size);
    if debug_protocol {
        settings.push(("debug", "protocol,msg".to_string()));
    }
    let producer = Producer::new(broker, &settings, sink)?;
    let handle = TopicHandle::new(&producer, &topic.name)?;
    let w = produce::measure_throughput(
        &producer,
        &handle,
        partitions,
        pool,
        ThroughputSpec {
            warmup_messages: opts.warmup_messages,
            window: opts.window,
        },
        &stats_path,
    )?;
    drop(handle);
    drop(producer);
    let name = topic.name.clone();
    topic.delete()?;
    let window = measure::window_figures(&w.start, &w.end, &w.ticks);
    measure::write_threads_csv(&dir.join("threads.csv"), &w.ticks);
    let StatsFigures {
        produce_requests_per_s: rps,
        bytes_per_request: bpr,
        batch_bytes_mean: batch,
        msgs_per_batch_mean: msgs,
        rtt_ms_p50: p50,
        rtt_ms_p99: p99,
        ..
    } = produce::stats_figures(&w.stats);
    let sum = |pred: &dyn Fn(&str) -> bool| -> f64 {
        measure::round3(
            window
                .threads
                .iter()
                .filter(|t| pred(&t.name))
                .map(|t| t.cores)
                .sum(),
        )
    };
    Ok((
        RunFigures {
            produce_requests_per_s: rps,
            bytes_per_request: bpr,
            batch_bytes_mean: batch,
            msgs_per_batch_mean: msgs,
            rtt_ms_p50: p50,
            rtt_ms_p99: p99,
            broker_thread_cores: sum(&|n| n.starts_with("rdk:broker")),
            app_cores: sum(&|n| n == "app"),
            mock_cores: sum(&|n| n.starts_with("rdk:mock")),
            delivery_errors: w.delivery_errors,
            stats_emits: w.stats.len(),
            window,
        },
        name,
    ))
}

fn point_of(s: &SettingResult) -> (i64, u64) {
    (
        s.params
            .get("partitions")
            .and_then(Value::as_i64)
            .unwrap_or(0),
        s.params
            .get("batch.size")
            .and_then(Value::as_u64)
            .unwrap_or(0),
    )
}

/// The post's rule for Gap 1, on medians:
/// 1. at the smallest batch.size, more partitions do not help (≤ 1.25x): one partition per
///    ProduceRequest, so the request rate, not the partition count, sets the pace;
/// 2. requests are full batches (bytes per request ≥ half of batch.size);
/// 3. raising batch.size raises throughput ≥ 1.5x: the cost is per request, not per byte.
pub fn verdict(settings: &[SettingResult], profile: Profile) -> Verdict {
    let measured: Vec<&SettingResult> = java::measured(&settings, false).collect();
    let rate = |s: &SettingResult| s.median_of("msgs_per_s").unwrap_or(0.0);
    let Some(smallest) = measured.iter().map(|s| point_of(s).1).min() else {
        return Verdict::cannot_tell(FINDING, "nothing was measured", json!({}));
    };
    let mut parts: Vec<i64> = measured.iter().map(|s| point_of(s).0).collect();
    parts.sort();
    parts.dedup();
    let most = *parts.last().expect("a point");
    let fewest = parts[0];
    let at = |p: i64, b: u64| measured.iter().find(|s| point_of(s) == (p, b)).copied();
    let small_most = at(most, smallest);
    let small_fewest = at(fewest, smallest);
    // The curve at the most partitions: where does it stop rising (< 10% more)?
    let mut curve: Vec<&SettingResult> = measured
        .iter()
        .filter(|s| point_of(s).0 == most)
        .copied()
        .collect();
    curve.sort_by_key(|s| point_of(s).1);
    let best = curve
        .iter()
        .max_by(|a, b| rate(a).total_cmp(&rate(b)))
        .copied();
    let knee = curve
        .windows(2)
        .find(|w| rate(w[1]) < 1.10 * rate(w[0]))
        .map(|w| point_of(w[0]).1)
        .or_else(|| curve.last().map(|s| point_of(s).1));
    let (Some(sm), Some(best)) = (small_most, best) else {
        return Verdict::cannot_tell(
            FINDING,
            "the sweep lacks its smallest batch.size point",
            json!({}),
        );
    };
    let rps = sm.median_of("produce_requests_per_s");
    let bpr = sm.median_of("bytes_per_request");
    let cost_us = rps.filter(|r| *r > 0.0).map(|r| measure::round3(1e6 / r));
    let partition_gain = small_fewest
        .filter(|f| rate(f) > 0.0)
        .map(|f| rate(sm) / rate(f));
    let batch_gain = if rate(sm) > 0.0 {
        rate(best) / rate(sm)
    } else {
        0.0
    };
    let full_batches = bpr.is_some_and(|b| b >= 0.5 * smallest as f64);
    let flat_partitions = fewest == most || partition_gain.is_some_and(|g| g <= 1.25);
    let holds = flat_partitions && full_batches && batch_gain >= 1.5;
    let evidence = json!({
        "profile": profile,
        "smallest_batch_size": smallest,
        "partitions": most,
        "msgs_per_s_at_smallest": rate(sm),
        "produce_requests_per_s_at_smallest": rps,
        "bytes_per_request_at_smallest": bpr,
        "broker_cost_per_request_us": cost_us,
        "gain_from_more_partitions": partition_gain.map(measure::round3),
        "best_batch_size": point_of(best).1,
        "msgs_per_s_at_best": rate(best),
        "gain_from_batch_size": measure::round3(batch_gain),
        "batch_size_where_throughput_stops_rising": knee,
        "post": {
            "msgs_per_s_16k_6_partitions": 233e3,
            "msgs_per_s_1m_6_partitions": 995e3,
            "requests_per_s": 15.4e3,
            "broker_cost_per_request_us": 65,
        },
    });
    let summary = if holds {
        format!(
            "bound by the broker's per-request cost: at batch.size={} the producer sent {} ProduceRequests/s of {} B \
             ≈ {} µs per request, and {} partitions ran {}x the rate of {} (one partition per request); \
             raising batch.size to {} gave {:.1}x ({} → {} msg/s; the post: 233k → 995k). \
             Throughput stops rising at batch.size={}. Fix: raise batch.size (librdkafka's default is 1 MB) and linger.ms.",
            svg::bytes_label(smallest as f64),
            rps.map_or("?".into(), result::si),
            bpr.map_or("?".into(), |b| format!("{b:.0}")),
            cost_us.map_or("?".into(), |c| format!("{c:.0}")),
            most,
            partition_gain.map_or("?".into(), |g| format!("{g:.2}")),
            fewest,
            svg::bytes_label(point_of(best).1 as f64),
            batch_gain,
            result::si(rate(sm)),
            result::si(rate(best)),
            knee.map_or("?".into(), |k| svg::bytes_label(k as f64)),
        )
    } else {
        let mut why = Vec::new();
        if !flat_partitions {
            why.push(format!(
                "more partitions raised the rate {:.2}x at the smallest batch.size",
                partition_gain.unwrap_or(0.0)
            ));
        }
        if !full_batches {
            why.push(format!(
                "requests were not full batches ({} B per request)",
                bpr.map_or("?".into(), |b| format!("{b:.0}"))
            ));
        }
        if batch_gain < 1.5 {
            why.push(format!("a larger batch.size gained only {batch_gain:.2}x"));
        }
        format!("not request-bound here: {}", why.join("; "))
    };
    // One batch.size cannot show a per-request cost: rule 3 compares batch sizes.
    if curve.len() < 2 {
        return Verdict::cannot_tell(
            FINDING,
            format!(
                "only batch.size={} was run at {} partitions: the rule compares batch.size values \
                 (sweep at least two, e.g. --batch-size 16384,1048576)",
                svg::bytes_label(smallest as f64),
                most
            ),
            evidence,
        );
    }
    Verdict {
        finding: FINDING.into(),
        holds,
        decided: true,
        summary,
        evidence,
    }
}

/// msg/s against batch.size, one line per partition count.
pub fn chart(r: &ProbeResult) -> LineChart {
    let mut parts: Vec<i64> = r.settings.iter().map(|s| point_of(s).0).collect();
    parts.sort();
    parts.dedup();
    LineChart {
        title: format!(
            "msg/s against batch.size, {} B messages, {}",
            r.payload.size_bytes,
            if r.broker.is_mock() {
                "embedded mock broker"
            } else {
                "external broker"
            }
        ),
        x_label: "batch.size (bytes, log scale)".into(),
        y_label: "acknowledged msg/s (median)".into(),
        x_scale: Scale::Log(2.0),
        x_format: svg::bytes_label,
        y_format: svg::si_label,
        series: parts
            .iter()
            .map(|&p| Series {
                label: format!("{p} partition{}", if p == 1 { "" } else { "s" }),
                points: java::measured(&r.settings, false)
                    .filter(|s| point_of(s).0 == p)
                    .map(|s| {
                        (
                            point_of(s).1 as f64,
                            s.median_of("msgs_per_s").unwrap_or(0.0),
                        )
                    })
                    .collect(),
            })
            .collect(),
    }
}

pub fn render_text(r: &ProbeResult) -> String {
    let mut s = result::render_header(
        r,
        &format!("{} B {} messages", r.payload.size_bytes, r.payload.kind),
    );
    let mut t = Table::new([
        "partitions",
        "batch.size",
        "msg/s median (min–max)",
        "MB/s",
        "req/s",
        "B/req",
        "rtt p50/p99 ms",
        "rdk:broker",
        "app",
        "CPU s/M",
    ]);
    for set in &r.settings {
        if set.runs.is_empty() || is_java(set) {
            continue;
        }
        let g = |k: &str| set.median_of(k);
        let (p, b) = point_of(set);
        let opt = |x: Option<f64>, f: &dyn Fn(f64) -> String| x.map_or("-".to_string(), f);
        t.row(vec![
            p.to_string(),
            svg::bytes_label(b as f64),
            set.median_range_si("msgs_per_s"),
            format!("{:.0}", g("mb_per_s").unwrap_or(0.0)),
            opt(g("produce_requests_per_s"), &result::si),
            opt(g("bytes_per_request"), &|x| format!("{x:.0}")),
            format!(
                "{}/{}",
                opt(g("rtt_ms_p50"), &|x| format!("{x:.2}")),
                opt(g("rtt_ms_p99"), &|x| format!("{x:.1}"))
            ),
            format!("{:.2}", g("broker_thread_cores").unwrap_or(0.0)),
            format!("{:.2}", g("app_cores").unwrap_or(0.0)),
            format!("{:.2}", g("cpu_s_per_million").unwrap_or(0.0)),
        ]);
    }
    s.push_str(&t.render());
    s.push_str(
        "\nreq/s and B/req: ProduceRequests from librdkafka's statistics (req.Produce, txbytes); \
         rtt: the broker round trip (statistics rtt window); rdk:broker and app: cores of \
         librdkafka's broker threads and of the producing thread; CPU s/M: process CPU seconds \
         per million messages.\n",
    );
    if java::measured(&r.settings, true).next().is_some() {
        s.push_str(&java_table(r));
    }
    let analyzer: Vec<String> = match &r.diagnosis {
        None => Vec::new(),
        Some(d) => {
            let ds = d["diagnoses"].as_array().cloned().unwrap_or_default();
            if ds.is_empty() {
                vec!["analyze-protocol-log on the probe's debug=protocol run: no diagnosis".into()]
            } else {
                ds.iter()
                    .map(|x| {
                        format!(
                            "analyze-protocol-log on the probe's debug=protocol run ({}): {} Fix: {}",
                            x["id"].as_str().unwrap_or("?"),
                            x["cause"].as_str().unwrap_or(""),
                            x["fix"].as_str().unwrap_or("")
                        )
                    })
                    .collect()
            }
        }
    };
    s.push_str(&result::render_footer(r, &analyzer));
    s
}

/// The Java companion's rows, beside librdkafka's at the same points.
fn java_table(r: &ProbeResult) -> String {
    let rust_rate = |p: i64, b: u64| {
        java::measured(&r.settings, false)
            .find(|s| point_of(s) == (p, b))
            .and_then(|s| s.median_of("msgs_per_s"))
    };
    let mut t = Table::new([
        "partitions",
        "batch.size",
        "Java msg/s median (min–max)",
        "MB/s",
        "CPU s/M",
        "Java / librdkafka",
    ]);
    for set in java::measured(&r.settings, true) {
        let (p, b) = point_of(set);
        let j = set.median_of("msgs_per_s").unwrap_or(0.0);
        t.row(vec![
            p.to_string(),
            svg::bytes_label(b as f64),
            set.median_range_si("msgs_per_s"),
            format!("{:.0}", set.median_of("mb_per_s").unwrap_or(0.0)),
            format!("{:.2}", set.median_of("cpu_s_per_million").unwrap_or(0.0)),
            rust_rate(p, b)
                .filter(|x| *x > 0.0)
                .map_or("-".into(), |x| format!("{:.2}x", j / x)),
        ]);
    }
    format!(
        "\nJava (kafka-clients 4.3.1, the kgap companion, one KafkaProducer, acks=1, idempotence \
         off, its other defaults) at the same points, same payloads, warmup and window:\n{}\
         CPU s/M: the JVM's CPU seconds per million messages. kafka-clients puts every ready \
         partition's batch in one ProduceRequest, so partitions help it where they do not help \
         librdkafka.\n",
        t.render()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(p: i32, b: u64, rates: &[f64], rps: f64, bpr: f64) -> SettingResult {
        let mut s = SettingResult::new(params(b, p));
        for &r in rates {
            s.push_run(
                &json!({"msgs_per_s": r, "produce_requests_per_s": rps, "bytes_per_request": bpr}),
            );
        }
        s
    }

    fn post_like(six_at_16k: f64) -> Vec<SettingResult> {
        vec![
            point(1, 16384, &[240e3, 235e3, 245e3], 15.4e3, 15621.0),
            point(1, 1048576, &[700e3], 700.0, 1e6),
            point(6, 16384, &[six_at_16k], 15.4e3, 15621.0),
            point(6, 65536, &[577e3], 9e3, 62000.0),
            point(6, 262144, &[903e3], 3.5e3, 250000.0),
            point(6, 1048576, &[960e3], 950.0, 1e6),
        ]
    }

    #[test]
    fn holds_on_the_posts_shape() {
        let v = verdict(&post_like(233e3), Profile::Native);
        assert!(v.holds, "{v:?}");
        let e = &v.evidence;
        assert!((e["broker_cost_per_request_us"].as_f64().unwrap() - 64.935).abs() < 0.01);
        assert_eq!(e["best_batch_size"], 1048576);
        // 903k → 960k is < 10%: the knee is at 256K.
        assert_eq!(e["batch_size_where_throughput_stops_rising"], 262144);
        assert!(v.summary.contains("per-request cost"));
    }

    #[test]
    fn does_not_hold_when_partitions_help_or_batches_do_not() {
        // Java-like: 6 partitions in one request → 2.3x at 16K.
        let v = verdict(&post_like(552e3), Profile::Native);
        assert!(!v.holds);
        assert!(v.summary.contains("more partitions"));
        let flat = vec![
            point(6, 16384, &[500e3], 5e3, 15000.0),
            point(6, 1048576, &[550e3], 60.0, 1e6),
        ];
        let v = verdict(&flat, Profile::Native);
        assert!(!v.holds);
        assert!(v.summary.contains("gained only"));
        assert!(v.decided);
        let none = verdict(&[], Profile::Native);
        assert!(!none.holds && !none.decided);
    }

    #[test]
    fn one_batch_size_cannot_tell() {
        let v = verdict(&[point(6, 16384, &[36e3], 2.4e3, 15645.0)], Profile::Native);
        assert!(!v.holds && !v.decided, "{v:?}");
        assert!(v.summary.contains("only batch.size=16K"), "{}", v.summary);
    }

    #[test]
    fn matched_profile_pins_javas_values_native_does_not() {
        let n = producer_settings(Profile::Native, 16384);
        assert!(!n
            .iter()
            .any(|(k, _)| *k == "max.in.flight.requests.per.connection"));
        let m = producer_settings(Profile::Matched, 16384);
        assert!(m.contains(&("max.in.flight.requests.per.connection", "5".into())));
        assert!(m.contains(&("batch.size", "16384".into())));
    }
}
