//! Rotated files of one JVM (`gc.log`, `gc.log.0`, …) given together: the JVM reuses
//! names in a cycle, so the names do not say which is oldest. The first timestamp of
//! each file does.

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use crate::engine::input::Input;

use super::event::parse_number;
use super::shipper;
use super::unified::{parse_iso8601, split_decorations};

/// Bytes read from the head of each file to find its first timestamp.
const HEAD_BYTES: usize = 64 * 1024;

/// The first timestamp in `head` (uptime preferred, as the analysis uses), if any.
pub fn first_timestamp(head: &[u8]) -> Option<f64> {
    let mut scratch = Vec::new();
    for raw in head.split(|&b| b == b'\n').take(2000) {
        // The JVM's own stamps, not a log shipper's.
        let line = String::from_utf8_lossy(shipper::strip(raw, &mut scratch));
        let line = line.trim_end_matches('\r');
        let (d, _) = split_decorations(line);
        if let Some(t) = d.uptime_s().or_else(|| d.wall_s()) {
            return Some(t);
        }
        // JDK 8: `2020-02-16T23:24:09.668+0000: 880272.698: [GC …`
        if let Some((stamp, _)) = line.split_once(": [") {
            let last = stamp.rsplit(": ").next().unwrap_or(stamp).trim();
            if let Some(v) = parse_number(last) {
                return Some(v);
            }
            if let Some(v) = parse_iso8601(last) {
                return Some(v);
            }
        }
    }
    None
}

/// Order paths oldest first by their first timestamp (files without one keep their
/// place at the end, in the order given). Returns the order and whether it changed.
pub fn order_by_first_timestamp(paths: &[PathBuf]) -> (Vec<PathBuf>, bool) {
    let mut keyed: Vec<(Option<f64>, usize, PathBuf)> = paths
        .iter()
        .enumerate()
        .map(|(i, p)| (head_timestamp(p), i, p.clone()))
        .collect();
    keyed.sort_by(|a, b| match (a.0, b.0) {
        (Some(x), Some(y)) => x.total_cmp(&y).then(a.1.cmp(&b.1)),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => a.1.cmp(&b.1),
    });
    let changed = keyed.iter().enumerate().any(|(i, k)| k.1 != i);
    (keyed.into_iter().map(|k| k.2).collect(), changed)
}

fn head_timestamp(p: &Path) -> Option<f64> {
    let f = File::open(p).ok()?;
    let input = Input::detect(f).ok()?;
    let mut head = Vec::with_capacity(HEAD_BYTES);
    input.take(HEAD_BYTES as u64).read_to_end(&mut head).ok()?;
    first_timestamp(&head)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_timestamp_of_each_format() {
        assert_eq!(
            first_timestamp(b"[0.010s][info][gc] Using G1\n"),
            Some(0.010)
        );
        assert_eq!(
            first_timestamp(b"OpenJDK 64-Bit Server VM\n0.065: [GC pause (G1 Evacuation Pause) (young), 0.0039925 secs]\n"),
            Some(0.065)
        );
        assert_eq!(first_timestamp(b"no time here\n"), None);
    }
}
