//! `probe-gzip-batch`: gzip, not the same batch.
//!
//! The post compared gzip at batch.size 16 KB: Java 33.9k msg/s at a ratio of 5.39, librdkafka
//! 46.4k at 4.70. The setting means different things. librdkafka stops adding records when the
//! *uncompressed* MessageSet would pass batch.size (`rd_kafka_msgset_writer_write_msgq`: the
//! limit is min(batch.size, message.max.bytes) on the records as written, before the codec
//! runs); Java closes a batch when its *estimated compressed* size reaches batch.size, so a Java
//! batch holds several times more input. zlib compresses longer input better and, on this
//! workload, more slowly: librdkafka at 88 KB drops to 27.5k msg/s at 5.71, Java at 3000 B rises
//! to 48.2k at 4.15. The probe sweeps batch.size × compression.level for one codec on word-list
//! text, reads input and wire bytes per batch from librdkafka's statistics (topics[].batchcnt
//! and batchsize, the MessageSet after compression), and says whether the speed-for-ratio
//! trade shows. [`java_equivalent`] turns a Java batch.size into the librdkafka batch.size with
//! the same input per batch at the measured ratio.

use crate::broker::{Broker, Producer};
use crate::capture::Sink;
use crate::cli::CommonArgs;
use crate::error::{ProbeError, Result};
use crate::interrupt;
use crate::java::{self, is_java_setting as is_java, Client, CompanionResult};
use crate::measure::{self, WindowFigures};
use crate::payload::{PayloadKind, Pool};
use crate::produce::{self, StatsFigures, ThroughputSpec, TopicHandle};
use crate::result::{self, OutDir, ProbeResult, SettingResult, Table, Verdict};
use kgap_analyzers::svg::{self, LineChart, Scale, Series};
use serde::Serialize;
use serde_json::{json, Map, Value};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

pub const PROBE: &str = "probe-gzip-batch";
pub const FINDING: &str = "gzip-batch-semantics";

/// The post's gzip figures, 1 KB text, 6 partitions: (client, batch.size, input per batch,
/// msg/s, ratio). Java's input per batch is the post's "about 43 KB" and "about 8 KB".
pub const POST_FIGURES: [(&str, u64, u64, f64, f64); 4] = [
    ("java", 16384, 43_000, 33.9e3, 5.39),
    ("librdkafka", 16384, 16384, 46.4e3, 4.70),
    ("librdkafka", 90112, 90112, 27.5e3, 5.71),
    ("java", 3000, 8_000, 48.2e3, 4.15),
];

/// The codecs librdkafka knows; whether this build has one is in `builtin.features`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Codec {
    Gzip,
    Lz4,
    Zstd,
    Snappy,
}

impl Codec {
    pub fn name(self) -> &'static str {
        match self {
            Codec::Gzip => "gzip",
            Codec::Lz4 => "lz4",
            Codec::Zstd => "zstd",
            Codec::Snappy => "snappy",
        }
    }
}

#[derive(Debug, Clone)]
pub struct Options {
    pub common: CommonArgs,
    /// rust: librdkafka; java: the Java companion at the same points; both: side by side.
    pub client: Client,
    pub codec: Codec,
    pub batch_sizes: Vec<u64>,
    /// compression.level values (-1 = the codec's default, 6 for gzip).
    pub levels: Vec<i32>,
    pub partitions: i32,
    pub size: usize,
    pub kind: PayloadKind,
    pub window: Duration,
    pub warmup_messages: u64,
    /// A Java batch.size to translate into librdkafka's (`--java-equivalent`).
    pub java_equivalent: Option<u64>,
}

/// The producer settings of one point; `-X` overrides come after these.
pub fn producer_settings(codec: Codec, level: i32, batch_size: u64) -> Vec<(&'static str, String)> {
    vec![
        // The post's baseline producer: acks=1, linger.ms=5.
        ("acks", "1".to_string()),
        ("linger.ms", "5".to_string()),
        ("compression.type", codec.name().to_string()),
        ("compression.level", level.to_string()),
        ("batch.size", batch_size.to_string()),
        ("statistics.interval.ms", "1000".to_string()),
    ]
}

/// librdkafka's `builtin.features` of this build (e.g. "gzip,snappy,ssl,…,lz4").
pub fn builtin_features() -> Result<Vec<String>> {
    let conf = rdkafka::config::ClientConfig::new()
        .create_native_config()
        .map_err(|e| ProbeError::kafka("reading builtin.features", e))?;
    let f = conf
        .get("builtin.features")
        .map_err(|e| ProbeError::kafka("reading builtin.features", e))?;
    Ok(f.split(',').map(|s| s.trim().to_string()).collect())
}

/// A codec this librdkafka was built without is bad usage (exit 2), said plainly.
pub fn check_codec(codec: Codec, features: &[String]) -> Result<()> {
    if features.iter().any(|f| f == codec.name()) {
        return Ok(());
    }
    Err(ProbeError::Usage(format!(
        "this build's librdkafka {} has no {} codec (builtin.features: {}); rdkafka-sys is built \
         with features [\"libz\"] only — add its \"{}\" feature in probes/Cargo.toml, or pick \
         one of --codec {}",
        result::librdkafka_version(),
        codec.name(),
        features.join(","),
        match codec {
            Codec::Zstd => "zstd",
            Codec::Gzip => "libz",
            Codec::Lz4 | Codec::Snappy => codec.name(),
        },
        [Codec::Gzip, Codec::Lz4, Codec::Zstd, Codec::Snappy]
            .iter()
            .filter(|c| features.iter().any(|f| f == c.name()))
            .map(|c| c.name())
            .collect::<Vec<_>>()
            .join("|"),
    )))
}

/// One run's figures.
#[derive(Debug, Clone, Serialize)]
pub struct RunFigures {
    #[serde(flatten)]
    pub window: WindowFigures,
    /// Mean messages per batch (statistics: topics[].batchcnt).
    pub msgs_per_batch: Option<f64>,
    /// Uncompressed input per batch: messages per batch × payload bytes (payload only; the
    /// v2 record framing, ~10 B per 1 KB record, and the 61 B batch header are not counted).
    pub input_bytes_per_batch: Option<f64>,
    /// The MessageSet as sent, after compression (statistics: topics[].batchsize).
    pub wire_bytes_per_batch: Option<f64>,
    /// Payload bytes over bytes on the wire, per batch.
    pub compression_ratio: Option<f64>,
    pub produce_requests_per_s: Option<f64>,
    pub bytes_per_request: Option<f64>,
    /// Cores of librdkafka's broker threads (rdk:broker*): they compress.
    pub broker_thread_cores: f64,
    /// The busiest single rdk:broker thread.
    pub compressing_thread_cores: f64,
    pub app_cores: f64,
    pub mock_cores: f64,
    pub delivery_errors: u64,
    pub stats_emits: usize,
}

/// Input, wire bytes and ratio per batch from statistics means (ratio of the means).
pub fn batch_figures(
    msgs_per_batch: Option<f64>,
    wire: Option<f64>,
    payload_size: usize,
) -> (Option<f64>, Option<f64>) {
    let input = msgs_per_batch.map(|m| (m * payload_size as f64).round());
    let ratio = match (input, wire) {
        (Some(i), Some(w)) if w > 0.0 => Some(measure::round3(i / w)),
        _ => None,
    };
    (input, ratio)
}

fn params(codec: Codec, level: i32, batch_size: u64) -> Map<String, Value> {
    let mut p = Map::new();
    p.insert("compression.type".into(), json!(codec.name()));
    p.insert("compression.level".into(), json!(level));
    p.insert("batch.size".into(), json!(batch_size));
    p
}

/// kafka-clients settings of one point: the post's baseline producer (acks=1, linger.ms=5,
/// idempotence off) with the codec, its level (compression.<codec>.level, KIP-390; -1 and
/// snappy leave the client's default) and batch.size — in Java a limit on the *compressed*
/// batch. librdkafka's `-X` names are not passed: the two clients name their settings apart.
pub fn java_client_settings(
    bootstrap: &str,
    codec: Codec,
    level: i32,
    batch_size: u64,
) -> Vec<(String, String)> {
    let mut v = vec![
        ("bootstrap.servers".to_string(), bootstrap.to_string()),
        ("acks".into(), "1".into()),
        ("linger.ms".into(), "5".into()),
        ("enable.idempotence".into(), "false".into()),
        ("compression.type".into(), codec.name().into()),
        ("batch.size".into(), batch_size.to_string()),
    ];
    if level != -1 && codec != Codec::Snappy {
        v.push((
            format!("compression.{}.level", codec.name()),
            level.to_string(),
        ));
    }
    v
}

/// The Java companion's figures at one point (one KafkaProducer, the same text payloads).
#[derive(Debug, Clone, Serialize)]
pub struct JavaFigures {
    pub messages: u64,
    pub msgs_per_s: f64,
    pub mb_per_s: f64,
    /// Input per batch: wire bytes per batch × the ratio (payload bytes only, as for
    /// librdkafka).
    pub msgs_per_batch: Option<f64>,
    pub input_bytes_per_batch: Option<f64>,
    /// A batch as sent (kafka-clients' batch-size-avg: the closed, compressed batch).
    pub wire_bytes_per_batch: Option<f64>,
    /// Payload bytes over wire bytes of the batches drained in the window
    /// (record-send-total × size over byte-total, producer-topic-metrics).
    pub compression_ratio: Option<f64>,
    /// Input per batch over batch.size: librdkafka keeps it ≤ 1; a Java batch passes it.
    pub input_over_batch_size: Option<f64>,
    /// Cores of the thread calling send(): kafka-clients compresses there.
    pub compressing_thread_cores: Option<f64>,
    /// Cores of the producer's network thread.
    pub network_thread_cores: Option<f64>,
    pub cpu_s_per_million: f64,
    pub gc_time_ms: u64,
}

impl JavaFigures {
    pub fn of(r: &CompanionResult, payload_size: usize, batch_size: u64) -> JavaFigures {
        let ratio = match (r.records_sent_window, r.wire_bytes_window) {
            (Some(n), Some(w)) if n > 0 && w > 0 => {
                Some(measure::round3(n as f64 * payload_size as f64 / w as f64))
            }
            _ => None,
        };
        let wire = r.batch_size_avg.filter(|b| b.is_finite() && *b > 0.0);
        let input = wire.zip(ratio).map(|(w, q)| (w * q).round());
        let cores = |cpu: Option<f64>| {
            cpu.filter(|c| *c >= 0.0 && r.seconds > 0.0)
                .map(|c| measure::round3(c / r.seconds))
        };
        JavaFigures {
            messages: r.messages,
            msgs_per_s: r.msgs_per_s,
            mb_per_s: r.mb_per_s,
            msgs_per_batch: input.map(|i| measure::round3(i / payload_size as f64)),
            input_bytes_per_batch: input,
            wire_bytes_per_batch: wire.map(f64::round),
            compression_ratio: ratio,
            input_over_batch_size: input.map(|i| measure::round3(i / batch_size as f64)),
            compressing_thread_cores: cores(r.send_thread_cpu_s),
            network_thread_cores: cores(r.network_thread_cpu_s),
            cpu_s_per_million: if r.messages > 0 {
                measure::round3(r.process_cpu_s / (r.messages as f64 / 1e6))
            } else {
                0.0
            },
            gc_time_ms: r.gc_time_ms,
        }
    }
}

pub fn run(opts: &Options, progress: &dyn Fn(&str)) -> Result<ProbeResult> {
    check_codec(opts.codec, &builtin_features()?)?;
    if opts.batch_sizes.is_empty() || opts.levels.is_empty() {
        return Err(ProbeError::Usage("the sweep is empty".into()));
    }
    let java = match opts.client {
        Client::Rust => None,
        _ => {
            crate::java::require_brokers(opts.common.brokers.as_deref())?;
            Some(crate::java::Java::locate()?)
        }
    };
    let rust = opts.client != Client::Java;
    let broker = Broker::start(opts.common.brokers.as_deref(), &opts.common.property)?;
    for &l in &opts.levels {
        for &b in &opts.batch_sizes {
            broker.validate(&producer_settings(opts.codec, l, b))?;
        }
    }
    let out = OutDir::new(opts.common.out.as_deref(), PROBE)?;
    let pool = Pool::new(opts.size, opts.kind);
    let points: Vec<(i32, u64)> = opts
        .levels
        .iter()
        .flat_map(|&l| opts.batch_sizes.iter().map(move |&b| (l, b)))
        .collect();
    let (all_params, java_base) = crate::java::sweep_params(
        points
            .iter()
            .map(|&(l, b)| params(opts.codec, l, b))
            .collect(),
        opts.client,
    );
    let mut result = ProbeResult::new(PROBE, &broker, &pool, opts.common.reps, all_params);
    result.not_measured = not_measured(&broker, java.is_some());
    result.notes = notes(opts);
    progress(&format!("broker: {}", broker.label()));

    'reps: for rep in 1..=opts.common.reps {
        let order = result::rep_order(rep, points.len());
        for pi in order {
            if interrupt::stopped() {
                result.interrupted = true;
                break 'reps;
            }
            let (level, batch) = points[pi];
            if let Some(java) = &java {
                let dir = out.run_dir(&format!("java-level{level}-batch{batch}"), rep)?;
                let Some(run) = java_once(java, &broker, opts, level, batch, &dir, &result)? else {
                    result.interrupted = true;
                    break 'reps;
                };
                let fig = JavaFigures::of(&run, pool.size(), batch);
                progress(&format!(
                    "java {} level={level} batch.size={batch} rep {rep}/{}: {} msg/s, {} B in → {} B on the wire per batch (ratio {})",
                    opts.codec.name(),
                    opts.common.reps,
                    result::si(fig.msgs_per_s),
                    fig.input_bytes_per_batch.map_or("?".into(), |b| format!("{b:.0}")),
                    fig.wire_bytes_per_batch.map_or("?".into(), |b| format!("{b:.0}")),
                    fig.compression_ratio.map_or("?".into(), |r| format!("{r:.2}")),
                ));
                result.settings[java_base + pi].push_run(&fig);
                out.write(&result)?;
            }
            if !rust {
                continue;
            }
            let dir = out.run_dir(&format!("level{level}-batch{batch}"), rep)?;
            let (run, topic) = produce_once(&broker, opts, &pool, level, batch, &dir)?;
            result.topic = topic;
            progress(&format!(
                "{} level={level} batch.size={batch} rep {rep}/{}: {} msg/s, {} B in → {} B on the wire per batch (ratio {})",
                opts.codec.name(),
                opts.common.reps,
                result::si(run.window.msgs_per_s),
                run.input_bytes_per_batch.map_or("?".into(), |b| format!("{b:.0}")),
                run.wire_bytes_per_batch.map_or("?".into(), |b| format!("{b:.0}")),
                run.compression_ratio.map_or("?".into(), |r| format!("{r:.2}")),
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
    let mut v = verdict(&result.settings, opts.codec);
    if let Some((evidence, sentence)) = java_semantics(&result.settings) {
        if let Value::Object(m) = &mut v.evidence {
            m.insert("java".into(), evidence);
        }
        v.summary.push(' ');
        v.summary.push_str(&sentence);
    }
    if let Some(java) = opts.java_equivalent {
        let level = opts.levels[0];
        let eq = measured_java_equivalent(&result.settings, java, level)
            .or_else(|| java_equivalent(java, &ratio_curve(&result.settings, level)));
        if let (Some(e), Value::Object(m)) = (eq, &mut v.evidence) {
            m.insert("java_equivalent".into(), json!(e));
        }
    }
    result.verdict = Some(v);
    if !out.is_temporary() {
        for (name, c) in [("gzip-batch-rate.svg", 0), ("gzip-batch-ratio.svg", 1)] {
            let chart = if c == 0 {
                rate_chart(&result)
            } else {
                ratio_chart(&result)
            };
            let p = out.root.join(name);
            std::fs::write(&p, chart.render())
                .map_err(|e| ProbeError::io(format!("writing {}", p.display()), e))?;
        }
    }
    out.write(&result)?;
    Ok(result)
}

fn not_measured(broker: &Broker, java: bool) -> Vec<String> {
    let mut v = vec![
        "the ratio over the broker's partition sizes (DescribeLogDirs): rust-rdkafka 0.39 and \
         librdkafka 2.12.1 have no DescribeLogDirs, so the ratio is payload bytes over the \
         MessageSet bytes librdkafka sent"
            .to_string(),
        "the broker's own CPU (only this process's threads are sampled)".to_string(),
    ];
    if !java {
        v.push(
            "the Java client, whose batches close on their estimated compressed size (run with \
             --client both and --brokers)"
                .to_string(),
        );
    }
    if broker.is_mock() {
        v.push(
            "Apache Kafka's cost: the broker was librdkafka's in-process mock, whose rdk:mock \
             thread shares this machine's cores with the compressing thread"
                .to_string(),
        );
    }
    v
}

fn notes(opts: &Options) -> Vec<String> {
    let mut v = vec![
        format!(
            "acks=1, linger.ms=5, {} partition(s) round robin, compression.type={} (level -1 is \
             the codec's default: 6 for gzip)",
            opts.partitions,
            opts.codec.name()
        ),
        "input per batch counts payload bytes only (statistics batchcnt × message size); \
         librdkafka's batch.size limit also counts the v2 record framing (~10 B per record) \
         and the 61 B batch header, so input per batch stays a little under batch.size"
            .to_string(),
        format!(
            "each run has its own topic (deleted after it), a warmup of {} messages fully \
             acknowledged, then a {:.1} s window counting acknowledged messages",
            opts.warmup_messages,
            opts.window.as_secs_f64()
        ),
    ];
    for (k, val) in &opts.common.property {
        v.push(format!("-X {k}={val} (applied last)"));
    }
    v
}

/// One run on a fresh topic: warmup, window, statistics. Returns the figures and the topic.
fn produce_once(
    broker: &Broker,
    opts: &Options,
    pool: &Pool,
    level: i32,
    batch_size: u64,
    dir: &Path,
) -> Result<(RunFigures, String)> {
    let topic = broker.create_topic(PROBE, opts.partitions)?;
    let stats_path = dir.join("stats.jsonl");
    let log_path = dir.join("debug.log");
    let sink = Arc::new(
        Sink::to_files(Some(&log_path), Some(&stats_path))
            .map_err(|e| ProbeError::io(format!("creating files in {}", dir.display()), e))?,
    );
    let settings = producer_settings(opts.codec, level, batch_size);
    let producer = Producer::new(broker, &settings, sink)?;
    let handle = TopicHandle::new(&producer, &topic.name)?;
    let w = produce::measure_throughput(
        &producer,
        &handle,
        opts.partitions,
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
        produce_requests_per_s,
        bytes_per_request,
        batch_bytes_mean: wire,
        msgs_per_batch_mean: msgs,
        ..
    } = produce::stats_figures(&w.stats);
    let (input, ratio) = batch_figures(msgs, wire, pool.size());
    let cores = |pred: &dyn Fn(&str) -> bool| -> Vec<f64> {
        window
            .threads
            .iter()
            .filter(|t| pred(&t.name))
            .map(|t| t.cores)
            .collect()
    };
    let sum = |pred: &dyn Fn(&str) -> bool| measure::round3(cores(pred).iter().sum());
    let is_broker = |n: &str| n.starts_with("rdk:broker");
    Ok((
        RunFigures {
            msgs_per_batch: msgs,
            input_bytes_per_batch: input,
            wire_bytes_per_batch: wire,
            compression_ratio: ratio,
            produce_requests_per_s,
            bytes_per_request,
            broker_thread_cores: sum(&is_broker),
            compressing_thread_cores: measure::round3(
                cores(&is_broker).into_iter().fold(0.0, f64::max),
            ),
            app_cores: sum(&|n| n == "app"),
            mock_cores: sum(&|n| n.starts_with("rdk:mock")),
            delivery_errors: w.delivery_errors,
            stats_emits: w.stats.len(),
            window,
        },
        name,
    ))
}

/// One run of the Java companion at a point, on its own fresh topic.
fn java_once(
    java: &crate::java::Java,
    broker: &Broker,
    opts: &Options,
    level: i32,
    batch_size: u64,
    dir: &Path,
    result: &ProbeResult,
) -> Result<Option<CompanionResult>> {
    crate::java::run_point(
        java,
        broker,
        PROBE,
        opts.partitions,
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
        &java_client_settings(broker.bootstrap(), opts.codec, level, batch_size),
        opts.window + Duration::from_secs(180),
        &result.payload_sha256,
    )
    .map(|r| r.map(|(run, _)| run.result))
}

/// What the Java runs show of the semantics, beside librdkafka's at the same batch.size:
/// input per batch over batch.size for each client (librdkafka's stays ≤ 1 by construction;
/// a Java batch that closes on its compressed size holds more). None without Java figures.
pub fn java_semantics(settings: &[SettingResult]) -> Option<(Value, String)> {
    let mut points = Vec::new();
    for j in java::measured(&settings, true) {
        let (level, b) = point_of(j);
        let Some(j_in) = j.median_of("input_bytes_per_batch") else {
            continue;
        };
        let rdk = java::measured(settings, false).find(|s| point_of(s) == (level, b));
        let r_in = rdk.and_then(|s| s.median_of("input_bytes_per_batch"));
        points.push(json!({
            "compression_level": level,
            "batch_size": b,
            "java_input_bytes_per_batch": j_in,
            "java_input_over_batch_size": measure::round3(j_in / b as f64),
            "java_compression_ratio": j.median_of("compression_ratio"),
            "java_msgs_per_s": j.median_of("msgs_per_s"),
            "librdkafka_input_bytes_per_batch": r_in,
            "librdkafka_input_over_batch_size": r_in.map(|i| measure::round3(i / b as f64)),
            "librdkafka_compression_ratio": rdk.and_then(|s| s.median_of("compression_ratio")),
            "librdkafka_msgs_per_s": rdk.and_then(|s| s.median_of("msgs_per_s")),
        }));
    }
    let first = points.first()?.clone();
    let beyond = points
        .iter()
        .filter(|p| p["java_input_over_batch_size"].as_f64().unwrap_or(0.0) > 1.0)
        .count();
    let f = |k: &str| first[k].as_f64();
    let sentence = format!(
        "Measured here: at batch.size {} the Java client put {} B of input in a batch ({:.2}x \
         its batch.size, ratio {}){}; {} of {} Java points held more input than their \
         batch.size.",
        svg::bytes_label(first["batch_size"].as_f64().unwrap_or(0.0)),
        f("java_input_bytes_per_batch").map_or("?".into(), |x| format!("{x:.0}")),
        f("java_input_over_batch_size").unwrap_or(0.0),
        f("java_compression_ratio").map_or("?".into(), |x| format!("{x:.2}")),
        match f("librdkafka_input_bytes_per_batch") {
            Some(i) => format!(
                ", librdkafka {i:.0} B ({:.2}x, ratio {})",
                f("librdkafka_input_over_batch_size").unwrap_or(0.0),
                f("librdkafka_compression_ratio").map_or("?".into(), |x| format!("{x:.2}"))
            ),
            None => String::new(),
        },
        beyond,
        points.len(),
    );
    Some((json!({ "points": points }), sentence))
}

fn point_of(s: &SettingResult) -> (i64, u64) {
    (
        s.params
            .get("compression.level")
            .and_then(Value::as_i64)
            .unwrap_or(-1),
        s.params
            .get("batch.size")
            .and_then(Value::as_u64)
            .unwrap_or(0),
    )
}

/// (batch.size, median ratio) at one level, by batch.size.
pub fn ratio_curve(settings: &[SettingResult], level: i32) -> Vec<(u64, f64)> {
    let mut v: Vec<(u64, f64)> = settings
        .iter()
        .filter(|s| !is_java(s) && point_of(s).0 == level as i64)
        .filter_map(|s| Some((point_of(s).1, s.median_of("compression_ratio")?)))
        .collect();
    v.sort_by_key(|p| p.0);
    v
}

/// What `--java-equivalent` prints.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, serde::Deserialize)]
pub struct JavaEquivalent {
    /// The Java batch.size given.
    pub java_batch_size: u64,
    /// The ratio used: the measured ratio at the input size found (interpolated on log
    /// batch.size between measured points, held flat outside them).
    pub ratio: f64,
    /// A Java batch's input: its batch.size (a compressed size) × the ratio.
    pub java_input_bytes: u64,
    /// The librdkafka batch.size with that input per batch.
    pub librdkafka_batch_size: u64,
    /// The input lies outside the measured batch.sizes: the ratio is extrapolated flat.
    pub extrapolated: bool,
    /// The Java client ran at this batch.size: its measured input per batch is used (a Java
    /// batch also closes on linger.ms, before its compressed size reaches batch.size).
    #[serde(default)]
    pub measured: bool,
}

/// The ratio at `b` on a measured curve: log-linear between points, flat outside.
fn ratio_at(curve: &[(u64, f64)], b: f64) -> (f64, bool) {
    let first = curve[0];
    let last = curve[curve.len() - 1];
    if b <= first.0 as f64 {
        return (first.1, b < first.0 as f64);
    }
    if b >= last.0 as f64 {
        return (last.1, b > last.0 as f64);
    }
    for w in curve.windows(2) {
        let (x0, y0) = (w[0].0 as f64, w[0].1);
        let (x1, y1) = (w[1].0 as f64, w[1].1);
        if b >= x0 && b <= x1 {
            let t = if x1 > x0 {
                (b.ln() - x0.ln()) / (x1.ln() - x0.ln())
            } else {
                0.0
            };
            return (y0 + t * (y1 - y0), false);
        }
    }
    (last.1, false)
}

/// The librdkafka batch.size whose uncompressed input matches a Java batch of `java_bytes`:
/// a Java batch closes when its compressed size reaches batch.size, so it holds
/// ≈ `java_bytes` × ratio of input, where the ratio is the one zlib reaches on input of that
/// size. Solved as a fixed point on the measured (batch.size, ratio) curve.
pub fn java_equivalent(java_bytes: u64, curve: &[(u64, f64)]) -> Option<JavaEquivalent> {
    if curve.is_empty() || java_bytes == 0 || curve.iter().any(|p| p.1 <= 0.0) {
        return None;
    }
    let mut b = java_bytes as f64 * curve[0].1;
    let mut r = (curve[0].1, false);
    for _ in 0..50 {
        r = ratio_at(curve, b);
        let next = java_bytes as f64 * r.0;
        if (next - b).abs() < 0.5 {
            b = next;
            break;
        }
        b = next;
    }
    let input = b.round() as u64;
    Some(JavaEquivalent {
        java_batch_size: java_bytes,
        ratio: measure::round3(r.0),
        java_input_bytes: input,
        librdkafka_batch_size: input,
        extrapolated: r.1,
        measured: false,
    })
}

/// `--java-equivalent` from a Java run at that batch.size and level, when there is one.
pub fn measured_java_equivalent(
    settings: &[SettingResult],
    java_bytes: u64,
    level: i32,
) -> Option<JavaEquivalent> {
    let j = java::measured(settings, true).find(|s| point_of(s) == (level as i64, java_bytes))?;
    let input = j.median_of("input_bytes_per_batch")?.round() as u64;
    Some(JavaEquivalent {
        java_batch_size: java_bytes,
        ratio: j.median_of("compression_ratio")?,
        java_input_bytes: input,
        librdkafka_batch_size: input,
        extrapolated: false,
        measured: true,
    })
}

/// The rule, on medians at the first level swept (the codec's default unless told):
/// 1. librdkafka's input per batch tracks batch.size: at the largest batch.size it is ≥ 1.5x
///    the input at the smallest, and never above batch.size + one message (a limit on
///    uncompressed input);
/// 2. the larger input compresses better (ratio ≥ 2% higher);
/// 3. and costs speed (msg/s ≥ 5% lower).
///
/// All three: the speed-for-ratio trade of the post. 1 alone is the batch.size semantics.
pub fn verdict(settings: &[SettingResult], codec: Codec) -> Verdict {
    let measured: Vec<&SettingResult> = java::measured(&settings, false).collect();
    let none = |why: &str| Verdict::cannot_tell(FINDING, why, json!({}));
    let Some(level) = measured.first().map(|s| point_of(s).0) else {
        return none("nothing was measured");
    };
    let mut curve: Vec<&SettingResult> = measured
        .iter()
        .filter(|s| point_of(s).0 == level)
        .copied()
        .collect();
    curve.sort_by_key(|s| point_of(s).1);
    if curve.len() < 2 {
        return none("the sweep needs at least two batch.size values at one level");
    }
    let (lo, hi) = (curve[0], curve[curve.len() - 1]);
    let g = |s: &SettingResult, k: &str| s.median_of(k);
    let (Some(in_lo), Some(in_hi), Some(r_lo), Some(r_hi)) = (
        g(lo, "input_bytes_per_batch"),
        g(hi, "input_bytes_per_batch"),
        g(lo, "compression_ratio"),
        g(hi, "compression_ratio"),
    ) else {
        return none("librdkafka's statistics had no batch figures (batchcnt/batchsize)");
    };
    let rate = |s: &SettingResult| g(s, "msgs_per_s").unwrap_or(0.0);
    // Payload size from the first run: input per batch / messages per batch.
    let msg_size = g(lo, "msgs_per_batch")
        .filter(|m| *m > 0.0)
        .map_or(0.0, |m| in_lo / m);
    let over_limit: Vec<u64> = curve
        .iter()
        .filter(|s| {
            g(s, "input_bytes_per_batch").is_some_and(|i| i > point_of(s).1 as f64 + msg_size)
        })
        .map(|s| point_of(s).1)
        .collect();
    let tracks = in_hi >= 1.5 * in_lo && over_limit.is_empty();
    let better_ratio = r_hi >= 1.02 * r_lo;
    let slower = rate(lo) > 0.0 && rate(hi) <= 0.95 * rate(lo);
    let holds = tracks && better_ratio && slower;
    let speed_ratio = if rate(lo) > 0.0 {
        rate(hi) / rate(lo)
    } else {
        0.0
    };
    let level1 = measured
        .iter()
        .find(|s| point_of(s) == (1, point_of(lo).1) && level != 1)
        .map(|s| rate(s));
    let points: Vec<Value> = curve
        .iter()
        .map(|s| {
            json!({
                "batch_size": point_of(s).1,
                "msgs_per_s": rate(s),
                "input_bytes_per_batch": g(s, "input_bytes_per_batch"),
                "wire_bytes_per_batch": g(s, "wire_bytes_per_batch"),
                "compression_ratio": g(s, "compression_ratio"),
                "compressing_thread_cores": g(s, "compressing_thread_cores"),
            })
        })
        .collect();
    let evidence = json!({
        "codec": codec.name(),
        "compression_level": level,
        "points": points,
        "input_growth": measure::round3(if in_lo > 0.0 { in_hi / in_lo } else { 0.0 }),
        "ratio_gain": measure::round3(if r_lo > 0.0 { r_hi / r_lo } else { 0.0 }),
        "speed_ratio": measure::round3(speed_ratio),
        "batch_sizes_with_input_over_the_limit": over_limit,
        "msgs_per_s_level_1_at_smallest": level1,
        "post": {
            "librdkafka_16k": {"input_bytes_per_batch": 16384, "msgs_per_s": 46.4e3, "ratio": 4.70},
            "librdkafka_88k": {"input_bytes_per_batch": 90112, "msgs_per_s": 27.5e3, "ratio": 5.71},
            "java_16k": {"input_bytes_per_batch": 43000, "msgs_per_s": 33.9e3, "ratio": 5.39},
            "java_3000": {"input_bytes_per_batch": 8000, "msgs_per_s": 48.2e3, "ratio": 4.15},
            "level_1_16k": {"java_msgs_per_s": 145e3, "librdkafka_msgs_per_s": 109e3},
        },
    });
    let meaning = "In librdkafka batch.size limits the uncompressed input of a batch; the Java \
                   client closes a batch when its estimated compressed size reaches batch.size, \
                   so the same setting holds several times more input there. Compare clients at \
                   the same input per batch (--java-equivalent), not the same batch.size.";
    let summary = if holds {
        format!(
            "a trade of speed for ratio: {} input per batch follows batch.size ({} B at {} → {} B at {}), \
             and the larger input compresses better ({:.2} → {:.2}) at {:.2}x the speed ({} → {} msg/s; \
             the post: 46.4k at 4.70 → 27.5k at 5.71). {meaning}",
            codec.name(),
            in_lo.round(),
            svg::bytes_label(point_of(lo).1 as f64),
            in_hi.round(),
            svg::bytes_label(point_of(hi).1 as f64),
            r_lo,
            r_hi,
            speed_ratio,
            result::si(rate(lo)),
            result::si(rate(hi)),
        )
    } else {
        let mut why = Vec::new();
        if !tracks {
            if over_limit.is_empty() {
                why.push(format!(
                    "input per batch did not follow batch.size ({in_lo:.0} → {in_hi:.0} B)"
                ));
            } else {
                why.push(format!(
                    "input per batch exceeded batch.size + one message at batch.size {over_limit:?}"
                ));
            }
        }
        if !better_ratio {
            why.push(format!(
                "the larger input did not compress better ({r_lo:.2} → {r_hi:.2})"
            ));
        }
        if !slower {
            why.push(format!(
                "the larger input was not slower ({} → {} msg/s, {speed_ratio:.2}x)",
                result::si(rate(lo)),
                result::si(rate(hi))
            ));
        }
        let semantics = if tracks {
            format!(" Input per batch did follow batch.size ({in_lo:.0} → {in_hi:.0} B): {meaning}")
        } else {
            String::new()
        };
        format!(
            "no speed-for-ratio trade here: {}.{semantics}",
            why.join("; ")
        )
    };
    Verdict {
        finding: FINDING.into(),
        holds,
        decided: true,
        summary,
        evidence,
    }
}

/// One line per (client, level): librdkafka's, then the Java companion's.
fn series_by_level(r: &ProbeResult, key: &str) -> Vec<Series> {
    let mut lines: Vec<(bool, i64)> = r
        .settings
        .iter()
        .filter(|s| !s.runs.is_empty())
        .map(|s| (is_java(s), point_of(s).0))
        .collect();
    lines.sort();
    lines.dedup();
    lines
        .iter()
        .map(|&(java, l)| Series {
            label: format!(
                "{}level {}",
                if java { "Java " } else { "" },
                if l == -1 {
                    "default".to_string()
                } else {
                    l.to_string()
                }
            ),
            points: java::measured(&r.settings, java)
                .filter(|s| point_of(s).0 == l)
                .filter_map(|s| Some((point_of(s).1 as f64, s.median_of(key)?)))
                .collect(),
        })
        .filter(|s| !s.points.is_empty())
        .collect()
}

fn chart_title(r: &ProbeResult, what: &str) -> String {
    let codec = r
        .settings
        .first()
        .and_then(|s| s.params.get("compression.type"))
        .and_then(Value::as_str)
        .unwrap_or("?");
    format!(
        "{what} against batch.size, {codec}, {} B {}, {}",
        r.payload.size_bytes,
        r.payload.kind,
        if r.broker.is_mock() {
            "embedded mock broker"
        } else {
            "external broker"
        }
    )
}

/// msg/s against batch.size, one line per level.
pub fn rate_chart(r: &ProbeResult) -> LineChart {
    LineChart {
        title: chart_title(r, "msg/s"),
        x_label: "batch.size (bytes, log scale)".into(),
        y_label: "acknowledged msg/s (median)".into(),
        x_scale: Scale::Log(2.0),
        x_format: svg::bytes_label,
        y_format: svg::si_label,
        series: series_by_level(r, "msgs_per_s"),
    }
}

/// Compression ratio against batch.size, one line per level.
pub fn ratio_chart(r: &ProbeResult) -> LineChart {
    LineChart {
        title: chart_title(r, "compression ratio"),
        x_label: "batch.size (bytes, log scale)".into(),
        y_label: "payload bytes / wire bytes (median)".into(),
        x_scale: Scale::Log(2.0),
        x_format: svg::bytes_label,
        y_format: svg::plain_label,
        series: series_by_level(r, "compression_ratio"),
    }
}

pub fn render_text(r: &ProbeResult) -> String {
    let mut s = result::render_header(
        r,
        &format!("{} B {} messages", r.payload.size_bytes, r.payload.kind),
    );
    let mut t = Table::new([
        "level",
        "batch.size",
        "msg/s median (min–max)",
        "msgs/batch",
        "in B/batch",
        "wire B/batch",
        "ratio",
        "rdk:broker",
        "app",
    ]);
    for set in &r.settings {
        if set.runs.is_empty() || is_java(set) {
            continue;
        }
        let g = |k: &str| set.median_of(k);
        let (l, b) = point_of(set);
        let opt = |x: Option<f64>, f: &dyn Fn(f64) -> String| x.map_or("-".to_string(), f);
        t.row(vec![
            if l == -1 {
                "default".into()
            } else {
                l.to_string()
            },
            svg::bytes_label(b as f64),
            set.median_range_si("msgs_per_s"),
            opt(g("msgs_per_batch"), &|x| format!("{x:.0}")),
            opt(g("input_bytes_per_batch"), &|x| format!("{x:.0}")),
            opt(g("wire_bytes_per_batch"), &|x| format!("{x:.0}")),
            opt(g("compression_ratio"), &|x| format!("{x:.2}")),
            format!("{:.2}", g("compressing_thread_cores").unwrap_or(0.0)),
            format!("{:.2}", g("app_cores").unwrap_or(0.0)),
        ]);
    }
    s.push_str(&t.render());
    s.push_str(
        "\nin B/batch: messages per batch (statistics batchcnt) × payload bytes; wire B/batch: \
         the MessageSet after compression (statistics batchsize); ratio: in over wire; \
         rdk:broker: cores of the busiest librdkafka broker thread, the one that compresses; \
         app: the producing thread.\n",
    );
    if java::measured(&r.settings, true).next().is_some() {
        s.push_str(&java_table(r));
    }
    s.push_str(
        "the post (1 KB text, gzip): librdkafka 16K → 46.4k msg/s at 4.70, 88K → 27.5k at 5.71; \
         Java 16K (~43 KB input) → 33.9k at 5.39, 3000 B (~8 KB input) → 48.2k at 4.15\n",
    );
    let java = r
        .verdict
        .as_ref()
        .and_then(|v| {
            serde_json::from_value::<JavaEquivalent>(v.evidence["java_equivalent"].clone()).ok()
        })
        .map(|e| {
            if e.measured {
                return format!(
                    "java equivalent: at batch.size {} B the Java client was measured putting {} B \
                     of input in a batch (ratio {:.2}) → librdkafka batch.size ≈ {}",
                    e.java_batch_size, e.java_input_bytes, e.ratio, e.librdkafka_batch_size
                );
            }
            format!(
                "java equivalent: a Java batch.size of {} B closes at ~{} B compressed, ≈ {} B of \
                 input at the measured ratio {:.2}{} → librdkafka batch.size ≈ {}",
                e.java_batch_size,
                e.java_batch_size,
                e.java_input_bytes,
                e.ratio,
                if e.extrapolated {
                    " (outside the measured batch.sizes: the nearest ratio is held)"
                } else {
                    ""
                },
                e.librdkafka_batch_size,
            )
        });
    s.push_str(&result::render_footer(r, java.as_slice()));
    s
}

/// The Java companion's rows, beside librdkafka's input per batch at the same point.
fn java_table(r: &ProbeResult) -> String {
    let rdk = |p: (i64, u64), k: &str| {
        java::measured(&r.settings, false)
            .find(|s| point_of(s) == p)
            .and_then(|s| s.median_of(k))
    };
    let mut t = Table::new([
        "level",
        "batch.size",
        "Java msg/s median (min–max)",
        "in B/batch",
        "wire B/batch",
        "ratio",
        "in ÷ batch.size",
        "librdkafka in ÷ batch.size",
        "send thread",
        "Java / librdkafka",
    ]);
    let opt = |x: Option<f64>, f: &dyn Fn(f64) -> String| x.map_or("-".to_string(), f);
    for set in java::measured(&r.settings, true) {
        let g = |k: &str| set.median_of(k);
        let (l, b) = point_of(set);
        t.row(vec![
            if l == -1 {
                "default".into()
            } else {
                l.to_string()
            },
            svg::bytes_label(b as f64),
            set.median_range_si("msgs_per_s"),
            opt(g("input_bytes_per_batch"), &|x| format!("{x:.0}")),
            opt(g("wire_bytes_per_batch"), &|x| format!("{x:.0}")),
            opt(g("compression_ratio"), &|x| format!("{x:.2}")),
            opt(g("input_over_batch_size"), &|x| format!("{x:.2}x")),
            opt(rdk((l, b), "input_bytes_per_batch"), &|x| {
                format!("{:.2}x", x / b as f64)
            }),
            opt(g("compressing_thread_cores"), &|x| format!("{x:.2}")),
            match (
                g("msgs_per_s"),
                rdk((l, b), "msgs_per_s").filter(|x| *x > 0.0),
            ) {
                (Some(j), Some(x)) => format!("{:.2}x", j / x),
                _ => "-".into(),
            },
        ]);
    }
    format!(
        "\nJava (kafka-clients 4.3.1, the kgap companion, one KafkaProducer, acks=1, linger.ms=5, \
         idempotence off) at the same points, same payloads, warmup and window:\n{}\
         wire B/batch: kafka-clients' batch-size-avg (the closed, compressed batch, 1 s samples \
         over about the window); ratio: payload bytes over bytes sent in the window \
         (producer-topic-metrics); in B/batch: wire × ratio; send thread: cores of the thread \
         calling send(), where kafka-clients compresses.\n",
        t.render()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(level: i32, b: u64, rate: f64, msgs: f64, wire: f64) -> SettingResult {
        let mut s = SettingResult::new(params(Codec::Gzip, level, b));
        let (input, ratio) = batch_figures(Some(msgs), Some(wire), 1024);
        s.push_run(&json!({
            "msgs_per_s": rate,
            "msgs_per_batch": msgs,
            "input_bytes_per_batch": input,
            "wire_bytes_per_batch": wire,
            "compression_ratio": ratio,
        }));
        s
    }

    /// The post's librdkafka points: 16K → 4.70, 88K → 5.71.
    fn post_like(rate_88k: f64) -> Vec<SettingResult> {
        vec![
            point(-1, 16384, 46.4e3, 15.0, 15.0 * 1024.0 / 4.70),
            point(-1, 90112, rate_88k, 87.0, 87.0 * 1024.0 / 5.71),
            point(1, 16384, 109e3, 15.0, 4000.0),
        ]
    }

    fn java_point(level: i32, b: u64, rate: f64, input: f64, ratio: f64) -> SettingResult {
        let mut p = params(Codec::Gzip, level, b);
        p.insert("client".into(), json!("java"));
        let mut s = SettingResult::new(p);
        s.push_run(&json!({
            "msgs_per_s": rate,
            "input_bytes_per_batch": input,
            "wire_bytes_per_batch": input / ratio,
            "compression_ratio": ratio,
            "input_over_batch_size": input / b as f64,
        }));
        s
    }

    #[test]
    fn java_figures_come_from_the_windows_totals_and_the_batch_mean() {
        let r = CompanionResult {
            messages: 100_000,
            seconds: 2.0,
            msgs_per_s: 50_000.0,
            records_sent_window: Some(100_000),
            // 100k × 1 KB in 20 MB on the wire: ratio 5.12.
            wire_bytes_window: Some(20_000_000),
            batch_size_avg: Some(8_000.0),
            send_thread_cpu_s: Some(1.5),
            network_thread_cpu_s: Some(-1.0),
            process_cpu_s: 3.0,
            ..Default::default()
        };
        let f = JavaFigures::of(&r, 1024, 16384);
        assert_eq!(f.compression_ratio, Some(5.12));
        assert_eq!(f.wire_bytes_per_batch, Some(8000.0));
        assert_eq!(f.input_bytes_per_batch, Some(40960.0));
        assert_eq!(f.msgs_per_batch, Some(40.0));
        assert_eq!(f.input_over_batch_size, Some(2.5));
        assert_eq!(f.compressing_thread_cores, Some(0.75));
        assert_eq!(
            f.network_thread_cores, None,
            "-1 means the JVM could not tell"
        );
        assert_eq!(f.cpu_s_per_million, 30.0);
        // Nothing drained in the window: no ratio, no input, not a division by zero.
        let empty = CompanionResult {
            records_sent_window: Some(0),
            wire_bytes_window: Some(0),
            batch_size_avg: Some(f64::NAN),
            ..r
        };
        let f = JavaFigures::of(&empty, 1024, 16384);
        assert_eq!(
            (
                f.compression_ratio,
                f.input_bytes_per_batch,
                f.wire_bytes_per_batch
            ),
            (None, None, None)
        );
    }

    #[test]
    fn java_settings_name_the_level_per_codec_and_leave_defaults_alone() {
        let v = java_client_settings("h:9092", Codec::Gzip, 1, 16384);
        assert!(v.contains(&("compression.gzip.level".into(), "1".into())));
        assert!(v.contains(&("batch.size".into(), "16384".into())));
        assert!(v.contains(&("linger.ms".into(), "5".into())));
        let d = java_client_settings("h:9092", Codec::Zstd, -1, 16384);
        assert!(d.iter().all(|(k, _)| !k.ends_with(".level")), "{d:?}");
        let s = java_client_settings("h:9092", Codec::Snappy, 3, 16384);
        assert!(s.iter().all(|(k, _)| !k.ends_with(".level")), "{s:?}");
    }

    #[test]
    fn java_semantics_compares_input_per_batch_at_the_same_batch_size() {
        let mut settings = post_like(27.5e3);
        assert!(
            java_semantics(&settings).is_none(),
            "no Java runs: nothing to say"
        );
        settings.push(java_point(-1, 16384, 33.9e3, 43_000.0, 5.39));
        settings.push(java_point(-1, 3000, 48.2e3, 8_000.0, 4.15));
        let (e, sentence) = java_semantics(&settings).unwrap();
        let p0 = &e["points"][0];
        assert_eq!(p0["batch_size"], 16384);
        assert!((p0["java_input_over_batch_size"].as_f64().unwrap() - 2.624).abs() < 0.001);
        // librdkafka's input at the same point is under its batch.size.
        assert!(p0["librdkafka_input_over_batch_size"].as_f64().unwrap() <= 1.0);
        assert!(e["points"][1]["librdkafka_input_bytes_per_batch"].is_null());
        assert!(sentence.contains("2.62x"), "{sentence}");
        assert!(sentence.contains("2 of 2 Java points"), "{sentence}");
        // The Java points take no part in librdkafka's rule or its ratio curve.
        assert_eq!(
            verdict(&settings, Codec::Gzip).holds,
            verdict(&post_like(27.5e3), Codec::Gzip).holds
        );
        assert_eq!(ratio_curve(&settings, -1).len(), 2);
        // --java-equivalent at a batch.size Java ran at: its measured input, not the model.
        let e = measured_java_equivalent(&settings, 16384, -1).unwrap();
        assert!(e.measured);
        assert_eq!(
            (e.java_input_bytes, e.librdkafka_batch_size),
            (43_000, 43_000)
        );
        assert!(measured_java_equivalent(&settings, 16384, 1).is_none());
        assert!(measured_java_equivalent(&settings, 32768, -1).is_none());
    }

    #[test]
    fn ratio_is_payload_over_wire() {
        let (i, r) = batch_figures(Some(15.0), Some(3000.0), 1024);
        assert_eq!(i, Some(15360.0));
        assert_eq!(r, Some(5.12));
        assert_eq!(batch_figures(None, Some(3000.0), 1024), (None, None));
        assert_eq!(batch_figures(Some(1.0), Some(0.0), 1024).1, None);
    }

    #[test]
    fn holds_on_the_posts_librdkafka_figures() {
        let v = verdict(&post_like(27.5e3), Codec::Gzip);
        assert!(v.holds, "{v:?}");
        let e = &v.evidence;
        assert_eq!(e["compression_level"], -1);
        assert!((e["speed_ratio"].as_f64().unwrap() - 0.593).abs() < 0.001);
        assert!((e["ratio_gain"].as_f64().unwrap() - 1.215).abs() < 0.01);
        assert_eq!(e["msgs_per_s_level_1_at_smallest"], 109e3);
        assert!(v.summary.contains("speed for ratio"), "{}", v.summary);
        assert!(v.summary.contains("uncompressed input"));
    }

    #[test]
    fn no_trade_when_the_larger_batch_is_not_slower_but_semantics_still_said() {
        let v = verdict(&post_like(47e3), Codec::Gzip);
        assert!(!v.holds);
        assert!(v.summary.contains("was not slower"), "{}", v.summary);
        assert!(v.summary.contains("did follow batch.size"));
    }

    #[test]
    fn input_over_batch_size_or_flat_input_breaks_the_rule() {
        // 30 × 1 KB = 30 KB at batch.size 16K: more than batch.size + one message.
        let over = vec![
            point(-1, 16384, 46e3, 30.0, 6000.0),
            point(-1, 90112, 27e3, 87.0, 15600.0),
        ];
        let v = verdict(&over, Codec::Gzip);
        assert!(!v.holds);
        assert!(v.summary.contains("exceeded"), "{}", v.summary);
        let flat = vec![
            point(-1, 16384, 46e3, 15.0, 3000.0),
            point(-1, 90112, 27e3, 16.0, 3100.0),
        ];
        assert!(verdict(&flat, Codec::Gzip)
            .summary
            .contains("did not follow"));
        assert!(!verdict(&[], Codec::Gzip).holds);
        assert!(!verdict(&post_like(1.0)[..1], Codec::Gzip).holds);
    }

    #[test]
    fn java_equivalent_is_batch_size_times_ratio() {
        // One measured point: the ratio is held flat, 16384 × 5.39 = 88,310 B (the post's 88K).
        let e = java_equivalent(16384, &[(16384, 5.39)]).unwrap();
        assert_eq!(e.java_input_bytes, 88310);
        assert_eq!(e.librdkafka_batch_size, 88310);
        assert!(e.extrapolated);
        // The post's curve: 16K at 4.70, 88K at 5.71. 16384 × r(b) = b lands above 88K,
        // where the ratio is held at 5.71: 93,553 B.
        let e = java_equivalent(16384, &[(16384, 4.70), (90112, 5.71)]).unwrap();
        assert!((e.ratio - 5.71).abs() < 1e-9);
        assert_eq!(e.java_input_bytes, 93553);
        // Java 3000 B inside the curve: 3000 × r = b with r interpolated on log batch.size.
        let curve = [(8192, 4.0), (32768, 5.0)];
        let e = java_equivalent(3000, &curve).unwrap();
        assert!(!e.extrapolated);
        let (r, _) = ratio_at(&curve, e.java_input_bytes as f64);
        assert!(
            (3000.0 * r - e.java_input_bytes as f64).abs() <= 1.0,
            "{e:?}"
        );
        assert!(e.ratio > 4.0 && e.ratio < 5.0);
        assert!(java_equivalent(0, &curve).is_none());
        assert!(java_equivalent(3000, &[]).is_none());
    }

    #[test]
    fn a_codec_missing_from_the_build_is_usage() {
        let f: Vec<String> = ["gzip", "snappy", "ssl", "lz4"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert!(check_codec(Codec::Gzip, &f).is_ok());
        let e = check_codec(Codec::Zstd, &f).unwrap_err();
        assert_eq!(e.exit_code(), crate::error::exit::USAGE);
        let msg = e.to_string();
        assert!(
            msg.contains("no zstd codec") && msg.contains("gzip|lz4|snappy"),
            "{msg}"
        );
    }

    #[test]
    fn settings_name_the_codec_level_and_batch_size() {
        let s = producer_settings(Codec::Gzip, 1, 90112);
        assert!(s.contains(&("compression.type", "gzip".into())));
        assert!(s.contains(&("compression.level", "1".into())));
        assert!(s.contains(&("batch.size", "90112".into())));
    }
}
