//! One librdkafka run at a point: a topic of its own, a fully acknowledged warmup, the window,
//! statistics and per-thread CPU; and the short debug=protocol,msg pass analyze-protocol-log
//! reads.

use super::options::{Profile, RequestCeiling};
use super::point::Point;
use crate::kit::broker::{Broker, Producer};
use crate::kit::broker_figures::{self, BrokerFigures};
use crate::kit::capture::Sink;
use crate::kit::error::{ProbeError, Result};
use crate::kit::measure::{self, WindowFigures};
use crate::kit::payload::Pool;
use crate::kit::produce::{self, StatsFigures, ThroughputSpec, TopicHandle};
use crate::kit::{Context, Probe};
use kgap_analyzers::protocol_log::{self, ProtocolLogOptions};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

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

/// One librdkafka run's figures.
#[derive(Debug, Clone, Serialize)]
pub struct LibrdkafkaFigures {
    #[serde(flatten)]
    pub window: WindowFigures,
    /// ProduceRequests per second (statistics: brokers[].req.Produce).
    pub produce_requests_per_s: Option<f64>,
    /// Bytes sent per ProduceRequest (txbytes over requests).
    pub bytes_per_request: Option<f64>,
    /// Partition batches per ProduceRequest (statistics: topics[].batchsize.cnt over
    /// req.Produce).
    pub batches_per_request: Option<f64>,
    /// Mean batch size in bytes and messages (statistics: topics[].batchsize, batchcnt).
    pub batch_bytes_mean: Option<f64>,
    pub msgs_per_batch_mean: Option<f64>,
    /// Broker round trip, median of the per-second p50s and the worst p99 (statistics rtt).
    pub rtt_ms_p50: Option<f64>,
    pub rtt_ms_p99: Option<f64>,
    /// Cores of all of librdkafka's broker threads (rdk:broker*), and of the busiest one.
    pub broker_thread_cores: f64,
    pub busiest_broker_thread: Option<String>,
    pub busiest_broker_thread_cores: Option<f64>,
    /// The producing thread (`app`); None when /proc did not show it.
    pub app_cores: Option<f64>,
    /// The embedded mock's serving thread (rdk:mock); 0 on a real broker.
    pub mock_cores: f64,
    pub delivery_errors: u64,
    pub stats_emits: usize,
    /// Each broker connection over the window (the figures above are summed over them).
    pub brokers: Vec<BrokerFigures>,
    /// The run's own topic (deleted after the run).
    pub topic: String,
}

/// How one run goes.
#[derive(Debug, Clone, Copy)]
pub struct RunSpec {
    pub profile: Profile,
    pub warmup_messages: u64,
    pub window: Duration,
    /// debug=protocol,msg into the run's debug.log (the diagnosis pass only).
    pub debug_protocol: bool,
}

/// One run on a fresh topic: warmup, window, statistics, threads.
pub fn run_once(
    broker: &Broker,
    pool: &Pool,
    spec: &RunSpec,
    p: &Point,
    dir: &Path,
) -> Result<LibrdkafkaFigures> {
    let topic = broker.create_topic(<RequestCeiling as Probe>::NAME, p.partitions)?;
    let stats_path = dir.join("stats.jsonl");
    let log_path = dir.join("debug.log");
    let sink = Arc::new(
        Sink::to_files(Some(&log_path), Some(&stats_path))
            .map_err(|e| ProbeError::io(format!("creating files in {}", dir.display()), e))?,
    );
    let mut settings = producer_settings(spec.profile, p.batch_size);
    settings.extend(
        p.knob_settings()
            .into_iter()
            .map(|(k, v)| (k, v.to_string())),
    );
    if spec.debug_protocol {
        settings.push(("debug", "protocol,msg".to_string()));
    }
    let producer = Producer::new(broker, &settings, sink)?;
    let handle = TopicHandle::new(&producer, &topic.name)?;
    let w = produce::measure_throughput(
        &producer,
        &handle,
        p.partitions,
        pool,
        ThroughputSpec {
            warmup_messages: spec.warmup_messages,
            window: spec.window,
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
        batch_bytes_mean,
        msgs_per_batch_mean,
        rtt_ms_p50,
        rtt_ms_p99,
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
    // threads are busiest first.
    let busiest = window
        .threads
        .iter()
        .find(|t| t.name.starts_with("rdk:broker"));
    Ok(LibrdkafkaFigures {
        produce_requests_per_s,
        bytes_per_request,
        batches_per_request: produce::batches_per_request(&w.stats),
        batch_bytes_mean,
        msgs_per_batch_mean,
        rtt_ms_p50,
        rtt_ms_p99,
        broker_thread_cores: sum(&|n| n.starts_with("rdk:broker")),
        busiest_broker_thread: busiest.map(|t| t.name.clone()),
        busiest_broker_thread_cores: busiest.map(|t| t.cores),
        app_cores: window
            .threads
            .iter()
            .find(|t| t.name == "app")
            .map(|t| t.cores),
        mock_cores: sum(&|n| n.starts_with("rdk:mock")),
        delivery_errors: w.delivery_errors,
        stats_emits: w.stats.len(),
        brokers: broker_figures::per_broker(&w.stats, "Produce", &window.threads),
        topic: name,
        window,
    })
}

/// One diagnosis line of analyze-protocol-log, as the probe keeps it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ProtocolDiagnosis {
    pub id: String,
    pub title: String,
    pub cause: String,
    pub fix: String,
}

/// The short debug=protocol,msg pass at the ceiling point and what analyze-protocol-log
/// read from it (one entry of the result's `diagnoses`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ProtocolPass {
    /// `analyze-protocol-log`.
    pub tool: String,
    /// The capture, when the out dir is kept.
    pub log: Option<PathBuf>,
    pub partitions: i32,
    #[serde(rename = "batch.size")]
    pub batch_size: u64,
    /// `Sent ProduceRequest` lines and `Produce MessageSet` lines (one per partition batch).
    pub produce_requests: u64,
    pub messagesets: u64,
    /// MessageSets over ProduceRequests; None without requests or debug=msg lines.
    pub batches_per_request: Option<f64>,
    pub diagnoses: Vec<ProtocolDiagnosis>,
    pub topic: String,
}

/// Runs the pass and analyzes its own debug log.
pub fn protocol_pass(
    cx: &Context,
    pool: &Pool,
    spec: &RunSpec,
    p: &Point,
    dir: &Path,
) -> Result<ProtocolPass> {
    let run = run_once(&cx.broker, pool, spec, p, dir)?;
    let log = dir.join("debug.log");
    let f = std::fs::File::open(&log)
        .map_err(|e| ProbeError::io(format!("reading {}", log.display()), e))?;
    let report = protocol_log::analyze_protocol_log(f, &ProtocolLogOptions::default())
        .map_err(|e| ProbeError::Kafka(format!("analyzing {}: {e}", log.display())))?;
    let produce_requests: u64 = report.produce.iter().map(|s| s.requests).sum();
    let messagesets = report
        .messages_per_request
        .as_ref()
        .map_or(0, |m| m.messagesets);
    Ok(ProtocolPass {
        tool: "analyze-protocol-log".into(),
        log: (!cx.out.is_temporary()).then_some(log),
        partitions: p.partitions,
        batch_size: p.batch_size,
        produce_requests,
        messagesets,
        batches_per_request: (produce_requests > 0 && messagesets > 0)
            .then(|| measure::round3(messagesets as f64 / produce_requests as f64)),
        diagnoses: report
            .diagnoses
            .iter()
            .map(|d| ProtocolDiagnosis {
                id: d.id.clone(),
                title: d.title.clone(),
                cause: d.cause.clone(),
                fix: d.fix.clone(),
            })
            .collect(),
        topic: run.topic,
    })
}
