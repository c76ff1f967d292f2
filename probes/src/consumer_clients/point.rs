//! One point of the sweep: a consumer of the table (its API, and the tuned one's settings) at a
//! message size, K instances of it.

use kgap_analyzers::findings::probe_result::Client;
use serde::Serialize;

/// Messages per batch call for the tuned librdkafka consumer (Java's max.poll.records).
pub const TUNED_BATCH: usize = 500;
/// fetch.queue.backoff.ms of the tuned consumer (the post's Gap 2 fix).
pub const TUNED_BACKOFF_MS: u64 = 10;

/// One consumer of the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Api {
    /// librdkafka, BaseConsumer::poll() at librdkafka's defaults (the post's rust).
    Poll,
    /// librdkafka, the batch API at 500 per call and fetch.queue.backoff.ms=10 (rust-tuned).
    Tuned,
    /// Java, group.protocol=classic (kafka-clients' default).
    Classic,
    /// Java, group.protocol=consumer (network I/O on a background thread).
    Consumer,
}

impl Api {
    pub fn client(self) -> Client {
        match self {
            Api::Poll | Api::Tuned => Client::Librdkafka,
            Api::Classic | Api::Consumer => Client::Java,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Api::Poll => "poll",
            Api::Tuned => "tuned",
            Api::Classic => "classic",
            Api::Consumer => "consumer",
        }
    }
}

/// One point: a consumer at a message size, K instances of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Point {
    pub size_bytes: u64,
    pub api: Api,
    pub instances: usize,
}
