//! One Java run at a point: kgap's companion (kafka-clients 4.3.1, one KafkaProducer) on a
//! topic of its own, acks=1, idempotence off, batch.size from the point, its other defaults
//! (linger.ms 5, max.in.flight 5), a fix point's settings on top; the same payloads, warmup
//! and window as librdkafka's runs.

use super::options::{Options, RequestCeiling};
use super::point::Point;
use crate::kit::error::Result;
use crate::kit::java::{self, Jvm};
use crate::kit::measure;
use crate::kit::{Context, Probe};
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
    /// The producer network thread's CPU seconds in the window, and its user-space part
    /// (ThreadMXBean, which reads /proc/self/task/<tid>); None when the JVM could not tell.
    pub network_thread_cpu_s: Option<f64>,
    pub network_thread_user_cpu_s: Option<f64>,
    /// Bytes the producer sent in the window (producer-topic-metrics byte-total).
    pub wire_bytes: Option<u64>,
    /// The network thread's user and kernel CPU seconds per GB sent.
    pub network_user_cpu_s_per_gb: Option<f64>,
    pub network_sys_cpu_s_per_gb: Option<f64>,
    /// The run's own topic (deleted after the run).
    pub topic: String,
}

/// User and kernel CPU seconds per GB from the thread's total and user CPU and the bytes
/// sent; None when any is missing or the JVM reported -1.
pub fn per_gb(
    total_s: Option<f64>,
    user_s: Option<f64>,
    bytes: Option<u64>,
) -> (Option<f64>, Option<f64>) {
    match (total_s, user_s, bytes) {
        (Some(t), Some(u), Some(b)) if t >= 0.0 && u >= 0.0 && b > 0 => {
            let gb = b as f64 / 1e9;
            (
                Some(measure::round3(u / gb)),
                Some(measure::round3((t - u).max(0.0) / gb)),
            )
        }
        _ => (None, None),
    }
}

/// Ok(None): Ctrl-C stopped the JVM before it reported.
pub fn run_once(
    cx: &Context,
    opts: &Options,
    payload_sha256: &str,
    p: &Point,
    dir: &Path,
) -> Result<Option<JavaFigures>> {
    let mut client = vec![
        (
            "bootstrap.servers".to_string(),
            cx.broker.bootstrap().to_string(),
        ),
        ("acks".to_string(), "1".to_string()),
        ("enable.idempotence".to_string(), "false".to_string()),
        ("batch.size".to_string(), p.batch_size.to_string()),
    ];
    client.extend(
        p.knob_settings()
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string())),
    );
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
        let cpu = |x: Option<f64>| x.filter(|&v| v >= 0.0);
        let (network_user_cpu_s_per_gb, network_sys_cpu_s_per_gb) = per_gb(
            cpu(r.network_thread_cpu_s),
            cpu(r.network_thread_user_cpu_s),
            r.wire_bytes_window,
        );
        JavaFigures {
            network_thread_cpu_s: cpu(r.network_thread_cpu_s),
            network_thread_user_cpu_s: cpu(r.network_thread_user_cpu_s),
            wire_bytes: r.wire_bytes_window,
            network_user_cpu_s_per_gb,
            network_sys_cpu_s_per_gb,
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

#[cfg(test)]
mod tests {
    use super::per_gb;

    #[test]
    fn cpu_per_gb_splits_user_and_kernel_and_refuses_what_the_jvm_could_not_tell() {
        // 1.02 s user and 0.5 s kernel over 1 GB sent.
        assert_eq!(
            per_gb(Some(1.52), Some(1.02), Some(1_000_000_000)),
            (Some(1.02), Some(0.5))
        );
        assert_eq!(per_gb(Some(-1.0), Some(-1.0), Some(1)), (None, None));
        assert_eq!(per_gb(Some(1.0), None, Some(1)), (None, None));
        assert_eq!(per_gb(Some(1.0), Some(0.5), Some(0)), (None, None));
    }
}
