//! The report of analyze-jfr (the documented JSON contract), its rows, what was read,
//! and the options it is made with.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::json;

use crate::vocab::report::Diagnosis;

/// Socket operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SocketOp {
    Read,
    Write,
}

impl SocketOp {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            SocketOp::Read => "read",
            SocketOp::Write => "write",
        }
    }
}

/// Events of one type.
#[derive(Debug, Clone, Default, Serialize)]
pub struct TypeCount {
    pub count: u64,
    pub bytes: u64,
}

/// The JVM that wrote the recording (jdk.JVMInformation).
#[derive(Debug, Clone, Default, Serialize)]
pub struct Jvm {
    pub name: String,
    pub version: String,
    pub arguments: String,
    pub java_arguments: String,
}

/// Options of the report.
#[derive(Debug, Clone)]
pub struct ReportOptions {
    /// Rows in the hot-method, allocation and lock tables.
    pub top: usize,
    /// Frames shown per top stack.
    pub stack_depth: usize,
}

impl Default for ReportOptions {
    fn default() -> Self {
        ReportOptions {
            top: 15,
            stack_depth: 12,
        }
    }
}

/// What was read.
#[derive(Debug, Clone, Default, Serialize)]
pub struct InputInfo {
    /// The name shown for the input.
    pub name: String,
    /// "jfr" (binary recording) or "jfr-json" (`jfr print --json`).
    pub format: String,
    /// JFR format version(s) of the chunks, e.g. "2.1".
    pub version: Option<String>,
    pub bytes: u64,
    pub chunks: u64,
    /// What could not be read, in words (empty when everything was).
    pub problems: Vec<String>,
    /// Where the input ends early (a chunk cut short, a header cut off, an export not read to
    /// its end): what was lost may hold any event, so no absence is evidence.
    pub cut_at_byte: Option<u64>,
}

/// The report of analyze-jfr: the documented JSON contract.
#[derive(Debug, Clone, Serialize)]
pub struct JfrReport {
    pub input: InputInfo,
    pub recording: Recording,
    pub jvm: Option<Jvm>,
    /// Hardware threads of the machine (jdk.CPUInformation): turns JFR's CPU
    /// loads (fractions of the machine) into cores.
    pub hw_threads: Option<u64>,
    pub threads: Vec<ThreadCpu>,
    pub socket: Vec<SocketRow>,
    pub socket_by_address: Vec<SocketRow>,
    /// Execution samples read.
    pub samples: u64,
    pub hot_methods: Vec<HotMethod>,
    pub top_stacks: Vec<TopStack>,
    pub gc: Option<GcSummary>,
    /// The event type allocation rows come from.
    pub allocation_source: Option<&'static str>,
    pub allocation: Vec<AllocRow>,
    pub locks: Vec<LockRow>,
    pub diagnoses: Vec<Diagnosis>,
    /// Count and bytes per event type (`--events` prints this).
    #[serde(skip)]
    pub event_types: BTreeMap<String, TypeCount>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Recording {
    /// Start (UTC, ISO 8601).
    pub start: Option<String>,
    pub start_epoch_s: Option<f64>,
    pub duration_s: f64,
    /// Events read, metadata and checkpoints included.
    pub events: u64,
}

/// CPU of one thread (jdk.ThreadCPULoad, user + system, as fractions of the
/// whole machine the way JFR reports them; `cores_*` multiply by hw_threads).
#[derive(Debug, Clone, Serialize)]
pub struct ThreadCpu {
    pub name: String,
    pub cpu_mean: f64,
    pub cpu_max: f64,
    pub user_mean: f64,
    pub system_mean: f64,
    pub cores_mean: Option<f64>,
    pub cores_max: Option<f64>,
    /// jdk.ThreadCPULoad events for the thread.
    pub measurements: u64,
    /// Execution samples of the thread.
    pub samples: u64,
}

/// Socket reads or writes of one thread (`thread`) or one remote address (`address`).
#[derive(Debug, Clone, Serialize)]
pub struct SocketRow {
    pub op: SocketOp,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thread: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub address: Option<String>,
    pub count: u64,
    pub bytes_total: u64,
    pub bytes_p50: u64,
    pub bytes_p90: u64,
    pub bytes_max: u64,
    /// Mean over the recording.
    pub ops_per_s: f64,
    pub mb_per_s: f64,
    /// Share of operations within 10% of the largest.
    pub near_max_share: f64,
    /// Time inside the operations (sum of event durations).
    pub time_ms: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct HotMethod {
    pub frame: String,
    /// Samples with this frame on top.
    pub self_samples: u64,
    /// Samples with this frame anywhere in the stack.
    pub total_samples: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct TopStack {
    pub samples: u64,
    /// Top frame first.
    pub frames: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct GcSummary {
    pub collections: u64,
    pub pause_total_ms: f64,
    pub pause_p50_ms: f64,
    pub pause_max_ms: f64,
    /// Pause time over the recording's span.
    pub pause_share: f64,
    /// Null when the recording has no heap summary after a GC (jdk.GCHeapSummary).
    pub heap_after_gc_p50_mb: Option<f64>,
    pub heap_after_gc_max_mb: Option<f64>,
    /// Null when no heap summary said what was committed.
    pub heap_committed_max_mb: Option<f64>,
    pub by_collector: Vec<GcCollector>,
}

#[derive(Debug, Clone, Serialize)]
pub struct GcCollector {
    pub name: String,
    pub count: u64,
    pub pause_total_ms: f64,
    pub longest_pause_ms: f64,
    pub causes: BTreeMap<String, u64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct AllocRow {
    pub class: String,
    pub samples: u64,
    /// Bytes the samples stand for (ObjectAllocationSample's weight; TLAB size
    /// or object size for async-profiler's events).
    pub weight_bytes: u64,
    pub share: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct LockRow {
    pub class: String,
    pub count: u64,
    pub total_ms: f64,
    pub max_ms: f64,
}

impl JfrReport {
    /// Anything to report: at least one event was read.
    pub fn is_usable(&self) -> bool {
        self.recording.events > 0
    }

    /// `--events --json`: event type → count.
    pub fn events_json(&self) -> serde_json::Value {
        let events: serde_json::Map<String, serde_json::Value> = self
            .event_types
            .iter()
            .map(|(k, v)| (k.clone(), json!(v.count)))
            .collect();
        let bytes: serde_json::Map<String, serde_json::Value> = self
            .event_types
            .iter()
            .map(|(k, v)| (k.clone(), json!(v.bytes)))
            .collect();
        json!({ "input": self.input, "events": events, "bytes": bytes })
    }
}
