//! What the inflight-latency rule reads: both windows' figures at each rate, per rep.

use crate::findings::connection::Connection;
use crate::findings::reps::Reps;
use serde::{Deserialize, Serialize};

/// One window's figures at one rate, per rep (librdkafka only).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Window {
    /// Messages handed to librdkafka per second in each rep's window.
    pub rate_achieved_per_s: Reps,
    pub ack_ms_p50: Reps,
    /// Send-to-ack p99 (librdkafka's own per-message latency, at the delivery report).
    pub ack_ms_p99: Reps,
    pub e2e_ms_p99: Reps,
    /// ProduceRequests per second (statistics `req.Produce`).
    pub produce_requests_per_s: Reps,
    /// Messages per ProduceRequest (statistics `batchcnt`; one partition per request).
    pub msgs_per_request: Reps,
    /// Requests awaiting a response on the connection (statistics `waitresp_cnt`, mean of
    /// the emits in the window).
    pub waiting_requests: Reps,
    /// Each broker connection (librdkafka keeps one per broker; the window is per
    /// connection). Empty when the statistics were not read per broker.
    #[serde(default)]
    pub connections: Vec<Connection>,
}

/// Both windows at one rate.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RatePair {
    pub rate_per_s: u64,
    /// max.in.flight=1000000 (librdkafka's default).
    pub default_window: Window,
    /// max.in.flight=5.
    pub window_5: Window,
}

/// Every rate measured with both windows at linger.ms=0.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Evidence {
    pub pairs: Vec<RatePair>,
}
