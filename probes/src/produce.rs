//! Producing without per-message allocation, and prefilling a probe's topic.
//!
//! rust-rdkafka 0.39's `BaseProducer::send` builds a `CString` of the topic name for every
//! message — an allocation per message, the very trap of the postmortem in reference/. The
//! kit produces through a `rd_kafka_topic_t` made once ([`TopicHandle`]) and
//! `rd_kafka_produce`, which copies the payload (RD_KAFKA_MSG_F_COPY) so pool slices can be
//! reused. Delivery reports still reach [`crate::capture::KgapContext`] through poll().

use crate::broker::{Broker, Producer};
use crate::capture::Sink;
use crate::error::{ProbeError, Result};
use crate::interrupt;
use crate::payload::Pool;
use rdkafka::error::RDKafkaErrorCode;
use rdkafka::producer::Producer as _;
use rdkafka_sys as rdsys;
use std::ffi::CString;
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
        let rc = unsafe {
            rdsys::rd_kafka_produce(
                self.rkt,
                partition,
                rdsys::RD_KAFKA_MSG_F_COPY as i32,
                payload.as_ptr() as *mut std::os::raw::c_void,
                payload.len(),
                std::ptr::null(),
                0,
                std::ptr::null_mut(),
            )
        };
        if rc == 0 {
            Ok(())
        } else {
            Err(unsafe { rdsys::rd_kafka_last_error() }.into())
        }
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
