//! One Java run at a point: kgap's companion (kafka-clients 4.3.1, one KafkaProducer) on a
//! topic of its own, acks=1, idempotence off, batch.size from the point, its other defaults
//! (linger.ms 5, max.in.flight 5); the same payloads, warmup and window as librdkafka's runs.

use super::{Options, Point, RequestCeiling};
use crate::error::Result;
use crate::java::{self, Jvm};
use crate::kit::{Context, Probe};
use crate::measure;
use serde::Serialize;
use std::path::Path;
use std::time::Duration;

/// The Java companion's figures at one point.
#[derive(Debug, Clone, Serialize)]
pub struct JavaFigures {
    pub messages: u64,
    pub window_s: f64,
    pub msgs_per_s: f64,
    pub mb_per_s: f64,
    /// The JVM's CPU seconds per million messages.
    pub cpu_s_per_million: f64,
    pub gc_time_ms: u64,
    /// kafka-clients' records-per-request-avg (it packs every ready partition's batch).
    pub records_per_request_avg: Option<f64>,
    /// The run's own topic (deleted after the run).
    pub topic: String,
}

/// Ok(None): Ctrl-C stopped the JVM before it reported.
pub fn run_once(
    cx: &Context,
    opts: &Options,
    payload_sha256: &str,
    p: &Point,
    dir: &Path,
) -> Result<Option<JavaFigures>> {
    let client = vec![
        (
            "bootstrap.servers".to_string(),
            cx.broker.bootstrap().to_string(),
        ),
        ("acks".to_string(), "1".to_string()),
        ("enable.idempotence".to_string(), "false".to_string()),
        ("batch.size".to_string(), p.batch_size.to_string()),
    ];
    let run = java::run_point(
        cx.java()?,
        &cx.broker,
        RequestCeiling::NAME,
        p.partitions,
        dir,
        &Jvm::heap("1g"),
        &[
            ("mode", "produce".into()),
            ("size", opts.size.to_string()),
            ("kind", opts.kind.to_string()),
            ("producers", "1".into()),
            ("warmup", opts.warmup_messages.to_string()),
            ("seconds", format!("{:.3}", opts.duration.as_secs_f64())),
        ],
        &client,
        opts.duration + Duration::from_secs(180),
        payload_sha256,
    )?;
    Ok(run.map(|(run, topic)| {
        let r = run.result;
        JavaFigures {
            messages: r.messages,
            window_s: r.seconds,
            msgs_per_s: r.msgs_per_s,
            mb_per_s: r.mb_per_s,
            cpu_s_per_million: if r.messages > 0 {
                measure::round3(r.process_cpu_s / (r.messages as f64 / 1e6))
            } else {
                0.0
            },
            gc_time_ms: r.gc_time_ms,
            records_per_request_avg: r.records_per_request_avg,
            topic,
        }
    }))
}
