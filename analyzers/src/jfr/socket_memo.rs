//! The accumulators of the last few socket events, by their fields as read in place.
//!
//! A recording's socket events come from a few threads to a few addresses, and each
//! event looked both of its keys up again: the thread's name in the thread pool, then
//! `(op, thread)` and `(op, address:port)` in ordered maps (a string formatted, hashed
//! and compared). Within one chunk, equal field values (the same pool keys, the same
//! inline strings) resolve to the same thread, address and port, so the same slots:
//! the memo compares the values and hands the slots back.

use super::analysis::{SocketOp, SocketSlots};
use super::reader::Lite;
use crate::engine::bytes_eq::same_bytes;

/// Entries kept: a consumer or producer recording has a handful of socket threads.
const KEPT: usize = 8;

/// What decides a socket event's slots.
#[derive(Clone, Copy)]
pub(super) struct SocketKey<'c> {
    pub op: SocketOp,
    pub thread: Lite<'c>,
    pub address: Lite<'c>,
    pub host: Lite<'c>,
    pub port: Lite<'c>,
}

impl SocketKey<'_> {
    #[inline(always)]
    pub fn same(&self, o: &SocketKey<'_>) -> bool {
        // The thread first: the field that differs most often.
        same(&self.thread, &o.thread)
            && self.op == o.op
            && same(&self.address, &o.address)
            && same(&self.host, &o.host)
            && same(&self.port, &o.port)
    }
}

/// Equal as read: the same variant and value (floats by their bits).
#[inline(always)]
fn same(a: &Lite<'_>, b: &Lite<'_>) -> bool {
    match (a, b) {
        (Lite::Null, Lite::Null) => true,
        (Lite::Bool(x), Lite::Bool(y)) => x == y,
        (Lite::Int(x), Lite::Int(y)) => x == y,
        (Lite::Float(x), Lite::Float(y)) => x.to_bits() == y.to_bits(),
        (Lite::Str(x), Lite::Str(y)) => same_str(x.as_bytes(), y.as_bytes()),
        (Lite::Ref(c, k), Lite::Ref(d, l)) => c == d && k == l,
        // `Other` is never memoised: such an event is decoded the full way.
        _ => false,
    }
}

/// `a == b` for the strings of a socket event: empty (a host not given) or an address
/// of 8 to 16 bytes (`127.0.0.1`, `10.20.30.40`) in two loads of 8 bytes each, here, not in
/// a call (the call was a large share of the memo's cost: docs/perf.md).
#[inline(always)]
fn same_str(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    match (a.first_chunk::<8>(), b.first_chunk::<8>()) {
        (Some(a8), Some(b8)) if n <= 16 => {
            let tail = |s: &[u8]| u64::from_ne_bytes(s[n - 8..].try_into().expect("8 bytes"));
            u64::from_ne_bytes(*a8) == u64::from_ne_bytes(*b8) && tail(a) == tail(b)
        }
        _ => n == 0 || same_bytes(a, b),
    }
}

/// One chunk's memo (pool keys mean nothing across chunks).
#[derive(Default)]
pub(super) struct SocketMemo<'c> {
    entries: Vec<(SocketKey<'c>, SocketSlots)>,
    next: usize,
    /// The entry that matched last, per operation: reads and writes interleave.
    last: [usize; 2],
}

impl<'c> SocketMemo<'c> {
    pub fn get(&mut self, key: &SocketKey<'_>) -> Option<SocketSlots> {
        // The entry of this operation that matched last first: a thread often reads or
        // writes in runs, while another thread does the other.
        let last = &mut self.last[key.op as usize];
        if let Some((k, s)) = self.entries.get(*last) {
            if k.same(key) {
                return Some(*s);
            }
        }
        let i = self.entries.iter().position(|(k, _)| k.same(key))?;
        *last = i;
        Some(self.entries[i].1)
    }

    pub fn put(&mut self, key: SocketKey<'c>, slots: SocketSlots) {
        if self.entries.len() < KEPT {
            self.entries.push((key, slots));
        } else {
            self.entries[self.next] = (key, slots);
            self.next = (self.next + 1) % KEPT;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(thread: i64, address: &str, port: i64) -> SocketKey<'_> {
        SocketKey {
            op: SocketOp::Read,
            thread: Lite::Ref(7, thread),
            address: Lite::Str(address),
            host: Lite::Null,
            port: Lite::Int(port),
        }
    }

    #[test]
    fn same_str_is_equality() {
        let words = [
            "",
            "a",
            "127.0.0.1",
            "127.0.0.2",
            "227.0.0.1",
            "10.20.30.40",
            "10.20.30.41",
            "0123456789abcdef",
            "0123456789abcdeX",
            "X123456789abcdef",
            "0123456789abcdefg",
            "0123456789abcdefh",
            "1234567",
            "1234568",
        ];
        for a in words {
            for b in words {
                assert_eq!(same_str(a.as_bytes(), b.as_bytes()), a == b, "{a:?} {b:?}");
            }
        }
    }

    #[test]
    fn only_an_equal_key_finds_its_slots_and_old_entries_make_room() {
        let slots = |i| SocketSlots::for_test(i, i + 100);
        let mut m = SocketMemo::default();
        m.put(key(1, "10.0.0.1", 9092), slots(1));
        assert_eq!(m.get(&key(1, "10.0.0.1", 9092)), Some(slots(1)));
        assert_eq!(m.get(&key(2, "10.0.0.1", 9092)), None);
        assert_eq!(m.get(&key(1, "10.0.0.2", 9092)), None);
        assert_eq!(m.get(&key(1, "10.0.0.1", 9093)), None);
        let mut write = key(1, "10.0.0.1", 9092);
        write.op = SocketOp::Write;
        assert_eq!(m.get(&write), None);
        let mut other = key(1, "10.0.0.1", 9092);
        other.host = Lite::Other;
        assert_eq!(m.get(&other), None, "Other never matches");
        for t in 2..=(KEPT as i64) {
            m.put(key(t, "a", 1), slots(t as usize));
        }
        assert_eq!(m.get(&key(1, "10.0.0.1", 9092)), Some(slots(1)));
        m.put(key(99, "b", 1), slots(99)); // replaces the oldest
        assert_eq!(m.get(&key(1, "10.0.0.1", 9092)), None);
        assert_eq!(m.get(&key(99, "b", 1)), Some(slots(99)));
        assert_eq!(m.get(&key(2, "a", 1)), Some(slots(2)));
    }
}
