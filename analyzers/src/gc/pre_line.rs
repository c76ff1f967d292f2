//! A block's anchored lines as a worker hands them to the analyzer's thread
//! ([`super::preparse`] makes them, [`super::pause_line`] among it; the analyzer reads
//! them in [`super::lines`]): what the line alone says, its strings as spans into the
//! block, so nothing is allocated per line.

use super::event::{Event, HeapChange, PauseClass};

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
/// resolution up by the token instead of comparing the words (docs/perf.md).
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
            Event::OldGen {
                before,
                after,
                capacity,
            } => SpanEvent::Plain(Event::OldGen {
                before,
                after,
                capacity,
            }),
            Event::OldRegions { before, after } => {
                SpanEvent::Plain(Event::OldRegions { before, after })
            }
            Event::HumongousRegions { after } => {
                SpanEvent::Plain(Event::HumongousRegions { after })
            }
            Event::Tenuring { threshold, max } => {
                SpanEvent::Plain(Event::Tenuring { threshold, max })
            }
            Event::OutOfMemory => SpanEvent::Plain(Event::OutOfMemory),
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
