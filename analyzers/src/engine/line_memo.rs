//! Parse results of librdkafka's raw stderr lines, remembered by the bytes after their
//! timestamp.
//!
//! A raw line is `%<level>|<secs>.<ms>|<rest>`, and what it holds (the facility, client,
//! thread, broker and the message's record, or no record) is a function of `<rest>`
//! alone: every parse after the stamp looks only at bytes after it, at offsets counted
//! from it. And `<rest>` repeats: a producer writes three lines a ProduceRequest that
//! differ only in their stamp and partition (`No more space in current MessageSet`,
//! `Produce MessageSet with …`, `MessageSet with … delivered`), so in the captured
//! producer logs about half the lines repeat one seen a few lines before (fewer in a
//! consumer's: docs/perf.md). A repeat costs a hash and a compare instead of a parse.
//!
//! The key is the rest, or the part of it that decides the record where what follows
//! changes on every line (the block front end, [`crate::librdkafka::pipeline`], chooses: a request's
//! `SEND`/`RECV` line up to its CorrId, a `Fetch topic` line through ` at offset `, and
//! says there why that is sound). What is kept is decided by speed alone, never by what
//! the answer would be: the table is direct-mapped, and a facility whose lines seldom
//! repeat (a consumer's `FETCH` and `CONSUME` lines carry offsets that move on) has its
//! lookups paused for a while: a miss costs a hash, a copy and a move, so below about one
//! hit in four a lookup costs more than it saves (docs/perf.md).

use crate::engine::fast_hash::FxHasher;
use std::hash::Hasher;

/// Slots of the table (a power of two).
const SLOTS: usize = 256;
/// Longer rests are not kept (a line of a few hundred bytes is the common case).
const MAX_KEY: usize = 512;
/// Lookups of a facility between two looks at its hit rate.
const WINDOW: u32 = 1024;
/// Lines of a facility passed over after a window that hit less than one in four.
const PAUSE: u32 = 1 << 14;
/// Facilities are told apart by a hash of their name into this many groups.
const FACILITY_GROUPS: usize = 16;

/// How often one group of facilities' lines repeat.
#[derive(Default, Clone, Copy)]
struct Repeats {
    lookups: u32,
    hits: u32,
    paused: u32,
}

struct Slot<T> {
    hash: u64,
    key: Vec<u8>,
    value: Option<T>,
}

/// A raw line's stamp as [`StampMemo`](crate::librdkafka::StampMemo) reads it: the seconds, where the
/// facility (and the rest) starts, the facility's length. Handed on so the raw parser
/// need not read it again.
pub(crate) type RawStamp = (f64, usize, usize);

/// A missed line's stamp, key and hash: what [`LineMemo::insert`] needs after the parse.
pub(crate) struct Probe {
    pub stamp: RawStamp,
    /// Where the key ends (the line's end, or for [`LineMemo::lookup_prefix`] the
    /// prefix's).
    key_end: usize,
    hash: u64,
}

impl Probe {
    /// Where `<rest>` starts (the facility's first byte).
    pub(crate) fn key_at(&self) -> usize {
        self.stamp.1
    }
}

/// What [`LineMemo::lookup`] found.
pub(crate) enum Lookup<'m, T> {
    /// The line's `<rest>` was seen: its result (`None`: no record).
    Hit {
        secs: f64,
        key_at: usize,
        value: &'m Option<T>,
    },
    /// Not seen: parse it, then [`LineMemo::insert`] the result.
    Miss(Probe),
    /// Not looked up: the key is too long, or lookups of its facility are paused.
    Pass,
}

/// The table, one per parsing thread.
pub(crate) struct LineMemo<T> {
    slots: Vec<Option<Slot<T>>>,
    repeats: [Repeats; FACILITY_GROUPS],
}

impl<T> Default for LineMemo<T> {
    fn default() -> Self {
        LineMemo {
            slots: (0..SLOTS).map(|_| None).collect(),
            repeats: [Repeats::default(); FACILITY_GROUPS],
        }
    }
}

impl<T> LineMemo<T> {
    /// Look up the part of a raw line (`line`, without its newline, whose stamp is
    /// `stamp`) from its facility to `key_end`: the line's end, or where the part that
    /// decides its record ends (what is kept must then hold for any line that shares
    /// those bytes, whatever follows).
    // Always inlined: out of line (three callers) it cost calls and lost constants
    // (docs/perf.md).
    #[inline(always)]
    pub(crate) fn lookup(&mut self, line: &[u8], stamp: RawStamp, key_end: usize) -> Lookup<'_, T> {
        let (secs, key_at, fac_len) = stamp;
        if key_end - key_at > MAX_KEY {
            return Lookup::Pass;
        }
        let key = &line[key_at..key_end];
        let group = facility_group(&line[key_at..key_at + fac_len]);
        let r = &mut self.repeats[group];
        if r.paused > 0 {
            r.paused -= 1;
            return Lookup::Pass;
        }
        r.lookups += 1;
        if r.lookups == WINDOW {
            if r.hits < WINDOW / 4 {
                r.paused = PAUSE;
            }
            r.lookups = 0;
            r.hits = 0;
        }
        let mut h = FxHasher::default();
        h.write(key);
        let hash = h.finish();
        let i = (hash as usize ^ (hash >> 32) as usize) & (SLOTS - 1);
        match &self.slots[i] {
            Some(s) if s.hash == hash && crate::engine::bytes_eq::same_bytes(&s.key, key) => {
                self.repeats[group].hits += 1;
                Lookup::Hit {
                    secs,
                    key_at,
                    value: &s.value,
                }
            }
            _ => Lookup::Miss(Probe {
                stamp,
                key_end,
                hash,
            }),
        }
    }

    /// Remember the result of the line a [`Lookup::Miss`] came from.
    pub(crate) fn insert(&mut self, line: &[u8], probe: Probe, value: Option<T>) {
        let i = (probe.hash as usize ^ (probe.hash >> 32) as usize) & (SLOTS - 1);
        let key = &line[probe.key_at()..probe.key_end];
        match &mut self.slots[i] {
            Some(s) => {
                s.hash = probe.hash;
                s.key.clear();
                s.key.extend_from_slice(key);
                s.value = value;
            }
            empty => {
                *empty = Some(Slot {
                    hash: probe.hash,
                    key: key.to_vec(),
                    value,
                })
            }
        }
    }
}

/// The group of a facility name (`PRODUCE`, `MSGSET`, `FETCH`, …): its length and first
/// bytes, mixed.
#[inline]
fn facility_group(fac: &[u8]) -> usize {
    let mut w = [0u8; 4];
    let n = fac.len().min(4);
    w[..n].copy_from_slice(&fac[..n]);
    let x = (u32::from_le_bytes(w) ^ fac.len() as u32).wrapping_mul(0x9e37_79b1);
    (x >> 28) as usize % FACILITY_GROUPS
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::librdkafka::raw_stamp_and_facility;

    /// A whole raw line looked up, as the block front end looks up most lines.
    fn look<'m>(m: &'m mut LineMemo<u32>, line: &[u8]) -> Lookup<'m, u32> {
        match raw_stamp_and_facility(line) {
            Some(stamp) => m.lookup(line, stamp, line.len()),
            None => Lookup::Pass,
        }
    }

    const MSGSET: &str = "%7|1796027442.502|PRODUCE|rdkafka#producer-100| [thrd:127.0.0.1:9092/1]: 127.0.0.1:9092/1: t [4]: Produce MessageSet with 15 message(s) (15556 bytes, ApiVersion 10)";

    fn with_stamp(line: &str, stamp: &str) -> String {
        let rest = &line[line[3..].find('|').unwrap() + 3..];
        format!("%7|{stamp}{rest}")
    }

    #[test]
    fn a_repeated_rest_is_a_hit_with_the_new_lines_time() {
        let mut m = LineMemo::<u32>::default();
        let a = MSGSET.as_bytes();
        let Lookup::Miss(p) = look(&mut m, a) else {
            panic!("first sight is a miss")
        };
        assert_eq!(p.key_at(), 18);
        m.insert(a, p, Some(7));
        let b = with_stamp(MSGSET, "1796027443.001");
        match look(&mut m, b.as_bytes()) {
            Lookup::Hit {
                secs,
                key_at,
                value,
            } => {
                assert_eq!(secs, 1796027443.001);
                assert_eq!(key_at, 18);
                assert_eq!(value, &Some(7));
            }
            _ => panic!("same rest, other stamp: a hit"),
        }
        // A nine-digit stamp moves the rest; it is still the same rest.
        let c = with_stamp(MSGSET, "796027443.001");
        assert!(matches!(
            look(&mut m, c.as_bytes()),
            Lookup::Hit { key_at: 17, .. }
        ));
    }

    #[test]
    fn any_other_byte_of_the_rest_is_a_miss() {
        let mut m = LineMemo::<u32>::default();
        let a = MSGSET.as_bytes();
        let Lookup::Miss(p) = look(&mut m, a) else {
            panic!()
        };
        m.insert(a, p, None);
        for at in 18..a.len() {
            let mut b = a.to_vec();
            b[at] ^= 1;
            assert!(matches!(look(&mut m, &b), Lookup::Miss(_)), "byte {at}");
            let mut c = a.to_vec();
            c.truncate(at);
            assert!(
                !matches!(look(&mut m, &c), Lookup::Hit { .. }),
                "cut at {at}"
            );
        }
        assert!(matches!(look(&mut m, a), Lookup::Hit { .. }));
    }

    #[test]
    fn other_shapes_and_long_keys_are_passed_over() {
        let mut m = LineMemo::<u32>::default();
        for line in ["{\"message\":\"x\"}", "%7|17000x0000.001|FETCH|c| x", ""] {
            assert!(
                matches!(look(&mut m, line.as_bytes()), Lookup::Pass),
                "{line}"
            );
        }
        let long = format!("{MSGSET}{}", "x".repeat(MAX_KEY));
        assert!(matches!(look(&mut m, long.as_bytes()), Lookup::Pass));
        // A prefix of the same line is short enough.
        let stamp = raw_stamp_and_facility(long.as_bytes()).unwrap();
        assert!(matches!(
            m.lookup(long.as_bytes(), stamp, MSGSET.len()),
            Lookup::Miss(_)
        ));
    }

    #[test]
    fn a_facility_whose_lines_seldom_repeat_pauses_and_resumes_alone() {
        let mut m = LineMemo::<u32>::default();
        let other = MSGSET.replace("|PRODUCE|", "|MSGSET|");
        assert_ne!(facility_group(b"PRODUCE"), facility_group(b"MSGSET"));
        let mut passes = 0;
        let mut other_hits = 0;
        for i in 0..(WINDOW + PAUSE + 10) {
            let line = format!("{MSGSET} {i}");
            match look(&mut m, line.as_bytes()) {
                Lookup::Miss(p) => m.insert(line.as_bytes(), p, None),
                Lookup::Pass => passes += 1,
                Lookup::Hit { .. } => panic!("every line differs"),
            }
            // Another facility's repeated line keeps its lookups all along.
            match look(&mut m, other.as_bytes()) {
                Lookup::Miss(p) => m.insert(other.as_bytes(), p, None),
                Lookup::Hit { .. } => other_hits += 1,
                Lookup::Pass => panic!("the other facility is not paused"),
            }
        }
        assert_eq!(passes, PAUSE, "one pause after a window without hits");
        assert!(other_hits > WINDOW + PAUSE);
        let line = format!("{MSGSET} again");
        assert!(matches!(look(&mut m, line.as_bytes()), Lookup::Miss(_)));
    }
}
