//! End-to-end latency read from a message's two stamps: from its actual send (bytes 0..8),
//! and from its intended send time, the pacer's slot (bytes 8..16). A send the pacer made
//! late still counts its wait in the second (coordinated omission); rules decide on it.

use super::measure::{latency_histogram, percentiles, Percentiles};
use super::payload::{read_e2e, read_e2e_intended};
use hdrhistogram::Histogram;

/// Both histograms of one consumer, in microseconds.
pub struct E2eRecorder {
    pub sent: Histogram<u64>,
    pub intended: Histogram<u64>,
}

impl Default for E2eRecorder {
    fn default() -> Self {
        E2eRecorder {
            sent: latency_histogram(),
            intended: latency_histogram(),
        }
    }
}

impl E2eRecorder {
    /// Records a message received at wall-clock `now_ns` when it was sent inside the window
    /// `[from, to]` (wall-clock ns); `false` for one outside it or without a stamp.
    pub fn record(&mut self, payload: &[u8], now_ns: i64, from: i64, to: i64) -> bool {
        let Some(sent) = read_e2e(payload).filter(|s| *s >= from && *s <= to) else {
            return false;
        };
        let us = |t: i64| ((now_ns - t).max(1000) / 1000) as u64;
        self.sent.saturating_record(us(sent));
        if let Some(intended) = read_e2e_intended(payload).filter(|i| *i > 0 && *i <= sent) {
            self.intended.saturating_record(us(intended));
        }
        true
    }

    /// The intended-time percentiles, None when no message carried that stamp.
    pub fn intended_percentiles(&self) -> Option<Percentiles> {
        (!self.intended.is_empty()).then(|| percentiles(&self.intended))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kit::payload::{stamp_e2e, stamp_e2e_intended};

    #[test]
    fn a_late_send_counts_its_wait_from_the_intended_time() {
        let mut r = E2eRecorder::default();
        let mut p = vec![0u8; 32];
        // Intended at 1 s, sent at 1.050 s (50 ms late), received at 1.052 s.
        stamp_e2e(&mut p, 1_050_000_000);
        stamp_e2e_intended(&mut p, 1_000_000_000);
        assert!(r.record(&p, 1_052_000_000, 0, i64::MAX));
        assert_eq!(r.sent.max(), r.sent.highest_equivalent(2_000));
        assert_eq!(r.intended.max(), r.intended.highest_equivalent(52_000));
        // Outside the window: not recorded.
        assert!(!r.record(&p, 1_052_000_000, 2_000_000_000, i64::MAX));
        // A payload too short for the intended stamp: only the actual send counts.
        let mut short = vec![0u8; 12];
        stamp_e2e(&mut short, 1_050_000_000);
        assert!(r.record(&short, 1_051_000_000, 0, i64::MAX));
        assert_eq!(r.sent.len(), 2);
        assert_eq!(r.intended.len(), 1);
    }
}
