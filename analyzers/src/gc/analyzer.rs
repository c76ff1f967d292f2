//! The accumulator: what every event (from either format) adds to the report's tallies,
//! on one clock for the whole input.

use std::io::Write;

use super::event::{Collector, Event, HeapChange, PauseClass};
use super::legacy::LegacyAssembler;
use super::legacy_event::OwnedEvent;
use super::options::GcLogOptions;
use super::pre_line::HeadToken;
use super::report::{Count, GcInputSummary, Humongous, Promotion, Stalls};
use super::rounding::round2;
use super::series::{Point, Series};
use super::tally::{bump, bump_index, LastPauseKind, TypeAcc, MAX_KINDS};
use super::trend::{minutes, Trend};
use super::windows::Windows;
use super::{scan, unified};
use crate::vocab::error::AnalyzeError;
use crate::vocab::report::Examples;

#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Clock {
    Uptime,
    Wall,
}

/// Pause kinds whose resolution is kept (see [`Analyzer::pause`]).
const PAUSE_KINDS_KEPT: usize = 8;
/// Head tokens whose kind's slot is remembered (a power of two; a block's reader splits
/// a handful of heads).
const HEAD_SLOTS: usize = 8;

/// A pause's duration in whole microseconds for its histogram: `(ms * 1000.0).round()
/// .max(0.0) as u64` without the call to libm's `round` that the baseline x86-64 target
/// makes (no rounding instruction before SSE4.1; docs/perf.md). The same
/// value for every input (a test compares them).
#[inline]
fn pause_micros(ms: f64) -> u64 {
    let x = ms * 1000.0;
    if !(x >= 0.0) {
        return 0; // negative or NaN: rounded, then floored at zero
    }
    if x >= 4_503_599_627_370_496.0 {
        return x as u64; // from 2^52 on every value is an integer (or infinite)
    }
    let t = x as i64; // truncated, exactly
    (t + i64::from(x - t as f64 >= 0.5)) as u64
}

pub(crate) struct Analyzer<'o, 'w> {
    pub(super) opts: &'o GcLogOptions,
    pub(super) files: Vec<String>,
    pub(super) file: usize,
    pub(super) first_line_of_file: bool,
    pub(super) summary: GcInputSummary,
    pub(super) jfr_magic: bool,
    // Format.
    pub(super) unified_lines: u64,
    pub(super) legacy_lines: u64,
    pub(super) legacy_mode: bool,
    pub(super) format_known: bool,
    pub(super) legacy: LegacyAssembler,
    // Collectors named by the log (`Using …`), and guessed from its words.
    pub(super) named: Vec<Collector>,
    pub(super) hinted: Vec<Collector>,
    pub(super) jdk: Option<String>,
    pub(super) evac_failure_marked: bool,
    pub(super) to_space_lines: bool,
    pub(super) max_heap_log: Option<f64>,
    pub(super) capacity_seen: f64,
    pub(super) region_size: Option<f64>,
    // Clock.
    pub(super) clock: Option<Clock>,
    pub(super) offset: f64,
    pub(super) last_t: Option<f64>,
    pub(super) restarts: u64,
    // Pauses (their distribution: the types' merged, see `finish::build`).
    pub(super) total_ms: f64,
    pub(super) max_ms: f64,
    pub(super) types: Vec<TypeAcc>,
    pub(super) causes: Vec<Count>,
    pub(super) full_gcs: u64,
    pub(super) full_gc_ms: f64,
    pub(super) degenerated: u64,
    pub(super) evacuation_failures: u64,
    pub(super) last_failure_gc: Option<u64>,
    pub(super) gc_id: Option<u64>,
    pub(super) gc_id_first: Option<u64>,
    pub(super) gc_id_last: Option<u64>,
    pub(super) gc_ids_backwards: u64,
    pub(super) young: Trend,
    pub(super) any: Trend,
    pub(super) last_young_after: Option<f64>,
    pub(super) young_base: Option<f64>,
    pub(super) gen_numbers: bool,
    pub(super) humongous: Humongous,
    pub(super) stalls: Stalls,
    pub(super) concurrent_failures: Vec<Count>,
    pub(super) promotion: Promotion,
    pub(super) old_change: Option<(f64, f64, bool)>,
    /// The old generation's capacity on the line of `old_change`, when it gives one.
    pub(super) old_capacity: Option<f64>,
    /// Full GCs that left the old generation, not the heap, at least the collapse share
    /// full (the windows took the old generation's fill for them).
    pub(super) old_full_after_full_gc: u64,
    /// The last pause start line (`gc,start`: its GC id and words), and the GC id of the
    /// last pause read whole: a log cut between the two ends inside that pause.
    pub(super) pause_started: Option<u64>,
    pub(super) pause_started_words: String,
    pub(super) last_pause_gc: Option<u64>,
    pub(super) long_pauses: u64,
    pub(super) long_full: u64,
    pub(super) windows: Windows<'w>,
    pub(super) heap_series: Series,
    pub(super) pause_series: Series,
    // Example lines kept as evidence.
    pub(super) ex_collapse: Examples,
    pub(super) ex_long: Examples,
    pub(super) ex_failure: Examples,
    pub(super) ex_stall: Examples,
    pub(super) ex_humongous: Examples,
    /// `Out Of Memory` / `OutOfMemoryError` lines, and the first few.
    pub(super) out_of_memory: u64,
    pub(super) ex_oom: Examples,
    pub(super) warnings: Vec<String>,
    /// The unescaped text of a JSON-wrapped line (see [`super::shipper`]).
    pub(super) scratch: Vec<u8>,
    /// What the last few pause kinds resolved to (at most [`PAUSE_KINDS_KEPT`]), and
    /// the entry to replace next.
    pub(super) last_pauses: Vec<LastPauseKind>,
    pub(super) next_pause_slot: usize,
    /// The entry the last pause's kind resolved to.
    pub(super) last_pause_slot: usize,
    /// The [`Self::last_pauses`] slot of a pause reader's head token, by the token's low
    /// bits: valid until a slot is given to another kind, when all are forgotten.
    head_slots: [(HeadToken, usize); HEAD_SLOTS],
}

impl<'o, 'w> Analyzer<'o, 'w> {
    pub(super) fn new(opts: &'o GcLogOptions, timeline: Option<Box<dyn Write + 'w>>) -> Self {
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
            old_capacity: None,
            old_full_after_full_gc: 0,
            pause_started: None,
            pause_started_words: String::new(),
            last_pause_gc: None,
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
            out_of_memory: 0,
            ex_oom: Examples::default(),
            warnings: Vec::new(),
            scratch: Vec::new(),
            last_pauses: Vec::new(),
            next_pause_slot: 0,
            last_pause_slot: 0,
            head_slots: [(HeadToken::NONE, 0); HEAD_SLOTS],
        }
    }

    /// The maximum heap: the log's own statement first (the option is for logs that do not
    /// print it), then the option, then the largest capacity the log showed.
    pub(super) fn max_heap(&self) -> Option<f64> {
        self.max_heap_log
            .or(self.opts.max_heap_bytes)
            .or((self.capacity_seen > 0.0).then_some(self.capacity_seen))
    }

    /// A time from the line's decorations, on one clock for the whole input.
    #[inline]
    pub(super) fn time(&mut self, uptime: Option<f64>, wall: Option<f64>) -> Option<f64> {
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
        // `l.max(t)` by compare (see `Windows::observe`).
        self.last_t = Some(match self.last_t {
            Some(l) if !(t > l || l.is_nan()) => l,
            _ => t,
        });
        self.windows.observe(t);
        Some(t)
    }

    /// Offer `raw` as an example (with its file's name when there are several): the text
    /// is made only while the examples are not full (a dense log offers on every line).
    fn offer(files: &[String], file: usize, ex: &mut Examples, line_no: u64, raw: &[u8]) {
        if ex.lines.len() < Examples::CAP {
            ex.offer(line_no, &example_text_of(files, file, raw));
        }
    }

    pub(super) fn collector_seen(list: &mut Vec<Collector>, c: Collector) {
        if !list.contains(&c) {
            list.push(c);
        }
    }

    /// Handle one event at time `t`, from line `line_no` (`raw` for examples).
    pub(super) fn event(&mut self, t: Option<f64>, line_no: u64, raw: &[u8], e: &Event<'_>) {
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
                    self.heap_after(t, f, young, PauseClass::Other.point_kind());
                }
            }
            Event::AllocationStall { ms } => {
                self.stalls.count += 1;
                self.stalls.total_ms += ms;
                self.stalls.max_ms = self.stalls.max_ms.max(ms);
                Self::offer(&self.files, self.file, &mut self.ex_stall, line_no, raw);
                if let Some(t) = t {
                    self.windows.stall(t, ms);
                }
            }
            Event::AllocationStallsCounted(n) => self.stalls.counted_by_gc += n,
            Event::ConcurrentFailure(what) => {
                // The failure names its collector (a log of these lines alone says no more).
                if what.starts_with("Shenandoah") {
                    Self::collector_seen(&mut self.hinted, Collector::Shenandoah);
                }
                bump(&mut self.concurrent_failures, what);
                Self::offer(&self.files, self.file, &mut self.ex_failure, line_no, raw);
            }
            Event::OldGen {
                before,
                after,
                capacity,
            } => {
                self.old_change = Some((before, after, true));
                self.old_capacity = capacity;
            }
            Event::OldRegions { before, after } => {
                if let Some(r) = self.region_size {
                    self.old_change = Some((before * r, after * r, true));
                    self.old_capacity = None;
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
            Event::OutOfMemory => {
                self.out_of_memory += 1;
                Self::offer(&self.files, self.file, &mut self.ex_oom, line_no, raw);
            }
        }
    }

    pub(super) fn heap_fraction(&mut self, heap: &HeapChange) -> Option<f64> {
        if let Some(p) = heap.after_pct_of_max {
            return Some(p / 100.0);
        }
        if let Some(c) = heap.capacity {
            self.capacity_seen = self.capacity_seen.max(c);
        }
        let max = self.max_heap()?;
        (max > 0.0).then(|| (heap.after / max).min(1.0))
    }

    pub(super) fn evacuation_failure(&mut self, line_no: u64, raw: &[u8]) {
        // JDK 17 prints `To-space exhausted` and its pause separately: count a GC once.
        if self.gc_id.is_some() && self.last_failure_gc == self.gc_id {
            return;
        }
        self.last_failure_gc = self.gc_id;
        self.evacuation_failures += 1;
        Self::offer(&self.files, self.file, &mut self.ex_collapse, line_no, raw);
    }

    /// The collector hint, pause type and cause entry of a pause kind not seen just before.
    fn resolve_pause_kind(
        &mut self,
        kind: &str,
        subkind: Option<&str>,
        cause: Option<&str>,
    ) -> LastPauseKind {
        let type_idx = match self
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
        LastPauseKind {
            valid: true,
            kind: kind.to_string(),
            sub: subkind.map(str::to_string),
            cause: cause.map(str::to_string),
            hint: unified::collector_from_pause(kind, subkind, cause),
            type_idx,
            cause_idx: cause.map(|c| bump_index(&mut self.causes, c)),
            humongous: cause.is_some_and(|c| c.contains("Humongous")),
        }
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn pause(
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
        let at = self.pause_kind_slot(
            kind.as_bytes(),
            subkind.map(str::as_bytes),
            cause.map(str::as_bytes),
        );
        self.pause_of_kind(t, line_no, raw, at, class, heap, ms, evacuation_failure);
    }

    /// Where in [`Self::last_pauses`] a pause kind's resolution is (resolved now if it
    /// is not among them). The words are bytes of UTF-8 text (a `&str`'s, or ASCII).
    pub(super) fn pause_kind_slot(
        &mut self,
        kind: &[u8],
        subkind: Option<&[u8]>,
        cause: Option<&[u8]>,
    ) -> usize {
        // The last few kinds, not only the last one: a G1 log alternates Normal and
        // Concurrent Start pauses, and resolving again each time (strings copied, a
        // cause searched for `Humongous`) was costly (docs/perf.md). Resolving is a pure
        // find-or-add, so a kind resolves to the same entries however often it is asked.
        // The kind of the pause before first: a run of one kind is one comparison.
        let last = self.last_pause_slot;
        if self
            .last_pauses
            .get(last)
            .is_some_and(|p| p.is(kind, subkind, cause))
        {
            return last;
        }
        let at = self.find_pause_kind_slot(kind, subkind, cause);
        self.last_pause_slot = at;
        at
    }

    /// The slot a pause with head token `head` resolved to before, if remembered.
    #[inline]
    pub(super) fn head_slot(&self, head: HeadToken) -> Option<usize> {
        let (t, at) = self.head_slots[head.0 as usize & (HEAD_SLOTS - 1)];
        (head != HeadToken::NONE && t == head).then_some(at)
    }

    /// Remember that head token `head` resolved to slot `at`.
    #[inline]
    pub(super) fn remember_head(&mut self, head: HeadToken, at: usize) {
        if head != HeadToken::NONE {
            self.head_slots[head.0 as usize & (HEAD_SLOTS - 1)] = (head, at);
        }
    }

    fn find_pause_kind_slot(
        &mut self,
        kind: &[u8],
        subkind: Option<&[u8]>,
        cause: Option<&[u8]>,
    ) -> usize {
        match self
            .last_pauses
            .iter()
            .position(|p| p.is(kind, subkind, cause))
        {
            Some(i) => i,
            None => {
                let text = String::from_utf8_lossy;
                let (kind, subkind, cause) = (text(kind), subkind.map(text), cause.map(text));
                let r = self.resolve_pause_kind(&kind, subkind.as_deref(), cause.as_deref());
                if self.last_pauses.len() < PAUSE_KINDS_KEPT {
                    self.last_pauses.push(r);
                    self.last_pauses.len() - 1
                } else {
                    let i = self.next_pause_slot;
                    self.next_pause_slot = (i + 1) % PAUSE_KINDS_KEPT;
                    self.last_pauses[i] = r;
                    // A token may name the kind this slot held.
                    self.head_slots = [(HeadToken::NONE, 0); HEAD_SLOTS];
                    i
                }
            }
        }
    }

    /// A pause whose kind resolved to `last_pauses[at]`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn pause_of_kind(
        &mut self,
        t: Option<f64>,
        line_no: u64,
        raw: &[u8],
        at: usize,
        class: PauseClass,
        heap: Option<HeapChange>,
        ms: f64,
        evacuation_failure: bool,
    ) {
        let lp = &self.last_pauses[at];
        let (hint, idx, cause_idx, humongous) = (lp.hint, lp.type_idx, lp.cause_idx, lp.humongous);
        if let Some(c) = hint {
            if c == Collector::ZgcGenerational {
                self.named.retain(|&n| n != Collector::Zgc);
            }
            Self::collector_seen(&mut self.hinted, c);
        }
        let us = pause_micros(ms);
        self.last_pause_gc = self.gc_id;
        self.total_ms += ms;
        // Not `f64::max`: it pays NaN handling (docs/perf.md), and `max_ms` starts at 0
        // and takes only larger values, so it is never NaN and the two agree.
        if ms > self.max_ms {
            self.max_ms = ms;
        }
        self.types[idx].dist.record(us);
        self.types[idx].total_ms += ms;
        if let Some(i) = cause_idx {
            self.causes[i].count += 1;
            if humongous {
                self.humongous.gcs_caused += 1;
                Self::offer(&self.files, self.file, &mut self.ex_humongous, line_no, raw);
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
            Self::offer(&self.files, self.file, &mut self.ex_collapse, line_no, raw);
        }
        if class == PauseClass::Degenerated {
            self.degenerated += 1;
            bump(
                &mut self.concurrent_failures,
                "Shenandoah degenerated to a stop-the-world cycle",
            );
            Self::offer(&self.files, self.file, &mut self.ex_failure, line_no, raw);
        }
        if ms >= self.opts.long_pause_ms {
            self.long_pauses += 1;
            self.long_full += u64::from(full);
            Self::offer(&self.files, self.file, &mut self.ex_long, line_no, raw);
        }
        let old = self.old_change.take();
        // The heap's fill for the pause's window, added with the pause (see
        // `Windows::pause_observed`).
        let mut window_heap = None;
        if let Some(h) = heap {
            if let Some(f) = self.heap_fraction(&h) {
                let young = class == PauseClass::Young;
                self.heap_trends(t, f, young, class.point_kind());
                // After a full GC the young generation is empty: how full the old one
                // stays is the live set's fill (Parallel's back-to-back full GCs leave the
                // old generation 99% full and the heap 71%), and the collapse rule's.
                let old_fill = match (full, old, self.old_capacity) {
                    (true, Some((_, after, _)), Some(c)) if c > 0.0 => (after / c).min(1.0),
                    _ => 0.0,
                };
                let share = self.opts.collapse_heap_share;
                if f < share && old_fill >= share {
                    self.old_full_after_full_gc += 1;
                    window_heap = Some((old_fill, young));
                } else {
                    window_heap = Some((f, young));
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
            // `t` is the clock's time for this line: `time` observed it.
            self.windows.pause_observed(t, ms, full, window_heap);
            self.pause_series.push(Point {
                t,
                v: ms,
                kind: class.point_kind(),
            });
        }
    }

    /// The heap's fill (share of the maximum) after a collection: into the trends, the
    /// windows and the chart's series (`kind`: its colour, `Point::kind`).
    fn heap_after(&mut self, t: Option<f64>, f: f64, young: bool, kind: u8) {
        self.heap_trends(t, f, young, kind);
        if let Some(t) = t {
            self.windows.heap_after(t, f, young);
        }
    }

    /// [`Self::heap_after`] but for the windows: the trends and the chart's series.
    #[inline]
    fn heap_trends(&mut self, t: Option<f64>, f: f64, young: bool, kind: u8) {
        let minute = t.map(minutes);
        self.any
            .add_at_minute(minute, f, self.opts.collapse_heap_share);
        if young {
            self.young
                .add_at_minute(minute, f, self.opts.collapse_heap_share);
        }
        if let Some(t) = t {
            self.heap_series.push(Point {
                t,
                v: f * 100.0,
                kind,
            });
        }
    }

    pub(super) fn end_of_file(&mut self, s: &scan::ScanSummary) {
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

    /// Close the windows (the last one's timeline row): the analysis is ready for its
    /// report (`finish::build`).
    pub(super) fn finish(&mut self) -> Result<(), AnalyzeError> {
        self.windows
            .set_generational(self.collector().map_or(true, Collector::generational));
        self.windows.finish().map_err(AnalyzeError::Timeline)?;
        Ok(())
    }

    /// The pause the log ends inside: the last GC's start line without its end line.
    pub(super) fn open_pause(&self) -> Option<(u64, &str)> {
        let id = self.pause_started?;
        (self.gc_id_last == Some(id) && self.last_pause_gc != Some(id))
            .then_some((id, self.pause_started_words.as_str()))
    }

    /// The collector the report names: the one the log names, else the one its words imply.
    pub(super) fn collector(&self) -> Option<Collector> {
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

/// An example line as the report shows it: prefixed with its file's name when there are
/// several files.
fn example_text_of(files: &[String], file: usize, line: &[u8]) -> Vec<u8> {
    if files.len() > 1 {
        let mut v = format!("{}: ", files[file]).into_bytes();
        v.extend_from_slice(line);
        v
    } else {
        line.to_vec()
    }
}

#[cfg(test)]
mod micros_tests {
    use super::pause_micros;

    #[test]
    fn pause_micros_is_the_rounded_product() {
        let want = |ms: f64| (ms * 1000.0).round().max(0.0) as u64;
        let mut edges = vec![
            0.0,
            -0.0,
            0.0005,
            0.0004999,
            0.0015,
            0.0025,
            2.345,
            69.637,
            0.49999999999999994e-3,
            -0.0004,
            -1.0,
            1e12,
            4.503599627370496e12,
            9.007199254740993e12,
            1e300,
            f64::MAX,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            f64::MIN_POSITIVE,
            1e-320,
        ];
        for k in 0..20_000u64 {
            edges.push(k as f64 / 2000.0); // every half-microsecond up to 10 ms
            edges.push((k as f64 + 0.5) / 1000.0);
        }
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..200_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            edges.push(f64::from_bits(x)); // any bit pattern
            edges.push((x % 10_000_000) as f64 / 1e6); // ms with up to six decimals
        }
        for ms in edges {
            assert_eq!(pause_micros(ms), want(ms), "{ms:e}");
        }
    }
}
