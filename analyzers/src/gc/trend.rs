//! Heap after GC as a share of the maximum, streamed: first, last, range, mean and the
//! least-squares slope over log time.

use super::report::HeapTrend;
use super::rounding::round2;

/// Heap fractions, streamed.
#[derive(Debug, Default, Clone)]
pub(super) struct Trend {
    pub(super) n: u64,
    pub(super) first: f64,
    pub(super) last: f64,
    pub(super) min: f64,
    pub(super) max: f64,
    pub(super) sum: f64,
    pub(super) high: u64,
    // Least squares over (minutes, fraction).
    pub(super) st: f64,
    pub(super) sy: f64,
    pub(super) stt: f64,
    pub(super) sty: f64,
    pub(super) timed: u64,
}

/// Log time in minutes, the trends' unit.
pub(super) fn minutes(t: f64) -> f64 {
    t / 60.0
}

impl Trend {
    /// A heap fraction `f` at log time `minute` ([`minutes`]: a young pause adds to two
    /// trends, and the division is done once).
    pub(super) fn add_at_minute(&mut self, minute: Option<f64>, f: f64, high_share: f64) {
        if self.n == 0 {
            self.first = f;
            self.min = f;
            self.max = f;
        }
        self.n += 1;
        self.last = f;
        // `f64::min`/`max` by compare and assign (theirs pay NaN handling, four times a
        // young pause: docs/perf.md): a NaN `f` keeps the bound, a NaN bound (a first
        // NaN) takes `f`, as theirs do.
        if f < self.min || self.min.is_nan() {
            self.min = f;
        }
        if f > self.max || self.max.is_nan() {
            self.max = f;
        }
        self.sum += f;
        self.high += u64::from(f >= high_share);
        if let Some(m) = minute {
            self.timed += 1;
            self.st += m;
            self.sy += f;
            self.stt += m * m;
            self.sty += m * f;
        }
    }

    pub(super) fn report(&self) -> Option<HeapTrend> {
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

#[cfg(test)]
mod tests {
    use super::Trend;

    /// The bounds are what `f64::min`/`max` folded over the same values give, NaNs first,
    /// between and last included.
    #[test]
    fn bounds_fold_as_f64_min_and_max() {
        let nan = f64::NAN;
        for values in [
            vec![0.5, 0.2, 0.9, 0.2],
            vec![nan, 0.4, 0.1],
            vec![0.4, nan, 0.7, 0.1],
            vec![0.3, nan],
            vec![nan, nan],
            vec![1.0, 0.0, f64::INFINITY, f64::NEG_INFINITY],
        ] {
            let mut t = Trend::default();
            for &f in &values {
                t.add_at_minute(None, f, 0.8);
            }
            let (min, max) = values[1..]
                .iter()
                .fold((values[0], values[0]), |(lo, hi), &f| {
                    (lo.min(f), hi.max(f))
                });
            assert_eq!(
                (t.min.to_bits(), t.max.to_bits()),
                (min.to_bits(), max.to_bits()),
                "{values:?}"
            );
        }
    }
}
