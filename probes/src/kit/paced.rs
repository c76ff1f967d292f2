//! The paced producer and the end-to-end consumer the latency probes share: a producer
//! that sends at a fixed rate (the seed benchmark's pacing), stamping each payload with the
//! wall clock, and the client settings of a latency run.
//!
//! Send-to-ack is librdkafka's own per-message latency, read as the delivery report is
//! served (`rd_kafka_message_latency`: from inside produce() to that moment). A report that
//! waits in the queue counts its wait, so the pacing thread never sleeps while one waits:
//! [`Deliveries`] has librdkafka call back when a report lands in the empty queue, and the
//! pacer waits on that instead of a plain sleep, serving reports as they arrive. It measures
//! how long each waited to be served (the `delivery_serve_*` figures).

use crate::kit::broker::Producer;
use crate::kit::capture::AckLatency;
use crate::kit::error::{ProbeError, Result};
use crate::kit::interrupt;
use crate::kit::measure::{self, Edge, Pace, Pacer, Percentiles, Progress, Sampler};
use crate::kit::payload::{self, Pool};
use crate::kit::produce::{DeliveryQueue, TopicHandle};
use rdkafka::error::RDKafkaErrorCode;
use rdkafka::producer::Producer as _;
use rdkafka_sys as rdsys;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
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

fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// What librdkafka's queue callback shares with the serving thread.
struct Arrival {
    /// An eventfd the serving thread waits on.
    fd: i32,
    /// CLOCK_MONOTONIC ns when a report landed in the empty queue; 0 when served.
    at_ns: AtomicU64,
}

/// librdkafka calls this (on one of its threads, under the queue's lock) when an event lands
/// in the empty queue: note when, and wake the server. Nothing else: no librdkafka call.
unsafe extern "C" fn on_arrival(_rk: *mut rdsys::rd_kafka_t, opaque: *mut std::ffi::c_void) {
    let a = &*(opaque as *const Arrival);
    let _ = a
        .at_ns
        .compare_exchange(0, monotonic_ns(), Ordering::AcqRel, Ordering::Relaxed);
    let one: u64 = 1;
    libc::write(a.fd, &one as *const u64 as *const libc::c_void, 8);
}

/// A producer's delivery reports (and statistics), served by the thread that paces it as
/// they arrive: it waits on librdkafka's arrival callback rather than sleeping, so a report
/// waits for a send in progress at most. Records how long each waited, from landing in the
/// empty queue to being served, while its window is open.
pub struct Deliveries<'p> {
    producer: &'p Producer,
    queue: DeliveryQueue<'p>,
    main: *mut rdsys::rd_kafka_queue_t,
    arrival: Box<Arrival>,
    waits: hdrhistogram::Histogram<u64>,
    recording: bool,
}

impl<'p> Deliveries<'p> {
    pub fn new(producer: &'p Producer) -> Result<Deliveries<'p>> {
        let fd = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
        if fd < 0 {
            return Err(ProbeError::io(
                "eventfd for delivery reports",
                std::io::Error::last_os_error(),
            ));
        }
        let arrival = Box::new(Arrival {
            fd,
            at_ns: AtomicU64::new(0),
        });
        let main =
            unsafe { rdsys::rd_kafka_queue_get_main(producer.producer.client().native_ptr()) };
        unsafe {
            rdsys::rd_kafka_queue_cb_event_enable(
                main,
                Some(on_arrival),
                &*arrival as *const Arrival as *mut std::ffi::c_void,
            );
        }
        let d = Deliveries {
            producer,
            queue: DeliveryQueue::new(producer),
            main,
            arrival,
            waits: measure::latency_histogram(),
            recording: false,
        };
        // Reports already queued arrived before the callback existed: serve them now.
        d.arrival.at_ns.store(monotonic_ns(), Ordering::Release);
        Ok(d)
    }

    /// Starts recording how long reports wait to be served.
    pub fn open_window(&mut self) {
        self.waits.reset();
        self.recording = true;
    }

    /// Stops recording; the waits of the window in ms.
    pub fn close_window(&mut self) -> Percentiles {
        self.recording = false;
        measure::percentiles(&self.waits)
    }

    /// Serves every queued report if one arrived; one atomic load when none did.
    #[inline]
    pub fn serve_ready(&mut self) {
        if self.arrival.at_ns.load(Ordering::Acquire) == 0 {
            return;
        }
        self.drain_wakeups();
        let at = self.arrival.at_ns.swap(0, Ordering::AcqRel);
        if at != 0 && self.recording {
            let waited_us = monotonic_ns().saturating_sub(at) / 1000;
            self.waits.saturating_record(waited_us.max(1));
        }
        self.queue.serve(0);
    }

    /// Waits up to `d` for a report, serving it when it comes (and whatever is queued).
    /// A wait of a millisecond or more that ends with no wake-up serves the queue anyway:
    /// the callback is the fast path, not the only one.
    pub fn wait(&mut self, d: Duration) {
        if self.arrival.at_ns.load(Ordering::Acquire) == 0 {
            let mut pfd = libc::pollfd {
                fd: self.arrival.fd,
                events: libc::POLLIN,
                revents: 0,
            };
            let ts = libc::timespec {
                tv_sec: d.as_secs() as libc::time_t,
                tv_nsec: d.subsec_nanos() as libc::c_long,
            };
            let woke = unsafe { libc::ppoll(&mut pfd, 1, &ts, std::ptr::null()) };
            if woke == 0 && d >= Duration::from_millis(1) {
                self.queue.serve(0);
            }
        }
        self.serve_ready();
    }

    /// Serves reports as they arrive until no message is in flight, or `timeout`. False
    /// when messages were still in flight then.
    pub fn drain(&mut self, timeout: Duration) -> bool {
        let until = Instant::now() + timeout;
        loop {
            self.serve_ready();
            if self.producer.producer.in_flight_count() == 0 {
                return true;
            }
            let now = Instant::now();
            if now >= until {
                return false;
            }
            self.wait((until - now).min(Duration::from_millis(10)));
        }
    }

    fn drain_wakeups(&self) {
        let mut n: u64 = 0;
        unsafe { libc::read(self.arrival.fd, &mut n as *mut u64 as *mut libc::c_void, 8) };
    }
}

impl Drop for Deliveries<'_> {
    fn drop(&mut self) {
        unsafe {
            // Under the queue's lock: once it returns, no callback runs or will run.
            rdsys::rd_kafka_queue_cb_event_enable(self.main, None, std::ptr::null_mut());
            rdsys::rd_kafka_queue_destroy(self.main);
            libc::close(self.arrival.fd);
        }
    }
}

/// What the paced producer saw: the window's edges, the sampler's ticks, messages sent in
/// the window, the pacer's lag statistics, and how long delivery reports waited to be served.
pub struct ProducerSide {
    pub start: Edge,
    pub end: Edge,
    pub ticks: Vec<crate::kit::measure::Tick>,
    pub window_sent: u64,
    pub pacer: Pacer,
    /// From a report landing in the empty queue to its serving, in the window (ms).
    pub delivery_serve: Percentiles,
}

/// The shape of a paced run: partitions round robin, a warmup at the rate, then the window.
#[derive(Debug, Clone, Copy)]
pub struct PacedWindow {
    pub partitions: i32,
    pub warmup: Duration,
    pub window: Duration,
}

/// The paced producer: warmup at the rate, then the window. Per message: wait for its slot
/// (serving delivery reports as they arrive), copy the pool payload into one scratch buffer,
/// stamp the wall clock into bytes 0..8 and the slot's intended time into bytes 8..16,
/// produce with the send time as opaque, serve what arrived. No allocation. Reports still in flight at the end are left to the caller (poll
/// the producer, or use [`produce_paced_with`] and [`Deliveries::drain`]).
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
    let mut deliveries = Deliveries::new(producer)?;
    produce_paced_with(
        &mut deliveries,
        handle,
        pool,
        opts,
        rate,
        ack,
        window_from,
        window_to,
    )
}

/// [`produce_paced`] serving reports through the caller's [`Deliveries`], which can then
/// drain the window's last reports just as promptly.
#[allow(clippy::too_many_arguments)]
pub fn produce_paced_with(
    deliveries: &mut Deliveries<'_>,
    handle: &TopicHandle,
    pool: &Pool,
    opts: &PacedWindow,
    rate: u64,
    ack: &AckLatency,
    window_from: &AtomicI64,
    window_to: &AtomicI64,
) -> Result<ProducerSide> {
    let parts = opts.partitions as u64;
    let mut scratch = vec![0u8; pool.size()];
    let mut pacer = Pacer::new(rate, Instant::now());
    let origin = Instant::now();
    let warm_end = Instant::now() + opts.warmup;
    let mut i = 0u64;
    let mut send = |i: u64, pacer: &mut Pacer, d: &mut Deliveries<'_>| -> Result<()> {
        // The clock read that released the message also gives how far behind its slot it went.
        let behind = loop {
            let now = Instant::now();
            match pacer.next(now) {
                Pace::Go => break now.saturating_duration_since(pacer.last_due()),
                Pace::Spin => {
                    d.serve_ready();
                    std::hint::spin_loop();
                }
                Pace::Park(wait) => d.wait(wait),
            }
        };
        scratch.copy_from_slice(pool.get(i));
        let now = wall_ns();
        payload::stamp_e2e(&mut scratch, now);
        payload::stamp_e2e_intended(&mut scratch, now - behind.as_nanos() as i64);
        let sent = ack.now_ns() as usize;
        loop {
            match handle.produce_with((i % parts) as i32, &scratch, sent) {
                Ok(()) => break,
                Err(RDKafkaErrorCode::QueueFull) => d.wait(Duration::from_millis(1)),
                Err(e) => return Err(ProbeError::Kafka(format!("produce: {e}"))),
            }
        }
        d.serve_ready();
        Ok(())
    };
    while Instant::now() < warm_end && !interrupt::stopped() {
        send(i, &mut pacer, deliveries)?;
        i += 1;
    }
    // The window: fresh pacer statistics, so warmup hiccups (connection setup) do not count.
    pacer = Pacer::new(rate, Instant::now());
    let progress = Arc::new(Progress::default());
    let start = Edge::now(origin, 0, 0);
    ack.open_window(ack.now_ns());
    deliveries.open_window();
    window_from.store(wall_ns(), Ordering::Relaxed);
    let sampler = Sampler::start(progress.clone(), origin);
    let end_at = start.at + opts.window;
    let mut sent = 0u64;
    while !interrupt::stopped() {
        send(i, &mut pacer, deliveries)?;
        i += 1;
        sent += 1;
        progress.publish(sent, sent * pool.size() as u64);
        if sent % 64 == 0 && Instant::now() >= end_at {
            break;
        }
    }
    window_to.store(wall_ns(), Ordering::Relaxed);
    let end = Edge::now(origin, sent, sent * pool.size() as u64);
    let delivery_serve = deliveries.close_window();
    let ticks = sampler.stop();
    Ok(ProducerSide {
        start,
        end,
        ticks,
        window_sent: sent,
        pacer,
        delivery_serve,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kit::broker::Broker;
    use crate::kit::capture::{KgapContext, Sink};

    #[test]
    fn a_delivery_report_wakes_the_waiting_pacer_long_before_its_timeout() {
        let broker = Broker::start(None, &[]).unwrap();
        let topic = broker.create_topic("kgap-paced-test", 1).unwrap();
        let ack = Arc::new(AckLatency::new(Instant::now()));
        let producer = Producer::with_context(
            &broker,
            &producer_settings(0, 5),
            KgapContext::with_ack_latency(Arc::new(Sink::default()), ack.clone()),
        )
        .unwrap();
        let handle = TopicHandle::new(&producer, &topic.name).unwrap();
        let mut d = Deliveries::new(&producer).unwrap();
        let delivered = || producer.producer.context().delivered();
        // The first message opens the connection.
        handle
            .produce_with(0, &[0u8; 16], ack.now_ns() as usize)
            .unwrap();
        assert!(d.drain(Duration::from_secs(10)), "no first delivery");
        ack.open_window(ack.now_ns());
        d.open_window();
        for i in 1..=20u64 {
            handle
                .produce_with(0, &[0u8; 16], ack.now_ns() as usize)
                .unwrap();
            let t = Instant::now();
            // A pacer that slept its whole wait would take 5 s per message here.
            while delivered() <= i && t.elapsed() < Duration::from_secs(5) {
                d.wait(Duration::from_secs(5));
            }
            assert_eq!(delivered(), i + 1);
            assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
        }
        let serve = d.close_window();
        assert!(serve.count >= 20, "{serve:?}");
        drop(d);
        let acks = ack.take();
        assert_eq!(acks.len(), 20, "every window message, librdkafka's latency");
        assert!(
            acks.value_at_quantile(0.5) < 1_000_000,
            "p50 {} µs",
            acks.value_at_quantile(0.5)
        );
    }
}
