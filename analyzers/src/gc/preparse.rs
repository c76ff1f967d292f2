//! The worker's part of the block front end ([`super::blocks`]): find a block's anchored
//! lines (the lines [`scan`](super::scan) hands out in anchored mode) and do the part of
//! their handling that depends on the line alone: the UTF-8 check, the decorations, the
//! `GC(N)` id, the message's event and the uptime. What depends on the analyzer's state
//! (the clock chosen, the tables, every count) stays on the analyzer's thread. A line the
//! worker does not take the common way (a shipper's prefix, no decorations, not UTF-8) is
//! marked for the analyzer's own line path. Strings cross threads as spans into the block.

use aho_corasick::{AhoCorasick, Input};

use super::blocks::{Block, Parsed};
use super::event::{Event, HeapChange, PauseClass};
use super::pause_line::{Forward, PauseReader, Reading};
use super::scan::{trim_cr, ANCHORS};
use crate::engine::bytes_eq::line_end_and_ascii;

/// Anchored lines pre-parsed per block, at most: a block of 1 MiB holds ~10,000 lines of
/// a dense `-Xlog:gc` log, but up to 260,000 of a text made of short anchored lines, whose
/// results (~230 bytes a line) would make memory grow with the blocks in flight.
pub(crate) const MAX_PRE_LINES: usize = 16_384;

/// The anchors of the lines the pause reader takes: `Pause `, `To-space exhausted`,
/// `Using G1`, `Old regions: ` and `Humongous regions: ` (checked below).
const READER_ANCHORS: [usize; 5] = [0, 1, 2, 15, 16];
const _: () = {
    let want: [&[u8]; 5] = [
        b"Pause ",
        b"To-space exhausted",
        b"Using G1",
        b"Old regions: ",
        b"Humongous regions: ",
    ];
    let mut i = 0;
    while i < want.len() {
        let a = ANCHORS[READER_ANCHORS[i]].as_bytes();
        assert!(a.len() == want[i].len());
        let mut j = 0;
        while j < a.len() {
            assert!(a[j] == want[i][j]);
            j += 1;
        }
        i += 1;
    }
};
use super::unified;

/// A byte range in a block: `start..end`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Span {
    pub(crate) start: usize,
    pub(crate) end: usize,
}

/// One anchored line of a block.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PreLine {
    /// Lines before it in the block.
    pub(crate) index: u64,
    /// The line (`\r` trimmed) is `buf[start..end]`; the next line starts at `next`.
    pub(crate) start: usize,
    pub(crate) end: usize,
    pub(crate) next: usize,
    pub(crate) pre: Pre,
}

/// What the worker made of a line.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Pre {
    /// Not the common form: the analyzer reads the line itself.
    Serial,
    /// A unified line of other tags (`safepoint`, `os`, …): nothing to count.
    OtherTags,
    /// A decorated unified line of the `gc` tags.
    Unified {
        id: Option<u64>,
        event: Option<SpanEvent>,
        /// The line's uptime (when it has an event).
        uptime: Option<f64>,
        /// Its wall time, parsed only when it has no uptime (the clock chosen then).
        wall: Option<f64>,
    },
}

/// An [`Event`] with its strings as spans.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum SpanEvent {
    /// An event without borrowed strings.
    Plain(Event<'static>),
    Jdk(Span),
    Pause {
        kind: Span,
        subkind: Option<Span>,
        cause: Option<Span>,
        class: PauseClass,
        heap: Option<HeapChange>,
        ms: f64,
        evacuation_failure: bool,
        /// The pause reader's token for the head the words were split from
        /// ([`HeadToken`]), or `HeadToken::NONE`.
        head: HeadToken,
    },
}

/// Names one head a worker's pause reader split (unique in the process): the same
/// token, the same kind, subkind and cause, so the analyzer's thread can look the kind's
/// resolution up by the token instead of comparing the words (~110 instructions a pause).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct HeadToken(pub(crate) u64);

impl HeadToken {
    pub(crate) const NONE: HeadToken = HeadToken(0);

    /// A token not given before.
    pub(crate) fn fresh() -> HeadToken {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        HeadToken(NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
    }
}

fn span_of(buf: &[u8], s: &str) -> Span {
    let start = s.as_ptr() as usize - buf.as_ptr() as usize;
    Span {
        start,
        end: start + s.len(),
    }
}

impl SpanEvent {
    /// `e`, whose strings all lie in `buf`.
    pub(crate) fn of(buf: &[u8], e: Event<'_>) -> SpanEvent {
        match e {
            Event::Jdk(v) => SpanEvent::Jdk(span_of(buf, v)),
            Event::Pause {
                kind,
                subkind,
                cause,
                class,
                heap,
                ms,
                evacuation_failure,
            } => SpanEvent::Pause {
                kind: span_of(buf, kind),
                subkind: subkind.map(|s| span_of(buf, s)),
                cause: cause.map(|s| span_of(buf, s)),
                class,
                heap,
                ms,
                evacuation_failure,
                head: HeadToken::NONE,
            },
            Event::Collector(c) => SpanEvent::Plain(Event::Collector(c)),
            Event::MaxHeap(b) => SpanEvent::Plain(Event::MaxHeap(b)),
            Event::RegionSize(b) => SpanEvent::Plain(Event::RegionSize(b)),
            Event::ToSpaceExhausted => SpanEvent::Plain(Event::ToSpaceExhausted),
            Event::Cycle { young, heap } => SpanEvent::Plain(Event::Cycle { young, heap }),
            Event::AllocationStall { ms } => SpanEvent::Plain(Event::AllocationStall { ms }),
            Event::AllocationStallsCounted(n) => {
                SpanEvent::Plain(Event::AllocationStallsCounted(n))
            }
            Event::ConcurrentFailure(w) => SpanEvent::Plain(Event::ConcurrentFailure(w)),
            Event::OldGen { before, after } => SpanEvent::Plain(Event::OldGen { before, after }),
            Event::OldRegions { before, after } => {
                SpanEvent::Plain(Event::OldRegions { before, after })
            }
            Event::HumongousRegions { after } => {
                SpanEvent::Plain(Event::HumongousRegions { after })
            }
            Event::Tenuring { threshold, max } => {
                SpanEvent::Plain(Event::Tenuring { threshold, max })
            }
        }
    }

    /// The event, its strings read back from `buf` (the worker took each from a `&str`,
    /// so each span is UTF-8 on char boundaries).
    pub(crate) fn event<'b>(&self, buf: &'b [u8]) -> Event<'b> {
        let text = |s: Span| std::str::from_utf8(&buf[s.start..s.end]).unwrap_or("");
        match self {
            SpanEvent::Plain(e) => e.clone(),
            SpanEvent::Jdk(s) => Event::Jdk(text(*s)),
            SpanEvent::Pause {
                kind,
                subkind,
                cause,
                class,
                heap,
                ms,
                evacuation_failure,
                ..
            } => Event::Pause {
                kind: text(*kind),
                subkind: subkind.map(text),
                cause: cause.map(text),
                class: *class,
                heap: *heap,
                ms: *ms,
                evacuation_failure: *evacuation_failure,
            },
        }
    }
}

/// What a line `buf[start..end]` says, as far as the line alone tells. The analyzer's
/// [`jvm_line`](super::analyzer::Analyzer) path, for a line of the common form, in
/// anchored mode (the format known, not JDK 8).
pub(crate) fn preparse_line(buf: &[u8], start: usize, end: usize) -> Pre {
    let bytes = &buf[start..end];
    // Unified lines start with their decorations; anything else (a shipper's prefix, an
    // undecorated or JDK 8 line) takes the analyzer's own path.
    if bytes.first() != Some(&b'[') {
        return Pre::Serial;
    }
    let Ok(line) = std::str::from_utf8(bytes) else {
        return Pre::Serial;
    };
    let (d, message) = unified::split_decorations(line);
    if !d.decorated {
        return Pre::Serial;
    }
    if let Some(tags) = d.tags {
        if !tags.starts_with("gc") {
            return Pre::OtherTags;
        }
    }
    let (id, message) = unified::split_gc_id(message);
    let Some(event) = unified::parse_message(message) else {
        return Pre::Unified {
            id,
            event: None,
            uptime: None,
            wall: None,
        };
    };
    let uptime = d.uptime_s();
    let wall = if uptime.is_none() { d.wall_s() } else { None };
    Pre::Unified {
        id,
        event: Some(SpanEvent::of(buf, event)),
        uptime,
        wall,
    }
}

/// A new last line of `pre` (`index`, `start..end`, the next line at `next`), its reading
/// to be written in place: the reading it returns.
#[inline(always)]
fn next_place(
    pre: &mut Vec<PreLine>,
    index: u64,
    start: usize,
    end: usize,
    next: usize,
) -> &mut Pre {
    pre.push(PreLine {
        index,
        start,
        end,
        next,
        pre: Pre::Serial,
    });
    &mut pre.last_mut().expect("a line was just added").pre
}

/// Find and pre-parse the anchored lines of `block` (`pre` is a spare vector, reused).
pub(crate) fn preparse_block(block: Block, ac: &AhoCorasick, mut pre: Vec<PreLine>) -> Parsed {
    pre.clear();
    if block.long_head {
        let covered = block.len;
        return Parsed {
            block,
            covered,
            pre,
        };
    }
    let region = &block.buf[..block.len];
    let len = region.len();
    let mut pos = 0;
    let mut index = 0u64;
    let mut reader = PauseReader::default();
    // The line after one the pause reader took is tried by it first: in a dense log it
    // is one it takes too, and the reader tells so for less than the anchor search
    // costs. A line it takes holds an anchor, and one it passes over holds none, so the
    // lines found are the same. A try that fails (a `gc*` log's next line is a phase)
    // stops the tries until the search finds a line the reader takes right after the
    // line before it.
    let mut after_taken = false;
    let mut tries = true;
    while pos < len {
        if pre.len() >= MAX_PRE_LINES {
            break;
        }
        if after_taken && tries {
            // Read into the list's next place, taken back if the reader does not take
            // the line; a pause read forward tells where the line ends on the way.
            let slot = next_place(&mut pre, index, pos, pos, pos);
            let lead = match reader.read_forward(region, pos, slot) {
                Forward::Line { end, next } => {
                    let l = pre.last_mut().expect("a line was just added");
                    (l.end, l.next) = (end, next);
                    index += 1;
                    pos = next;
                    continue;
                }
                Forward::Lead(l) => Some(l),
                Forward::GiveUp => None,
            };
            let (le, ascii) = line_end_and_ascii(region, pos);
            let end = pos + trim_cr(&region[pos..le]).len();
            if ascii {
                let l = pre.last_mut().expect("a line was just added");
                (l.end, l.next) = (end, le + 1);
                let slot = &mut l.pre;
                let reading = match lead {
                    Some(lead) => reader.read_message(region, pos, end, lead, slot),
                    None => reader.read_ascii(region, pos, end, slot),
                };
                match reading {
                    Some(Reading::Line) if matches!(slot, Pre::Unified { .. }) => {
                        index += 1;
                        pos = le + 1;
                        continue;
                    }
                    Some(Reading::NoAnchor) => {
                        pre.pop();
                        index += 1;
                        pos = le + 1;
                        continue;
                    }
                    _ => {
                        pre.pop();
                        tries = false;
                    }
                }
            } else {
                pre.pop();
                tries = false;
            }
        }
        let Some(m) = ac.find(Input::new(region).span(pos..len)) else {
            pos = len;
            break;
        };
        let ls = memchr::memrchr(b'\n', &region[pos..m.start()]).map_or(pos, |i| pos + i + 1);
        index += memchr::memchr_iter(b'\n', &region[pos..ls]).count() as u64;
        let le = memchr::memchr(b'\n', &region[m.end()..]).map_or(len, |i| m.end() + i);
        let end = ls + trim_cr(&region[ls..le]).len();
        // A line the pause reader takes has one of its anchors first (decorations hold
        // none): other lines go to the general path directly.
        let anchor = m.pattern().as_usize();
        let slot = next_place(&mut pre, index, ls, end, le + 1);
        let taken = READER_ANCHORS.contains(&anchor)
            && matches!(reader.read(region, ls, end, slot), Some(Reading::Line));
        if !taken {
            *slot = preparse_line(region, ls, end);
        }
        after_taken = taken && matches!(slot, Pre::Unified { .. });
        tries |= after_taken && ls == pos;
        index += 1;
        pos = le + 1;
    }
    Parsed {
        covered: pos.min(len),
        block,
        pre,
    }
}
