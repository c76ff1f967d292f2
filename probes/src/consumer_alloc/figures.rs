//! One run's figures: what a variant on an allocator cost per record.

use super::perf::PerfShares;
use crate::kit::measure::{round3, ThreadFigure};
use serde::Serialize;

/// One run of one variant on one allocator.
#[derive(Debug, Clone, Serialize)]
pub struct Figures {
    /// Records processed inside the window (after a 10% warmup).
    pub records: u64,
    pub window_s: f64,
    pub msgs_per_s: f64,
    /// The target input rate (--rate), None when unpaced.
    pub rate_per_s: Option<u64>,
    /// Whether the counting allocator was installed (it is in the probe's binary); when not,
    /// the allocation figures are absent.
    pub allocations_counted: bool,
    /// Heap allocations per record on the pipeline's threads (processing and writer).
    pub allocations_per_record: Option<f64>,
    /// Bytes those allocations asked for, per record.
    pub bytes_allocated_per_record: Option<f64>,
    /// The processing threads' share of the allocations per record (the rest: the writer).
    pub processing_allocations_per_record: Option<f64>,
    /// Share of the processing threads' window spent processing records (wall time; the
    /// rest they waited for librdkafka to hand them records). Near 1: the pipeline is the
    /// limit; low: it waits for input.
    pub processing_busy_share: Option<f64>,
    /// Process CPU seconds per million records (every thread, the mock's included).
    pub cpu_s_per_million: f64,
    /// The pipeline threads' CPU seconds per million records.
    pub pipeline_cpu_s_per_million: f64,
    /// librdkafka's client threads' CPU seconds per million records (not the mock's).
    pub librdkafka_cpu_s_per_million: f64,
    /// Cores over the window: processing threads, the writer, librdkafka's client threads.
    pub processing_cores: f64,
    pub writer_cores: f64,
    pub librdkafka_cores: f64,
    /// The busiest processing thread's cores (one thread per partition).
    pub busiest_processing_thread_cores: f64,
    /// Per-record processing time (take → handed to the writer), microseconds.
    pub processing_p50_us: f64,
    pub processing_p99_us: f64,
    pub processing_p999_us: f64,
    pub processing_max_us: f64,
    pub rss: Rss,
    /// perf's allocator and memcpy shares, when perf could sample.
    pub perf: Option<PerfShares>,
    /// Why perf did not measure (missing, refused, turned off), when it did not.
    pub perf_not_measured: Option<String>,
    /// Records that were not the expected JSON, and per-message consumer errors.
    pub bad_records: u64,
    pub consumer_errors: u64,
    /// Messages on the consumer's main queue instead of a partition's (should be 0).
    pub stray_messages: u64,
    /// The machine's 1-minute load average at the window's start.
    pub load_average_1m: Option<f64>,
    /// Records per full second of the window.
    pub timeline: Vec<u64>,
    pub threads: Vec<ThreadFigure>,
}

/// Resident memory over the window, sampled every 100 ms.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Rss {
    pub samples: usize,
    pub min_mb: f64,
    pub max_mb: f64,
    /// Per full second: [min, max] MB (the sawtooth: growth, a drop, growth).
    pub per_second_mb: Vec<[f64; 2]>,
    /// Median over seconds of max − min, MB.
    pub swing_mb_median: f64,
    /// 100 ms samples that fell by more than 1 MB from the one before (a drop of the saw).
    pub drops: usize,
}

/// MB (10^6 bytes) from bytes, 3 decimals.
fn mb(b: u64) -> f64 {
    round3(b as f64 / 1e6)
}

impl Rss {
    /// From (seconds since the window's start, resident bytes) samples.
    pub fn of(samples: &[(f64, u64)]) -> Rss {
        if samples.is_empty() {
            return Rss::default();
        }
        let mut per_second: Vec<[f64; 2]> = Vec::new();
        let mut second = 0usize;
        let (mut lo, mut hi) = (u64::MAX, 0u64);
        for &(t, b) in samples {
            let s = t.max(0.0) as usize;
            if s != second && lo != u64::MAX {
                per_second.push([mb(lo), mb(hi)]);
                (lo, hi) = (u64::MAX, 0);
            }
            second = s;
            lo = lo.min(b);
            hi = hi.max(b);
        }
        if lo != u64::MAX {
            per_second.push([mb(lo), mb(hi)]);
        }
        let mut swings: Vec<f64> = per_second.iter().map(|[a, b]| b - a).collect();
        let drops = samples
            .windows(2)
            .filter(|w| w[0].1 > w[1].1 + 1_000_000)
            .count();
        Rss {
            samples: samples.len(),
            min_mb: mb(samples.iter().map(|s| s.1).min().unwrap_or(0)),
            max_mb: mb(samples.iter().map(|s| s.1).max().unwrap_or(0)),
            per_second_mb: per_second,
            swing_mb_median: round3(crate::kit::measure::median(&mut swings)),
            drops,
        }
    }
}

/// Resident bytes of this process (/proc/self/statm), None where it cannot be read.
pub fn resident_bytes() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = s.split_whitespace().nth(1)?.parse().ok()?;
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    Some(pages * page.max(1) as u64)
}

/// The 1-minute load average (/proc/loadavg).
pub fn load_average() -> Option<f64> {
    std::fs::read_to_string("/proc/loadavg")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rss_per_second_min_max_and_the_saw() {
        let m = 1_000_000u64;
        let s = [
            (0.0, 10 * m),
            (0.5, 14 * m),
            (0.9, 18 * m),
            (1.1, 9 * m),
            (1.5, 12 * m),
            (2.2, 20 * m),
        ];
        let r = Rss::of(&s);
        assert_eq!(
            r.per_second_mb,
            vec![[10.0, 18.0], [9.0, 12.0], [20.0, 20.0]]
        );
        assert_eq!((r.min_mb, r.max_mb, r.drops), (9.0, 20.0, 1));
        assert_eq!(r.swing_mb_median, 3.0);
        assert_eq!(Rss::of(&[]), Rss::default());
        assert!(resident_bytes().unwrap() > 0);
    }
}
