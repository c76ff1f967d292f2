//! The report of a recording or a live run: the documented `--json` contract.

use std::collections::HashMap;

use serde::Serialize;

use super::roles::{ProcessKind, Role};
use crate::vocab::report::Diagnosis;

/// Where the samples came from.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    Pid(i32),
    Command(Vec<String>),
    Recording(String),
    /// A paste of thread snapshots (top, ps, pidstat, gdb, jstack).
    Snapshot(String),
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Source::Pid(p) => write!(f, "pid {p}"),
            Source::Command(argv) => {
                let quoted: Vec<String> = argv
                    .iter()
                    .map(|a| {
                        if !a.is_empty()
                            && a.chars()
                                .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c))
                        {
                            a.clone()
                        } else {
                            format!("'{}'", a.replace('\'', "'\\''"))
                        }
                    })
                    .collect();
                write!(f, "command `{}`", quoted.join(" "))
            }
            Source::Recording(n) => write!(f, "recording {n}"),
            Source::Snapshot(n) => write!(f, "snapshot {n}"),
        }
    }
}

/// One thread over the whole run.
#[derive(Debug, Clone, Serialize)]
pub struct ThreadSummary {
    pub tid: i32,
    pub name: String,
    pub role: Role,
    /// The name with its trailing number collapsed (`pool-1-thread-*`).
    pub group: String,
    /// CPU seconds over the seconds the thread was seen (its lifetime within the run).
    pub cores_mean: f64,
    /// Busiest interval.
    pub cores_max: f64,
    /// User time / all CPU time (None for an idle thread).
    pub user_share: Option<f64>,
    pub cpu_s: f64,
    /// Seconds the thread was seen.
    pub seconds: f64,
    /// When it was first seen (seconds since the first sample).
    pub first_s: f64,
    /// Longest run at or above the saturation threshold.
    pub longest_saturated_s: f64,
}

/// Threads of one collapsed name and role.
#[derive(Debug, Clone, Serialize)]
pub struct GroupSummary {
    pub group: String,
    pub role: Role,
    pub threads: usize,
    /// CPU seconds of all its threads over the run's duration (can exceed 1).
    pub cores_mean: f64,
    /// The busiest single thread's busiest interval.
    pub cores_max_one_thread: f64,
    pub cpu_s: f64,
}

/// A thread that stayed at or above the threshold long enough.
#[derive(Debug, Clone, Serialize)]
pub struct SaturatedThread {
    pub tid: i32,
    pub name: String,
    pub role: Role,
    /// Start of its longest saturated run.
    pub from_s: f64,
    /// Length of that run.
    pub seconds: f64,
    /// Mean cores during that run.
    pub cores_mean: f64,
    /// All seconds at or above the threshold.
    pub saturated_s_total: f64,
}

/// How a command that was run ended.
#[derive(Debug, Clone, Serialize)]
pub struct CommandOutcome {
    /// Exit code, when it exited normally.
    pub exit_code: Option<i32>,
    /// Signal that ended it (Unix), when it did not.
    pub signal: Option<i32>,
    /// Killed by analyze-thread-cpu when --duration ran out.
    pub killed_at_duration: bool,
}

/// One bucket of the bounded timeline (not in the JSON: use `--timeline FILE`).
#[derive(Debug, Clone)]
pub struct TimelineRow {
    pub start_s: f64,
    pub end_s: f64,
    pub process_cores: f64,
    pub cores: HashMap<i32, f64>,
}

/// The result of one run: the documented `--json` contract.
#[derive(Debug, Clone, Serialize)]
pub struct ThreadCpuReport {
    pub source: Source,
    /// Mean interval between samples.
    pub interval_ms: u64,
    /// First sample to last.
    pub duration_s: f64,
    pub intervals: u64,
    /// Clock ticks per second (CPU time resolution: 1/ticks_per_s seconds).
    pub ticks_per_s: u64,
    pub process_kind: ProcessKind,
    /// All threads, including those that exited during the run.
    pub process_cores_mean: Option<f64>,
    /// True when the process total is the sum of the listed threads (threads.csv input).
    pub process_cores_from_threads: bool,
    pub saturated_cores: f64,
    pub saturated_seconds: f64,
    /// Busiest first (by CPU seconds).
    pub threads: Vec<ThreadSummary>,
    /// The "by role" view: names with numbers collapsed, busiest first.
    pub groups: Vec<GroupSummary>,
    pub saturated: Vec<SaturatedThread>,
    pub diagnoses: Vec<Diagnosis>,
    pub command: Option<CommandOutcome>,
    /// Why sampling stopped.
    pub ended: String,
    /// Wall time spent reading /proc per sample (live runs only): the tool's own cost.
    pub sampling_ms_per_sample: Option<f64>,
    pub warnings: Vec<String>,
    #[serde(skip)]
    pub timeline: Vec<TimelineRow>,
    #[serde(skip)]
    pub top: usize,
}
