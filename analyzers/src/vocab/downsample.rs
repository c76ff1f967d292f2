//! A chart's time series in bounded memory: points are kept one group at a time, each
//! group merged into one point; when `CAP` points are kept, neighbours merge pairwise and
//! later groups are twice as large. Memory: `CAP` points whatever the input's length. How
//! two points merge is the point type's own ([`Merge`]): the GC chart keeps the larger
//! value so a spike never disappears; the statistics chart averages rates and keeps the
//! larger latencies and queue depths.

/// Two neighbouring points as one.
pub(crate) trait Merge: Copy + Default {
    fn merge(a: Self, b: Self) -> Self;
}

#[derive(Debug, Clone)]
pub(crate) struct Downsampled<P, const CAP: usize> {
    points: Vec<P>,
    /// The group being merged: `pending` when `in_pending > 0` (a plain field, not an
    /// `Option`: the GC chart pushes two points a pause on a dense log).
    pending: P,
    in_pending: u64,
    stride: u64,
}

impl<P: Merge, const CAP: usize> Default for Downsampled<P, CAP> {
    fn default() -> Self {
        Downsampled {
            points: Vec::new(),
            pending: P::default(),
            in_pending: 0,
            stride: 1,
        }
    }
}

impl<P: Merge, const CAP: usize> Downsampled<P, CAP> {
    #[inline]
    pub(crate) fn push(&mut self, p: P) {
        self.pending = if self.in_pending == 0 {
            p
        } else {
            P::merge(self.pending, p)
        };
        self.in_pending += 1;
        if self.in_pending >= self.stride {
            self.keep_pending();
        }
    }

    #[inline(never)]
    fn keep_pending(&mut self) {
        self.points.push(self.pending);
        self.in_pending = 0;
        if self.points.len() >= CAP {
            self.points = self
                .points
                .chunks(2)
                .map(|c| {
                    if c.len() == 2 {
                        P::merge(c[0], c[1])
                    } else {
                        c[0]
                    }
                })
                .collect();
            self.stride *= 2;
        }
    }

    /// The points kept, the group being merged last.
    pub(crate) fn points(&self) -> Vec<P> {
        let mut p = self.points.clone();
        if self.in_pending > 0 {
            p.push(self.pending);
        }
        p
    }
}
