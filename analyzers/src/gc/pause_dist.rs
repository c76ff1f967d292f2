//! A pause type's durations (µs) counted per bucket of the histogram they end up in, the
//! histogram itself built once, for the report: the same [`Dist`] as recording every value
//! into it, for less a pause than the histogram's record (its bucket search, range check
//! and bookkeeping: docs/perf.md).
//!
//! The buckets are those of `Histogram::new(3)` (what [`Dist`] holds): unit resolution up
//! to 2,047, then 1,024 sub-buckets per power of two. A test holds the two to the same
//! histogram, extremes and sum over values of every size.

use crate::vocab::report::Dist;

/// `Histogram::new(3)`'s geometry: sub-buckets per bucket (2^11, the power of two at or
/// above 2 × 10^3), half of them as a shift, and the leading-zero base (64 − 11).
const SUB_BUCKET_MASK: u64 = (1 << 11) - 1;
const HALF_MAGNITUDE: u32 = 10;
const LEADING_ZERO_BASE: u32 = 53;

/// Values from here on (2^40 µs, twelve days: only a garbage duration) are recorded into
/// the histogram directly, as is every value after the first of them, so the histogram's
/// own range handling decides them.
const COUNTED_BELOW: u64 = 1 << 40;

#[derive(Debug, Clone)]
pub(super) struct PauseDist {
    /// Values per bucket index (grown to the largest index seen).
    counts: Vec<u64>,
    min: u64,
    max: u64,
    sum: u128,
    /// [`COUNTED_BELOW`], or 0 once the values go to `direct`.
    counted_below: u64,
    direct: Option<Dist>,
}

impl Default for PauseDist {
    fn default() -> Self {
        PauseDist {
            counts: Vec::new(),
            min: u64::MAX,
            max: 0,
            sum: 0,
            counted_below: COUNTED_BELOW,
            direct: None,
        }
    }
}

/// The histogram's index for `v` (below [`COUNTED_BELOW`]): its bucket (powers of two
/// above the unit-resolution range) and sub-bucket.
#[inline]
fn index_of(v: u64) -> usize {
    let bucket = LEADING_ZERO_BASE - (v | SUB_BUCKET_MASK).leading_zeros();
    let sub = (v >> bucket) as usize;
    (((bucket + 1) as usize) << HALF_MAGNITUDE) + sub - (1 << HALF_MAGNITUDE)
}

/// The lowest value of index `i`'s bucket.
fn value_of(i: usize) -> u64 {
    let half = 1usize << HALF_MAGNITUDE;
    let (bucket, sub) = match (i >> HALF_MAGNITUDE).checked_sub(1) {
        Some(b) => (b, (i & (half - 1)) + half),
        None => (0, i),
    };
    (sub as u64) << bucket
}

impl PauseDist {
    #[inline]
    pub(super) fn record(&mut self, v: u64) {
        if v >= self.counted_below {
            return self.record_direct(v);
        }
        let i = index_of(v);
        if i >= self.counts.len() {
            self.counts.resize(i + 1, 0);
        }
        self.counts[i] += 1;
        if v < self.min {
            self.min = v;
        }
        if v > self.max {
            self.max = v;
        }
        self.sum += u128::from(v);
    }

    #[cold]
    fn record_direct(&mut self, v: u64) {
        let d = match &mut self.direct {
            Some(d) => d,
            None => {
                self.counted_below = 0;
                self.direct.insert(self.counted())
            }
        };
        d.record(v);
    }

    /// The [`Dist`] recording every value into one makes.
    pub(super) fn dist(&self) -> Dist {
        match &self.direct {
            Some(d) => d.clone(),
            None => self.counted(),
        }
    }

    /// The counted values as a [`Dist`]: each bucket's count recorded at its lowest value
    /// (the histogram shows its extremes as their buckets' bounds, so which value of a
    /// bucket it was given is not seen), then the exact extremes and sum.
    fn counted(&self) -> Dist {
        let mut d = Dist::default();
        for (i, &n) in self.counts.iter().enumerate() {
            if n > 0 {
                d.record_n(value_of(i), n);
            }
        }
        d.set_exact(self.min, self.max, self.sum);
        d
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every bucket's lowest value indexes that bucket, and the index is the histogram's:
    /// neighbours share a bucket exactly when the histogram says they are equivalent.
    #[test]
    fn indexes_are_the_histograms() {
        let h = hdrhistogram::Histogram::<u64>::new(3).unwrap();
        let mut v = 0u64;
        let mut checked = 0;
        while v < COUNTED_BELOW {
            for w in [v, v + 1, v.saturating_sub(1), v | SUB_BUCKET_MASK] {
                let i = index_of(w);
                assert_eq!(index_of(value_of(i)), i, "{w}");
                assert_eq!(value_of(i), h.lowest_equivalent(w), "{w}");
                checked += 1;
            }
            v = if v < 5000 { v + 1 } else { v + v / 997 };
        }
        assert!(checked > 20_000, "{checked}");
    }

    /// Counting then building gives the histogram (counts, extremes, bucket range), the
    /// exact extremes and sum that recording each value gives, whatever the values: zeros,
    /// the unit range, large, past the counted range (then recorded directly), in any
    /// order.
    #[test]
    fn the_same_dist_as_recording_every_value() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let cases: Vec<Vec<u64>> = vec![
            vec![],
            vec![0],
            vec![0, 0, 5],
            vec![69_637],
            vec![2047, 2048, 2049, 4095, 4096],
            (0..5000).map(|_| next() % 200_000).collect(),
            (0..5000).map(|_| next() % 3000).collect(),
            (0..2000).map(|_| next() >> (next() % 64)).collect(),
            vec![5, COUNTED_BELOW - 1, 7],
            vec![5, COUNTED_BELOW, 7, 0, 1 << 50],
            vec![u64::MAX, 3, 1 << 62],
        ];
        for values in cases {
            let (mut want, mut got) = (Dist::default(), PauseDist::default());
            for &v in &values {
                want.record(v);
                got.record(v);
            }
            let got = got.dist();
            assert!(got.histogram() == want.histogram(), "{values:?}");
            assert_eq!(
                (got.len(), got.min(), got.max(), got.mean().to_bits()),
                (want.len(), want.min(), want.max(), want.mean().to_bits()),
                "{values:?}"
            );
            for q in [0.0, 0.5, 0.99, 1.0] {
                assert_eq!(got.quantile(q), want.quantile(q), "{values:?} {q}");
            }
        }
    }
}
