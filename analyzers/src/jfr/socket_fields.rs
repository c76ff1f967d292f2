//! A socket event read in place: the fields the report reads, picked by a plan made
//! once per class, and turned into the key of its accumulators and its figures.

use super::analysis::SocketOp;
use super::reader::{Chunk, Class, Decoder, Lite, Pick};
use super::socket_memo::SocketKey;

/// How a socket event class is read: the fields the report reads, into the slots below.
pub(super) struct SocketFields {
    /// See [`Decoder::pick_plan`]; the other fields are skipped.
    pub plan: Vec<Pick>,
}

/// The slots of [`SocketFields`]: where each field the report reads goes.
const THREAD: usize = 0;
const BYTES: usize = 1;
const START: usize = 2;
const DURATION: usize = 3;
const ADDRESS: usize = 4;
const HOST: usize = 5;
const PORT: usize = 6;
pub(super) const SOCKET_SLOTS: usize = 7;

impl SocketFields {
    pub(super) fn of(class: &Class, op: SocketOp, dec: &Decoder<'_>, compressed: bool) -> Self {
        let mut wanted = [None; SOCKET_SLOTS];
        wanted[THREAD] = class.field("eventThread");
        wanted[BYTES] = class.field(match op {
            SocketOp::Read => "bytesRead",
            SocketOp::Write => "bytesWritten",
        });
        wanted[START] = class.field("startTime");
        wanted[DURATION] = class.field("duration");
        wanted[ADDRESS] = class.field("address");
        wanted[HOST] = class.field("host");
        wanted[PORT] = class.field("port");
        SocketFields {
            plan: dec.pick_plan(class, &wanted, compressed),
        }
    }
}

/// A socket event read in place: the key of its slots and its figures (bytes, start
/// and duration in nanoseconds), as the full path reads them; `None` when a field is
/// `Lite::Other` (the event is then decoded the full way).
#[inline(always)]
pub(super) fn socket_event<'c>(
    chunk: &'c Chunk,
    op: SocketOp,
    lite: &[Lite<'c>; SOCKET_SLOTS],
) -> Option<(SocketKey<'c>, i64, i64, i64)> {
    let [thread, bytes, start, dur, address, host, port] = *lite;
    if lite.iter().any(|l| matches!(l, Lite::Other)) {
        return None;
    }
    let h = &chunk.header;
    let key = SocketKey {
        op,
        thread,
        address,
        host,
        port,
    };
    let bytes = lite_i64(chunk, bytes).unwrap_or(0);
    let start = lite_i64(chunk, start)
        .map(|t| h.ticks_to_nanos(t))
        .unwrap_or(h.start_nanos);
    let dur = lite_i64(chunk, dur)
        .map(|d| h.ticks_to_duration(d))
        .unwrap_or(0);
    Some((key, bytes, start, dur))
}

/// A number field as the full path reads it (`resolve`, then `as_i64`).
pub(super) fn lite_i64(chunk: &Chunk, l: Lite<'_>) -> Option<i64> {
    match l {
        Lite::Int(v) => Some(v),
        Lite::Float(v) => Some(v as i64),
        Lite::Ref(c, k) => chunk.resolve_key(c, k).as_i64(),
        _ => None,
    }
}

/// A string field as the full path reads it (`resolve`, then `Chunk::str`).
pub(super) fn lite_str<'c>(chunk: &'c Chunk, l: Lite<'c>) -> Option<&'c str> {
    match l {
        Lite::Str(s) => Some(s),
        Lite::Ref(c, k) => chunk.str(chunk.resolve_key(c, k)),
        _ => None,
    }
}
