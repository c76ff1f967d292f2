//! What analyze-protocol-log reports (its `--json` shape), and the figures built from
//! the accounting at the end of a read.

use serde::Serialize;

use crate::engine::input::InputSummary;
use crate::librdkafka::requests::{
    ConnectionStats, RequestAccounting, RequestStats, DEPTH_BUCKETS,
};
use crate::vocab::report::{round3, us_to_ms, Diagnosis, Dist, TimestampCounts, Window};

/// The report of `analyze-protocol-log` (its `--json` output).
#[derive(Debug, Clone, Serialize)]
pub struct ProtocolLogReport {
    /// `"analyze-protocol-log"`.
    pub tool: &'static str,
    /// Lines read.
    pub lines_read: u64,
    /// Lines with no librdkafka record the analyzers know (skipped).
    pub lines_skipped: u64,
    /// Records recognised (a line can hold several).
    pub records_recognised: u64,
    /// … of which protocol records (Sent, Received, Retrying, Timed out).
    pub protocol_records: u64,
    /// … of which librdkafka's error lines about requests and connections, which need no
    /// `debug=` (REQERR timeouts, `N request(s) timed out: disconnect`, `Connect to …
    /// failed`).
    pub error_records: u64,
    /// Records dropped by `window_start` / `window_end`.
    pub records_outside_window: u64,
    /// Where record times came from: "librdkafka", "wrapper" or "none".
    pub timestamps: String,
    /// Records per timestamp source.
    pub timestamp_sources: TimestampCounts,
    /// The time span analysed (`null` without timestamps).
    pub window: Option<Window>,
    /// What the reader saw of the input.
    pub input: InputSummary,
    /// Per connection (client, broker) and request type.
    pub requests: Vec<RequestStats>,
    /// In-flight depth per connection.
    pub connections: Vec<ConnectionStats>,
    /// ProduceRequests in detail, per connection that sent any.
    pub produce: Vec<ProduceShape>,
    /// debug=msg: messages per ProduceRequest (2.x sends one partition per request).
    pub messages_per_request: Option<MessagesPerRequest>,
    /// REQTMOUT lines.
    pub timeouts: TimeoutSummary,
    /// `Connect to <address> failed: <reason>` lines, by reason.
    pub connect_failures: Vec<NameCount>,
    /// Gaps found.
    pub diagnoses: Vec<Diagnosis>,
    /// Figures this log cannot give, and why.
    pub not_computed: Vec<String>,
    /// Anything that makes the numbers less trustworthy.
    pub warnings: Vec<String>,
}

/// ProduceRequests on one connection.
#[derive(Debug, Clone, Serialize)]
pub struct ProduceShape {
    /// Client instance.
    pub client: Option<String>,
    /// Broker name.
    pub broker: String,
    /// Requests.
    pub requests: u64,
    /// Request sizes, power-of-two buckets.
    pub bytes_histogram: Vec<Bucket>,
    /// Mean in-flight depth (this request included) when a ProduceRequest was sent.
    pub inflight_at_send_mean: Option<f64>,
    /// rtt by in-flight depth at send.
    pub rtt_by_inflight: Vec<DepthRtt>,
    /// Pearson correlation of depth at send and rtt (near 1: rtt grows with depth).
    pub rtt_depth_correlation: Option<f64>,
}

/// One histogram bucket: `low <= value <= high`.
#[derive(Debug, Clone, Serialize)]
pub struct Bucket {
    /// Lowest value of the bucket.
    pub low: u64,
    /// Highest value of the bucket.
    pub high: u64,
    /// Values in it.
    pub count: u64,
}

/// rtt of requests sent at one in-flight depth range.
#[derive(Debug, Clone, Serialize)]
pub struct DepthRtt {
    /// Depth range (`1`, `2-5`, `6-20`, `>20`).
    pub inflight: &'static str,
    /// Responses.
    pub count: u64,
    /// Median rtt.
    pub rtt_ms_p50: Option<f64>,
    /// 99th percentile rtt.
    pub rtt_ms_p99: Option<f64>,
}

/// Messages per Produce MessageSet (debug=msg lines).
#[derive(Debug, Clone, Serialize)]
pub struct MessagesPerRequest {
    /// MessageSets built.
    pub messagesets: u64,
    /// Median messages per MessageSet.
    pub p50: u64,
    /// Mean.
    pub mean: f64,
    /// Largest.
    pub max: u64,
    /// MessageSets reported delivered.
    pub delivered: u64,
    /// MessageSets that met an error.
    pub errors: u64,
}

/// REQTMOUT lines.
#[derive(Debug, Clone, Default, Serialize)]
pub struct TimeoutSummary {
    /// `Timed out <Api>Request …` lines.
    pub requests_timed_out: u64,
    /// … per request type.
    pub by_request: Vec<NameCount>,
    /// Longest wait before the timeout.
    pub after_ms_max: Option<u64>,
    /// Lines saying the request was possibly held back by a preceding one.
    pub held_back: u64,
    /// … by which request type.
    pub held_back_by: Vec<NameCount>,
    /// `Timed out N in-flight, …` summary lines: in-flight total.
    pub summary_in_flight: u64,
    /// … out-queue total.
    pub summary_out_queue: u64,
    /// … retry-queued total.
    pub summary_retry_queued: u64,
    /// REQERR lines of requests that failed timed out (`<Api>Request failed: Local:
    /// Timed out…`, debug=broker).
    pub request_errors_timed_out: u64,
    /// … of which in a queue, before they were sent (`Timed out in queue`).
    pub request_errors_in_queue: u64,
    /// `N request(s) timed out: disconnect` lines (a line repeated at once with the same
    /// time and broker, as an error callback echoes librdkafka's FAIL line, counts once).
    pub disconnects: u64,
    /// The N of those lines, summed: librdkafka counts a connection's timeouts from its
    /// last failure, so the lines do not count a request twice.
    pub disconnect_requests: u64,
}

/// A name and a count.
#[derive(Debug, Clone, Serialize)]
pub struct NameCount {
    /// The name.
    pub name: String,
    /// How often.
    pub count: u64,
}

pub(super) fn bump(list: &mut Vec<NameCount>, name: &str) {
    if let Some(n) = list.iter_mut().find(|n| n.name == name) {
        n.count += 1;
    } else if list.len() < 64 {
        list.push(NameCount {
            name: name.to_string(),
            count: 1,
        });
    }
}

impl ProtocolLogReport {
    /// The report has something to say: at least one protocol record, librdkafka error
    /// line about requests or connections, or Produce MessageSet was found.
    pub fn is_usable(&self) -> bool {
        self.protocol_records > 0 || self.error_records > 0 || self.messages_per_request.is_some()
    }

    /// The human report.
    pub fn render_text(&self) -> String {
        self.to_string()
    }
}

pub(super) fn log2_buckets(d: &Dist) -> Vec<Bucket> {
    let mut out: Vec<Bucket> = Vec::new();
    for v in d.histogram().iter_recorded() {
        let value = v.value_iterated_to();
        let exp = 63 - value.max(1).leading_zeros();
        let low = 1u64 << exp;
        let high = low.saturating_mul(2) - 1;
        match out.last_mut() {
            Some(b) if b.low == low => b.count += v.count_at_value(),
            _ => out.push(Bucket {
                low,
                high,
                count: v.count_at_value(),
            }),
        }
    }
    out
}

pub(super) fn produce_shapes(acc: &RequestAccounting) -> Vec<ProduceShape> {
    let mut out = Vec::new();
    for c in &acc.conns {
        let Some(a) = c.apis.iter().find(|a| a.name == "Produce") else {
            continue;
        };
        if a.count == 0 {
            continue;
        }
        out.push(ProduceShape {
            client: c.client.clone(),
            broker: c.broker.clone(),
            requests: a.count,
            bytes_histogram: log2_buckets(&a.bytes),
            inflight_at_send_mean: (a.depth_n > 0)
                .then(|| round3(a.depth_sum as f64 / a.depth_n as f64)),
            rtt_by_inflight: a
                .rtt_by_depth
                .iter()
                .zip(DEPTH_BUCKETS)
                .map(|(h, label)| DepthRtt {
                    inflight: label,
                    count: h.len(),
                    rtt_ms_p50: (!h.is_empty()).then(|| us_to_ms(h.quantile(0.5))),
                    rtt_ms_p99: (!h.is_empty()).then(|| us_to_ms(h.quantile(0.99))),
                })
                .collect(),
            rtt_depth_correlation: a.corr.r().map(round3),
        });
    }
    out
}
