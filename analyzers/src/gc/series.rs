//! A time series of bounded size for the SVG: when full, neighbouring points merge
//! (keeping the larger value, so a spike never disappears) and later points are merged
//! in groups of the same size. Memory: [`CAP`] points.

use serde::Serialize;

const CAP: usize = 2048;

/// One plotted point: log time (s), value, and a kind (colour) code.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Point {
    pub t: f64,
    pub v: f64,
    /// 0 young GC, 1 full GC, 2 concurrent cycle or one of its short pauses, 3 Shenandoah's
    /// degenerated (stop-the-world) cycle.
    pub kind: u8,
}

#[derive(Debug, Clone)]
pub(crate) struct Series {
    points: Vec<Point>,
    /// The points merged since the last one kept: `pending` when `in_pending > 0` (a
    /// plain field, not an `Option`: two pushes a pause on a dense log).
    pending: Point,
    in_pending: u64,
    stride: u64,
}

impl Default for Series {
    fn default() -> Self {
        Series {
            points: Vec::new(),
            pending: Point {
                t: 0.0,
                v: 0.0,
                kind: 0,
            },
            in_pending: 0,
            stride: 1,
        }
    }
}

fn merge(a: Point, b: Point) -> Point {
    Point {
        t: a.t,
        v: a.v.max(b.v),
        kind: if b.v > a.v { b.kind } else { a.kind },
    }
}

impl Series {
    #[inline]
    pub fn push(&mut self, p: Point) {
        self.pending = if self.in_pending == 0 {
            p
        } else {
            merge(self.pending, p)
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
            let merged: Vec<Point> = self
                .points
                .chunks(2)
                .map(|c| {
                    if c.len() == 2 {
                        merge(c[0], c[1])
                    } else {
                        c[0]
                    }
                })
                .collect();
            self.points = merged;
            self.stride *= 2;
        }
    }

    pub fn into_points(mut self) -> Vec<Point> {
        if self.in_pending > 0 {
            self.points.push(self.pending);
        }
        self.points
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stays_bounded_and_keeps_the_spike() {
        let mut s = Series::default();
        for i in 0..100_000 {
            let v = if i == 77_777 { 1000.0 } else { 1.0 };
            s.push(Point {
                t: i as f64,
                v,
                kind: 0,
            });
        }
        let p = s.into_points();
        assert!(p.len() <= CAP);
        assert!(p.iter().any(|p| p.v == 1000.0));
    }
}
