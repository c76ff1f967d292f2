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

use crate::engine::fast_hash::FastMap;

use super::analysis::SocketAcc;
use super::handler::Handler;
use super::reader::{Chunk, Class, Decoder, EventPos, Events, Lite};
use super::socket_fields::{socket_event, SocketFields, SOCKET_SLOTS};
use super::socket_memo::SocketKey;

/// Socket keys counted apart before giving up (the events are then read one by one
/// into the report): a recording's socket events come from a handful of threads and
/// addresses, and a key is looked for among those seen.
const MAX_KEYS: usize = 64;

/// Events by type: count and bytes, and what reads them. One look-up an event, and
/// none for a run of the same type.
#[derive(Default)]
pub(super) struct TypeTable<'a, 'c> {
    index: FastMap<i64, usize>,
    /// In order of first appearance.
    pub slots: Vec<TypeSlot<'a, 'c>>,
    last: Option<(i64, usize)>,
}

/// One event type, as a chunk's reader meets it.
pub(super) struct TypeSlot<'a, 'c> {
    pub id: i64,
    pub count: u64,
    pub bytes: u64,
    pub handler: Option<(Handler, &'c Class)>,
    pub socket: Option<&'a SocketFields>,
}

impl<'a, 'c> TypeTable<'a, 'c> {
    /// The slot of events of `type_id`, made on first use with what `r` has for it.
    #[inline]
    pub fn slot(&mut self, type_id: i64, r: &Readers<'a, 'c>) -> &mut TypeSlot<'a, 'c> {
        let at = match self.last {
            Some((id, at)) if id == type_id => at,
            _ => {
                let slots = &mut self.slots;
                let at = *self.index.entry(type_id).or_insert_with(|| {
                    slots.push(TypeSlot {
                        id: type_id,
                        count: 0,
                        bytes: 0,
                        handler: r.handlers.get(&type_id).copied(),
                        socket: r.sockets.get(&type_id),
                    });
                    slots.len() - 1
                });
                self.last = Some((type_id, at));
                at
            }
        };
        &mut self.slots[at]
    }
}

/// What was read of a part of a chunk.
#[derive(Default)]
pub(super) struct Part<'a, 'c> {
    /// Events by type.
    pub types: TypeTable<'a, 'c>,
    /// Socket events read in place, by their key.
    pub sockets: Vec<(SocketKey<'c>, SocketAcc)>,
    /// The other events the report reads, in order.
    pub others: Vec<EventPos>,
}

/// What reads a chunk's events: the report's handlers and socket fields by type id.
#[derive(Clone, Copy)]
pub(super) struct Readers<'a, 'c> {
    pub chunk: &'c Chunk,
    pub dec: &'a Decoder<'c>,
    pub handlers: &'a FastMap<i64, (Handler, &'c Class)>,
    pub sockets: &'a FastMap<i64, SocketFields>,
}

/// The events of `events`; `None` when they have more socket keys than [`MAX_KEYS`].
pub(super) fn read<'a, 'c>(r: Readers<'a, 'c>, events: Events<'c>) -> Option<Part<'a, 'c>> {
    let chunk = r.chunk;
    let mut part = Part::default();
    // The key that matched last, per operation: reads and writes interleave.
    let mut recent = [0usize; 2];
    for ev in events {
        let t = part.types.slot(ev.type_id, &r);
        t.count += 1;
        t.bytes += ev.size as u64;
        let (Some((hd, class)), socket) = (t.handler, t.socket) else {
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
