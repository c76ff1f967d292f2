//! One record per thread, joined by thread id across every table, backtrace and dump of the
//! paste, and the [report](super::report) built from them.

use std::collections::{BTreeSet, HashMap};

use super::error::PasteError;
use super::format::{Figure, Format};
use super::lock_waits::{self, LockWait};
use super::options::PasteOptions;
use super::report::{
    BacktraceSummary, Iteration, JavaSummary, RoleCores, Section, SnapshotReport, SnapshotThread,
};
use super::stacks::{is_consumer_poll, Backtrace, Dump};
use super::table::{main_row, MainRow, Table};
use super::text::example;
use crate::engine::input::InputSummary;
use crate::thread_cpu::report::Source;
use crate::thread_cpu::roles::{classify_cut, classify_frames, collapse_name, ProcessKind, Role};
use crate::vocab::report::{round3, ExampleLine};

/// Most a thread's row may show: one core, and a little over for a tool's rounding and
/// sampling (top and pidstat show 100.3% now and then).
const ONE_THREAD_MAX_CORES: f64 = 1.1;

/// Iterations (top frames, pidstat reports) listed one by one; the means cover them all.
pub const MAX_ITERATIONS: usize = 240;
/// Frames kept per thread (the top of its stack is what tells).
const MAX_FRAMES: usize = 12;
/// Evidence lines kept per thread.
const MAX_EVIDENCE: usize = 6;
/// Warnings kept (the rest are counted).
const MAX_WARNINGS: usize = 40;
/// Heartbeat lock waits kept across dumps.
const MAX_LOCK_WAITS: usize = 256;

/// A name's source, best last: a JVM dump has the whole name, the kernel's `comm` 15 bytes,
/// top may cut that further to its column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum NameRank {
    Cut,
    Comm,
    Jvm,
}

#[derive(Debug, Clone, Default)]
struct Series {
    n: u32,
    sum: f64,
    max: f64,
    at_threshold: u32,
    per_iteration: Vec<(usize, f64)>,
}

#[derive(Debug, Clone, Copy)]
struct Point {
    snapshot: u32,
    cpu_s: f64,
    wall_s: f64,
}

#[derive(Debug, Clone, Default)]
struct Points {
    first: Option<Point>,
    last: Option<Point>,
}

impl Points {
    fn add(&mut self, p: Point) {
        if self.first.is_none() {
            self.first = Some(p);
        }
        self.last = Some(p);
    }

    /// Cores between the first and the last snapshot, and the seconds between them.
    fn rate(&self) -> Option<(f64, f64)> {
        let (a, b) = (self.first?, self.last?);
        let wall = b.wall_s - a.wall_s;
        (b.snapshot != a.snapshot && wall > 0.0)
            .then(|| (((b.cpu_s - a.cpu_s) / wall).max(0.0), wall))
    }
}

#[derive(Debug, Clone)]
struct Lifetime {
    cores: f64,
    life_s: Option<f64>,
}

#[derive(Debug, Clone, Default)]
struct Obs {
    tid: i32,
    pid: Option<i32>,
    name: Option<(NameRank, String)>,
    command: Option<String>,
    state: Option<String>,
    top: Series,
    pidstat: Series,
    pidstat_average: Option<f64>,
    since_boot: Option<f64>,
    lifetime: Option<Lifetime>,
    ps_points: Points,
    jvm_points: Points,
    cpu_s: Option<f64>,
    elapsed_s: Option<f64>,
    backtraces: u32,
    backtraces_waiting: u32,
    native_frames: Vec<String>,
    native_role: Option<Role>,
    java: Option<JavaSummary>,
    evidence: Vec<ExampleLine>,
    formats: BTreeSet<Format>,
    first_line: u64,
}

impl Obs {
    fn set_name(&mut self, rank: NameRank, name: &str) {
        if name.is_empty() {
            return;
        }
        if self.name.as_ref().is_none_or(|(r, _)| rank >= *r) {
            self.name = Some((rank, name.to_string()));
        }
    }

    fn evidence(&mut self, line: u64, text: &str) {
        if self.evidence.len() < MAX_EVIDENCE && !self.evidence.iter().any(|e| e.line == line) {
            self.evidence.push(example(line, text));
        }
    }
}

/// Collects what the readers found.
pub struct Collector {
    pub(crate) opts: PasteOptions,
    threads: HashMap<i32, Obs>,
    sections: Vec<Section>,
    iterations: Vec<Iteration>,
    iterations_total: u64,
    /// Clock of the previous top frame, for top's delay.
    last_top_clock: Option<u32>,
    ps_snapshots: u32,
    since_boot_tables: u32,
    dumps: u32,
    pub(crate) lock_waits: Vec<LockWait>,
    jvm_seen: bool,
    warnings: Vec<String>,
    warnings_dropped: u64,
    prose: u64,
    lines: u64,
    first_prose: Vec<String>,
    headers_without_rows: Vec<(Format, u64)>,
    pids: BTreeSet<i32>,
    process_total_rows: u64,
    maybe_total_warned: bool,
    unusable: Vec<(Format, u64, String)>,
    /// (tool, tid) of the rows read as the process's total.
    total_rows: BTreeSet<(Format, i32)>,
}

impl Collector {
    pub fn new(opts: PasteOptions) -> Self {
        Collector {
            opts,
            threads: HashMap::new(),
            sections: Vec::new(),
            iterations: Vec::new(),
            iterations_total: 0,
            last_top_clock: None,
            ps_snapshots: 0,
            since_boot_tables: 0,
            dumps: 0,
            lock_waits: Vec::new(),
            jvm_seen: false,
            warnings: Vec::new(),
            warnings_dropped: 0,
            prose: 0,
            lines: 0,
            first_prose: Vec::new(),
            headers_without_rows: Vec::new(),
            pids: BTreeSet::new(),
            process_total_rows: 0,
            maybe_total_warned: false,
            unusable: Vec::new(),
            total_rows: BTreeSet::new(),
        }
    }

    /// Anything read yet.
    pub fn recognised(&self) -> bool {
        !self.sections.is_empty() || !self.unusable.is_empty()
    }

    pub fn warn(&mut self, w: String) {
        if self.warnings.len() < MAX_WARNINGS {
            self.warnings.push(w);
        } else {
            self.warnings_dropped += 1;
        }
    }

    pub fn prose(&mut self, no: u64, line: &str) {
        self.lines = self.lines.max(no);
        if line.trim().is_empty() {
            return;
        }
        self.prose += 1;
        if self.first_prose.len() < 3 {
            self.first_prose.push(format!(
                "line {no}: {}",
                line.chars().take(70).collect::<String>()
            ));
        }
    }

    /// A table this tool cannot use (processes, not threads).
    pub fn unusable(&mut self, format: Format, line: u64, reason: &str) {
        if self.unusable.is_empty() {
            self.warn(format!("line {line}: {reason}: skipped"));
        }
        if self.unusable.len() < MAX_WARNINGS {
            self.unusable.push((format, line, reason.to_string()));
        }
        self.lines = self.lines.max(line);
    }

    /// A column header with no row under it.
    pub fn header_without_rows(&mut self, format: Format, line: u64) {
        if self.headers_without_rows.len() < MAX_WARNINGS {
            self.headers_without_rows.push((format, line));
        }
        self.warn(format!(
            "line {line}: {} column header with no row under it (a cut paste?)",
            format.as_str()
        ));
    }

    fn section(
        &mut self,
        format: Format,
        first: u64,
        last: u64,
        threads: u32,
        figure: Option<Figure>,
    ) {
        self.lines = self.lines.max(last);
        // One section per tool and figure: the frames of a top -b run, the dumps of a series,
        // and (bounded) the parts of a paste that alternates top and gdb.
        if let Some(s) = self
            .sections
            .iter_mut()
            .find(|s| s.format == format && s.figure == figure)
        {
            s.first_line = s.first_line.min(first);
            s.last_line = s.last_line.max(last);
            s.parts += 1;
            s.threads += threads;
            return;
        }
        self.sections.push(Section {
            format,
            first_line: first,
            last_line: last,
            parts: 1,
            threads,
            figure,
        });
    }

    fn obs(&mut self, tid: i32, line: u64) -> &mut Obs {
        self.threads.entry(tid).or_insert_with(|| Obs {
            tid,
            first_line: line,
            ..Obs::default()
        })
    }

    /// One table: a top frame, one ps output, one pidstat report.
    pub fn table(&mut self, mut t: Table) {
        if t.rows.is_empty() {
            self.header_without_rows(t.format, t.header_line);
            return;
        }
        // procps shows the main thread's row with the whole process's CPU.
        if t.format != Format::Pidstat {
            // Once a row is the process's total, it is in every table of that tool.
            let known = t
                .rows
                .iter()
                .position(|r| self.total_rows.contains(&(t.format, r.tid)))
                .map(MainRow::Total);
            match known.or_else(|| main_row(&t.rows)) {
                Some(MainRow::Total(i)) => {
                    let r = t.rows.remove(i);
                    self.total_rows.insert((t.format, r.tid));
                    self.process_total_rows += 1;
                    if self.process_total_rows == 1 {
                        self.warn(format!(
                            "line {}: tid {}'s row is the whole process's CPU ({:.2} cores), \
                             not a thread's: procps' top -H and ps -L show the main thread \
                             (tid = pid) with the process's totals; read as the process total",
                            r.line,
                            r.tid,
                            r.cores.unwrap_or(0.0)
                        ));
                    }
                    if t.process_cores.is_none() {
                        t.process_cores = r.cores;
                    }
                    let o = self.obs(r.tid, r.line);
                    o.formats.insert(t.format);
                    if let Some(n) = &r.name {
                        o.set_name(
                            if r.name_cut {
                                NameRank::Cut
                            } else {
                                NameRank::Comm
                            },
                            n,
                        );
                    }
                    o.pid = o.pid.or(r.pid).or(Some(r.tid));
                }
                Some(MainRow::Maybe(i)) if !self.maybe_total_warned => {
                    self.maybe_total_warned = true;
                    let r = &t.rows[i];
                    self.warn(format!(
                        "line {}: tid {} (the main thread) shows {:.2} cores, at least all the \
                         other rows together: procps' top -H and ps -L (4.0.2, for one) show \
                         the main thread with the whole process's CPU, so this may be the \
                         process; pidstat -t shows the thread's own",
                        r.line,
                        r.tid,
                        r.cores.unwrap_or(0.0)
                    ));
                }
                _ => {}
            }
        }
        let threshold = self.opts.saturated_cores;
        let interval = t.figure == Figure::Interval && !t.average;
        let iteration = if interval {
            self.iterations_total += 1;
            let over = match t.format {
                Format::Top => {
                    let prev = self.last_top_clock;
                    self.last_top_clock = t.clock;
                    match (prev, t.clock) {
                        (Some(a), Some(b)) => Some(((b + 86400 - a) % 86400) as f64),
                        _ => None,
                    }
                }
                _ => t.over_s,
            };
            let process = t
                .process_cores
                .unwrap_or_else(|| t.rows.iter().filter_map(|r| r.cores).sum());
            if self.iterations.len() < MAX_ITERATIONS {
                self.iterations.push(Iteration {
                    format: t.format,
                    line: t.header_line,
                    clock: t.clock.map(clock_text),
                    over_s: over,
                    process_cores: round3(process),
                });
                Some(self.iterations.len() - 1)
            } else {
                None
            }
        } else {
            None
        };
        if t.format == Format::Ps {
            self.ps_snapshots += 1;
        }
        if t.figure == Figure::SinceBoot && self.since_boot_tables == 0 {
            self.since_boot_tables += 1;
            self.warn(format!(
                "line {}: pidstat without an interval reports CPU time since boot, not how busy \
                 a thread is now: run `pidstat -t -p PID 1 5` (5 reports of 1 s)",
                t.header_line
            ));
        }
        let snapshot = self.ps_snapshots;
        let n = t.rows.len() as u32;
        for r in &t.rows {
            if let Some(p) = r.pid {
                self.pids.insert(p);
            }
            let o = self.obs(r.tid, r.line);
            o.formats.insert(t.format);
            o.pid = o.pid.or(r.pid);
            if let Some(n) = &r.name {
                o.set_name(
                    if r.name_cut {
                        NameRank::Cut
                    } else {
                        NameRank::Comm
                    },
                    n,
                );
            }
            if r.command.is_some() {
                o.command = r.command.clone();
            }
            if r.state.is_some() {
                o.state = r.state.clone();
            }
            if r.cpu_s.is_some() {
                o.cpu_s = r.cpu_s;
            }
            if r.elapsed_s.is_some() {
                o.elapsed_s = r.elapsed_s;
            }
            o.evidence(r.line, &r.text);
            let Some(cores) = r.cores else { continue };
            match (t.figure, t.average) {
                (Figure::Interval, true) => o.pidstat_average = Some(cores),
                (Figure::Interval, false) => {
                    let s = if t.format == Format::Top {
                        &mut o.top
                    } else {
                        &mut o.pidstat
                    };
                    s.n += 1;
                    s.sum += cores;
                    s.max = s.max.max(cores);
                    s.at_threshold += (cores >= threshold) as u32;
                    if let Some(i) = iteration {
                        s.per_iteration.push((i, cores));
                    }
                }
                (Figure::Lifetime, _) => {
                    o.lifetime = Some(Lifetime {
                        cores,
                        life_s: r.elapsed_s,
                    })
                }
                (Figure::SinceBoot, _) => o.since_boot = Some(cores),
                (Figure::BetweenSnapshots, _) => {}
            }
            if let (Format::Ps, Some(cpu), Some(wall)) = (t.format, r.cpu_s, r.elapsed_s) {
                o.ps_points.add(Point {
                    snapshot,
                    cpu_s: cpu,
                    wall_s: wall,
                });
            }
        }
        let figure = Some(t.figure);
        self.section(t.format, t.header_line, t.last_line, n, figure);
    }

    /// One thread's backtrace.
    pub fn backtrace(&mut self, b: Backtrace) {
        let o = self.obs(b.tid, b.line);
        o.formats.insert(Format::Gdb);
        if let Some(n) = &b.name {
            o.set_name(NameRank::Comm, n);
        }
        o.backtraces += 1;
        o.backtraces_waiting += b.waiting as u32;
        o.native_frames = b.frames.iter().take(MAX_FRAMES).cloned().collect();
        if let Some(r) = classify_frames(&b.frames) {
            o.native_role = Some(r);
        }
        o.evidence(b.line, &b.text);
        for (l, t) in b.top_lines.iter().take(2) {
            o.evidence(*l, t);
        }
        self.section(Format::Gdb, b.line, b.last_line, 1, None);
    }

    /// A backtrace with no thread line: it cannot be joined to a thread.
    pub fn orphan_backtrace(&mut self, line: u64) {
        self.warn(format!(
            "line {line}: a backtrace with no `Thread N (… (LWP tid))` line: not joined to a \
             thread (use gdb's `thread apply all bt`)"
        ));
    }

    /// One JVM thread dump (all its threads).
    pub fn dump(&mut self, d: Dump) {
        self.jvm_seen = true;
        self.dumps += 1;
        let index = self.dumps;
        if let Some(p) = d.pid {
            self.pids.insert(p);
        }
        let mut without_nid = 0;
        for t in &d.threads {
            let Some(nid) = t.nid else {
                without_nid += 1;
                continue;
            };
            let o = self.obs(nid, t.line);
            o.formats.insert(Format::JvmDump);
            o.set_name(NameRank::Jvm, &t.name);
            if d.pid.is_some() {
                o.pid = o.pid.or(d.pid);
            }
            if let (Some(cpu), Some(el)) = (t.cpu_ms, t.elapsed_s) {
                o.jvm_points.add(Point {
                    snapshot: index,
                    cpu_s: cpu / 1000.0,
                    wall_s: el,
                });
                if el > 0.0 {
                    o.lifetime = Some(Lifetime {
                        cores: cpu / 1000.0 / el,
                        life_s: Some(el),
                    });
                }
                o.cpu_s = Some(cpu / 1000.0);
                o.elapsed_s = Some(el);
            }
            o.state = t.state.clone().or_else(|| Some(t.os_state.clone()));
            o.java = Some(JavaSummary {
                name: t.name.clone(),
                state: t.state.clone(),
                os_state: t.os_state.clone(),
                frames: t.frames.iter().take(MAX_FRAMES).cloned().collect(),
                locks_held: t.held.iter().map(|l| l.describe()).collect(),
                waiting_for: t
                    .waiting
                    .as_ref()
                    .map(|l| format!("{} {}", l.how, l.describe())),
            });
            o.evidence(t.line, &t.text);
        }
        if without_nid > 0 {
            self.warn(format!(
                "lines {}-{}: {without_nid} thread(s) of the dump have no nid= (cut lines?): \
                 not joined to a thread id",
                d.first_line, d.last_line
            ));
        }
        // Memory must not follow the number of dumps: the first waits tell.
        let room = MAX_LOCK_WAITS.saturating_sub(self.lock_waits.len());
        self.lock_waits
            .extend(lock_waits::lock_waits(&d, index).into_iter().take(room));
        let threads = d.threads.len() as u32;
        let figure = d
            .threads
            .iter()
            .any(|t| t.cpu_ms.is_some())
            .then_some(Figure::Lifetime);
        self.section(Format::JvmDump, d.first_line, d.last_line, threads, figure);
    }

    /// The report, or why there is none.
    pub fn finish(mut self, name: &str, input: InputSummary) -> Result<SnapshotReport, PasteError> {
        let lines = self.lines.max(self.prose);
        // An abbreviated dump joins no thread id (no nid), yet its lock waits are read.
        if self.threads.is_empty() && self.lock_waits.is_empty() {
            if let Some((_, l, reason)) = self.unusable.first() {
                return Err(PasteError::NoThreads(format!(
                    "line {l}: {reason}: nothing to analyse"
                )));
            }
            if !self.headers_without_rows.is_empty() {
                let (f, l) = self.headers_without_rows[0];
                return Err(PasteError::NoThreads(format!(
                    "line {l}: {} column header, but no thread row under it{}: nothing to \
                     analyse (paste the whole table)",
                    f.as_str(),
                    if self.headers_without_rows.len() > 1 {
                        format!(" (nor under {} more)", self.headers_without_rows.len() - 1)
                    } else {
                        String::new()
                    }
                )));
            }
            let hint = if self.first_prose.is_empty() {
                String::new()
            } else {
                format!("; it starts: {}", self.first_prose[0])
            };
            return Err(PasteError::Nothing {
                lines: input_lines(&input, lines),
                hint,
            });
        }
        if self.iterations_total > MAX_ITERATIONS as u64 {
            let n = self.iterations_total - MAX_ITERATIONS as u64;
            self.warn(format!(
                "{n} frames or reports after the first {MAX_ITERATIONS} are in the means but not \
                 listed one by one"
            ));
        }
        if self.warnings_dropped > 0 {
            let n = self.warnings_dropped;
            self.warnings.push(format!("{n} more warnings not shown"));
        }
        let threshold = self.opts.saturated_cores;
        let n_iter = self.iterations.len();
        let mut threads: Vec<SnapshotThread> = self
            .threads
            .into_values()
            .map(|o| build(o, n_iter))
            .collect();
        threads.sort_by(|a, b| {
            b.rate()
                .unwrap_or(-1.0)
                .total_cmp(&a.rate().unwrap_or(-1.0))
                .then(a.tid.cmp(&b.tid))
        });
        let kind = if threads.iter().any(|t| t.role.is_rdk()) {
            ProcessKind::Librdkafka
        } else if self.jvm_seen || threads.iter().any(|t| t.role.is_jvm_internal()) {
            ProcessKind::Jvm
        } else {
            ProcessKind::Other
        };
        let mut roles: Vec<RoleCores> = Vec::new();
        for t in &threads {
            let Some(c) = t.rate() else { continue };
            match roles.iter_mut().find(|r| r.role == t.role) {
                Some(r) => {
                    r.threads += 1;
                    r.cores += c;
                }
                None => roles.push(RoleCores {
                    role: t.role,
                    threads: 1,
                    cores: c,
                }),
            }
        }
        roles.iter_mut().for_each(|r| r.cores = round3(r.cores));
        roles.sort_by(|a, b| b.cores.total_cmp(&a.cores));
        // One thread runs on one core at a time: a row above it is not a thread's figure
        // (a process row, or a tool that mis-reports, as Android's toybox top -H did), so
        // it is not read as a saturated thread.
        let impossible: Vec<&SnapshotThread> = threads
            .iter()
            .filter(|t| t.rate().is_some_and(|c| c > ONE_THREAD_MAX_CORES))
            .collect();
        if let Some(worst) = impossible.first() {
            self.warnings.push(format!(
                "{} thread row(s) above one core ({} at {:.2} cores): one thread cannot use \
                 more than a core, so this table's figures are not threads' shares (process \
                 rows, or a tool that mis-reports): no thread of it is read as saturated",
                impossible.len(),
                worst.name,
                worst.rate().unwrap_or(0.0)
            ));
        }
        // Nothing but such tables: no figure of the paste is a thread's, nothing to judge.
        let tables_only = self.sections.iter().all(|s| s.format.is_table());
        if let (Some(worst), true) = (impossible.first(), tables_only) {
            return Err(PasteError::NotThreadsShares {
                line: worst.evidence.first().map_or(0, |e| e.line),
                name: worst.name.clone(),
                cores: worst.rate().unwrap_or(0.0),
                more: impossible.len() - 1,
            });
        }
        let saturated: Vec<SnapshotThread> = threads
            .iter()
            .filter(|t| impossible.is_empty() && t.rate().is_some_and(|c| c >= threshold))
            .cloned()
            .collect();
        for s in &mut self.sections {
            if s.format == Format::Ps && self.ps_snapshots >= 2 {
                s.figure = Some(Figure::Lifetime);
            }
        }
        let mut report = SnapshotReport {
            source: Source::Snapshot(name.to_string()),
            kind: "snapshot",
            lines_read: input_lines(&input, lines),
            input,
            lines_skipped: self.prose,
            sections: self.sections,
            process_kind: kind,
            pids: self.pids.into_iter().collect(),
            saturated_cores: threshold,
            threads,
            roles,
            saturated,
            iterations: self.iterations,
            iterations_not_listed: self.iterations_total.saturating_sub(MAX_ITERATIONS as u64),
            diagnoses: Vec::new(),
            warnings: self.warnings,
            top: self.opts.top,
        };
        report.diagnoses =
            crate::findings::diagnoses::thread_cpu::snapshot::diagnose(&report, &self.lock_waits);
        Ok(report)
    }
}

fn input_lines(_input: &InputSummary, lines: u64) -> u64 {
    lines
}

fn clock_text(s: u32) -> String {
    format!("{:02}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}

fn build(o: Obs, n_iter: usize) -> SnapshotThread {
    let (name, rank) = match &o.name {
        Some((r, n)) => (n.clone(), Some(*r)),
        None => (format!("tid {}", o.tid), None),
    };
    let name_cut = matches!(rank, Some(NameRank::Cut));
    let head = name.strip_suffix('+').filter(|_| name_cut).unwrap_or(&name);
    let by_name = if rank.is_none() {
        Role::App
    } else if name_cut {
        classify_cut(head)
    } else {
        crate::thread_cpu::roles::classify(&name)
    };
    // A native backtrace in librdkafka's thread functions says what the thread is, whatever
    // its name; a Java stack in KafkaConsumer.poll marks the poll thread.
    let role = match (o.native_role, &o.java) {
        (Some(r), _) => r,
        (None, Some(j)) if by_name == Role::App && is_consumer_poll(&j.frames) => {
            Role::JavaConsumerPoll
        }
        _ => by_name,
    };
    let series = if o.top.n > 0 { &o.top } else { &o.pidstat };
    let between = o.jvm_points.rate().or_else(|| o.ps_points.rate());
    let lifetime = o.lifetime.as_ref();
    let (cores_mean, cores_max, figure, over_s) = if series.n > 0 {
        let over = None;
        (
            Some(series.sum / series.n as f64),
            Some(series.max),
            Some(Figure::Interval),
            over,
        )
    } else if let Some(a) = o.pidstat_average {
        (Some(a), Some(a), Some(Figure::Interval), None)
    } else if let Some((c, gap)) = between {
        (Some(c), None, Some(Figure::BetweenSnapshots), Some(gap))
    } else if let Some(l) = lifetime {
        (Some(l.cores), None, Some(Figure::Lifetime), l.life_s)
    } else if let Some(c) = o.since_boot {
        (Some(c), None, Some(Figure::SinceBoot), None)
    } else {
        (None, None, None, None)
    };
    let mut per_iteration = vec![None; n_iter];
    let mut listed = false;
    if figure == Some(Figure::Interval) {
        for &(i, c) in &series.per_iteration {
            if i < n_iter {
                per_iteration[i] = Some(round3(c));
                listed = true;
            }
        }
    }
    if !listed {
        per_iteration.clear();
    }
    SnapshotThread {
        tid: o.tid,
        pid: o.pid,
        group: collapse_name(head),
        name,
        name_cut,
        role,
        cores_mean: cores_mean.map(round3),
        cores_max: cores_max.map(round3),
        figure,
        over_s: over_s.map(round3),
        iterations: if figure == Some(Figure::Interval) {
            series.n
        } else {
            0
        },
        iterations_at_threshold: if figure == Some(Figure::Interval) {
            series.at_threshold
        } else {
            0
        },
        per_iteration,
        lifetime_cores: lifetime.map(|l| round3(l.cores)),
        between_snapshots_cores: between.map(|(c, _)| round3(c)),
        cpu_s: o.cpu_s.map(round3),
        elapsed_s: o.elapsed_s.map(round3),
        state: o.state,
        command: o.command,
        backtrace: (o.backtraces > 0).then_some(BacktraceSummary {
            samples: o.backtraces,
            waiting: o.backtraces_waiting,
            frames: o.native_frames,
        }),
        java: o.java,
        sources: o.formats.into_iter().collect(),
        evidence: o.evidence,
        first_line: o.first_line,
    }
}
