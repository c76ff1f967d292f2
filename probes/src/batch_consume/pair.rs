//! What both sides of the harness pair share: who reads the topic ([`Side`]), a point, one
//! run's figures, and the consumer properties both sides run with. Harness mode
//! ([`super::harness`]) and the probe's subscribed side ([`super::subscribed`]) both use them.

use serde::Serialize;

/// Who reads the topic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Side {
    /// The probe's batch loop (fixed policy), subscribed, first message to the N-th.
    ProbeLoop,
    /// librdkafka's rdkafka_performance -G, the same.
    #[serde(rename = "rdkafka_performance")]
    RdkafkaPerformance,
    /// The throughput mode's window: assign, after a 10% warmup, to the topic's end.
    ThroughputWindow,
}

impl Side {
    pub fn name(self) -> &'static str {
        match self {
            Side::ProbeLoop => "probe-loop",
            Side::RdkafkaPerformance => "rdkafka_performance",
            Side::ThroughputWindow => "throughput-window",
        }
    }
}

/// One point: a side, at the batch size and the smallest backoff.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Point {
    pub side: Side,
    pub batch: usize,
    #[serde(rename = "fetch.queue.backoff.ms")]
    pub backoff_ms: u64,
}

/// One run's figures. Threads are the probe's own: rdkafka_performance is another process.
#[derive(Debug, Clone, Serialize)]
pub struct Figures {
    pub messages: u64,
    pub window_s: f64,
    pub msgs_per_s: f64,
    pub mb_per_s: f64,
    pub app_cores: Option<f64>,
    pub broker_thread_cores: Option<f64>,
    pub consumer_cores: Option<f64>,
}

/// The consumer properties both sides of the pair run with: rdkafka_performance's own
/// defaults, written out so the probe's side has them too.
pub fn pair_settings(backoff_ms: u64) -> Vec<(&'static str, String)> {
    vec![
        ("enable.auto.commit", "false".into()),
        ("auto.offset.reset", "earliest".into()),
        ("queued.min.messages", "1000000".into()),
        ("session.timeout.ms", "6000".into()),
        ("enable.partition.eof", "true".into()),
        ("fetch.queue.backoff.ms", backoff_ms.to_string()),
    ]
}
