//! Pieces every log report shares: diagnoses, example lines, timestamp provenance,
//! the analysed window, and histogram summaries.

use std::fmt::Write as _;

use hdrhistogram::Histogram;
use serde::Serialize;

use crate::librdkafka::TimestampSource;

/// A gap found in the log: what was seen, why it happens, what to change.
#[derive(Debug, Clone, Serialize)]
pub struct Diagnosis {
    /// Stable id users script against (`per-request-ceiling`, `fetch-queue-backoff`, …).
    pub id: String,
    /// One line for humans.
    pub title: String,
    /// The numbers behind the diagnosis.
    pub evidence: serde_json::Value,
    /// The cause, in the post's terms.
    pub cause: String,
    /// The configuration change (or code change) that removes it.
    pub fix: String,
    /// Two or three log lines that show it.
    pub examples: Vec<ExampleLine>,
}

/// One input line kept as evidence.
#[derive(Debug, Clone, Serialize)]
pub struct ExampleLine {
    /// 1-based line number in the input.
    pub line: u64,
    /// The line (cut to [`EXAMPLE_CHARS`] characters).
    pub text: String,
}

/// Example lines are cut to this many characters.
pub const EXAMPLE_CHARS: usize = 300;

/// Keeps the first few lines of one kind.
#[derive(Debug, Clone, Default)]
pub(crate) struct Examples {
    pub lines: Vec<ExampleLine>,
}

impl Examples {
    pub const CAP: usize = 3;

    pub fn offer(&mut self, line_no: u64, line: &[u8]) {
        if self.lines.len() < Self::CAP {
            self.lines.push(ExampleLine {
                line: line_no,
                text: String::from_utf8_lossy(line)
                    .chars()
                    .take(EXAMPLE_CHARS)
                    .collect(),
            });
        }
    }

    pub fn take(&self, n: usize) -> Vec<ExampleLine> {
        self.lines.iter().take(n).cloned().collect()
    }
}

/// How many recognised records carried each kind of timestamp.
#[derive(Debug, Clone, Default, Serialize)]
pub struct TimestampCounts {
    /// librdkafka's own `|secs.ms|`.
    pub librdkafka: u64,
    /// The wrapper's date/time.
    pub wrapper: u64,
    /// No usable time on the line.
    pub none: u64,
}

impl TimestampCounts {
    pub(crate) fn add(&mut self, source: Option<TimestampSource>) {
        match source {
            Some(TimestampSource::Librdkafka) => self.librdkafka += 1,
            Some(TimestampSource::Wrapper) => self.wrapper += 1,
            None => self.none += 1,
        }
    }

    /// Both counts as one.
    pub(crate) fn merge(&mut self, other: &TimestampCounts) {
        self.librdkafka += other.librdkafka;
        self.wrapper += other.wrapper;
        self.none += other.none;
    }

    /// The report's `timestamps` field: the source most records had; "none" when
    /// most records had no time (rates and timelines are then not computed).
    pub fn label(&self) -> &'static str {
        if self.none >= self.librdkafka + self.wrapper {
            "none"
        } else if self.librdkafka >= self.wrapper {
            "librdkafka"
        } else {
            "wrapper"
        }
    }
}

/// The time span the report covers.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Window {
    /// First timestamp (epoch seconds, or seconds since midnight for time-only logs).
    pub start_s: f64,
    /// Last timestamp.
    pub end_s: f64,
    /// `end_s - start_s`.
    pub duration_s: f64,
}

/// Tracks the earliest and latest timestamps.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Span {
    pub min: Option<f64>,
    pub max: Option<f64>,
}

impl Span {
    pub fn add(&mut self, t: f64) {
        self.min = Some(self.min.map_or(t, |m| m.min(t)));
        self.max = Some(self.max.map_or(t, |m| m.max(t)));
    }

    /// Both spans' times as one.
    pub fn merge(&mut self, other: &Span) {
        for t in [other.min, other.max].into_iter().flatten() {
            self.add(t);
        }
    }

    pub fn window(&self, start: Option<f64>, end: Option<f64>) -> Option<Window> {
        let s = start.or(self.min)?;
        let e = end.or(self.max)?;
        Some(Window {
            start_s: s,
            end_s: e,
            duration_s: (e - s).max(0.0),
        })
    }
}

/// A distribution of u64 values: an HDR histogram (3 significant digits, grows as
/// needed) plus the exact extremes, so that quantiles are never reported outside
/// the values actually seen (15621-byte requests report 15621, not 15623).
#[derive(Debug, Clone)]
pub(crate) struct Dist {
    h: Histogram<u64>,
    min: u64,
    max: u64,
    sum: u128,
}

impl Default for Dist {
    fn default() -> Self {
        Dist {
            h: Histogram::new(3).expect("3 significant digits is a valid histogram precision"),
            min: u64::MAX,
            max: 0,
            sum: 0,
        }
    }
}

impl Dist {
    pub fn record(&mut self, v: u64) {
        // `record` grows an auto-resizing histogram (`saturating_record` would clamp
        // to its current top); only values beyond u64 could fail.
        let _ = self.h.record(v);
        self.min = self.min.min(v);
        self.max = self.max.max(v);
        self.sum += v as u128;
    }

    /// `n` values `v`: what `n` calls of [`record`](Self::record) make.
    pub fn record_n(&mut self, v: u64, n: u64) {
        let _ = self.h.record_n(v, n);
        self.min = self.min.min(v);
        self.max = self.max.max(v);
        self.sum += v as u128 * n as u128;
    }

    /// The exact extremes and sum of values recorded into the histogram some other way
    /// (at other values of the same buckets: see `gc::pause_dist`).
    pub(crate) fn set_exact(&mut self, min: u64, max: u64, sum: u128) {
        self.min = min;
        self.max = max;
        self.sum = sum;
    }

    /// Both distributions' values as one: what recording the other's values here makes.
    pub fn merge(&mut self, other: &Dist) {
        if other.is_empty() {
            return;
        }
        // Both histograms resize as needed: adding cannot fail for want of range.
        let _ = self.h.add(&other.h);
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
        self.sum += other.sum;
    }

    pub fn is_empty(&self) -> bool {
        self.h.is_empty()
    }

    pub fn len(&self) -> u64 {
        self.h.len()
    }

    pub fn mean(&self) -> f64 {
        if self.is_empty() {
            0.0
        } else {
            self.sum as f64 / self.h.len() as f64
        }
    }

    pub fn stdev(&self) -> f64 {
        self.h.stdev()
    }

    /// The value at quantile `q`, within the exact extremes.
    pub fn quantile(&self, q: f64) -> u64 {
        self.h
            .value_at_quantile(q)
            .clamp(self.min, self.max.max(self.min))
    }

    pub fn min(&self) -> u64 {
        if self.is_empty() {
            0
        } else {
            self.min
        }
    }

    pub fn max(&self) -> u64 {
        self.max
    }

    pub fn histogram(&self) -> &Histogram<u64> {
        &self.h
    }
}

/// Milliseconds from a histogram of microseconds.
pub(crate) fn us_to_ms(us: u64) -> f64 {
    us as f64 / 1000.0
}

/// Round to 3 decimals for reports (sub-microsecond digits of ms are noise).
pub(crate) fn round3(v: f64) -> f64 {
    (v * 1000.0).round() / 1000.0
}

/// Per-second counts of one thing, for "requests/s" statistics: seconds in the
/// middle of the log only (the first and last seconds are partial).
#[derive(Debug, Clone, Default)]
pub(crate) struct PerSecond {
    current: Option<i64>,
    first: Option<i64>,
    count: u64,
    hist: Dist,
}

/// Longest run of empty seconds counted as zeros between two busy ones.
const MAX_GAP_FILL: i64 = 3600;

impl PerSecond {
    pub fn add(&mut self, t: f64) {
        let s = t.floor() as i64;
        match self.current {
            None => {
                self.current = Some(s);
                self.first = Some(s);
                self.count = 1;
            }
            Some(c) if s <= c => self.count += 1, // late lines fold into the current second
            Some(c) => {
                if Some(c) != self.first {
                    self.hist.record(self.count);
                }
                for _ in 0..(s - c - 1).min(MAX_GAP_FILL) {
                    self.hist.record(0);
                }
                self.current = Some(s);
                self.count = 1;
            }
        }
    }

    /// Statistics over the complete seconds, when there are any.
    pub fn summary(&self) -> Option<RateSummary> {
        let h = &self.hist;
        if h.is_empty() {
            return None;
        }
        let mean = h.mean();
        Some(RateSummary {
            seconds: h.len(),
            per_s_mean: round3(mean),
            per_s_p50: h.quantile(0.5),
            per_s_min: h.min(),
            per_s_max: h.max(),
            cv: if mean > 0.0 && h.len() > 1 {
                Some(round3(h.stdev() / mean))
            } else {
                None
            },
        })
    }
}

/// Per-second rate over the complete seconds of the log.
#[derive(Debug, Clone, Serialize)]
pub struct RateSummary {
    /// Complete seconds measured.
    pub seconds: u64,
    /// Mean per second.
    pub per_s_mean: f64,
    /// Median per second.
    pub per_s_p50: u64,
    /// Quietest second.
    pub per_s_min: u64,
    /// Busiest second.
    pub per_s_max: u64,
    /// Coefficient of variation (σ/mean): near 0 is a flat rate.
    pub cv: Option<f64>,
}

/// Render a diagnosis for the human report (wrapped to ~80 columns).
pub(crate) fn render_diagnosis(out: &mut String, d: &Diagnosis) {
    let _ = writeln!(out);
    wrap_into(out, "* ", &format!("{} [{}]", d.title, d.id));
    wrap_into(out, "  cause: ", &d.cause);
    wrap_into(out, "  fix:   ", &d.fix);
    if let Some(obj) = d.evidence.as_object() {
        let mut parts = Vec::new();
        for (k, v) in obj {
            if v.is_object() || v.is_array() {
                continue;
            }
            parts.push(format!("{k}={v}"));
        }
        if !parts.is_empty() {
            wrap_into(out, "  evidence: ", &parts.join(", "));
        }
    }
    // Example lines end with librdkafka's message: show their tail in 80 columns
    // (--json has them whole).
    for e in &d.examples {
        let label = format!("    line {}: ", e.line);
        let room = 79usize.saturating_sub(label.chars().count()).max(20);
        let n = e.text.chars().count();
        let text: String = if n > room {
            let tail: String = e.text.chars().skip(n - (room - 1)).collect();
            format!("…{tail}")
        } else {
            e.text.clone()
        };
        let _ = writeln!(out, "{label}{text}");
    }
}

/// Appends `text` after `label`, wrapped at 79 columns, continuation lines indented under
/// the text.
pub fn wrap_into(out: &mut String, label: &str, text: &str) {
    const WIDTH: usize = 79;
    let indent = " ".repeat(label.chars().count());
    let mut line = label.to_string();
    let mut empty = true;
    for word in text.split_whitespace() {
        if !empty && line.chars().count() + 1 + word.chars().count() > WIDTH {
            let _ = writeln!(out, "{line}");
            line = indent.clone();
            empty = true;
        }
        if !empty {
            line.push(' ');
        }
        line.push_str(word);
        empty = false;
    }
    let _ = writeln!(out, "{line}");
}

/// Bytes for humans (1 decimal, binary units).
pub(crate) fn human_bytes(b: f64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b;
    let mut u = 0;
    while v >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{v:.0} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_second_skips_partial_edges_and_fills_gaps() {
        let mut p = PerSecond::default();
        // second 10 (partial, dropped), 11 ×3, 12 idle, 13 ×2, 14 (partial, never closed)
        for t in [10.5, 11.0, 11.2, 11.9, 13.1, 13.4, 14.0] {
            p.add(t);
        }
        let s = p.summary().unwrap();
        assert_eq!(s.seconds, 3); // 11, 12 (zero), 13
        assert_eq!(s.per_s_max, 3);
        assert_eq!(s.per_s_min, 0);
    }

    #[test]
    fn timestamp_label_follows_the_majority() {
        let mut c = TimestampCounts::default();
        c.add(Some(TimestampSource::Wrapper));
        c.add(Some(TimestampSource::Wrapper));
        c.add(None);
        assert_eq!(c.label(), "wrapper");
        c.add(None);
        c.add(None);
        assert_eq!(c.label(), "none");
    }
}

/// "the busiest" for one, "the 4 busiest" for more: a table's heading in words.
pub fn the_busiest(n: usize) -> String {
    if n == 1 {
        "the busiest".into()
    } else {
        format!("the {n} busiest")
    }
}
