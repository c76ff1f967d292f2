//! One broker connection's figures at one point: the evidence request-ceiling and
//! inflight-latency read per connection (librdkafka keeps one per broker).

use super::reps::Reps;
use serde::{Deserialize, Serialize};

/// One broker connection's figures at one point, per rep (statistics `brokers[]`, and the
/// connection's thread `rdk:broker<nodeid>` from /proc).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Connection {
    /// librdkafka's name: `127.0.0.1:9410/2`.
    pub broker: String,
    /// Partitions of the run's topic it led (the most any rep saw).
    pub partitions_led: u32,
    /// Requests of the probe's API per second (ProduceRequests here).
    pub requests_per_s: Reps,
    pub bytes_per_request: Reps,
    pub rtt_ms_p50: Reps,
    /// Requests awaiting a response (`waitresp_cnt`, mean of the emits).
    pub waiting_requests: Reps,
    pub thread: String,
    pub thread_cores: Reps,
    /// Requests waiting to be sent (`outbuf_cnt`, mean of the emits).
    #[serde(default)]
    pub queued_requests: Reps,
    /// Seconds the broker answered nothing while requests waited for it.
    #[serde(default)]
    pub silent_s: Reps,
}

impl Connection {
    pub fn label(&self) -> String {
        if self.partitions_led > 0 {
            format!("{} ({} led)", self.broker, self.partitions_led)
        } else {
            self.broker.clone()
        }
    }
}
