//! One run's figures, either client's.

use crate::kit::measure::ThreadFigure;
use serde::Serialize;

/// One run's figures, either client's (what one did not measure is absent).
#[derive(Debug, Clone, Default, Serialize)]
pub struct Figures {
    /// The run's own topic (created before, deleted after it).
    pub topic: String,
    pub rate_target_per_s: u64,
    /// Messages handed to the client per second in the window.
    pub rate_achieved_per_s: f64,
    /// At least 97% of the target (the catalogue's `SUSTAINED_SHARE`).
    pub sustained: bool,
    pub window_s: f64,
    pub pacer_worst_lag_ms: f64,
    /// Messages sent more than 1 ms after their slot (none is dropped from the schedule).
    pub pacer_late_sends: u64,
    /// Send-to-ack: librdkafka's own per-message latency (`rd_kafka_message_latency`) as the
    /// report is served; Java's send callback.
    pub ack_count: u64,
    pub ack_ms_p50: f64,
    pub ack_ms_p90: Option<f64>,
    pub ack_ms_p99: f64,
    pub ack_ms_p999: Option<f64>,
    pub ack_ms_max: f64,
    /// End-to-end: the payload's send stamp to the consumer in the same process (or JVM).
    pub e2e_count: u64,
    pub e2e_ms_p50: f64,
    pub e2e_ms_p90: f64,
    pub e2e_ms_p99: f64,
    pub e2e_ms_p999: f64,
    pub e2e_ms_max: f64,
    /// End-to-end from each message's intended send time (its pacer slot): a late send's
    /// wait counts (coordinated omission). Absent when the messages could not carry it.
    pub e2e_intended_ms_p50: Option<f64>,
    pub e2e_intended_ms_p99: Option<f64>,
    pub e2e_intended_ms_p999: Option<f64>,
    /// Window messages the consumer never saw.
    pub e2e_missing: i64,
    /// librdkafka: from a delivery report landing in the empty queue to its serving.
    pub delivery_serve_ms_p50: Option<f64>,
    pub delivery_serve_ms_p99: Option<f64>,
    pub delivery_serve_ms_max: Option<f64>,
    /// librdkafka's statistics over the window.
    pub produce_requests_per_s: Option<f64>,
    pub msgs_per_batch_mean: Option<f64>,
    pub batch_bytes_mean: Option<f64>,
    pub rtt_ms_p50: Option<f64>,
    pub rtt_ms_p99: Option<f64>,
    /// Requests awaiting a response on the connection (waitresp_cnt), mean of the emits.
    pub requests_in_flight_mean: Option<f64>,
    /// Each broker connection over the window (librdkafka runs; the figures above are the
    /// client's, summed or the busiest connection's).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub brokers: Vec<crate::kit::broker_figures::BrokerFigures>,
    /// The probe process's cores and threads over the window (librdkafka runs).
    pub cpu_cores: Option<f64>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub threads: Vec<ThreadFigure>,
    /// The Java companion's JVM: GC time and process CPU in the window.
    pub gc_time_ms: Option<u64>,
    pub process_cpu_s: Option<f64>,
    /// [latency ms, percentile] points of the CDFs, for the charts (librdkafka runs).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ack_cdf: Vec<[f64; 2]>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub e2e_cdf: Vec<[f64; 2]>,
}
