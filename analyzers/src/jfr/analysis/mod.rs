//! What a recording says, whatever it was read from: the aggregator both readers
//! feed (binary chunks and `jfr print --json` exports), the report, and the
//! diagnoses in the post's terms.
//!
//! [`aggregator`] collects the observations, [`finish`](Aggregator::finish) turns them
//! into the report ([`report`]'s types) and calls the catalogue's diagnoses
//! (`findings::diagnoses::jfr`), and [`render`] prints it.

pub(crate) mod aggregator;
mod finish;
mod iso8601;
mod render;
pub(crate) mod report;

pub(crate) use aggregator::{frame_name, Aggregator, SocketAcc, SocketSlots};
pub use report::{
    AllocRow, GcCollector, GcSummary, HotMethod, InputInfo, JfrReport, Jvm, LockRow, Recording,
    ReportOptions, SocketOp, SocketRow, ThreadCpu, TopStack, TypeCount,
};
