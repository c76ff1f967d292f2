//! A part of a chunk's events, read apart: a large chunk is read in two parts, one on
//! each core. What adds up in any order is counted within the part and merged after:
//! events by type, and socket events by the key of their accumulators (sizes, bytes,
//! time, first and last), which also spares each socket event the look-up of the
//! report's accumulators. Every other event the report reads is handed back by
//! position, in order, and read when the part is merged: their order matters (the
//! last JVM information wins), and they are few.
//!
//! A socket recording is nearly all socket events; the report is the same however a
//! chunk is cut (a test reads every recording cut at several places).

use crate::fast_hash::FastMap;

use super::analysis::SocketAcc;
use super::binary::{socket_event, Handler, SocketFields, SOCKET_SLOTS};
use super::reader::{Chunk, Class, Decoder, EventPos, Events, Lite};
use super::socket_memo::SocketKey;

/// Socket keys counted apart before giving up (the events are then read one by one
/// into the report): a recording's socket events come from a handful of threads and
/// addresses, and a key is looked for among those seen.
const MAX_KEYS: usize = 64;

/// What was read of a part of a chunk.
#[derive(Default)]
pub(super) struct Part<'c> {
    /// Per event type, in order of first appearance: type id, count, bytes.
    pub types: Vec<(i64, u64, u64)>,
    /// Socket events read in place, by their key.
    pub sockets: Vec<(SocketKey<'c>, SocketAcc)>,
    /// The other events the report reads, in order.
    pub others: Vec<EventPos>,
}

/// What reads events of one type: the report's handler, and how socket events are read.
type Kind<'a, 'c> = (Option<(Handler, &'c Class)>, Option<&'a SocketFields>);

/// What reads a chunk's events: the report's handlers and socket fields by type id.
#[derive(Clone, Copy)]
pub(super) struct Readers<'a, 'c> {
    pub chunk: &'c Chunk,
    pub dec: &'a Decoder<'c>,
    pub handlers: &'a FastMap<i64, (Handler, &'c Class)>,
    pub sockets: &'a FastMap<i64, SocketFields>,
}

/// The events of `events`; `None` when they have more socket keys than [`MAX_KEYS`].
pub(super) fn read<'c>(r: Readers<'_, 'c>, events: Events<'c>) -> Option<Part<'c>> {
    let chunk = r.chunk;
    let mut part = Part::default();
    // Per type id: its index in `part.types` and what reads it; none looked up again
    // for a run of the same type.
    let mut types: FastMap<i64, usize> = FastMap::default();
    let mut kinds: Vec<Kind<'_, 'c>> = Vec::new();
    let mut last: Option<(i64, usize)> = None;
    // The key that matched last, per operation: reads and writes interleave.
    let mut recent = [0usize; 2];
    for ev in events {
        let at = match last {
            Some((id, at)) if id == ev.type_id => at,
            _ => {
                let at = *types.entry(ev.type_id).or_insert_with(|| {
                    part.types.push((ev.type_id, 0, 0));
                    kinds.push((
                        r.handlers.get(&ev.type_id).copied(),
                        r.sockets.get(&ev.type_id),
                    ));
                    kinds.len() - 1
                });
                last = Some((ev.type_id, at));
                at
            }
        };
        let t = &mut part.types[at];
        t.1 += 1;
        t.2 += ev.size as u64;
        let (Some((hd, class)), socket) = kinds[at] else {
            continue;
        };
        let (Handler::Socket(op), Some(sf)) = (hd, socket) else {
            part.others.push(ev);
            continue;
        };
        let mut lite = [Lite::Null; SOCKET_SLOTS];
        let mut cur = chunk.cursor(&ev);
        let read = r
            .dec
            .event_pick(&mut cur, class, &sf.plan, &mut lite)
            .ok()
            .and_then(|()| socket_event(chunk, op, &lite));
        let Some((key, bytes, start, dur)) = read else {
            // Decoded the full way when merged (an inline object, a string not in UTF-8).
            part.others.push(ev);
            continue;
        };
        let i = key_index(&mut part.sockets, &mut recent[op as usize], &key)?;
        part.sockets[i].1.add(bytes, start, dur);
    }
    Some(part)
}

/// Where `key` is counted in `keys` (added when new); `None` past [`MAX_KEYS`].
#[inline]
fn key_index<'c>(
    keys: &mut Vec<(SocketKey<'c>, SocketAcc)>,
    recent: &mut usize,
    key: &SocketKey<'c>,
) -> Option<usize> {
    if keys.get(*recent).is_some_and(|(k, _)| k.same(key)) {
        return Some(*recent);
    }
    let i = match keys.iter().position(|(k, _)| k.same(key)) {
        Some(i) => i,
        None if keys.len() < MAX_KEYS => {
            keys.push((*key, SocketAcc::default()));
            keys.len() - 1
        }
        None => return None,
    };
    *recent = i;
    Some(i)
}
