//! One librdkafka run: a paced producer on this thread, serving its delivery reports as they
//! arrive, and a consumer thread recording end-to-end latency of the window's messages, on a
//! topic of the run's own.

use super::figures::Figures;
use super::options::{InflightLatency, Options};
use super::point::Point;
use crate::kit::broker::{Consumer, Producer};
use crate::kit::capture::{AckLatency, KgapContext, Sink};
use crate::kit::e2e::E2eRecorder;
use crate::kit::error::{ProbeError, Result};
use crate::kit::measure::{self, Percentiles};
use crate::kit::paced::{self, consumer_settings, producer_settings, Deliveries, PacedWindow};
use crate::kit::payload::Pool;
use crate::kit::produce::{self, TopicHandle};
use crate::kit::Context;
use kgap_analyzers::findings::inflight_latency::SUSTAINED_SHARE;
use rdkafka::message::Message as _;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long the window's last reports may take to come back.
const DRAIN: Duration = Duration::from_secs(3);

/// One run at a point. `Ok(None)` when Ctrl-C came before the window opened.
pub fn once(
    cx: &Context,
    opts: &Options,
    pool: &Pool,
    p: &Point,
    dir: &Path,
) -> Result<Option<Figures>> {
    let broker = &cx.broker;
    let topic = broker.create_topic(
        <InflightLatency as crate::kit::Probe>::NAME,
        opts.partitions,
    )?;
    let stats_path = dir.join("stats.jsonl");
    let psink = Arc::new(
        Sink::to_files(None, Some(&stats_path))
            .map_err(|e| ProbeError::io(format!("creating files in {}", dir.display()), e))?,
    );
    let ack = Arc::new(AckLatency::new(Instant::now()));
    let producer = Producer::with_context(
        broker,
        &producer_settings(p.linger_ms, p.max_in_flight),
        KgapContext::with_ack_latency(psink, ack.clone()),
    )?;
    let handle = TopicHandle::new(&producer, &topic.name)?;
    // Assigned before the first message; records e2e of window messages only.
    let consumer = Consumer::new(
        broker,
        &consumer_settings(
            &crate::kit::broker::topic_name("probe-inflight-latency-group"),
            broker.is_mock(),
        ),
        Arc::new(Sink::default()),
    )?;
    consumer.assign_from_start(&topic.name, opts.partitions)?;
    let window_from = AtomicI64::new(i64::MAX);
    let window_to = AtomicI64::new(i64::MAX);
    let stop = AtomicBool::new(false);
    let (e2e_rec, side) = std::thread::scope(|scope| -> Result<_> {
        let (from, to, stop_c, c) = (&window_from, &window_to, &stop, &consumer);
        let reader = std::thread::Builder::new()
            .name("kgap-consumer".into())
            .spawn_scoped(scope, move || {
                let mut h = E2eRecorder::default();
                while !stop_c.load(Ordering::Relaxed) {
                    if let Some(Ok(m)) = c.consumer.poll(Duration::from_millis(50)) {
                        let now = paced::wall_ns();
                        if let Some(v) = m.payload() {
                            h.record(
                                v,
                                now,
                                from.load(Ordering::Relaxed),
                                to.load(Ordering::Relaxed),
                            );
                        }
                    }
                }
                h
            })
            .expect("spawn kgap-consumer");
        let side = Deliveries::new(&producer).and_then(|mut deliveries| {
            let side = paced::produce_paced_with(
                &mut deliveries,
                &handle,
                pool,
                &PacedWindow {
                    partitions: opts.partitions,
                    warmup: opts.warmup,
                    window: opts.duration,
                },
                p.rate_per_s,
                &ack,
                &window_from,
                &window_to,
            )?;
            // The window's last reports, served as promptly as the window's.
            deliveries.drain(DRAIN);
            Ok(side)
        });
        // Let the consumer see the window's last messages (bounded).
        std::thread::sleep(Duration::from_millis(200).min(opts.duration));
        stop.store(true, Ordering::Relaxed);
        let h = reader.join().expect("consumer thread");
        Ok((h, side?))
    })?;
    let ack_hist = ack.take();
    drop(handle);
    drop(producer);
    drop(consumer);
    let name = topic.name.clone();
    topic.delete()?;
    if side.window_sent == 0 {
        return Ok(None);
    }

    let window = measure::window_figures(&side.start, &side.end, &side.ticks);
    measure::write_threads_csv(&dir.join("threads.csv"), &side.ticks);
    let emits = produce::read_stats_between(&stats_path, side.start.mono_us, side.end.mono_us);
    let stats = produce::stats_figures(&emits);
    let brokers = crate::kit::broker_figures::per_broker(&emits, "Produce", &window.threads);
    let a: Percentiles = measure::percentiles(&ack_hist);
    let e2e_hist = &e2e_rec.sent;
    let e: Percentiles = measure::percentiles(e2e_hist);
    let intended = e2e_rec.intended_percentiles();
    let achieved = if window.window_s > 0.0 {
        side.window_sent as f64 / window.window_s
    } else {
        0.0
    };
    let serve = side.delivery_serve;
    Ok(Some(Figures {
        topic: name,
        rate_target_per_s: p.rate_per_s,
        rate_achieved_per_s: measure::round3(achieved),
        sustained: achieved >= SUSTAINED_SHARE * p.rate_per_s as f64,
        window_s: measure::round3(window.window_s),
        pacer_worst_lag_ms: measure::round3(side.pacer.worst_lag.as_secs_f64() * 1000.0),
        pacer_late_sends: side.pacer.late_sends,
        ack_count: a.count,
        ack_ms_p50: a.p50_ms,
        ack_ms_p90: Some(a.p90_ms),
        ack_ms_p99: a.p99_ms,
        ack_ms_p999: Some(a.p999_ms),
        ack_ms_max: a.max_ms,
        e2e_count: e.count,
        e2e_ms_p50: e.p50_ms,
        e2e_ms_p90: e.p90_ms,
        e2e_ms_p99: e.p99_ms,
        e2e_ms_p999: e.p999_ms,
        e2e_ms_max: e.max_ms,
        e2e_intended_ms_p50: intended.as_ref().map(|i| i.p50_ms),
        e2e_intended_ms_p99: intended.as_ref().map(|i| i.p99_ms),
        e2e_intended_ms_p999: intended.as_ref().map(|i| i.p999_ms),
        e2e_missing: side.window_sent as i64 - e.count as i64,
        delivery_serve_ms_p50: (serve.count > 0).then_some(serve.p50_ms),
        delivery_serve_ms_p99: (serve.count > 0).then_some(serve.p99_ms),
        delivery_serve_ms_max: (serve.count > 0).then_some(serve.max_ms),
        produce_requests_per_s: stats.produce_requests_per_s,
        msgs_per_batch_mean: stats.msgs_per_batch_mean,
        batch_bytes_mean: stats.batch_bytes_mean,
        rtt_ms_p50: stats.rtt_ms_p50,
        rtt_ms_p99: stats.rtt_ms_p99,
        requests_in_flight_mean: stats.requests_in_flight_mean,
        brokers,
        cpu_cores: Some(measure::round3(window.cpu_cores)),
        threads: window.threads,
        gc_time_ms: None,
        process_cpu_s: None,
        ack_cdf: measure::cdf(&ack_hist),
        e2e_cdf: measure::cdf(e2e_hist),
    }))
}
