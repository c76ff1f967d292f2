//! The paced producer and the end-to-end consumer the latency probes share: a producer
//! that sends at a fixed rate (the seed benchmark's pacing), stamping each payload with the
//! wall clock, and the client settings of a latency run.

use crate::broker::Producer;
use crate::capture::AckLatency;
use crate::error::{ProbeError, Result};
use crate::interrupt;
use crate::measure::{Edge, Pacer, Progress, Sampler};
use crate::payload::{self, Pool};
use crate::produce::TopicHandle;
use rdkafka::error::RDKafkaErrorCode;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// The producer's settings of one configuration; `-X` overrides come after these.
pub fn producer_settings(linger: u64, inflight: u64) -> Vec<(&'static str, String)> {
    vec![
        ("acks", "1".to_string()),
        ("linger.ms", linger.to_string()),
        (
            "max.in.flight.requests.per.connection",
            inflight.to_string(),
        ),
        ("statistics.interval.ms", "1000".to_string()),
    ]
}

pub fn consumer_settings(group: &str, mock: bool) -> Vec<(&'static str, String)> {
    // Apache Kafka answers a held fetch as soon as data arrives; librdkafka's mock holds an
    // empty fetch for the whole fetch.wait.max.ms, which would add up to that to every e2e
    // latency. On the mock, fetch again every millisecond instead.
    let wait = if mock { "1" } else { "100" };
    vec![
        ("group.id", group.to_string()),
        ("enable.auto.commit", "false".into()),
        ("enable.auto.offset.store", "false".into()),
        ("auto.offset.reset", "earliest".into()),
        // Return a fetch as soon as one byte is there: the consumer should not add latency.
        ("fetch.wait.max.ms", wait.into()),
        ("fetch.queue.backoff.ms", "10".into()),
    ]
}

/// Wall clock in ns: the e2e stamp's clock.
pub fn wall_ns() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos() as i64
}

/// What the paced producer saw: the window's edges, the sampler's ticks, messages sent in
/// the window, and the pacer's lag statistics.
pub struct ProducerSide {
    pub start: Edge,
    pub end: Edge,
    pub ticks: Vec<crate::measure::Tick>,
    pub window_sent: u64,
    pub pacer: Pacer,
}

/// The shape of a paced run: partitions round robin, a warmup at the rate, then the window.
#[derive(Debug, Clone, Copy)]
pub struct PacedWindow {
    pub partitions: i32,
    pub warmup: Duration,
    pub window: Duration,
}

/// The paced producer: warmup at the rate, then the window. Per message: wait for its slot,
/// copy the pool payload into one scratch buffer, stamp the wall clock into bytes 0..8,
/// produce with the send time as opaque, poll(0) to serve acks. No allocation.
#[allow(clippy::too_many_arguments)]
pub fn produce_paced(
    producer: &Producer,
    handle: &TopicHandle,
    pool: &Pool,
    opts: &PacedWindow,
    rate: u64,
    ack: &AckLatency,
    window_from: &AtomicI64,
    window_to: &AtomicI64,
) -> Result<ProducerSide> {
    let p = &producer.producer;
    let parts = opts.partitions as u64;
    let mut scratch = vec![0u8; pool.size()];
    let mut pacer = Pacer::new(rate, Instant::now());
    let origin = Instant::now();
    let warm_end = Instant::now() + opts.warmup;
    let mut i = 0u64;
    let mut send = |i: u64, pacer: &mut Pacer| -> Result<()> {
        pacer.wait();
        scratch.copy_from_slice(pool.get(i));
        payload::stamp_e2e(&mut scratch, wall_ns());
        let sent = ack.now_ns() as usize;
        loop {
            match handle.produce_with((i % parts) as i32, &scratch, sent) {
                Ok(()) => break,
                Err(RDKafkaErrorCode::QueueFull) => p.poll(Duration::from_millis(1)),
                Err(e) => return Err(ProbeError::Kafka(format!("produce: {e}"))),
            }
        }
        p.poll(Duration::ZERO);
        Ok(())
    };
    while Instant::now() < warm_end && !interrupt::stopped() {
        send(i, &mut pacer)?;
        i += 1;
    }
    // The window: fresh pacer statistics, so warmup hiccups (connection setup) do not count.
    pacer = Pacer::new(rate, Instant::now());
    let progress = Arc::new(Progress::default());
    let start = Edge::now(origin, 0, 0);
    ack.open_window(ack.now_ns());
    window_from.store(wall_ns(), Ordering::Relaxed);
    let sampler = Sampler::start(progress.clone(), origin);
    let end_at = start.at + opts.window;
    let mut sent = 0u64;
    while !interrupt::stopped() {
        send(i, &mut pacer)?;
        i += 1;
        sent += 1;
        progress.publish(sent, sent * pool.size() as u64);
        if sent % 64 == 0 && Instant::now() >= end_at {
            break;
        }
    }
    window_to.store(wall_ns(), Ordering::Relaxed);
    let end = Edge::now(origin, sent, sent * pool.size() as u64);
    let ticks = sampler.stop();
    Ok(ProducerSide {
        start,
        end,
        ticks,
        window_sent: sent,
        pacer,
    })
}

