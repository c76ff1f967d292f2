//! One run's figures: the companion's window and the socket calls of its JFR recording; the
//! sweep's evidence for the two catalogue rules, each from its own side's pairs.

use super::options::JavaSocketBuffers;
use super::point::{Buffer, Side};
use crate::kit::error::{ProbeError, Result};
use crate::kit::java::CompanionResult;
use crate::kit::measure::round3;
use crate::kit::{Measured, Sweep};
use kgap_analyzers::findings::{java_receive_buffer as receive, java_send_buffer as send};
use kgap_analyzers::jfr::{analyze_jfr, JfrReport, ReportOptions, SocketOp};
use serde::Serialize;
use std::path::Path;

/// One run's figures.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Figures {
    /// The producer run's own topic (the consumer reads a prefilled one, in `topics`).
    pub topic: Option<String>,
    pub messages: u64,
    pub window_s: f64,
    pub msgs_per_s: f64,
    pub mb_per_s: f64,
    pub process_cpu_s: f64,
    pub gc_time_ms: u64,
    /// The measured direction's socket calls (writes for the producer, reads for the
    /// consumer) of the busiest thread in the window: its name, count, per second, bytes per
    /// call (mean, p50, max), MB in all.
    pub socket_thread: Option<String>,
    pub socket_calls: u64,
    pub socket_calls_per_s: f64,
    pub bytes_per_call_mean: f64,
    pub bytes_per_call_p50: u64,
    pub bytes_per_call_max: u64,
    pub socket_mb: f64,
    /// produce: bytes per ProduceRequest (kafka-clients' records-per-request-avg × wire bytes
    /// per record), the writes one takes at the median write, and the bytes the JDK copies
    /// for it as a multiple of the request (the post: 22 writes, 11x).
    pub request_bytes: Option<f64>,
    pub writes_per_request: Option<u64>,
    pub tail_copy_factor: Option<f64>,
    /// produce: CPU of the producer's network thread over the window, in cores.
    pub network_thread_cores: Option<f64>,
    /// consume: CPU of the thread that calls poll() (and reads the socket), in cores.
    pub poll_thread_cores: Option<f64>,
}

/// Reads a window recording with kgap's native JFR reader.
pub fn read_jfr(path: &Path) -> Result<JfrReport> {
    let f = std::fs::File::open(path)
        .map_err(|e| ProbeError::io(format!("reading {}", path.display()), e))?;
    analyze_jfr(f, &path.display().to_string(), &ReportOptions::default())
        .map_err(|e| ProbeError::Kafka(format!("reading {}: {e}", path.display())))
}

/// Cores from a CPU time the companion reported over `seconds` (-1: the JVM could not tell).
fn cores(cpu_s: Option<f64>, seconds: f64) -> Option<f64> {
    cpu_s
        .filter(|c| *c >= 0.0 && seconds > 0.0)
        .map(|c| round3(c / seconds))
}

/// The run's figures: the busiest thread's calls in the measured direction (none counted
/// without a recording, `--no-recording`).
pub fn figures(
    r: &CompanionResult,
    jfr: Option<&JfrReport>,
    side: Side,
    topic: Option<String>,
) -> Figures {
    let op = match side {
        Side::Produce => SocketOp::Write,
        Side::Consume => SocketOp::Read,
    };
    let row = jfr
        .iter()
        .flat_map(|j| j.socket.iter())
        .filter(|s| s.op == op)
        .max_by_key(|s| s.bytes_total);
    let secs = if r.seconds > 0.0 { r.seconds } else { 1.0 };
    let p50 = row.map_or(0, |s| s.bytes_p50);
    let request_bytes = match (
        r.records_per_request_avg,
        r.wire_bytes_window,
        r.records_sent_window,
    ) {
        (Some(per), Some(wire), Some(records)) if per > 0.0 && records > 0 => {
            Some(round3(per * wire as f64 / records as f64))
        }
        _ => None,
    }
    .filter(|_| side == Side::Produce);
    let tail = request_bytes
        .filter(|_| p50 > 0)
        .map(|req| (send::tail_copy(req, p50 as f64), req));
    Figures {
        topic,
        messages: r.messages,
        window_s: r.seconds,
        msgs_per_s: r.msgs_per_s,
        mb_per_s: r.mb_per_s,
        process_cpu_s: r.process_cpu_s,
        gc_time_ms: r.gc_time_ms,
        socket_thread: row.and_then(|s| s.thread.clone()),
        socket_calls: row.map_or(0, |s| s.count),
        socket_calls_per_s: round3(row.map_or(0, |s| s.count) as f64 / secs),
        bytes_per_call_mean: row
            .filter(|s| s.count > 0)
            .map_or(0.0, |s| round3(s.bytes_total as f64 / s.count as f64)),
        bytes_per_call_p50: p50,
        bytes_per_call_max: row.map_or(0, |s| s.bytes_max),
        socket_mb: row.map_or(0.0, |s| round3(s.bytes_total as f64 / 1e6)),
        request_bytes,
        writes_per_request: tail.map(|((w, _), _)| w),
        tail_copy_factor: tail.map(|((_, copied), req)| round3(copied / req)),
        network_thread_cores: cores(r.network_thread_cpu_s, r.seconds)
            .filter(|_| side == Side::Produce),
        poll_thread_cores: cores(r.poll_thread_cpu_s, r.seconds).filter(|_| side == Side::Consume),
    }
}

/// The measured pairs of one side: (size, fixed buffer, -1), in size order.
fn pairs<'a>(
    sweep: &'a Sweep<JavaSocketBuffers>,
    side: Side,
) -> Vec<(
    u64,
    Measured<'a, JavaSocketBuffers>,
    Measured<'a, JavaSocketBuffers>,
)> {
    let of = |buffer: Buffer| {
        sweep
            .measured()
            .filter(move |m| m.point.side == side && m.point.buffer == buffer)
    };
    let mut v: Vec<_> = of(Buffer::Fixed)
        .filter_map(|fixed| {
            of(Buffer::Os)
                .find(|os| os.point.size_bytes == fixed.point.size_bytes)
                .map(|os| (fixed.point.size_bytes, fixed, os))
        })
        .collect();
    v.sort_by_key(|p| p.0);
    v
}

/// java-send-buffer's evidence: the producer's write pairs, nothing of the consumer's.
pub fn send_evidence(sweep: &Sweep<JavaSocketBuffers>) -> send::Evidence {
    let bytes = |f: &Figures| f.bytes_per_call_p50 as f64;
    send::Evidence {
        pairs: pairs(sweep, Side::Produce)
            .into_iter()
            .map(|(size, fixed, os)| send::WritePair {
                batch_size_bytes: size,
                send_buffer_bytes: send::DEFAULT_SEND_BUFFER_BYTES,
                fixed_write_bytes_p50: fixed.reps(bytes),
                fixed_request_bytes: fixed.reps_of(|f| f.request_bytes),
                fixed_msgs_per_s: fixed.reps(|f| f.msgs_per_s),
                os_write_bytes_p50: os.reps(bytes),
                os_msgs_per_s: os.reps(|f| f.msgs_per_s),
                fixed_network_thread_cores: fixed.reps_of(|f| f.network_thread_cores),
                os_network_thread_cores: os.reps_of(|f| f.network_thread_cores),
            })
            .collect(),
    }
}

/// The JVM's cores over the window (None when the companion could not tell).
fn process_cores(f: &Figures) -> Option<f64> {
    (f.process_cpu_s > 0.0 && f.window_s > 0.0).then(|| round3(f.process_cpu_s / f.window_s))
}

/// java-receive-buffer's evidence: the consumer's read pairs, nothing of the producer's.
pub fn receive_evidence(sweep: &Sweep<JavaSocketBuffers>) -> receive::Evidence {
    let bytes = |f: &Figures| f.bytes_per_call_p50 as f64;
    receive::Evidence {
        pairs: pairs(sweep, Side::Consume)
            .into_iter()
            .map(|(size, fixed, os)| receive::ReadPair {
                record_bytes: size,
                receive_buffer_bytes: receive::DEFAULT_RECEIVE_BUFFER_BYTES,
                fixed_read_bytes_p50: fixed.reps(bytes),
                fixed_poll_thread_cores: fixed.reps_of(|f| f.poll_thread_cores),
                fixed_process_cores: fixed.reps_of(process_cores),
                fixed_msgs_per_s: fixed.reps(|f| f.msgs_per_s),
                os_read_bytes_p50: os.reps(bytes),
                os_poll_thread_cores: os.reps_of(|f| f.poll_thread_cores),
                os_msgs_per_s: os.reps(|f| f.msgs_per_s),
            })
            .collect(),
    }
}
