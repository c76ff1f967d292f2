//! The common unified line read in one pass over its bytes: decorations, `GC(N)`, and a
//! `Pause …` message (or G1's `Old regions: A->B` and `Humongous regions: A->B`) (`[0.123s][info][gc] GC(12) Pause Young (Normal) (G1 Evacuation
//! Pause) 24M->3M(256M) 2.345ms`), or the same pause's `gc,start` line without a
//! duration. A dense `-Xlog:gc` log is nothing else, and the general path
//! ([`unified::split_decorations`], [`unified::parse_message`]) spent far more on each
//! (docs/perf.md). Only what this parser can decide exactly as the general one does
//! is taken (the test `the_pause_line_parser_agrees_with_the_general_one` holds it to
//! that on every fixture line); anything else (other numbers' forms, a heap change of
//! another shape, a line without uptime, …) is `None`, and the general path reads it.
//!
//! A log repeats a few pause heads (`Pause Young (Normal) (G1 Evacuation Pause)`): the
//! last few heads split are kept with their parts, and a line whose head is one of them
//! followed by ` A->B(C) Dms` is read by comparing the head and parsing the four numbers
//! in one pass (splitting a head from its end cost more: docs/perf.md).
//!
//! The decorations and `GC(N)` before the message are read by [`super::pause_lead`], the
//! numbers by [`super::pause_numbers`].

use super::event::{fast_decimal, Collector, Event, HeapChange};
use super::pause_lead::{lead, Lead, Stop};
use super::pause_numbers::{
    heap_and_ms, heap_and_ms_to_line_end, heap_change, integer_at, is_ascii,
};
use super::pre_line::{HeadToken, Pre, Span, SpanEvent};
use super::unified::{self, PauseParts};
use crate::engine::bytes_eq::same_bytes;

/// Pause heads kept: a G1 log alternates `Normal` and `Concurrent Start` young pauses,
/// each for `G1 Evacuation Pause` or `G1 Preventive Collection`, then `Remark`, `Full`.
const HEADS_KEPT: usize = 8;

/// What [`PauseReader::read`] made of a line it takes.
#[derive(Debug, PartialEq)]
pub(crate) enum Reading {
    /// The line as the general path reads it (the line holds an anchor), written to the
    /// caller's [`Pre`]: in place, as the ~180-byte result was copied twice on its way
    /// to the block's list (`memmove`'s share: docs/perf.md).
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
    /// end found on the way (a line scan before it cost more: docs/perf.md). Every
    /// byte of such a line was compared with a decoration's form, a kept head or a
    /// number's: it is ASCII. Otherwise what was read before the
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
