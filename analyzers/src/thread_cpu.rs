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
//! ```
//! use kgap_analyzers::thread_cpu::{Analyzer, Options, SnapshotIntervals, Source};
//! use kgap_analyzers::threads::{Snapshot, ThreadTicks};
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

use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::{self, BufRead, Write};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::report::{render_diagnosis, round3, Diagnosis};
use crate::svg::{plain_label, LineChart, Scale, Series};
use crate::threads::{self, Snapshot, ThreadCores};

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
            saturated_cores: 0.9,
            saturated_seconds: 3.0,
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

/// What a thread does, from its kernel name (`comm`, at most 15 bytes: the JVM's and
/// librdkafka's names are cut there, e.g. `kafka-producer-`, `C2 CompilerThre`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Role {
    /// librdkafka `rdk:broker<id>`: socket I/O and per-message fetch parsing.
    RdkBroker,
    /// librdkafka `rdk:main`: timers, metadata, the consumer group.
    RdkMain,
    /// librdkafka `rdk:mock*`: the built-in mock cluster.
    RdkMock,
    /// Other librdkafka threads (`rdk:bg`, …).
    RdkOther,
    /// Java `kafka-producer-network-thread | <client.id>`: the producer's sender.
    JavaProducerNetwork,
    /// Java `kafka-coordinator-heartbeat-thread | <group>`.
    JavaHeartbeat,
    /// Java's new consumer (group.protocol=consumer) background thread.
    JavaConsumerBackground,
    /// JVM garbage collector threads (`GC Thread#*`, `G1 Conc#*`, `G1 Refine#*`, …).
    JvmGc,
    /// JVM JIT compiler threads (`C1 CompilerThre`, `C2 CompilerThre`).
    JvmJit,
    /// Other JVM housekeeping threads (`VM Thread`, `Reference Handl`, …).
    JvmOther,
    /// The application's own threads (the one that calls poll() is one of them).
    App,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::RdkBroker => "rdk-broker",
            Role::RdkMain => "rdk-main",
            Role::RdkMock => "rdk-mock",
            Role::RdkOther => "rdk-other",
            Role::JavaProducerNetwork => "java-producer-network",
            Role::JavaHeartbeat => "java-heartbeat",
            Role::JavaConsumerBackground => "java-consumer-background",
            Role::JvmGc => "jvm-gc",
            Role::JvmJit => "jvm-jit",
            Role::JvmOther => "jvm-other",
            Role::App => "app",
        }
    }

    fn is_jvm_internal(self) -> bool {
        matches!(self, Role::JvmGc | Role::JvmJit | Role::JvmOther)
    }

    fn is_rdk(self) -> bool {
        matches!(
            self,
            Role::RdkBroker | Role::RdkMain | Role::RdkMock | Role::RdkOther
        )
    }
}

const JVM_OTHER: &[&str] = &[
    "VM Thread",
    "VM Periodic Tas",
    "Reference Handl",
    "Finalizer",
    "Signal Dispatch",
    "Service Thread",
    "Monitor Deflati",
    "Common-Cleaner",
    "Notification Th",
    "Attach Listener",
    "Sweeper thread",
    "JFR Recorder Th",
    "JFR Periodic Ta",
];

/// The role of a thread from its name.
pub fn classify(name: &str) -> Role {
    if let Some(rest) = name.strip_prefix("rdk:") {
        return if rest.starts_with("broker") {
            Role::RdkBroker
        } else if rest == "main" {
            Role::RdkMain
        } else if rest.starts_with("mock") {
            Role::RdkMock
        } else {
            Role::RdkOther
        };
    }
    if name.starts_with("kafka-producer-") {
        return Role::JavaProducerNetwork;
    }
    if name.starts_with("kafka-coordinat") {
        return Role::JavaHeartbeat;
    }
    if name.starts_with("consumer_backgr") || name.starts_with("consumer_background") {
        return Role::JavaConsumerBackground;
    }
    if name.starts_with("GC Thread")
        || name.starts_with("G1 ")
        || name.starts_with("ZWorker")
        || name.starts_with("ZDriver")
        || name.starts_with("ZDirector")
        || name.starts_with("Shenandoah")
        || name.starts_with("ParGC")
        || name.starts_with("VM Thread GC")
    {
        return Role::JvmGc;
    }
    if name.starts_with("C1 CompilerThre") || name.starts_with("C2 CompilerThre") {
        return Role::JvmJit;
    }
    if JVM_OTHER.iter().any(|p| name.starts_with(p)) {
        return Role::JvmOther;
    }
    Role::App
}

/// The name with its trailing number collapsed to `*`, for the "by role" view:
/// `pool-1-thread-7` → `pool-1-thread-*`, `GC Thread#3` → `GC Thread#*`. librdkafka's names
/// stay whole (`rdk:broker1` and `rdk:broker2` are different brokers), and so does a name
/// that is only a number.
pub fn collapse_name(name: &str) -> String {
    if name.starts_with("rdk:") {
        return name.to_string();
    }
    let head = name.trim_end_matches(|c: char| c.is_ascii_digit());
    if head.len() == name.len() || head.is_empty() {
        name.to_string()
    } else {
        format!("{head}*")
    }
}

/// What kind of client the process is, from its thread names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProcessKind {
    /// Has `rdk:*` threads.
    Librdkafka,
    /// Has JVM threads (GC, JIT, VM Thread).
    Jvm,
    /// Neither.
    Other,
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
const EPS: f64 = 1e-6;

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

/// Where the samples came from.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    Pid(i32),
    Command(Vec<String>),
    Recording(String),
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Source::Pid(p) => write!(f, "pid {p}"),
            Source::Command(argv) => {
                let quoted: Vec<String> = argv
                    .iter()
                    .map(|a| {
                        if !a.is_empty()
                            && a.chars()
                                .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c))
                        {
                            a.clone()
                        } else {
                            format!("'{}'", a.replace('\'', "'\\''"))
                        }
                    })
                    .collect();
                write!(f, "command `{}`", quoted.join(" "))
            }
            Source::Recording(n) => write!(f, "recording {n}"),
        }
    }
}

/// One thread over the whole run.
#[derive(Debug, Clone, Serialize)]
pub struct ThreadSummary {
    pub tid: i32,
    pub name: String,
    pub role: Role,
    /// The name with its trailing number collapsed (`pool-1-thread-*`).
    pub group: String,
    /// CPU seconds over the seconds the thread was seen (its lifetime within the run).
    pub cores_mean: f64,
    /// Busiest interval.
    pub cores_max: f64,
    /// User time / all CPU time (None for an idle thread).
    pub user_share: Option<f64>,
    pub cpu_s: f64,
    /// Seconds the thread was seen.
    pub seconds: f64,
    /// When it was first seen (seconds since the first sample).
    pub first_s: f64,
    /// Longest run at or above the saturation threshold.
    pub longest_saturated_s: f64,
}

/// Threads of one collapsed name and role.
#[derive(Debug, Clone, Serialize)]
pub struct GroupSummary {
    pub group: String,
    pub role: Role,
    pub threads: usize,
    /// CPU seconds of all its threads over the run's duration (can exceed 1).
    pub cores_mean: f64,
    /// The busiest single thread's busiest interval.
    pub cores_max_one_thread: f64,
    pub cpu_s: f64,
}

/// A thread that stayed at or above the threshold long enough.
#[derive(Debug, Clone, Serialize)]
pub struct SaturatedThread {
    pub tid: i32,
    pub name: String,
    pub role: Role,
    /// Start of its longest saturated run.
    pub from_s: f64,
    /// Length of that run.
    pub seconds: f64,
    /// Mean cores during that run.
    pub cores_mean: f64,
    /// All seconds at or above the threshold.
    pub saturated_s_total: f64,
}

/// How a command that was run ended.
#[derive(Debug, Clone, Serialize)]
pub struct CommandOutcome {
    /// Exit code, when it exited normally.
    pub exit_code: Option<i32>,
    /// Signal that ended it (Unix), when it did not.
    pub signal: Option<i32>,
    /// Killed by analyze-thread-cpu when --duration ran out.
    pub killed_at_duration: bool,
}

/// One bucket of the bounded timeline (not in the JSON: use `--timeline FILE`).
#[derive(Debug, Clone)]
pub struct TimelineRow {
    pub start_s: f64,
    pub end_s: f64,
    pub process_cores: f64,
    pub cores: HashMap<i32, f64>,
}

/// The result of one run: the documented `--json` contract.
#[derive(Debug, Clone, Serialize)]
pub struct ThreadCpuReport {
    pub source: Source,
    /// Mean interval between samples.
    pub interval_ms: u64,
    /// First sample to last.
    pub duration_s: f64,
    pub intervals: u64,
    /// Clock ticks per second (CPU time resolution: 1/ticks_per_s seconds).
    pub ticks_per_s: u64,
    pub process_kind: ProcessKind,
    /// All threads, including those that exited during the run.
    pub process_cores_mean: Option<f64>,
    /// True when the process total is the sum of the listed threads (threads.csv input).
    pub process_cores_from_threads: bool,
    pub saturated_cores: f64,
    pub saturated_seconds: f64,
    /// Busiest first (by CPU seconds).
    pub threads: Vec<ThreadSummary>,
    /// The "by role" view: names with numbers collapsed, busiest first.
    pub groups: Vec<GroupSummary>,
    pub saturated: Vec<SaturatedThread>,
    pub diagnoses: Vec<Diagnosis>,
    pub command: Option<CommandOutcome>,
    /// Why sampling stopped.
    pub ended: String,
    /// Wall time spent reading /proc per sample (live runs only): the tool's own cost.
    pub sampling_ms_per_sample: Option<f64>,
    pub warnings: Vec<String>,
    #[serde(skip)]
    pub timeline: Vec<TimelineRow>,
    #[serde(skip)]
    pub top: usize,
}

fn diag(id: &str, title: &str, evidence: serde_json::Value, cause: &str, fix: &str) -> Diagnosis {
    Diagnosis {
        id: id.to_string(),
        title: title.to_string(),
        evidence,
        cause: cause.to_string(),
        fix: fix.to_string(),
        examples: Vec::new(),
    }
}

fn sat_evidence(ts: &[&SaturatedThread]) -> serde_json::Value {
    let first = ts[0];
    serde_json::json!({
        "thread": first.name,
        "tid": first.tid,
        "cores_mean": first.cores_mean,
        "seconds": first.seconds,
        "from_s": first.from_s,
        "saturated_threads": ts.len(),
        "threads": ts.iter().map(|t| serde_json::json!({
            "tid": t.tid, "name": t.name, "cores_mean": t.cores_mean, "seconds": t.seconds,
        })).collect::<Vec<_>>(),
    })
}

/// The diagnoses, in the post's terms, from a finished report.
pub fn diagnose(r: &ThreadCpuReport) -> Vec<Diagnosis> {
    let mut out = Vec::new();
    let sat = &r.saturated;
    let pick = |f: &dyn Fn(&SaturatedThread) -> bool| -> Vec<&SaturatedThread> {
        sat.iter().filter(|t| f(t)).collect()
    };
    let threshold = format!(
        "at ≥ {} cores for ≥ {} s",
        r.saturated_cores, r.saturated_seconds
    );

    let brokers = pick(&|t| t.role == Role::RdkBroker);
    if !brokers.is_empty() {
        out.push(diag(
            "rdk-broker-saturated",
            "librdkafka's broker thread is saturated (per-message work inside librdkafka: \
             more consumer instances)",
            sat_evidence(&brokers),
            &format!(
                "{} ({}) is {threshold}. librdkafka's broker thread reads the socket and \
                 builds one internal queue entry per fetched message; in the post it \
                 saturates at about 2.1M msg/s of 100 B messages. The batch API only saves \
                 work on the application side.",
                brokers[0].name, brokers[0].tid
            ),
            "this is how librdkafka is built, not a knob: run more consumer instances \
             (each has its own broker threads); for large messages librdkafka is \
             not the limit",
        ));
    }
    if r.process_kind == ProcessKind::Librdkafka {
        let apps = pick(&|t| t.role == Role::App);
        if !apps.is_empty() {
            out.push(diag(
                "app-thread-saturated",
                "the application thread is saturated (poll() once per message: use the \
                 batch API)",
                sat_evidence(&apps),
                &format!(
                    "{} ({}), not a librdkafka thread, is {threshold}. rust-rdkafka's poll() \
                     returns one message per call, so the thread that calls it pays a queue \
                     round trip per message (Java's poll() returns up to 500)",
                    apps[0].name, apps[0].tid
                ),
                "consume in batches: rd_kafka_consume_batch_queue (500 messages per call, \
                 like max.poll.records) took the post's consumer from 1.48M to 2.02M msg/s; \
                 then the limit moves to rdk:broker*",
            ));
        }
    }
    if r.process_kind == ProcessKind::Jvm {
        let consumers = pick(&|t| t.role == Role::App || t.role == Role::JavaConsumerBackground);
        if !consumers.is_empty() {
            out.push(diag(
                "java-consumer-thread-saturated",
                "one Java consumer thread at one core",
                sat_evidence(&consumers),
                &format!(
                    "{} ({}) is {threshold}. In the classic consumer the thread that calls \
                     poll() also reads the socket and parses records: in the post it sits at \
                     0.95 to 0.98 cores in every configuration, reading 6 MB fetch responses \
                     in ~56 KB reads (receive.buffer.bytes=64 KB). group.protocol=consumer \
                     splits the work over two threads but it still runs in sequence",
                    consumers[0].name, consumers[0].tid
                ),
                "receive.buffer.bytes=-1 (the OS sizes the socket buffer: +16 to 17% in the \
                 post); beyond that one KafkaConsumer does its per-byte work on one core \
                 (~1.4 to 1.6 GB/s): run more consumers",
            ));
        }
        let senders = pick(&|t| t.role == Role::JavaProducerNetwork);
        if !senders.is_empty() {
            out.push(diag(
                "java-producer-network-saturated",
                "the Java producer's network thread is at one core",
                sat_evidence(&senders),
                &format!(
                    "{} ({}) is {threshold}. One sender thread per KafkaProducer writes every \
                     request: with heap buffers each socket write first copies the whole \
                     unsent rest of the request (big batches), and with compression it runs \
                     the codec (gzip: 96% in deflate in the post)",
                    senders[0].name, senders[0].tid
                ),
                "send.buffer.bytes=-1 and batch.size ≤ 256 KB (or max.request.size near one \
                 batch); for gzip compare at equal input per batch or use a cheaper codec; \
                 more producers for more cores",
            ));
        }
    }
    // Everything else that is saturated, with what its role means.
    let covered = |t: &SaturatedThread| -> bool {
        t.role == Role::RdkBroker
            || (r.process_kind == ProcessKind::Librdkafka && t.role == Role::App)
            || (r.process_kind == ProcessKind::Jvm
                && matches!(
                    t.role,
                    Role::App | Role::JavaConsumerBackground | Role::JavaProducerNetwork
                ))
    };
    let rest = pick(&|t| !covered(t));
    if !rest.is_empty() {
        let t = rest[0];
        let meaning = match t.role {
            Role::RdkMain => {
                "rdk:main runs librdkafka's timers, metadata and consumer-group \
                              logic; saturated it points at very many partitions or topics, \
                              or a stats callback doing heavy work"
            }
            Role::RdkMock => {
                "rdk:mock runs librdkafka's built-in mock cluster: the broker \
                              side of the test is the limit, not the client"
            }
            Role::RdkOther => {
                "a librdkafka helper thread (rdk:bg runs background event \
                               callbacks): the callback's work is the limit"
            }
            Role::JvmGc => {
                "a JVM garbage collector thread: see the GC diagnosis and the \
                            GC log (analyze-gc-log)"
            }
            Role::JvmJit => {
                "a JIT compiler thread: normal during warm-up; saturated for long, \
                             measure after a longer warm-up"
            }
            Role::JvmOther => "a JVM housekeeping thread",
            Role::JavaHeartbeat => "the consumer's heartbeat thread: it should be near idle",
            _ => "one thread of the process does the work of the whole pipeline",
        };
        out.push(diag(
            "saturated-thread",
            &format!("thread {} is saturated", t.name),
            sat_evidence(&rest),
            &format!("{} ({}) is {threshold}: {meaning}", t.name, t.tid),
            "make that thread's work parallel (more instances or threads), or smaller",
        ));
    }

    // GC threads dominate: the GC role uses more CPU than any other role.
    let mut by_role: HashMap<Role, f64> = HashMap::new();
    for t in &r.threads {
        *by_role.entry(t.role).or_insert(0.0) += t.cpu_s;
    }
    if r.duration_s > 0.0 {
        let gc = by_role.get(&Role::JvmGc).copied().unwrap_or(0.0);
        let (other_role, other) = by_role
            .iter()
            .filter(|(k, _)| **k != Role::JvmGc)
            .map(|(k, v)| (*k, *v))
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .unwrap_or((Role::App, 0.0));
        let gc_cores = gc / r.duration_s;
        if gc_cores >= GC_DOMINATES_MIN_CORES && gc >= other {
            let gc_threads = r.threads.iter().filter(|t| t.role == Role::JvmGc).count();
            out.push(diag(
                "gc-threads-dominate",
                "GC threads dominate",
                serde_json::json!({
                    "gc_cores": round3(gc_cores),
                    "gc_threads": gc_threads,
                    "next_role": other_role.as_str(),
                    "next_role_cores": round3(other / r.duration_s),
                }),
                &format!(
                    "the JVM's GC threads use {:.2} cores, more than any other role ({} at \
                     {:.2}); in the post, 16 producers in one 2 GB heap kept ~436 MB of small \
                     per-record objects alive for 300 ms+, the heap stayed full after young \
                     collections and GC threads used 4.79 cores, more than the 16 application \
                     threads (4.50)",
                    gc_cores,
                    other_role.as_str(),
                    other / r.duration_s
                ),
                "read the GC log (analyze-gc-log): fewer instances per JVM or a larger heap \
                 (-Xmx), and fewer records in flight (smaller buffer.memory)",
            ));
        }
    }

    if sat.is_empty() && out.is_empty() {
        let busiest = r.threads.first();
        out.push(diag(
            "no-saturated-thread",
            "no thread saturated",
            serde_json::json!({
                "busiest_thread": busiest.map(|t| t.name.clone()),
                "busiest_tid": busiest.map(|t| t.tid),
                "busiest_cores_max": busiest.map(|t| t.cores_max),
                "busiest_longest_saturated_s": busiest.map(|t| t.longest_saturated_s),
                "process_cores_mean": r.process_cores_mean,
            }),
            &format!(
                "no thread stayed {threshold}: no single thread is the limit. The wait is \
                 elsewhere (the broker, the network, a fetch backoff, a rate limit, or \
                 several threads each waiting on the other)"
            ),
            "for a librdkafka consumer check the fetcher's naps (analyze-fetch-log: \
             fetch.queue.backoff.ms); for a producer the requests on the wire \
             (analyze-protocol-log); sample longer if the run was short",
        ));
    }
    out
}

/// GC threads must use at least this many cores to "dominate" (an idle JVM's GC does not).
pub const GC_DOMINATES_MIN_CORES: f64 = 0.5;

// ---------------------------------------------------------------------------------------
// Recordings: JSON lines of Snapshot after one header line, or a probe's threads.csv.

/// The first line of a `--save` recording.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RecordingHeader {
    /// Always "kgap-thread-cpu".
    pub recording: String,
    pub version: u32,
    /// The recording host's USER_HZ.
    pub ticks_per_s: u64,
    pub interval_ms: u64,
    pub pid: Option<i32>,
    pub command: Option<Vec<String>>,
}

/// Writes a recording: a header, then one flushed line per snapshot (a crash loses nothing).
pub struct RecordingWriter<W: Write> {
    w: W,
}

impl<W: Write> RecordingWriter<W> {
    pub fn new(mut w: W, header: &RecordingHeader) -> io::Result<Self> {
        serde_json::to_writer(&mut w, header).map_err(io::Error::other)?;
        w.write_all(b"\n")?;
        w.flush()?;
        Ok(RecordingWriter { w })
    }

    pub fn write(&mut self, s: &Snapshot) -> io::Result<()> {
        serde_json::to_writer(&mut self.w, s).map_err(io::Error::other)?;
        self.w.write_all(b"\n")?;
        self.w.flush()
    }
}

/// Why a recording cannot be analysed.
#[derive(Debug, thiserror::Error)]
pub enum RecordingError {
    #[error("{0}")]
    Io(#[from] io::Error),
    #[error("line {line}: {reason}")]
    Bad { line: u64, reason: String },
    #[error("the file is empty")]
    Empty,
    #[error(
        "{samples} sample(s): at least two are needed for one interval (record for longer \
         than one --interval)"
    )]
    TooShort { samples: u64 },
}

/// What reading a recording found, beside the intervals it fed to the analyzer.
#[derive(Debug, Clone, Default)]
pub struct RecordingInfo {
    pub header: Option<RecordingHeader>,
    pub samples: u64,
    pub warnings: Vec<String>,
}

/// Streams a recording (JSON lines from `--save`, or a probe's `threads.csv`) into
/// `analyzer`. `default_ticks` is used when the recording has no header.
pub fn read_recording<R: BufRead>(
    mut r: R,
    analyzer: &mut Analyzer,
    default_ticks: u64,
) -> Result<RecordingInfo, RecordingError> {
    let mut info = RecordingInfo::default();
    let mut line = String::new();
    let mut line_no = 0u64;
    let mut intervals: Option<SnapshotIntervals> = None;
    let mut csv_mode = false;
    let mut csv_second: Option<i64> = None;
    let mut csv_threads: Vec<ThreadCores> = Vec::new();
    let mut pending_err: Option<RecordingError> = None;
    loop {
        line.clear();
        let n = r.read_line(&mut line).map_err(|e| {
            if e.kind() == io::ErrorKind::InvalidData {
                RecordingError::Bad {
                    line: line_no + 1,
                    reason: "not text (invalid UTF-8): not a recording".into(),
                }
            } else {
                RecordingError::Io(e)
            }
        })?;
        if n == 0 {
            break;
        }
        line_no += 1;
        if let Some(e) = pending_err.take() {
            return Err(e); // a bad line that was not the last one
        }
        let complete = line.ends_with('\n');
        let text = line.trim();
        if text.is_empty() {
            continue;
        }
        if line_no == 1 && text.starts_with("second,tid,thread,cores") {
            csv_mode = true;
            continue;
        }
        if csv_mode {
            let Some((second, tid, name, cores)) = parse_threads_csv_row(text) else {
                let e = RecordingError::Bad {
                    line: line_no,
                    reason: "expected second,tid,thread,cores".into(),
                };
                if complete {
                    return Err(e);
                }
                pending_err = Some(e);
                continue;
            };
            if csv_second.is_some_and(|s| s != second) {
                flush_csv_second(analyzer, csv_second, &mut csv_threads)?;
                info.samples += 1;
            }
            csv_second = Some(second);
            csv_threads.push(ThreadCores {
                tid,
                name,
                cores,
                user_cores: cores,
                system_cores: 0.0,
            });
            continue;
        }
        if line_no == 1 && text.contains("\"recording\"") {
            match serde_json::from_str::<RecordingHeader>(text) {
                Ok(h) => {
                    intervals = Some(SnapshotIntervals::new(h.ticks_per_s));
                    info.header = Some(h);
                    continue;
                }
                Err(e) => {
                    return Err(RecordingError::Bad {
                        line: 1,
                        reason: format!("not a recording header: {e}"),
                    })
                }
            }
        }
        match serde_json::from_str::<Snapshot>(text) {
            Ok(s) => {
                info.samples += 1;
                let iv = intervals
                    .get_or_insert_with(|| SnapshotIntervals::new(default_ticks))
                    .push(s);
                if let Some(iv) = iv {
                    analyzer.add(&iv)?;
                }
            }
            Err(e) => {
                let reason = if line_no == 1 {
                    format!(
                        "not a recording (JSON lines from --save, or a probe's threads.csv): {e}"
                    )
                } else {
                    format!("not a snapshot: {e}")
                };
                let err = RecordingError::Bad {
                    line: line_no,
                    reason,
                };
                if complete || info.samples == 0 {
                    return Err(err);
                }
                // The last line, cut short: the recorder stopped mid-write.
                pending_err = Some(err);
            }
        }
    }
    if let Some(RecordingError::Bad { line, .. }) = pending_err {
        info.warnings.push(format!(
            "line {line}: the last line is incomplete (the recorder stopped mid-write): skipped"
        ));
    }
    if csv_mode && csv_second.is_some() {
        flush_csv_second(analyzer, csv_second, &mut csv_threads)?;
        info.samples += 1;
    }
    if line_no == 0 {
        return Err(RecordingError::Empty);
    }
    if analyzer.intervals() == 0 {
        return Err(RecordingError::TooShort {
            samples: info.samples,
        });
    }
    Ok(info)
}

fn parse_threads_csv_row(text: &str) -> Option<(i64, i32, String, f64)> {
    // second,tid,thread,cores: the thread name may contain commas (quoted) or spaces.
    let mut rd = csv::ReaderBuilder::new()
        .has_headers(false)
        .from_reader(text.as_bytes());
    let rec = rd.records().next()?.ok()?;
    if rec.len() != 4 {
        return None;
    }
    let cores: f64 = rec[3].parse().ok()?;
    if !cores.is_finite() || cores < 0.0 {
        return None;
    }
    Some((
        rec[0].parse().ok()?,
        rec[1].parse().ok()?,
        rec[2].to_string(),
        cores,
    ))
}

fn flush_csv_second(
    analyzer: &mut Analyzer,
    second: Option<i64>,
    threads: &mut Vec<ThreadCores>,
) -> io::Result<()> {
    let Some(s) = second else { return Ok(()) };
    threads.sort_by(|x, y| y.cores.total_cmp(&x.cores).then(x.tid.cmp(&y.tid)));
    let iv = IntervalCores {
        start_s: (s - 1) as f64,
        end_s: s as f64,
        process_cores: None,
        threads: std::mem::take(threads),
    };
    analyzer.add(&iv)
}

// ---------------------------------------------------------------------------------------
// Live sampling.

/// What to sample.
#[derive(Debug, Clone)]
pub enum Target {
    Pid(i32),
    /// Run this command (argv) and sample it until it exits.
    Command(Vec<String>),
}

/// How to sample.
#[derive(Debug, Clone)]
pub struct SampleOptions {
    pub interval: Duration,
    pub duration: Option<Duration>,
}

/// Why sampling could not start.
#[derive(Debug, thiserror::Error)]
pub enum SampleError {
    #[error("no such process: {0}")]
    NoSuchPid(i32),
    #[error("pid {pid}: {reason}")]
    Unreadable { pid: i32, reason: String },
    #[error("cannot run `{cmd}`: {reason}")]
    Spawn { cmd: String, reason: String },
    #[error("{0}")]
    Io(#[from] io::Error),
}

/// What live sampling found beside the intervals.
#[derive(Debug, Clone)]
pub struct SampleInfo {
    pub samples: u64,
    pub ended: String,
    pub command: Option<CommandOutcome>,
    /// Wall time spent reading /proc, over all samples.
    pub sampling_cost: Duration,
}

/// Samples `target` every `opts.interval`, feeding each snapshot to `on_snapshot` (for
/// `--save`) and each interval to `analyzer`. Returns when the process or command exits or
/// the duration is over; an error only when nothing could be sampled at all.
pub fn sample(
    target: &Target,
    opts: &SampleOptions,
    analyzer: &mut Analyzer,
    on_snapshot: &mut dyn FnMut(&Snapshot) -> io::Result<()>,
) -> Result<SampleInfo, SampleError> {
    let origin = Instant::now();
    let tps = threads::ticks_per_second();
    let mut child = None;
    let pid = match target {
        Target::Pid(p) => {
            if !std::path::Path::new(&format!("/proc/{p}")).exists() || *p <= 0 {
                return Err(SampleError::NoSuchPid(*p));
            }
            *p
        }
        Target::Command(argv) => {
            let Some((prog, args)) = argv.split_first() else {
                return Err(SampleError::Spawn {
                    cmd: String::new(),
                    reason: "no command given".into(),
                });
            };
            let mut cmd = std::process::Command::new(prog);
            cmd.args(args);
            // The command's stdout goes to our stderr: stdout is the report's (--json).
            #[cfg(unix)]
            {
                use std::os::fd::AsFd;
                if let Ok(fd) = io::stderr().as_fd().try_clone_to_owned() {
                    cmd.stdout(std::process::Stdio::from(fd));
                }
            }
            let c = cmd.spawn().map_err(|e| SampleError::Spawn {
                cmd: argv.join(" "),
                reason: e.to_string(),
            })?;
            let pid = c.id() as i32;
            child = Some(c);
            pid
        }
    };
    let mut intervals = SnapshotIntervals::new(tps);
    let mut samples = 0u64;
    let mut cost = Duration::ZERO;
    let ended: String;
    let mut command = None;
    let mut tick = 0u32;
    loop {
        if let Some(c) = child.as_mut() {
            if let Some(status) = c.try_wait()? {
                command = Some(outcome(status, false));
                ended = "the command exited".into();
                break;
            }
        }
        if child.is_none() && samples > 0 && exited(pid) {
            ended = "the process exited".into();
            break;
        }
        let t0 = Instant::now();
        let snap = threads::snapshot(Some(pid), origin);
        cost += t0.elapsed();
        match snap {
            Ok(s) => {
                samples += 1;
                on_snapshot(&s)?;
                if let Some(iv) = intervals.push(s) {
                    analyzer.add(&iv)?;
                }
            }
            Err(e) if samples == 0 && child.is_none() => {
                return Err(if e.to_string().contains("No such") {
                    SampleError::NoSuchPid(pid)
                } else {
                    SampleError::Unreadable {
                        pid,
                        reason: e.to_string(),
                    }
                });
            }
            Err(_) => {
                if child.is_none() {
                    ended = "the process exited".into();
                    break;
                }
                // A command between exit and reaping: the next try_wait sees it.
                std::thread::sleep(Duration::from_millis(10));
                continue;
            }
        }
        tick += 1;
        let mut next = opts.interval * tick;
        if let Some(d) = opts.duration {
            if origin.elapsed() >= d {
                ended = "--duration reached".into();
                if let Some(mut c) = child.take() {
                    let killed = c.try_wait()?.is_none();
                    if killed {
                        let _ = c.kill();
                    }
                    let status = c.wait()?;
                    command = Some(outcome(status, killed));
                }
                break;
            }
            next = next.min(d);
        }
        // Sleep to the next tick, waking early to notice a command's exit.
        loop {
            let now = origin.elapsed();
            if now >= next {
                break;
            }
            let left = next - now;
            if let Some(c) = child.as_mut() {
                if c.try_wait()?.is_some() {
                    break;
                }
                std::thread::sleep(left.min(Duration::from_millis(20)));
            } else {
                std::thread::sleep(left);
            }
        }
    }
    Ok(SampleInfo {
        samples,
        ended,
        command,
        sampling_cost: cost,
    })
}

/// A pid that is gone, or a zombie (exited, not yet reaped by its parent: no threads left).
fn exited(pid: i32) -> bool {
    match procfs::process::Process::new(pid).and_then(|p| p.stat()) {
        Ok(st) => matches!(st.state, 'Z' | 'X' | 'x'),
        Err(_) => true,
    }
}

fn outcome(status: std::process::ExitStatus, killed: bool) -> CommandOutcome {
    #[cfg(unix)]
    let signal = std::os::unix::process::ExitStatusExt::signal(&status);
    #[cfg(not(unix))]
    let signal = None;
    CommandOutcome {
        exit_code: status.code(),
        signal,
        killed_at_duration: killed,
    }
}

// ---------------------------------------------------------------------------------------
// Rendering.

fn short(name: &str, n: usize) -> String {
    if name.chars().count() <= n {
        name.to_string()
    } else {
        let mut s: String = name.chars().take(n - 1).collect();
        s.push('…');
        s
    }
}

impl ThreadCpuReport {
    /// Columns of the timeline table (the busiest threads).
    const TABLE_THREADS: usize = 4;
    /// Rows of the timeline table (buckets are merged to fit).
    const TABLE_ROWS: usize = 30;

    /// The human report (80 columns).
    pub fn render_text(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "analyze-thread-cpu: {}\n{} samples over {:.1} s (every {} ms), {} threads seen; \
             ended: {}",
            self.source,
            self.intervals + 1,
            self.duration_s,
            self.interval_ms,
            self.threads.len(),
            self.ended
        );
        if let Some(c) = &self.command {
            let _ = writeln!(out, "command: {}", describe_outcome(c));
        }
        if let Some(p) = self.process_cores_mean {
            let _ = writeln!(
                out,
                "process: {p:.2} cores mean ({}{})",
                self.process_kind_label(),
                if self.process_cores_from_threads {
                    ", sum of the listed threads"
                } else {
                    ""
                }
            );
        }
        if let Some(ms) = self.sampling_ms_per_sample {
            let _ = writeln!(
                out,
                "sampling: {ms:.2} ms per sample reading /proc (the tool's own cost)"
            );
        }
        for w in &self.warnings {
            let _ = writeln!(out, "warning: {w}");
        }
        self.render_timeline(&mut out);

        let _ = writeln!(
            out,
            "\ntop threads (cores over each thread's lifetime; --json for all {}):",
            self.threads.len()
        );
        let _ = writeln!(
            out,
            "  {:>7}  {:<15}  {:<21}  {:>5}  {:>5}  {:>7}  {:>5}",
            "tid", "thread", "role", "mean", "max", "cpu_s", "sat_s"
        );
        for t in self.threads.iter().take(self.top) {
            let _ = writeln!(
                out,
                "  {:>7}  {:<15}  {:<21}  {:>5.2}  {:>5.2}  {:>7.1}  {:>5.0}",
                t.tid,
                short(&t.name, 15),
                t.role.as_str(),
                t.cores_mean,
                t.cores_max,
                t.cpu_s,
                t.longest_saturated_s
            );
        }
        let _ = writeln!(
            out,
            "\nby role (numbers collapsed; cores over the whole run):"
        );
        let _ = writeln!(
            out,
            "  {:<22}  {:<21}  {:>7}  {:>5}  {:>8}",
            "group", "role", "threads", "cores", "max_one"
        );
        for g in self.groups.iter().take(self.top) {
            let _ = writeln!(
                out,
                "  {:<22}  {:<21}  {:>7}  {:>5.2}  {:>8.2}",
                short(&g.group, 22),
                g.role.as_str(),
                g.threads,
                g.cores_mean,
                g.cores_max_one_thread
            );
        }
        let _ = writeln!(
            out,
            "\nsaturated threads (≥ {} cores for ≥ {} s): {}",
            self.saturated_cores,
            self.saturated_seconds,
            if self.saturated.is_empty() {
                "none".to_string()
            } else {
                self.saturated.len().to_string()
            }
        );
        for s in self.saturated.iter().take(self.top) {
            let _ = writeln!(
                out,
                "  {} ({}, {}): {:.2} cores for {:.0} s from {:.0} s",
                s.name,
                s.tid,
                s.role.as_str(),
                s.cores_mean,
                s.seconds,
                s.from_s
            );
        }
        let _ = writeln!(out, "\ndiagnoses:");
        for d in &self.diagnoses {
            render_diagnosis(&mut out, d);
        }
        out
    }

    fn process_kind_label(&self) -> &'static str {
        match self.process_kind {
            ProcessKind::Librdkafka => "a librdkafka client: rdk:* threads",
            ProcessKind::Jvm => "a JVM: GC/JIT threads",
            ProcessKind::Other => "no librdkafka or JVM threads",
        }
    }

    /// The busiest threads, for the table and the chart.
    fn top_tids(&self, n: usize) -> Vec<&ThreadSummary> {
        self.threads
            .iter()
            .filter(|t| t.cpu_s > 0.0)
            .take(n)
            .collect()
    }

    /// Timeline rows merged to at most `max` rows.
    fn display_rows(&self, max: usize) -> Vec<TimelineRow> {
        let per = self.timeline.len().div_ceil(max.max(1)).max(1);
        self.timeline
            .chunks(per)
            .map(|chunk| {
                let start_s = chunk[0].start_s;
                let end_s = chunk[chunk.len() - 1].end_s;
                let span = (end_s - start_s).max(EPS);
                let mut cores: HashMap<i32, f64> = HashMap::new();
                let mut process = 0.0;
                for r in chunk {
                    let w = r.end_s - r.start_s;
                    process += r.process_cores * w;
                    for (&tid, &c) in &r.cores {
                        *cores.entry(tid).or_insert(0.0) += c * w;
                    }
                }
                cores.values_mut().for_each(|c| *c /= span);
                TimelineRow {
                    start_s,
                    end_s,
                    process_cores: process / span,
                    cores,
                }
            })
            .collect()
    }

    fn render_timeline(&self, out: &mut String) {
        let top = self.top_tids(Self::TABLE_THREADS);
        let rows = self.display_rows(Self::TABLE_ROWS);
        if rows.is_empty() {
            return;
        }
        let _ = writeln!(
            out,
            "\ncores per thread over time (busiest {}; --timeline FILE has all):",
            top.len()
        );
        let mut h1 = format!("  {:>13}  {:>7}", "seconds", "process");
        let mut h2 = format!("  {:>13}  {:>7}", "", "");
        for t in &top {
            let _ = write!(h1, "  {:>11}", short(&t.name, 11));
            let _ = write!(h2, "  {:>11}", t.tid);
        }
        let _ = writeln!(out, "{h1}");
        let _ = writeln!(out, "{h2}");
        for r in &rows {
            let mut line = format!(
                "  {:>13}  {:>7.2}",
                format!("{:.1}-{:.1}", r.start_s, r.end_s),
                r.process_cores
            );
            for t in &top {
                let _ = write!(
                    line,
                    "  {:>11.2}",
                    r.cores.get(&t.tid).copied().unwrap_or(0.0)
                );
            }
            let _ = writeln!(out, "{line}");
        }
    }

    /// An SVG chart of the busiest threads' cores over time.
    pub fn render_svg(&self, threads: usize) -> String {
        let top = self.top_tids(threads);
        let rows = self.display_rows(self.timeline.len().max(1));
        let series = top
            .iter()
            .map(|t| Series {
                label: format!("{} ({})", short(&t.name, 15), t.tid),
                points: rows
                    .iter()
                    .map(|r| {
                        (
                            (r.start_s + r.end_s) / 2.0,
                            r.cores.get(&t.tid).copied().unwrap_or(0.0),
                        )
                    })
                    .collect(),
            })
            .collect();
        LineChart {
            title: format!("Cores per thread: {}", self.source),
            x_label: "seconds".into(),
            y_label: "cores".into(),
            x_scale: Scale::Linear,
            x_format: plain_label,
            y_format: plain_label,
            series,
        }
        .render()
    }
}

fn describe_outcome(c: &CommandOutcome) -> String {
    let base = match (c.exit_code, c.signal) {
        (Some(code), _) => format!("exited with status {code}"),
        (None, Some(sig)) => format!("killed by signal {sig}"),
        (None, None) => "ended".into(),
    };
    if c.killed_at_duration {
        format!("{base} (killed by analyze-thread-cpu at --duration)")
    } else {
        base
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::threads::ThreadTicks;

    /// Snapshots at 0, 1, … s from per-second tick increments (100 ticks/s).
    fn run(threads: &[(i32, &str, &[u64])]) -> Vec<Snapshot> {
        let n = threads.iter().map(|t| t.2.len()).max().unwrap_or(0);
        let mut totals: Vec<u64> = vec![0; threads.len()];
        let mut out = Vec::new();
        for s in 0..=n {
            if s > 0 {
                for (i, t) in threads.iter().enumerate() {
                    totals[i] += t.2.get(s - 1).copied().unwrap_or(0);
                }
            }
            out.push(Snapshot {
                at_s: s as f64,
                process_ticks: totals.iter().sum(),
                threads: threads
                    .iter()
                    .enumerate()
                    .map(|(i, t)| ThreadTicks {
                        tid: t.0,
                        name: t.1.into(),
                        user_ticks: totals[i],
                        system_ticks: 0,
                    })
                    .collect(),
            });
        }
        out
    }

    fn analyze(snaps: Vec<Snapshot>, opts: Options) -> ThreadCpuReport {
        let mut iv = SnapshotIntervals::new(100);
        let mut a = Analyzer::new(opts);
        for s in snaps {
            if let Some(i) = iv.push(s) {
                a.add(&i).unwrap();
            }
        }
        a.finish(Source::Recording("test".into()), 100)
    }

    fn ids(r: &ThreadCpuReport) -> Vec<&str> {
        r.diagnoses.iter().map(|d| d.id.as_str()).collect()
    }

    #[test]
    fn roles_from_kernel_names() {
        assert_eq!(classify("rdk:broker1"), Role::RdkBroker);
        assert_eq!(classify("rdk:broker-1"), Role::RdkBroker);
        assert_eq!(classify("rdk:main"), Role::RdkMain);
        assert_eq!(classify("rdk:mock"), Role::RdkMock);
        assert_eq!(classify("rdk:bg"), Role::RdkOther);
        assert_eq!(classify("kafka-producer-"), Role::JavaProducerNetwork);
        assert_eq!(classify("kafka-coordinat"), Role::JavaHeartbeat);
        assert_eq!(classify("GC Thread#3"), Role::JvmGc);
        assert_eq!(classify("G1 Conc#0"), Role::JvmGc);
        assert_eq!(classify("G1 Refine#0"), Role::JvmGc);
        assert_eq!(classify("C2 CompilerThre"), Role::JvmJit);
        assert_eq!(classify("VM Thread"), Role::JvmOther);
        assert_eq!(classify("java"), Role::App);
        assert_eq!(classify("my (odd) name"), Role::App);
    }

    #[test]
    fn collapse_keeps_broker_ids_and_pool_numbers() {
        assert_eq!(collapse_name("pool-1-thread-7"), "pool-1-thread-*");
        assert_eq!(collapse_name("GC Thread#12"), "GC Thread#*");
        assert_eq!(collapse_name("rdk:broker1"), "rdk:broker1");
        assert_eq!(collapse_name("rdk:broker2"), "rdk:broker2");
        assert_eq!(collapse_name("C2 CompilerThre"), "C2 CompilerThre");
        assert_eq!(collapse_name("1234"), "1234");
        assert_eq!(collapse_name(""), "");
    }

    #[test]
    fn broker_thread_saturated_after_the_app_thread_is_fixed() {
        let r = analyze(
            run(&[
                (10, "consumer", &[40, 45, 40, 42, 41]),
                (11, "rdk:broker1", &[95, 96, 94, 97, 95]),
                (12, "rdk:main", &[1, 1, 1, 1, 1]),
            ]),
            Options::default(),
        );
        assert_eq!(r.process_kind, ProcessKind::Librdkafka);
        assert_eq!(r.threads[0].name, "rdk:broker1");
        assert_eq!(r.saturated.len(), 1);
        assert_eq!(r.saturated[0].seconds, 5.0);
        assert!((r.saturated[0].cores_mean - 0.954).abs() < 1e-9);
        assert_eq!(ids(&r), ["rdk-broker-saturated"]);
    }

    #[test]
    fn app_thread_of_a_librdkafka_client_means_the_batch_api() {
        let r = analyze(
            run(&[
                (10, "consumer", &[99, 99, 98, 99]),
                (11, "rdk:broker1", &[60, 60, 60, 60]),
            ]),
            Options::default(),
        );
        assert_eq!(ids(&r), ["app-thread-saturated"]);
        assert!(r.diagnoses[0].title.contains("batch API"));
        assert_eq!(r.diagnoses[0].evidence["thread"], "consumer");
    }

    #[test]
    fn saturation_needs_consecutive_seconds() {
        // 2 s busy, 1 s idle, 2 s busy: never 3 s in a row.
        let r = analyze(
            run(&[(5, "worker", &[100, 100, 10, 100, 100])]),
            Options::default(),
        );
        assert!(r.saturated.is_empty());
        assert_eq!(r.threads[0].longest_saturated_s, 2.0);
        assert_eq!(ids(&r), ["no-saturated-thread"]);
        // The same with a 2 s threshold: saturated.
        let r = analyze(
            run(&[(5, "worker", &[100, 100, 10, 100, 100])]),
            Options {
                saturated_seconds: 2.0,
                ..Options::default()
            },
        );
        assert_eq!(r.saturated.len(), 1);
        assert_eq!(ids(&r), ["saturated-thread"]);
    }

    #[test]
    fn jvm_consumer_thread_and_gc_domination() {
        let r = analyze(
            run(&[
                (1, "java", &[0, 0, 0, 0]),
                (2, "main", &[97, 96, 98, 97]),
                (3, "GC Thread#0", &[80, 90, 85, 80]),
                (4, "GC Thread#1", &[80, 90, 85, 80]),
                (5, "C2 CompilerThre", &[5, 1, 0, 0]),
            ]),
            Options::default(),
        );
        assert_eq!(r.process_kind, ProcessKind::Jvm);
        assert_eq!(
            ids(&r),
            ["java-consumer-thread-saturated", "gc-threads-dominate"]
        );
        let gc = r.groups.iter().find(|g| g.group == "GC Thread#*").unwrap();
        assert_eq!(gc.threads, 2);
        assert!((gc.cores_mean - 1.675).abs() < 1e-9, "{gc:?}");
    }

    #[test]
    fn threads_that_come_and_go() {
        let snaps = vec![
            Snapshot {
                at_s: 0.0,
                process_ticks: 0,
                threads: vec![ThreadTicks {
                    tid: 1,
                    name: "a".into(),
                    user_ticks: 0,
                    system_ticks: 0,
                }],
            },
            Snapshot {
                at_s: 1.0,
                process_ticks: 150,
                threads: vec![
                    ThreadTicks {
                        tid: 1,
                        name: "a".into(),
                        user_ticks: 100,
                        system_ticks: 0,
                    },
                    ThreadTicks {
                        tid: 2,
                        name: "b".into(),
                        user_ticks: 50,
                        system_ticks: 0,
                    },
                ],
            },
            // tid 1 exited (its ticks stay in the process total).
            Snapshot {
                at_s: 2.0,
                process_ticks: 260,
                threads: vec![ThreadTicks {
                    tid: 2,
                    name: "b".into(),
                    user_ticks: 100,
                    system_ticks: 0,
                }],
            },
        ];
        let r = analyze(snaps, Options::default());
        assert_eq!(r.threads.len(), 2);
        let a = r.threads.iter().find(|t| t.tid == 1).unwrap();
        assert_eq!(a.seconds, 1.0);
        assert_eq!(a.cores_mean, 1.0);
        assert_eq!(r.process_cores_mean, Some(1.3));
    }

    #[test]
    fn timeline_stays_bounded_and_keeps_the_cpu() {
        let busy: Vec<u64> = (0..1000)
            .map(|i| if i % 2 == 0 { 100 } else { 50 })
            .collect();
        let r = analyze(
            run(&[(1, "w", &busy)]),
            Options {
                max_buckets: 16,
                ..Options::default()
            },
        );
        assert!(r.timeline.len() <= 16, "{}", r.timeline.len());
        let cpu: f64 = r
            .timeline
            .iter()
            .map(|b| b.cores[&1] * (b.end_s - b.start_s))
            .sum();
        assert!((cpu - 750.0).abs() < 1e-6, "{cpu}");
        assert_eq!(r.threads[0].cpu_s, 750.0);
    }

    #[test]
    fn thousands_of_threads_with_odd_names_group_by_role() {
        let snap = |at_s: f64, ticks: u64| Snapshot {
            at_s,
            process_ticks: ticks * 3000,
            threads: (0..3000)
                .map(|i| ThreadTicks {
                    tid: 100 + i,
                    name: if i == 0 {
                        "a b) (c".into()
                    } else {
                        format!("pool-1-thread-{i}")
                    },
                    user_ticks: ticks,
                    system_ticks: 0,
                })
                .collect(),
        };
        let r = analyze(
            vec![snap(0.0, 0), snap(1.0, 1), snap(2.0, 3)],
            Options::default(),
        );
        assert_eq!(r.threads.len(), 3000);
        assert_eq!(r.threads[0].name, "a b) (c");
        let pool = r
            .groups
            .iter()
            .find(|g| g.group == "pool-1-thread-*")
            .unwrap();
        assert_eq!(pool.threads, 2999);
        assert!((pool.cores_mean - 2999.0 * 0.015).abs() < 1e-6, "{pool:?}");
        assert_eq!(r.process_cores_mean, Some(45.0));
        assert!(r.render_text().contains("pool-1-thread-*"));
    }

    #[test]
    fn threads_csv_from_a_probe_reads_as_one_second_intervals() {
        let csv = "second,tid,thread,cores\n2,10,rdk:broker1,0.950\n2,11,\"app, (x)\",0.5\n\
                   3,10,rdk:broker1,0.960\n4,10,rdk:broker1,0.940\n";
        let mut a = Analyzer::new(Options::default());
        let info = read_recording(csv.as_bytes(), &mut a, 100).unwrap();
        assert_eq!(info.samples, 3);
        let r = a.finish(Source::Recording("threads.csv".into()), 100);
        assert_eq!(r.duration_s, 3.0);
        assert_eq!(r.saturated[0].name, "rdk:broker1");
        assert!(r.process_cores_from_threads);
        assert!(r.threads.iter().any(|t| t.name == "app, (x)"));
    }

    #[test]
    fn garbage_and_empty_recordings_are_errors_not_panics() {
        for bad in [
            "",
            "hello world\n",
            "{\"at_s\": 1}\n",
            "second,tid,thread,cores\n",
            "second,tid,thread,cores\nx,y\n",
        ] {
            let mut a = Analyzer::new(Options::default());
            assert!(
                read_recording(bad.as_bytes(), &mut a, 100).is_err(),
                "{bad:?}"
            );
        }
        let mut a = Analyzer::new(Options::default());
        let bin: &[u8] = &[0xff, 0xfe, 0x00, 0x01, b'\n'];
        assert!(read_recording(bin, &mut a, 100).is_err());
    }

    #[test]
    fn a_cut_last_line_is_skipped_with_a_warning() {
        let mut buf = Vec::new();
        let header = RecordingHeader {
            recording: "kgap-thread-cpu".into(),
            version: 1,
            ticks_per_s: 100,
            interval_ms: 1000,
            pid: Some(1),
            command: None,
        };
        let mut w = RecordingWriter::new(&mut buf, &header).unwrap();
        for s in run(&[(1, "w", &[100, 100])]) {
            w.write(&s).unwrap();
        }
        buf.extend_from_slice(b"{\"at_s\":3.0,\"process_t");
        let mut a = Analyzer::new(Options::default());
        let info = read_recording(&buf[..], &mut a, 100).unwrap();
        assert_eq!(info.samples, 3);
        assert_eq!(info.warnings.len(), 1);
        assert_eq!(a.intervals(), 2);
    }
}
