//! The points the rule compares: the smallest batch.size's points across partition counts,
//! the batch.size curve, where it stops rising and its best point.

use super::evidence::{median, Evidence, PointEvidence};
use super::thresholds::KNEE_STEP;

/// The points the rule compares: those at the smallest batch.size (fewest partitions first;
/// the ceiling is the most partitions' point), and the batch.size curve (smallest first) of
/// the partition count that swept the most batch.size values (the most partitions on a tie).
pub(super) struct Shape<'e> {
    pub(super) smallest: u64,
    pub(super) at_smallest: Vec<&'e PointEvidence>,
    pub(super) ceiling: &'e PointEvidence,
    pub(super) curve: Vec<&'e PointEvidence>,
}

pub(super) fn shape(e: &Evidence) -> Option<Shape<'_>> {
    let smallest = e.points.iter().map(|p| p.batch_size).min()?;
    let mut at_smallest: Vec<&PointEvidence> = e
        .points
        .iter()
        .filter(|p| p.batch_size == smallest)
        .collect();
    at_smallest.sort_by_key(|p| p.partitions);
    let ceiling = *at_smallest.last()?;
    let swept = |n: i32| e.points.iter().filter(|p| p.partitions == n).count();
    let curve_partitions = at_smallest
        .iter()
        .map(|p| p.partitions)
        .max_by_key(|&n| (swept(n), n))?;
    let mut curve: Vec<&PointEvidence> = e
        .points
        .iter()
        .filter(|p| p.partitions == curve_partitions)
        .collect();
    curve.sort_by_key(|p| p.batch_size);
    Some(Shape {
        smallest,
        at_smallest,
        ceiling,
        curve,
    })
}

/// The batch.size after which the next step adds less than [`KNEE_STEP`] (by medians).
pub(super) fn knee(curve: &[&PointEvidence]) -> Option<u64> {
    curve
        .windows(2)
        .find(|w| median(&w[1].msgs_per_s) < KNEE_STEP * median(&w[0].msgs_per_s))
        .map(|w| w[0].batch_size)
        .or_else(|| curve.last().map(|p| p.batch_size))
}

/// The best larger batch.size of the curve (by median msg/s).
pub(super) fn best<'e>(s: &Shape<'e>) -> Option<&'e PointEvidence> {
    s.curve[1..]
        .iter()
        .copied()
        .max_by(|a, b| median(&a.msgs_per_s).total_cmp(&median(&b.msgs_per_s)))
}
