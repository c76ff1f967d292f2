//! One run's figures: the consumer's, and each broker connection's from the statistics emits
//! of the run's window.

use crate::kit::broker_figures::BrokerFigures;
use crate::kit::consumer_figures::ConsumerFigures;
use serde::Serialize;
use std::path::Path;

/// One run's figures: the consumer's, and each broker connection's from its statistics
/// (Fetch requests/s, rtt, requests waiting, the rdk:broker<id> thread). Derefs to the
/// consumer's figures; the JSON keeps them flat, `brokers` beside.
#[derive(Debug, Clone, Serialize)]
pub struct Figures {
    #[serde(flatten)]
    pub consumer: ConsumerFigures,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub brokers: Vec<BrokerFigures>,
}

impl std::ops::Deref for Figures {
    type Target = ConsumerFigures;
    fn deref(&self) -> &ConsumerFigures {
        &self.consumer
    }
}

/// The statistics emits of a consumer run's window (wall clock `time`, whole seconds: the
/// span is the window give or take a second).
pub(super) fn window_emits(
    path: &Path,
    start_wall_s: f64,
    end_wall_s: f64,
) -> Vec<kgap_analyzers::stats::Stats> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Vec::new();
    };
    let (a, b) = (start_wall_s.floor() as i64, end_wall_s.ceil() as i64);
    text.lines()
        .filter_map(|l| kgap_analyzers::stats::parse(l.as_bytes()).ok())
        .filter(|s| s.time >= a && s.time <= b)
        .collect()
}
