//! The common unified line read in one pass over its bytes: decorations, `GC(N)`, and a
//! `Pause …` message (or G1's `Old regions: A->B` and `Humongous regions: A->B`) (`[0.123s][info][gc] GC(12) Pause Young (Normal) (G1 Evacuation
//! Pause) 24M->3M(256M) 2.345ms`), or the same pause's `gc,start` line without a
//! duration. A dense `-Xlog:gc` log is nothing else, and the general path
//! ([`unified::split_decorations`], [`unified::parse_message`]) spent ~2,300
//! instructions on each. Only what this parser can decide exactly as the general one does
//! is taken (the test `the_pause_line_parser_agrees_with_the_general_one` holds it to
//! that on every fixture line); anything else (other numbers' forms, a heap change of
//! another shape, a line without uptime, …) is `None`, and the general path reads it.
//!
//! A log repeats a few pause heads (`Pause Young (Normal) (G1 Evacuation Pause)`): the
//! last few heads split are kept with their parts, and a line whose head is one of them
//! followed by ` A->B(C) Dms` is read by comparing the head and parsing the four numbers
//! in one pass (splitting a head from its end cost ~1,000 instructions a line).

use super::event::{fast_decimal, Collector, Event, HeapChange, POW10};
use super::preparse::{HeadToken, Pre, Span, SpanEvent};
use super::unified::{self, PauseParts};
use crate::engine::bytes_eq::{find_byte, same_bytes};

/// Pause heads kept: a G1 log alternates `Normal` and `Concurrent Start` young pauses,
/// each for `G1 Evacuation Pause` or `G1 Preventive Collection`, then `Remark`, `Full`.
const HEADS_KEPT: usize = 8;

/// What [`PauseReader::read`] made of a line it takes.
#[derive(Debug, PartialEq)]
pub(crate) enum Reading {
    /// The line as the general path reads it (the line holds an anchor), written to the
    /// caller's [`Pre`]: in place, as the ~180-byte result was copied twice on its way
    /// to the block's list (perf: `memmove` 12 % of the worker's time on a dense log).
    Line,
    /// A line that holds no anchor: the anchor search would pass over it (G1's
    /// `Concurrent Mark Cycle` lines, a quarter of a dense `-Xlog:gc` log with them and
    /// `To-space exhausted`, cost that search and a failed try each).
    NoAnchor,
}

/// A pause head split once: its bytes, its parts, and the token that names it.
#[derive(Debug)]
struct KeptHead {
    bytes: Vec<u8>,
    parts: PauseParts,
    token: HeadToken,
}

/// Reads pause lines; keeps the last pause heads it split (see the module's comment).
#[derive(Debug, Default)]
pub(crate) struct PauseReader {
    heads: Vec<KeptHead>,
    /// The entry to replace next once [`HEADS_KEPT`] are kept.
    next_slot: usize,
    /// The entry the last pause's head matched.
    last_head: usize,
}

impl PauseReader {
    /// `buf[start..end]` (one line, `\r` trimmed) read as the general path would, or
    /// `None` when this parser does not take its form.
    pub(crate) fn read(
        &mut self,
        buf: &[u8],
        start: usize,
        end: usize,
        out: &mut Pre,
    ) -> Option<Reading> {
        // ASCII: valid UTF-8 (the general path's check), and every offset a char boundary.
        if !is_ascii(&buf[start..end]) {
            return None;
        }
        self.read_ascii(buf, start, end, out)
    }

    /// [`Self::read`] for a line known to be ASCII.
    pub(crate) fn read_ascii(
        &mut self,
        buf: &[u8],
        start: usize,
        end: usize,
        out: &mut Pre,
    ) -> Option<Reading> {
        let b = &buf[start..end];
        debug_assert!(b.is_ascii());
        match lead::<false>(b) {
            Ok(l) => self.read_message(buf, start, end, l, out),
            Err(Stop::OtherTags) => line(out, Pre::OtherTags),
            Err(Stop::GiveUp) => None,
        }
    }

    /// The line starting at `buf[start]`, its end not known yet, read from its start:
    /// a pause of a kept head whose ` A->B(C) Dms` ends the line is read whole, and its
    /// end found on the way (the line scan before it was ~60 instructions a line of a
    /// dense `-Xlog:gc` log). Every byte of such a line was compared with a decoration's
    /// form, a kept head or a number's: it is ASCII. Otherwise what was read before the
    /// message, for [`Self::read_message`] once the caller found the line's end and
    /// checked it is ASCII; or `GiveUp` (the caller reads the line with [`Self::read`]).
    #[inline]
    pub(crate) fn read_forward(&mut self, buf: &[u8], start: usize, out: &mut Pre) -> Forward {
        let b = &buf[start..];
        let Ok(l) = lead::<true>(b) else {
            return Forward::GiveUp;
        };
        if !b[l.at..].starts_with(b"Pause ") {
            return Forward::Lead(l);
        }
        let Some(uptime) = l.uptime else {
            return Forward::Lead(l);
        };
        let Some((i, (heap, ms, e))) = self.kept_head(b, l.at, heap_and_ms_to_line_end) else {
            return Forward::Lead(l);
        };
        let k = &self.heads[i];
        *out = pause_pre(
            start + l.at,
            &k.parts,
            k.token,
            l.id,
            uptime,
            Some(heap),
            ms,
        );
        // `ms`, then `\n` or `\r\n` (`heap_and_ms_to_line_end`).
        let nl = if b[e] == b'\n' { e } else { e + 1 };
        Forward::Line {
            end: start + e,
            next: start + nl + 1,
        }
    }

    /// The message of the ASCII line `buf[start..end]` (`\r` trimmed), after what
    /// [`lead`] read of it.
    pub(crate) fn read_message(
        &mut self,
        buf: &[u8],
        start: usize,
        end: usize,
        l: Lead,
        out: &mut Pre,
    ) -> Option<Reading> {
        let b = &buf[start..end];
        let Lead {
            at,
            uptime,
            iso_time,
            id,
        } = l;
        // The message, as `parse_message` trims it; a pause from its first word.
        let m_end = at + b[at..].trim_ascii_end().len();
        if !b[at..m_end].starts_with(b"Pause ") {
            match other_message(b, at, m_end, id, uptime, iso_time) {
                Some(Other::Line(p)) => return line(out, p),
                Some(Other::NoAnchor) => return Some(Reading::NoAnchor),
                None => {}
            }
            return line(out, regions(b, at, m_end, id, uptime?)?);
        }
        // `parse_pause`: the duration last (a `gc,start` line ends in `)`: no duration, so
        // no event). The message holds a space (`Pause `) and ends in a non-space, so its
        // last token is not empty and ends with the message's last byte.
        if b[m_end - 1] == b')' {
            return line(
                out,
                Pre::Unified {
                    id,
                    event: None,
                    uptime: None,
                    wall: None,
                },
            );
        }
        // A kept head again, then ` A->B(C) Dms` to the end: the general path's last
        // token is the duration and the one before it this heap change, so its head is
        // the same bytes and splits the same way.
        let known = self.kept_head(b, at, |b, i| heap_and_ms(b, i, m_end));
        let (p, head_len, heap, ms, head) = match known {
            Some((i, (heap, ms))) => {
                let k = &self.heads[i];
                (k.parts, k.bytes.len(), Some(heap), ms, k.token)
            }
            None => {
                // The general path's reading from the end: the duration, then a heap
                // change before it.
                let sp = at + b[at..m_end].iter().rposition(|&c| c == b' ')?;
                let ms = fast_decimal(b[sp + 1..m_end].strip_suffix(b"ms")?)?;
                let mut head_end = at + b[at..sp].trim_ascii_end().len();
                let mut heap = None;
                if let Some(tsp) = b[at..head_end].iter().rposition(|&c| c == b' ') {
                    let tok = &b[at + tsp + 1..head_end];
                    if tok.windows(2).any(|w| w == b"->") {
                        heap = Some(heap_change(tok)?);
                        head_end = at + b[at..at + tsp].trim_ascii_end().len();
                    }
                }
                let head = &b[at..head_end];
                let p = unified::pause_parts(head);
                let token = HeadToken::fresh();
                self.last_head = self.keep(head, p, token);
                (p, head.len(), heap, ms, token)
            }
        };
        debug_assert!(head_len <= m_end - at);
        *out = pause_pre(start + at, &p, head, id, uptime?, heap, ms);
        Some(Reading::Line)
    }

    /// The kept head the message at `b[at..]` starts with, followed by a space and what
    /// `tail` reads from there: its index, and what `tail` read. The head of the pause
    /// before first: a log's pauses come in runs of one kind. Only the numbers travel out
    /// of the search, the head's parts are read by its index after it (moving them through
    /// `Option`s was a `memcpy` a line). Direct calls (not `and_then`/`find_map` closures,
    /// which stayed calls).
    #[inline(always)]
    fn kept_head<T>(
        &mut self,
        b: &[u8],
        at: usize,
        tail: impl Fn(&[u8], usize) -> Option<T>,
    ) -> Option<(usize, T)> {
        if let Some(k) = self.heads.get(self.last_head) {
            if let Some(n) = try_head(b, at, k, &tail) {
                return Some((self.last_head, n));
            }
        }
        for (i, k) in self.heads.iter().enumerate() {
            if let Some(n) = try_head(b, at, k, &tail) {
                self.last_head = i;
                return Some((i, n));
            }
        }
        None
    }
}

/// What [`PauseReader::read_forward`] made of a line.
pub(crate) enum Forward {
    /// A pause, written to the caller's [`Pre`]: the line (`\r` trimmed) ends at `end`,
    /// the next starts at `next`.
    Line { end: usize, next: usize },
    /// Not read past its decorations and `GC(N)` (see [`PauseReader::read_message`]).
    Lead(Lead),
    /// Not read: a form [`lead`] reads only with the line's end known.
    GiveUp,
}

/// What a unified line says before its message: where the message starts (`at`), the
/// uptime, whether an ISO time was among the decorations, and the `GC(N)` id.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Lead {
    at: usize,
    uptime: Option<f64>,
    iso_time: bool,
    id: Option<u64>,
}

/// Why [`lead`] stopped.
enum Stop {
    /// A unified line of other tags than `gc`'s (its message not read).
    OtherTags,
    /// A form this reader does not take.
    GiveUp,
}

/// The decorations (as `split_decorations` classifies them) and `GC(N)` (as
/// `split_gc_id` reads it) of the line at the start of `b`.
///
/// `FORWARD`: `b` runs past the line's end, into the lines after it. What is read then
/// is what reading the line alone reads: every form taken stops at a byte a line does
/// not end with (digits, `ms]`, `)`, lower-case letters), the tokens found up to a `]`
/// are taken only when they hold nothing else than a tag's or a level's letters (no
/// blank for the trim to remove, no line end), and blanks after `GC(N)` that reach a
/// `\r` or `\n` give up.
#[inline(always)]
fn lead<const FORWARD: bool>(b: &[u8]) -> Result<Lead, Stop> {
    let give_up = Err(Stop::GiveUp);
    if b.first() != Some(&b'[') {
        return give_up;
    }
    let mut at = 0;
    let mut numeric: [Option<(f64, bool)>; 2] = [None, None];
    let mut numeric_seen = 0;
    let mut tags: Option<&[u8]> = None;
    // An ISO time's token is checked at two places only: it could hold anything.
    let mut iso_time = false;
    while b.get(at) == Some(&b'[') {
        let slot = usize::from(numeric_seen > 0);
        // `[1796021927326ms]`: the wall clock beside an uptime, whose value this
        // reader never uses (it gives a line without uptime up). Not tried after a
        // number: a second epoch stamp is no line's (`quick_time` reads one as well).
        if numeric_seen == 0 {
            if let Some(next) = epoch_ms(b, at + 1) {
                numeric[slot] = Some((f64::NAN, true));
                numeric_seen += 1;
                at = next;
                continue;
            }
        }
        // The usual `[123.456s]` or `[462ms]`, read as it is scanned.
        if let Some((v, next)) = quick_time(b, at + 1) {
            numeric[slot] = Some(v);
            numeric_seen += 1;
            at = next;
            continue;
        }
        let Some(close) = find_byte(&b[at + 1..], b']') else {
            return give_up;
        };
        let raw = &b[at + 1..at + 1 + close];
        if FORWARD && !forward_token(raw) {
            return give_up;
        }
        let token = raw.trim_ascii();
        let Some(&first) = token.first() else {
            return give_up;
        };
        if first.is_ascii_digit() {
            if token.len() >= 11 && token[4] == b'-' && token[10] == b'T' {
                // An ISO time: needed only without an uptime, when this parser gives up.
                iso_time = true;
            } else if token[token.len() - 1] == b's' {
                let Some(v) = numeric_time(token) else {
                    return give_up;
                };
                numeric[slot] = Some(v);
                numeric_seen += 1;
            } else if !token.iter().all(u8::is_ascii_digit) {
                return give_up;
            }
        } else if matches!(
            token,
            b"info" | b"debug" | b"trace" | b"warning" | b"error" | b"develop"
        ) {
        } else if token
            .iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b',' || *c == b'_')
        {
            tags = Some(token);
        } else {
            return give_up;
        }
        at += close + 2;
    }
    if at == 0 {
        return give_up;
    }
    if tags.is_some_and(|t| !t.starts_with(b"gc")) {
        return Err(Stop::OtherTags);
    }
    if b.get(at) == Some(&b' ') {
        at += 1;
    }
    // `GC(N)`, as `split_gc_id` reads it (digits only here).
    let mut id = None;
    if b[at..].starts_with(b"GC(") {
        // Up to 16 digits here (the general path takes 19: it reads the rest).
        let Some((n, digits)) = digit_run(&b[at + 3..]) else {
            return give_up;
        };
        if digits == 0 || b.get(at + 3 + digits) != Some(&b')') {
            return give_up;
        }
        id = Some(n);
        at += 3 + digits + 1;
        while let Some(&c) = b.get(at) {
            if !c.is_ascii_whitespace() {
                break;
            }
            if FORWARD && (c == b'\n' || c == b'\r') {
                return give_up;
            }
            at += 1;
        }
    }
    // The uptime, as `Decorations::uptime_s` picks it; without one the wall clock may
    // be in use, and the general path reads the line.
    let uptime = numeric
        .iter()
        .flatten()
        .find_map(|&(v, epoch)| (!epoch).then_some(v));
    Ok(Lead {
        at,
        uptime,
        iso_time,
        id,
    })
}

/// A decoration's token (between `[` and `]`) that [`lead`] takes when reading forward:
/// a level or tags (a lower-case letter, then letters, digits, `,`, `_` and the blanks
/// the JVM pads them with), or a number or an ISO time (a digit, then digits and
/// `-T:.+`). Neither holds a line end, nor any byte but ASCII.
#[inline(always)]
fn forward_token(raw: &[u8]) -> bool {
    match raw.first() {
        Some(c) if c.is_ascii_lowercase() => raw.iter().all(|&c| {
            c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, b',' | b'_' | b' ')
        }),
        Some(c) if c.is_ascii_digit() => raw
            .iter()
            .all(|&c| c.is_ascii_digit() || matches!(c, b'-' | b'T' | b':' | b'.' | b'+')),
        _ => false,
    }
}

/// A pause's reading: its head's parts (at `msg` in the block, where the message
/// starts) and token, its id, uptime, heap change and duration.
#[inline(always)]
fn pause_pre(
    msg: usize,
    p: &PauseParts,
    head: HeadToken,
    id: Option<u64>,
    uptime: f64,
    heap: Option<HeapChange>,
    ms: f64,
) -> Pre {
    let span = |(a, b): (usize, usize)| Span {
        start: msg + a,
        end: msg + b,
    };
    Pre::Unified {
        id,
        event: Some(SpanEvent::Pause {
            kind: span((0, p.kind_end)),
            subkind: p.subkind.map(span),
            cause: p.cause.map(span),
            class: p.class,
            heap,
            ms,
            evacuation_failure: p.evacuation_failure,
            head,
        }),
        uptime: Some(uptime),
        wall: None,
    }
}

/// What `tail` reads after kept head `k` when the message at `b[at..]` is that head and
/// a space. Inlined where the search calls it: as a call of its own it saved and
/// restored six registers a try.
#[inline(always)]
fn try_head<T>(
    b: &[u8],
    at: usize,
    k: &KeptHead,
    tail: &impl Fn(&[u8], usize) -> Option<T>,
) -> Option<T> {
    let h = k.bytes.len();
    if b.get(at + h) == Some(&b' ') && same_bytes(&b[at..at + h], &k.bytes) {
        tail(b, at + h + 1)
    } else {
        None
    }
}

/// `p` written to `out`: a line the reader took.
#[inline]
fn line(out: &mut Pre, p: Pre) -> Option<Reading> {
    *out = p;
    Some(Reading::Line)
}

/// What [`other_message`] made of a line.
enum Other {
    Line(Pre),
    NoAnchor,
}

/// A dense G1 `-Xlog:gc` log's lines other than pauses, from the message at `b[at..]`
/// (`m_end`: where it ends, trailing blanks trimmed): `To-space exhausted` and `Using G1`
/// as `parse_message` reads them, and `Concurrent Mark Cycle` (with or without its
/// duration), which holds no anchor. `None`: another message.
fn other_message(
    b: &[u8],
    at: usize,
    m_end: usize,
    id: Option<u64>,
    uptime: Option<f64>,
    iso_time: bool,
) -> Option<Other> {
    let m = &b[at..m_end];
    let event = if m == b"To-space exhausted" {
        Event::ToSpaceExhausted
    } else if m.starts_with(b"Using G1") {
        Event::Collector(Collector::G1)
    } else if let Some(rest) = b[at..].strip_prefix(b"Concurrent Mark Cycle") {
        // No anchor: every anchor holds a byte these cannot (an upper-case letter, `:`,
        // `(`, `-`, …) or would have to start inside `Cycle` (`egion size: ` would need
        // `gion` next). The decorations hold none either: numbers, levels and tags, all
        // checked whole, but for an ISO time's token, which is not.
        let plain = |c: &u8| c.is_ascii_digit() || matches!(c, b'.' | b',' | b' ' | b'm' | b's');
        return (!iso_time && rest.iter().all(plain)).then_some(Other::NoAnchor);
    } else {
        return None;
    };
    Some(Other::Line(Pre::Unified {
        id,
        event: Some(SpanEvent::Plain(event)),
        uptime: Some(uptime?),
        wall: None,
    }))
}

/// G1's `Old regions: A->B` and `Humongous regions: A->B` (a `gc*` log's other lines
/// parsed on every GC), as `parse_message` reads them, for integers of at most 15 digits.
fn regions(b: &[u8], at: usize, m_end: usize, id: Option<u64>, uptime: f64) -> Option<Pre> {
    let m = &b[at..m_end];
    let (old, from) = if m.starts_with(b"Old regions: ") {
        (true, at + 13)
    } else if m.starts_with(b"Humongous regions: ") {
        (false, at + 19)
    } else {
        return None;
    };
    let (before, i) = integer_at(b, from)?;
    if b.get(i..i + 2)? != b"->" {
        return None;
    }
    let (after, i) = integer_at(b, i + 2)?;
    if i != m_end {
        return None;
    }
    let e = if old {
        Event::OldRegions { before, after }
    } else {
        Event::HumongousRegions { after }
    };
    Some(Pre::Unified {
        id,
        event: Some(SpanEvent::Plain(e)),
        uptime: Some(uptime),
        wall: None,
    })
}

/// Digits at `b[i..]` (1 to 15: `str::parse` gives the same `f64`, exactly), and where
/// they end.
#[inline(always)]
fn integer_at(b: &[u8], i: usize) -> Option<(f64, usize)> {
    let t = b.get(i..)?;
    let n = t.iter().take(16).take_while(|c| c.is_ascii_digit()).count();
    if n == 0 || n > 15 {
        return None;
    }
    let m = t[..n]
        .iter()
        .fold(0u64, |m, &c| m * 10 + u64::from(c - b'0'));
    Some((m as f64, i + n))
}

impl PauseReader {
    /// Keep `head` and its parts (in place of the oldest when [`HEADS_KEPT`] are kept);
    /// where it is kept.
    fn keep(&mut self, head: &[u8], p: PauseParts, token: HeadToken) -> usize {
        if self.heads.len() < HEADS_KEPT {
            self.heads.push(KeptHead {
                bytes: head.to_vec(),
                parts: p,
                token,
            });
            return self.heads.len() - 1;
        }
        let slot = self.next_slot;
        let k = &mut self.heads[slot];
        k.bytes.clear();
        k.bytes.extend_from_slice(head);
        k.parts = p;
        k.token = token;
        self.next_slot = (slot + 1) % HEADS_KEPT;
        slot
    }
}

/// The run of ASCII digits at the start of `t`, as an integer with its length, for a run
/// of at most 16 digits (`None`: longer); the value is exact for at most 15. Eight bytes a
/// step where eight are there ([`digits8`]), else a byte at a time: a dense log's line
/// holds ~35 digits, and the byte loop's ~9 instructions a digit were a tenth of a line.
/// Runs of up to three digits (heap sizes in `M`, a pause's milliseconds and their
/// fraction: most numbers of a pause line) are read byte by byte first, cheaper than
/// the eight-byte step's fixed cost.
#[inline(always)]
fn digit_run(t: &[u8]) -> Option<(u64, usize)> {
    if let [a, b, c, d, ..] = *t {
        let (a, b, c, d) = (
            a.wrapping_sub(b'0'),
            b.wrapping_sub(b'0'),
            c.wrapping_sub(b'0'),
            d.wrapping_sub(b'0'),
        );
        if a > 9 {
            return Some((0, 0));
        }
        if b > 9 {
            return Some((u64::from(a), 1));
        }
        if c > 9 {
            return Some((u64::from(a) * 10 + u64::from(b), 2));
        }
        if d > 9 {
            return Some((u64::from(a) * 100 + u64::from(b) * 10 + u64::from(c), 3));
        }
    }
    let (mut m, mut n) = (0u64, 0usize);
    while let Some(chunk) = t.get(n..n + 8) {
        let (v, k) = digits8(chunk.try_into().expect("eight bytes"));
        m = m * POW10_U64[k] + v;
        n += k;
        if k < 8 {
            return Some((m, n));
        }
        if n > 8 {
            // Sixteen digits, and maybe more: longer than any number taken here.
            return None;
        }
    }
    while n < t.len() && t[n].is_ascii_digit() {
        if n >= 16 {
            return None;
        }
        m = m * 10 + u64::from(t[n] - b'0');
        n += 1;
    }
    Some((m, n))
}

/// Powers of ten as integers, `10^0` to `10^8`.
const POW10_U64: [u64; 9] = [
    1,
    10,
    100,
    1_000,
    10_000,
    100_000,
    1_000_000,
    10_000_000,
    100_000_000,
];

/// How many of eight bytes are leading ASCII digits (0 to 8), and the bytes less `'0'`.
#[inline(always)]
fn leading_digits8(bytes: [u8; 8]) -> (usize, u64) {
    let w = u64::from_le_bytes(bytes);
    // Each byte less `'0'`: a digit is 0..=9 and stays under 0x80 with 0x76 added; a byte
    // below `'0'` wraps to 0x80 or more, one above `'9'` reaches 0x80 with 0x76 added.
    // A borrow or carry only runs toward later bytes, past the first non-digit.
    let x = w.wrapping_sub(0x3030_3030_3030_3030);
    let non_digit = (x | x.wrapping_add(0x7676_7676_7676_7676)) & 0x8080_8080_8080_8080;
    ((non_digit.trailing_zeros() / 8) as usize, x)
}

/// A `[…ms]` decoration at `b[i..]` (just after its `[`) of 13 to 15 digits, the first
/// not `0`, without a fraction: at least 10^12 ms, so [`quick_time`] classifies it as
/// epoch milliseconds (over 10^11); where the next decoration starts. Its digits are
/// counted, not combined.
#[inline(always)]
fn epoch_ms(b: &[u8], i: usize) -> Option<usize> {
    let t = b.get(i..i + 16)?;
    if t[0] == b'0' {
        return None;
    }
    let (n1, _) = leading_digits8(t[..8].try_into().expect("eight bytes"));
    let (n2, _) = leading_digits8(t[8..].try_into().expect("eight bytes"));
    if n1 != 8 || !(5..=7).contains(&n2) {
        return None;
    }
    let e = i + 8 + n2;
    (b.get(e..e + 3)? == b"ms]").then_some(e + 3)
}

/// The leading ASCII digits of eight bytes (the first byte the most significant digit):
/// their value and how many (0 to 8), with no branch per byte.
#[inline(always)]
fn digits8(bytes: [u8; 8]) -> (u64, usize) {
    let (n, x) = leading_digits8(bytes);
    if n == 0 {
        return (0, 0);
    }
    // The n digits to the top bytes (zeros before them are leading zeros), then pairs,
    // quads and the eight combined.
    let v = x << (64 - 8 * n as u32);
    let v = (v & 0x0F0F_0F0F_0F0F_0F0F).wrapping_mul(2561) >> 8;
    let v = (v & 0x00FF_00FF_00FF_00FF).wrapping_mul(6_553_601) >> 16;
    let v = (v & 0x0000_FFFF_0000_FFFF).wrapping_mul(42_949_672_960_001) >> 32;
    (v, n)
}

/// A decimal `D[.D]` (or `,`) at `b[i..]` as [`fast_decimal`] reads it (at most 15
/// digits, one before the separator at least, one after it), and where it ends; `None`
/// for any other form (the caller then reads the text the general way).
#[inline(always)]
fn decimal_at(b: &[u8], i: usize) -> Option<(f64, usize)> {
    let t = b.get(i..)?;
    let (m, int_digits) = digit_run(t)?;
    if int_digits == 0 || int_digits > 15 {
        return None;
    }
    let j = int_digits;
    if j + 1 < t.len() && matches!(t[j], b'.' | b',') && t[j + 1].is_ascii_digit() {
        let (f, k) = digit_run(&t[j + 1..])?;
        if int_digits + k > 15 {
            return None;
        }
        let m = m * POW10_U64[k.min(8)] * if k > 8 { POW10_U64[k - 8] } else { 1 } + f;
        // Through `i64` (at most 15 digits: exact either way): one instruction where
        // `u64` to `f64` is a branch and a fix-up on this target (~18 a line).
        return Some((m as i64 as f64 / POW10[k], i + j + 1 + k));
    }
    // `m / 10^0`: the same value as the division by one.
    Some((m as i64 as f64, i + j))
}

/// A `[…s]` or `[…ms]` decoration's time at `b[i..]` (just after its `[`), as
/// [`numeric_time`] reads it, and where the next decoration starts.
#[inline(always)]
fn quick_time(b: &[u8], i: usize) -> Option<((f64, bool), usize)> {
    let (v, i) = decimal_at(b, i)?;
    match b.get(i..i + 3)? {
        [b's', b']', _] => Some(((v, false), i + 2)),
        [b'm', b's', b']'] => Some(((v / 1e3, v > 1e11), i + 3)),
        _ => None,
    }
}

/// A size at `b[i..]` as `size` reads it (`24M`, `1024.0K`, `0B`, unit-less bytes), and
/// where it ends.
#[inline(always)]
fn size_at(b: &[u8], i: usize) -> Option<(f64, usize)> {
    let (v, i) = decimal_at(b, i)?;
    let mult = match b.get(i) {
        Some(b'B') => 1.0,
        Some(b'K' | b'k') => 1024.0,
        Some(b'M') => 1024.0 * 1024.0,
        Some(b'G') => 1024.0 * 1024.0 * 1024.0,
        Some(b'T') => 1024f64.powi(4),
        _ => return Some((v, i)),
    };
    Some((v * mult, i + 1))
}

/// ` A->B(C) Dms` exactly, from `b[i..]` to `m_end`: the heap change and the duration.
#[inline(always)]
fn heap_and_ms(b: &[u8], i: usize, m_end: usize) -> Option<(HeapChange, f64)> {
    let (heap, ms, i) = heap_and_duration(b, i)?;
    if i + 2 != m_end || &b[i..m_end] != b"ms" {
        return None;
    }
    Some((heap, ms))
}

/// ` A->B(C) Dms` from `b[i..]`, then the line's end (`\n` or `\r\n`): the heap change, the
/// duration, and where `ms` ends. What [`heap_and_ms`] reads of the line (`\r` trimmed)
/// when its `m_end` is that end.
#[inline(always)]
fn heap_and_ms_to_line_end(b: &[u8], i: usize) -> Option<(HeapChange, f64, usize)> {
    let (heap, ms, i) = heap_and_duration(b, i)?;
    match b.get(i..i + 3)? {
        [b'm', b's', b'\n'] => Some((heap, ms, i + 2)),
        [b'm', b's', b'\r'] if b.get(i + 3) == Some(&b'\n') => Some((heap, ms, i + 2)),
        _ => None,
    }
}

/// ` A->B(C) D` from `b[i..]`: the heap change, the number after it, and where it ends.
#[inline(always)]
fn heap_and_duration(b: &[u8], i: usize) -> Option<(HeapChange, f64, usize)> {
    let (before, i) = size_at(b, i)?;
    if b.get(i..i + 2)? != b"->" {
        return None;
    }
    let (after, i) = size_at(b, i + 2)?;
    if b.get(i) != Some(&b'(') {
        return None;
    }
    let (capacity, i) = size_at(b, i + 1)?;
    if b.get(i..i + 2)? != b") " {
        return None;
    }
    let (ms, i) = decimal_at(b, i + 2)?;
    let heap = HeapChange {
        before,
        after,
        capacity: Some(capacity),
        after_pct_of_max: None,
    };
    Some((heap, ms, i))
}

/// A numeric time decoration as `unified::numeric_time` reads it (`…s`, `…ms`, `…ns`),
/// for the forms the exact fast decimal takes; `None` gives the line up.
fn numeric_time(t: &[u8]) -> Option<(f64, bool)> {
    if let Some(n) = t.strip_suffix(b"ns") {
        let v = fast_decimal(n)?;
        // The general path parses this form with `str::parse`: integers only here.
        if n.contains(&b'.') || n.contains(&b',') {
            return None;
        }
        Some((v / 1e9, v > 1e17))
    } else if let Some(n) = t.strip_suffix(b"ms") {
        let v = fast_decimal(n)?;
        Some((v / 1e3, v > 1e11))
    } else {
        let v = fast_decimal(t.strip_suffix(b"s")?)?;
        Some((v, false))
    }
}

/// `A->B(C)`, as `parse_heap_change` reads it, for sizes the exact fast decimal takes.
fn heap_change(tok: &[u8]) -> Option<HeapChange> {
    let arrow = tok.windows(2).position(|w| w == b"->")?;
    let (left, right) = (&tok[..arrow], &tok[arrow + 2..]);
    if left.contains(&b'(') {
        return None;
    }
    let paren = right.iter().position(|&c| c == b'(')?;
    let capacity = right[paren + 1..].strip_suffix(b")")?;
    Some(HeapChange {
        before: size(left)?,
        after: size(&right[..paren])?,
        capacity: Some(size(capacity)?),
        after_pct_of_max: None,
    })
}

/// A JVM size as `parse_size` reads it (`1913M`, `1024.0K`, `0B`, unit-less bytes).
fn size(s: &[u8]) -> Option<f64> {
    let (num, mult) = match *s.last()? {
        b'B' => (&s[..s.len() - 1], 1.0),
        b'K' | b'k' => (&s[..s.len() - 1], 1024.0),
        b'M' => (&s[..s.len() - 1], 1024.0 * 1024.0),
        b'G' => (&s[..s.len() - 1], 1024.0 * 1024.0 * 1024.0),
        b'T' => (&s[..s.len() - 1], 1024f64.powi(4)),
        _ => (s, 1.0),
    };
    Some(fast_decimal(num)? * mult)
}

/// `b.is_ascii()` sixteen bytes a step with SSE2, the last sixteen overlapping (the
/// slice method is a byte loop here, ~4 instructions a byte over the whole line; eight
/// bytes a step in `u64`s was ~50 a line). Elsewhere, and for short lines, the slice
/// method.
fn is_ascii(b: &[u8]) -> bool {
    let n = b.len();
    #[cfg(target_arch = "x86_64")]
    if n >= 16 {
        use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128};
        // SAFETY: SSE2 is part of x86_64; every load reads 16 bytes inside `b`
        // (`i + 16 <= n`, and `n - 16` with `n >= 16`), unaligned loads.
        unsafe {
            let load = |i: usize| _mm_loadu_si128(b.as_ptr().add(i) as *const __m128i);
            let mut any = load(n - 16);
            let mut i = 0;
            while i + 16 <= n {
                any = _mm_or_si128(any, load(i));
                i += 16;
            }
            return _mm_movemask_epi8(any) == 0;
        }
    }
    b.is_ascii()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gc::preparse::preparse_line;
    use crate::gc::scan::trim_cr;
    use std::path::{Path, PathBuf};

    fn logs(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries {
            let p = e.unwrap().path();
            if p.is_dir() {
                logs(&p, out);
            } else if p.extension().is_some_and(|x| x == "log") {
                out.push(p);
            }
        }
    }

    /// Every line of every GC fixture (and of the corpus when it is here), and lines
    /// made to sit on this parser's edges: where it takes a line, it says what the
    /// general path says.
    #[test]
    fn the_pause_line_parser_agrees_with_the_general_one() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let mut files = Vec::new();
        logs(&root.join("fixtures/gc"), &mut files);
        let corpus = std::env::var_os("KGAP_CORPUS")
            .map_or_else(|| root.join("../shared/corpus"), PathBuf::from)
            .join("gc");
        logs(&corpus, &mut files);
        let mut lines: Vec<Vec<u8>> = Vec::new();
        for f in &files {
            let bytes = std::fs::read(f).unwrap();
            lines.extend(bytes.split(|&c| c == b'\n').map(trim_cr_owned));
        }
        let pause = "[1.000s][info][gc] GC(1) Pause Young (Normal) (G1 Evacuation Pause) 24M->3M(256M) 2.345ms";
        let edges = [
            pause.to_string(),
            "[1.000s][info][gc] GC(1) To-space exhausted".into(),
            "[1.000s][info][gc] GC(1) To-space exhausted  ".into(),
            "[1.000s][info][gc] GC(1) To-space exhausted!".into(),
            "[2026-01-01T00:00:00.000+0000][info][gc] GC(1) To-space exhausted".into(),
            "[1.000s][info][gc] Using G1".into(),
            "[1.000s][info][gc,init] Using G1 (something)".into(),
            "[1.000s][info][gc] Using G2".into(),
            "[1.000s][info][safepoint] Using G1".into(),
            "[1.000s][info][gc] GC(1) Concurrent Mark Cycle".into(),
            "[1.000s][info][gc] GC(1) Concurrent Mark Cycle 12.5ms".into(),
            "[1.000s][info][gc] GC(1) Concurrent Mark Cycle 12,5 ms ".into(),
            "[1.000s][info][gc] GC(1) Concurrent Mark Cycle\t".into(),
            "[1.000s][info][gc] GC(1) Concurrent Mark Cycle Pause 1ms".into(),
            "[1.000s][info][gc] GC(1) Concurrent Mark Cycleegion size: 1M".into(),
            "[1.000s][info][gc] GC(1) Concurrent Mark Cycle Mark Abort".into(),
            "[2026-01-01TPause ][1.000s][gc] GC(1) Concurrent Mark Cycle".into(),
            "[2026-01-01T00:00:00.000+0000][1.000s] Concurrent Mark Cycle".into(),
            "[1.000s][info][gc] Concurrent Mark Cycle".into(),
            pause.replace("2.345ms", "2,345ms"),
            pause.replace("2.345ms", "0.002s"),
            pause.replace("2.345ms", "1234567890123456ms"),
            pause.replace("2.345ms", "ms"),
            pause.replace("24M->", "24M(30M)->"),
            pause.replace("(256M)", ""),
            pause.replace("(256M)", "(256)"),
            pause.replace("3M(", "3.5K("),
            pause.replace("3M(", "1e3M("),
            pause.replace("3M(", "M("),
            pause.replace("GC(1)", "GC(x)"),
            pause.replace("GC(1)", "GC()"),
            pause.replace("GC(1)", "GC(+1)"),
            pause.replace("GC(1)", "GC(12345678901234567890123)"),
            pause.replace("GC(1) ", ""),
            pause.replace("GC(1) ", "GC(1)\t"),
            pause.replace("GC(1) ", "GC(1)\r"),
            "[1.000s][info][gc] GC(1)".into(),
            "[1.000s][info][gc] GC(1) ".into(),
            "[1.000s][info][gc] GC(1)\t".into(),
            "[1.000s][info][gc] GC(1) \r".into(),
            "[1.000s][info][gc".into(),
            pause.replace("GC(1) ", "GC(1)\r "),
            pause.replace("2.345ms", "2.345ms\rx"),
            pause.replace("2.345ms", "2.345ms\r\r"),
            pause.replace("[gc]", "[gc  ]"),
            pause.replace("[gc]", "[gc\r]"),
            pause.replace("[gc]", "[gc\t]"),
            pause.replace("[info]", "[ info]"),
            pause.replace("[info]", "[1234]"),
            pause.replace("[info]", "[12:34]"),
            pause.replace("[info]", "[1234\n]"),
            pause.replace("[info]", "[2026-01-01T00:00:00.000+0000]"),
            pause.replace("[info]", "[2026-01-01T00:00:00.000Z]"),
            pause.replace("[info]", "[info"),
            pause.replace("[1.000s]", "[1,000s]"),
            pause.replace("[1.000s]", "[1.0.0s]"),
            pause.replace("[1.000s]", "[1000ms][1796021929339ms]"),
            pause.replace("[1.000s]", "[1796021929339ms]"),
            pause.replace("[1.000s]", "[1796021929339ms][2475ms][3ms]"),
            pause.replace("[1.000s]", "[123456789012345678ns]"),
            pause.replace("[1.000s]", "[1.5ns]"),
            pause.replace("[1.000s]", "[2026-01-01T00:00:00.000+0000]"),
            pause.replace("[1.000s]", "[2026-01-01T00:00:00.000+0000][1.000s][1234]"),
            pause.replace("[1.000s]", "[ 1.000s ]"),
            pause.replace("[1.000s]", "[1.000s\t]"),
            pause.replace("[1.000s]", "[]"),
            pause.replace("[1.000s]", "[1.000s"),
            pause.replace("[gc]", "[safepoint]"),
            pause.replace("[gc]", "[gc,start     ]"),
            pause.replace("[gc]", "[Gc]"),
            pause.replace("[info]", "[warning]"),
            pause.replace("[info]", "[inf0]"),
            pause.replace("] GC", "]GC"),
            pause.replace("] GC", "]  GC"),
            pause.replace("Young (Normal)", "Young(Normal)"),
            pause.replace("Young (Normal)", "Full"),
            pause.replace("Young (Normal)", "Degenerated GC (Mark)"),
            pause.replace("Young (Normal)", "Remark"),
            pause.replace("Pause Young", "Y: Pause Young"),
            pause.replace("(G1 Evacuation Pause)", "(G1 (nested) Pause)"),
            pause.replace(
                "(G1 Evacuation Pause)",
                "(G1 Evacuation Pause) (Evacuation Failure: Pinned)",
            ),
            pause.replace("(G1 Evacuation Pause)", "(unclosed"),
            pause.replace("(G1 Evacuation Pause)", "(G1 Évacuation)"),
            pause.replace(" 24M->3M(256M)", ""),
            pause.replace(" 24M->3M(256M)", " (G1 Evacuation Pause)"),
            pause.replace(" 2.345ms", ""),
            pause.replace(" 2.345ms", "  2.345ms"),
            pause.replace("2.345ms", "2.345ms "),
            format!("{pause}\t"),
            "[1.000s][info][gc] GC(1) Pause Young (Normal) (G1 Evacuation Pause)".into(),
            "[1.000s][info][gc] Pause".into(),
            "[1.000s][info][gc] Pause ".into(),
            "[1.000s][info][gc] Pause x".into(),
            "[".into(),
            // G1's region counts.
            "[1.000s][info][gc,heap] GC(1) Old regions: 12->30".into(),
            "[1.000s][info][gc,heap] GC(1) Humongous regions: 0->3".into(),
            "[1.000s][info][gc,heap] GC(1) Old regions: 12->30(40)".into(),
            "[1.000s][info][gc,heap] GC(1) Old regions: 12-> 30".into(),
            "[1.000s][info][gc,heap] GC(1) Old regions: 12->30 ".into(),
            "[1.000s][info][gc,heap] GC(1) Old regions: 1.5->30".into(),
            "[1.000s][info][gc,heap] GC(1) Old regions: ->30".into(),
            "[1.000s][info][gc,heap] GC(1) Old regions: 12->".into(),
            "[1.000s][info][gc,heap] GC(1) Old regions: 1234567890123456->30".into(),
            "[1.000s][info][gc,heap] GC(1) Old regions: 123456789012345->30".into(),
            "[1.000s][info][gc,heap] GC(1) Humongous regions: x->3".into(),
            "[1.000s][info][gc,heap] GC(1) Humongous regions: 3".into(),
            "[1.000s][info][gc,heap] GC(1) Humongous regions:  0->3".into(),
            "[1796021929339ms][info][gc,heap] GC(1) Old regions: 12->30".into(),
            "[2026-01-01T00:00:00.000+0000][info][gc,heap] GC(1) Old regions: 12->30".into(),
            "[1.000s][info][safepoint] GC(1) Old regions: 12->30".into(),
            "[1.000s][info][gc,heap] Old regions: 12->30".into(),
            "[1.000s][info][gc,heap] GC(1) Y: Old regions: 12->30".into(),
            // The kept head's edges: the same head, then something else than ` A->B(C) Dms`.
            pause.replace("2.345ms", "2.345ms x"),
            pause.replace(" 2.345ms", "  2.345ms"),
            pause.replace("(256M) ", "(256M)x "),
            pause.replace("(256M) ", "(256M)"),
            pause.replace("(256M)", "(256M"),
            pause.replace("(256M)", "(256M))"),
            pause.replace("(256M)", "()"),
            pause.replace("2.345ms", "2.345s"),
            pause.replace("2.345ms", "2.345m"),
            pause.replace("2.345ms", "12.ms"),
            pause.replace("2.345ms", ".5ms"),
            pause.replace("2.345ms", "1234567890123456ms"),
            pause.replace("2.345ms", "1234567890.123456ms"),
            pause.replace("2.345ms", "123456789012345ms"),
            pause.replace("2.345ms", "69,637ms"),
            pause.replace("24M->3M", "24->3"),
            pause.replace("24M->3M", "24.5K->3.25k"),
            pause.replace("24M->3M", "24G->3T"),
            pause.replace("24M->3M", "24B->0B"),
            pause.replace("24M->3M", "24X->3M"),
            pause.replace("24M->3M", "24M-3M"),
            pause.replace("24M->3M", "24M->>3M"),
            pause.replace("24M->3M", "24M->3M->2M"),
            pause.replace("24M->3M", "12345678901234567890123M->3M"),
            pause.replace("24M->3M", "24.M->3M"),
            pause.replace(") 24M", ")\t24M"),
            pause.replace("(G1 Evacuation Pause) ", "(G1 Evacuation Pause) (Evacuation Failure) "),
            pause.replace("(G1 Evacuation Pause) ", ""),
            pause.replace("(G1 Evacuation Pause) ", "(G1 Evacuation Pause)  "),
            pause.replace("Pause)", "Pause) "),
            pause.replace("[1.000s]", "[1.000ms]"),
            pause.replace("[1.000s]", "[1.s]"),
            pause.replace("[1.000s]", "[1234567890123456s]"),
            pause.replace("[1.000s]", "[1796021929339ms][1.5s]"),
            pause.replace("[1.000s]", "[99999999999999ms][1.5s]"),
            pause.replace("[1.000s]", "[1.000s ]"),
            pause.replace("[1.000s]", "[1.000us]"),
            pause.replace("[1.000s]", "[1.000ns]"),
            pause.replace("[1.000s]", "[1000ms"),
            "[1.000s][info][gc] GC(1) Pause Young 24M->3M(256M) 2.345ms".into(),
            "[1.000s][info][gc] GC(1) Pause Young (Normal) 24M->3M(256M) 2.345ms".into(),
            "[1.000s][info][gc] GC(1) Pause Young 24M->3M(256M) 2.345ms".into(),
            "[1.000s][info][gc] GC(1) Pause Young (Normal) (G1 Evacuation Pause) 24M->3M(256M) 2.345ms".into(),
        ];
        // Each edge after the common line, so the reader holds its head.
        for e in &edges {
            lines.push(pause.as_bytes().to_vec());
            lines.push(e.as_bytes().to_vec());
        }
        let (mut taken, mut pauses, mut regions, mut unanchored) = (0, 0, 0, 0);
        // What each head token named: one token, one kind, subkind and cause.
        let mut named: std::collections::HashMap<u64, Vec<Option<Vec<u8>>>> = Default::default();
        let ac = crate::gc::scan::anchors();
        // One reader over every line in order, as a worker reads a block: its kept head
        // is the last pause's, so the lines after it are read through it.
        let mut reader = PauseReader::default();
        // Readers that read each line forward first (the line's end not known), then its
        // message (or the whole line when they gave up), in step with the first: they
        // keep the same heads on the same lines, their tokens their own.
        // One for each way the line ends (see below).
        let mut forwards: [PauseReader; 4] = Default::default();
        let mut tokens: [std::collections::HashMap<u64, u64>; 4] = Default::default();
        let mut read_whole = 0;
        for l in &lines {
            // As a worker sees it: inside a block, after other bytes.
            let mut buf = b"noise\n".to_vec();
            buf.extend_from_slice(l);
            let (start, end) = (6, buf.len());
            // Forward: the line ends in `\n`, `\r\n` or the block's end, a line after it (one
            // that closes a decoration left open, for the last).
            let mut forward_readings = Vec::new();
            for (w, tail) in [&b"\n"[..], b"\r\n", b"", b"\n] "].into_iter().enumerate() {
                let forward = &mut forwards[w];
                let mut ahead = buf.clone();
                ahead.extend_from_slice(tail);
                if !tail.is_empty() {
                    ahead.extend_from_slice(pause.as_bytes());
                }
                // The line as the block front end cuts it (one `\r` before its end trimmed).
                let le = memchr::memchr(b'\n', &ahead[start..]).map_or(ahead.len(), |i| start + i);
                let end_f = start + trim_cr(&ahead[start..le]).len();
                let mut read_f = Pre::Serial;
                let reading_f = match forward.read_forward(&ahead, start, &mut read_f) {
                    Forward::Line { end: e, next } => {
                        let what = String::from_utf8_lossy(l);
                        assert_eq!((e, next), (end_f, le + 1), "{what:?}");
                        read_whole += 1;
                        Some(Reading::Line)
                    }
                    Forward::Lead(lead) if ahead[start..le].is_ascii() => {
                        forward.read_message(&ahead, start, end_f, lead, &mut read_f)
                    }
                    Forward::Lead(_) => None,
                    Forward::GiveUp => forward.read(&ahead, start, end_f, &mut read_f),
                };
                // Compared where the line cut is the one read below.
                if end_f == end {
                    forward_readings.push((w, reading_f, read_f));
                }
            }
            let mut fast = Pre::Serial;
            let reading = reader.read(&buf, start, end, &mut fast);
            for (w, reading_f, mut read_f) in forward_readings {
                assert_eq!(reading_f, reading, "{:?}", String::from_utf8_lossy(l));
                if let (
                    Pre::Unified {
                        event: Some(SpanEvent::Pause { head: f, .. }),
                        ..
                    },
                    Pre::Unified {
                        event: Some(SpanEvent::Pause { head: g, .. }),
                        ..
                    },
                ) = (&mut read_f, &fast)
                {
                    // One token of one reader for one of the other.
                    assert_eq!(*tokens[w].entry(f.0).or_insert(g.0), g.0);
                    *f = *g;
                }
                if reading.is_some() {
                    assert_eq!(read_f, fast, "{:?}", String::from_utf8_lossy(l));
                }
            }
            match reading {
                Some(Reading::Line) => {}
                Some(Reading::NoAnchor) => {
                    // What the reader passes over, the anchor search does too.
                    assert!(
                        ac.find(&buf[start..end]).is_none(),
                        "{:?}",
                        String::from_utf8_lossy(l)
                    );
                    unanchored += 1;
                    continue;
                }
                None => continue,
            };
            {
                // The token aside (the general path gives none), the same reading.
                let mut fast = fast;
                if let Pre::Unified {
                    event:
                        Some(SpanEvent::Pause {
                            kind,
                            subkind,
                            cause,
                            head,
                            ..
                        }),
                    ..
                } = &mut fast
                {
                    let text = |s: Span| buf[s.start..s.end].to_vec();
                    let words = vec![Some(text(*kind)), subkind.map(text), cause.map(text)];
                    assert_ne!(*head, HeadToken::NONE);
                    let first = named.entry(head.0).or_insert_with(|| words.clone());
                    assert_eq!(*first, words, "{:?}", String::from_utf8_lossy(l));
                    *head = HeadToken::NONE;
                }
                let general = preparse_line(&buf, start, end);
                assert_eq!(fast, general, "{:?}", String::from_utf8_lossy(l));
                taken += 1;
                pauses += usize::from(matches!(
                    fast,
                    Pre::Unified {
                        event: Some(SpanEvent::Pause { .. }),
                        ..
                    }
                ));
                regions += usize::from(matches!(
                    fast,
                    Pre::Unified {
                        event: Some(SpanEvent::Plain(
                            Event::OldRegions { .. } | Event::HumongousRegions { .. }
                        )),
                        ..
                    }
                ));
            }
        }
        assert!(named.len() > 10, "{} head tokens", named.len());
        assert!(read_whole > 1000, "{read_whole} lines read forward whole");
        assert!(
            taken > 1000 && pauses > 1000 && regions > 100 && unanchored > 10,
            "{taken} lines taken, {pauses} pauses, {regions} region counts, \
             {unanchored} passed over"
        );
    }

    fn trim_cr_owned(l: &[u8]) -> Vec<u8> {
        l.strip_suffix(b"\r").unwrap_or(l).to_vec()
    }

    /// `decimal_at` as it was before its digits were read eight at a time: a byte loop.
    fn decimal_at_bytewise(b: &[u8], i: usize) -> Option<(f64, usize)> {
        let t = b.get(i..)?;
        let mut j = 0;
        let mut m = 0u64;
        while j < t.len() && t[j].is_ascii_digit() {
            m = m.wrapping_mul(10).wrapping_add(u64::from(t[j] - b'0'));
            j += 1;
        }
        let int_digits = j;
        if int_digits == 0 || int_digits > 15 {
            return None;
        }
        if j + 1 < t.len() && matches!(t[j], b'.' | b',') && t[j + 1].is_ascii_digit() {
            j += 1;
            let frac = j;
            while j < t.len() && t[j].is_ascii_digit() {
                m = m.wrapping_mul(10).wrapping_add(u64::from(t[j] - b'0'));
                j += 1;
            }
            let k = j - frac;
            if int_digits + k > 15 {
                return None;
            }
            return Some((m as f64 / POW10[k], i + j));
        }
        Some((m as f64, i + j))
    }

    /// Every run length 0 to 20 before and after a separator, each neighbouring byte kind
    /// (the digit check's edges `/`, `:`, a high byte), at each offset: the same value and
    /// end as the byte loop.
    #[test]
    fn digits_eight_at_a_time_read_what_the_byte_loop_read() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut digit = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            b'0' + (x % 10) as u8
        };
        let mut cases = 0;
        for int in 0..=20 {
            for frac in [
                None,
                Some(0),
                Some(1),
                Some(3),
                Some(7),
                Some(8),
                Some(9),
                Some(16),
            ] {
                for sep in [b'.', b','] {
                    for after in [&b""[..], b"/", b":", b"ms]", b"M->", &[0xC3, 0xA9][..]] {
                        let mut b: Vec<u8> = b"[x ".to_vec();
                        b.extend((0..int).map(|_| digit()));
                        if let Some(f) = frac {
                            b.push(sep);
                            b.extend((0..f).map(|_| digit()));
                        }
                        b.extend_from_slice(after);
                        for i in 0..b.len().min(6) {
                            assert_eq!(
                                decimal_at(&b, i),
                                decimal_at_bytewise(&b, i),
                                "{:?} at {i}",
                                String::from_utf8_lossy(&b)
                            );
                            cases += 1;
                        }
                    }
                }
            }
        }
        assert!(cases > 5000, "{cases}");
        for bytes in [
            &b"12345678"[..],
            b"00000000",
            b"99999999",
            b"1/345678",
            b"9:",
            b"x1234567",
        ]
        .iter()
        .map(|b| {
            let mut a = [0u8; 8];
            a[..b.len()].copy_from_slice(b);
            a
        }) {
            let n = bytes.iter().take_while(|c| c.is_ascii_digit()).count();
            let v = bytes[..n]
                .iter()
                .fold(0u64, |v, &c| v * 10 + u64::from(c - b'0'));
            assert_eq!(
                digits8(bytes),
                (v, n),
                "{:?}",
                String::from_utf8_lossy(&bytes)
            );
        }
    }

    /// Where `epoch_ms` takes a decoration, `quick_time` takes it the same way: epoch
    /// milliseconds, ending at the same place.
    #[test]
    fn epoch_stamps_are_what_quick_time_calls_epoch() {
        let mut taken = 0;
        for digits in ["1", "0", "9"] {
            for n in 1..=17 {
                for tail in ["ms]", "ms", "s]", ".5ms]", "ms][", "mss]", "]"] {
                    let token = format!("[{}{}{tail}", digits, "7".repeat(n - 1));
                    let b = token.as_bytes();
                    if let Some(next) = epoch_ms(b, 1) {
                        taken += 1;
                        let ((_, epoch), q_next) = quick_time(b, 1).expect("quick_time takes it");
                        assert!(epoch, "{token}");
                        assert_eq!(next, q_next, "{token}");
                    }
                }
            }
        }
        assert!(taken >= 6, "{taken}");
    }

    #[test]
    fn ascii_eight_bytes_at_a_time() {
        for n in 0..40 {
            let mut b = vec![b'a'; n];
            assert!(is_ascii(&b));
            for i in 0..n {
                b[i] = 0x80;
                assert!(!is_ascii(&b), "{n} {i}");
                b[i] = b'a';
            }
        }
    }
}

#[cfg(test)]
mod cost {
    /// The pause reader takes a millisecond-stamped G1 pause line every time; under
    /// `valgrind --tool=callgrind <test binary> --exact gc::pause_line::cost::one_line_many_times`
    /// it also counts what one line costs (~0.1 s of a CI run).
    #[test]
    fn one_line_many_times() {
        let line = b"[1796021927326ms][462ms] GC(0) Pause Young (Normal) (G1 Evacuation Pause) 12M->11M(256M) 69.637ms";
        let mut n = 0;
        let mut reader = super::PauseReader::default();
        let mut out = super::Pre::Serial;
        for _ in 0..100_000 {
            n += usize::from(
                reader
                    .read(std::hint::black_box(line), 0, line.len(), &mut out)
                    .is_some_and(|r| matches!(r, super::Reading::Line)),
            );
        }
        assert_eq!(n, 100_000);
    }
}
