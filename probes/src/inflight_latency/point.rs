//! One point of the sweep: a paced rate, linger.ms and max.in.flight, and how a window is named.

use kgap_analyzers::findings::inflight_latency::DEFAULT_WINDOW;
use serde::Serialize;

/// One point: a paced rate, linger.ms and max.in.flight.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
pub struct Point {
    pub rate_per_s: u64,
    #[serde(rename = "linger.ms")]
    pub linger_ms: u64,
    #[serde(rename = "max.in.flight.requests.per.connection")]
    pub max_in_flight: u64,
}

/// `default` for librdkafka's default window, else the number.
pub fn window_label(max_in_flight: u64) -> String {
    if max_in_flight == DEFAULT_WINDOW {
        "default".into()
    } else {
        max_in_flight.to_string()
    }
}
