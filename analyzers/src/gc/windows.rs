//! GC time as a fraction of wall time, per fixed window of the log's own clock.
//!
//! A pause ends when its summary line is logged, so it covers `[t - d, t]` and may
//! straddle windows (a 6 s full GC fills six 1 s windows). Windows stay open for
//! [`LOOKBACK_S`] so such pauses land where they happened, then close in order: the
//! worst window is kept, and the `--timeline` row is written. Memory: the open windows.

use std::collections::VecDeque;
use std::io::Write;

use serde::Serialize;

use super::report::WindowSummary;
use super::rounding::{round2, round3};
use crate::findings::diagnoses::gc as rules;

/// How far back a pause may reach into windows that are still open.
const LOOKBACK_S: f64 = 300.0;
/// Longest run of empty windows written as zero rows between two busy ones.
const MAX_GAP_ROWS: i64 = 3600;
/// Windows a single pause may cover (11.6 days of 1 s windows): no JVM pauses that long, so
/// only a garbage duration reaches it, and the cap keeps such a number from making the
/// loop over its windows run for hours (found by the gc_log fuzz target).
const MAX_PAUSE_WINDOWS: i64 = 1_000_000;
/// Partial windows (the log's first and last) count as at least this share of a
/// window, and logs shorter than it have no per-window GC time.
const MIN_COVERAGE: f64 = 0.5;

/// The open windows in index order. Nearly every access is to the newest window, kept
/// apart so that reaching it is one comparison (through the deque's back it cost more,
/// three times per pause); the others are searched from the back, one or two steps (a
/// tree map cost a search per pause). Costs: docs/perf.md.
#[derive(Debug, Default)]
struct OpenWindows {
    /// The open windows before the newest, in index order (empty without a newest).
    older: VecDeque<(i64, WindowAcc)>,
    newest: Option<(i64, WindowAcc)>,
    /// A window was opened in front of the others since [`Windows::observe`] last
    /// closed the old ones (see there).
    front_opened: bool,
}

impl OpenWindows {
    fn first_index(&self) -> Option<i64> {
        self.older.front().or(self.newest.as_ref()).map(|(i, _)| *i)
    }

    fn pop_first(&mut self) -> Option<(i64, WindowAcc)> {
        self.older.pop_front().or_else(|| self.newest.take())
    }

    fn is_empty(&self) -> bool {
        self.newest.is_none()
    }

    /// The window `i`, created empty in its place when it is not open yet.
    #[inline(never)]
    fn entry(&mut self, i: i64) -> &mut WindowAcc {
        let newest = match self.newest.as_ref() {
            Some(&(n, _)) => n,
            None => {
                self.front_opened = true;
                return &mut self.newest.insert((i, WindowAcc::default())).1;
            }
        };
        if i == newest {
            return &mut self.newest.as_mut().expect("a newest window").1;
        }
        if i > newest {
            let was = self.newest.replace((i, WindowAcc::default()));
            self.older.extend(was);
            return &mut self.newest.as_mut().expect("a newest window").1;
        }
        let w = &mut self.older;
        let mut at = w.len();
        while at > 0 && w[at - 1].0 > i {
            at -= 1;
        }
        if at == 0 || w[at - 1].0 != i {
            self.front_opened |= at == 0;
            w.insert(at, (i, WindowAcc::default()));
            at += 1;
        }
        &mut w[at - 1].1
    }
}

/// `q.floor() as i64`, without the call: `f64::floor` is a libm function on a target
/// without SSE4.1, six times per pause (docs/perf.md). The cast
/// truncates toward zero and saturates (NaN is 0), so one step down for a negative
/// fraction gives the same value for every `q`, infinities and NaN included.
#[inline]
fn floor_index(q: f64) -> i64 {
    let i = q as i64;
    if (i as f64) > q {
        i.saturating_sub(1)
    } else {
        i
    }
}

#[derive(Debug, Default, Clone)]
pub(crate) struct WindowAcc {
    pub gc_ms: f64,
    pub pauses: u32,
    pub full_gcs: u32,
    /// Lowest and last heap-after-young-GC fractions of the max seen in the window.
    pub young_after_min: Option<f64>,
    pub young_after_last: Option<f64>,
    /// Lowest heap-after fraction of any collection (for non-generational collectors).
    pub any_after_min: Option<f64>,
    pub any_after_last: Option<f64>,
    pub stall_ms: f64,
}

impl WindowAcc {
    /// The heap's fill after a collection in this window (`young`: a young one).
    #[inline]
    fn heap_after(&mut self, fraction: f64, young: bool) {
        self.any_after_min = Some(
            self.any_after_min
                .map_or(fraction, |m: f64| m.min(fraction)),
        );
        self.any_after_last = Some(fraction);
        if young {
            self.young_after_min = Some(
                self.young_after_min
                    .map_or(fraction, |m: f64| m.min(fraction)),
            );
            self.young_after_last = Some(fraction);
        }
    }
}

#[derive(Serialize)]
struct Row {
    window_start_s: f64,
    gc_ms: f64,
    gc_fraction: f64,
    pauses: u32,
    full_gcs: u32,
    heap_after_young_pct: Option<f64>,
    heap_after_gc_pct: Option<f64>,
    allocation_stall_ms: f64,
}

pub(crate) struct Windows<'w> {
    pub width_s: f64,
    open: OpenWindows,
    /// The latest time [`Self::observe`] closed the windows too old for: every open
    /// window is recent enough for it unless one opened in front since.
    /// NaN before the first: no time is `<=` it.
    closed_for: f64,
    /// Below this time the search for old windows closes none (and is not done), unless
    /// a window opened in front since: the first open window's end plus the lookback,
    /// less a margin for the rounding of `t - LOOKBACK_S` (NaN when not known: no time
    /// is below it). A dense log's every line is a later time than the one before it,
    /// and a window closes only once a second.
    quiet_below: f64,
    /// Every window below this index is closed.
    closed_below: Option<i64>,
    /// The earliest and latest times observed ([`Self::span`]): NaN before the first, so
    /// that `min`/`max` take the first time as it is (an `Option` per bound cost more,
    /// four observations a pause: docs/perf.md).
    span_start: f64,
    span_end: f64,
    spanned: bool,
    /// The time [`Self::observe`] saw last (NaN before the first).
    last_observed: f64,
    carry_young: Option<f64>,
    carry_any: Option<f64>,
    pub worst: Option<WindowSummary>,
    /// Windows with GC ≥ the collapse share, and those that also had a full heap.
    pub busy_windows: u64,
    pub collapse_windows: u64,
    pub worst_collapse: Option<WindowSummary>,
    pub first_collapse: Option<WindowSummary>,
    pub closed: u64,
    /// The collapse rule, from the options.
    pub collapse_gc_share: f64,
    pub collapse_heap_share: f64,
    generational: bool,
    writer: Option<csv::Writer<Box<dyn Write + 'w>>>,
    last_row: Option<i64>,
    pub rows: u64,
    pub error: Option<csv::Error>,
    /// Search for old windows on every observation, and loop over a pause's windows even
    /// when it has one (the tests' reference).
    reference: bool,
}

impl<'w> Windows<'w> {
    pub fn new(width_s: f64, writer: Option<Box<dyn Write + 'w>>) -> Self {
        Windows {
            width_s,
            open: OpenWindows::default(),
            closed_for: f64::NAN,
            quiet_below: f64::NAN,
            closed_below: None,
            span_start: f64::NAN,
            span_end: f64::NAN,
            spanned: false,
            last_observed: f64::NAN,
            carry_young: None,
            carry_any: None,
            worst: None,
            busy_windows: 0,
            collapse_windows: 0,
            worst_collapse: None,
            first_collapse: None,
            closed: 0,
            collapse_gc_share: rules::COLLAPSE_GC_SHARE,
            collapse_heap_share: rules::COLLAPSE_HEAP_SHARE,
            generational: true,
            writer: writer.map(csv::Writer::from_writer),
            last_row: None,
            rows: 0,
            error: None,
            reference: false,
        }
    }

    pub fn set_generational(&mut self, g: bool) {
        self.generational = g;
    }

    fn index(&self, t: f64) -> i64 {
        // The default width divides by one: `t / 1.0` is `t` for every `t` (NaN and
        // infinities too), and a division's latency is a stall on every pause.
        if self.width_s == 1.0 {
            return floor_index(t);
        }
        floor_index(t / self.width_s)
    }

    /// The log's clock reached `t`. Inlined up to the search for old windows, which is
    /// a call of its own: with it inside, every observation paid its register saves,
    /// six in ten returning before the search (docs/perf.md).
    #[inline]
    pub fn observe(&mut self, t: f64) {
        // `NaN.min(t)` is `t` (NaN for a NaN `t`): the first time as it is, as an
        // `Option` folded from it would have it. `f64::min`/`max` by compare and assign
        // (a NaN `t` keeps the bound, a NaN bound takes `t`): theirs pay NaN handling
        // on every observation (docs/perf.md).
        if t < self.span_start || self.span_start.is_nan() {
            self.span_start = t;
        }
        if t > self.span_end || self.span_end.is_nan() {
            self.span_end = t;
        }
        self.spanned = true;
        self.last_observed = t;
        // A pause observes its time three or four times: the windows a time keeps open
        // are kept for any earlier time (`index` grows with `t`), so the search for old
        // windows is done again only for a later time or a window opened in front.
        if !self.open.front_opened
            && (t <= self.closed_for || t < self.quiet_below)
            && !self.reference
        {
            return;
        }
        self.close_before(t);
    }

    /// Close the windows too old for time `t` ([`Self::observe`]'s search).
    #[inline(never)]
    fn close_before(&mut self, t: f64) {
        self.closed_for = t;
        self.open.front_opened = false;
        let keep_from = self.index(t - LOOKBACK_S);
        while let Some(i) = self.open.first_index() {
            if i >= keep_from {
                break;
            }
            self.close_first();
        }
        // First window `f` (1 s wide) closes once `floor(t - LOOKBACK_S) > f`: not for
        // any `t < f + 1 + LOOKBACK_S - margin`, where `t - LOOKBACK_S` rounds by less
        // than the margin (an ulp of 2^39 is 2^-13 s; the bound itself rounds by as
        // little).
        const MARGIN_S: f64 = 1e-3;
        self.quiet_below = match self.open.first_index() {
            Some(f) if self.width_s == 1.0 && f.unsigned_abs() < 1 << 39 => {
                (f + 1) as f64 + LOOKBACK_S - MARGIN_S
            }
            _ => f64::NAN,
        };
    }

    fn acc(&mut self, t: f64) -> &mut WindowAcc {
        let i = self.index(t);
        self.acc_at(i)
    }

    /// The window of index `i` (`self.index(t)`), or the first still open. The newest
    /// window (nearly every lookup) inline, any other through [`OpenWindows::entry`].
    #[inline]
    fn acc_at(&mut self, mut i: i64) -> &mut WindowAcc {
        if let Some(c) = self.closed_below {
            i = i.max(c);
        }
        if self.open.newest.as_ref().is_some_and(|&(n, _)| n == i) {
            return &mut self.open.newest.as_mut().expect("the newest window").1;
        }
        self.open.entry(i)
    }

    /// A pause that ended at `end` and lasted `ms`.
    pub fn pause(&mut self, end: f64, ms: f64, full: bool) {
        let start = end - ms / 1000.0;
        self.observe(start.max(end - LOOKBACK_S));
        self.observe(end);
        let last = self.index(end);
        let first = self
            .index(start)
            .max(last.saturating_sub(MAX_PAUSE_WINDOWS));
        if first == last && self.width_s == 1.0 && last.unsigned_abs() < 1 << 52 && !self.reference
        {
            // Nearly every pause: one window. The loop's one step, on the window looked up
            // once.
            self.one_window_pause(last, start, end, full);
            return;
        }
        for i in first..=last {
            let ws = i as f64 * self.width_s;
            let overlap = (end.min(ws + self.width_s) - start.max(ws)).max(0.0);
            if overlap > 0.0 || i == last {
                self.acc(ws).gc_ms += overlap * 1000.0;
            }
        }
        let a = self.acc_at(last);
        a.pauses += 1;
        a.full_gcs += u32::from(full);
    }

    pub fn heap_after(&mut self, t: f64, fraction: f64, young: bool) {
        self.observe(t);
        self.acc(t).heap_after(fraction, young);
    }

    /// A pause from `start` to `end` inside 1 s window `last` (`last` exact as an `f64`,
    /// so `last as f64` is the window's start): its GC time and counts added, and the
    /// window for more.
    #[inline(always)]
    fn one_window_pause(&mut self, last: i64, start: f64, end: f64, full: bool) -> &mut WindowAcc {
        let ws = last as f64;
        let overlap = (end.min(ws + 1.0) - start.max(ws)).max(0.0);
        let a = self.acc_at(last);
        a.gc_ms += overlap * 1000.0;
        a.pauses += 1;
        a.full_gcs += u32::from(full);
        a
    }

    /// What `heap_after(end, …)` (when `heap` holds the fill after it and whether the
    /// pause was young) then `pause(end, ms, full)` do, for a pause whose `end` the
    /// caller observed just before (the analyzer's clock does, for every line): on a
    /// dense log nearly every pause is one window, looked up once, and neither
    /// observes `end` again. A third and a fourth observation of the same time and a
    /// second lookup of its window were a measurable share of a dense log (docs/perf.md).
    /// Observing `end` again closes nothing: every window it could close was closed
    /// when it was observed, and the window this pause opens is `end`'s own.
    pub fn pause_observed(&mut self, end: f64, ms: f64, full: bool, heap: Option<(f64, bool)>) {
        let start = end - ms / 1000.0;
        let last = self.index(end);
        // With 1 s windows and `last` exact as an `f64`, `start` is in `last`'s window
        // exactly when `ws <= start < ws + 1` (its `index` without the floor's cost,
        // docs/perf.md; a NaN `start` takes the general steps, which do the same).
        let ws = last as f64;
        if self.width_s == 1.0
            && !self.reference
            && end == self.last_observed
            && last.unsigned_abs() < 1 << 52
            && start >= ws
            && start < ws + 1.0
        {
            // `pause`'s one-window step (its first observation kept: it may reach
            // before the span's start), then `heap_after`'s step on the same window.
            self.observe(start.max(end - LOOKBACK_S));
            let a = self.one_window_pause(last, start, end, full);
            if let Some((fraction, young)) = heap {
                a.heap_after(fraction, young);
            }
            return;
        }
        if let Some((fraction, young)) = heap {
            self.heap_after(end, fraction, young);
        }
        self.pause(end, ms, full);
    }

    pub fn stall(&mut self, t: f64, ms: f64) {
        self.observe(t);
        self.acc(t).stall_ms += ms;
    }

    /// The earliest and latest times observed, once one was.
    pub fn span(&self) -> Option<(f64, f64)> {
        self.spanned.then_some((self.span_start, self.span_end))
    }

    fn coverage_s(&self, i: i64) -> f64 {
        let ws = i as f64 * self.width_s;
        let we = ws + self.width_s;
        match self.span() {
            Some((s, e)) => (we.min(e) - ws.max(s)).max(0.0),
            None => 0.0,
        }
    }

    fn close_first(&mut self) {
        let Some((i, acc)) = self.open.pop_first() else {
            return;
        };
        // Saturating: a garbage time stamp can put a window at i64::MAX.
        self.closed_below = Some(i.saturating_add(1));
        self.closed += 1;
        let span = self.span().map_or(0.0, |(s, e)| e - s);
        let cover = self.coverage_s(i);
        // A partial window (the log's first or last) counts as at least half a window:
        // a 3 ms pause at the very end of a log is not "100% of the window in GC".
        let denom = cover.max(MIN_COVERAGE * self.width_s);
        let fraction = (acc.gc_ms / 1000.0 / denom).min(1.0);
        let young = acc.young_after_min.or(self.carry_young);
        let any = acc.any_after_min.or(self.carry_any);
        let considered = if self.generational {
            acc.young_after_min.or(acc.any_after_min).or(self.carry_any)
        } else {
            any
        };
        if acc.young_after_last.is_some() {
            self.carry_young = acc.young_after_last;
        }
        if acc.any_after_last.is_some() {
            self.carry_any = acc.any_after_last;
        }
        let summary = WindowSummary {
            start_s: i as f64 * self.width_s,
            gc_ms: acc.gc_ms,
            gc_fraction: fraction,
            heap_after_young: young,
            heap_after_gc: any,
            heap_considered: considered,
        };
        // A log shorter than half a window has no window to measure (no worst window, no
        // "no window spent 20% in GC"); its pauses still show a collapse when they alone fill
        // that share of half a window (the floor above: an underestimate of the share).
        let candidate = span >= MIN_COVERAGE * self.width_s;
        if candidate && self.worst.map_or(true, |w| fraction > w.gc_fraction) {
            self.worst = Some(summary);
        }
        if fraction >= self.collapse_gc_share {
            self.busy_windows += candidate as u64;
            if considered.is_some_and(|h| h >= self.collapse_heap_share) {
                self.collapse_windows += 1;
                if self.first_collapse.is_none() {
                    self.first_collapse = Some(summary);
                }
                if self
                    .worst_collapse
                    .map_or(true, |w| fraction > w.gc_fraction)
                {
                    self.worst_collapse = Some(summary);
                }
            }
        }
        self.write_row(i, &acc, &summary);
    }

    fn write_row(&mut self, i: i64, acc: &WindowAcc, s: &WindowSummary) {
        let Some(w) = self.writer.as_mut() else {
            return;
        };
        if self.error.is_some() {
            return;
        }
        let pct = |f: Option<f64>| f.map(|v| round2(v * 100.0));
        if let Some(last) = self.last_row {
            // Idle windows between two busy ones are rows too: a plot needs its zeros.
            let gap = i
                .saturating_sub(last)
                .saturating_sub(1)
                .clamp(0, MAX_GAP_ROWS);
            for g in 1..=gap {
                let row = Row {
                    window_start_s: round3((last + g) as f64 * self.width_s),
                    gc_ms: 0.0,
                    gc_fraction: 0.0,
                    pauses: 0,
                    full_gcs: 0,
                    heap_after_young_pct: None,
                    heap_after_gc_pct: None,
                    allocation_stall_ms: 0.0,
                };
                if let Err(e) = w.serialize(row) {
                    self.error = Some(e);
                    return;
                }
                self.rows += 1;
            }
        }
        self.last_row = Some(i);
        let row = Row {
            window_start_s: round3(s.start_s),
            gc_ms: round3(acc.gc_ms),
            gc_fraction: round3(s.gc_fraction),
            pauses: acc.pauses,
            full_gcs: acc.full_gcs,
            heap_after_young_pct: pct(acc.young_after_min),
            heap_after_gc_pct: pct(acc.any_after_min),
            allocation_stall_ms: round3(acc.stall_ms),
        };
        match w.serialize(row) {
            Ok(()) => self.rows += 1,
            Err(e) => self.error = Some(e),
        }
    }

    /// Close every window and flush the timeline.
    pub fn finish(&mut self) -> std::io::Result<()> {
        while !self.open.is_empty() {
            self.close_first();
        }
        if let Some(e) = self.error.take() {
            return Err(std::io::Error::other(e));
        }
        if let Some(w) = self.writer.as_mut() {
            w.flush()?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_window_index_is_floor_for_every_value() {
        let mut values = vec![
            0.0,
            -0.0,
            0.5,
            -0.5,
            1.0,
            -1.0,
            1.999_999_999,
            -1.000_000_001,
            4503599627370495.5,
            -4503599627370495.5,
            9.3e18,
            -9.3e18,
            i64::MAX as f64,
            i64::MIN as f64,
            1e300,
            -1e300,
            f64::MAX,
            f64::MIN,
            f64::MIN_POSITIVE,
            -f64::MIN_POSITIVE,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
        ];
        let mut x = 0.123_456_789f64;
        for _ in 0..10_000 {
            x = (x * 7919.0 + 0.37).fract() * 2e6 - 1e6;
            values.push(x);
            values.push(x / 1e5);
        }
        for q in values {
            assert_eq!(floor_index(q), q.floor() as i64, "{q}");
        }
    }

    /// The span is the `f64::min`/`max` fold of the times observed (from NaN): a NaN
    /// time leaves it, a first NaN is replaced by the next time.
    #[test]
    fn the_span_folds_as_f64_min_and_max() {
        let nan = f64::NAN;
        for times in [
            vec![3.0, 1.0, 7.0],
            vec![nan, 5.0, 2.0],
            vec![5.0, nan, 9.0],
            vec![nan],
            vec![-1e300, f64::INFINITY],
        ] {
            let mut w = Windows::new(1.0, None);
            for &t in &times {
                w.observe(t);
            }
            let (s, e) = times
                .iter()
                .fold((nan, nan), |(s, e), &t| (f64::min(s, t), f64::max(e, t)));
            let (ws, we) = w.span().unwrap();
            assert_eq!(
                (ws.to_bits(), we.to_bits()),
                (s.to_bits(), e.to_bits()),
                "{times:?}"
            );
        }
    }

    #[test]
    fn a_long_pause_fills_the_windows_it_spans() {
        let mut w = Windows::new(1.0, None);
        w.observe(0.0);
        w.pause(3.5, 2500.0, true); // 1.0 .. 3.5
        w.observe(10.0);
        w.finish().unwrap();
        let worst = w.worst.unwrap();
        assert_eq!(worst.gc_fraction, 1.0);
        assert_eq!(w.busy_windows, 3); // windows 1, 2 full; 3 half (0.5 ≥ 0.2)
    }

    #[test]
    fn garbage_times_and_durations_end_quickly_without_overflow() {
        // Found by the gc_log fuzz target: a window index at i64::MAX overflowed `i + 1`,
        // and a pause of 10^15 ms would have looped over 10^12 windows.
        let started = std::time::Instant::now();
        let mut w = Windows::new(1.0, Some(Box::new(Vec::new())));
        w.observe(1e300);
        w.pause(1e300, 1.0, false);
        w.observe(0.0);
        w.pause(5.0, 1e15, true);
        w.pause(f64::MAX, f64::MAX, true);
        w.observe(10.0);
        w.finish().unwrap();
        assert!(started.elapsed().as_secs() < 10, "{:?}", started.elapsed());
    }

    /// Skipping the search for old windows when a time cannot close any changes nothing:
    /// the same rows, worst and collapse windows as searching on every observation, over
    /// pauses long and short, times going back a little and far, and empty stretches.
    /// With 1 s windows a pause inside one window also skips the loop over its windows
    /// (the reference takes the loop), and a pause with its heap at the time observed
    /// last skips observing it again and looks its window up once: the same again.
    #[test]
    fn observing_a_time_again_closes_what_searching_every_time_closes() {
        // From the start of the uptime clock and from an epoch's seconds.
        for width in [0.7, 1.0] {
            for base in [0.0, 1.796e9] {
                same_as_the_reference(width, base);
            }
        }
    }

    /// Times just before, at and after the one where the first window closes (where the
    /// search is skipped below: see `quiet_below`), each followed by a pause reaching
    /// back to that window: it lands in it while it is open, else in the first open one.
    #[test]
    fn times_at_the_edge_of_closing_close_what_searching_every_time_closes() {
        for base in [0.0, 1.796e9, (1u64 << 38) as f64, (1u64 << 45) as f64] {
            let (fast, reference) = fast_and_reference(1.0, |w| {
                for k in 0..60 {
                    let edge = base + f64::from(k) + 1.0 + LOOKBACK_S;
                    let ulp = f64::from_bits(edge.to_bits() + 1) - edge;
                    for d in [-2e-3, -1e-3, -2e-4, -ulp, 0.0, ulp, 0.3] {
                        let t = edge + d;
                        w.observe(t);
                        w.pause(t - LOOKBACK_S - 0.5, 1.0, false);
                    }
                }
            });
            assert_eq!(fast, reference, "from {base}");
        }
    }

    fn same_as_the_reference(width: f64, base: f64) {
        let (fast, reference) = fast_and_reference(width, |w| {
            let mut x = 0.5f64;
            let mut t = base;
            for k in 0..20_000 {
                x = (x * 7919.0 + 0.37).fract();
                t += match k % 97 {
                    0 => 400.0 * x,
                    1 => -0.9 * x,
                    2 => -350.0 * x,
                    _ => 0.05 * x,
                };
                let ms = if k % 41 == 0 { 5e5 * x } else { 900.0 * x };
                w.observe(t);
                let heap = (k % 3 == 0).then_some((x, k % 2 == 0));
                match k % 4 {
                    // The analyzer's way: the heap's fill and the pause in one call, for
                    // the time it observed, or for another (the general steps).
                    1 => w.pause_observed(t, ms, k % 5 == 0, heap),
                    3 => w.pause_observed(t - 0.3 * x, ms, k % 5 == 0, heap),
                    _ => {
                        if let Some((f, young)) = heap {
                            w.heap_after(t, f, young);
                        }
                        w.pause(t, ms, k % 5 == 0);
                    }
                }
                if k % 7 == 0 {
                    w.stall(t - 1.0, x);
                }
            }
        });
        assert!(fast.0.lines().count() > 1000, "{}", fast.0.lines().count());
        assert_eq!(fast, reference);
    }

    /// The log's first pause reaches back before its first time: the span, and so the
    /// first window's coverage and share in GC, start where the pause did.
    #[test]
    fn a_first_pause_reaching_back_starts_the_span() {
        let (fast, reference) = fast_and_reference(1.0, |w| {
            w.observe(10.2);
            w.pause_observed(10.2, 150.0, false, Some((0.5, true)));
            w.observe(10.9);
        });
        assert_eq!(fast, reference);
        // Covered 10.05 to 10.9: 150 ms of 0.85 s.
        assert!(fast.1.contains("gc_fraction: 0.1764"), "{}", fast.1);
    }

    /// The timeline rows and the windows' summary after `script`, on the fast paths and
    /// on the reference's.
    fn fast_and_reference(
        width: f64,
        script: impl Fn(&mut Windows),
    ) -> ((String, String), (String, String)) {
        let run = |reference: bool| {
            let mut out = Vec::new();
            let summary;
            {
                let mut w = Windows::new(width, Some(Box::new(&mut out)));
                w.reference = reference;
                script(&mut w);
                w.finish().unwrap();
                summary = format!(
                    "{:?} {:?} {:?} {} {} {}",
                    w.worst,
                    w.worst_collapse,
                    w.first_collapse,
                    w.busy_windows,
                    w.collapse_windows,
                    w.closed
                );
            }
            (String::from_utf8(out).unwrap(), summary)
        };
        (run(false), run(true))
    }

    #[test]
    fn collapse_needs_a_full_heap_after_young_gc() {
        let mut w = Windows::new(1.0, None);
        w.observe(0.0);
        w.heap_after(0.5, 0.9, true);
        w.pause(1.5, 300.0, true);
        w.heap_after(2.5, 0.3, true);
        w.pause(2.9, 300.0, true);
        w.observe(5.0);
        w.finish().unwrap();
        assert_eq!(w.busy_windows, 2);
        // Window 1 carries 0.9 from window 0; window 2 has its own 0.3.
        assert_eq!(w.collapse_windows, 1);
        assert_eq!(w.first_collapse.unwrap().start_s, 1.0);
    }
}
