//! One chunk, read whole: the walk of its events by their size fields, its metadata,
//! and its constant pools, resolved on demand.

use super::cursor::{Cursor, DResult, DecodeError};
use super::header::{ChunkHeader, HEADER_SIZE};
use super::metadata::Metadata;
use super::problem::ChunkProblem;
use super::value::{Decoder, Value};
use crate::engine::fast_hash::FastMap;
use crate::jfr::chunk_bytes::ChunkBytes;
use std::sync::OnceLock;

/// Type id of the metadata event.
pub const METADATA_TYPE: i64 = 0;
/// Type id of the checkpoint (constant pool) event.
pub const CHECKPOINT_TYPE: i64 = 1;

/// How many marks a chunk has at most (see [`Chunk::event_near`]), and their least spacing.
const MARKS: usize = 64;
const MARK_MIN_BYTES: usize = 4096;

/// Where one event sits in its chunk.
#[derive(Debug, Clone, Copy)]
pub struct EventPos {
    /// Offset of the event's size field within the chunk.
    pub offset: usize,
    pub size: usize,
    pub type_id: i64,
    /// Offset of the first field (after size and type id).
    pub body: usize,
}

/// A constant-pool entry: where its value lies in the chunk, decoded the first time it is
/// resolved. A report resolves few of a chunk's entries (the threads and addresses of its
/// events, the stacks of its samples); decoding every entry up front, allocations and all,
/// cost more than the report's reading (docs/perf.md).
pub struct PoolEntry {
    class: i64,
    /// Offset of the value in the chunk, and the end of its checkpoint event.
    at: usize,
    end: usize,
    value: OnceLock<Value>,
}

/// One chunk, read whole: header, bytes, metadata and constant pools.
pub struct Chunk {
    pub header: ChunkHeader,
    pub data: ChunkBytes,
    /// Offset of the chunk within the input.
    pub file_offset: u64,
    pub metadata: Metadata,
    pub has_metadata: bool,
    /// Constant pools: class id → key → entry (see [`resolve`](Self::resolve)).
    pub pools: FastMap<i64, FastMap<i64, PoolEntry>>,
    /// Where the walk of the events stopped: every event before this offset is complete
    /// (see [`events`](Self::events)).
    events_end: usize,
    /// The offset of the first event at or after each `mark_bytes` of the events (where
    /// a reader can start in the middle without walking the events before).
    marks: Vec<usize>,
    mark_bytes: usize,
    pub problems: Vec<ChunkProblem>,
    /// What a missing value resolves to.
    null: Value,
}

/// The event whose size field is at `pos`, if it fits in `data` (see [`event_at`]).
#[inline(always)]
fn event_fits(data: &[u8], pos: usize, compressed: bool) -> Option<EventPos> {
    let mut c = Cursor::new(data, pos, compressed);
    let size = c.int().ok()?;
    let type_id = c.long().ok()?;
    let size_ok = size > 0 && (size as usize) >= c.pos - pos;
    if !size_ok || pos + size as usize > data.len() {
        return None;
    }
    Some(EventPos {
        offset: pos,
        size: size as usize,
        type_id,
        body: c.pos,
    })
}

/// The event whose size field is at `pos`, or why it does not fit in `data`. The reason
/// is worked out only when there is one: the walk of every event takes the short way.
#[inline(always)]
fn event_at(data: &[u8], pos: usize, compressed: bool) -> Result<EventPos, ChunkProblem> {
    match event_fits(data, pos, compressed) {
        Some(ev) => Ok(ev),
        None => event_misfit(data, pos, compressed),
    }
}

#[cold]
#[inline(never)]
fn event_misfit(data: &[u8], pos: usize, compressed: bool) -> Result<EventPos, ChunkProblem> {
    let mut c = Cursor::new(data, pos, compressed);
    let (size, type_id) = match c.int().and_then(|size| Ok((size, c.long()?))) {
        Ok(v) => v,
        Err(e) => {
            return Err(ChunkProblem::Corrupt {
                offset: pos as u64,
                reason: format!("event header: {}", e.0),
            })
        }
    };
    let size_ok = size > 0 && (size as usize) >= c.pos - pos;
    if !size_ok || pos + size as usize > data.len() {
        return Err(ChunkProblem::Corrupt {
            offset: pos as u64,
            reason: if !size_ok {
                format!("event size {size}")
            } else {
                format!("event of {size} bytes runs past the end of the data")
            },
        });
    }
    Ok(EventPos {
        offset: pos,
        size: size as usize,
        type_id,
        body: c.pos,
    })
}

/// The events of a chunk in order, from their size fields (see [`Chunk::events`]).
pub struct Events<'c> {
    data: &'c [u8],
    pos: usize,
    end: usize,
    compressed: bool,
}

impl Iterator for Events<'_> {
    type Item = EventPos;

    #[inline]
    fn next(&mut self) -> Option<EventPos> {
        if self.pos >= self.end {
            return None;
        }
        // Walked once already by `Chunk::new` up to `end`: it reads the same again.
        let ev = event_fits(self.data, self.pos, self.compressed)?;
        self.pos += ev.size;
        Some(ev)
    }
}

impl Chunk {
    /// Walk the events of `data` by their size fields (stopping at the first that does
    /// not fit), then read the last metadata and every checkpoint. The events are not
    /// kept: [`events`](Self::events) walks them again (an index of 32 bytes an event
    /// was as large as the chunk, and writing it a fifth of the time in page faults).
    pub fn new(
        header: ChunkHeader,
        data: ChunkBytes,
        file_offset: u64,
        mut problems: Vec<ChunkProblem>,
    ) -> Chunk {
        let compressed = header.compressed_ints();
        let mut last_metadata = None;
        let mut checkpoints = Vec::new();
        let mut marks = Vec::new();
        let mark_bytes = (data.len() / MARKS).max(MARK_MIN_BYTES);
        let mut pos = HEADER_SIZE;
        while pos < data.len() {
            if pos >= HEADER_SIZE + marks.len() * mark_bytes {
                marks.push(pos);
            }
            let ev = match event_at(&data, pos, compressed) {
                Ok(ev) => ev,
                Err(p) => {
                    problems.push(p);
                    break;
                }
            };
            match ev.type_id {
                METADATA_TYPE => last_metadata = Some(ev),
                CHECKPOINT_TYPE => checkpoints.push(ev),
                _ => {}
            }
            pos += ev.size;
        }
        let mut chunk = Chunk {
            header,
            data,
            file_offset,
            metadata: Metadata::default(),
            has_metadata: false,
            pools: FastMap::default(),
            events_end: pos,
            marks,
            mark_bytes,
            problems: Vec::new(),
            null: Value::Null,
        };
        // The last metadata event declares every class of the chunk (later ones
        // only add classes registered while recording).
        if let Some(ev) = last_metadata {
            let mut c = chunk.cursor(&ev);
            match Metadata::parse(&mut c) {
                Ok(md) => {
                    chunk.metadata = md;
                    chunk.has_metadata = true;
                }
                Err(e) => problems.push(ChunkProblem::Corrupt {
                    offset: ev.offset as u64,
                    reason: format!("metadata: {}", e.0),
                }),
            }
        }
        if !chunk.has_metadata {
            problems.push(ChunkProblem::NoMetadata);
        } else {
            for ev in checkpoints {
                if let Err(e) = chunk.read_checkpoint(&ev) {
                    problems.push(ChunkProblem::BadCheckpoint {
                        offset: ev.offset as u64,
                        reason: e.0.to_string(),
                    });
                }
            }
        }
        chunk.problems = problems;
        chunk
    }

    /// Every complete event, in order (metadata and checkpoints included).
    pub fn events(&self) -> Events<'_> {
        Events {
            data: &self.data,
            pos: HEADER_SIZE,
            end: self.events_end,
            compressed: self.header.compressed_ints(),
        }
    }

    /// Where the complete events lie: from the first event's offset to the end of the last.
    pub fn events_span(&self) -> (usize, usize) {
        (HEADER_SIZE, self.events_end.max(HEADER_SIZE))
    }

    /// The offset of an event near `offset` (the first at or after the last mark at or
    /// before it), or the end of the events.
    pub fn event_near(&self, offset: usize) -> usize {
        let i = offset.saturating_sub(HEADER_SIZE) / self.mark_bytes.max(1);
        self.marks
            .get(i)
            .copied()
            .unwrap_or(self.events_end)
            .min(self.events_end)
    }

    /// The complete events from the one at `from` to the one at `to` (offsets from
    /// [`event_near`](Self::event_near) or [`events_span`](Self::events_span)).
    pub fn events_between(&self, from: usize, to: usize) -> Events<'_> {
        Events {
            pos: from.max(HEADER_SIZE),
            end: to.min(self.events_end),
            ..self.events()
        }
    }

    /// A cursor at the body of `ev`, limited to the event's bytes.
    pub fn cursor(&self, ev: &EventPos) -> Cursor<'_> {
        Cursor::within(
            &self.data,
            ev.offset + ev.size,
            ev.body,
            self.header.compressed_ints(),
        )
    }

    fn read_checkpoint(&mut self, ev: &EventPos) -> DResult<()> {
        let data = std::mem::take(&mut self.data);
        let result = (|| {
            let mut c = Cursor::new(
                &data[..ev.offset + ev.size],
                ev.body,
                self.header.compressed_ints(),
            );
            c.long()?; // start time
            c.long()?; // duration
            c.long()?; // delta to the previous checkpoint (not needed: all are scanned)
            c.u8()?; // checkpoint kind flags
            let pools = c.count()?;
            let dec = Decoder { md: &self.metadata };
            for _ in 0..pools {
                let class_id = c.long()?;
                if !self.metadata.classes.contains_key(&class_id) {
                    return Err(DecodeError("pool of an undeclared class"));
                }
                let n = c.count()?;
                let pool = self.pools.entry(class_id).or_default();
                for _ in 0..n {
                    let key = c.long()?;
                    // Stepped over with the checks `Decoder::value` makes (so this fails
                    // where decoding it would), decoded when asked for.
                    let at = c.pos;
                    dec.skip_value(&mut c, class_id, 0)?;
                    pool.insert(
                        key,
                        PoolEntry {
                            class: class_id,
                            at,
                            end: ev.offset + ev.size,
                            value: OnceLock::new(),
                        },
                    );
                }
            }
            Ok(())
        })();
        self.data = data;
        result
    }

    /// The value of a pool entry, decoded the first time.
    fn entry_value<'a>(&'a self, e: &'a PoolEntry) -> &'a Value {
        e.value.get_or_init(|| {
            let mut c = Cursor::new(&self.data[..e.end], e.at, self.header.compressed_ints());
            // It was stepped over with the same checks: it decodes.
            Decoder { md: &self.metadata }
                .value(&mut c, e.class, 0)
                .unwrap_or(Value::Null)
        })
    }

    /// Follow constant-pool references (a missing key is `Null`).
    pub fn resolve<'a>(&'a self, mut v: &'a Value) -> &'a Value {
        for _ in 0..8 {
            match v {
                Value::Ref(class, key) => {
                    v = self
                        .pools
                        .get(class)
                        .and_then(|p| p.get(key))
                        .map_or(&self.null, |e| self.entry_value(e));
                }
                _ => return v,
            }
        }
        &self.null
    }

    /// What the pool key `key` of class `class` resolves to: [`resolve`](Self::resolve)
    /// of `Value::Ref(class, key)`, without the value.
    pub fn resolve_key(&self, class: i64, key: i64) -> &Value {
        let lookup = |c: &i64, k: &i64| {
            self.pools
                .get(c)
                .and_then(|p| p.get(k))
                .map(|e| self.entry_value(e))
        };
        let mut v = match lookup(&class, &key) {
            Some(v) => v,
            None => return &self.null,
        };
        for _ in 1..8 {
            match v {
                Value::Ref(c, k) => v = lookup(c, k).unwrap_or(&self.null),
                _ => return v,
            }
        }
        &self.null
    }

    /// Field `name` of an object value (after resolving both).
    pub fn get<'a>(&'a self, v: &'a Value, name: &str) -> &'a Value {
        match self.resolve(v) {
            Value::Object(class, fields) => self
                .metadata
                .classes
                .get(class)
                .and_then(|c| c.field(name))
                .and_then(|i| fields.get(i))
                .map(|f| self.resolve(f))
                .unwrap_or(&self.null),
            _ => &self.null,
        }
    }

    /// A string value (resolving a pool reference, or a Symbol's `string`).
    pub fn str<'a>(&'a self, v: &'a Value) -> Option<&'a str> {
        match self.resolve(v) {
            Value::Str(s) => Some(s),
            // A Symbol (`string`), or a one-field wrapper such as GCName or GCWhen.
            o @ Value::Object(class, fields) => match self.get(o, "string") {
                Value::Str(s) => Some(s),
                _ if fields.len() == 1 && self.metadata.classes.contains_key(class) => {
                    match self.resolve(&fields[0]) {
                        Value::Str(s) => Some(s),
                        _ => None,
                    }
                }
                _ => None,
            },
            _ => None,
        }
    }
}
