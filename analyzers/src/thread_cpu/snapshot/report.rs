//! The report of a paste: the documented `--json` contract of `--from` on a snapshot.

use serde::Serialize;

use super::format::{Figure, Format};
use crate::engine::input::InputSummary;
use crate::thread_cpu::report::Source;
use crate::thread_cpu::roles::{ProcessKind, Role};
use crate::vocab::report::{Diagnosis, ExampleLine};

/// A JVM thread as its last dump shows it.
#[derive(Debug, Clone, Serialize)]
pub struct JavaSummary {
    /// The whole name (`kafka-producer-network-thread | producer-1`).
    pub name: String,
    /// `java.lang.Thread.State` (RUNNABLE, BLOCKED, WAITING, …) when the dump has it.
    pub state: Option<String>,
    /// The header's own words (`runnable`, `waiting on condition`, …).
    pub os_state: String,
    /// Top frames, innermost first (`sun.nio.ch.EPoll.wait`).
    pub frames: Vec<String>,
    /// Locks it holds: `<0x…> (a class)`.
    pub locks_held: Vec<String>,
    /// The lock it waits for, and how (`waiting to lock`, `parking to wait for`, `waiting on`).
    pub waiting_for: Option<String>,
}

/// A native thread's backtraces.
#[derive(Debug, Clone, Serialize)]
pub struct BacktraceSummary {
    /// Backtraces of this thread in the paste.
    pub samples: u32,
    /// Of those, how many were inside a wait (poll, a condition variable, a sleep).
    pub waiting: u32,
    /// The last one's functions, innermost first.
    pub frames: Vec<String>,
}

/// One thread, from everything the paste says about it.
#[derive(Debug, Clone, Serialize)]
pub struct SnapshotThread {
    pub tid: i32,
    pub pid: Option<i32>,
    pub name: String,
    /// The name is cut (top's `+`, or the kernel's 15 bytes with no dump to complete it).
    pub name_cut: bool,
    pub role: Role,
    /// The name with its trailing number collapsed (`pool-1-thread-*`).
    pub group: String,
    /// Cores (1.0 = one core busy), of `figure`'s kind.
    pub cores_mean: Option<f64>,
    /// The busiest frame or report (interval figures).
    pub cores_max: Option<f64>,
    /// What `cores_mean` is a share of.
    pub figure: Option<Figure>,
    /// Seconds the figure covers, when known (the life, the gap between snapshots, the
    /// frames' intervals).
    pub over_s: Option<f64>,
    /// Frames or reports this thread is in (interval figures).
    pub iterations: u32,
    /// Of those, at or above the threshold.
    pub iterations_at_threshold: u32,
    /// Cores per listed iteration (null: not in it), aligned with the report's `iterations`.
    pub per_iteration: Vec<Option<f64>>,
    /// The other figures the paste gives for it.
    pub lifetime_cores: Option<f64>,
    pub between_snapshots_cores: Option<f64>,
    /// Cumulative CPU seconds and seconds alive, as last seen.
    pub cpu_s: Option<f64>,
    pub elapsed_s: Option<f64>,
    /// The tool's state letter (R, S, D) or the JVM's state.
    pub state: Option<String>,
    /// The process command line (`ps -f`), when no name is known.
    pub command: Option<String>,
    pub backtrace: Option<BacktraceSummary>,
    pub java: Option<JavaSummary>,
    pub sources: Vec<Format>,
    /// The paste's lines about it (the first few).
    #[serde(skip)]
    pub evidence: Vec<ExampleLine>,
    pub first_line: u64,
}

impl SnapshotThread {
    /// Cores that say how busy it is (not a since-boot share).
    pub fn rate(&self) -> Option<f64> {
        match self.figure {
            Some(f) if f.is_a_rate() => self.cores_mean,
            _ => None,
        }
    }
}

/// A part of the paste, as read.
#[derive(Debug, Clone, Serialize)]
pub struct Section {
    pub format: Format,
    pub first_line: u64,
    pub last_line: u64,
    /// Tables, backtraces or dumps in this part.
    pub parts: u32,
    /// Thread rows, backtraces or dump entries.
    pub threads: u32,
    pub figure: Option<Figure>,
}

/// One top frame or pidstat report.
#[derive(Debug, Clone, Serialize)]
pub struct Iteration {
    pub format: Format,
    pub line: u64,
    /// `HH:MM:SS` as the tool printed it.
    pub clock: Option<String>,
    /// Seconds since the previous one (top's delay), or the report's interval (pidstat).
    pub over_s: Option<f64>,
    /// The process's cores: pidstat's process row, else the sum of the thread rows.
    pub process_cores: f64,
}

/// Cores of one role (threads with a rate only).
#[derive(Debug, Clone, Serialize)]
pub struct RoleCores {
    pub role: Role,
    pub threads: usize,
    pub cores: f64,
}

/// The report of a paste: the documented `--json` contract of `--from` on a snapshot.
#[derive(Debug, Clone, Serialize)]
pub struct SnapshotReport {
    pub source: Source,
    /// Always "snapshot" (a recording's report has no such field).
    pub kind: &'static str,
    pub input: InputSummary,
    pub lines_read: u64,
    /// Lines that were neither a table, a backtrace nor a dump (prose, prompts, headers).
    pub lines_skipped: u64,
    pub sections: Vec<Section>,
    pub process_kind: ProcessKind,
    /// Process ids the paste names (none: one process whose id the paste does not say).
    pub pids: Vec<i32>,
    pub saturated_cores: f64,
    /// Busiest first (threads with no CPU figure last, by tid).
    pub threads: Vec<SnapshotThread>,
    pub roles: Vec<RoleCores>,
    /// Threads at or above `saturated_cores`.
    pub saturated: Vec<SnapshotThread>,
    pub iterations: Vec<Iteration>,
    /// Iterations beyond the listed ones (their figures are in the means).
    pub iterations_not_listed: u64,
    pub diagnoses: Vec<Diagnosis>,
    pub warnings: Vec<String>,
    #[serde(skip)]
    pub top: usize,
}
