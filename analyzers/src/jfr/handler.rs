//! The event types the report reads, by their names in the metadata.

use super::analysis::SocketOp;

/// The event types the report reads.
#[derive(Debug, Clone, Copy)]
pub(super) enum Handler {
    ThreadCpu,
    Socket(SocketOp),
    Sample,
    Gc,
    HeapSummary,
    AllocSample,
    AllocTlab,
    AllocOutsideTlab,
    MonitorEnter,
    JvmInfo,
    CpuInfo,
}

pub(super) fn handler(name: &str) -> Option<Handler> {
    Some(match name {
        "jdk.ThreadCPULoad" => Handler::ThreadCpu,
        "jdk.SocketRead" => Handler::Socket(SocketOp::Read),
        "jdk.SocketWrite" => Handler::Socket(SocketOp::Write),
        "jdk.ExecutionSample" => Handler::Sample,
        "jdk.GarbageCollection" => Handler::Gc,
        "jdk.GCHeapSummary" => Handler::HeapSummary,
        "jdk.ObjectAllocationSample" => Handler::AllocSample,
        "jdk.ObjectAllocationInNewTLAB" => Handler::AllocTlab,
        "jdk.ObjectAllocationOutsideTLAB" => Handler::AllocOutsideTlab,
        "jdk.JavaMonitorEnter" => Handler::MonitorEnter,
        "jdk.JVMInformation" => Handler::JvmInfo,
        "jdk.CPUInformation" => Handler::CpuInfo,
        _ => return None,
    })
}
