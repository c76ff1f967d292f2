//! Pause types and named counts, bounded: a log with endless distinct causes cannot grow
//! memory (the rest go to `other`).

use super::pause_dist::PauseDist;
use super::report::Count;
use crate::engine::bytes_eq::{same_bytes, same_opt_bytes};

#[derive(Debug, Default)]
pub(super) struct TypeAcc {
    /// The label reported: `Pause Young (Normal)`.
    pub(super) kind: String,
    pub(super) base: String,
    pub(super) sub: Option<String>,
    pub(super) dist: PauseDist,
    pub(super) total_ms: f64,
}

/// At most this many pause types and causes are kept apart (the rest: `other`).
pub(super) const MAX_KINDS: usize = 32;

pub(super) fn bump(v: &mut Vec<Count>, what: &str) {
    let i = bump_index(v, what);
    v[i].count += 1;
}

/// Where `what` is counted in `v` (added with count 0 when new; `other` once full).
/// Entries never move, so the index can be kept for the next line with the same name.
pub(super) fn bump_index(v: &mut Vec<Count>, what: &str) -> usize {
    if let Some(i) = v.iter().position(|c| c.what == what) {
        return i;
    }
    let what = if v.len() < MAX_KINDS { what } else { "other" };
    if let Some(i) = v.iter().position(|c| c.what == what) {
        return i;
    }
    v.push(Count {
        what: what.to_string(),
        count: 0,
    });
    v.len() - 1
}

/// What the last pause's kind, sub-kind and cause resolved to: a dense log repeats the
/// same few, and looking them up again per pause was a third of the time spent on it.
#[derive(Debug, Default)]
pub(super) struct LastPauseKind {
    /// False until a first pause was resolved.
    pub(super) valid: bool,
    pub(super) kind: String,
    pub(super) sub: Option<String>,
    pub(super) cause: Option<String>,
    pub(super) hint: Option<super::event::Collector>,
    pub(super) type_idx: usize,
    pub(super) cause_idx: Option<usize>,
    pub(super) humongous: bool,
}

impl LastPauseKind {
    /// Compared inline ([`same_bytes`]): `==` on slices called libc's `memcmp` three
    /// times a pause.
    pub(super) fn is(&self, kind: &[u8], sub: Option<&[u8]>, cause: Option<&[u8]>) -> bool {
        let same = |a: Option<&String>, b| same_opt_bytes(a.map(|a| a.as_bytes()), b);
        self.valid
            && same_bytes(self.kind.as_bytes(), kind)
            && same(self.sub.as_ref(), sub)
            && same(self.cause.as_ref(), cause)
    }
}
