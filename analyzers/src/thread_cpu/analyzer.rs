//! Intervals into per-thread aggregates: running totals, saturated runs and a bounded
//! timeline, so memory does not follow the recording's length.

use std::collections::HashMap;
use std::io::{self, Write};

use super::report::{
    GroupSummary, SaturatedThread, Source, ThreadCpuReport, ThreadSummary, TimelineRow,
};
use super::roles::{classify, collapse_name, ProcessKind, Role};
use crate::findings::diagnoses::thread_cpu::entries::SATURATED_SECONDS;
use crate::findings::diagnoses::thread_cpu::recording::diagnose;
use crate::thread_cpu::threads::{self, Snapshot, ThreadCores};
use crate::vocab::report::round3;

/// Thresholds and limits of one analysis.
#[derive(Debug, Clone)]
pub struct Options {
    /// A thread at or above this many cores …
    pub saturated_cores: f64,
    /// … for at least this many consecutive seconds is saturated.
    pub saturated_seconds: f64,
    /// Threads shown in the text report (all are in `--json`).
    pub top: usize,
    /// Buckets kept for the timeline table and chart; older buckets are merged pairwise
    /// when full, so a day-long recording costs the same memory as a minute.
    pub max_buckets: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            saturated_cores: crate::findings::saturation::SATURATED_CORES,
            saturated_seconds: SATURATED_SECONDS,
            top: 10,
            max_buckets: 480,
        }
    }
}

/// Cores per thread over one interval between two samples.
#[derive(Debug, Clone)]
pub struct IntervalCores {
    pub start_s: f64,
    pub end_s: f64,
    /// All threads, including those that exited inside the interval (None: not recorded,
    /// e.g. a probe's threads.csv).
    pub process_cores: Option<f64>,
    pub threads: Vec<ThreadCores>,
}

/// Turns a stream of snapshots into intervals (the first snapshot is only a baseline).
#[derive(Debug)]
pub struct SnapshotIntervals {
    prev: Option<Snapshot>,
    ticks_per_s: u64,
}

impl SnapshotIntervals {
    pub fn new(ticks_per_s: u64) -> Self {
        SnapshotIntervals {
            prev: None,
            ticks_per_s,
        }
    }

    /// The interval since the previous snapshot; None for the first one (or a snapshot that
    /// is not later than the previous one, which is skipped).
    pub fn push(&mut self, s: Snapshot) -> Option<IntervalCores> {
        let out = match &self.prev {
            Some(p) if s.at_s > p.at_s => Some(IntervalCores {
                start_s: p.at_s,
                end_s: s.at_s,
                process_cores: Some(threads::process_cores(p, &s, self.ticks_per_s)),
                threads: threads::cores_between(p, &s, self.ticks_per_s),
            }),
            Some(_) => return None,
            None => None,
        };
        self.prev = Some(s);
        out
    }
}

/// Running aggregates of one thread.
#[derive(Debug, Clone)]
struct ThreadAgg {
    tid: i32,
    name: String,
    role: Role,
    first_s: f64,
    last_end_s: f64,
    observed_s: f64,
    cpu_s: f64,
    user_cpu_s: f64,
    max_cores: f64,
    run_s: f64,
    run_start_s: f64,
    run_cpu_s: f64,
    best_run: Option<Run>,
    saturated_s: f64,
}

#[derive(Debug, Clone, Copy)]
struct Run {
    start_s: f64,
    seconds: f64,
    cpu_s: f64,
}

/// One timeline bucket: CPU seconds per thread over [start_s, end_s).
#[derive(Debug, Clone)]
struct Bucket {
    start_s: f64,
    end_s: f64,
    cpu_s: HashMap<i32, f64>,
    process_cpu_s: f64,
}

impl Bucket {
    fn absorb(&mut self, other: Bucket) {
        self.end_s = other.end_s;
        self.process_cpu_s += other.process_cpu_s;
        for (tid, c) in other.cpu_s {
            *self.cpu_s.entry(tid).or_insert(0.0) += c;
        }
    }
}

/// Streams intervals into per-thread aggregates, a bounded timeline and (optionally) a CSV.
pub struct Analyzer {
    opts: Options,
    threads: HashMap<i32, ThreadAgg>,
    buckets: Vec<Bucket>,
    bucket_width_s: f64,
    intervals: u64,
    start_s: Option<f64>,
    end_s: f64,
    interval_sum_s: f64,
    process_cpu_s: f64,
    process_known: bool,
    timeline_csv: Option<csv::Writer<Box<dyn Write>>>,
}

/// Tolerance when comparing interval edges (seconds).
pub(super) const EPS: f64 = 1e-6;

impl Analyzer {
    pub fn new(opts: Options) -> Self {
        Analyzer {
            opts,
            threads: HashMap::new(),
            buckets: Vec::new(),
            bucket_width_s: 0.0,
            intervals: 0,
            start_s: None,
            end_s: 0.0,
            interval_sum_s: 0.0,
            process_cpu_s: 0.0,
            process_known: true,
            timeline_csv: None,
        }
    }

    /// Also write every interval's non-idle threads as CSV rows
    /// (`start_s,end_s,tid,thread,group,role,cores,user_cores,system_cores`) as they come.
    pub fn with_timeline_csv(mut self, w: Box<dyn Write>) -> io::Result<Self> {
        let mut w = csv::Writer::from_writer(w);
        w.write_record([
            "start_s",
            "end_s",
            "tid",
            "thread",
            "group",
            "role",
            "cores",
            "user_cores",
            "system_cores",
        ])
        .map_err(io::Error::other)?;
        self.timeline_csv = Some(w);
        Ok(self)
    }

    /// Intervals analysed so far.
    pub fn intervals(&self) -> u64 {
        self.intervals
    }

    /// Adds one interval (intervals must come in time order).
    pub fn add(&mut self, iv: &IntervalCores) -> io::Result<()> {
        let secs = iv.end_s - iv.start_s;
        if secs <= 0.0 {
            return Ok(());
        }
        self.intervals += 1;
        self.start_s.get_or_insert(iv.start_s);
        self.end_s = iv.end_s;
        self.interval_sum_s += secs;
        let thread_sum: f64 = iv.threads.iter().map(|t| t.cores).sum();
        match iv.process_cores {
            Some(p) => self.process_cpu_s += p * secs,
            None => {
                self.process_known = false;
                self.process_cpu_s += thread_sum * secs;
            }
        }
        let sat = self.opts.saturated_cores;
        let mut bucket = Bucket {
            start_s: iv.start_s,
            end_s: iv.end_s,
            cpu_s: HashMap::new(),
            process_cpu_s: iv.process_cores.unwrap_or(thread_sum) * secs,
        };
        for t in &iv.threads {
            let a = self.threads.entry(t.tid).or_insert_with(|| ThreadAgg {
                tid: t.tid,
                name: t.name.clone(),
                role: classify(&t.name),
                first_s: iv.start_s,
                last_end_s: iv.start_s,
                observed_s: 0.0,
                cpu_s: 0.0,
                user_cpu_s: 0.0,
                max_cores: 0.0,
                run_s: 0.0,
                run_start_s: iv.start_s,
                run_cpu_s: 0.0,
                best_run: None,
                saturated_s: 0.0,
            });
            if a.name != t.name {
                // Renamed (a JVM names its threads after they start): keep the latest name.
                a.name = t.name.clone();
                a.role = classify(&t.name);
            }
            let contiguous = (a.last_end_s - iv.start_s).abs() < EPS;
            a.last_end_s = iv.end_s;
            a.observed_s += secs;
            a.cpu_s += t.cores * secs;
            a.user_cpu_s += t.user_cores * secs;
            a.max_cores = a.max_cores.max(t.cores);
            if t.cores >= sat {
                a.saturated_s += secs;
                if a.run_s > 0.0 && contiguous {
                    a.run_s += secs;
                    a.run_cpu_s += t.cores * secs;
                } else {
                    a.run_s = secs;
                    a.run_start_s = iv.start_s;
                    a.run_cpu_s = t.cores * secs;
                }
                if !a.best_run.is_some_and(|r| a.run_s <= r.seconds + EPS) {
                    a.best_run = Some(Run {
                        start_s: a.run_start_s,
                        seconds: a.run_s,
                        cpu_s: a.run_cpu_s,
                    });
                }
            } else {
                a.run_s = 0.0;
            }
            if t.cores > 0.0 {
                bucket.cpu_s.insert(t.tid, t.cores * secs);
                if let Some(w) = self.timeline_csv.as_mut() {
                    w.write_record([
                        format!("{:.3}", iv.start_s),
                        format!("{:.3}", iv.end_s),
                        t.tid.to_string(),
                        t.name.clone(),
                        collapse_name(&t.name),
                        a.role.as_str().to_string(),
                        format!("{:.3}", t.cores),
                        format!("{:.3}", t.user_cores),
                        format!("{:.3}", t.system_cores),
                    ])
                    .map_err(io::Error::other)?;
                }
            }
        }
        // A thread absent from this interval (exited, or idle in a threads.csv) ends its run.
        for a in self.threads.values_mut() {
            if (a.last_end_s - iv.end_s).abs() >= EPS {
                a.run_s = 0.0;
            }
        }
        self.push_bucket(bucket);
        Ok(())
    }

    fn push_bucket(&mut self, b: Bucket) {
        if let Some(last) = self.buckets.last_mut() {
            if b.end_s - last.start_s <= self.bucket_width_s + EPS {
                last.absorb(b);
                return;
            }
        }
        self.buckets.push(b);
        if self.buckets.len() > self.opts.max_buckets.max(2) {
            let old = std::mem::take(&mut self.buckets);
            let mut it = old.into_iter();
            while let Some(mut first) = it.next() {
                if let Some(second) = it.next() {
                    first.absorb(second);
                }
                self.buckets.push(first);
            }
            let widest = self
                .buckets
                .iter()
                .map(|b| b.end_s - b.start_s)
                .fold(0.0, f64::max);
            self.bucket_width_s = widest.max(self.bucket_width_s * 2.0);
        }
    }

    /// The report over everything added so far.
    pub fn finish(mut self, source: Source, ticks_per_s: u64) -> ThreadCpuReport {
        if let Some(mut w) = self.timeline_csv.take() {
            let _ = w.flush();
        }
        let duration_s = self.start_s.map_or(0.0, |s| self.end_s - s);
        let mut aggs: Vec<ThreadAgg> = self.threads.into_values().collect();
        aggs.sort_by(|a, b| b.cpu_s.total_cmp(&a.cpu_s).then(a.tid.cmp(&b.tid)));
        let kind = if aggs.iter().any(|a| a.role.is_rdk()) {
            ProcessKind::Librdkafka
        } else if aggs.iter().any(|a| a.role.is_jvm_internal()) {
            ProcessKind::Jvm
        } else {
            ProcessKind::Other
        };
        let threads: Vec<ThreadSummary> = aggs
            .iter()
            .map(|a| ThreadSummary {
                tid: a.tid,
                name: a.name.clone(),
                role: a.role,
                group: collapse_name(&a.name),
                cores_mean: round3(if a.observed_s > 0.0 {
                    a.cpu_s / a.observed_s
                } else {
                    0.0
                }),
                cores_max: round3(a.max_cores),
                user_share: if a.cpu_s > 0.0 {
                    Some(round3(a.user_cpu_s / a.cpu_s))
                } else {
                    None
                },
                cpu_s: round3(a.cpu_s),
                seconds: round3(a.observed_s),
                first_s: round3(a.first_s),
                longest_saturated_s: round3(a.best_run.map_or(0.0, |r| r.seconds)),
            })
            .collect();
        let mut groups: Vec<GroupSummary> = Vec::new();
        {
            let mut idx: HashMap<(String, Role), usize> = HashMap::new();
            for a in &aggs {
                let key = (collapse_name(&a.name), a.role);
                let i = *idx.entry(key.clone()).or_insert_with(|| {
                    groups.push(GroupSummary {
                        group: key.0.clone(),
                        role: key.1,
                        threads: 0,
                        cores_mean: 0.0,
                        cores_max_one_thread: 0.0,
                        cpu_s: 0.0,
                    });
                    groups.len() - 1
                });
                let g = &mut groups[i];
                g.threads += 1;
                g.cpu_s += a.cpu_s;
                g.cores_max_one_thread = g.cores_max_one_thread.max(round3(a.max_cores));
            }
            for g in &mut groups {
                g.cores_mean = round3(if duration_s > 0.0 {
                    g.cpu_s / duration_s
                } else {
                    0.0
                });
                g.cpu_s = round3(g.cpu_s);
            }
            groups.sort_by(|a, b| b.cpu_s.total_cmp(&a.cpu_s).then(a.group.cmp(&b.group)));
        }
        let mut saturated: Vec<SaturatedThread> = aggs
            .iter()
            .filter_map(|a| {
                let r = a.best_run?;
                (r.seconds + EPS >= self.opts.saturated_seconds).then(|| SaturatedThread {
                    tid: a.tid,
                    name: a.name.clone(),
                    role: a.role,
                    from_s: round3(r.start_s),
                    seconds: round3(r.seconds),
                    cores_mean: round3(r.cpu_s / r.seconds),
                    saturated_s_total: round3(a.saturated_s),
                })
            })
            .collect();
        saturated.sort_by(|a, b| b.seconds.total_cmp(&a.seconds).then(a.tid.cmp(&b.tid)));
        let process_cores_mean = if duration_s > 0.0 {
            Some(round3(self.process_cpu_s / duration_s))
        } else {
            None
        };
        let timeline = self
            .buckets
            .iter()
            .map(|b| TimelineRow {
                start_s: b.start_s,
                end_s: b.end_s,
                process_cores: (b.process_cpu_s / (b.end_s - b.start_s)).max(0.0),
                cores: b
                    .cpu_s
                    .iter()
                    .map(|(&tid, &c)| (tid, c / (b.end_s - b.start_s)))
                    .collect(),
            })
            .collect();
        let interval_ms = if self.intervals > 0 {
            (self.interval_sum_s / self.intervals as f64 * 1000.0).round() as u64
        } else {
            0
        };
        let mut report = ThreadCpuReport {
            source,
            interval_ms,
            duration_s: round3(duration_s),
            intervals: self.intervals,
            ticks_per_s,
            process_kind: kind,
            process_cores_mean,
            process_cores_from_threads: !self.process_known,
            saturated_cores: self.opts.saturated_cores,
            saturated_seconds: self.opts.saturated_seconds,
            threads,
            groups,
            saturated,
            diagnoses: Vec::new(),
            command: None,
            ended: String::new(),
            sampling_ms_per_sample: None,
            warnings: Vec::new(),
            timeline,
            top: self.opts.top,
        };
        report.diagnoses = diagnose(&report);
        report
    }
}
