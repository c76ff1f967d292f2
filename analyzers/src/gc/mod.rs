//! `analyze-gc-log`: a JVM GC log into pauses, GC time per window, heap after young
//! GC, and diagnoses in the post's terms ("the producer that collapsed at K=16").
//!
//! Formats: JDK 9+ unified logging (`-Xlog:gc` or `-Xlog:gc*`, any decorations) for
//! G1, Parallel, Serial, ZGC (also generational) and Shenandoah; JDK 8
//! `-XX:+PrintGCDetails` for G1, Parallel, CMS and Serial. Input streams through one
//! fixed buffer ([`scan`]): memory stays flat whatever the log's size.
//!
//! ```no_run
//! use kgap_analyzers::gc::{analyze_gc_logs, GcInput, GcLogOptions};
//! let file = std::fs::File::open("gc.log").unwrap();
//! let report = analyze_gc_logs(
//!     vec![GcInput { name: "gc.log".into(), reader: Box::new(file) }],
//!     &GcLogOptions::default(),
//!     None,
//! )
//! .unwrap();
//! for d in &report.diagnoses {
//!     println!("{}: {}", d.id, d.title);
//! }
//! ```

mod diagnose;
pub(crate) mod event;
pub mod files;
mod legacy;
mod render;
pub(crate) mod scan;
mod series;
pub mod svg;
pub(crate) mod unified;
mod windows;

use std::io::{Read, Write};

use serde::Serialize;

use crate::error::AnalyzeError;
use crate::input::Input;
use crate::report::{Diagnosis, Dist, ExampleLine, Examples};
use event::{Collector, Event, HeapChange, PauseClass};
use legacy::{LegacyAssembler, LegacyStamp};
pub use series::Point;
use series::Series;
pub use windows::WindowSummary;
use windows::Windows;

/// Options of one analysis.
#[derive(Debug, Clone)]
pub struct GcLogOptions {
    /// Width of the windows GC time is measured in (seconds).
    pub window_s: f64,
    /// Pauses at least this long count as long (G1's default pause goal is 200 ms).
    pub long_pause_ms: f64,
    /// The collapse rule: a window with at least this share of GC time…
    pub collapse_gc_share: f64,
    /// …while the heap after young GC is at least this share of the maximum.
    pub collapse_heap_share: f64,
    /// The maximum heap (bytes) when the log does not say (`-Xmx`).
    pub max_heap_bytes: Option<f64>,
    /// Read buffer; lines longer than this are analysed by their head.
    pub buffer_bytes: usize,
}

impl Default for GcLogOptions {
    fn default() -> Self {
        GcLogOptions {
            window_s: 1.0,
            long_pause_ms: 200.0,
            collapse_gc_share: 0.20,
            collapse_heap_share: 0.80,
            max_heap_bytes: None,
            buffer_bytes: scan::BUFFER_BYTES,
        }
    }
}

/// One input: a name for messages and a reader (plain or gzip).
pub struct GcInput<'a> {
    pub name: String,
    pub reader: Box<dyn Read + 'a>,
}

/// Pause statistics (milliseconds).
#[derive(Debug, Clone, Default, Serialize)]
pub struct PauseStats {
    pub count: u64,
    pub total_ms: f64,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
}

/// Pause statistics of one pause type (`Pause Young (Normal)`, `Pause Full`, …).
#[derive(Debug, Clone, Serialize)]
pub struct PauseTypeStats {
    pub kind: String,
    #[serde(flatten)]
    pub stats: PauseStats,
}

/// How often something happened, by name.
#[derive(Debug, Clone, Serialize)]
pub struct Count {
    pub what: String,
    pub count: u64,
}

/// Heap after collections as a share of the maximum heap, and where it is heading.
#[derive(Debug, Clone, Serialize)]
pub struct HeapTrend {
    /// Collections measured.
    pub count: u64,
    pub first_pct: f64,
    pub last_pct: f64,
    pub min_pct: f64,
    pub max_pct: f64,
    pub mean_pct: f64,
    /// Collections that left the heap at least the collapse share full.
    pub at_or_above_collapse_share: u64,
    /// Least-squares slope, percentage points of the max per minute of log time.
    pub trend_pct_per_min: Option<f64>,
    /// `rising`, `flat` or `falling` (±1 point per minute).
    pub trend: &'static str,
}

/// G1 humongous objects (at least half a region each).
#[derive(Debug, Clone, Default, Serialize)]
pub struct Humongous {
    /// Pauses whose cause was a humongous allocation.
    pub gcs_caused: u64,
    /// Most humongous regions after a GC.
    pub max_regions: Option<u64>,
    pub max_mb: Option<f64>,
}

/// ZGC allocation stalls: application threads waiting for the collector.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Stalls {
    pub count: u64,
    pub total_ms: f64,
    pub max_ms: f64,
    /// Stalls counted by ZGC's own per-cycle table, when it prints one.
    pub counted_by_gc: u64,
}

/// What young collections moved into the old generation, and what old collections
/// then found dead there.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Promotion {
    /// Young GCs with old-generation numbers (gen lines, or G1 old regions).
    pub young_gcs_measured: u64,
    pub promoted_mb: f64,
    /// Full GCs: heap freed, and heap before them.
    pub full_gc_freed_mb: f64,
    pub full_gc_before_mb: f64,
    /// `new threshold N (max threshold M)` lines, and those with N ≤ 1 < M.
    pub tenuring_lines: u64,
    pub tenuring_threshold_low: u64,
}

/// What the input looked like as a whole.
#[derive(Debug, Clone, Default, Serialize)]
pub struct GcInputSummary {
    pub bytes: u64,
    pub lines: u64,
    /// Lines parsed (the rest held no anchor word and were only counted).
    pub lines_parsed: u64,
    pub gzip: bool,
    pub lines_truncated: u64,
    pub binary_at_offset: Option<u64>,
    pub unterminated_last_line: bool,
}

/// The report: the documented JSON contract of `analyze-gc-log --json`.
#[derive(Debug, Clone, Serialize)]
pub struct GcReport {
    pub tool: &'static str,
    pub files: Vec<String>,
    /// `G1`, `Parallel`, `Serial`, `CMS`, `ZGC`, `ZGC (generational)`, `Shenandoah`,
    /// `mixed: …` when several appear, or null.
    pub collector: Option<String>,
    /// `unified` (JDK 9+) or `legacy` (JDK 8 PrintGCDetails); `mixed` when both.
    pub format: Option<&'static str>,
    /// The JVM's version when the log says it.
    pub jdk: Option<String>,
    /// What the log's wording implies about the JDK when it does not say.
    pub jdk_hint: Option<String>,
    /// The clock windows are measured on: `uptime`, `wall` (epoch seconds) or `none`.
    pub clock: &'static str,
    pub start_s: Option<f64>,
    pub end_s: Option<f64>,
    pub duration_s: Option<f64>,
    /// First and last `GC(N)` ids (a log that starts at GC(1415) started mid-stream).
    pub gc_id_first: Option<u64>,
    pub gc_id_last: Option<u64>,
    pub max_heap_mb: Option<f64>,
    /// `log`, `largest heap capacity seen` (a lower bound), `option`, or null.
    pub max_heap_source: Option<&'static str>,
    pub pauses: PauseStats,
    pub pauses_by_type: Vec<PauseTypeStats>,
    pub causes: Vec<Count>,
    pub full_gcs: u64,
    pub full_gc_ms: f64,
    pub degenerated_gcs: u64,
    pub evacuation_failures: u64,
    pub window_s: f64,
    /// GC time over wall time in the worst window (null without timestamps).
    pub gc_fraction_max_window: Option<f64>,
    pub worst_window: Option<WindowSummary>,
    /// The GC-heaviest window that also left the heap at least the collapse share full
    /// (the window `gc-collapse` quotes), or null when none did.
    pub worst_collapse_window: Option<WindowSummary>,
    /// Windows with GC ≥ the collapse share, and those with the heap also full.
    pub windows: u64,
    pub windows_gc_over_share: u64,
    pub windows_collapsed: u64,
    pub heap_after_young: Option<HeapTrend>,
    pub heap_after_gc: Option<HeapTrend>,
    pub humongous: Humongous,
    pub allocation_stalls: Stalls,
    pub concurrent_failures: Vec<Count>,
    pub promotion: Promotion,
    pub diagnoses: Vec<Diagnosis>,
    pub warnings: Vec<String>,
    /// Why the input could not be analysed (exit status 2), or null.
    pub unsupported: Option<String>,
    pub input: GcInputSummary,
    pub timeline_rows: Option<u64>,
    /// Heap after GC (% of max) and pause (ms) over time, for `--svg`.
    #[serde(skip)]
    pub heap_points: Vec<Point>,
    #[serde(skip)]
    pub pause_points: Vec<Point>,
}

impl GcReport {
    /// The input held a GC log this tool could read.
    pub fn is_usable(&self) -> bool {
        self.unsupported.is_none()
    }

    /// The human report (80 columns).
    pub fn render_text(&self) -> String {
        render::text(self)
    }

    /// The SVG of heap after GC and pause times.
    pub fn render_svg(&self) -> String {
        svg::render(self)
    }
}

/// Analyse one GC log (or several, the rotated files of one JVM, in the order given:
/// see [`files::order_by_first_timestamp`]). `timeline` receives one CSV row per window.
pub fn analyze_gc_logs<'a, 'w>(
    inputs: Vec<GcInput<'a>>,
    opts: &GcLogOptions,
    timeline: Option<Box<dyn Write + 'w>>,
) -> Result<GcReport, AnalyzeError> {
    let with_timeline = timeline.is_some();
    let mut a = Analyzer::new(opts, timeline);
    let ac = scan::anchors();
    for (index, input) in inputs.into_iter().enumerate() {
        a.file = index;
        a.files.push(input.name);
        let input = Input::detect(input.reader).map_err(AnalyzeError::Read)?;
        let gzip = input.is_gzip();
        a.summary.gzip |= gzip;
        a.first_line_of_file = true;
        let s = scan::scan(input, &ac, opts.buffer_bytes, &mut a).map_err(|source| {
            if gzip {
                AnalyzeError::Gzip {
                    bytes_read: 0,
                    source,
                }
            } else {
                AnalyzeError::Read(source)
            }
        })?;
        a.end_of_file(&s);
    }
    a.finish(with_timeline)
}

/// Heap fractions, streamed.
#[derive(Debug, Default, Clone)]
struct Trend {
    n: u64,
    first: f64,
    last: f64,
    min: f64,
    max: f64,
    sum: f64,
    high: u64,
    // Least squares over (minutes, fraction).
    st: f64,
    sy: f64,
    stt: f64,
    sty: f64,
    timed: u64,
}

impl Trend {
    fn add(&mut self, t: Option<f64>, f: f64, high_share: f64) {
        if self.n == 0 {
            self.first = f;
            self.min = f;
            self.max = f;
        }
        self.n += 1;
        self.last = f;
        self.min = self.min.min(f);
        self.max = self.max.max(f);
        self.sum += f;
        self.high += u64::from(f >= high_share);
        if let Some(t) = t {
            let m = t / 60.0;
            self.timed += 1;
            self.st += m;
            self.sy += f;
            self.stt += m * m;
            self.sty += m * f;
        }
    }

    fn report(&self) -> Option<HeapTrend> {
        if self.n == 0 {
            return None;
        }
        let n = self.timed as f64;
        let den = n * self.stt - self.st * self.st;
        let slope = (self.timed >= 3 && den.abs() > 1e-12)
            .then(|| (n * self.sty - self.st * self.sy) / den * 100.0);
        Some(HeapTrend {
            count: self.n,
            first_pct: round2(self.first * 100.0),
            last_pct: round2(self.last * 100.0),
            min_pct: round2(self.min * 100.0),
            max_pct: round2(self.max * 100.0),
            mean_pct: round2(self.sum / self.n as f64 * 100.0),
            at_or_above_collapse_share: self.high,
            trend_pct_per_min: slope.map(round2),
            trend: match slope {
                Some(s) if s > 1.0 => "rising",
                Some(s) if s < -1.0 => "falling",
                Some(_) => "flat",
                None => "unknown",
            },
        })
    }
}

#[derive(Debug, Default)]
struct TypeAcc {
    /// The label reported: `Pause Young (Normal)`.
    kind: String,
    base: String,
    sub: Option<String>,
    dist: Dist,
    total_ms: f64,
}

/// At most this many pause types and causes are kept apart (the rest: `other`).
const MAX_KINDS: usize = 32;

fn bump(v: &mut Vec<Count>, what: &str) {
    if let Some(c) = v.iter_mut().find(|c| c.what == what) {
        c.count += 1;
    } else if v.len() < MAX_KINDS {
        v.push(Count {
            what: what.to_string(),
            count: 1,
        });
    } else if let Some(c) = v.iter_mut().find(|c| c.what == "other") {
        c.count += 1;
    } else {
        v.push(Count {
            what: "other".into(),
            count: 1,
        });
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Clock {
    Uptime,
    Wall,
}

pub(crate) struct Analyzer<'o, 'w> {
    opts: &'o GcLogOptions,
    files: Vec<String>,
    file: usize,
    first_line_of_file: bool,
    summary: GcInputSummary,
    jfr_magic: bool,
    // Format.
    unified_lines: u64,
    legacy_lines: u64,
    legacy_mode: bool,
    format_known: bool,
    legacy: LegacyAssembler,
    // Collectors named by the log (`Using …`), and guessed from its words.
    named: Vec<Collector>,
    hinted: Vec<Collector>,
    jdk: Option<String>,
    evac_failure_marked: bool,
    to_space_lines: bool,
    max_heap_log: Option<f64>,
    capacity_seen: f64,
    region_size: Option<f64>,
    // Clock.
    clock: Option<Clock>,
    offset: f64,
    last_t: Option<f64>,
    restarts: u64,
    // Pauses.
    all: Dist,
    total_ms: f64,
    max_ms: f64,
    types: Vec<TypeAcc>,
    causes: Vec<Count>,
    full_gcs: u64,
    full_gc_ms: f64,
    degenerated: u64,
    evacuation_failures: u64,
    last_failure_gc: Option<u64>,
    gc_id: Option<u64>,
    gc_id_first: Option<u64>,
    gc_id_last: Option<u64>,
    gc_ids_backwards: u64,
    young: Trend,
    any: Trend,
    last_young_after: Option<f64>,
    young_base: Option<f64>,
    gen_numbers: bool,
    humongous: Humongous,
    stalls: Stalls,
    concurrent_failures: Vec<Count>,
    promotion: Promotion,
    old_change: Option<(f64, f64, bool)>,
    long_pauses: u64,
    long_full: u64,
    pub(crate) windows: Windows<'w>,
    heap_series: Series,
    pause_series: Series,
    // Example lines kept as evidence.
    ex_collapse: Examples,
    ex_long: Examples,
    ex_failure: Examples,
    ex_stall: Examples,
    ex_humongous: Examples,
    warnings: Vec<String>,
}

impl<'o, 'w> Analyzer<'o, 'w> {
    fn new(opts: &'o GcLogOptions, timeline: Option<Box<dyn Write + 'w>>) -> Self {
        let mut windows = Windows::new(opts.window_s, timeline);
        windows.collapse_gc_share = opts.collapse_gc_share;
        windows.collapse_heap_share = opts.collapse_heap_share;
        Analyzer {
            opts,
            files: Vec::new(),
            file: 0,
            first_line_of_file: true,
            summary: GcInputSummary::default(),
            jfr_magic: false,
            unified_lines: 0,
            legacy_lines: 0,
            legacy_mode: false,
            format_known: false,
            legacy: LegacyAssembler::default(),
            named: Vec::new(),
            hinted: Vec::new(),
            jdk: None,
            evac_failure_marked: false,
            to_space_lines: false,
            max_heap_log: None,
            capacity_seen: 0.0,
            region_size: None,
            clock: None,
            offset: 0.0,
            last_t: None,
            restarts: 0,
            all: Dist::default(),
            total_ms: 0.0,
            max_ms: 0.0,
            types: Vec::new(),
            causes: Vec::new(),
            full_gcs: 0,
            full_gc_ms: 0.0,
            degenerated: 0,
            evacuation_failures: 0,
            last_failure_gc: None,
            gc_id: None,
            gc_id_first: None,
            gc_id_last: None,
            gc_ids_backwards: 0,
            young: Trend::default(),
            any: Trend::default(),
            last_young_after: None,
            young_base: None,
            gen_numbers: false,
            humongous: Humongous::default(),
            stalls: Stalls::default(),
            concurrent_failures: Vec::new(),
            promotion: Promotion::default(),
            old_change: None,
            long_pauses: 0,
            long_full: 0,
            windows,
            heap_series: Series::default(),
            pause_series: Series::default(),
            ex_collapse: Examples::default(),
            ex_long: Examples::default(),
            ex_failure: Examples::default(),
            ex_stall: Examples::default(),
            ex_humongous: Examples::default(),
            warnings: Vec::new(),
        }
    }

    /// The maximum heap: the log's own statement first (the option is for logs that do not
    /// print it), then the option, then the largest capacity the log showed.
    fn max_heap(&self) -> Option<f64> {
        self.max_heap_log
            .or(self.opts.max_heap_bytes)
            .or((self.capacity_seen > 0.0).then_some(self.capacity_seen))
    }

    /// A time from the line's decorations, on one clock for the whole input.
    fn time(&mut self, uptime: Option<f64>, wall: Option<f64>) -> Option<f64> {
        let clock = match self.clock {
            Some(c) => c,
            None => {
                let c = if uptime.is_some() {
                    Clock::Uptime
                } else if wall.is_some() {
                    Clock::Wall
                } else {
                    return None;
                };
                self.clock = Some(c);
                c
            }
        };
        let raw = match clock {
            Clock::Uptime => uptime?,
            Clock::Wall => wall?,
        };
        let mut t = raw + self.offset;
        if let Some(last) = self.last_t {
            // The JVM's uptime restarted: another run (or files out of order). Keep the
            // clock going forward so windows do not mix the runs.
            if t < last - 1.0 {
                self.restarts += 1;
                self.offset += last - t;
                t = last;
            }
        }
        self.last_t = Some(self.last_t.map_or(t, |l| l.max(t)));
        self.windows.observe(t);
        Some(t)
    }

    fn example_text(&self, line: &[u8]) -> Vec<u8> {
        if self.files.len() > 1 {
            let mut v = format!("{}: ", self.files[self.file]).into_bytes();
            v.extend_from_slice(line);
            v
        } else {
            line.to_vec()
        }
    }

    fn collector_seen(list: &mut Vec<Collector>, c: Collector) {
        if !list.contains(&c) {
            list.push(c);
        }
    }

    /// Handle one event at time `t`, from line `line_no` (`raw` for examples).
    fn event(&mut self, t: Option<f64>, line_no: u64, raw: &[u8], e: &Event<'_>) {
        match *e {
            Event::Collector(c) => {
                // A generational-ZGC hint refines plain ZGC rather than mixing with it.
                if c == Collector::ZgcGenerational {
                    self.named.retain(|&n| n != Collector::Zgc);
                    Self::collector_seen(&mut self.hinted, c);
                } else {
                    Self::collector_seen(&mut self.named, c);
                }
            }
            Event::Jdk(v) => {
                if self.jdk.is_none() {
                    self.jdk = Some(v.to_string());
                }
            }
            Event::MaxHeap(b) => self.max_heap_log = Some(b),
            Event::RegionSize(b) => self.region_size = Some(b),
            Event::Pause {
                kind,
                subkind,
                cause,
                class,
                heap,
                ms,
                evacuation_failure,
            } => self.pause(
                t,
                line_no,
                raw,
                kind,
                subkind,
                cause,
                class,
                heap,
                ms,
                evacuation_failure,
            ),
            Event::ToSpaceExhausted => {
                self.to_space_lines = true;
                self.evacuation_failure(line_no, raw);
            }
            Event::Cycle { young, heap } => {
                if young {
                    Self::collector_seen(&mut self.hinted, Collector::ZgcGenerational);
                }
                if let Some(f) = self.heap_fraction(&heap) {
                    self.any.add(t, f, self.opts.collapse_heap_share);
                    if young {
                        self.young.add(t, f, self.opts.collapse_heap_share);
                    }
                    if let Some(t) = t {
                        self.windows.heap_after(t, f, young);
                        self.heap_series.push(Point {
                            t,
                            v: f * 100.0,
                            kind: 2,
                        });
                    }
                }
            }
            Event::AllocationStall { ms } => {
                self.stalls.count += 1;
                self.stalls.total_ms += ms;
                self.stalls.max_ms = self.stalls.max_ms.max(ms);
                let text = self.example_text(raw);
                self.ex_stall.offer(line_no, &text);
                if let Some(t) = t {
                    self.windows.stall(t, ms);
                }
            }
            Event::AllocationStallsCounted(n) => self.stalls.counted_by_gc += n,
            Event::ConcurrentFailure(what) => {
                bump(&mut self.concurrent_failures, what);
                let text = self.example_text(raw);
                self.ex_failure.offer(line_no, &text);
            }
            Event::OldGen { before, after } => self.old_change = Some((before, after, true)),
            Event::OldRegions { before, after } => {
                if let Some(r) = self.region_size {
                    self.old_change = Some((before * r, after * r, true));
                }
            }
            Event::HumongousRegions { after } => {
                let r = after as u64;
                if self.humongous.max_regions.map_or(true, |m| r > m) {
                    self.humongous.max_regions = Some(r);
                    self.humongous.max_mb = self.region_size.map(|s| round2(after * s / 1048576.0));
                }
            }
            Event::Tenuring { threshold, max } => {
                self.promotion.tenuring_lines += 1;
                self.promotion.tenuring_threshold_low += u64::from(threshold <= 1 && max > 1);
            }
        }
    }

    fn heap_fraction(&mut self, heap: &HeapChange) -> Option<f64> {
        if let Some(p) = heap.after_pct_of_max {
            return Some(p / 100.0);
        }
        if let Some(c) = heap.capacity {
            self.capacity_seen = self.capacity_seen.max(c);
        }
        let max = self.max_heap()?;
        (max > 0.0).then(|| (heap.after / max).min(1.0))
    }

    fn evacuation_failure(&mut self, line_no: u64, raw: &[u8]) {
        // JDK 17 prints `To-space exhausted` and its pause separately: count a GC once.
        if self.gc_id.is_some() && self.last_failure_gc == self.gc_id {
            return;
        }
        self.last_failure_gc = self.gc_id;
        self.evacuation_failures += 1;
        let text = self.example_text(raw);
        self.ex_collapse.offer(line_no, &text);
    }

    #[allow(clippy::too_many_arguments)]
    fn pause(
        &mut self,
        t: Option<f64>,
        line_no: u64,
        raw: &[u8],
        kind: &str,
        subkind: Option<&str>,
        cause: Option<&str>,
        class: PauseClass,
        heap: Option<HeapChange>,
        ms: f64,
        evacuation_failure: bool,
    ) {
        if let Some(c) = unified::collector_from_pause(kind, subkind, cause) {
            if c == Collector::ZgcGenerational {
                self.named.retain(|&n| n != Collector::Zgc);
            }
            Self::collector_seen(&mut self.hinted, c);
        }
        let us = (ms * 1000.0).round().max(0.0) as u64;
        self.all.record(us);
        self.total_ms += ms;
        self.max_ms = self.max_ms.max(ms);
        // Found without building the label: this runs once per pause.
        let idx = match self
            .types
            .iter()
            .position(|t| t.base == kind && t.sub.as_deref() == subkind)
        {
            Some(i) => i,
            None if self.types.len() < MAX_KINDS => {
                self.types.push(TypeAcc {
                    kind: match subkind {
                        Some(s) => format!("{kind} ({s})"),
                        None => kind.to_string(),
                    },
                    base: kind.to_string(),
                    sub: subkind.map(str::to_string),
                    ..Default::default()
                });
                self.types.len() - 1
            }
            None => match self.types.iter().position(|t| t.kind == "other") {
                Some(i) => i,
                None => {
                    self.types.push(TypeAcc {
                        kind: "other".into(),
                        base: "\0other".into(),
                        ..Default::default()
                    });
                    self.types.len() - 1
                }
            },
        };
        self.types[idx].dist.record(us);
        self.types[idx].total_ms += ms;
        if let Some(c) = cause {
            bump(&mut self.causes, c);
            if c.contains("Humongous") {
                self.humongous.gcs_caused += 1;
                let text = self.example_text(raw);
                self.ex_humongous.offer(line_no, &text);
            }
        }
        if evacuation_failure {
            self.evac_failure_marked = true;
            self.evacuation_failure(line_no, raw);
        }
        let full = class == PauseClass::Full;
        if full {
            self.full_gcs += 1;
            self.full_gc_ms += ms;
            let text = self.example_text(raw);
            self.ex_collapse.offer(line_no, &text);
        }
        if class == PauseClass::Degenerated {
            self.degenerated += 1;
            bump(
                &mut self.concurrent_failures,
                "Shenandoah degenerated to a stop-the-world cycle",
            );
            let text = self.example_text(raw);
            self.ex_failure.offer(line_no, &text);
        }
        if ms >= self.opts.long_pause_ms {
            self.long_pauses += 1;
            self.long_full += u64::from(full);
            let text = self.example_text(raw);
            self.ex_long.offer(line_no, &text);
        }
        let old = self.old_change.take();
        if let Some(h) = heap {
            if let Some(f) = self.heap_fraction(&h) {
                let young = class == PauseClass::Young;
                self.any.add(t, f, self.opts.collapse_heap_share);
                if young {
                    self.young.add(t, f, self.opts.collapse_heap_share);
                }
                if let Some(t) = t {
                    self.windows.heap_after(t, f, young);
                    self.heap_series.push(Point {
                        t,
                        v: f * 100.0,
                        kind: if young { 0 } else { 1 },
                    });
                }
            }
            match class {
                PauseClass::Young => {
                    if let Some((b, a, _)) = old {
                        self.promotion.young_gcs_measured += 1;
                        self.promotion.promoted_mb += (a - b).max(0.0) / 1048576.0;
                        self.gen_numbers = true;
                    }
                    if self.young_base.is_none() {
                        self.young_base = Some(h.after);
                    }
                    self.last_young_after = Some(h.after);
                }
                PauseClass::Full | PauseClass::Degenerated => {
                    if !self.gen_numbers {
                        // Without generation numbers: the net growth of the heap after
                        // young GC since the last full GC is what young GCs promoted.
                        if let (Some(base), Some(last)) = (self.young_base, self.last_young_after) {
                            self.promotion.promoted_mb += (last - base).max(0.0) / 1048576.0;
                        }
                    }
                    self.young_base = Some(h.after);
                    self.last_young_after = None;
                    self.promotion.full_gc_freed_mb += (h.before - h.after).max(0.0) / 1048576.0;
                    self.promotion.full_gc_before_mb += h.before / 1048576.0;
                }
                PauseClass::Other => {}
            }
        }
        if let Some(t) = t {
            self.windows.pause(t, ms, full);
            self.pause_series.push(Point {
                t,
                v: ms,
                kind: u8::from(full),
            });
        }
    }

    fn unified_line(&mut self, line_no: u64, raw: &[u8], line: &str) {
        let (d, message) = unified::split_decorations(line);
        if let Some(tags) = d.tags {
            // Other tags interleaved (safepoint, os, …): not ours.
            if !tags.starts_with("gc") {
                return;
            }
        }
        let (id, message) = unified::split_gc_id(message);
        if !d.decorated && id.is_none() && !self.format_known {
            // Undecorated text before the format is known: only a few GC lines qualify.
            if !(message.starts_with("Using ") || message.starts_with("Version: ")) {
                return;
            }
        }
        let Some(event) = unified::parse_message(message) else {
            if d.decorated || id.is_some() {
                self.note_unified();
            }
            return;
        };
        self.note_unified();
        if let Some(id) = id {
            if self.gc_id_first.is_none() {
                self.gc_id_first = Some(id);
            }
            if self.gc_id_last.is_some_and(|l| id + 1000 < l) {
                self.gc_ids_backwards += 1;
            }
            self.gc_id_last = Some(self.gc_id_last.map_or(id, |l| l.max(id)));
            self.gc_id = Some(id);
        }
        // Parse only the clock in use (ISO dates cost more than the rest of the line).
        let (up, wall) = match self.clock {
            Some(Clock::Uptime) => (d.uptime_s(), None),
            Some(Clock::Wall) => (None, d.wall_s()),
            None => (d.uptime_s(), d.wall_s()),
        };
        let t = self.time(up, wall);
        self.event(t, line_no, raw, &event);
    }

    fn note_unified(&mut self) {
        self.unified_lines += 1;
        self.format_known = true;
    }

    fn legacy_line(&mut self, line_no: u64, line: &str) {
        self.legacy_lines += 1;
        // The assembler hands back events with the record's own time stamps.
        let mut events: Vec<(LegacyStamp, OwnedEvent)> = Vec::new();
        let mut legacy = std::mem::take(&mut self.legacy);
        legacy.line(line, line_no, &mut |st, e| {
            events.push((st, OwnedEvent::from(e)))
        });
        self.legacy = legacy;
        self.legacy_events(events);
    }

    fn legacy_events(&mut self, events: Vec<(LegacyStamp, OwnedEvent)>) {
        for (st, e) in events {
            // JDK 8 stamps a record when the GC starts; unified logs when it ends.
            let end = if e.kind == 4 { e.a / 1000.0 } else { 0.0 };
            let t = self.time(st.uptime_s.map(|t| t + end), st.wall_s.map(|t| t + end));
            let raw = e.example.clone();
            self.event(t, st.line, raw.as_bytes(), &e.as_event());
        }
    }

    fn end_of_file(&mut self, s: &scan::ScanSummary) {
        self.summary.bytes += s.bytes;
        self.summary.lines += s.lines;
        self.summary.lines_truncated += s.lines_truncated;
        if self.summary.binary_at_offset.is_none() {
            self.summary.binary_at_offset = s.first_nul;
        }
        self.summary.unterminated_last_line |= s.unterminated_last_line;
        if s.unterminated_last_line {
            self.warnings.push(format!(
                "{}: the last line has no newline: the log was cut mid-write (a running JVM, or a truncated copy)",
                self.files[self.file]
            ));
        }
        if self.legacy.open_record() {
            self.warnings.push(format!(
                "{}: the log ends inside a GC record: its last pause is incomplete and not counted",
                self.files[self.file]
            ));
        }
        let mut events = Vec::new();
        let mut legacy = std::mem::take(&mut self.legacy);
        legacy.finish(&mut |st, e| events.push((st, OwnedEvent::from(e))));
        self.legacy = legacy;
        self.legacy_events(events);
    }

    fn finish(mut self, with_timeline: bool) -> Result<GcReport, AnalyzeError> {
        self.windows
            .set_generational(self.collector().map_or(true, Collector::generational));
        self.windows.finish().map_err(AnalyzeError::Timeline)?;
        let report = diagnose::build(self, with_timeline);
        Ok(report)
    }

    /// The collector the report names: the one the log names, else the one its words imply.
    fn collector(&self) -> Option<Collector> {
        let list = if self.named.is_empty() {
            &self.hinted
        } else {
            &self.named
        };
        if self.named.is_empty() && list.contains(&Collector::ZgcGenerational) {
            return Some(Collector::ZgcGenerational);
        }
        if list.len() == 1 {
            let c = list[0];
            // `Using The Z Garbage Collector` + Minor/Major collections: generational.
            if c == Collector::Zgc && self.hinted.contains(&Collector::ZgcGenerational) {
                return Some(Collector::ZgcGenerational);
            }
            return Some(c);
        }
        list.first().copied()
    }
}

/// A legacy event detached from the assembler's buffers.
struct OwnedEvent {
    kind: u8,
    s1: String,
    s2: Option<String>,
    s3: Option<String>,
    class: PauseClass,
    heap: Option<HeapChange>,
    a: f64,
    b: f64,
    flag: bool,
    collector: Option<Collector>,
    failure: &'static str,
    example: String,
}

impl OwnedEvent {
    fn from(e: &Event<'_>) -> Self {
        let mut o = OwnedEvent {
            kind: 0,
            s1: String::new(),
            s2: None,
            s3: None,
            class: PauseClass::Other,
            heap: None,
            a: 0.0,
            b: 0.0,
            flag: false,
            collector: None,
            failure: "",
            example: String::new(),
        };
        match *e {
            Event::Collector(c) => {
                o.kind = 1;
                o.collector = Some(c);
            }
            Event::Jdk(v) => {
                o.kind = 2;
                o.s1 = v.to_string();
            }
            Event::MaxHeap(b) => {
                o.kind = 3;
                o.a = b;
            }
            Event::Pause {
                kind,
                subkind,
                cause,
                class,
                heap,
                ms,
                evacuation_failure,
            } => {
                o.kind = 4;
                o.s1 = kind.to_string();
                o.s2 = subkind.map(str::to_string);
                o.s3 = cause.map(str::to_string);
                o.class = class;
                o.heap = heap;
                o.a = ms;
                o.flag = evacuation_failure;
                o.example = format!(
                    "[{kind}{}{}] {}{:.3} ms",
                    subkind.map(|s| format!(" ({s})")).unwrap_or_default(),
                    cause.map(|s| format!(" ({s})")).unwrap_or_default(),
                    heap.map(|h| format!(
                        "{:.1}M->{:.1}M ",
                        h.before / 1048576.0,
                        h.after / 1048576.0
                    ))
                    .unwrap_or_default(),
                    ms
                );
            }
            Event::ConcurrentFailure(w) => {
                o.kind = 5;
                o.failure = w;
                o.example = w.to_string();
            }
            Event::OldGen { before, after } => {
                o.kind = 6;
                o.a = before;
                o.b = after;
            }
            Event::Tenuring { threshold, max } => {
                o.kind = 7;
                o.a = threshold as f64;
                o.b = max as f64;
            }
            _ => o.kind = 0,
        }
        o
    }

    fn as_event(&self) -> Event<'_> {
        match self.kind {
            1 => Event::Collector(self.collector.unwrap_or(Collector::G1)),
            2 => Event::Jdk(&self.s1),
            3 => Event::MaxHeap(self.a),
            4 => Event::Pause {
                kind: &self.s1,
                subkind: self.s2.as_deref(),
                cause: self.s3.as_deref(),
                class: self.class,
                heap: self.heap,
                ms: self.a,
                evacuation_failure: self.flag,
            },
            5 => Event::ConcurrentFailure(self.failure),
            6 => Event::OldGen {
                before: self.a,
                after: self.b,
            },
            7 => Event::Tenuring {
                threshold: self.a as u32,
                max: self.b as u32,
            },
            _ => Event::AllocationStallsCounted(0),
        }
    }
}

impl scan::LineSink for Analyzer<'_, '_> {
    fn line(&mut self, number: u64, bytes: &[u8], _truncated: bool) {
        self.summary.lines_parsed += 1;
        if self.first_line_of_file {
            self.first_line_of_file = false;
            self.jfr_magic |= bytes.starts_with(b"FLR\0");
        }
        // GC logs are ASCII; a line that is not UTF-8 is parsed up to its first bad byte.
        let line = match std::str::from_utf8(bytes) {
            Ok(s) => s,
            Err(e) => match std::str::from_utf8(&bytes[..e.valid_up_to()]) {
                Ok(s) => s,
                Err(_) => return,
            },
        };
        if self.legacy_mode {
            // A unified line after JDK 8 records (two logs concatenated): both are read.
            if line.starts_with('[') && !line.starts_with("[GC") && !line.starts_with("[Full GC") {
                let (d, _) = unified::split_decorations(line);
                if d.decorated && (d.tags.is_some() || d.timed()) {
                    self.unified_line(number, bytes, line);
                    return;
                }
            }
            self.legacy_line(number, line);
            return;
        }
        if is_legacy_line(line) {
            self.legacy_mode = true;
            self.format_known = true;
            self.legacy_line(number, line);
            return;
        }
        self.unified_line(number, bytes, line);
    }

    fn wants_every_line(&self) -> bool {
        // Until the format is known every line may decide it; JDK 8 records span lines.
        self.legacy_mode || !self.format_known
    }
}

/// The first line that says "JDK 8 log": a record (`[GC`, `[Full GC`) outside any
/// unified decoration, or the JVM banner / flags that open a JDK 8 log.
fn is_legacy_line(line: &str) -> bool {
    let (d, _) = unified::split_decorations(line);
    if d.decorated {
        return false;
    }
    line.contains("[GC ")
        || line.contains("[GC(")
        || line.contains("[GC-")
        || line.contains("[Full GC")
        || line.starts_with("CommandLine flags: ")
        || (line.contains(" VM (") && line.contains("JRE ("))
}

pub(crate) fn round2(v: f64) -> f64 {
    (v * 100.0).round() / 100.0
}

pub(crate) fn round3(v: f64) -> f64 {
    (v * 1000.0).round() / 1000.0
}

fn pause_stats(d: &Dist, total_ms: f64) -> PauseStats {
    if d.is_empty() {
        return PauseStats::default();
    }
    PauseStats {
        count: d.len(),
        total_ms: round3(total_ms),
        p50_ms: round3(d.quantile(0.5) as f64 / 1000.0),
        p99_ms: round3(d.quantile(0.99) as f64 / 1000.0),
        max_ms: round3(d.max() as f64 / 1000.0),
    }
}

fn examples(e: &Examples) -> Vec<ExampleLine> {
    e.take(Examples::CAP)
}
