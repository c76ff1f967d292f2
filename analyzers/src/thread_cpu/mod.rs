//! `analyze-thread-cpu`: cores per thread over time, and which thread is the limit.
//!
//! The post's consumer story is a chain of saturated threads: the application thread calling
//! poll() once per message, then librdkafka's `rdk:broker*` thread at ~0.94 cores; on the
//! Java side one consumer thread at 0.95–0.98 cores, and at K=16 producers GC threads at
//! 4.79 cores. This module turns [`Snapshot`]s of `/proc/<pid>/task/*/stat` (live, or a saved
//! recording) into cores per thread per interval, keeps per-thread running aggregates and a
//! bounded timeline (memory does not follow the recording's length), finds threads that stay
//! saturated, and says what that means for each thread's role.
//!
//! [`snapshot`] reads what users paste instead of a recording (`top -H`, `ps -L`, `pidstat
//! -t`, gdb backtraces, JVM thread dumps); [`analyze_from`] tells the two apart by content.
//! The jobs, one file each: [`roles`](classify) from names and frames, the interval
//! analyzer, the report and its text, the diagnoses, recordings, live sampling, and the
//! [`stall`] watcher that speaks up when `--from` reads a FIFO nobody writes to.
//!
//! ```
//! use kgap_analyzers::thread_cpu::{Analyzer, Options, SnapshotIntervals, Source};
//! use kgap_analyzers::thread_cpu::threads::{Snapshot, ThreadTicks};
//!
//! let snap = |at_s: f64, ticks: u64| Snapshot {
//!     at_s,
//!     process_ticks: ticks,
//!     threads: vec![ThreadTicks { tid: 7, name: "rdk:broker1".into(), user_ticks: ticks, system_ticks: 0 }],
//! };
//! let mut intervals = SnapshotIntervals::new(100);
//! let mut analyzer = Analyzer::new(Options::default());
//! for s in 0..=4 {
//!     if let Some(iv) = intervals.push(snap(s as f64, 100 * s)) {
//!         analyzer.add(&iv).unwrap();
//!     }
//! }
//! let report = analyzer.finish(Source::Recording("example".into()), 100);
//! assert_eq!(report.saturated[0].name, "rdk:broker1");
//! assert_eq!(report.diagnoses[0].id, "rdk-broker-saturated");
//! ```

mod analyzer;
mod from;
mod recording;
mod render;
pub(crate) mod report;
pub(crate) mod roles;
mod sample;
pub mod snapshot;
pub mod stall;
#[cfg(test)]
mod tests;
pub mod threads;

pub use crate::findings::diagnoses::thread_cpu::entries::GC_DOMINATES_MIN_CORES;
pub use crate::findings::diagnoses::thread_cpu::recording::diagnose;
pub use analyzer::{Analyzer, IntervalCores, Options, SnapshotIntervals};
pub use from::{analyze_from, FromError, FromReport};
pub use recording::{
    read_recording, RecordingError, RecordingHeader, RecordingInfo, RecordingWriter,
};
pub use report::{
    CommandOutcome, GroupSummary, SaturatedThread, Source, ThreadCpuReport, ThreadSummary,
    TimelineRow,
};
pub use roles::{classify, classify_cut, classify_frames, collapse_name, ProcessKind, Role};
pub use sample::{sample, SampleError, SampleInfo, SampleOptions, Target};
