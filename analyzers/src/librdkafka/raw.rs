//! librdkafka's own stderr format,
//! `%<level>|<secs>.<ms>|<FAC>|<client>| [thrd:<thread>]: [<broker>: ]<body>`, where
//! every field is where the format puts it: the fast path [`RecordFinder`](super::RecordFinder)
//! tries first on every line, and [`HeadCache`], the same parse for a stream of lines.
//!
//! Consecutive lines nearly always come from one broker thread: everything after the
//! facility (client, thread, broker: ~70 bytes) repeats from the line before on nearly
//! every line (docs/perf.md). Scanning those bytes field by field and checking them for
//! ASCII was most of the head's cost;
//! [`HeadCache`] compares them with the previous line's in one inline compare and reuses its
//! fields.

use std::ops::Range;

use super::body;
use super::record::{is_broker_name, thread_end, Record};
use super::timestamp::{stamp_end, Timestamp, TimestampSource};
use crate::engine::bytes_eq::{find_byte, starts_with_bytes};

/// Where a raw line's fields are (byte ranges in the line).
struct Head {
    secs: f64,
    facility: Range<usize>,
    client: Range<usize>,
    thread: Option<Range<usize>>,
    broker: Option<Range<usize>>,
    /// Where the body starts (the head is `line[..body_at]`).
    body_at: usize,
}

/// `%<level>|<secs>.<ms>|<FAC>|`: the time, where the facility starts and its length.
#[inline]
pub(crate) fn stamp_and_facility(line: &[u8]) -> Option<(f64, usize, usize)> {
    if line.len() < 4 || line[0] != b'%' || !line[1].is_ascii_digit() || line[2] != b'|' {
        return None;
    }
    let (secs, fac_start) = stamp_end(line, 3)?;
    let fac_len = find_byte(&line[fac_start..line.len().min(fac_start + 40)], b'|')?;
    Some((secs, fac_start, fac_len))
}

/// [`stamp_and_facility`] for a stream of lines, remembering the last ten-digit stamp
/// read (`<secs>.<ms>|`, the fifteen bytes after `%<level>|`): consecutive lines share it
/// (most lines of a producer's `debug=protocol` log, many of a consumer's `debug=fetch`
/// one), and its digits were a large part of the head's cost (docs/perf.md). The same
/// bytes at the same place read the same time, so only the facility is looked for.
#[derive(Debug, Default)]
pub(crate) struct StampMemo {
    /// The stamp's fifteen bytes (with `|`) as [`stamp_words`], and its time; `None`
    /// before the first.
    last: Option<((u64, u64), f64)>,
}

/// Where a remembered stamp starts (after `%<level>|`) and the facility after it.
const STAMP_AT: usize = 3;
const FAC_AT: usize = STAMP_AT + 15;

impl StampMemo {
    /// [`stamp_and_facility`]`(line)`.
    #[inline]
    pub(crate) fn stamp_and_facility(&mut self, line: &[u8]) -> Option<(f64, usize, usize)> {
        if let (Some((words, secs)), Some(now)) = (self.last, stamp_words(line)) {
            if line[0] == b'%' && line[1].is_ascii_digit() && line[2] == b'|' && now == words {
                let fac_len = find_byte(&line[FAC_AT..line.len().min(FAC_AT + 40)], b'|')?;
                return Some((secs, FAC_AT, fac_len));
            }
        }
        let got = stamp_and_facility(line)?;
        // Kept when it is the ten-digit shape (`<10 digits>.<3 digits>|`, its digits
        // checked by the read): any line with these bytes there reads this time.
        if got.1 == FAC_AT && line[STAMP_AT + 10] == b'.' && line[FAC_AT - 1] == b'|' {
            self.last = stamp_words(line).map(|w| (w, got.0));
        }
        Some(got)
    }
}

/// The fifteen bytes where a ten-digit stamp lies (`line[STAMP_AT..FAC_AT]`) as two
/// overlapping words (bytes 0..8 and 7..15), when the line is that long.
#[inline(always)]
fn stamp_words(line: &[u8]) -> Option<(u64, u64)> {
    let stamp = line.get(STAMP_AT..FAC_AT)?;
    let word = |i: usize| u64::from_le_bytes(stamp[i..i + 8].try_into().expect("8 bytes"));
    Some((word(0), word(7)))
}

/// `<client>| [thrd:<thread>]: ` from `client_start`: the client's length, the
/// thread's range and where the part after them starts.
#[inline]
fn client_and_thread(
    line: &[u8],
    client_start: usize,
) -> Option<(usize, Option<Range<usize>>, usize)> {
    let client_len = find_byte(
        &line[client_start..line.len().min(client_start + 300)],
        b'|',
    )?;
    let mut p = client_start + client_len + 1;
    if line.get(p) != Some(&b' ') {
        return None;
    }
    p += 1;
    let mut thread = None;
    if line[p..].starts_with(b"[thrd:") {
        let name_start = p + b"[thrd:".len();
        let close = thread_end(&line[name_start..line.len().min(name_start + 512)])?;
        thread = Some(name_start..name_start + close);
        p = name_start + close + 3;
    }
    Some((client_len, thread, p))
}

/// `<broker>: ` at `p` when the first word ends in `: ` and looks like a broker name:
/// its range, and where the body starts.
#[inline]
fn broker_at(line: &[u8], p: usize) -> (Option<Range<usize>>, usize) {
    let word_len = find_byte(&line[p..line.len().min(p + 320)], b' ').unwrap_or(0);
    if word_len > 1 && line[p + word_len - 1] == b':' && is_broker_name(&line[p..p + word_len - 1])
    {
        (Some(p..p + word_len - 1), p + word_len + 1)
    } else {
        (None, p)
    }
}

/// The head, field by field.
fn head(line: &[u8]) -> Option<Head> {
    let (secs, fac_start, fac_len) = stamp_and_facility(line)?;
    let client_start = fac_start + fac_len + 1;
    let (client_len, thread, p) = client_and_thread(line, client_start)?;
    let (broker, body_at) = broker_at(line, p);
    Some(Head {
        secs,
        facility: fac_start..fac_start + fac_len,
        client: client_start..client_start + client_len,
        thread,
        broker,
        body_at,
    })
}

/// The record a head starts: `None` when the body is not one the analyzers know.
/// `ascii`: the head is known to be ASCII (else it is checked).
fn record(line: &[u8], h: Head, ascii: bool) -> Option<Record<'_>> {
    let parsed = body::parse_body(line, h.body_at)?;
    // One UTF-8 check for the whole head; every field is an ASCII-delimited slice
    // of it. The head is nearly always ASCII, which is checked a word at a time.
    let bytes = &line[..h.body_at];
    let head = if ascii || bytes.is_ascii() {
        // SAFETY: ASCII bytes are valid UTF-8 (`ascii` only when every byte was
        // checked, here or on the identical bytes of an earlier line).
        unsafe { std::str::from_utf8_unchecked(bytes) }
    } else {
        match std::str::from_utf8(bytes) {
            Ok(h) => h,
            Err(e) => std::str::from_utf8(&bytes[..e.valid_up_to()]).unwrap_or(""),
        }
    };
    let field = |r: Range<usize>| head.get(r).filter(|f| !f.is_empty());
    Some(Record {
        event: parsed.event,
        timestamp: Some(Timestamp {
            secs: h.secs,
            source: TimestampSource::Librdkafka,
        }),
        facility: field(h.facility),
        client: field(h.client),
        thread: h.thread.and_then(field),
        broker: h.broker.and_then(field),
        body: parsed.start..parsed.end,
    })
}

/// The fast path for librdkafka's own stderr format (what [`RecordFinder`](super::RecordFinder)
/// tries first on every line),
/// `%<level>|<secs>.<ms>|<FAC>|<client>| [thrd:<thread>]: [<broker>: ]<body>`, where
/// every field is where the format puts it. `Some(None)`: a raw line whose body is
/// not one the analyzers know; `None`: not the raw format (use the general finder).
pub fn raw_stderr_record(line: &[u8]) -> Option<Option<Record<'_>>> {
    let h = head(line)?;
    Some(record(line, h, false))
}

/// [`raw_stderr_record`] for a stream of lines, remembering the last line's head
/// after its facility: when the next line's bytes there are the same, so are its
/// client, thread and (when those bytes repeat too) broker, and they are ASCII.
/// Gives exactly what [`raw_stderr_record`] gives, line for line.
#[derive(Debug, Default)]
pub struct HeadCache {
    /// The last cached line from its client's first byte through its thread's `]: `,
    /// then its broker's `<broker>: ` (ASCII).
    tail: Vec<u8>,
    /// Length of the client-and-thread part of `tail` (0: nothing cached).
    pre: usize,
    client_len: usize,
    /// The thread's range, from the client's first byte.
    thread: Range<usize>,
}

impl HeadCache {
    /// A cache holding nothing yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// [`raw_stderr_record`]`(line)`, reusing the previous line's fields where its
    /// bytes repeat.
    pub fn record<'a>(&mut self, line: &'a [u8]) -> Option<Option<Record<'a>>> {
        let stamp = stamp_and_facility(line)?;
        self.record_stamped(line, stamp)
    }

    /// [`record`](Self::record) of a line whose [`stamp_and_facility`] was already read.
    pub(crate) fn record_stamped<'a>(
        &mut self,
        line: &'a [u8],
        (secs, fac_start, fac_len): (f64, usize, usize),
    ) -> Option<Option<Record<'a>>> {
        let client_start = fac_start + fac_len + 1;
        let facility = fac_start..fac_start + fac_len;
        // What precedes the facility is `%<digit>|<digits>.<digits>|`: ASCII.
        let fac_ascii = line[facility.clone()].is_ascii();
        let rest = &line[client_start..];
        let hit = if self.pre == 0 || !fac_ascii {
            None
        } else if self.tail.len() > self.pre && starts_with_bytes(rest, &self.tail) {
            // The whole tail at once (one compare), its broker part included: the same
            // first word through its `: `, so the same broker.
            let p = client_start + self.pre;
            let end = client_start + self.tail.len();
            Some((Some(p..end - 2), end, true))
        } else if starts_with_bytes(rest, &self.tail[..self.pre]) {
            // The same client and thread; the broker looked at anew.
            let p = client_start + self.pre;
            let (broker, body_at) = broker_at(line, p);
            let ascii = line[p..body_at].is_ascii();
            if ascii {
                self.tail.truncate(self.pre);
                self.tail.extend_from_slice(&line[p..body_at]);
            }
            Some((broker, body_at, ascii))
        } else {
            None
        };
        if let Some((broker, body_at, broker_ascii)) = hit {
            // Every decision of `client_and_thread` looked only at the cached bytes.
            let h = Head {
                secs,
                facility,
                client: client_start..client_start + self.client_len,
                thread: Some(client_start + self.thread.start..client_start + self.thread.end),
                broker,
                body_at,
            };
            return Some(record(line, h, broker_ascii));
        }
        let (client_len, thread, p) = client_and_thread(line, client_start)?;
        let (broker, body_at) = broker_at(line, p);
        // Only a head with a thread: without one, whether the next line has one
        // depends on bytes after the cached ones.
        self.pre = 0;
        let ascii = fac_ascii && line[client_start..body_at].is_ascii();
        if let (Some(t), true) = (&thread, ascii) {
            self.tail.clear();
            self.tail.extend_from_slice(&line[client_start..body_at]);
            self.pre = p - client_start;
            self.client_len = client_len;
            self.thread = t.start - client_start..t.end - client_start;
        }
        let h = Head {
            secs,
            facility,
            client: client_start..client_start + client_len,
            thread,
            broker,
            body_at,
        };
        Some(record(line, h, ascii))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each line through the cache gives what the plain parse gives.
    fn assert_cache_agrees(cache: &mut HeadCache, line: &[u8]) {
        assert_eq!(
            cache.record(line),
            raw_stderr_record(line),
            "{:?}",
            String::from_utf8_lossy(line)
        );
    }

    const LINES: &[&str] = &[
        "%7|1700000000.000|SEND|rdkafka#producer-1| [thrd:k:9092/1]: k:9092/1: Sent ProduceRequest (v10, 15621 bytes @ 0, CorrId 4)",
        "%7|1700000000.001|RECV|rdkafka#producer-1| [thrd:k:9092/1]: k:9092/1: Received ProduceResponse (v10, 62 bytes, CorrId 4, rtt 0.39ms)",
        "%7|1700000000.001|RECV|rdkafka#producer-1| [thrd:k:9092/1]: k:9092/12: Received ProduceResponse (v10, 62 bytes, CorrId 4, rtt 0.39ms)",
        "%7|1700000000.001|RECV|rdkafka#producer-1| [thrd:k:9092/1]: k:9092/: Received ProduceResponse (v10, 62 bytes, CorrId 4, rtt 0.39ms)",
        "%7|1700000000.001|PRODUCE|rdkafka#producer-1| [thrd:k:9092/1]: k:9092/1: t.x [4]: Produce MessageSet with 15 message(s) (15556 bytes, ApiVersion 10)",
        "%7|1700000000.002|FETCH|rdkafka#consumer-2| [thrd:main]: t.x [0]: Fetch backoff for 500ms: Local: no offset",
        "%7|1700000000.002|FETCH|rdkafka#consumer-2| [thrd:main]: k:9092/1: Fetch backoff for 500ms",
        "%7|1700000000.003|BACKOFF|rdkafka#consumer-2| [thrd:k:9092/1]: k:9092/1: t.x [2]: Fetch backoff for 1000ms: Broker: Not leader",
        "%7|1700000000.003|FETCH|rdkafka#consumer-2| [thrd:[::1]:9092/1]: [::1]:9092/1: Fetch 1/1/6 toppar(s)",
        "%7|1700000000.004|FETCH|rdkafka#consumer-2| [thrd:[::1]:9092/1]: [::1]:9092/1 Fetch 1/1/6 toppar(s)",
        "%7|1700000000.004|SEND|rdkafka#producer-1| Sent ProduceRequest (v10, 15621 bytes @ 0, CorrId 4)",
        "%7|170000000.004|SEND|rdkafka#producer-1| [thrd:k:9092/1]: k:9092/1: Sent ProduceRequest (v10, 15621 bytes @ 0, CorrId 5)",
        "%7|1700000000.005|SEND|rdkafka#producer-1| [thrd:k:9092/1]: k:9092/1: Connected (#1)",
        "%7|1700000000.005|SEND|rdkafka#producer-1| [thrd:k:9092/1]: k:9092/1:",
        "%7|1700000000.005|SEND|rdkafka#producer-1| [thrd:k:9092/1]: ",
        "%7|1700000000.006|SEND|rdkafka#producér-1| [thrd:k:9092/1]: k:9092/1: Sent ProduceRequest (v10, 1 bytes @ 0, CorrId 6)",
        "%7|1700000000.006|SËND|rdkafka#producer-1| [thrd:k:9092/1]: k:9092/1: Sent ProduceRequest (v10, 1 bytes @ 0, CorrId 6)",
        "%7|1700000000.006|SEND|rdkafka#producer-1| [thrd:k:9092/1]: kÉ:9092/1: Sent ProduceRequest (v10, 1 bytes @ 0, CorrId 6)",
        "%7|1700000000.007|||| [thrd:k:9092/1]: k:9092/1: Sent ProduceRequest (v10, 1 bytes @ 0, CorrId 7)",
        "%7|1700000000.007|SEND|| [thrd:]: : Sent ProduceRequest (v10, 1 bytes @ 0, CorrId 7)",
    ];

    /// Each line through the stamp memo reads what the plain read reads.
    fn assert_stamp_agrees(memo: &mut StampMemo, line: &[u8]) {
        assert_eq!(
            memo.stamp_and_facility(line)
                .map(|(t, a, n)| (t.to_bits(), a, n)),
            stamp_and_facility(line).map(|(t, a, n)| (t.to_bits(), a, n)),
            "{:?}",
            String::from_utf8_lossy(line)
        );
    }

    #[test]
    fn the_stamp_memo_reads_the_plain_stamps_in_any_order() {
        let mut memo = StampMemo::default();
        for a in LINES {
            for b in LINES {
                for line in [a, b, b, a] {
                    assert_stamp_agrees(&mut memo, line.as_bytes());
                }
            }
        }
    }

    #[test]
    fn a_line_one_byte_off_the_remembered_stamp_reads_the_plain_stamp() {
        // Every byte through the facility.
        for base in LINES {
            let base = base.as_bytes();
            one_byte_off(
                base,
                base.len().min(32),
                b"|%.7x09\x80 ",
                assert_stamp_agrees,
            );
        }
    }

    #[test]
    fn the_cache_gives_the_plain_records_in_any_order() {
        let mut cache = HeadCache::new();
        for a in LINES {
            for b in LINES {
                for line in [a, b, b, a] {
                    assert_cache_agrees(&mut cache, line.as_bytes());
                }
            }
        }
    }

    #[test]
    fn a_line_one_byte_off_the_cached_head_gives_the_plain_record() {
        // Every byte of the head, and the first of the body.
        for base in LINES {
            let base = base.as_bytes();
            let body_at = base
                .windows(2)
                .rposition(|w| w == b": ")
                .map_or(base.len(), |i| i + 3)
                .min(base.len());
            one_byte_off(base, body_at, b"|: ]/[x\x80\xc3 #%0", assert_cache_agrees);
        }
    }

    /// Lines one byte off `base` at each of its first `upto` places, each read by a fresh
    /// state after `base` filled it, and `base` again after them (`check` holds one
    /// reading to the plain one): the byte replaced by each of `subs` (read twice), one of
    /// `subs` inserted there, and the line cut short there.
    fn one_byte_off<S: Default>(base: &[u8], upto: usize, subs: &[u8], check: fn(&mut S, &[u8])) {
        for at in 0..upto {
            for &s in subs {
                let mut state = S::default();
                let mut line = base.to_vec();
                line[at] = s;
                check(&mut state, base);
                check(&mut state, &line);
                check(&mut state, &line);
                check(&mut state, base);
                let mut inserted = base.to_vec();
                inserted.insert(at, s);
                check(&mut state, &inserted);
                check(&mut state, base);
            }
            let mut state = S::default();
            check(&mut state, base);
            check(&mut state, &base[..at]);
            check(&mut state, base);
        }
    }
}
