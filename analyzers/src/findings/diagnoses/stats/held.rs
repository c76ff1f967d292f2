//! Where a rule held over a series: intervals, episodes, and per broker the figures
//! seen while it held.

use super::thresholds::Thresholds;
use crate::stats::interval::Interval;
use crate::stats::report::Episode;
use crate::stats::stat::{round_sig, Stat};

/// Episodes kept per diagnosis.
const MAX_EPISODES: usize = 10;

/// Where one rule held over a series.
#[derive(Debug, Clone, Default)]
pub(crate) struct Held {
    pub considered: u64,
    pub held: u64,
    pub(super) episodes: Vec<Episode>,
    pub(super) open: Option<Episode>,
}

impl Held {
    pub fn observe(&mut self, r: Option<bool>, iv: &Interval) {
        match r {
            Some(true) => {
                self.considered += 1;
                self.held += 1;
                match &mut self.open {
                    Some(e) => {
                        e.to_line = iv.line;
                        e.to_t_s = round_sig(iv.t_s);
                        e.intervals += 1;
                    }
                    None => {
                        self.open = Some(Episode {
                            from_line: iv.prev_line,
                            to_line: iv.line,
                            from_t_s: round_sig(iv.t_s - iv.dt_s),
                            to_t_s: round_sig(iv.t_s),
                            intervals: 1,
                        })
                    }
                }
            }
            Some(false) => {
                self.considered += 1;
                self.close();
            }
            None => self.close(),
        }
    }

    fn close(&mut self) {
        if let Some(e) = self.open.take() {
            if self.episodes.len() < MAX_EPISODES {
                self.episodes.push(e);
            }
        }
    }

    pub fn share(&self) -> f64 {
        if self.considered == 0 {
            0.0
        } else {
            self.held as f64 / self.considered as f64
        }
    }

    pub(super) fn episodes(&self) -> Vec<Episode> {
        let mut e = self.episodes.clone();
        if e.len() < MAX_EPISODES {
            e.extend(self.open.clone());
        }
        e
    }

    /// Fires for a share rule: held in enough of the intervals it applied to.
    pub(super) fn by_share(&self, t: &Thresholds) -> bool {
        self.held > 0 && self.share() >= t.min_share_of_intervals
    }
}

/// Pearson correlation, streamed.
#[derive(Debug, Clone, Default)]
pub(super) struct Corr {
    n: f64,
    sx: f64,
    sy: f64,
    sxy: f64,
    sxx: f64,
    syy: f64,
}

impl Corr {
    pub(super) fn add(&mut self, x: f64, y: f64) {
        self.n += 1.0;
        self.sx += x;
        self.sy += y;
        self.sxy += x * y;
        self.sxx += x * x;
        self.syy += y * y;
    }

    pub(super) fn r(&self) -> Option<f64> {
        if self.n < 3.0 {
            return None;
        }
        let cov = self.n * self.sxy - self.sx * self.sy;
        let vx = self.n * self.sxx - self.sx * self.sx;
        let vy = self.n * self.syy - self.sy * self.sy;
        (vx > 0.0 && vy > 0.0).then(|| cov / (vx * vy).sqrt())
    }
}

/// Figures seen while a per-broker rule held.
#[derive(Debug, Clone, Default)]
pub(super) struct BrokerHeld {
    pub(super) held: Held,
    pub(super) a: Stat,
    pub(super) b: Stat,
    pub(super) c: Stat,
    pub(super) d: Stat,
    pub(super) corr: Corr,
}

/// Per-broker rule results: the brokers where it fired, and the combined where-it-held.
pub(super) fn fired(
    v: &[BrokerHeld],
    pass: impl Fn(&BrokerHeld) -> bool,
) -> (Vec<(usize, &BrokerHeld)>, Held) {
    let hits: Vec<(usize, &BrokerHeld)> = v.iter().enumerate().filter(|(_, h)| pass(h)).collect();
    let mut all = Held::default();
    for (_, h) in &hits {
        all.considered = all.considered.max(h.held.considered);
        all.held = all.held.max(h.held.held);
        for e in h.held.episodes() {
            if all.episodes.len() < MAX_EPISODES && !all.episodes.contains(&e) {
                all.episodes.push(e);
            }
        }
    }
    all.episodes
        .sort_by(|a, b| a.from_t_s.total_cmp(&b.from_t_s));
    (hits, all)
}
