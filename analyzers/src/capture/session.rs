//! The capture's seconds: analyze-thread-cpu's live sampler reads `/proc/PID/task/*/stat`
//! each interval and, at each of its samples, this records the snapshot (thread names
//! completed from the JVM's thread dump, by tid), the memory figures and the TCP
//! connections, and from each two samples the busiest threads: early (the first interval)
//! and at the middle it hands them to the caller, for native stacks (and, at the middle, the
//! second thread dump). Ctrl-C stops it at the next sample.

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use super::busiest::{self, Point, STACKED_THREADS};
use super::memory::{self, Memory, MemorySummary};
use super::sockets::{self, Connections};
use crate::thread_cpu::threads::{self, Snapshot};
use crate::thread_cpu::{
    sample, Analyzer, Options as CpuOptions, RecordingHeader, RecordingWriter, SampleError,
    SampleOptions, Target,
};

/// Where the seconds go.
pub struct Files {
    pub threads: File,
    pub memory: File,
    pub sockets: File,
}

/// What the seconds gave.
pub struct Seconds {
    /// Why they ended: `--duration reached`, `the process exited`, `interrupted`.
    pub ended: String,
    pub captured_s: f64,
    pub memory: Option<MemorySummary>,
    pub connections: Connections,
    /// The thread names of the last sample (`comm`, or the JVM's full name), by tid.
    pub last_threads: Vec<(i32, String)>,
    /// The busiest threads over the last interval: the end's point.
    pub last_point: Option<Point>,
    pub problems: Vec<String>,
}

/// Samples `pid` for `duration`, every `interval`. `names` completes the kernel's 15-byte
/// thread names; `at_point` runs early (at the first interval's end) and at the middle (the
/// first sample past half the duration), with the busiest threads of the interval.
pub fn run(
    pid: i32,
    duration: Duration,
    interval: Duration,
    files: Files,
    names: &HashMap<i32, String>,
    stop: &AtomicBool,
    at_point: &mut dyn FnMut(&Point),
) -> io::Result<Seconds> {
    let header = RecordingHeader {
        recording: "kgap-thread-cpu".into(),
        version: 1,
        ticks_per_s: threads::ticks_per_second(),
        interval_ms: interval.as_millis() as u64,
        pid: Some(pid),
        command: None,
    };
    let mut rec = RecordingWriter::new(BufWriter::new(files.threads), &header)?;
    let mut mem_csv = BufWriter::new(files.memory);
    writeln!(mem_csv, "{}", memory::CSV_HEADER)?;
    let mut sock_csv = BufWriter::new(files.sockets);
    writeln!(sock_csv, "{}", sockets::CSV_HEADER)?;
    let mut mem = Memory::default();
    let mut mem_seen = false;
    let mut connections = Connections::default();
    let mut problems = Vec::new();
    let mut last_threads = Vec::new();
    let mut last_at = 0.0f64;
    let mut middle_done = false;
    let mut early_done = false;
    let mut previous: Option<Snapshot> = None;
    let mut last_point = None;
    let ticks = header.ticks_per_s;
    let half = duration.as_secs_f64() / 2.0;
    let mut on_snapshot = |s: &Snapshot| -> io::Result<()> {
        let mut named = s.clone();
        for t in &mut named.threads {
            if let Some(n) = names.get(&t.tid) {
                t.name = n.clone();
            }
        }
        rec.write(&named)?;
        last_threads = named
            .threads
            .iter()
            .map(|t| (t.tid, t.name.clone()))
            .collect();
        last_at = s.at_s;
        if let Ok(m) = memory::sample(pid, s.at_s) {
            memory::write_row(&mut mem_csv, &m)?;
            mem.add(&m);
            mem_seen = true;
        }
        match sockets::sample(pid) {
            Ok(rows) => {
                sockets::write_rows(&mut sock_csv, s.at_s, &rows)?;
                rows.iter().for_each(|r| connections.add(r));
            }
            Err(e) if problems.is_empty() => {
                problems.push(format!("TCP connections not read: {e} (ss is in iproute2)"))
            }
            Err(_) => {}
        }
        if let Some(p) = &previous {
            let cores = threads::cores_between(p, &named, ticks);
            let mut point = Point {
                label: "early",
                at_s: s.at_s,
                busiest: busiest::busiest(&cores, STACKED_THREADS),
                threads: cores.len(),
                interval_s: s.at_s - p.at_s,
            };
            if !middle_done && s.at_s >= half && early_done {
                middle_done = true;
                point.label = "middle";
                at_point(&point);
            } else if !early_done {
                early_done = true;
                at_point(&point);
            }
            last_point = Some(point);
        }
        previous = Some(named);
        if stop.load(Ordering::SeqCst) {
            return Err(io::Error::new(io::ErrorKind::Interrupted, "interrupted"));
        }
        Ok(())
    };
    let opts = SampleOptions {
        interval,
        duration: Some(duration),
    };
    let mut analyzer = Analyzer::new(CpuOptions::default());
    let result = sample(&Target::Pid(pid), &opts, &mut analyzer, &mut on_snapshot);
    drop(on_snapshot);
    let ended = match result {
        Ok(info) => info.ended,
        Err(SampleError::Io(e)) if e.kind() == io::ErrorKind::Interrupted => {
            "interrupted".to_string()
        }
        Err(SampleError::NoSuchPid(_)) => "the process exited".to_string(),
        Err(e) => return Err(io::Error::other(e.to_string())),
    };
    Ok(Seconds {
        ended,
        captured_s: last_at,
        memory: mem_seen.then(|| mem.finish()),
        connections,
        last_threads,
        last_point,
        problems,
    })
}
