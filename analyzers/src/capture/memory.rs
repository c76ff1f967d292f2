//! The target's memory over the capture: resident set and page faults each second, from
//! `/proc/PID/stat` (memory growth, and the postmortem's sawtooth of a consumer that
//! allocates per record).

use std::io::{self, Write};

/// One moment's figures.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct MemorySample {
    pub at_s: f64,
    pub rss_bytes: u64,
    /// Minor and major page faults over the process's life.
    pub minor_faults: u64,
    pub major_faults: u64,
}

/// Reads `pid`'s resident set and fault counters now.
pub fn sample(pid: i32, at_s: f64) -> io::Result<MemorySample> {
    let p = procfs::process::Process::new(pid).map_err(|e| io::Error::other(e.to_string()))?;
    let st = p.stat().map_err(|e| io::Error::other(e.to_string()))?;
    Ok(MemorySample {
        at_s,
        rss_bytes: st.rss * procfs::page_size(),
        minor_faults: st.minflt,
        major_faults: st.majflt,
    })
}

/// The CSV header of `memory.csv`.
pub const CSV_HEADER: &str = "at_s,rss_bytes,minor_faults,major_faults";

/// Appends one row to `memory.csv`.
pub fn write_row(w: &mut dyn Write, s: &MemorySample) -> io::Result<()> {
    writeln!(
        w,
        "{:.3},{},{},{}",
        s.at_s, s.rss_bytes, s.minor_faults, s.major_faults
    )?;
    w.flush()
}

/// The capture's memory in a few figures.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct MemorySummary {
    pub samples: u64,
    pub rss_first_bytes: u64,
    pub rss_last_bytes: u64,
    pub rss_min_bytes: u64,
    pub rss_max_bytes: u64,
    /// Seconds the resident set fell from one sample to the next by at least a tenth of
    /// its peak: the sawtooth of a heap or arena that grows and is given back.
    pub rss_drops: u64,
    pub minor_faults_per_s: f64,
    pub major_faults: u64,
}

/// Folds samples into a [`MemorySummary`].
#[derive(Debug, Default)]
pub struct Memory {
    first: Option<MemorySample>,
    last: Option<MemorySample>,
    summary: MemorySummary,
}

impl Memory {
    pub fn add(&mut self, s: &MemorySample) {
        let m = &mut self.summary;
        if let Some(prev) = self.last {
            let peak = m.rss_max_bytes.max(s.rss_bytes);
            if prev.rss_bytes > s.rss_bytes && prev.rss_bytes - s.rss_bytes >= peak / 10 {
                m.rss_drops += 1;
            }
        }
        if self.first.is_none() {
            self.first = Some(*s);
            m.rss_min_bytes = s.rss_bytes;
            m.rss_first_bytes = s.rss_bytes;
        }
        m.samples += 1;
        m.rss_last_bytes = s.rss_bytes;
        m.rss_min_bytes = m.rss_min_bytes.min(s.rss_bytes);
        m.rss_max_bytes = m.rss_max_bytes.max(s.rss_bytes);
        self.last = Some(*s);
    }

    pub fn finish(mut self) -> MemorySummary {
        if let (Some(a), Some(b)) = (self.first, self.last) {
            let secs = b.at_s - a.at_s;
            if secs > 0.0 {
                self.summary.minor_faults_per_s =
                    b.minor_faults.saturating_sub(a.minor_faults) as f64 / secs;
            }
            self.summary.major_faults = b.major_faults.saturating_sub(a.major_faults);
        }
        self.summary
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_grows_when_it_touches_memory() {
        let me = std::process::id() as i32;
        let a = sample(me, 0.0).unwrap();
        // Touch 64 MiB page by page: the resident set and the minor faults must follow.
        let mut v = vec![0u8; 64 << 20];
        for i in (0..v.len()).step_by(4096) {
            v[i] = 1;
        }
        let b = sample(me, 1.0).unwrap();
        std::hint::black_box(&v);
        assert!(b.rss_bytes >= a.rss_bytes + (48 << 20), "{a:?} {b:?}");
        assert!(b.minor_faults >= a.minor_faults + 8000, "{a:?} {b:?}");
        let mut m = Memory::default();
        m.add(&a);
        m.add(&b);
        drop(v);
        let s = m.finish();
        assert_eq!(
            (s.rss_min_bytes, s.rss_max_bytes),
            (a.rss_bytes, b.rss_bytes)
        );
        assert!(s.minor_faults_per_s >= 8000.0, "{s:?}");
    }

    #[test]
    fn a_sawtooth_counts_its_drops() {
        let mut m = Memory::default();
        for (i, rss) in [100u64, 200, 300, 120, 250, 330, 110].iter().enumerate() {
            m.add(&MemorySample {
                at_s: i as f64,
                rss_bytes: *rss << 20,
                minor_faults: 0,
                major_faults: 0,
            });
        }
        assert_eq!(m.finish().rss_drops, 2);
    }
}
