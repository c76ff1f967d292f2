//! One figure followed over the intervals of a series, in bounded memory: count, extremes,
//! mean, median, first and last value, and a least-squares trend over time.
//!
//! The first [`EXACT`] values are kept as they are (short captures get exact medians); after
//! that they fold into a sparse log histogram of 1% wide buckets, so the median is within 1%
//! and memory is at most a few hundred buckets whatever the length of the input.

use std::collections::BTreeMap;

use serde::Serialize;

const EXACT: usize = 64;
/// Bucket width: values within 1% share a bucket.
const GROWTH: f64 = 1.01;

#[derive(Debug, Clone, Default)]
pub(crate) struct Stat {
    n: u64,
    min: f64,
    max: f64,
    sum: f64,
    first: f64,
    last: f64,
    exact: Vec<f64>,
    /// Bucket index → count; the sign of the value is in the key (negative values below 0).
    hist: BTreeMap<i32, u64>,
    zeros: u64,
    // Least squares of value against time (s).
    st: f64,
    sy: f64,
    sty: f64,
    stt: f64,
    t_first: f64,
    t_last: f64,
}

fn bucket(v: f64) -> i32 {
    let b = (v.abs().max(1e-9).ln() / GROWTH.ln()).floor() as i32;
    if v < 0.0 {
        -b - 100_000
    } else {
        b
    }
}

fn bucket_value(k: i32) -> f64 {
    if k <= -100_000 {
        -GROWTH.powi(-k - 100_000) * GROWTH.sqrt()
    } else {
        GROWTH.powi(k) * GROWTH.sqrt()
    }
}

impl Stat {
    /// Add a value seen at time `t` (seconds from the start of the series).
    pub fn add(&mut self, t: f64, v: f64) {
        if !v.is_finite() {
            return;
        }
        if self.n == 0 {
            self.min = v;
            self.max = v;
            self.first = v;
            self.t_first = t;
        }
        self.n += 1;
        self.min = self.min.min(v);
        self.max = self.max.max(v);
        self.sum += v;
        self.last = v;
        self.t_last = t;
        self.st += t;
        self.sy += v;
        self.sty += t * v;
        self.stt += t * t;
        if self.exact.len() < EXACT && self.hist.is_empty() && self.zeros == 0 {
            self.exact.push(v);
            return;
        }
        if !self.exact.is_empty() {
            for x in std::mem::take(&mut self.exact) {
                self.fold(x);
            }
        }
        self.fold(v);
    }

    fn fold(&mut self, v: f64) {
        if v == 0.0 {
            self.zeros += 1;
        } else {
            *self.hist.entry(bucket(v)).or_default() += 1;
        }
    }

    pub fn count(&self) -> u64 {
        self.n
    }

    pub fn max(&self) -> Option<f64> {
        (self.n > 0).then_some(self.max)
    }

    pub fn mean(&self) -> Option<f64> {
        (self.n > 0).then(|| self.sum / self.n as f64)
    }

    pub fn last(&self) -> Option<f64> {
        (self.n > 0).then_some(self.last)
    }

    pub fn first(&self) -> Option<f64> {
        (self.n > 0).then_some(self.first)
    }

    /// The value at quantile `q` (0..1), within the extremes.
    pub fn quantile(&self, q: f64) -> Option<f64> {
        if self.n == 0 {
            return None;
        }
        if !self.exact.is_empty() {
            let mut v = self.exact.clone();
            v.sort_by(f64::total_cmp);
            let i = ((v.len() - 1) as f64 * q).round() as usize;
            return Some(v[i]);
        }
        let rank = ((self.n - 1) as f64 * q).round() as u64;
        // Ascending order: negative buckets (most negative first), zeros, positive buckets.
        let mut seen = 0u64;
        let mut order: Vec<(f64, u64)> = Vec::with_capacity(self.hist.len() + 1);
        let (neg, pos): (Vec<_>, Vec<_>) = self.hist.iter().partition(|(k, _)| **k <= -100_000);
        for (k, c) in neg.into_iter().rev() {
            order.push((bucket_value(*k), *c));
        }
        if self.zeros > 0 {
            order.push((0.0, self.zeros));
        }
        for (k, c) in pos {
            order.push((bucket_value(*k), *c));
        }
        for (v, c) in order {
            seen += c;
            if seen > rank {
                return Some(v.clamp(self.min, self.max));
            }
        }
        Some(self.max)
    }

    /// How many values are below `x` (exact for short series, by bucket after).
    pub fn count_below(&self, x: f64) -> u64 {
        if !self.exact.is_empty() {
            return self.exact.iter().filter(|&&v| v < x).count() as u64;
        }
        let mut n = if 0.0 < x { self.zeros } else { 0 };
        for (k, c) in &self.hist {
            if bucket_value(*k) < x {
                n += c;
            }
        }
        n
    }

    pub fn median(&self) -> Option<f64> {
        self.quantile(0.5)
    }

    /// Coefficient of variation from the exact values or the histogram (σ / mean).
    pub fn cv(&self) -> Option<f64> {
        let mean = self.mean()?;
        if self.n < 2 || mean == 0.0 {
            return None;
        }
        let var = if !self.exact.is_empty() {
            self.exact.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (self.n - 1) as f64
        } else {
            let mut s = self.zeros as f64 * mean * mean;
            for (k, c) in &self.hist {
                s += *c as f64 * (bucket_value(*k) - mean).powi(2);
            }
            s / (self.n - 1) as f64
        };
        Some(var.sqrt() / mean.abs())
    }

    /// Least-squares slope of the value per second; None with fewer than 3 values or no
    /// spread in time.
    pub fn slope_per_s(&self) -> Option<f64> {
        if self.n < 3 {
            return None;
        }
        let n = self.n as f64;
        let den = n * self.stt - self.st * self.st;
        if den.abs() < 1e-12 {
            return None;
        }
        Some((n * self.sty - self.st * self.sy) / den)
    }

    /// The summary for the report, values scaled by `k` (e.g. µs → ms).
    pub fn summary(&self, k: f64) -> Option<Summary> {
        if self.n == 0 {
            return None;
        }
        let r = |v: f64| round_sig(v * k);
        Some(Summary {
            n: self.n,
            min: r(self.min),
            p50: r(self.median().unwrap_or(0.0)),
            max: r(self.max),
            mean: r(self.sum / self.n as f64),
            last: r(self.last),
        })
    }

    /// The summary with a trend (per second, scaled by `k`).
    pub fn trend_summary(&self, k: f64) -> Option<TrendSummary> {
        let s = self.summary(k)?;
        Some(TrendSummary {
            first: round_sig(self.first * k),
            trend_per_s: self.slope_per_s().map(|v| round_sig(v * k)),
            summary: s,
        })
    }
}

/// A figure over the intervals: `n` values, their extremes, median, mean and last value.
#[derive(Debug, Clone, Copy, Serialize, PartialEq)]
pub struct Summary {
    pub n: u64,
    pub min: f64,
    pub p50: f64,
    pub max: f64,
    pub mean: f64,
    pub last: f64,
}

/// A summary with the first value and the least-squares trend per second.
#[derive(Debug, Clone, Copy, Serialize, PartialEq)]
pub struct TrendSummary {
    #[serde(flatten)]
    pub summary: Summary,
    pub first: f64,
    pub trend_per_s: Option<f64>,
}

/// Round to 4 significant digits (reports show measurements, not float noise).
pub(crate) fn round_sig(v: f64) -> f64 {
    if v == 0.0 || !v.is_finite() {
        return if v.is_finite() { 0.0 } else { v };
    }
    let mag = v.abs().log10().floor() as i32;
    let k = 10f64.powi(3 - mag);
    let r = (v * k).round() / k;
    // Whole numbers above 10^4 keep their digits (message counts).
    if v.abs() >= 1e4 {
        v.round()
    } else {
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_then_within_one_percent() {
        let mut s = Stat::default();
        for i in 0..10 {
            s.add(i as f64, (i * 10) as f64);
        }
        assert_eq!(s.median(), Some(50.0));
        assert_eq!(s.slope_per_s(), Some(10.0));
        for i in 10..100_000 {
            s.add(i as f64, (i % 1000) as f64);
        }
        let m = s.median().unwrap();
        assert!((m - 500.0).abs() <= 10.0, "{m}");
        assert_eq!(s.max(), Some(999.0));
        assert!(s.hist.len() < 1000);
    }

    #[test]
    fn negative_and_zero_values_order_right() {
        let mut s = Stat::default();
        for v in [-5.0, -5.0, 0.0, 0.0, 0.0, 3.0, 3.0]
            .iter()
            .cycle()
            .take(700)
        {
            s.add(0.0, *v);
        }
        assert_eq!(s.median(), Some(0.0));
        assert!((s.quantile(0.0).unwrap() + 5.0).abs() < 0.1);
        assert!((s.quantile(1.0).unwrap() - 3.0).abs() < 0.1);
    }

    #[test]
    fn rounding_keeps_four_digits() {
        assert_eq!(round_sig(0.123456), 0.1235);
        assert_eq!(round_sig(15621.7), 15622.0);
        assert_eq!(round_sig(2.5), 2.5);
    }
}
