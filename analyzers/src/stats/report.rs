//! The report: the documented JSON contract of `analyze-stats --json`.
//!
//! Units are in the field names (`_per_s`, `_ms`, `_bytes`); counts of messages or requests
//! have none. A figure followed over intervals is a [`Summary`] (n, min, p50, max, mean, last:
//! over the intervals, each interval's own value; for windows, the interval's percentile), or
//! a [`TrendSummary`] with the first value and the least-squares trend per second. Absent
//! fields (the emits did not carry them) are `null`, never 0.

use serde::Serialize;

use super::config::Resolved;
pub use super::stat::{Summary, TrendSummary};
pub use super::track::StateChange;
use crate::findings::diagnoses::stats::thresholds::Thresholds;
use crate::findings::finding::Strength;

#[derive(Debug, Clone, Serialize)]
pub struct StatsReport {
    pub tool: &'static str,
    /// The input's name as given (`<stdin>` for a pipe).
    pub input_name: String,
    /// One line: what the statistics show first.
    pub headline: String,
    pub input: StatsInput,
    /// The settings the rules compared against (given, or librdkafka's defaults).
    pub config: Resolved,
    pub thresholds: Thresholds,
    pub clients: Vec<ClientReport>,
    pub diagnoses: Vec<StatsDiagnosis>,
    pub warnings: Vec<String>,
    /// Chart points per client (bounded), for `--svg-dir`; not part of the JSON.
    #[serde(skip)]
    pub charts: Vec<super::chart::ClientChart>,
}

/// What the input held.
#[derive(Debug, Clone, Default, Serialize)]
pub struct StatsInput {
    /// Bytes read (after gunzip).
    pub bytes_read: u64,
    pub gzip: bool,
    pub lines: u64,
    /// Statistics objects read (each one emit of one client).
    pub statistics_objects: u64,
    /// Of those, found inside another JSON object (a logger's line) or in one of its strings.
    pub wrapped_objects: u64,
    /// Objects that look like statistics but are not valid JSON, and cut ones.
    pub invalid_objects: u64,
    pub truncated_objects: u64,
    /// Cut objects read up to their last whole broker or topic (not counted as truncated).
    pub cut_objects_read: u64,
    /// Objects over the size cap, skipped.
    pub oversized_objects: u64,
    /// Other JSON (or brace-delimited text) that is not statistics, ignored.
    pub other_objects: u64,
    /// Emits with the same client and `ts` as the one before (duplicated lines), ignored.
    pub duplicate_emits: u64,
    /// The first problems, `line: reason`.
    pub problems: Vec<Problem>,
    /// Offset of the first NUL byte: binary data.
    pub binary_at_offset: Option<u64>,
    pub max_object_bytes: u64,
    /// gzip: the stream ended early (the decoder's words); what came before was analysed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gzip_cut: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Problem {
    pub line: u64,
    pub reason: String,
}

/// One client's series of emits (a restart starts another one).
#[derive(Debug, Clone, Serialize)]
pub struct ClientReport {
    /// librdkafka's instance name (`rdkafka#producer-1`).
    pub name: String,
    pub client_id: Option<String>,
    /// `producer` or `consumer`.
    pub client_type: Option<String>,
    /// 1 for the first series of this name; more after restarts.
    pub series: u32,
    /// Why this series started (a restart), for series > 1.
    pub started_because: Option<String>,
    /// The librdkafka versions whose emitter writes the fields seen.
    pub version_hint: &'static str,
    pub emits: u64,
    pub intervals: u64,
    pub first_line: u64,
    pub last_line: u64,
    /// Wall clock of the first and last emits (epoch seconds).
    pub start_epoch_s: Option<i64>,
    pub end_epoch_s: Option<i64>,
    /// From the monotonic `ts`.
    pub duration_s: f64,
    /// Seconds between emits (statistics.interval.ms).
    pub interval_s: Option<Summary>,
    pub producer: Option<ProducerReport>,
    pub consumer: Option<ConsumerReport>,
    /// All brokers together: rates and queue depths add up; each window percentile is the
    /// highest broker's (an upper bound).
    pub total: BrokerReport,
    /// Which connection is busiest, slowest and queues most, when two or more learned
    /// brokers carried requests (null otherwise).
    pub connections: Option<Connections>,
    /// Each connection (learned brokers, and logical ones such as GroupCoordinator).
    pub brokers: Vec<BrokerReport>,
    pub topics: Vec<TopicReport>,
    pub cgrp: Option<CgrpReport>,
    /// The client's fatal error, when it had one.
    pub fatal: Option<String>,
    /// Brokers or partitions beyond the caps, not followed.
    pub not_followed: u64,
}

/// One connection named by what makes it stand out.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Standout {
    pub broker: String,
    /// Its figure (requests/s, rtt p50 ms or requests waiting: the p50 over intervals).
    pub value: f64,
    /// The same figure's median over the other connections that carried requests.
    pub others_median: f64,
    /// Its share of all connections' requests (busiest only).
    pub share: Option<f64>,
}

/// The comparison of a client's connections (only when two or more carried requests).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Connections {
    /// Connections that carried requests (the learned brokers, not bootstrap or logical).
    pub carrying_requests: u64,
    pub busiest: Option<Standout>,
    pub slowest: Option<Standout>,
    pub most_waiting: Option<Standout>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ProducerReport {
    pub messages_per_s: Option<Summary>,
    pub bytes_per_s: Option<Summary>,
    pub produce_requests_per_s: Option<Summary>,
    pub bytes_per_produce_request: Option<Summary>,
    pub messages_per_produce_request: Option<Summary>,
    /// Batches (partition MessageSets) per ProduceRequest: 1 in librdkafka 2.12.
    pub batches_per_produce_request: Option<Summary>,
    /// Batch sizes: each interval's p50 over all topics (`batchsize`, `batchcnt` windows).
    pub batch_bytes_p50: Option<Summary>,
    pub batch_messages_p50: Option<Summary>,
    /// Time in the producer queue before a batch takes the message (`int_latency`).
    pub int_latency_p50_ms: Option<TrendSummary>,
    pub int_latency_p99_ms: Option<Summary>,
    pub int_latency_max_ms: Option<Summary>,
    /// Values beyond int_latency's histogram: its percentiles then read low (max does not).
    pub int_latency_outofrange: f64,
    pub queue_messages: Option<TrendSummary>,
    pub queue_bytes: Option<Summary>,
    /// queue.buffering.max.messages and .kbytes (bytes), as the emits state them.
    pub queue_max_messages: Option<f64>,
    pub queue_max_bytes: Option<f64>,
    /// The fuller of messages and bytes against their limits.
    pub queue_share: Option<Summary>,
    /// Messages waiting in partitions' first-level queues (`msgq_cnt`, all partitions).
    pub partition_queue_messages: Option<Summary>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ConsumerReport {
    pub messages_per_s: Option<Summary>,
    pub bytes_per_s: Option<Summary>,
    pub fetch_requests_per_s: Option<Summary>,
    /// Intervals receiving less than burst_idle_share of the mean rate.
    pub idle_intervals: u64,
    /// Coefficient of variation of the receive rate over intervals.
    pub receive_rate_cv: Option<f64>,
    /// Messages in the client's fetch queues (the one queue a group consumer's partitions
    /// share counted once).
    pub fetch_queue_messages: Option<TrendSummary>,
    /// All partitions' lag (consumer_lag_stored, else consumer_lag).
    pub lag_messages: Option<TrendSummary>,
    /// Where the lag comes from: `consumer_lag_stored` (1.8+), `consumer_lag`, or
    /// `hi_offset - app_offset` when no offsets are stored; `none` without any.
    pub lag_field: &'static str,
    pub rebalances: f64,
}

/// One connection (or the aggregate, named `*`).
#[derive(Debug, Clone, Serialize)]
pub struct BrokerReport {
    pub name: String,
    pub nodeid: Option<i64>,
    /// `learned`, `configured`, `logical`, `internal`; null for the aggregate.
    pub source: Option<String>,
    /// Distinct states seen, in order.
    pub states: Vec<String>,
    pub intervals: u64,
    pub intervals_not_up: u64,
    pub state_changes: u64,
    /// The first state changes seen between emits.
    pub state_change_list: Vec<StateChange>,
    pub requests_per_s: Option<Summary>,
    pub produce_requests_per_s: Option<Summary>,
    pub fetch_requests_per_s: Option<Summary>,
    pub tx_bytes_per_s: Option<Summary>,
    pub rx_bytes_per_s: Option<Summary>,
    pub bytes_per_produce_request: Option<Summary>,
    /// Requests sent and waiting for their response (gauge at each emit).
    pub waitresp_cnt: Option<TrendSummary>,
    /// Requests waiting to be sent.
    pub outbuf_cnt: Option<Summary>,
    pub rtt_p50_ms: Option<TrendSummary>,
    pub rtt_p99_ms: Option<Summary>,
    pub rtt_max_ms: Option<Summary>,
    pub int_latency_p50_ms: Option<Summary>,
    pub outbuf_latency_p50_ms: Option<Summary>,
    pub throttle_max_ms: Option<Summary>,
    pub throttled_intervals: u64,
    pub retries: f64,
    pub timeouts: f64,
    pub tx_errors: f64,
    pub rx_errors: f64,
    pub corrid_errors: f64,
    pub connects: f64,
    pub disconnects: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct TopicReport {
    pub topic: String,
    pub batch_bytes_p50: Option<Summary>,
    pub batch_messages_p50: Option<Summary>,
    pub partitions: Vec<PartitionReport>,
}

#[derive(Debug, Clone, Serialize)]
pub struct PartitionReport {
    pub partition: i64,
    pub leader: Option<i64>,
    pub fetch_states: Vec<String>,
    pub produced_messages_per_s: Option<Summary>,
    pub queue_messages: Option<Summary>,
    pub received_messages_per_s: Option<Summary>,
    pub fetch_queue_messages: Option<Summary>,
    pub fetch_queue_bytes: Option<Summary>,
    pub lag_messages: Option<TrendSummary>,
    /// High watermark advance: what producers write to the partition.
    pub high_watermark_per_s: Option<Summary>,
    /// Intervals where the fetch queue was at the backoff threshold.
    pub fetch_queue_full_intervals: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct CgrpReport {
    /// `state/join_state` at the last emit.
    pub state: Option<String>,
    pub rebalances: f64,
    pub last_rebalance_reason: Option<String>,
    pub assignment_size: Option<f64>,
}

/// A run of consecutive intervals where a rule held.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Episode {
    pub from_line: u64,
    pub to_line: u64,
    pub from_t_s: f64,
    pub to_t_s: f64,
    pub intervals: u64,
}

/// A diagnosis: what the statistics show, the cause, the fix, and the evidence.
#[derive(Debug, Clone, Serialize)]
pub struct StatsDiagnosis {
    /// Stable id (`per-request-ceiling`, `inflight-queueing`, `fetch-queue-backoff`, …).
    pub id: &'static str,
    pub title: String,
    /// The finding of the post this is evidence for, and how strongly.
    pub finding: Option<&'static str>,
    pub strength: Option<Strength>,
    pub client: String,
    pub series: u32,
    /// Brokers (connections) where it held, when it is about connections.
    pub brokers: Vec<String>,
    /// `topic [partition]` where it held, when it is about partitions.
    pub partitions: Vec<String>,
    pub intervals_held: u64,
    pub intervals_considered: u64,
    /// Where it held, first episodes first (at most 10).
    pub episodes: Vec<Episode>,
    pub evidence: serde_json::Value,
    pub cause: String,
    pub fix: String,
    /// What statistics cannot tell apart here, and the artifact that can.
    pub cannot_tell: Option<String>,
}
