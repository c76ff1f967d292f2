//! A JDK 8 event detached from the legacy assembler's buffers, so the assembler can be
//! handed back before the event is counted.

use super::event::{Collector, Event, HeapChange, PauseClass};

/// A legacy event detached from the assembler's buffers.
pub(super) struct OwnedEvent {
    pub(super) kind: u8,
    pub(super) s1: String,
    pub(super) s2: Option<String>,
    pub(super) s3: Option<String>,
    pub(super) class: PauseClass,
    pub(super) heap: Option<HeapChange>,
    pub(super) a: f64,
    pub(super) b: f64,
    pub(super) flag: bool,
    pub(super) collector: Option<Collector>,
    pub(super) failure: &'static str,
    pub(super) example: String,
}

impl OwnedEvent {
    pub(super) fn from(e: &Event<'_>) -> Self {
        let mut o = OwnedEvent {
            kind: 0,
            s1: String::new(),
            s2: None,
            s3: None,
            class: PauseClass::Other,
            heap: None,
            a: 0.0,
            b: 0.0,
            flag: false,
            collector: None,
            failure: "",
            example: String::new(),
        };
        match *e {
            Event::Collector(c) => {
                o.kind = 1;
                o.collector = Some(c);
            }
            Event::Jdk(v) => {
                o.kind = 2;
                o.s1 = v.to_string();
            }
            Event::MaxHeap(b) => {
                o.kind = 3;
                o.a = b;
            }
            Event::Pause {
                kind,
                subkind,
                cause,
                class,
                heap,
                ms,
                evacuation_failure,
            } => {
                o.kind = 4;
                o.s1 = kind.to_string();
                o.s2 = subkind.map(str::to_string);
                o.s3 = cause.map(str::to_string);
                o.class = class;
                o.heap = heap;
                o.a = ms;
                o.flag = evacuation_failure;
                o.example = format!(
                    "[{kind}{}{}] {}{:.3} ms",
                    subkind.map(|s| format!(" ({s})")).unwrap_or_default(),
                    cause.map(|s| format!(" ({s})")).unwrap_or_default(),
                    heap.map(|h| format!(
                        "{:.1}M->{:.1}M ",
                        h.before / 1048576.0,
                        h.after / 1048576.0
                    ))
                    .unwrap_or_default(),
                    ms
                );
            }
            Event::ConcurrentFailure(w) => {
                o.kind = 5;
                o.failure = w;
                o.example = w.to_string();
            }
            Event::OldGen {
                before,
                after,
                capacity,
            } => {
                o.kind = 6;
                o.a = before;
                o.b = after;
                o.heap = capacity.map(|c| HeapChange {
                    before,
                    after,
                    capacity: Some(c),
                    after_pct_of_max: None,
                });
            }
            Event::Tenuring { threshold, max } => {
                o.kind = 7;
                o.a = threshold as f64;
                o.b = max as f64;
            }
            Event::OutOfMemory => {
                o.kind = 8;
                o.example = "OutOfMemoryError".into();
            }
            _ => o.kind = 0,
        }
        o
    }

    pub(super) fn as_event(&self) -> Event<'_> {
        match self.kind {
            1 => Event::Collector(self.collector.unwrap_or(Collector::G1)),
            2 => Event::Jdk(&self.s1),
            3 => Event::MaxHeap(self.a),
            4 => Event::Pause {
                kind: &self.s1,
                subkind: self.s2.as_deref(),
                cause: self.s3.as_deref(),
                class: self.class,
                heap: self.heap,
                ms: self.a,
                evacuation_failure: self.flag,
            },
            5 => Event::ConcurrentFailure(self.failure),
            6 => Event::OldGen {
                before: self.a,
                after: self.b,
                capacity: self.heap.and_then(|h| h.capacity),
            },
            7 => Event::Tenuring {
                threshold: self.a as u32,
                max: self.b as u32,
            },
            8 => Event::OutOfMemory,
            _ => Event::AllocationStallsCounted(0),
        }
    }
}
