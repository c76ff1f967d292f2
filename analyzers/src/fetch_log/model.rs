//! What analyze-fetch-log reports (its `--json` shape).

use serde::Serialize;

use crate::engine::input::InputSummary;
use crate::librdkafka::requests::{ConnectionStats, RequestStats};
use crate::vocab::report::{Diagnosis, TimestampCounts, Window};

/// Per partition: how the fetcher treated it.
#[derive(Debug, Clone, Default, Serialize)]
pub struct PartitionFetch {
    /// Client instance (`rdkafka#consumer-1`), when the wrapper kept it.
    pub client: Option<String>,
    /// Topic.
    pub topic: String,
    /// Partition.
    pub partition: i32,
    /// `Fetch backoff for …` lines for this partition.
    pub backoffs: u64,
    /// … of which `Local: Queue full` (the local queue hit queued.min.messages or
    /// queued.max.messages.kbytes; the pause is fetch.queue.backoff.ms).
    pub queue_full_backoffs: u64,
    /// … of which for a fetch error (the pause is fetch.error.backoff.ms).
    pub error_backoffs: u64,
    /// … of which at the end of the partition (`Broker: No more messages`, librdkafka's
    /// end-of-partition signal): the consumer has read everything, not an error.
    pub end_of_partition_backoffs: u64,
    /// Sum of the backoff durations librdkafka announced.
    pub backoff_ms_announced: u64,
    /// Time spent backed off inside the window: each backoff from its line to its
    /// end, cut short when the partition was fetched again earlier, overlaps
    /// counted once. Without timestamps, the announced sum.
    pub backoff_ms_total: f64,
    /// `backoff_ms_total` over the window; `null` without timestamps.
    pub backoff_fraction: Option<f64>,
    /// The most frequent queue-full backoff duration: fetch.queue.backoff.ms.
    pub queue_backoff_ms: Option<u64>,
    /// Fetch-decide transitions, by outcome.
    pub decide: DecideCounts,
    /// Largest local queue seen in fetch-decide lines (messages).
    pub queued_msgs_max: Option<u64>,
    /// queued.min.messages as the fetch-decide lines print it.
    pub queued_min_messages: Option<u64>,
    /// queued.max.messages.kbytes as the fetch-decide lines print it.
    pub queued_max_kbytes: Option<u64>,
    /// `Fetch topic … at offset` lines: times the partition went into a FetchRequest.
    pub fetches: u64,
    /// Partition answers in FetchResponses (`MessageSet size` lines).
    pub messagesets: u64,
    /// … of which empty.
    pub empty_messagesets: u64,
    /// Messages put on the local queue (`Enqueue` lines, debug=consumer/fetch).
    pub messages_enqueued: u64,
    /// Bytes put on the local queue.
    pub bytes_enqueued: u64,
}

/// Fetch-decide transitions (`Topic … is fetchable` / `is not fetchable: <reason>`).
#[derive(Debug, Clone, Default, Serialize)]
pub struct DecideCounts {
    /// Became fetchable.
    pub fetchable: u64,
    /// Not fetchable: the local queue reached queued.min.messages.
    pub queued_min_messages_exceeded: u64,
    /// Not fetchable: the local queue reached queued.max.messages.kbytes.
    pub queued_max_kbytes_exceeded: u64,
    /// Not fetchable: a backoff is running.
    pub fetch_backed_off: u64,
    /// Not fetchable: paused by the application.
    pub paused: u64,
    /// Not fetchable, other reasons.
    pub other: u64,
}

/// Per (client, broker): FetchRequests and what came back.
#[derive(Debug, Clone, Serialize)]
pub struct FetcherStats {
    /// Client instance.
    pub client: Option<String>,
    /// Broker name.
    pub broker: String,
    /// `Fetch <n>/<a>/<t> toppar(s)` lines: FetchRequests built.
    pub fetch_requests: u64,
    /// Fetch responses seen (a `Received FetchResponse`, `MessageSet size` lines
    /// (debug=msg), or `Enqueue` lines after the request).
    pub responses: u64,
    /// Responses with no data for any partition (needs `MessageSet size` lines or
    /// debug=protocol: with debug=fetch alone an empty answer leaves no line).
    pub empty_responses: u64,
    /// Empty responses that took ≥ 90% of fetch.wait.max.ms: the broker held the
    /// fetch waiting for data (the consumer had caught up).
    pub empty_held_to_wait_max: u64,
    /// Fetch round trip: the FetchResponse rtt where debug=protocol is on, else the
    /// time from the request's build to its first partition answer.
    pub rtt_ms_p50: Option<f64>,
    /// 99th percentile fetch round trip.
    pub rtt_ms_p99: Option<f64>,
    /// Slowest fetch round trip.
    pub rtt_ms_max: Option<f64>,
    /// Broker-wide `Fetch backoff for Nms` without reason: the broker thread waiting
    /// for the earliest partition backoff to end.
    pub idle_waits: u64,
    /// Broker-wide fetch backoffs after an error (fetch.error.backoff.ms).
    pub error_backoffs: u64,
    /// Broker-wide backoffs at the end of a partition (`No more messages`): not errors.
    pub end_of_partition_backoffs: u64,
    /// The errors, with counts.
    pub error_reasons: Vec<ReasonCount>,
}

/// A reason text and how often it was seen.
#[derive(Debug, Clone, Serialize)]
pub struct ReasonCount {
    /// As librdkafka printed it.
    pub reason: String,
    /// Occurrences.
    pub count: u64,
}

/// The report of `analyze-fetch-log` (its `--json` output).
#[derive(Debug, Clone, Serialize)]
pub struct FetchLogReport {
    /// `"analyze-fetch-log"`.
    pub tool: &'static str,
    /// Lines read.
    pub lines_read: u64,
    /// Lines with no librdkafka record the analyzers know (skipped).
    pub lines_skipped: u64,
    /// Records recognised (a line can hold several).
    pub records_recognised: u64,
    /// … of which fetch records (backoffs, fetch-decide, fetches, responses).
    pub fetch_records: u64,
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
    /// Requests per connection and type (needs debug=protocol).
    pub requests: Vec<RequestStats>,
    /// In-flight per connection (needs debug=protocol).
    pub connections: Vec<ConnectionStats>,
    /// Fetches per connection.
    pub fetchers: Vec<FetcherStats>,
    /// Per partition.
    pub partitions: Vec<PartitionFetch>,
    /// Gaps found.
    pub diagnoses: Vec<Diagnosis>,
    /// Figures this log cannot give, and why.
    pub not_computed: Vec<String>,
    /// Anything that makes the numbers less trustworthy.
    pub warnings: Vec<String>,
}

impl FetchLogReport {
    /// The report has something to say: at least one fetch record was found.
    pub fn is_usable(&self) -> bool {
        self.fetch_records > 0
    }

    /// The human report.
    pub fn render_text(&self) -> String {
        self.to_string()
    }
}
