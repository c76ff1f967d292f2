//! One run's figures, for either client: what a batch held and how it went out.

use crate::kit::java::CompanionResult;
use crate::kit::measure::{round3, ThreadFigure};
use serde::{Deserialize, Serialize};

/// One run's figures. The shared part is measured by both clients the same way (payload
/// bytes only, per batch); the rest is the client's own.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Figures {
    /// The topic this run created and deleted.
    pub topic: String,
    /// Acknowledged messages in the window.
    pub messages: u64,
    pub window_s: f64,
    pub msgs_per_s: f64,
    /// Payload megabytes (10^6 B) per second.
    pub mb_per_s: f64,
    /// Mean messages per batch.
    pub msgs_per_batch: Option<f64>,
    /// Uncompressed input per batch: messages per batch × payload bytes (payload only: the
    /// v2 record framing, ~10 B per 1 KB record, and the 61 B batch header are not counted).
    pub input_bytes_per_batch: Option<f64>,
    /// A batch as sent, after compression.
    pub wire_bytes_per_batch: Option<f64>,
    /// Input over wire bytes; absent (never 0) when either side is.
    pub compression_ratio: Option<f64>,
    /// Input per batch over batch.size: librdkafka keeps it ≤ 1; a Java batch passes it.
    pub input_over_batch_size: Option<f64>,
    /// Cores of the thread that compresses: librdkafka's busiest rdk:broker thread, Java's
    /// thread calling send().
    pub compressing_thread_cores: Option<f64>,
    /// Process CPU seconds per million messages; absent when no message was acknowledged.
    pub cpu_s_per_million: Option<f64>,
    #[serde(flatten)]
    pub librdkafka: Option<LibrdkafkaFigures>,
    #[serde(flatten)]
    pub java: Option<JavaFigures>,
}

/// What librdkafka's statistics and this process's threads add.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LibrdkafkaFigures {
    /// ProduceRequests per second (statistics brokers[].req.Produce).
    pub produce_requests_per_s: Option<f64>,
    pub bytes_per_request: Option<f64>,
    /// Cores of every rdk:broker thread (they compress).
    pub broker_thread_cores: f64,
    /// The producing thread.
    pub app_cores: f64,
    /// The embedded mock's thread (0 on a real broker).
    pub mock_cores: f64,
    /// The whole process.
    pub cpu_cores: f64,
    pub delivery_errors: u64,
    /// Statistics emits inside the window.
    pub stats_emits: usize,
    pub threads: Vec<ThreadFigure>,
    /// Acknowledged messages in each full second of the window.
    pub timeline: Vec<u64>,
}

/// What the Java companion adds.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct JavaFigures {
    /// Cores of the producer's network thread.
    pub network_thread_cores: Option<f64>,
    pub gc_time_ms: u64,
}

/// Input and ratio per batch from statistics means (the ratio of the means); no ratio when
/// a side is missing or zero.
pub fn batch_figures(
    msgs_per_batch: Option<f64>,
    wire: Option<f64>,
    payload_size: usize,
) -> (Option<f64>, Option<f64>) {
    let input = msgs_per_batch.map(|m| (m * payload_size as f64).round());
    let ratio = match (input, wire) {
        (Some(i), Some(w)) if w > 0.0 && i > 0.0 => Some(round3(i / w)),
        _ => None,
    };
    (input, ratio)
}

impl Figures {
    /// The Java companion's figures at one point: a batch as sent is kafka-clients'
    /// batch-size-avg (the closed, compressed batch), the ratio payload bytes over bytes sent
    /// in the window (producer-topic-metrics totals), the input wire × ratio.
    pub fn java(
        r: &CompanionResult,
        topic: String,
        payload_size: usize,
        batch_size: u64,
    ) -> Figures {
        let ratio = match (r.records_sent_window, r.wire_bytes_window) {
            (Some(n), Some(w)) if n > 0 && w > 0 => {
                Some(round3(n as f64 * payload_size as f64 / w as f64))
            }
            _ => None,
        };
        let wire = r.batch_size_avg.filter(|b| b.is_finite() && *b > 0.0);
        let input = wire.zip(ratio).map(|(w, q)| (w * q).round());
        let cores = |cpu: Option<f64>| {
            cpu.filter(|c| *c >= 0.0 && r.seconds > 0.0)
                .map(|c| round3(c / r.seconds))
        };
        Figures {
            topic,
            messages: r.messages,
            window_s: r.seconds,
            msgs_per_s: r.msgs_per_s,
            mb_per_s: r.mb_per_s,
            msgs_per_batch: input.map(|i| round3(i / payload_size as f64)),
            input_bytes_per_batch: input,
            wire_bytes_per_batch: wire.map(f64::round),
            compression_ratio: ratio,
            input_over_batch_size: input.map(|i| round3(i / batch_size as f64)),
            compressing_thread_cores: cores(r.send_thread_cpu_s),
            cpu_s_per_million: (r.messages > 0)
                .then(|| round3(r.process_cpu_s / (r.messages as f64 / 1e6))),
            librdkafka: None,
            java: Some(JavaFigures {
                network_thread_cores: cores(r.network_thread_cpu_s),
                gc_time_ms: r.gc_time_ms,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratio_is_payload_over_wire_and_refuses_a_zero_side() {
        let (i, r) = batch_figures(Some(15.0), Some(3000.0), 1024);
        assert_eq!(i, Some(15360.0));
        assert_eq!(r, Some(5.12));
        assert_eq!(batch_figures(None, Some(3000.0), 1024), (None, None));
        assert_eq!(batch_figures(Some(1.0), Some(0.0), 1024).1, None);
        assert_eq!(batch_figures(Some(0.0), Some(10.0), 1024).1, None);
    }

    #[test]
    fn java_figures_come_from_the_windows_totals_and_the_batch_mean() {
        let r = CompanionResult {
            messages: 100_000,
            seconds: 2.0,
            msgs_per_s: 50_000.0,
            records_sent_window: Some(100_000),
            // 100k × 1 KB in 20 MB on the wire: ratio 5.12.
            wire_bytes_window: Some(20_000_000),
            batch_size_avg: Some(8_000.0),
            send_thread_cpu_s: Some(1.5),
            network_thread_cpu_s: Some(-1.0),
            process_cpu_s: 3.0,
            ..Default::default()
        };
        let f = Figures::java(&r, "t".into(), 1024, 16384);
        assert_eq!(f.compression_ratio, Some(5.12));
        assert_eq!(f.wire_bytes_per_batch, Some(8000.0));
        assert_eq!(f.input_bytes_per_batch, Some(40960.0));
        assert_eq!(f.msgs_per_batch, Some(40.0));
        assert_eq!(f.input_over_batch_size, Some(2.5));
        assert_eq!(f.compressing_thread_cores, Some(0.75));
        let j = f.java.as_ref().unwrap();
        assert_eq!(
            j.network_thread_cores, None,
            "-1 means the JVM could not tell"
        );
        assert_eq!(f.cpu_s_per_million, Some(30.0));
        // The two clients' figures serialize flat, with the same shared names.
        let v = serde_json::to_value(&f).unwrap();
        assert_eq!(v["input_bytes_per_batch"], 40960.0);
        assert!(v.get("gc_time_ms").is_some() && v.get("produce_requests_per_s").is_none());
        // Nothing drained in the window: no ratio, no input, no CPU per message; never 0.
        let empty = CompanionResult {
            messages: 0,
            records_sent_window: Some(0),
            wire_bytes_window: Some(0),
            batch_size_avg: Some(f64::NAN),
            ..r
        };
        let f = Figures::java(&empty, "t".into(), 1024, 16384);
        assert_eq!(
            (
                f.compression_ratio,
                f.input_bytes_per_batch,
                f.wire_bytes_per_batch
            ),
            (None, None, None)
        );
        assert_eq!(f.cpu_s_per_million, None);
    }
}
