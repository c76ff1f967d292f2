//! The worker's part of the block front end ([`super::blocks`]): find a block's anchored
//! lines (the lines [`scan`](super::scan) hands out in anchored mode) and do the part of
//! their handling that depends on the line alone: the UTF-8 check, the decorations, the
//! `GC(N)` id, the message's event and the uptime. What depends on the analyzer's state
//! (the clock chosen, the tables, every count) stays on the analyzer's thread. A line the
//! worker does not take the common way (a shipper's prefix, no decorations, not UTF-8) is
//! marked for the analyzer's own line path. Strings cross threads as spans into the block.

use aho_corasick::{AhoCorasick, Input};

use super::pause_line::{Forward, PauseReader, Reading};
use super::pre_line::{Pre, PreLine, SpanEvent};
use super::scan::{trim_cr, ANCHORS};
use crate::engine::blocks::chunk_threads::Spare;
use crate::engine::blocks::line_blocks::LineBlock;
use crate::engine::blocks::BlockParser;
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

/// A block and what the worker found in it.
pub(crate) struct Parsed {
    pub(crate) block: LineBlock,
    /// The worker read `buf[..covered]` (a line start, or the block's end): a block of
    /// very many anchored lines is read by the analyzer's thread past that, so the
    /// results in flight stay bounded ([`MAX_PRE_LINES`]).
    pub(crate) covered: usize,
    /// Its anchored lines up to `covered`, in order.
    pub(crate) pre: Vec<PreLine>,
}

/// The GC log's part of the block front end's parsing threads: a block's anchored lines
/// found with the anchors' automaton and pre-parsed ([`preparse_block`]).
pub(crate) struct Preparse<'a> {
    pub(crate) ac: &'a AhoCorasick,
}

impl BlockParser for Preparse<'_> {
    /// Nothing kept from block to block.
    type Worker = ();
    type Room = Vec<PreLine>;
    type Parsed = Parsed;

    #[inline]
    fn parse(&self, _: &mut (), block: LineBlock, pre: Vec<PreLine>) -> Parsed {
        preparse_block(block, self.ac, pre)
    }

    #[inline]
    fn block(p: &Parsed) -> &LineBlock {
        &p.block
    }

    #[inline]
    fn into_spare(p: Parsed) -> Spare<Vec<PreLine>> {
        (p.block.buf, p.pre)
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
pub(crate) fn preparse_block(block: LineBlock, ac: &AhoCorasick, mut pre: Vec<PreLine>) -> Parsed {
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
