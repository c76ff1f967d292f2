//! `probe-batch-consume`: the post's chain of consumer limits, and its batch wrapper's bug.
//!
//! The chain: at librdkafka's default fetch.queue.backoff.ms (1000) the consumer naps (Gap 2);
//! at 10 ms poll() hands over one message per call, so the application thread is the limit;
//! with the batch API (`rd_kafka_consume_batch_queue`, [`crate::batch`]) the limit moves to
//! librdkafka's broker thread, which parses every message (the post: ~0.94 cores at ~2.1M
//! msg/s). Throughput mode consumes one prefilled topic with each API at each backoff and
//! names the saturated thread.
//!
//! The bug: a wrapper that calls the batch API with a 100 ms timeout waits for a full batch,
//! so at low rates each message waits up to the timeout (p50 ≈ timeout/2, p99 ≈ timeout).
//! Latency mode (`--rate`) paces a producer in the same process and measures end-to-end
//! latency with each API.

use crate::batch::WaitPolicy;
use crate::broker::{Broker, Consumer, Producer};
use crate::capture::{AckLatency, KgapContext, Sink};
use crate::cli::CommonArgs;
use crate::consume::{self, ConsumeApi, Flow};
use crate::error::{ProbeError, Result};
use crate::consume::ConsumeRun;
use crate::consumer_figures::ConsumerFigures;
use crate::consumer_topic::{self, PrefillChoice};
use crate::paced::{self, PacedWindow};
use crate::interrupt;
use crate::measure::{self, Percentiles};
use crate::payload::{self, PayloadKind, Pool};
use crate::produce::{self, TopicHandle};
use crate::result::{self, OutDir, ProbeResult, SettingResult, Table, Verdict};
use rdkafka::producer::Producer as _;
use serde::Serialize;
use serde_json::{json, Map, Value};
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub const PROBE: &str = "probe-batch-consume";
/// The chain of limits (throughput mode).
pub const FINDING: &str = "batch-consume";
/// The naive wrapper's latency (latency mode).
pub const FINDING_LATENCY: &str = "batch-wrapper-latency";
/// The post: the batch API at ~2.1M msg/s with rdk:broker at ~0.94 cores.
pub const POST_BATCH_MSGS_PER_S: f64 = 2.1e6;
pub const POST_BROKER_THREAD_CORES: f64 = 0.94;
/// A thread at or above this many cores is called saturated (a 2-core machine shared with
/// a broker rarely gives one thread a whole core).
pub const SATURATED_CORES: f64 = 0.8;
/// Partitions on the mock by default: it keeps ~90k messages per partition, and runs of a
/// few hundred thousand messages are over before the thread figures settle.
pub const MOCK_PARTITIONS: i32 = 24;
/// Partitions on a real broker by default (the post's 6).
pub const EXTERNAL_PARTITIONS: i32 = 6;

pub use crate::measure::APP_THREAD;

#[derive(Debug, Clone)]
pub struct Options {
    pub common: CommonArgs,
    pub apis: Vec<ConsumeApi>,
    pub backoff_ms: Vec<u64>,
    pub messages: Option<u64>,
    pub size: usize,
    /// None: [`MOCK_PARTITIONS`] on the mock, 6 on a real broker.
    pub partitions: Option<i32>,
    pub duration: Option<Duration>,
    /// Latency mode when not empty: producer rates (msg/s).
    pub rates: Vec<u64>,
    pub warmup: Duration,
    pub window: Duration,
    /// librdkafka's examples/rdkafka_performance, run on the same topic beside the fixed
    /// batch API (`-C -G … -B <batch>`): the harness-honesty check.
    pub rdkafka_performance: Option<std::path::PathBuf>,
}

/// Target of the harness-honesty check: the probe's batch loop at ≥ 0.97x librdkafka's own
/// performance tool on the same topic.
pub const HARNESS_TARGET_RATIO: f64 = 0.97;
/// The api name of rdkafka_performance's runs in tables and JSON.
pub const RDKAFKA_PERFORMANCE: &str = "rdkafka_performance";

/// `poll`, `fixed`, `naive` → the APIs, with the batch size and naive timeout given.
pub fn parse_apis(
    s: &str,
    batch: usize,
    naive_timeout: Duration,
) -> std::result::Result<Vec<ConsumeApi>, String> {
    let mut v = Vec::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let api = match part {
            "poll" => ConsumeApi::Poll,
            "fixed" | "batch-fixed" => ConsumeApi::Batch {
                size: batch,
                policy: WaitPolicy::Fixed,
            },
            "naive" | "batch-naive" => ConsumeApi::Batch {
                size: batch,
                policy: WaitPolicy::Naive {
                    timeout: naive_timeout,
                },
            },
            other => return Err(format!("'{other}' is not an API: poll, fixed or naive")),
        };
        if !v.contains(&api) {
            v.push(api);
        }
    }
    if v.is_empty() {
        return Err("give at least one of poll, fixed, naive".into());
    }
    Ok(v)
}

/// One throughput run's figures: the consumer run's own plus which thread was the limit.
#[derive(Debug, Clone, Serialize)]
pub struct ThroughputFigures {
    #[serde(flatten)]
    pub run: ConsumerFigures,
    /// Cores of the thread calling poll() or the batch API.
    pub app_cores: f64,
    /// The busiest of librdkafka's rdk:broker threads, and its cores.
    pub broker_thread: String,
    pub broker_thread_cores: f64,
    /// The busiest thread of the consumer (the mock's excluded), if ≥ SATURATED_CORES.
    pub saturated_thread: Option<String>,
}

/// One latency run's figures.
#[derive(Debug, Clone, Serialize)]
pub struct LatencyFigures {
    pub rate_target_per_s: u64,
    pub rate_achieved_per_s: f64,
    pub sustained: bool,
    pub e2e_ms_p50: f64,
    pub e2e_ms_p90: f64,
    pub e2e_ms_p99: f64,
    pub e2e_ms_max: f64,
    pub e2e_count: u64,
    /// The arithmetic for the naive wrapper: a call returns when the batch fills (batch/rate)
    /// or at the timeout, whichever first, so a message waits on average half of that.
    pub expected_wait_ms_p50: Option<f64>,
    pub expected_wait_ms_p99: Option<f64>,
    pub window_s: f64,
}

fn params(api: &ConsumeApi, backoff: Option<u64>, rate: Option<u64>) -> Map<String, Value> {
    let mut p = Map::new();
    p.insert("api".into(), json!(api.name()));
    if let ConsumeApi::Batch { size, policy } = api {
        p.insert("batch".into(), json!(size));
        if let WaitPolicy::Naive { timeout } = policy {
            p.insert("naive_timeout_ms".into(), json!(timeout.as_millis() as u64));
        }
    }
    if let Some(b) = backoff {
        p.insert("fetch.queue.backoff.ms".into(), json!(b));
    }
    if let Some(r) = rate {
        p.insert("rate_per_s".into(), json!(r));
    }
    p
}

/// The consumer's settings for one run of throughput mode. Statistics stay off under the
/// batch API: librdkafka serves them from the consumer queue inside the batch call, where
/// rust-rdkafka's context never sees them (FACTS.md §5), so poll() runs go without them too.
pub fn throughput_settings(backoff_ms: u64, mock: bool) -> Vec<(&'static str, String)> {
    consumer_topic::consumer_settings(
        backoff_ms,
        &crate::broker::topic_name("probe-batch-consume-group"),
        mock,
    )
    .into_iter()
    .filter(|(k, _)| *k != "statistics.interval.ms")
    .collect()
}

pub fn run(opts: &Options, progress: &dyn Fn(&str)) -> Result<ProbeResult> {
    if opts.rates.is_empty() {
        run_throughput(opts, progress)
    } else {
        run_latency(opts, progress)
    }
}

fn run_throughput(opts: &Options, progress: &dyn Fn(&str)) -> Result<ProbeResult> {
    let broker = Broker::start(opts.common.brokers.as_deref(), &opts.common.property)?;
    for &b in &opts.backoff_ms {
        broker.validate(&throughput_settings(b, broker.is_mock()))?;
    }
    let out = OutDir::new(opts.common.out.as_deref(), PROBE)?;
    let partitions = partitions(&broker, opts);
    let plan = consumer_topic::plan(
        broker.is_mock(),
        partitions,
        PrefillChoice {
            messages: opts.messages,
            ..PrefillChoice::default()
        },
    );
    let (messages, kind, compression) = (plan.messages, plan.kind, plan.compression);
    let pool = Pool::new(opts.size, kind);
    // None: rdkafka_performance, at the fastest backoff, beside the probe's own runs.
    let mut points: Vec<(u64, Option<ConsumeApi>)> = opts
        .backoff_ms
        .iter()
        .flat_map(|&b| opts.apis.iter().map(move |&a| (b, Some(a))))
        .collect();
    let fastest = opts.backoff_ms.iter().copied().min().unwrap_or(10);
    if opts.rdkafka_performance.is_some() {
        points.push((fastest, None));
    }
    let mut result = ProbeResult::new(
        PROBE,
        &broker,
        &pool,
        opts.common.reps,
        points
            .iter()
            .map(|(b, a)| match a {
                Some(a) => params(a, Some(*b), None),
                None => {
                    let mut p = Map::new();
                    p.insert("api".into(), json!(RDKAFKA_PERFORMANCE));
                    p.insert("batch".into(), json!(batch_size(opts)));
                    p.insert("fetch.queue.backoff.ms".into(), json!(b));
                    p
                }
            })
            .collect(),
    );
    result.not_measured = throughput_not_measured(&broker, &compression);
    result.notes = throughput_notes(&broker, opts);
    progress(&format!("broker: {}", broker.label()));

    let topic = broker.create_topic(PROBE, partitions)?;
    result.topic = topic.name.clone();
    progress(&format!(
        "topic {} ({} partitions): prefilling {} × {} B {} messages ({} compression)",
        topic.name, partitions, messages, opts.size, kind, compression
    ));
    let pre = produce::prefill(
        &broker,
        &topic.name,
        partitions,
        &pool,
        messages,
        &compression,
        progress,
    )?;
    result.prefill = Some(pre);

    'reps: for rep in 1..=opts.common.reps {
        for pi in result::rep_order(rep, points.len()) {
            if interrupt::stopped() {
                result.interrupted = true;
                break 'reps;
            }
            let (backoff, api) = points[pi];
            let Some(api) = api else {
                let path = opts.rdkafka_performance.as_deref().expect("given");
                let run = run_rdkafka_performance(
                    &broker,
                    path,
                    &topic.name,
                    messages,
                    backoff,
                    batch_size(opts),
                )?;
                progress(&format!(
                    "rdkafka_performance -C -B {} fetch.queue.backoff.ms={backoff} rep {rep}/{}: {} msg/s",
                    batch_size(opts),
                    opts.common.reps,
                    result::si(run.msgs_per_s)
                ));
                result.settings[pi].push_run(&run);
                out.write(&result)?;
                continue;
            };
            let dir = out.run_dir(&format!("{}-backoff{backoff}ms", api.name()), rep)?;
            let consume = ConsumeRun {
                api,
                settings: throughput_settings(backoff, broker.is_mock()),
                backoff_ms: backoff,
                duration: opts.duration,
                expected: messages,
            };
            let Some(run) = crate::consume::measure_window(&broker, &topic, &consume, &dir)? else {
                result.interrupted = true;
                break 'reps;
            };
            let run = ConsumerFigures::of(run)?;
            let figures = throughput_figures(run);
            progress(&format!(
                "{} fetch.queue.backoff.ms={backoff} rep {rep}/{}: {} msg/s, app {:.2} cores, {} {:.2} cores, idle {:.1} s",
                api.name(),
                opts.common.reps,
                result::si(figures.run.window.msgs_per_s),
                figures.app_cores,
                figures.broker_thread,
                figures.broker_thread_cores,
                figures.run.window.idle_s,
            ));
            result.settings[pi].push_run(&figures);
            out.write(&result)?;
        }
    }
    result.verdict = Some(throughput_verdict(&result.settings));
    out.write(&result)?;
    topic.delete()?;
    Ok(result)
}

fn batch_size(opts: &Options) -> usize {
    opts.apis
        .iter()
        .find_map(|a| match a {
            ConsumeApi::Batch { size, .. } => Some(*size),
            ConsumeApi::Poll => None,
        })
        .unwrap_or(crate::batch::DEFAULT_BATCH)
}

/// One rdkafka_performance consumer run: its own summary line, parsed.
#[derive(Debug, Clone, Serialize)]
pub struct RdkafkaPerformanceRun {
    pub messages: u64,
    pub msgs_per_s: f64,
    pub mb_per_s: f64,
    /// rdkafka_performance times from its first message to its last (no warmup cut).
    pub window_s: f64,
}

/// Runs `rdkafka_performance -C -G <fresh group> -t <topic> -B <batch> -c <messages>` with the
/// probe's consumer settings, then deletes the group it committed offsets for.
fn run_rdkafka_performance(
    broker: &Broker,
    path: &std::path::Path,
    topic: &str,
    messages: u64,
    backoff_ms: u64,
    batch: usize,
) -> Result<RdkafkaPerformanceRun> {
    let group = crate::broker::topic_name("probe-batch-consume-rkp");
    let mut cmd = std::process::Command::new(path);
    cmd.args(["-C", "-G", &group, "-t", topic, "-b", broker.bootstrap()])
        .args(["-B", &batch.to_string(), "-c", &messages.to_string()])
        .args(["-X", &format!("fetch.queue.backoff.ms={backoff_ms}")])
        .args([
            "-X",
            "auto.offset.reset=earliest",
            "-X",
            "enable.auto.commit=false",
        ]);
    for (k, v) in broker.overrides() {
        cmd.args(["-X", &format!("{k}={v}")]);
    }
    let out = cmd
        .output()
        .map_err(|e| ProbeError::io(format!("running {}", path.display()), e))?;
    let _ = broker.delete_group(&group);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let parsed = parse_rdkafka_performance(&stdout);
    match parsed {
        Some(run) if out.status.success() && run.messages >= messages => Ok(run),
        _ => Err(ProbeError::Kafka(format!(
            "{} did not consume the topic ({}): {}",
            path.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .last()
                .unwrap_or("")
        ))),
    }
}

/// The last `% N messages (B bytes) consumed in T ms: R msgs/s (M MB/s)` line.
pub fn parse_rdkafka_performance(stdout: &str) -> Option<RdkafkaPerformanceRun> {
    let line = stdout
        .lines()
        .rev()
        .find(|l| l.starts_with("% ") && l.contains(" consumed in ") && !l.contains("INTERVAL"))?;
    let num = |after: &str, before: &str| -> Option<f64> {
        let i = line.find(after)? + after.len();
        let rest = &line[i..];
        let j = rest.find(before)?;
        rest[..j].trim().parse().ok()
    };
    let messages = num("% ", " messages")?;
    let ms = num("consumed in ", "ms")?;
    // "(B bytes) … (M MB/s)": the last parenthesis.
    let mb: f64 = line[line.rfind('(')? + 1..]
        .split_whitespace()
        .next()?
        .parse()
        .ok()?;
    let window_s = ms / 1000.0;
    Some(RdkafkaPerformanceRun {
        messages: messages as u64,
        msgs_per_s: if window_s > 0.0 {
            messages / window_s
        } else {
            0.0
        },
        mb_per_s: mb,
        window_s,
    })
}

fn partitions(broker: &Broker, opts: &Options) -> i32 {
    opts.partitions.unwrap_or(if broker.is_mock() {
        MOCK_PARTITIONS
    } else {
        EXTERNAL_PARTITIONS
    })
}

/// Names the app thread, the busiest broker thread and the saturated one.
pub fn throughput_figures(run: ConsumerFigures) -> ThroughputFigures {
    let threads = &run.window.threads;
    let app_cores = threads
        .iter()
        .filter(|t| t.name == APP_THREAD)
        .map(|t| t.cores)
        .sum::<f64>()
        + 0.0; // an empty sum is -0.0
    let broker = threads
        .iter()
        .filter(|t| t.name.starts_with("rdk:broker"))
        .max_by(|a, b| a.cores.total_cmp(&b.cores));
    let saturated = threads
        .iter()
        .filter(|t| !t.name.starts_with("rdk:mock"))
        .max_by(|a, b| a.cores.total_cmp(&b.cores))
        .filter(|t| t.cores >= SATURATED_CORES)
        .map(|t| t.name.clone());
    ThroughputFigures {
        app_cores: measure::round3(app_cores),
        broker_thread: broker.map(|t| t.name.clone()).unwrap_or_default(),
        broker_thread_cores: broker.map_or(0.0, |t| t.cores),
        saturated_thread: saturated,
        run,
    }
}

fn throughput_not_measured(broker: &Broker, compression: &str) -> Vec<String> {
    let mut v = vec![
        "end-to-end latency (throughput mode; use --rate for latency)".to_string(),
        "librdkafka's statistics (off in every run: the batch call would swallow them)".to_string(),
        "the first 10% of each run's messages (warmup)".to_string(),
    ];
    if broker.is_mock() {
        v.push(
            "Apache Kafka's fetch path: the broker was librdkafka's in-process mock, whose thread \
             shares the 2 cores with the consumer"
                .to_string(),
        );
    }
    if compression != "none" {
        v.push(format!(
            "an uncompressed consumer: the prefill was {compression}-compressed, so the broker \
             thread also decompresses"
        ));
    }
    v
}

fn throughput_notes(broker: &Broker, opts: &Options) -> Vec<String> {
    let mut v = Vec::new();
    if broker.is_mock() {
        v.push(format!(
            "queued.min.messages={} on the mock (librdkafka's default is 100000): it keeps only \
             ~100k messages per partition",
            consumer_topic::MOCK_QUEUED_MIN_MESSAGES
        ));
    }
    v.push(format!(
        "the consume loop runs on its own thread, '{APP_THREAD}'; a thread at ≥ {SATURATED_CORES} \
         cores is called saturated"
    ));
    for (k, val) in &opts.common.property {
        v.push(format!("-X {k}={val} (applied last to every client)"));
    }
    v
}

fn api_of(s: &SettingResult) -> &str {
    s.params.get("api").and_then(Value::as_str).unwrap_or("")
}

fn backoff_of(s: &SettingResult) -> Option<u64> {
    s.params
        .get("fetch.queue.backoff.ms")
        .and_then(Value::as_u64)
}

/// The most common saturated thread over a setting's runs (None when none saturated).
fn saturated_of(s: &SettingResult) -> Option<String> {
    let mut names: Vec<&str> = s
        .runs
        .iter()
        .filter_map(|r| r.get("saturated_thread").and_then(Value::as_str))
        .collect();
    names.sort();
    let mut best: Option<(&str, usize)> = None;
    for n in &names {
        let c = names.iter().filter(|m| *m == n).count();
        if best.is_none_or(|(_, bc)| c > bc) {
            best = Some((n, c));
        }
    }
    best.filter(|(_, c)| 2 * c > s.runs.len())
        .map(|(n, _)| n.to_string())
}

/// The chain holds when, at the fastest backoff: poll() saturates the application thread; the
/// fixed batch API runs ≥ 1.15x faster than poll(); and under it the busiest thread is
/// librdkafka's broker thread, not the application's.
pub fn throughput_verdict(settings: &[SettingResult]) -> Verdict {
    let measured: Vec<&SettingResult> = settings.iter().filter(|s| !s.runs.is_empty()).collect();
    let Some(fast) = measured.iter().filter_map(|s| backoff_of(s)).min() else {
        return Verdict::cannot_tell(FINDING, "nothing was measured", json!({}));
    };
    let at = |api: &str| {
        measured
            .iter()
            .find(|s| api_of(s) == api && backoff_of(s) == Some(fast))
            .copied()
    };
    let (Some(poll), Some(fixed)) = (at("poll"), at("batch-fixed")) else {
        return Verdict::cannot_tell(
            FINDING,
            format!(
                "the rule compares poll and the fixed batch API at fetch.queue.backoff.ms={fast}: \
                 run both (--api poll,fixed)"
            ),
            json!({}),
        );
    };
    let rate = |s: &SettingResult| s.median_of("msgs_per_s").unwrap_or(0.0);
    let gain = if rate(poll) > 0.0 {
        rate(fixed) / rate(poll)
    } else {
        0.0
    };
    let poll_limit = saturated_of(poll);
    let fixed_limit = saturated_of(fixed);
    let busiest = |s: &SettingResult| -> (String, f64) {
        let app = s.median_of("app_cores").unwrap_or(0.0);
        let brk = s.median_of("broker_thread_cores").unwrap_or(0.0);
        if brk > app {
            ("rdk:broker".into(), brk)
        } else {
            (APP_THREAD.into(), app)
        }
    };
    // Under CPU contention (2 cores shared with a broker) no thread may reach a whole core;
    // the share of the process's CPU still says which thread the work is on.
    let share = |s: &SettingResult, k: &str| {
        let all = s.median_of("consumer_cores").unwrap_or(0.0);
        (all > 0.0).then(|| measure::round3(s.median_of(k).unwrap_or(0.0) / all))
    };
    let (poll_busy, poll_cores) = busiest(poll);
    let (fixed_busy, fixed_cores) = busiest(fixed);
    let app_bound_poll = poll_busy == APP_THREAD;
    let broker_bound_batch = fixed_busy.starts_with("rdk:broker");
    let holds = app_bound_poll && broker_bound_batch && gain >= 1.15;
    let slow = measured
        .iter()
        .filter(|s| api_of(s) == "poll")
        .filter_map(|s| backoff_of(s).map(|b| (b, s)))
        .max_by_key(|(b, _)| *b)
        .filter(|(b, _)| *b > fast);
    let nap_line = slow.map(|(b, s)| {
        format!(
            "at fetch.queue.backoff.ms={b}, poll() ran {} msg/s with {:.1} s idle: the backoff is \
             the first limit; ",
            result::si(rate(s)),
            s.median_of("idle_s").unwrap_or(0.0)
        )
    });
    let evidence = json!({
        "backoff_ms": fast,
        "poll_msgs_per_s": rate(poll),
        "batch_fixed_msgs_per_s": rate(fixed),
        "gain_batch_over_poll": measure::round3(gain),
        "poll_busiest_thread": poll_busy,
        "poll_busiest_cores": poll_cores,
        "poll_saturated_thread": poll_limit,
        "batch_busiest_thread": fixed_busy,
        "batch_busiest_cores": fixed_cores,
        "batch_saturated_thread": fixed_limit,
        "poll_app_share_of_process_cpu": share(poll, "app_cores"),
        "batch_broker_thread_share_of_process_cpu": share(fixed, "broker_thread_cores"),
        "post": {
            "batch_msgs_per_s": POST_BATCH_MSGS_PER_S,
            "broker_thread_cores": POST_BROKER_THREAD_CORES,
        },
    });
    // Harness honesty: the probe's batch loop against librdkafka's own tool, same topic.
    let harness = measured
        .iter()
        .find(|s| api_of(s) == RDKAFKA_PERFORMANCE && backoff_of(s) == Some(fast))
        .filter(|r| rate(r) > 0.0)
        .map(|r| {
            let ratio = rate(fixed) / rate(r);
            json!({
                "probe_batch_fixed_msgs_per_s": rate(fixed),
                "rdkafka_performance_msgs_per_s": rate(r),
                "ratio": measure::round3(ratio),
                "target": HARNESS_TARGET_RATIO,
                "met": ratio >= HARNESS_TARGET_RATIO,
            })
        });
    let mut evidence = evidence;
    if let Some(h) = &harness {
        evidence["harness"] = h.clone();
    }
    let summary = format!(
        "{}with poll() at {fast} ms the busiest thread was {poll_busy} ({poll_cores:.2} cores, {} msg/s){}; \
         the fixed batch API ran {} msg/s ({gain:.2}x) with {fixed_busy} busiest ({fixed_cores:.2} cores){}. {}",
        nap_line.unwrap_or_default(),
        result::si(rate(poll)),
        if poll_limit.is_some() { ", saturated" } else { "" },
        result::si(rate(fixed)),
        if fixed_limit.is_some() { ", saturated" } else { "" },
        if holds {
            "The limit moved from the application thread (one message per poll() call) to \
             librdkafka's broker thread (per-message parsing; the post: 0.94 cores at 2.1M msg/s). \
             Next limit: that one thread per broker connection — more brokers (partitions \
             spread over more leaders) or larger messages."
        } else if !app_bound_poll {
            "poll() did not make the application thread the busiest: something else limits this \
             consumer first (see the threads)."
        } else if gain < 1.15 {
            "The batch API gained too little to call the application thread the limit."
        } else {
            "Under the batch API the application thread stayed the busiest."
        }
    );
    Verdict {
        finding: FINDING.into(),
        holds,
        decided: true,
        summary,
        evidence,
    }
}

fn run_latency(opts: &Options, progress: &dyn Fn(&str)) -> Result<ProbeResult> {
    let broker = Broker::start(opts.common.brokers.as_deref(), &opts.common.property)?;
    let producer_settings = latency_producer_settings();
    broker.validate(&producer_settings)?;
    if opts.size < 8 {
        return Err(ProbeError::Usage(
            "--size must be at least 8 bytes: the payload carries its send timestamp".into(),
        ));
    }
    let out = OutDir::new(opts.common.out.as_deref(), PROBE)?;
    let pool = Pool::new(opts.size, PayloadKind::Random);
    let partitions = opts.partitions.unwrap_or(EXTERNAL_PARTITIONS);
    let points: Vec<(u64, ConsumeApi)> = opts
        .rates
        .iter()
        .flat_map(|&r| opts.apis.iter().map(move |&a| (r, a)))
        .collect();
    let mut result = ProbeResult::new(
        PROBE,
        &broker,
        &pool,
        opts.common.reps,
        points
            .iter()
            .map(|(r, a)| params(a, None, Some(*r)))
            .collect(),
    );
    result.not_measured = vec![
        "throughput (latency mode paces the producer)".to_string(),
        "messages sent during the warmup (not recorded)".to_string(),
    ];
    result.notes.push(format!(
        "each run: its own topic of {} partitions, {} B messages stamped with the send time, \
         linger.ms=0, a {:.1} s warmup at the rate, then a {:.1} s window; the consumer fetches \
         with fetch.queue.backoff.ms=10",
        partitions,
        opts.size,
        opts.warmup.as_secs_f64(),
        opts.window.as_secs_f64()
    ));
    if broker.is_mock() {
        result.notes.push(
            "the consumer fetches with fetch.wait.max.ms=1 on the mock, which holds an empty \
             fetch for the full wait (Apache Kafka answers at once)"
                .to_string(),
        );
    }
    progress(&format!("broker: {}", broker.label()));
    'reps: for rep in 1..=opts.common.reps {
        for pi in result::rep_order(rep, points.len()) {
            if interrupt::stopped() {
                result.interrupted = true;
                break 'reps;
            }
            let (rate, api) = points[pi];
            let (figures, topic) = latency_once(&broker, opts, partitions, &pool, rate, api)?;
            result.topic = topic;
            progress(&format!(
                "{} at {rate} msg/s rep {rep}/{}: e2e p50/p99 {:.2}/{:.2} ms{}{}",
                api.name(),
                opts.common.reps,
                figures.e2e_ms_p50,
                figures.e2e_ms_p99,
                figures
                    .expected_wait_ms_p50
                    .map(|e| format!(" (arithmetic: wait p50 {e:.1} ms)"))
                    .unwrap_or_default(),
                if figures.sustained {
                    ""
                } else {
                    " (rate NOT sustained)"
                }
            ));
            result.settings[pi].push_run(&figures);
            out.write(&result)?;
        }
    }
    result.verdict = Some(latency_verdict(&result.settings));
    out.write(&result)?;
    Ok(result)
}

fn latency_producer_settings() -> Vec<(&'static str, String)> {
    // linger 0 and 5 in flight: the producer should add as little latency as it can.
    paced::producer_settings(0, 5)
        .into_iter()
        .filter(|(k, _)| *k != "statistics.interval.ms")
        .collect()
}

/// The naive wrapper's arithmetic: a call returns when `batch` messages arrived (batch/rate
/// seconds) or at the timeout, whichever comes first; messages arrive evenly in between, so
/// the wait is uniform on [0, that]: p50 half of it, p99 99% of it. None for other APIs.
pub fn naive_expected_wait_ms(api: &ConsumeApi, rate: u64) -> Option<(f64, f64)> {
    match api {
        ConsumeApi::Batch {
            size,
            policy: WaitPolicy::Naive { timeout },
        } if rate > 0 => {
            let fill_ms = *size as f64 / rate as f64 * 1000.0;
            let cycle = fill_ms.min(timeout.as_secs_f64() * 1000.0);
            Some((measure::round3(cycle / 2.0), measure::round3(cycle * 0.99)))
        }
        _ => None,
    }
}

fn latency_once(
    broker: &Broker,
    opts: &Options,
    partitions: i32,
    pool: &Pool,
    rate: u64,
    api: ConsumeApi,
) -> Result<(LatencyFigures, String)> {
    let topic = broker.create_topic(PROBE, partitions)?;
    let origin = Instant::now();
    let ack = Arc::new(AckLatency::new(origin));
    let producer = Producer::with_context(
        broker,
        &latency_producer_settings(),
        KgapContext::with_ack_latency(Arc::new(Sink::default()), ack.clone()),
    )?;
    let handle = TopicHandle::new(&producer, &topic.name)?;
    let mut settings = paced::consumer_settings(
        &crate::broker::topic_name("probe-batch-consume-group"),
        broker.is_mock(),
    );
    settings.retain(|(k, _)| *k != "statistics.interval.ms");
    let consumer = Consumer::new(broker, &settings, Arc::new(Sink::default()))?;
    consumer.assign_from_start(&topic.name, partitions)?;
    let window_from = AtomicI64::new(i64::MAX);
    let window_to = AtomicI64::new(i64::MAX);
    let stop = AtomicBool::new(false);
    let (hist, side) = std::thread::scope(|scope| -> Result<_> {
        let (from, to, stop_c, c) = (&window_from, &window_to, &stop, &consumer);
        let reader = std::thread::Builder::new()
            .name(APP_THREAD.into())
            .spawn_scoped(scope, move || -> Result<hdrhistogram::Histogram<u64>> {
                let mut h = measure::latency_histogram();
                consume::drive(
                    c,
                    api,
                    Duration::from_millis(50),
                    |p| {
                        let now = paced::wall_ns();
                        if let Some(sent) = payload::read_e2e(p) {
                            if sent >= from.load(Ordering::Relaxed)
                                && sent <= to.load(Ordering::Relaxed)
                            {
                                h.saturating_record(((now - sent).max(1000) / 1000) as u64);
                            }
                        }
                        if stop_c.load(Ordering::Relaxed) {
                            Flow::Stop
                        } else {
                            Flow::Continue
                        }
                    },
                    || {
                        if stop_c.load(Ordering::Relaxed) {
                            Flow::Stop
                        } else {
                            Flow::Continue
                        }
                    },
                )?;
                Ok(h)
            })
            .expect("spawn kgap-app");
        let side = paced::produce_paced(
            &producer,
            &handle,
            pool,
            &PacedWindow {
                partitions,
                warmup: opts.warmup,
                window: opts.window,
            },
            rate,
            &ack,
            &window_from,
            &window_to,
        );
        // Let the window's last messages arrive: acks first, then longer than any wait the
        // naive policy can add.
        let until = Instant::now() + Duration::from_secs(3);
        while Instant::now() < until && producer.producer.in_flight_count() > 0 {
            producer.producer.poll(Duration::from_millis(5));
        }
        std::thread::sleep(Duration::from_millis(300));
        stop.store(true, Ordering::Relaxed);
        let h = reader.join().expect("consumer thread");
        Ok((h?, side?))
    })?;
    drop(handle);
    drop(producer);
    drop(consumer);
    let name = topic.name.clone();
    topic.delete()?;
    let e: Percentiles = measure::percentiles(&hist);
    let window_s = side.end.at.duration_since(side.start.at).as_secs_f64();
    let achieved = if window_s > 0.0 {
        side.window_sent as f64 / window_s
    } else {
        0.0
    };
    // The arithmetic at the rate the messages really came at.
    let expected = naive_expected_wait_ms(&api, achieved.round().max(1.0) as u64);
    Ok((
        LatencyFigures {
            rate_target_per_s: rate,
            rate_achieved_per_s: measure::round3(achieved),
            sustained: achieved >= 0.97 * rate as f64,
            e2e_ms_p50: e.p50_ms,
            e2e_ms_p90: e.p90_ms,
            e2e_ms_p99: e.p99_ms,
            e2e_ms_max: e.max_ms,
            e2e_count: e.count,
            expected_wait_ms_p50: expected.map(|x| x.0),
            expected_wait_ms_p99: expected.map(|x| x.1),
            window_s: measure::round3(window_s),
        },
        name,
    ))
}

/// The wrapper's bug holds when, at the lowest rate run, the naive policy's p50 is within
/// ±30% of its arithmetic (plus the fixed policy's p50, the transport's share) and its p99 is
/// ≥ 3x the fixed policy's; the fix holds when fixed is within 2x (+1 ms) of poll().
pub fn latency_verdict(settings: &[SettingResult]) -> Verdict {
    let measured: Vec<&SettingResult> = settings.iter().filter(|s| !s.runs.is_empty()).collect();
    let rate_of = |s: &SettingResult| {
        s.params
            .get("rate_per_s")
            .and_then(Value::as_u64)
            .unwrap_or(0)
    };
    let Some(low) = measured.iter().map(|s| rate_of(s)).min() else {
        return Verdict::cannot_tell(FINDING_LATENCY, "nothing was measured", json!({}));
    };
    let at = |api: &str| {
        measured
            .iter()
            .find(|s| api_of(s) == api && rate_of(s) == low)
            .copied()
    };
    let (Some(naive), Some(fixed)) = (at("batch-naive"), at("batch-fixed")) else {
        return Verdict::cannot_tell(
            FINDING_LATENCY,
            format!("the rule compares the naive and fixed policies at {low} msg/s: run both"),
            json!({}),
        );
    };
    let m = |s: &SettingResult, k: &str| s.median_of(k).unwrap_or(0.0);
    let expected_p50 = m(naive, "expected_wait_ms_p50");
    let transport = m(fixed, "e2e_ms_p50");
    let naive_p50 = m(naive, "e2e_ms_p50");
    let naive_p99 = m(naive, "e2e_ms_p99");
    let fixed_p99 = m(fixed, "e2e_ms_p99");
    let target = expected_p50 + transport;
    let near_arithmetic = target > 0.0 && (naive_p50 - target).abs() <= 0.3 * target;
    let inflated = naive_p99 >= 3.0 * fixed_p99;
    let poll = at("poll");
    let fix_ok = poll.is_none_or(|p| fixed_p99 <= 2.0 * m(p, "e2e_ms_p99") + 1.0);
    // The arithmetic needs the rate only roughly (at low rates the timeout decides), so a
    // pacer that lost a few percent to a busy machine still counts; 10% off does not.
    let sustained = [naive, fixed].iter().all(|s| {
        s.runs.iter().all(|r| {
            let got = r["rate_achieved_per_s"].as_f64().unwrap_or(0.0);
            let want = r["rate_target_per_s"].as_f64().unwrap_or(f64::MAX);
            got >= 0.9 * want
        })
    });
    let holds = near_arithmetic && inflated && fix_ok && sustained;
    let evidence = json!({
        "rate_per_s": low,
        "naive_e2e_ms_p50": naive_p50,
        "naive_e2e_ms_p99": naive_p99,
        "naive_expected_wait_ms_p50": expected_p50,
        "naive_expected_wait_ms_p99": m(naive, "expected_wait_ms_p99"),
        "fixed_e2e_ms_p50": transport,
        "fixed_e2e_ms_p99": fixed_p99,
        "poll_e2e_ms_p99": poll.map(|p| m(p, "e2e_ms_p99")),
        "sustained": sustained,
    });
    let summary = format!(
        "at {low} msg/s the naive wrapper's e2e p50/p99 was {naive_p50:.1}/{naive_p99:.1} ms against \
         the arithmetic's wait of {expected_p50:.1} ms p50 (+{transport:.1} ms transport); the fixed \
         policy's p99 was {fixed_p99:.1} ms{}. {}",
        poll.map(|p| format!(", poll()'s {:.1} ms", m(p, "e2e_ms_p99")))
            .unwrap_or_default(),
        if holds {
            "The naive wrapper waits for a full batch: every message pays up to the timeout. \
             Fix: take what is queued with timeout 0 and block only when nothing is (the fixed policy)."
        } else if !sustained {
            "The rate was more than 10% below its target: not counted."
        } else if !near_arithmetic {
            "The naive policy's latency does not follow the arithmetic here."
        } else if !inflated {
            "The naive policy's p99 was not ≥ 3x the fixed policy's."
        } else {
            "The fixed policy was not close to poll()."
        }
    );
    Verdict {
        finding: FINDING_LATENCY.into(),
        holds,
        decided: true,
        summary,
        evidence,
    }
}

pub fn render_text(r: &ProbeResult) -> String {
    let latency = r
        .settings
        .first()
        .is_some_and(|s| s.params.contains_key("rate_per_s"));
    let mut s = result::render_header(
        r,
        &format!(
            "{} B {} messages, {}",
            r.payload.size_bytes,
            r.payload.kind,
            if latency {
                "latency mode (paced producer in the same process)"
            } else {
                "throughput mode (a prefilled topic consumed by each API)"
            }
        ),
    );
    if latency {
        let mut t = Table::new([
            "rate/s",
            "api",
            "e2e p50 ms",
            "p90",
            "p99",
            "max",
            "arithmetic p50/p99",
            "sustained",
        ]);
        for set in r.settings.iter().filter(|s| !s.runs.is_empty()) {
            let g = |k: &str| set.median_of(k).unwrap_or(0.0);
            t.row(vec![
                set.params["rate_per_s"].to_string(),
                api_of(set).to_string(),
                format!("{:.2}", g("e2e_ms_p50")),
                format!("{:.2}", g("e2e_ms_p90")),
                format!("{:.2}", g("e2e_ms_p99")),
                format!("{:.2}", g("e2e_ms_max")),
                set.median_of("expected_wait_ms_p50")
                    .map(|e| format!("{e:.1}/{:.1}", g("expected_wait_ms_p99")))
                    .unwrap_or_else(|| "-".into()),
                if set.runs.iter().all(|r| r["sustained"] == json!(true)) {
                    "yes".into()
                } else {
                    "NO".into()
                },
            ]);
        }
        s.push_str(&t.render());
        s.push_str(
            "\narithmetic: the naive wrapper's wait alone, min(batch/rate, timeout) × 0.5 and × 0.99; \
             e2e adds the transport (≈ the fixed policy's p50).\n",
        );
    } else {
        let mut t = Table::new([
            "backoff ms",
            "api",
            "msg/s median (min–max)",
            "MB/s",
            "app cores",
            "rdk:broker cores",
            "saturated",
            "idle s",
        ]);
        for set in r.settings.iter().filter(|s| !s.runs.is_empty()) {
            let g = |k: &str| set.median_of(k).unwrap_or(0.0);
            // rdkafka_performance is another process: its threads are not sampled.
            let own = api_of(set) != RDKAFKA_PERFORMANCE;
            let cell = |v: String| if own { v } else { "-".to_string() };
            t.row(vec![
                backoff_of(set).map_or("?".into(), |b| b.to_string()),
                api_of(set).to_string(),
                set.median_range_si("msgs_per_s"),
                format!("{:.1}", g("mb_per_s")),
                cell(format!("{:.2}", g("app_cores"))),
                cell(format!("{:.2}", g("broker_thread_cores"))),
                cell(saturated_of(set).unwrap_or_else(|| "-".into())),
                cell(format!("{:.1}", g("idle_s"))),
            ]);
        }
        s.push_str(&t.render());
        s.push_str(&format!(
            "\napp: the thread calling poll() or the batch API ('{APP_THREAD}'); rdk:broker: the busiest \
             of librdkafka's broker threads; saturated: the busiest consumer thread at ≥ {SATURATED_CORES} \
             cores in most reps.\n"
        ));
    }
    let mut extra = Vec::new();
    if let Some(h) = r.verdict.as_ref().and_then(|v| v.evidence.get("harness")) {
        extra.push(format!(
            "harness honesty: the probe's fixed batch loop ran {} msg/s, librdkafka's rdkafka_performance \
             -C -B on the same topic {} msg/s: {:.3}x (target ≥ {HARNESS_TARGET_RATIO}, {}; medians, \
             runs alternated; rdkafka_performance times from its first message, the probe after a 10% warmup)",
            result::si(h["probe_batch_fixed_msgs_per_s"].as_f64().unwrap_or(0.0)),
            result::si(h["rdkafka_performance_msgs_per_s"].as_f64().unwrap_or(0.0)),
            h["ratio"].as_f64().unwrap_or(0.0),
            if h["met"] == json!(true) { "met" } else { "NOT met" }
        ));
    }
    s.push_str(&result::render_footer(r, &extra));
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setting(params: Value, runs: &[Value]) -> SettingResult {
        let mut s = SettingResult::new(params.as_object().unwrap().clone());
        for r in runs {
            s.push_run(r);
        }
        s
    }

    fn tp(
        api: &str,
        backoff: u64,
        rate: f64,
        app: f64,
        brk: f64,
        sat: Option<&str>,
    ) -> SettingResult {
        setting(
            json!({"api": api, "fetch.queue.backoff.ms": backoff}),
            &[
                json!({"msgs_per_s": rate, "app_cores": app, "broker_thread_cores": brk,
                     "saturated_thread": sat, "idle_s": 0.0}),
            ],
        )
    }

    #[test]
    fn chain_holds_when_the_limit_moves_to_the_broker_thread() {
        let v = throughput_verdict(&[
            tp("poll", 1000, 389e3, 0.3, 0.2, None),
            tp("poll", 10, 1.16e6, 0.95, 0.6, Some(APP_THREAD)),
            tp("batch-fixed", 10, 1.61e6, 0.4, 0.94, Some("rdk:broker1")),
        ]);
        assert!(v.holds && v.decided, "{}", v.summary);
        assert!(
            v.summary.contains("fetch.queue.backoff.ms=1000"),
            "{}",
            v.summary
        );
        assert_eq!(v.evidence["batch_busiest_thread"], "rdk:broker");
    }

    #[test]
    fn chain_does_not_hold_without_gain_or_with_the_app_still_busiest() {
        let no_gain = throughput_verdict(&[
            tp("poll", 10, 1.16e6, 0.95, 0.6, Some(APP_THREAD)),
            tp("batch-fixed", 10, 1.2e6, 0.4, 0.94, None),
        ]);
        assert!(!no_gain.holds && no_gain.decided);
        let app_busy = throughput_verdict(&[
            tp("poll", 10, 1.0e6, 0.95, 0.6, None),
            tp("batch-fixed", 10, 1.6e6, 0.9, 0.5, None),
        ]);
        assert!(!app_busy.holds);
        let missing = throughput_verdict(&[tp("poll", 10, 1.0e6, 0.95, 0.6, None)]);
        assert!(!missing.decided, "{}", missing.summary);
    }

    #[test]
    fn naive_arithmetic_follows_batch_over_rate_capped_at_the_timeout() {
        let naive = ConsumeApi::Batch {
            size: 500,
            policy: WaitPolicy::NAIVE_100MS,
        };
        // 1000/s: 500 messages take 500 ms > 100 ms, so the timeout decides.
        assert_eq!(naive_expected_wait_ms(&naive, 1000), Some((50.0, 99.0)));
        // 10000/s: the batch fills in 50 ms.
        assert_eq!(naive_expected_wait_ms(&naive, 10_000), Some((25.0, 49.5)));
        assert_eq!(naive_expected_wait_ms(&ConsumeApi::Poll, 1000), None);
    }

    fn lat(api: &str, p50: f64, p99: f64, exp50: Option<f64>) -> SettingResult {
        setting(
            json!({"api": api, "rate_per_s": 1000}),
            &[
                json!({"e2e_ms_p50": p50, "e2e_ms_p99": p99, "expected_wait_ms_p50": exp50,
                     "sustained": true, "rate_target_per_s": 1000, "rate_achieved_per_s": 960.0}),
            ],
        )
    }

    #[test]
    fn latency_verdict_both_ways() {
        let bug = latency_verdict(&[
            lat("poll", 1.0, 3.0, None),
            lat("batch-fixed", 1.1, 3.2, None),
            lat("batch-naive", 52.0, 100.5, Some(50.0)),
        ]);
        assert!(bug.holds, "{}", bug.summary);
        let no_bug = latency_verdict(&[
            lat("batch-fixed", 1.1, 3.2, None),
            lat("batch-naive", 1.3, 4.0, Some(50.0)),
        ]);
        assert!(!no_bug.holds && no_bug.decided);
        // A rate 15% short is not counted, whatever the latencies.
        let mut slow = lat("batch-naive", 52.0, 100.5, Some(50.0));
        slow.runs[0]["rate_achieved_per_s"] = json!(850.0);
        let short = latency_verdict(&[lat("batch-fixed", 1.1, 3.2, None), slow]);
        assert!(
            !short.holds && short.summary.contains("10%"),
            "{}",
            short.summary
        );
        // Half the arithmetic (a wait cut short) is not the naive wrapper's shape.
        let half = latency_verdict(&[
            lat("batch-fixed", 1.0, 1.5, None),
            lat("batch-naive", 25.8, 51.0, Some(50.0)),
        ]);
        assert!(!half.holds, "{}", half.summary);
        assert!(!latency_verdict(&[lat("poll", 1.0, 3.0, None)]).decided);
    }

    #[test]
    fn rdkafka_performance_summary_line_parses() {
        // The format of rdkafka_performance.c (librdkafka 2.12.1), consumer summary.
        let out = "% Waiting for group rebalance..\n\
                   % 2000000 messages (200000000 bytes) consumed in 1250ms: 1600000 msgs/s (160.00 MB/s)\n";
        let r = parse_rdkafka_performance(out).unwrap();
        assert_eq!(r.messages, 2_000_000);
        assert!((r.msgs_per_s - 1.6e6).abs() < 1.0);
        assert!((r.mb_per_s - 160.0).abs() < 1e-9);
        assert!(parse_rdkafka_performance("% Waiting for group rebalance..\n").is_none());
    }

    #[test]
    fn apis_parse_and_reject() {
        let v = parse_apis("poll,fixed,naive,fixed", 500, Duration::from_millis(100)).unwrap();
        assert_eq!(v.len(), 3);
        assert_eq!(v[2].name(), "batch-naive");
        assert!(parse_apis("poll,bogus", 500, Duration::from_millis(100)).is_err());
        assert!(parse_apis("", 500, Duration::from_millis(100)).is_err());
    }
}
