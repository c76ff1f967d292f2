//! Producing without per-message allocation, and prefilling a probe's topic.
//!
//! rust-rdkafka 0.39's `BaseProducer::send` builds a `CString` of the topic name for every
//! message — an allocation per message, the very trap of the postmortem in reference/. The
//! kit produces through a `rd_kafka_topic_t` made once ([`TopicHandle`]) and
//! `rd_kafka_produce`. [`TopicHandle::produce`] copies the payload (RD_KAFKA_MSG_F_COPY);
//! the throughput loop ([`measure_throughput`]) does not: it pins the pool to the producer and
//! serves delivery reports itself ([`DeliveryQueue`]), counted by
//! [`crate::kit::capture::KgapContext`] as poll() would.

use crate::kit::broker::{Broker, Producer};
use crate::kit::capture::Sink;
use crate::kit::error::{ProbeError, Result};
use crate::kit::interrupt;
use crate::kit::payload::Pool;
use kgap_analyzers::stats::{self, Stats};
use rdkafka::client::ClientContext as _;
use rdkafka::error::RDKafkaErrorCode;
use rdkafka::producer::Producer as _;
use rdkafka_sys as rdsys;
use serde::Serialize;
use std::ffi::{CStr, CString};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A librdkafka topic handle for one producer, made once; destroyed on drop (declare it
/// before the producer it came from so it drops first).
pub struct TopicHandle {
    rkt: *mut rdsys::rd_kafka_topic_t,
}

// librdkafka topic handles are thread-safe and reference-counted.
unsafe impl Send for TopicHandle {}
unsafe impl Sync for TopicHandle {}

impl TopicHandle {
    pub fn new(producer: &Producer, topic: &str) -> Result<TopicHandle> {
        let name =
            CString::new(topic).map_err(|_| ProbeError::Usage("topic name has a NUL".into()))?;
        let rkt = unsafe {
            rdsys::rd_kafka_topic_new(
                producer.producer.client().native_ptr(),
                name.as_ptr(),
                std::ptr::null_mut(),
            )
        };
        if rkt.is_null() {
            return Err(ProbeError::Kafka(format!(
                "rd_kafka_topic_new({topic}) failed"
            )));
        }
        Ok(TopicHandle { rkt })
    }

    /// Enqueues one message (payload copied). Err(QueueFull) means: poll and retry.
    #[inline]
    pub fn produce(
        &self,
        partition: i32,
        payload: &[u8],
    ) -> std::result::Result<(), RDKafkaErrorCode> {
        self.produce_with(partition, payload, 0)
    }

    /// As [`TopicHandle::produce`], with a message opaque handed to the delivery callback
    /// (the kit uses it for the send time).
    #[inline]
    pub fn produce_with(
        &self,
        partition: i32,
        payload: &[u8],
        opaque: usize,
    ) -> std::result::Result<(), RDKafkaErrorCode> {
        let rc = unsafe {
            rdsys::rd_kafka_produce(
                self.rkt,
                partition,
                rdsys::RD_KAFKA_MSG_F_COPY as i32,
                payload.as_ptr() as *mut std::os::raw::c_void,
                payload.len(),
                std::ptr::null(),
                0,
                opaque as *mut std::os::raw::c_void,
            )
        };
        if rc == 0 {
            Ok(())
        } else {
            Err(unsafe { rdsys::rd_kafka_last_error() }.into())
        }
    }
}

impl TopicHandle {
    /// Enqueues one message *without* copying the payload, as rdkafka_performance does: the
    /// message points into `payload` until librdkafka frees it.
    ///
    /// # Safety
    /// `payload` must stay valid and unchanged until the producer is destroyed (e.g. memory
    /// given to [`Producer::pin`]).
    #[inline]
    pub unsafe fn produce_borrowed(
        &self,
        partition: i32,
        payload: &[u8],
    ) -> std::result::Result<(), RDKafkaErrorCode> {
        let rc = rdsys::rd_kafka_produce(
            self.rkt,
            partition,
            0,
            payload.as_ptr() as *mut std::os::raw::c_void,
            payload.len(),
            std::ptr::null(),
            0,
            std::ptr::null_mut(),
        );
        if rc == 0 {
            Ok(())
        } else {
            Err(rdsys::rd_kafka_last_error().into())
        }
    }
}

/// A producer's main queue, served directly. rust-rdkafka's `BaseProducer::poll(0)` serves
/// one event per call and `poll(1 ms)` always sleeps out the full millisecond; this serves
/// every ready event and, when asked to wait, returns as soon as one arrived — what
/// `rd_kafka_poll` does for rdkafka_performance.
pub struct DeliveryQueue<'p> {
    producer: &'p Producer,
    queue: *mut rdsys::rd_kafka_queue_t,
}

impl<'p> DeliveryQueue<'p> {
    pub fn new(producer: &'p Producer) -> DeliveryQueue<'p> {
        let queue =
            unsafe { rdsys::rd_kafka_queue_get_main(producer.producer.client().native_ptr()) };
        DeliveryQueue { producer, queue }
    }

    /// Serves every ready event, waiting up to `wait_ms` for the first. Returns how many.
    pub fn serve(&self, wait_ms: i32) -> usize {
        let ctx = self.producer.producer.context();
        let mut n = 0;
        let mut wait = wait_ms;
        loop {
            let ev = unsafe { rdsys::rd_kafka_queue_poll(self.queue, wait) };
            if ev.is_null() {
                return n;
            }
            wait = 0;
            n += 1;
            unsafe {
                match rdsys::rd_kafka_event_type(ev) {
                    rdsys::RD_KAFKA_EVENT_DR => ctx.account_dr_event(ev),
                    rdsys::RD_KAFKA_EVENT_STATS => {
                        let json = CStr::from_ptr(rdsys::rd_kafka_event_stats(ev));
                        ctx.sink.stats_json(json.to_bytes());
                    }
                    rdsys::RD_KAFKA_EVENT_LOG => {
                        let mut fac: *const std::os::raw::c_char = std::ptr::null();
                        let mut msg: *const std::os::raw::c_char = std::ptr::null();
                        let mut level: i32 = 0;
                        if rdsys::rd_kafka_event_log(ev, &mut fac, &mut msg, &mut level) == 0 {
                            let fac = CStr::from_ptr(fac).to_string_lossy();
                            let msg = CStr::from_ptr(msg).to_string_lossy();
                            ctx.sink.log_line(level, fac.trim(), msg.trim_end());
                        }
                    }
                    rdsys::RD_KAFKA_EVENT_ERROR => {
                        let code: RDKafkaErrorCode = rdsys::rd_kafka_event_error(ev).into();
                        let reason = CStr::from_ptr(rdsys::rd_kafka_event_error_string(ev))
                            .to_string_lossy();
                        ctx.error(rdkafka::error::KafkaError::Global(code), reason.trim());
                    }
                    _ => {}
                }
                rdsys::rd_kafka_event_destroy(ev);
            }
        }
    }
}

impl Drop for DeliveryQueue<'_> {
    fn drop(&mut self) {
        unsafe { rdsys::rd_kafka_queue_destroy(self.queue) };
    }
}

impl Drop for TopicHandle {
    fn drop(&mut self) {
        unsafe { rdsys::rd_kafka_topic_destroy(self.rkt) };
    }
}

/// What a prefill did.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Prefill {
    pub messages: u64,
    pub seconds: f64,
    pub compression: String,
}

/// Writes `messages` records (`pool[i % count]`, partition `i % partitions`) to the run's own
/// topic and waits until every one is acknowledged. `compression` is librdkafka's
/// compression.type for the prefill only; the consumer measured later decompresses it.
pub fn prefill(
    broker: &Broker,
    topic: &str,
    partitions: i32,
    pool: &Pool,
    messages: u64,
    compression: &str,
    progress: &dyn Fn(&str),
) -> Result<Prefill> {
    let settings = [
        ("compression.type", compression.to_string()),
        ("linger.ms", "20".to_string()),
        ("acks", "1".to_string()),
        // Level 1: the prefill is not measured, and it is five times faster than 6 on text.
        (
            "compression.level",
            if compression == "gzip" { "1" } else { "-1" }.to_string(),
        ),
        ("queue.buffering.max.messages", "1000000".to_string()),
        ("queue.buffering.max.kbytes", "1048576".to_string()),
    ];
    let sink = Arc::new(Sink::default());
    let producer = Producer::new(broker, &settings, sink.clone())?;
    let handle = TopicHandle::new(&producer, topic)?;
    let t0 = Instant::now();
    let mut last_report = t0;
    for i in 0..messages {
        let partition = (i % partitions as u64) as i32;
        loop {
            match handle.produce(partition, pool.get(i)) {
                Ok(()) => break,
                Err(RDKafkaErrorCode::QueueFull) => {
                    producer.producer.poll(Duration::from_millis(5))
                }
                Err(e) => return Err(ProbeError::Kafka(format!("prefill of {topic}: {e}"))),
            }
        }
        if i % 65536 == 0 {
            producer.producer.poll(Duration::ZERO);
            if last_report.elapsed() >= Duration::from_secs(2) {
                last_report = Instant::now();
                progress(&format!("prefill: {i} of {messages} messages sent"));
            }
            if interrupt::stopped() {
                return Err(ProbeError::Kafka("interrupted during prefill".into()));
            }
        }
    }
    let deadline = Instant::now() + Duration::from_secs(120);
    while producer.producer.in_flight_count() > 0 {
        if Instant::now() > deadline || interrupt::stopped() {
            return Err(ProbeError::Kafka(format!(
                "prefill of {topic}: {} messages still unacknowledged{}",
                producer.producer.in_flight_count(),
                sink.last_error()
                    .map(|e| format!(" (librdkafka: {e})"))
                    .unwrap_or_default()
            )));
        }
        producer.producer.poll(Duration::from_millis(50));
    }
    let ctx = producer.producer.context();
    if ctx.delivery_errors() > 0 {
        return Err(ProbeError::Kafka(format!(
            "prefill of {topic}: {} deliveries failed, first: {}",
            ctx.delivery_errors(),
            ctx.last_delivery_error().unwrap_or_default()
        )));
    }
    drop(handle);
    Ok(Prefill {
        messages,
        seconds: t0.elapsed().as_secs_f64(),
        compression: compression.to_string(),
    })
}

/// Statistics emits a window must hold for its rates (first to last).
const MIN_WINDOW_EMITS: u64 = 2;
/// How long past its set length a window waits for them.
const EMITS_GRACE: Duration = Duration::from_secs(3);

/// How long a producer throughput run lasts.
#[derive(Debug, Clone, Copy)]
pub struct ThroughputSpec {
    /// Messages sent and fully acknowledged before the window opens (connections up, batches
    /// sized, caches warm).
    pub warmup_messages: u64,
    /// The measured window.
    pub window: Duration,
}

/// What one producer throughput run measured: acknowledged messages in the window, and the
/// statistics emits that fall inside it.
pub struct ProducerWindow {
    pub start: crate::kit::measure::Edge,
    pub end: crate::kit::measure::Edge,
    pub ticks: Vec<crate::kit::measure::Tick>,
    pub stats: Vec<kgap_analyzers::stats::Stats>,
    pub delivery_errors: u64,
    pub interrupted: bool,
}

/// Produces as fast as librdkafka accepts, round robin over `partitions`, for a warmup (fully
/// acknowledged) and then `spec.window`. The window counts *acknowledged* messages. The hot
/// loop makes no allocation, lock or syscall per message: an index into the pool, one
/// zero-copy rd_kafka_produce, and every 1024 messages a drain of the delivery reports and a
/// clock read.
pub fn measure_throughput(
    producer: &Producer,
    topic: &TopicHandle,
    partitions: i32,
    pool: &Pool,
    spec: ThroughputSpec,
    stats_path: &std::path::Path,
) -> Result<ProducerWindow> {
    use crate::kit::measure::{Edge, Progress, Sampler};
    let p = &producer.producer;
    let ctx = p.context();
    let origin = Instant::now();
    let parts = partitions as u64;
    let mut i = 0u64;
    // Zero-copy, as rdkafka_performance: the pool is built once and pinned to the producer,
    // so every queued or in-flight message points into memory that outlives librdkafka.
    producer.pin(pool.shared());
    let dq = DeliveryQueue::new(producer);
    let send = |i: u64| -> Result<()> {
        loop {
            // SAFETY: pool.get() lies in pool.shared(), pinned above.
            match unsafe { topic.produce_borrowed((i % parts) as i32, pool.get(i)) } {
                Ok(()) => return Ok(()),
                // Back as soon as a delivery report frees room (rdkafka_performance: poll(10)).
                Err(RDKafkaErrorCode::QueueFull) => {
                    dq.serve(10);
                }
                Err(e) => return Err(ProbeError::Kafka(format!("produce: {e}"))),
            }
        }
    };
    // Warmup, then wait for every ack so the window starts from an empty pipeline.
    while i < spec.warmup_messages {
        send(i)?;
        i += 1;
        if i % 1024 == 0 {
            dq.serve(0);
        }
    }
    let flush_deadline = Instant::now() + Duration::from_secs(60);
    while p.in_flight_count() > 0 && Instant::now() < flush_deadline && !interrupt::stopped() {
        dq.serve(10);
    }
    if p.in_flight_count() > 0 && !interrupt::stopped() {
        return Err(ProbeError::Kafka(format!(
            "warmup: {} messages unacknowledged after 60 s{}",
            p.in_flight_count(),
            producer
                .sink
                .last_error()
                .map(|e| format!(" (librdkafka: {e})"))
                .unwrap_or_default()
        )));
    }
    let errors_before = ctx.delivery_errors();
    let progress = std::sync::Arc::new(Progress::default());
    let acked0 = ctx.delivered();
    let size = pool.size() as u64;
    let start = Edge::now(origin, acked0, acked0 * size);
    let sampler = Sampler::start(progress.clone(), origin);
    let end_at = start.at + spec.window;
    let emits0 = producer.sink.stats_count();
    let mut interrupted = false;
    loop {
        send(i)?;
        i += 1;
        if i % 1024 == 0 {
            dq.serve(0);
            let acked = ctx.delivered();
            progress.publish(acked, acked * size);
            let now = Instant::now();
            // Rates need two statistics emits inside the window; on a loaded machine the
            // 1 s timer slips, so a short window stays open for them, a bounded while.
            let sampled = producer.sink.stats_count() >= emits0 + MIN_WINDOW_EMITS;
            if now >= end_at && (sampled || now >= end_at + EMITS_GRACE) {
                break;
            }
            if interrupt::stopped() {
                interrupted = true;
                break;
            }
        }
    }
    // Serve the acks that already arrived so the count is current at the edge.
    dq.serve(0);
    let acked = ctx.delivered();
    let end = Edge::now(origin, acked, acked * size);
    let ticks = sampler.stop();
    let delivery_errors = ctx.delivery_errors() - errors_before;
    // The rest is not measured: drop what is queued, wait for what is in flight.
    unsafe {
        rdsys::rd_kafka_purge(
            p.client().native_ptr(),
            (rdsys::RD_KAFKA_PURGE_F_QUEUE) as i32,
        );
    }
    let drain_deadline = Instant::now() + Duration::from_secs(30);
    while p.in_flight_count() > 0 && Instant::now() < drain_deadline {
        dq.serve(10);
    }
    producer.sink.flush();
    let stats = read_stats_between(stats_path, start.mono_us, end.mono_us);
    Ok(ProducerWindow {
        start,
        end,
        ticks,
        stats,
        delivery_errors,
        interrupted,
    })
}

/// Statistics emits whose monotonic `ts` falls inside [from_us, to_us], in order.
pub fn read_stats_between(
    path: &std::path::Path,
    from_us: i64,
    to_us: i64,
) -> Vec<kgap_analyzers::stats::Stats> {
    let Ok(text) = std::fs::read(path) else {
        return Vec::new();
    };
    text.split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .filter_map(|l| kgap_analyzers::stats::parse(l).ok())
        .filter(|s| s.ts >= from_us && s.ts <= to_us)
        .collect()
}

/// Producer figures from librdkafka's statistics over a window.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct StatsFigures {
    /// ProduceRequests per second (brokers[].req.Produce).
    pub produce_requests_per_s: Option<f64>,
    /// Bytes sent per ProduceRequest (txbytes over requests).
    pub bytes_per_request: Option<f64>,
    /// Mean batch size in bytes and messages (topics[].batchsize, batchcnt).
    pub batch_bytes_mean: Option<f64>,
    pub msgs_per_batch_mean: Option<f64>,
    /// Broker round trip: median of the per-interval p50s and the worst p99, ms.
    pub rtt_ms_p50: Option<f64>,
    pub rtt_ms_p99: Option<f64>,
    /// Requests awaiting a response on the busiest broker connection (brokers[].waitresp_cnt,
    /// a gauge read at each emit), mean over the emits: how much of the in-flight window was
    /// used. max.in.flight=5 caps it at 5.
    pub requests_in_flight_mean: Option<f64>,
}

/// Statistics figures over the emits of a window (at least two are needed for rates).
pub fn stats_figures(emits: &[Stats]) -> StatsFigures {
    let (mut rps, mut bpr) = (None, None);
    if let (Some(a), Some(b)) = (emits.first(), emits.last()) {
        if let Some(r) = stats::rates(a, b, "Produce") {
            rps = Some(crate::kit::measure::round3(r.requests_per_s));
            bpr = (r.tx_bytes_per_request > 0.0).then(|| r.tx_bytes_per_request.round());
        }
    }
    // Windows cover one interval each: weight means by their counts.
    let weighted = |f: &dyn Fn(&Stats) -> Vec<(f64, f64)>| -> Option<f64> {
        let (mut sum, mut n) = (0.0, 0.0);
        for s in emits {
            for (mean, cnt) in f(s) {
                sum += mean * cnt;
                n += cnt;
            }
        }
        (n > 0.0).then(|| (sum / n).round())
    };
    let batch = weighted(&|s| {
        s.topics
            .values()
            .map(|t| (t.batchsize.avg as f64, t.batchsize.cnt as f64))
            .collect()
    });
    let msgs = weighted(&|s| {
        s.topics
            .values()
            .map(|t| (t.batchcnt.avg as f64, t.batchcnt.cnt as f64))
            .collect()
    });
    let mut p50s: Vec<f64> = emits
        .iter()
        .flat_map(|s| {
            s.real_brokers()
                .filter(|b| b.rtt.cnt > 0)
                .map(|b| b.rtt.p50 as f64 / 1000.0)
                .collect::<Vec<_>>()
        })
        .collect();
    let p50 = (!p50s.is_empty())
        .then(|| crate::kit::measure::round3(crate::kit::measure::median(&mut p50s)));
    let p99 = emits
        .iter()
        .flat_map(|s| {
            s.real_brokers()
                .filter(|b| b.rtt.cnt > 0)
                .map(|b| b.rtt.p99 as f64 / 1000.0)
                .collect::<Vec<_>>()
        })
        .fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.max(x))))
        .map(crate::kit::measure::round3);
    let gauges: Vec<f64> = emits
        .iter()
        .filter_map(|s| s.real_brokers().map(|b| b.waitresp_cnt).max())
        .map(|n| n as f64)
        .collect();
    let in_flight = (!gauges.is_empty())
        .then(|| crate::kit::measure::round3(gauges.iter().sum::<f64>() / gauges.len() as f64));
    StatsFigures {
        requests_in_flight_mean: in_flight,
        produce_requests_per_s: rps,
        bytes_per_request: bpr,
        batch_bytes_mean: batch,
        msgs_per_batch_mean: msgs,
        rtt_ms_p50: p50,
        rtt_ms_p99: p99,
    }
}

/// Partition batches per ProduceRequest over a window's emits: batches built (each emit's
/// topics[].batchsize window holds one sample per ProduceRequest librdkafka built from one
/// partition's batch, over the interval before it) over requests sent (brokers[].req.Produce,
/// cumulative). The first emit's window lies before the span, so it is not counted. None
/// with fewer than two emits or no request sent. librdkafka 2.12.1 builds every request
/// from one partition, so this is 1 give or take the requests built but not yet sent.
pub fn batches_per_request(emits: &[Stats]) -> Option<f64> {
    let (first, last) = (emits.first()?, emits.last()?);
    let requests = last
        .requests("Produce")
        .saturating_sub(first.requests("Produce"));
    let batches: i64 = emits[1..]
        .iter()
        .flat_map(|s| s.topics.values())
        .map(|t| t.batchsize.cnt)
        .sum();
    (requests > 0).then(|| crate::kit::measure::round3(batches as f64 / requests as f64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statistics_figures_from_a_real_capture() {
        let text = include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../fixtures/librdkafka/consumer-kafka431-backoff-1000ms/stats.jsonl"
        ));
        let emits: Vec<Stats> = text
            .lines()
            .map(|l| stats::parse(l.as_bytes()).unwrap())
            .collect();
        let f = stats_figures(&emits);
        // A consumer sends no ProduceRequests: the rate is zero, not missing.
        assert_eq!(f.produce_requests_per_s, Some(0.0));
        assert!(f.rtt_ms_p50.unwrap() > 0.0 && f.rtt_ms_p99.unwrap() >= f.rtt_ms_p50.unwrap());
        assert_eq!(stats_figures(&[]), StatsFigures::default());
    }

    fn fixture(name: &str) -> Vec<Stats> {
        let path = format!(
            "{}/../fixtures/librdkafka/{name}/stats.jsonl",
            env!("CARGO_MANIFEST_DIR")
        );
        std::fs::read_to_string(path)
            .unwrap()
            .lines()
            .map(|l| stats::parse(l.as_bytes()).unwrap())
            .collect()
    }

    #[test]
    fn one_partition_batch_per_request_in_a_real_capture() {
        // probe-request-ceiling's debug pass on Kafka 4.3.1, 6 partitions × 16 KB: 2,429
        // batches built in the second interval, 2,429 requests sent.
        let e = fixture("producer-kafka431-batch16k-6p-protocol");
        assert_eq!(batches_per_request(&e), Some(1.0));
        let e = fixture("producer-kafka431-linger0-window-default-protocol");
        let b = batches_per_request(&e).unwrap();
        assert!((0.99..=1.01).contains(&b), "{b}");
        // One emit is no span; a consumer sends no ProduceRequest.
        assert_eq!(batches_per_request(&e[..1]), None);
        assert_eq!(
            batches_per_request(&fixture("consumer-kafka431-backoff-1000ms")),
            None
        );
    }

    #[test]
    fn zero_copy_sends_are_each_acknowledged_and_counted_once() {
        let broker = Broker::start(None, &[]).unwrap();
        let topic = broker.create_topic("kgap-test-zero-copy", 2).unwrap();
        let pool = Pool::new(1024, crate::kit::payload::PayloadKind::Random);
        let producer = Producer::new(
            &broker,
            &[
                ("linger.ms", "5".into()),
                ("queue.buffering.max.messages", "1000".into()),
            ],
            Arc::new(Sink::default()),
        )
        .unwrap();
        let handle = TopicHandle::new(&producer, &topic.name).unwrap();
        producer.pin(pool.shared());
        let dq = DeliveryQueue::new(&producer);
        // Ten times the queue's room: QueueFull must be waited out, never lose a message.
        let n = 10_000u64;
        for i in 0..n {
            // SAFETY: the pool's bytes are pinned to the producer.
            while let Err(e) = unsafe { handle.produce_borrowed((i % 2) as i32, pool.get(i)) } {
                assert_eq!(e, RDKafkaErrorCode::QueueFull);
                dq.serve(10);
            }
        }
        let t0 = Instant::now();
        while producer.producer.in_flight_count() > 0 && t0.elapsed() < Duration::from_secs(30) {
            dq.serve(10);
        }
        let ctx = producer.producer.context();
        assert_eq!((ctx.delivered(), ctx.delivery_errors()), (n, 0));
        drop(dq);
        drop(handle);
    }
}
