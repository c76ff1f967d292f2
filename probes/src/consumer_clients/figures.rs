//! One run's figures, either client's, and the cores of its threads by role.

use crate::kit::instances::InstanceFigures;
use serde::Serialize;

/// Cores of the threads of one role over the window, one value per thread, busiest first.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct RoleCores {
    /// librdkafka: app, rdk:broker, rdk:main, other; Java: poll, background, heartbeat,
    /// other (Java threads), jvm (the rest of the JVM's CPU: GC, compiler, VM).
    pub role: String,
    pub cores: Vec<f64>,
}

/// One run's figures, either client.
#[derive(Debug, Clone, Serialize)]
pub struct Figures {
    /// Messages of all instances inside the window.
    pub messages: u64,
    pub window_s: f64,
    /// All instances together.
    pub msgs_per_s: f64,
    pub mb_per_s: f64,
    /// The client process's cores (librdkafka's embedded mock excluded).
    pub process_cores: f64,
    pub cpu_s_per_million: f64,
    /// Busy cores of the whole machine over the window (every process, the broker too).
    pub machine_busy_cores: Option<f64>,
    pub threads: Vec<RoleCores>,
    pub per_instance: Vec<InstanceFigures>,
    /// Messages per full second of the window (librdkafka runs).
    pub timeline: Vec<u64>,
    /// Java: GC time in the window.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gc_time_ms: Option<u64>,
}

impl Figures {
    /// The cores of a role's threads, busiest first (empty when none ran).
    pub fn role(&self, role: &str) -> &[f64] {
        self.threads
            .iter()
            .find(|r| r.role == role)
            .map_or(&[], |r| r.cores.as_slice())
    }

    /// The busiest thread of a role (0 when none ran).
    pub fn busiest(&self, role: &str) -> f64 {
        self.role(role).first().copied().unwrap_or(0.0)
    }

    /// The least busy of a role's `k` busiest threads: each of K instances' (0 when fewer
    /// than `k` ran).
    pub fn kth(&self, role: &str, k: usize) -> f64 {
        self.role(role)
            .get(k.saturating_sub(1))
            .copied()
            .unwrap_or(0.0)
    }

    /// The busiest thread of any role other than those listed, and its cores.
    pub fn busiest_other(&self, skip: &[&str]) -> (String, f64) {
        self.threads
            .iter()
            .filter(|r| !skip.contains(&r.role.as_str()))
            .filter_map(|r| r.cores.first().map(|c| (r.role.clone(), *c)))
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .unwrap_or_else(|| ("no other thread".into(), 0.0))
    }
}
