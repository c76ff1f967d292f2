//! One block's lines into records: librdkafka's own format by its known layout (and the
//! memos of repeated raw lines), any wrapper by its anchors; each record as byte spans
//! into the block.

use super::blocks::Block;
use super::tally::Tally;
use crate::engine::line_memo::{LineMemo, Lookup, Probe};
use crate::librdkafka::{corr_id_tail_at, CorrIdTail, StampMemo};
use crate::librdkafka::{
    unescape_json_slashes, EventOf, HeadCache, Record, RecordFinder, Timestamp,
};

/// A byte range in a block's buffer (start, len).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Span(pub(super) u32, pub(super) u32);

impl Span {
    /// The span `by` bytes earlier, when it starts no earlier than `by` (an empty one
    /// becomes `Span(0, 0)`: it reads as "" wherever it is).
    fn back(self, by: u32) -> Option<Span> {
        if self.1 == 0 {
            Some(Span(0, 0))
        } else {
            Some(Span(self.0.checked_sub(by)?, self.1))
        }
    }
}

#[derive(Clone, Copy)]
pub(super) struct SpanRecord {
    /// Every span below, and `body`, counts from here in the block: 0 for a record
    /// parsed in place, the line's rest for one placed from a memo (so placing one is a
    /// copy, not a rewrite of each span).
    pub(super) base: u32,
    /// Index of the line in its block.
    pub(super) line: u32,
    /// The line's bytes in the block (after `\r` trimming and `\/` unescaping).
    pub(super) line_start: u32,
    pub(super) line_end: u32,
    pub(super) event: EventOf<Span>,
    pub(super) timestamp: Option<Timestamp>,
    pub(super) facility: Option<Span>,
    pub(super) client: Option<Span>,
    pub(super) thread: Option<Span>,
    pub(super) broker: Option<Span>,
    pub(super) body: (u32, u32),
}

/// What a parsing thread keeps from line to line: the raw head of the last line, the
/// results of repeated raw lines, a buffer for unescaping.
pub(super) struct LineParser {
    /// The last raw stamp read (consecutive lines share it).
    stamps: StampMemo,
    cache: HeadCache,
    memo: LineMemo<SpanRecord>,
    /// `SEND`/`RECV` lines by their bytes up to the CorrId: a request's lines repeat but
    /// for it (and the round trip).
    corr_memo: LineMemo<(SpanRecord, CorrIdTail)>,
    /// `FETCH` lines by their bytes through `] at offset `: `Fetch topic <t> [<p>] at
    /// offset ` ends its record there, and the offset after it moves on every line.
    offset_memo: LineMemo<SpanRecord>,
    scratch: Vec<u8>,
    /// The block's newlines (reused from block to block).
    newlines: Vec<u32>,
}

impl Default for LineParser {
    fn default() -> Self {
        LineParser {
            stamps: StampMemo::default(),
            cache: HeadCache::default(),
            memo: LineMemo::default(),
            corr_memo: LineMemo::default(),
            offset_memo: LineMemo::default(),
            scratch: Vec::new(),
            newlines: Vec::new(),
        }
    }
}

/// `SEND` and `RECV`: a request's lines, which carry a CorrId, so never repeat whole.
fn is_send_recv(fac: &[u8]) -> bool {
    fac == b"SEND" || fac == b"RECV"
}

/// Where a `Fetch topic` record ends.
const AT_OFFSET: &[u8] = b" at offset ";

/// Where the offset memo's key ends in a `FETCH` line: after the ` at offset ` that
/// follows the line's last `]` (`... [<p>] at offset <n> (leader epoch ...)`), when it
/// does. A search from the end, over the few bytes after the partition: a substring
/// search of the whole line for the words cost far more (docs/perf.md). Any place is
/// sound for the memo (it keeps a line's record only when the
/// record ends exactly there, see [`remember`]); this one is where `Fetch topic` ends.
fn offset_key_end(line: &[u8]) -> Option<usize> {
    // Sixteen bytes a step, not a word loop: in a `Topic … in state` line the last `]`
    // is ~130 bytes back (and `memrchr`'s dispatch and set-up cost more: docs/perf.md).
    let i = crate::engine::bytes_eq::rfind_byte16(line, b']')?;
    crate::engine::bytes_eq::starts_with_bytes(&line[i + 1..], AT_OFFSET)
        .then_some(i + 1 + AT_OFFSET.len())
}

/// Where `s` lies in `buf`. The only maker of spans: so every span's bytes are a
/// `&str`'s, which [`feed`] relies on.
#[inline(always)]
fn span_of(buf: &[u8], s: &str) -> Span {
    let base = buf.as_ptr() as usize;
    let p = s.as_ptr() as usize;
    if p >= base && p + s.len() <= base + buf.len() {
        Span((p - base) as u32, s.len() as u32)
    } else {
        Span::default() // a static "" the parser substituted
    }
}

// Always inlined, so the ~170-byte record is built where it is pushed: out of line it was
// built, then copied by memcpy (docs/perf.md).
#[inline(always)]
fn to_spans(buf: &[u8], line: u32, start: usize, end: usize, rec: Record<'_>) -> SpanRecord {
    SpanRecord {
        base: 0,
        line,
        line_start: start as u32,
        line_end: end as u32,
        event: rec.event.map(|s| span_of(buf, s)),
        timestamp: rec.timestamp,
        facility: rec.facility.map(|s| span_of(buf, s)),
        client: rec.client.map(|s| span_of(buf, s)),
        thread: rec.thread.map(|s| span_of(buf, s)),
        broker: rec.broker.map(|s| span_of(buf, s)),
        body: (
            (start + rec.body.start) as u32,
            (start + rec.body.end) as u32,
        ),
    }
}

/// A raw line's record with its spans counted from `base` (the line's rest, in the
/// block): what the memo keeps. `None` when a span starts before the rest (no raw
/// record does; such a record is just not kept).
fn relative(r: &SpanRecord, base: u32) -> Option<SpanRecord> {
    debug_assert_eq!(r.base, 0, "a record parsed in place");
    let back = |s: Option<Span>| match s {
        Some(s) => s.back(base).map(Some),
        None => Some(None),
    };
    let mut bad = false;
    let event = r.event.clone().map(|s| {
        s.back(base).unwrap_or_else(|| {
            bad = true;
            Span(0, 0)
        })
    });
    let out = SpanRecord {
        base: 0,
        line: 0,
        line_start: 0,
        line_end: 0,
        event,
        timestamp: r.timestamp,
        facility: back(r.facility)?,
        client: back(r.client)?,
        thread: back(r.thread)?,
        broker: back(r.broker)?,
        body: (r.body.0.checked_sub(base)?, r.body.1.checked_sub(base)?),
    };
    (!bad).then_some(out)
}

/// Where the digits of the last `CorrId ` in the line's last 48 bytes start.
fn corr_id_at(line: &[u8]) -> Option<usize> {
    const WORD: &[u8] = b"CorrId ";
    let from = line.len().saturating_sub(48);
    let mut to = line.len();
    // memrchr: a word loop from the end (`bytes_eq::rfind_byte`) cost more over these
    // 48 bytes (docs/perf.md).
    while let Some(i) = memchr::memrchr(b'C', &line[from..to]) {
        let at = from + i;
        if line[at..].starts_with(WORD) {
            return Some(at + WORD.len());
        }
        to = at;
    }
    None
}

/// What the CorrId memo keeps of a `SEND`/`RECV` line's record (`line`, at `start` in its
/// block, whose last `CorrId ` digits start at `at`): the record counted from the line's
/// rest, and how its tail reads. Kept only when the tail read at `at` gives this record's
/// CorrId, round trip and end: then the whole parse read exactly the bytes before `at`
/// and then that tail (both digit runs end at the same `)`, and a run starts after the
/// space of `CorrId `), so any line with the same bytes before `at` parses the same way.
fn corr_template(
    r: &SpanRecord,
    line: &[u8],
    start: usize,
    key_at: usize,
    at: usize,
) -> Option<(SpanRecord, CorrIdTail)> {
    let (tail, id, rtt) = match r.event {
        EventOf::Sent { corr_id, .. } | EventOf::SentPartial { corr_id, .. } => {
            (CorrIdTail::Sent, corr_id, 0.0f64)
        }
        EventOf::Received {
            corr_id, rtt_ms, ..
        } => (CorrIdTail::Received, corr_id, rtt_ms),
        _ => return None,
    };
    let (got_id, got_rtt, body_end) = corr_id_tail_at(line, at, tail)?;
    let same = got_id == id
        && got_rtt.to_bits() == rtt.to_bits()
        && (start + body_end) as u32 == r.base + r.body.1;
    if !same {
        return None;
    }
    Some((relative(r, (start + key_at) as u32)?, tail))
}

/// Which memo missed a line, with its probe (and where its key ends).
enum Missed {
    None,
    Rest(Probe),
    Corr(Probe, usize),
    Offset(Probe, usize),
}

/// Tell the memo that missed `line` (at `start` in its block) what the raw parser made of
/// it: `rec`, its record, or none.
fn remember(
    parser: &mut LineParser,
    missed: Missed,
    line: &[u8],
    start: usize,
    rec: Option<&SpanRecord>,
) {
    match missed {
        Missed::None => {}
        Missed::Rest(probe) => {
            // The raw parser took the line: its result depends on the rest alone.
            let base = (start + probe.key_at()) as u32;
            let kept = match rec {
                None => Some(None),
                Some(r) => relative(r, base).map(Some),
            };
            if let Some(kept) = kept {
                parser.memo.insert(line, probe, kept);
            }
        }
        Missed::Corr(probe, at) => {
            if let Some(kept) = rec.and_then(|r| corr_template(r, line, start, probe.key_at(), at))
            {
                parser.corr_memo.insert(line, probe, Some(kept));
            }
        }
        Missed::Offset(probe, at) => {
            // Kept only when the record is a `Fetch topic` that ends at the ` at offset `
            // the key ends with: its parse ends with that literal, so it read no byte
            // after the key, and any line sharing the key parses the same way.
            let ends_there = |r: &&SpanRecord| {
                matches!(r.event, EventOf::FetchTopic { .. })
                    && (r.base + r.body.1) as usize == start + at
            };
            if let Some(r) = rec.filter(ends_there) {
                if let Some(kept) = relative(r, (start + probe.key_at()) as u32) {
                    parser.offset_memo.insert(line, probe, Some(kept));
                }
            }
        }
    }
}

/// The CorrId (and round trip) of a record placed from the CorrId memo.
fn with_corr_id(r: &mut SpanRecord, id: i32, rtt: f64) {
    match &mut r.event {
        EventOf::Sent { corr_id, .. } | EventOf::SentPartial { corr_id, .. } => *corr_id = id,
        EventOf::Received {
            corr_id, rtt_ms, ..
        } => {
            *corr_id = id;
            *rtt_ms = rtt;
        }
        _ => {}
    }
}

/// A kept record placed on the line `buf[start..end]` (index `line`) whose rest starts
/// at `key_at`, with that line's time.
fn placed(
    t: &SpanRecord,
    line: u32,
    start: usize,
    end: usize,
    key_at: usize,
    secs: f64,
) -> SpanRecord {
    SpanRecord {
        base: (start + key_at) as u32,
        line,
        line_start: start as u32,
        line_end: end as u32,
        timestamp: t.timestamp.map(|ts| Timestamp { secs, ..ts }),
        ..*t
    }
}

/// The records of one line `buf[start..end]` (already cut and `\r`-trimmed), in the
/// analyzers' order: librdkafka's own format first (a repeat of a recent raw line
/// through the memo, else through `cache`: the block's lines come in order), then any
/// wrapper.
fn parse_line<T: Tally>(
    buf: &mut [u8],
    index: u32,
    start: usize,
    mut end: usize,
    finder: &RecordFinder,
    parser: &mut LineParser,
    out: &mut Out<'_, T>,
) {
    let line = &buf[start..end];
    // A raw line goes to one memo by its shape: a request's SEND/RECV line by its bytes up
    // to its CorrId, a FETCH line through `] at offset ` when it has the words, any other
    // line by its whole rest.
    let stamp = parser.stamps.stamp_and_facility(line);
    // The memo that missed, to be told the parse's result.
    let mut missed = Missed::None;
    if let Some(st) = stamp {
        let fac = &line[st.1..st.1 + st.2];
        if is_send_recv(fac) {
            if let Some(at) = corr_id_at(line) {
                match parser.corr_memo.lookup(line, st, at) {
                    Lookup::Hit {
                        secs,
                        key_at,
                        value,
                    } => {
                        // Only records are kept: with no record, the tail decided.
                        if let Some((t, tail)) = value {
                            if let Some((id, rtt, body_end)) = corr_id_tail_at(line, at, *tail) {
                                let mut r = placed(t, index, start, end, key_at, secs);
                                with_corr_id(&mut r, id, rtt);
                                r.body.1 = (start + body_end) as u32 - r.base;
                                out.records.push(r); // a request: never tallied
                            }
                        }
                        return;
                    }
                    Lookup::Miss(p) => missed = Missed::Corr(p, at),
                    Lookup::Pass => {}
                }
            }
        } else if let Some(at) = (fac == b"FETCH")
            .then(|| offset_key_end(line))
            .flatten()
            .filter(|&at| at > st.1)
        {
            match parser.offset_memo.lookup(line, st, at) {
                Lookup::Hit {
                    secs,
                    key_at,
                    value: Some(t),
                } => {
                    out.raw(placed(t, index, start, end, key_at, secs));
                    return;
                }
                Lookup::Hit { .. } => {} // only records are kept
                Lookup::Miss(p) => missed = Missed::Offset(p, at),
                Lookup::Pass => {}
            }
        } else {
            match parser.memo.lookup(line, st, line.len()) {
                Lookup::Hit {
                    secs,
                    key_at,
                    value,
                } => {
                    if let Some(t) = value {
                        out.raw(placed(t, index, start, end, key_at, secs));
                    }
                    return;
                }
                Lookup::Miss(p) => missed = Missed::Rest(p),
                Lookup::Pass => {}
            }
        }
    }
    // Without a raw stamp the raw parser takes nothing (`HeadCache::record` starts there).
    let found = stamp.and_then(|st| parser.cache.record_stamped(line, st));
    if let Some(found) = found {
        // Pushed where it goes (a record is ~150 bytes: moving it through options and
        // temporaries showed in the instruction counts, docs/perf.md).
        let pushed = found.is_some();
        if let Some(rec) = found {
            out.records.push(to_spans(buf, index, start, end, rec));
        }
        let rec = if pushed { out.records.last() } else { None };
        remember(parser, missed, &buf[start..end], start, rec);
        if pushed {
            out.offer_last();
        }
        return;
    }
    let scratch = &mut parser.scratch;
    if unescape_json_slashes(&buf[start..end], scratch) {
        // Unescaping only shortens: rewrite the line in place.
        buf[start..start + scratch.len()].copy_from_slice(scratch);
        end = start + scratch.len();
    }
    let buf = &*buf;
    // A wrapper's line may hold several records: all go to the analyzing thread.
    for rec in finder.records(&buf[start..end]) {
        out.records.push(to_spans(buf, index, start, end, rec));
    }
}

/// Where a block's records go: to the analyzing thread, or, for a raw line's record the
/// sink's order-free part accounts for whole, to the parsing thread's tally.
pub(super) struct Out<'a, T> {
    records: Vec<SpanRecord>,
    tally: &'a mut T,
    /// Lines whose record the tally took.
    tallied: u64,
}

impl<T: Tally> Out<'_, T> {
    /// A raw line's record.
    #[inline]
    fn raw(&mut self, r: SpanRecord) {
        if self.tally.take(&r.event, r.timestamp) {
            self.tallied += 1;
        } else {
            self.records.push(r);
        }
    }

    /// The raw line's record pushed last, now that the memo has seen it.
    #[inline]
    fn offer_last(&mut self) {
        let Some(r) = self.records.last() else { return };
        if self.tally.take(&r.event, r.timestamp) {
            self.records.pop();
            self.tallied += 1;
        }
    }
}

/// `%<level>|`: how every line of librdkafka's own stderr format starts.
#[inline]
fn is_raw_start(s: &[u8]) -> bool {
    s.len() >= 4 && s[0] == b'%' && s[1].is_ascii_digit() && s[2] == b'|'
}

fn trim_cr(buf: &[u8], start: usize, end: usize) -> usize {
    if end > start && buf[end - 1] == b'\r' {
        end - 1
    } else {
        end
    }
}

/// A block and what its worker made of it.
pub(super) struct Parsed {
    pub(super) block: Block,
    pub(super) lines: u64,
    pub(super) records: Vec<SpanRecord>,
    /// Lines whose one record the worker's tally took.
    pub(super) tallied: u64,
}

impl Parsed {
    fn new(block: Block, lines: u64, records: Vec<SpanRecord>, tallied: u64) -> Parsed {
        Parsed {
            block,
            lines,
            records,
            tallied,
        }
    }
}

pub(super) fn parse_block<T: Tally>(
    mut block: Block,
    finder: &RecordFinder,
    parser: &mut LineParser,
    tally: &mut T,
    mut records: Vec<SpanRecord>,
) -> Parsed {
    records.clear();
    let mut out = Out {
        records,
        tally,
        tallied: 0,
    };
    let len = block.len;
    let buf = &mut block.buf[..];
    if block.long_head {
        // The head of a too-long line, as it is (no `\r` trimming: its end was cut).
        parse_line(buf, 0, 0, len, finder, parser, &mut out);
        return Parsed::new(block, 1, out.records, out.tallied);
    }
    // Every line's end at once (the newlines, then `len` for an unterminated last line).
    let mut newlines = std::mem::take(&mut parser.newlines);
    newlines.clear();
    crate::engine::newlines::newline_positions(&buf[..len], &mut newlines);
    let end_of = |k: usize| newlines.get(k).map_or(len, |&e| e as usize);
    // A block is whole lines, or one line the input ended without a newline.
    let lines = newlines.len() as u64 + block.unterminated as u64;
    // `pos` starts line `k`, which ends at `newlines[k]`.
    let mut pos = 0;
    let mut k = 0;
    while pos < len {
        // The next line to parse: this one in librdkafka's own format (its parser finds
        // the body at its known place, cheaper than searching for anchors), else the
        // first from here that holds an anchor.
        let line_start = if is_raw_start(&buf[pos..len]) {
            pos
        } else {
            let Some(at) = finder.anchor_at(&buf[pos..len]).map(|a| pos + a) else {
                break;
            };
            // The first line whose end is at or after the anchor.
            let skipped = newlines[k..].partition_point(|&e| (e as usize) < at);
            k += skipped;
            if skipped == 0 {
                pos
            } else {
                newlines[k - 1] as usize + 1
            }
        };
        let line_end = end_of(k);
        let end = trim_cr(buf, line_start, line_end);
        parse_line(buf, k as u32, line_start, end, finder, parser, &mut out);
        k += 1;
        pos = line_end + 1;
    }
    parser.newlines = newlines;
    Parsed::new(block, lines, out.records, out.tallied)
}
