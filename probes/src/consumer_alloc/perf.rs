//! The share of CPU samples in malloc/free and memcpy, from `perf record` on the probe's own
//! process over the measured window (the postmortem's flame graph: 38% in the allocator,
//! 20% in memcpy). Where `perf` is missing or refused, the figures say "not measured".

use serde::Serialize;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// Sampling frequency: enough samples in a few seconds, little cost on 2 cores.
pub const FREQ_HZ: u32 = 499;

/// What perf saw in the window.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct PerfShares {
    /// Samples on the pipeline's threads (`kgap-proc-*`, `kgap-writer`).
    pub pipeline_samples: u64,
    /// Percent of the pipeline threads' samples in the allocator (malloc, free, realloc,
    /// mimalloc's `mi_*`, glibc's `_int_*`, the counting wrapper).
    pub pipeline_alloc_pct: f64,
    /// Percent of the pipeline threads' samples in memcpy/memmove.
    pub pipeline_memcpy_pct: f64,
    /// The same over every thread of the process (librdkafka's, the mock's).
    pub process_samples: u64,
    pub process_alloc_pct: f64,
    pub process_memcpy_pct: f64,
}

/// A running `perf record` on this process.
pub struct Recording {
    /// None once stopped.
    child: Option<Child>,
    data: PathBuf,
}

impl Drop for Recording {
    /// A run that ends early (Ctrl-C, an error) stops its perf too.
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            unsafe { libc::kill(c.id() as i32, libc::SIGINT) };
            let _ = c.wait();
        }
    }
}

/// Starts sampling this process into `dir/perf.data` (before the warmup: attaching takes a
/// moment); the reason when it cannot.
pub fn start(dir: &Path) -> Result<Recording, String> {
    let data = dir.join("perf.data");
    let child = Command::new("perf")
        // CLOCK_MONOTONIC timestamps, so the report can cut the window by the probe's edges.
        .args([
            "record",
            "-q",
            "-k",
            "mono",
            "-e",
            "cpu-clock",
            "-F",
            &FREQ_HZ.to_string(),
            "-p",
        ])
        .arg(std::process::id().to_string())
        .arg("-o")
        .arg(&data)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("perf could not be started: {e}"))?;
    Ok(Recording {
        child: Some(child),
        data,
    })
}

impl Recording {
    /// Whether perf has attached (its data file has begun).
    pub fn ready(&self) -> bool {
        std::fs::metadata(&self.data).is_ok_and(|m| m.len() > 0)
    }

    /// Stops sampling (SIGINT, as Ctrl-C) and reads the shares of the samples between two
    /// CLOCK_MONOTONIC instants (µs): the measured window.
    pub fn finish(mut self, window_mono_us: (i64, i64)) -> Result<PerfShares, String> {
        let time = format!(
            "{:.6},{:.6}",
            window_mono_us.0 as f64 / 1e6,
            window_mono_us.1 as f64 / 1e6
        );
        let child = self.child.take().ok_or("perf was already stopped")?;
        unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
        let out = child
            .wait_with_output()
            .map_err(|e| format!("perf record: {e}"))?;
        if !self.data.exists() {
            let err = String::from_utf8_lossy(&out.stderr);
            return Err(format!(
                "perf record wrote nothing: {}",
                err.lines().next().unwrap_or("no reason given")
            ));
        }
        let report = Command::new("perf")
            .args([
                "report",
                "--stdio",
                "--no-children",
                "-q",
                "--sort",
                "comm,sym",
                "--time",
            ])
            .arg(&time)
            .arg("-i")
            .arg(&self.data)
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output()
            .map_err(|e| format!("perf report: {e}"))?;
        let total = sample_count(&self.data, &time).unwrap_or(0);
        shares(&String::from_utf8_lossy(&report.stdout), total)
    }
}

/// Total samples: the report's sample-count column (`-n`) summed over pids.
fn sample_count(data: &Path, time: &str) -> Option<u64> {
    let out = Command::new("perf")
        .args([
            "report",
            "--stdio",
            "--no-children",
            "-q",
            "--sort",
            "pid",
            "-n",
            "--time",
        ])
        .arg(time)
        .arg("-i")
        .arg(data)
        .stderr(Stdio::null())
        .output()
        .ok()?;
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        .reduce(|a, b| a + b)
}

/// An allocator function, by its symbol.
pub fn is_alloc(sym: &str) -> bool {
    const EXACT: &[&str] = &[
        "malloc",
        "free",
        "realloc",
        "calloc",
        "cfree",
        "__libc_malloc",
        "__libc_free",
        "__libc_realloc",
        "__libc_calloc",
        "malloc_consolidate",
        "sysmalloc",
        "unlink_chunk",
        "tcache_get",
        "tcache_put",
        "__rust_alloc",
        "__rust_dealloc",
        "__rust_realloc",
        "__rdl_alloc",
        "__rdl_dealloc",
        "__rdl_realloc",
    ];
    EXACT.contains(&sym)
        || sym.starts_with("_int_")
        || sym.starts_with("mi_")
        || sym.starts_with("_mi_")
        || sym.starts_with("arena_")
        || sym.contains("alloc_count")
        || sym.contains("GlobalAlloc")
}

/// memcpy and memmove in any of glibc's variants.
pub fn is_memcpy(sym: &str) -> bool {
    let s = sym.trim_start_matches('_');
    s.starts_with("memcpy") || s.starts_with("memmove") || s.starts_with("mempcpy")
}

/// The pipeline's threads, by name.
pub fn is_pipeline_thread(comm: &str) -> bool {
    comm.starts_with("kgap-proc-") || comm == "kgap-writer"
}

/// Shares from `perf report --stdio --no-children -q --sort comm,sym` lines
/// (`  12.34%  kgap-proc-0  [.] _int_malloc`), `total` samples in all.
pub fn shares(report: &str, total: u64) -> Result<PerfShares, String> {
    let (mut pipe, mut pipe_alloc, mut pipe_copy) = (0.0, 0.0, 0.0);
    let (mut all, mut all_alloc, mut all_copy) = (0.0, 0.0, 0.0);
    for line in report.lines() {
        let mut it = line.split_whitespace();
        let Some(pct) = it
            .next()
            .and_then(|p| p.strip_suffix('%')?.parse::<f64>().ok())
        else {
            continue;
        };
        // comm may hold no spaces (thread names here do not); then `[.]` or `[k]`, the symbol.
        let Some(comm) = it.next() else { continue };
        let rest: Vec<&str> = it.collect();
        let sym = rest
            .iter()
            .position(|t| t.starts_with('[') && t.ends_with(']'))
            .map_or(String::new(), |i| rest[i + 1..].join(" "));
        let (a, c) = (is_alloc(&sym), is_memcpy(&sym));
        all += pct;
        all_alloc += if a { pct } else { 0.0 };
        all_copy += if c { pct } else { 0.0 };
        if is_pipeline_thread(comm) {
            pipe += pct;
            pipe_alloc += if a { pct } else { 0.0 };
            pipe_copy += if c { pct } else { 0.0 };
        }
    }
    if all <= 0.0 {
        return Err(
            "perf recorded no samples of this process inside the window (on a loaded \
                    machine it may attach late: give a longer window)"
                .into(),
        );
    }
    let of = |x: f64, whole: f64| {
        if whole > 0.0 {
            (x / whole * 1000.0).round() / 10.0
        } else {
            0.0
        }
    };
    Ok(PerfShares {
        pipeline_samples: (total as f64 * pipe / all).round() as u64,
        pipeline_alloc_pct: of(pipe_alloc, pipe),
        pipeline_memcpy_pct: of(pipe_copy, pipe),
        process_samples: total,
        process_alloc_pct: of(all_alloc, all),
        process_memcpy_pct: of(all_copy, all),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_split_pipeline_threads_from_the_rest() {
        let report = "\
    30.00%  kgap-proc-0  [.] _int_malloc
    10.00%  kgap-proc-0  [.] __memmove_avx_unaligned_erms
    10.00%  kgap-proc-1  [.] serde_json::de::something
    25.00%  rdk:broker1  [.] rd_kafka_msgset_reader
    25.00%  rdk:broker1  [.] free
";
        let s = shares(report, 1000).unwrap();
        assert_eq!(s.pipeline_alloc_pct, 60.0);
        assert_eq!(s.pipeline_memcpy_pct, 20.0);
        assert_eq!(s.pipeline_samples, 500);
        assert_eq!(s.process_alloc_pct, 55.0);
        assert_eq!(s.process_memcpy_pct, 10.0);
        assert!(shares("", 0).is_err());
        assert!(is_alloc("mi_free") && is_alloc("cfree") && !is_alloc("rd_kafka_q_pop"));
    }
}
