//! What the request-ceiling rule reads: librdkafka's figures at each point of a sweep, per
//! rep, and per broker connection.

use crate::findings::connection::Connection;
use crate::findings::reps::Reps;
use serde::{Deserialize, Serialize};

/// The connection with the highest median request rate.
pub fn busiest(connections: &[Connection]) -> Option<&Connection> {
    connections
        .iter()
        .max_by(|a, b| median(&a.requests_per_s).total_cmp(&median(&b.requests_per_s)))
}

/// librdkafka's figures at one point (partitions × batch.size), per rep.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PointEvidence {
    pub partitions: i32,
    pub batch_size: u64,
    pub msgs_per_s: Reps,
    /// ProduceRequests per second (statistics: brokers[].req.Produce).
    pub produce_requests_per_s: Reps,
    /// Bytes sent per ProduceRequest (statistics: txbytes over req.Produce).
    pub bytes_per_request: Reps,
    /// Partition batches per ProduceRequest (statistics: topics[].batchsize.cnt, one sample
    /// per batch built, over req.Produce sent).
    pub batches_per_request: Reps,
    /// Cores of the producing thread (`app`).
    pub app_cores: Reps,
    /// The busiest of librdkafka's broker threads, and its cores.
    pub broker_thread: String,
    pub broker_thread_cores: Reps,
    /// The embedded mock's serving thread (`rdk:mock`); empty on a real broker.
    pub mock_thread_cores: Reps,
    /// Each broker connection (empty when the statistics were not read per broker).
    #[serde(default)]
    pub connections: Vec<Connection>,
}

impl PointEvidence {
    /// Connections that carried requests (median above zero).
    pub(super) fn loaded(&self) -> Vec<&Connection> {
        self.connections
            .iter()
            .filter(|c| median(&c.requests_per_s) > 0.0)
            .collect()
    }
}

/// What a sweep of librdkafka's producer measured.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Evidence {
    /// The broker was librdkafka's in-process mock: its per-request cost is not Kafka's.
    pub broker_is_mock: bool,
    /// Every measured point of librdkafka's (Java's never enter this rule).
    pub points: Vec<PointEvidence>,
    /// From the short debug=protocol,msg pass: `Produce MessageSet` lines over `Sent
    /// ProduceRequest` lines.
    pub log_batches_per_request: Option<f64>,
}

pub(super) fn median(r: &Reps) -> f64 {
    r.median().unwrap_or(0.0)
}
