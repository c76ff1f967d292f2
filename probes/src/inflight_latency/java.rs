//! The Java side: one run of the companion's e2e mode at a point (a paced KafkaProducer and
//! a KafkaConsumer in one JVM, the same stamped payloads, the same pacing rule), on a fresh
//! topic of its own. Its rows never enter librdkafka's rules; Java's linger is its own claim.

use super::figures::Figures;
use super::options::{InflightLatency, Options};
use super::point::Point;
use crate::kit::error::Result;
use crate::kit::java::{self, CompanionResult, Jvm};
use crate::kit::payload::Pool;
use crate::kit::{Context, Probe};
use kgap_analyzers::findings::inflight_latency::SUSTAINED_SHARE;
use std::path::Path;
use std::time::Duration;

/// The Java side's paced warmup: at least 3 s, for the JIT. With 1 s the sending loop was
/// still being compiled in the window: at 1000 msg/s it fell more than 1 ms behind 52 times
/// in 3 s (963 msg/s, not sustained); after 3 s, 22 times (987 msg/s).
pub fn warmup(warmup: Duration) -> Duration {
    warmup.max(Duration::from_secs(3))
}

/// kafka-clients settings of one point: acks=1 as the librdkafka side, linger.ms and
/// max.in.flight.requests.per.connection as swept (idempotence off: it allows at most 5).
pub fn client_settings(bootstrap: &str, p: &Point) -> Vec<(String, String)> {
    vec![
        ("bootstrap.servers".to_string(), bootstrap.to_string()),
        ("acks".into(), "1".into()),
        ("enable.idempotence".into(), "false".into()),
        ("linger.ms".into(), p.linger_ms.to_string()),
        (
            "max.in.flight.requests.per.connection".into(),
            p.max_in_flight.min(i32::MAX as u64).to_string(),
        ),
    ]
}

/// The note every result with Java rows carries.
pub fn note(w: Duration) -> String {
    format!(
        "Java: the companion's e2e mode in its own JVM (-Xms=-Xmx=512m, G1) per run, a {:.1} s \
         paced warmup (at least 3 s, for the JIT), the same window, pacing rule and payloads; \
         send-to-ack in its send callback (kafka-clients runs it on its I/O thread); -X \
         settings apply to librdkafka only",
        warmup(w).as_secs_f64()
    )
}

/// One run. `Ok(None)`: Ctrl-C stopped the JVM.
pub fn once(
    cx: &Context,
    opts: &Options,
    pool: &Pool,
    p: &Point,
    dir: &Path,
) -> Result<Option<Figures>> {
    let run = java::run_point(
        cx.java()?,
        &cx.broker,
        InflightLatency::NAME,
        opts.partitions,
        dir,
        &Jvm::heap("512m"),
        &[
            ("mode", "e2e".into()),
            ("size", opts.size.to_string()),
            ("kind", "random".into()),
            ("rate", p.rate_per_s.to_string()),
            ("sample", "1".into()),
            ("seconds", format!("{:.3}", opts.duration.as_secs_f64())),
            (
                "warmup-seconds",
                format!("{:.3}", warmup(opts.warmup).as_secs_f64()),
            ),
        ],
        &client_settings(cx.broker.bootstrap(), p),
        opts.duration + warmup(opts.warmup) + Duration::from_secs(180),
        &pool.sha256_hex(),
    )?;
    Ok(run.map(|(run, topic)| figures(&run.result, p.rate_per_s, topic)))
}

/// The companion's result as the probe's figures; what it did not report stays absent (or
/// 0 for a count).
pub fn figures(r: &CompanionResult, rate: u64, topic: String) -> Figures {
    let achieved = r.rate_achieved_per_s.unwrap_or(0.0);
    let f = |x: Option<f64>| x.unwrap_or(0.0);
    Figures {
        topic,
        rate_target_per_s: rate,
        rate_achieved_per_s: achieved,
        sustained: achieved >= SUSTAINED_SHARE * rate as f64,
        window_s: r.seconds,
        pacer_worst_lag_ms: f(r.worst_lag_ms),
        pacer_late_sends: r.late_sends.unwrap_or(0),
        ack_count: r.latency_samples.unwrap_or(0),
        ack_ms_p50: f(r.send_to_ack_ms_p50),
        ack_ms_p90: None,
        ack_ms_p99: f(r.send_to_ack_ms_p99),
        ack_ms_p999: None,
        ack_ms_max: f(r.send_to_ack_ms_max),
        e2e_count: r.e2e_samples.unwrap_or(0),
        e2e_ms_p50: f(r.e2e_ms_p50),
        e2e_ms_p90: f(r.e2e_ms_p90),
        e2e_ms_p99: f(r.e2e_ms_p99),
        e2e_ms_p999: f(r.e2e_ms_p999),
        e2e_ms_max: f(r.e2e_ms_max),
        e2e_intended_ms_p50: r.e2e_intended_ms_p50,
        e2e_intended_ms_p99: r.e2e_intended_ms_p99,
        e2e_intended_ms_p999: r.e2e_intended_ms_p999,
        e2e_missing: r.e2e_missing.unwrap_or(0),
        gc_time_ms: Some(r.gc_time_ms),
        process_cpu_s: Some(r.process_cpu_s),
        ..Figures::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_figures_judge_the_rate_as_librdkafkas_do() {
        let r = CompanionResult {
            rate_achieved_per_s: Some(9_600.0),
            e2e_ms_p99: Some(12.5),
            e2e_missing: Some(0),
            send_to_ack_ms_p50: Some(1.5),
            seconds: 3.0,
            ..Default::default()
        };
        let f = figures(&r, 10_000, "t".into());
        assert!(!f.sustained, "96% of the target is not sustained");
        assert_eq!(
            (f.e2e_ms_p99, f.ack_ms_p50, f.ack_ms_p90),
            (12.5, 1.5, None)
        );
        assert!(figures(&r, 9_800, "t".into()).sustained);
        let p = Point {
            rate_per_s: 1000,
            linger_ms: 0,
            max_in_flight: kgap_analyzers::findings::inflight_latency::DEFAULT_WINDOW,
        };
        let s = client_settings("h:1", &p);
        assert!(s.contains(&(
            "max.in.flight.requests.per.connection".into(),
            "1000000".into()
        )));
        assert!(s.contains(&("enable.idempotence".into(), "false".into())));
        assert_eq!(warmup(Duration::from_secs(1)), Duration::from_secs(3));
    }
}
