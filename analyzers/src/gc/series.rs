//! The GC chart's series: points of pause times and heap fill, bounded by
//! [`Downsampled`]; when points merge the larger value is kept, so a spike never
//! disappears. Memory: [`CAP`] points.

use serde::Serialize;

use crate::vocab::downsample::{Downsampled, Merge};

const CAP: usize = 2048;

/// One plotted point: log time (s), value, and a kind (colour) code.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Point {
    pub t: f64,
    pub v: f64,
    /// 0 young GC, 1 full GC, 2 concurrent cycle or one of its short pauses, 3 Shenandoah's
    /// degenerated (stop-the-world) cycle.
    pub kind: u8,
}

impl Merge for Point {
    fn merge(a: Point, b: Point) -> Point {
        Point {
            t: a.t,
            v: a.v.max(b.v),
            kind: if b.v > a.v { b.kind } else { a.kind },
        }
    }
}

pub(crate) type Series = Downsampled<Point, CAP>;

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
        let p = s.points();
        assert!(p.len() <= CAP);
        assert!(p.iter().any(|p| p.v == 1000.0));
    }
}
