//! The JFR binary format, read natively: chunk headers, compressed integers,
//! metadata, constant pools and events, one chunk in memory at a time.
//!
//! A recording is a sequence of chunks. Each chunk opens with a 68-byte header
//! (`FLR\0`, version, sizes, times) followed by events. Every event starts with
//! its size and type id; type 0 is the metadata (the classes and their fields, as
//! an element tree over a string table) and type 1 a checkpoint (constant pools:
//! threads, stack traces, methods, classes, symbols …, referred to by key from
//! the events). Integers are LEB128-like varints when the header's flag byte says
//! so (every 2.x writer does), raw big-endian otherwise (the 1.x layout).
//!
//! The reader never trusts a size or an offset: every read is bounds-checked, a
//! chunk cut short is read up to its last complete event, and what stopped the
//! reading is returned as a [`ChunkProblem`] for the report. Header offsets are not
//! needed: the chunk is scanned once for its metadata and checkpoints (which also
//! works for a chunk still being written, whose header is not final yet).

use super::chunk_bytes::{read_full, read_full_at, ChunkBytes};
use crate::engine::fast_hash::FastMap;
use std::io::{self, Read};
use std::sync::Arc;
use std::sync::OnceLock;

/// Size of a chunk header.
pub const HEADER_SIZE: usize = 68;
/// The magic bytes at the start of every chunk.
pub const MAGIC: &[u8; 4] = b"FLR\0";
/// Type id of the metadata event.
pub const METADATA_TYPE: i64 = 0;
/// Type id of the checkpoint (constant pool) event.
pub const CHECKPOINT_TYPE: i64 = 1;
/// Deepest nesting of inline objects decoded (metadata could declare a class that
/// contains itself; real ones nest 2 or 3 deep).
const MAX_DEPTH: u32 = 24;
/// Largest chunk buffer reserved up front; a bigger header size is believed only
/// as the data actually arrives.
const MAX_RESERVE: u64 = 64 << 20;

/// A chunk's fixed header.
#[derive(Debug, Clone)]
pub struct ChunkHeader {
    pub major: u16,
    pub minor: u16,
    /// Chunk size including this header, as the writer last updated it.
    pub size: u64,
    pub constant_pool_offset: u64,
    pub metadata_offset: u64,
    /// Wall-clock start, nanoseconds since the epoch.
    pub start_nanos: i64,
    pub duration_nanos: i64,
    pub start_ticks: i64,
    pub ticks_per_second: i64,
    /// Byte 64: 0 once the chunk is complete; otherwise the writer is still on it
    /// (or died while on it).
    pub file_state: u8,
    /// Byte 67: bit 0 compressed integers, bit 1 final chunk.
    pub flags: u8,
}

impl ChunkHeader {
    /// Parse the 68 header bytes (checked for the magic by the caller).
    pub fn parse(b: &[u8; HEADER_SIZE]) -> ChunkHeader {
        let u64_at = |o: usize| u64::from_be_bytes(b[o..o + 8].try_into().expect("8 bytes"));
        ChunkHeader {
            major: u16::from_be_bytes([b[4], b[5]]),
            minor: u16::from_be_bytes([b[6], b[7]]),
            size: u64_at(8),
            constant_pool_offset: u64_at(16),
            metadata_offset: u64_at(24),
            start_nanos: u64_at(32) as i64,
            duration_nanos: u64_at(40) as i64,
            start_ticks: u64_at(48) as i64,
            ticks_per_second: u64_at(56) as i64,
            file_state: b[64],
            flags: b[67],
        }
    }

    /// Varint integers (JMC's rule: the features bit; all 2.x writers set it).
    pub fn compressed_ints(&self) -> bool {
        self.flags & 1 != 0
    }

    /// The chunk was closed properly.
    pub fn finished(&self) -> bool {
        self.file_state == 0
    }

    /// Ticks to nanoseconds since the epoch.
    pub fn ticks_to_nanos(&self, ticks: i64) -> i64 {
        if self.ticks_per_second <= 0 {
            return self.start_nanos;
        }
        let delta = ticks.wrapping_sub(self.start_ticks);
        self.start_nanos.saturating_add(self.scale(delta))
    }

    /// `ticks` × 10⁹ / ticks per second (> 0), clamped to i64: exact in i64 where the
    /// product fits (and trivially at HotSpot's 10⁹ ticks a second), in i128 otherwise.
    /// The i128 division was 4 % of a socket recording's instructions.
    fn scale(&self, ticks: i64) -> i64 {
        let tps = self.ticks_per_second;
        if tps == 1_000_000_000 {
            return ticks;
        }
        if let Some(p) = ticks.checked_mul(1_000_000_000) {
            return p / tps;
        }
        (ticks as i128 * 1_000_000_000 / tps as i128).clamp(i64::MIN as i128, i64::MAX as i128)
            as i64
    }

    /// Ticks (a duration) to nanoseconds.
    pub fn ticks_to_duration(&self, ticks: i64) -> i64 {
        if self.ticks_per_second <= 0 {
            return 0;
        }
        self.scale(ticks)
    }
}

/// Why reading stopped early, or what could not be read. The report names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChunkProblem {
    /// The chunk header says N bytes but the input ended after M.
    CutShort { expected: u64, got: u64 },
    /// An event's size or contents did not fit: reading of the chunk stopped here.
    Corrupt { offset: u64, reason: String },
    /// No metadata event in the readable part of the chunk: events are counted by
    /// type id only.
    NoMetadata,
    /// A checkpoint could not be decoded whole (its later pools are missing).
    BadCheckpoint { offset: u64, reason: String },
    /// The header says the writer was still on this chunk.
    Unfinished,
    /// A version this reader was not written for (read as 2.x anyway).
    NewerVersion { major: u16, minor: u16 },
}

impl std::fmt::Display for ChunkProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ChunkProblem::CutShort { expected, got } => write!(
                f,
                "chunk cut short: header says {expected} bytes, input has {got} \
                 (a crashed JVM or a copy taken while recording); read up to the last complete event"
            ),
            ChunkProblem::Corrupt { offset, reason } => {
                write!(f, "unreadable data at chunk offset {offset}: {reason}; rest of chunk skipped")
            }
            ChunkProblem::NoMetadata => write!(
                f,
                "no metadata event in the readable part of the chunk: events counted by type id only"
            ),
            ChunkProblem::BadCheckpoint { offset, reason } => write!(
                f,
                "constant pool at chunk offset {offset} not read whole ({reason}): some names are missing"
            ),
            ChunkProblem::Unfinished => write!(
                f,
                "chunk still being written when copied (header file state not 0)"
            ),
            ChunkProblem::NewerVersion { major, minor } => write!(
                f,
                "JFR format {major}.{minor} is newer than this reader knows (1.x, 2.x): read as 2.x"
            ),
        }
    }
}

/// A decoding failure inside one event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError(pub &'static str);

type DResult<T> = Result<T, DecodeError>;

/// Reads JFR primitives from a byte slice, bounds-checked.
#[derive(Clone)]
pub struct Cursor<'a> {
    pub buf: &'a [u8],
    pub pos: usize,
    pub compressed: bool,
    /// `buf` and the bytes after it, when there are some (the rest of the chunk after
    /// an event): a varint near the end of `buf` is loaded from here in one word, then
    /// checked against `buf`'s end.
    wide: &'a [u8],
}

impl<'a> Cursor<'a> {
    pub fn new(buf: &'a [u8], pos: usize, compressed: bool) -> Self {
        Cursor {
            buf,
            pos,
            compressed,
            wide: buf,
        }
    }

    /// A cursor over `wide[..end]` that may load words past `end` (never reads a value
    /// from there: see `wide`).
    pub fn within(wide: &'a [u8], end: usize, pos: usize, compressed: bool) -> Self {
        Cursor {
            buf: &wide[..end],
            pos,
            compressed,
            wide,
        }
    }

    fn take(&mut self, n: usize) -> DResult<&'a [u8]> {
        let end = self
            .pos
            .checked_add(n)
            .ok_or(DecodeError("length overflow"))?;
        let s = self
            .buf
            .get(self.pos..end)
            .ok_or(DecodeError("unexpected end of data"))?;
        self.pos = end;
        Ok(s)
    }

    #[inline(always)]
    pub fn u8(&mut self) -> DResult<u8> {
        let b = *self
            .buf
            .get(self.pos)
            .ok_or(DecodeError("unexpected end of data"))?;
        self.pos += 1;
        Ok(b)
    }

    /// The JFR varint: 7 bits a byte, low first, the 9th byte whole. Read from the
    /// slice in one go (a bounds-checked `u8()` a byte was a sixth of a socket
    /// recording's instructions); at the end of the data the cursor stops there, as
    /// byte-by-byte reading did.
    #[inline(always)]
    pub fn varint(&mut self) -> DResult<i64> {
        // Most varints end within the next 8 bytes: found and gathered with a few
        // operations on one load, not a branch a byte (the loop was a fifth of a socket
        // recording's instructions).
        if let Some((w, n)) = self.varint_word() {
            if n == 1 {
                self.pos += 1;
                return Ok((w & 0x7f) as i64);
            }
            let x = w & (u64::MAX >> (64 - 8 * n)) & 0x7f7f_7f7f_7f7f_7f7f;
            let x = (x & 0x007f_007f_007f_007f) | ((x & 0x7f00_7f00_7f00_7f00) >> 1);
            let x = (x & 0x0000_3fff_0000_3fff) | ((x & 0x3fff_0000_3fff_0000) >> 2);
            let x = (x & 0x0000_0000_0fff_ffff) | ((x & 0x0fff_ffff_0000_0000) >> 4);
            self.pos += n;
            return Ok(x as i64);
        }
        self.varint_bytewise()
    }

    /// The next 8 bytes as a word, and the length of the varint they start when it ends
    /// within them and within `buf` (loaded from `wide`: near the end of `buf` too).
    #[inline(always)]
    fn varint_word(&self) -> Option<(u64, usize)> {
        let w = u64::from_le_bytes(*self.wide.get(self.pos..)?.first_chunk::<8>()?);
        // One byte (a small number, a pool key): the most common, told apart first.
        if w & 0x80 == 0 {
            return (self.pos < self.buf.len()).then_some((w, 1));
        }
        let stop = !w & 0x8080_8080_8080_8080;
        let n = (stop.trailing_zeros() / 8 + 1) as usize;
        (stop != 0 && self.pos + n <= self.buf.len()).then_some((w, n))
    }

    /// [`varint`](Self::varint) a byte at a time: near the end of the data (the last fields
    /// of an event), or 9 bytes long.
    #[inline(never)]
    fn varint_bytewise(&mut self) -> DResult<i64> {
        let end = DecodeError("unexpected end of data");
        let rest = self.buf.get(self.pos..).ok_or(end.clone())?;
        let mut v: u64 = 0;
        for (i, &b) in rest.iter().take(8).enumerate() {
            v |= ((b & 0x7f) as u64) << (7 * i);
            if b & 0x80 == 0 {
                self.pos += i + 1;
                return Ok(v as i64);
            }
        }
        match rest.get(8) {
            Some(&b) => {
                self.pos += 9;
                Ok((v | (b as u64) << 56) as i64)
            }
            None => {
                self.pos = self.buf.len();
                Err(end)
            }
        }
    }

    #[inline(always)]
    pub fn long(&mut self) -> DResult<i64> {
        if self.compressed {
            self.varint()
        } else {
            Ok(i64::from_be_bytes(
                self.take(8)?.try_into().expect("8 bytes"),
            ))
        }
    }

    #[inline(always)]
    pub fn int(&mut self) -> DResult<i32> {
        if self.compressed {
            Ok(self.varint()? as i32)
        } else {
            Ok(i32::from_be_bytes(
                self.take(4)?.try_into().expect("4 bytes"),
            ))
        }
    }

    #[inline(always)]
    pub fn short(&mut self) -> DResult<i16> {
        if self.compressed {
            Ok(self.varint()? as i16)
        } else {
            Ok(i16::from_be_bytes(
                self.take(2)?.try_into().expect("2 bytes"),
            ))
        }
    }

    pub fn f32(&mut self) -> DResult<f32> {
        Ok(f32::from_be_bytes(
            self.take(4)?.try_into().expect("4 bytes"),
        ))
    }

    pub fn f64(&mut self) -> DResult<f64> {
        Ok(f64::from_be_bytes(
            self.take(8)?.try_into().expect("8 bytes"),
        ))
    }

    /// Past a long, as [`long`](Self::long) reads it (the same end-of-data check).
    #[inline(always)]
    pub fn skip_long(&mut self) -> DResult<()> {
        if !self.compressed {
            return self.take(8).map(|_| ());
        }
        // The varint ends at its first byte under 0x80, or with its 9th byte.
        if let Some((_, n)) = self.varint_word() {
            self.pos += n;
            return Ok(());
        }
        let rest = self.buf.get(self.pos..).unwrap_or(&[]);
        match rest.iter().take(8).position(|&b| b < 0x80) {
            Some(i) => self.pos += i + 1,
            None if rest.len() > 8 => self.pos += 9,
            None => {
                self.pos = self.buf.len();
                return Err(DecodeError("unexpected end of data"));
            }
        }
        Ok(())
    }

    /// Past a value of a primitive kind (or a string), with the checks of the reads
    /// [`Decoder::lite_kind`] makes: it fails where they fail. Objects are not primitive.
    #[inline(always)]
    fn skip_primitive(&mut self, kind: Kind) -> DResult<()> {
        match kind {
            Kind::Boolean | Kind::Byte => self.u8().map(|_| ()),
            Kind::Char | Kind::Short | Kind::Int | Kind::Long if self.compressed => {
                self.skip_long()
            }
            Kind::Char | Kind::Short => self.take(2).map(|_| ()),
            Kind::Int | Kind::Float => self.take(4).map(|_| ()),
            Kind::Long | Kind::Double => self.take(8).map(|_| ()),
            Kind::String => match self.u8()? {
                0 | 1 => Ok(()),
                2 => self.skip_long(),
                3 | 5 => {
                    let n = self.count()?;
                    self.take(n).map(|_| ())
                }
                4 => {
                    let n = self.count()?;
                    for _ in 0..n {
                        self.short()?;
                    }
                    Ok(())
                }
                _ => Err(DecodeError("unknown string encoding")),
            },
            Kind::Object => Err(DecodeError("an object is not a primitive")),
        }
    }

    /// A count that must fit in what is left (every element takes ≥ 1 byte
    /// or is refused by the caller), so a corrupt count cannot allocate much.
    #[inline(always)]
    pub fn count(&mut self) -> DResult<usize> {
        let n = self.int()?;
        if n < 0 || n as usize > self.buf.len() - self.pos {
            return Err(DecodeError("count larger than the data left"));
        }
        Ok(n as usize)
    }

    /// A JFR string: an encoding byte, then the data. `Err` for a constant-pool
    /// reference is not an error: it is returned as `StrOrRef::Ref`.
    pub fn string(&mut self) -> DResult<StrOrRef> {
        match self.u8()? {
            0 => Ok(StrOrRef::Null),
            1 => Ok(StrOrRef::Str(Arc::from(""))),
            2 => Ok(StrOrRef::Ref(self.long()?)),
            3 => {
                let n = self.count()?;
                Ok(StrOrRef::Str(Arc::from(
                    String::from_utf8_lossy(self.take(n)?).as_ref(),
                )))
            }
            4 => {
                let n = self.count()?;
                let mut s = String::with_capacity(n);
                for _ in 0..n {
                    let c = self.short()? as u16 as u32;
                    s.push(char::from_u32(c).unwrap_or(char::REPLACEMENT_CHARACTER));
                }
                Ok(StrOrRef::Str(Arc::from(s)))
            }
            5 => {
                let n = self.count()?;
                let s: String = self.take(n)?.iter().map(|&b| b as char).collect();
                Ok(StrOrRef::Str(Arc::from(s)))
            }
            _ => Err(DecodeError("unknown string encoding")),
        }
    }
}

/// A string as stored: inline, null, or a key into the String constant pool.
pub enum StrOrRef {
    Null,
    Str(Arc<str>),
    Ref(i64),
}

/// The primitive kinds of field the format knows; everything else is an object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Boolean,
    Byte,
    Char,
    Short,
    Int,
    Long,
    Float,
    Double,
    String,
    Object,
}

impl Kind {
    fn of(name: &str) -> Kind {
        match name {
            "boolean" => Kind::Boolean,
            "byte" => Kind::Byte,
            "char" => Kind::Char,
            "short" => Kind::Short,
            "int" => Kind::Int,
            "long" => Kind::Long,
            "float" => Kind::Float,
            "double" => Kind::Double,
            "java.lang.String" => Kind::String,
            _ => Kind::Object,
        }
    }
}

/// One field of a class.
#[derive(Debug, Clone)]
pub struct Field {
    pub name: Arc<str>,
    pub class_id: i64,
    /// Stored as a key into the class's constant pool.
    pub constant_pool: bool,
    /// An array (dimension 1).
    pub array: bool,
}

/// A class (event type, or value type) declared by the metadata.
#[derive(Debug, Clone)]
pub struct Class {
    pub id: i64,
    pub name: Arc<str>,
    pub super_type: Option<Arc<str>>,
    pub kind: Kind,
    pub fields: Vec<Field>,
}

impl Class {
    /// Index of the field called `name`.
    pub fn field(&self, name: &str) -> Option<usize> {
        self.fields.iter().position(|f| &*f.name == name)
    }

    /// An event type (what `jfr summary` lists).
    pub fn is_event(&self) -> bool {
        self.super_type.as_deref() == Some("jdk.jfr.Event")
    }
}

/// The classes of a chunk.
#[derive(Debug, Clone, Default)]
pub struct Metadata {
    pub classes: FastMap<i64, Class>,
    /// Type id of java.lang.String, for string constant-pool references.
    pub string_class: Option<i64>,
}

impl Metadata {
    pub fn by_name(&self, name: &str) -> Option<&Class> {
        self.classes.values().find(|c| &*c.name == name)
    }

    /// Parse the metadata event whose body starts at `c` (after size and type id).
    pub fn parse(c: &mut Cursor<'_>) -> DResult<Metadata> {
        c.long()?; // start time
        c.long()?; // duration
        c.long()?; // metadata id
        let n = c.count()?;
        let mut strings: Vec<Arc<str>> = Vec::with_capacity(n);
        for _ in 0..n {
            strings.push(match c.string()? {
                StrOrRef::Str(s) => s,
                StrOrRef::Null => Arc::from(""),
                StrOrRef::Ref(_) => return Err(DecodeError("metadata string refers to a pool")),
            });
        }
        let root = Element::parse(c, &strings, 0)?;
        let mut md = Metadata::default();
        for m in root.children.iter().filter(|e| &*e.name == "metadata") {
            for ce in m.children.iter().filter(|e| &*e.name == "class") {
                let id = ce
                    .attr("id")
                    .and_then(|v| v.parse::<i64>().ok())
                    .ok_or(DecodeError("class without id"))?;
                let name = ce.attr_arc("name").unwrap_or_else(|| Arc::from("?"));
                let mut fields = Vec::new();
                for fe in ce.children.iter().filter(|e| &*e.name == "field") {
                    fields.push(Field {
                        name: fe.attr_arc("name").unwrap_or_else(|| Arc::from("?")),
                        class_id: fe
                            .attr("class")
                            .and_then(|v| v.parse().ok())
                            .ok_or(DecodeError("field without class"))?,
                        constant_pool: fe.attr("constantPool") == Some("true"),
                        array: fe.attr("dimension").is_some_and(|d| d != "0"),
                    });
                }
                let kind = Kind::of(&name);
                if kind == Kind::String {
                    md.string_class = Some(id);
                }
                md.classes.insert(
                    id,
                    Class {
                        id,
                        name,
                        super_type: ce.attr_arc("superType"),
                        kind,
                        fields,
                    },
                );
            }
        }
        Ok(md)
    }
}

/// A node of the metadata's element tree.
struct Element {
    name: Arc<str>,
    attrs: Vec<(Arc<str>, Arc<str>)>,
    children: Vec<Element>,
}

impl Element {
    fn parse(c: &mut Cursor<'_>, strings: &[Arc<str>], depth: u32) -> DResult<Element> {
        if depth > MAX_DEPTH {
            return Err(DecodeError("metadata nested too deep"));
        }
        let s = |i: i32| -> DResult<Arc<str>> {
            strings
                .get(usize::try_from(i).map_err(|_| DecodeError("bad string index"))?)
                .cloned()
                .ok_or(DecodeError("string index out of range"))
        };
        let name = s(c.int()?)?;
        let na = c.count()?;
        let mut attrs = Vec::with_capacity(na);
        for _ in 0..na {
            let k = s(c.int()?)?;
            let v = s(c.int()?)?;
            attrs.push((k, v));
        }
        let nc = c.count()?;
        let mut children = Vec::with_capacity(nc);
        for _ in 0..nc {
            children.push(Element::parse(c, strings, depth + 1)?);
        }
        Ok(Element {
            name,
            attrs,
            children,
        })
    }

    fn attr(&self, k: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find(|(a, _)| &**a == k)
            .map(|(_, v)| &**v)
    }

    fn attr_arc(&self, k: &str) -> Option<Arc<str>> {
        self.attrs
            .iter()
            .find(|(a, _)| &**a == k)
            .map(|(_, v)| v.clone())
    }
}

/// A decoded value. Constant-pool references stay references until asked for
/// ([`Chunk::resolve`]), so decoding an event costs no lookups.
#[derive(Debug, Clone)]
pub enum Value {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(Arc<str>),
    /// (class id, key) into the constant pools.
    Ref(i64, i64),
    /// (class id, fields in declaration order).
    Object(i64, Vec<Value>),
    Array(Vec<Value>),
}

impl Value {
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Value::Int(v) => Some(*v),
            Value::Float(v) => Some(*v as i64),
            _ => None,
        }
    }

    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Int(v) => Some(*v as f64),
            Value::Float(v) => Some(*v),
            _ => None,
        }
    }
}

/// Decodes values of the classes in `md`.
pub struct Decoder<'m> {
    pub md: &'m Metadata,
}

impl Decoder<'_> {
    /// A value of class `class_id`, stored inline (not as a pool key).
    pub fn value(&self, c: &mut Cursor<'_>, class_id: i64, depth: u32) -> DResult<Value> {
        if depth > MAX_DEPTH {
            return Err(DecodeError("values nested too deep"));
        }
        let class = self
            .md
            .classes
            .get(&class_id)
            .ok_or(DecodeError("field of an undeclared class"))?;
        Ok(match class.kind {
            Kind::Boolean => Value::Bool(c.u8()? != 0),
            Kind::Byte => Value::Int(c.u8()? as i8 as i64),
            Kind::Char | Kind::Short => Value::Int(c.short()? as i64),
            Kind::Int => Value::Int(c.int()? as i64),
            Kind::Long => Value::Int(c.long()?),
            Kind::Float => Value::Float(c.f32()? as f64),
            Kind::Double => Value::Float(c.f64()?),
            Kind::String => match c.string()? {
                StrOrRef::Null => Value::Null,
                StrOrRef::Str(s) => Value::Str(s),
                StrOrRef::Ref(k) => Value::Ref(class_id, k),
            },
            Kind::Object => {
                if class.fields.is_empty() {
                    return Ok(Value::Object(class_id, Vec::new()));
                }
                let mut fields = Vec::with_capacity(class.fields.len());
                for f in &class.fields {
                    fields.push(self.field(c, f, depth + 1)?);
                }
                Value::Object(class_id, fields)
            }
        })
    }

    fn field(&self, c: &mut Cursor<'_>, f: &Field, depth: u32) -> DResult<Value> {
        if f.array {
            let n = c.count()?;
            let mut items = Vec::with_capacity(n);
            for _ in 0..n {
                items.push(self.scalar(c, f, depth)?);
            }
            Ok(Value::Array(items))
        } else {
            self.scalar(c, f, depth)
        }
    }

    fn scalar(&self, c: &mut Cursor<'_>, f: &Field, depth: u32) -> DResult<Value> {
        if f.constant_pool {
            Ok(Value::Ref(f.class_id, c.long()?))
        } else {
            self.value(c, f.class_id, depth)
        }
    }

    /// The fields of an event of class `class` (after its size and type id).
    pub fn event(&self, c: &mut Cursor<'_>, class: &Class) -> DResult<Vec<Value>> {
        let mut fields = Vec::with_capacity(class.fields.len());
        for f in &class.fields {
            fields.push(self.field(c, f, 1)?);
        }
        Ok(fields)
    }
}

/// A field as it sits in an event, read without allocating: numbers and pool keys
/// as they are, an inline UTF-8 string borrowed from the chunk. What this cannot
/// hold (an inline object or array, a string in another encoding or not UTF-8) is
/// `Other`: the caller decodes that event the full way ([`Decoder::event`]).
#[derive(Debug, Clone, Copy)]
pub enum Lite<'a> {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(&'a str),
    /// (class id, key) into the constant pools.
    Ref(i64, i64),
    Other,
}

/// How one field of an event class is read by [`Decoder::event_lite_planned`].
#[derive(Debug, Clone, Copy)]
pub enum LiteStep {
    /// An array: the field at this index, skipped.
    Array(usize),
    /// A key into the pool of this class.
    Pool(i64),
    /// A value of this kind and class, inline.
    Value(Kind, i64),
    /// A field of a class the metadata does not declare: the event does not decode.
    Undeclared,
}

/// A field of [`Decoder::pick_plan`]: how it reads, and the slot it goes to. Compressed
/// integers and pool keys, nearly every field of a socket event, have ops of their own: one
/// dispatch a field, not a step's and then a kind's.
#[derive(Debug, Clone, Copy)]
pub enum Pick {
    /// A compressed integer or pool key not kept: stepped over.
    SkipVarint,
    /// A compressed long, int, or short or char, into slot `.0`.
    Long(u8),
    Int(u8),
    Short(u8),
    /// A compressed key into the pool of class `.1`, into slot `.0`.
    Ref(u8, i64),
    /// Anything else, as [`Decoder::event_lite`] reads it, into `slot` (`NOT_KEPT`: skipped).
    Step {
        step: LiteStep,
        slot: u8,
    },
}

const NOT_KEPT: u8 = u8::MAX;

impl Lite<'_> {
    /// The [`Value`] this stands for (`Str` and `Other` have none without allocating).
    pub fn value(&self) -> Value {
        match *self {
            Lite::Bool(b) => Value::Bool(b),
            Lite::Int(v) => Value::Int(v),
            Lite::Float(v) => Value::Float(v),
            Lite::Ref(c, k) => Value::Ref(c, k),
            Lite::Null | Lite::Str(_) | Lite::Other => Value::Null,
        }
    }
}

impl Decoder<'_> {
    /// The fields of an event of class `class` into `out` (cleared first), as
    /// [`Lite`]s: what [`event`](Self::event) decodes, for the fields that need no
    /// allocation. `Err` where `event` would fail too (the bytes do not fit).
    pub fn event_lite<'a>(
        &self,
        c: &mut Cursor<'a>,
        class: &Class,
        out: &mut Vec<Lite<'a>>,
    ) -> DResult<()> {
        out.clear();
        for f in &class.fields {
            let l = if f.array {
                let n = c.count()?;
                for _ in 0..n {
                    self.skip_scalar(c, f, 1)?;
                }
                Lite::Other
            } else if f.constant_pool {
                Lite::Ref(f.class_id, c.long()?)
            } else {
                self.lite(c, f.class_id, 1)?
            };
            out.push(l);
        }
        Ok(())
    }

    /// How [`event_lite`](Self::event_lite) reads each field of `class`, worked out
    /// once per chunk (the class lookups of every field of every event were a tenth of
    /// a socket recording's instructions).
    pub fn lite_plan(&self, class: &Class) -> Vec<LiteStep> {
        class
            .fields
            .iter()
            .enumerate()
            .map(|(i, f)| {
                if f.array {
                    LiteStep::Array(i)
                } else if f.constant_pool {
                    LiteStep::Pool(f.class_id)
                } else {
                    match self.md.classes.get(&f.class_id) {
                        Some(fc) => LiteStep::Value(fc.kind, f.class_id),
                        None => LiteStep::Undeclared,
                    }
                }
            })
            .collect()
    }

    /// Step over an array field's elements (the report reads none of them).
    fn skip_array(&self, c: &mut Cursor<'_>, f: &Field) -> DResult<()> {
        let n = c.count()?;
        for _ in 0..n {
            self.skip_scalar(c, f, 1)?;
        }
        Ok(())
    }

    /// [`event_lite`](Self::event_lite) by a plan from [`lite_plan`](Self::lite_plan).
    pub fn event_lite_planned<'a>(
        &self,
        c: &mut Cursor<'a>,
        class: &Class,
        plan: &[LiteStep],
        out: &mut Vec<Lite<'a>>,
    ) -> DResult<()> {
        out.clear();
        for step in plan {
            let l = match *step {
                LiteStep::Array(i) => {
                    self.skip_array(c, &class.fields[i])?;
                    Lite::Other
                }
                LiteStep::Pool(class_id) => Lite::Ref(class_id, c.long()?),
                LiteStep::Value(kind, class_id) => self.lite_kind(c, kind, class_id, 1)?,
                LiteStep::Undeclared => return Err(DecodeError("field of an undeclared class")),
            };
            out.push(l);
        }
        Ok(())
    }

    /// A plan that reads only the fields at `wanted` (field index → slot of `out` in
    /// [`event_pick`](Self::event_pick)) and moves past the others without making a value.
    pub fn pick_plan(
        &self,
        class: &Class,
        wanted: &[Option<usize>],
        compressed: bool,
    ) -> Vec<Pick> {
        let mut slot = vec![NOT_KEPT; class.fields.len()];
        for (s, f) in wanted.iter().enumerate() {
            if let Some(&f) = f.as_ref() {
                slot[f] = s as u8;
            }
        }
        self.lite_plan(class)
            .into_iter()
            .zip(slot)
            .map(|(step, slot)| match (step, slot == NOT_KEPT) {
                _ if !compressed => Pick::Step { step, slot },
                (LiteStep::Pool(_), true) => Pick::SkipVarint,
                (LiteStep::Pool(class), false) => Pick::Ref(slot, class),
                (LiteStep::Value(Kind::Long | Kind::Int | Kind::Short | Kind::Char, _), true) => {
                    Pick::SkipVarint
                }
                (LiteStep::Value(Kind::Long, _), false) => Pick::Long(slot),
                (LiteStep::Value(Kind::Int, _), false) => Pick::Int(slot),
                (LiteStep::Value(Kind::Short | Kind::Char, _), false) => Pick::Short(slot),
                _ => Pick::Step { step, slot },
            })
            .collect()
    }

    /// An event read by a [`pick_plan`](Self::pick_plan) made for its chunk's integer
    /// encoding: the wanted fields into their slots of `out` (as
    /// [`event_lite`](Self::event_lite) reads them), the others skipped with the same
    /// checks, so this fails exactly where `event_lite` fails. Slots of fields the class
    /// does not have are left as they were.
    #[inline]
    pub fn event_pick<'a>(
        &self,
        c: &mut Cursor<'a>,
        class: &Class,
        plan: &[Pick],
        out: &mut [Lite<'a>],
    ) -> DResult<()> {
        let mut put = |slot: u8, l: Lite<'a>| {
            if let Some(o) = out.get_mut(slot as usize) {
                *o = l;
            }
        };
        for p in plan {
            match *p {
                Pick::SkipVarint => c.skip_long()?,
                Pick::Long(slot) => put(slot, Lite::Int(c.varint()?)),
                Pick::Int(slot) => put(slot, Lite::Int(c.varint()? as i32 as i64)),
                Pick::Short(slot) => put(slot, Lite::Int(c.varint()? as i16 as i64)),
                Pick::Ref(slot, class_id) => put(slot, Lite::Ref(class_id, c.varint()?)),
                Pick::Step { step, slot } => {
                    let keep = slot != NOT_KEPT;
                    let l = match step {
                        LiteStep::Array(i) => {
                            self.skip_array(c, &class.fields[i])?;
                            Lite::Other
                        }
                        LiteStep::Pool(class_id) if keep => Lite::Ref(class_id, c.long()?),
                        LiteStep::Pool(_) => {
                            c.skip_long()?;
                            continue;
                        }
                        LiteStep::Value(kind, class_id) if keep || kind == Kind::Object => {
                            self.lite_kind(c, kind, class_id, 1)?
                        }
                        LiteStep::Value(kind, _) => {
                            c.skip_primitive(kind)?;
                            continue;
                        }
                        LiteStep::Undeclared => {
                            return Err(DecodeError("field of an undeclared class"))
                        }
                    };
                    put(slot, l);
                }
            }
        }
        Ok(())
    }

    fn lite<'a>(&self, c: &mut Cursor<'a>, class_id: i64, depth: u32) -> DResult<Lite<'a>> {
        let class = self
            .md
            .classes
            .get(&class_id)
            .ok_or(DecodeError("field of an undeclared class"))?;
        self.lite_kind(c, class.kind, class_id, depth)
    }

    // Inlined into the plan's loop: called for every field of every socket event.
    #[inline(always)]
    fn lite_kind<'a>(
        &self,
        c: &mut Cursor<'a>,
        kind: Kind,
        class_id: i64,
        depth: u32,
    ) -> DResult<Lite<'a>> {
        Ok(match kind {
            Kind::Boolean => Lite::Bool(c.u8()? != 0),
            Kind::Byte => Lite::Int(c.u8()? as i8 as i64),
            Kind::Char | Kind::Short => Lite::Int(c.short()? as i64),
            Kind::Int => Lite::Int(c.int()? as i64),
            Kind::Long => Lite::Int(c.long()?),
            Kind::Float => Lite::Float(c.f32()? as f64),
            Kind::Double => Lite::Float(c.f64()?),
            Kind::String => match c.u8()? {
                0 => Lite::Null,
                1 => Lite::Str(""),
                2 => Lite::Ref(class_id, c.long()?),
                3 => {
                    let n = c.count()?;
                    match std::str::from_utf8(c.take(n)?) {
                        Ok(s) => Lite::Str(s),
                        Err(_) => Lite::Other,
                    }
                }
                4 => {
                    // UTF-16 units, each a varint when integers are compressed: units
                    // below 0x80 are one byte each, their own ASCII character.
                    let n = c.count()?;
                    let ascii =
                        c.compressed && c.buf.get(c.pos..c.pos + n).is_some_and(|b| b.is_ascii());
                    if ascii {
                        let b = c.take(n)?;
                        // SAFETY: ASCII bytes are valid UTF-8.
                        Lite::Str(unsafe { std::str::from_utf8_unchecked(b) })
                    } else {
                        for _ in 0..n {
                            c.short()?;
                        }
                        Lite::Other
                    }
                }
                5 => {
                    // Latin-1, what HotSpot writes for Java strings: ASCII reads as is.
                    let n = c.count()?;
                    let b = c.take(n)?;
                    if b.is_ascii() {
                        // SAFETY: ASCII bytes are valid UTF-8.
                        Lite::Str(unsafe { std::str::from_utf8_unchecked(b) })
                    } else {
                        Lite::Other
                    }
                }
                _ => return Err(DecodeError("unknown string encoding")),
            },
            Kind::Object => {
                self.skip_value(c, class_id, depth)?;
                Lite::Other
            }
        })
    }

    /// Move past a value of class `class_id` as [`value`](Self::value) reads it.
    fn skip_value(&self, c: &mut Cursor<'_>, class_id: i64, depth: u32) -> DResult<()> {
        if depth > MAX_DEPTH {
            return Err(DecodeError("values nested too deep"));
        }
        let class = self
            .md
            .classes
            .get(&class_id)
            .ok_or(DecodeError("field of an undeclared class"))?;
        match class.kind {
            Kind::Object => {
                for f in &class.fields {
                    if f.array {
                        let n = c.count()?;
                        for _ in 0..n {
                            self.skip_scalar(c, f, depth + 1)?;
                        }
                    } else {
                        self.skip_scalar(c, f, depth + 1)?;
                    }
                }
                Ok(())
            }
            _ => self.lite(c, class_id, depth).map(|_| ()),
        }
    }

    fn skip_scalar(&self, c: &mut Cursor<'_>, f: &Field, depth: u32) -> DResult<()> {
        if f.constant_pool {
            c.long().map(|_| ())
        } else {
            self.skip_value(c, f.class_id, depth)
        }
    }
}

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
/// was a tenth of a socket recording's instructions.
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

/// Reads chunks from any input, one at a time.
pub struct ChunkReader<R> {
    input: R,
    offset: u64,
    done: bool,
    /// The bytes of the chunk read last, for the next one (see [`recycle`](Self::recycle)).
    spare: Option<ChunkBytes>,
    /// A regular file whose chunks are mapped, not read (see [`mapped`](ChunkReader::mapped)).
    file: Option<std::fs::File>,
    /// Problems that stopped the reading of the whole input.
    pub stopped: Option<String>,
}

impl ChunkReader<io::Empty> {
    /// The chunks of a regular file, each mapped where it lies instead of read into
    /// memory (see [`ChunkBytes::map`]); what is read is the same as from the file read
    /// through [`new`](ChunkReader::new).
    pub fn mapped(file: std::fs::File) -> Self {
        ChunkReader {
            file: Some(file),
            ..ChunkReader::new(io::empty())
        }
    }
}

impl<R: Read> ChunkReader<R> {
    pub fn new(input: R) -> Self {
        ChunkReader {
            input,
            offset: 0,
            done: false,
            spare: None,
            file: None,
            stopped: None,
        }
    }

    /// Give back a chunk that has been read: its memory takes the next one.
    pub fn recycle(&mut self, chunk: Chunk) {
        // A window of the file is let go now (unmapped), not kept beside the next one.
        if let ChunkBytes::Mapped { .. } = chunk.data {
            self.spare = Some(chunk.data);
        }
    }

    /// Are the chunks mapped where they lie in a file (see [`mapped`](ChunkReader::mapped))?
    pub fn is_mapped(&self) -> bool {
        self.file.is_some()
    }

    /// Bytes consumed so far.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// The next chunk, `None` at the end (or when reading stopped: see `stopped`).
    pub fn next_chunk(&mut self) -> io::Result<Option<Chunk>> {
        Ok(self.next_bytes()?.map(ChunkRead::parse))
    }

    /// The next chunk's bytes, not parsed yet (see [`ChunkRead::parse`]).
    pub fn next_bytes(&mut self) -> io::Result<Option<ChunkRead>> {
        if self.done {
            return Ok(None);
        }
        let mut hb = [0u8; HEADER_SIZE];
        let got = match &self.file {
            Some(f) => read_full_at(f, &mut hb, self.offset)?,
            None => read_full(&mut self.input, &mut hb)?,
        };
        if got == 0 {
            self.done = true;
            return Ok(None);
        }
        if got < 4 || &hb[..4] != MAGIC {
            self.done = true;
            self.stopped = Some(if self.offset == 0 {
                "not a JFR recording (no \"FLR\\0\" magic at offset 0)".to_string()
            } else {
                format!(
                    "no chunk magic at offset {}: the rest of the input was not read",
                    self.offset
                )
            });
            return Ok(None);
        }
        if got < HEADER_SIZE {
            self.done = true;
            self.stopped = Some(format!(
                "chunk header at offset {} cut short ({got} of {HEADER_SIZE} bytes)",
                self.offset
            ));
            return Ok(None);
        }
        let header = ChunkHeader::parse(&hb);
        let mut problems = Vec::new();
        if header.major > 2 {
            problems.push(ChunkProblem::NewerVersion {
                major: header.major,
                minor: header.minor,
            });
        }
        if !header.finished() {
            problems.push(ChunkProblem::Unfinished);
        }
        // A chunk still being written may not have its size yet: read to the end.
        let size_known = header.size > HEADER_SIZE as u64;
        let want = if size_known {
            header.size - HEADER_SIZE as u64
        } else {
            u64::MAX
        };
        let data = if let Some(f) = &self.file {
            ChunkBytes::map(f, self.offset, want.saturating_add(HEADER_SIZE as u64))?
        } else if want <= MAX_RESERVE {
            ChunkBytes::read(&mut self.input, &hb, want as usize, self.spare.take())?
        } else {
            // A size not known, or larger than believed before the bytes arrive.
            let mut data = Vec::with_capacity(HEADER_SIZE + want.min(MAX_RESERVE) as usize);
            data.extend_from_slice(&hb);
            (&mut self.input).take(want).read_to_end(&mut data)?;
            ChunkBytes::Heap(data)
        };
        let n = data.len().saturating_sub(HEADER_SIZE) as u64;
        let file_offset = self.offset;
        self.offset += HEADER_SIZE as u64 + n;
        if n < want {
            self.done = true;
            if size_known {
                problems.push(ChunkProblem::CutShort {
                    expected: header.size,
                    got: HEADER_SIZE as u64 + n,
                });
            }
        }
        Ok(Some(ChunkRead {
            header,
            data,
            file_offset,
            problems,
        }))
    }
}

/// A chunk's bytes as read or mapped, with the problems seen reading them.
pub struct ChunkRead {
    header: ChunkHeader,
    data: ChunkBytes,
    file_offset: u64,
    problems: Vec<ChunkProblem>,
}

impl ChunkRead {
    /// The chunk (see [`Chunk::new`]).
    pub fn parse(self) -> Chunk {
        Chunk::new(self.header, self.data, self.file_offset, self.problems)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varint_reads_seven_bits_a_byte_and_a_whole_ninth() {
        let mut c = Cursor::new(&[0x7f], 0, true);
        assert_eq!(c.varint(), Ok(127));
        let mut c = Cursor::new(&[0x80, 0x01], 0, true);
        assert_eq!(c.varint(), Ok(128));
        // Nine bytes: 8×7 bits of ones, then a raw 0xff byte = all 64 bits set.
        let nine = [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff];
        let mut c = Cursor::new(&nine, 0, true);
        assert_eq!(c.varint(), Ok(-1));
        assert_eq!(c.pos, 9);
    }

    #[test]
    fn varint_reads_what_byte_by_byte_reading_reads_and_stops_where_it_stops() {
        // The reference: one bounds-checked byte at a time, as the reader did.
        fn reference(buf: &[u8], mut pos: usize) -> (Option<i64>, usize) {
            let mut v: u64 = 0;
            for i in 0..9 {
                let Some(&b) = buf.get(pos) else {
                    return (None, pos);
                };
                pos += 1;
                if i == 8 {
                    return (Some((v | (b as u64) << 56) as i64), pos);
                }
                v |= ((b & 0x7f) as u64) << (7 * i);
                if b & 0x80 == 0 {
                    return (Some(v as i64), pos);
                }
            }
            unreachable!()
        }
        let mut inputs: Vec<Vec<u8>> = Vec::new();
        for len in 0..=11 {
            for fill in [0x00u8, 0x7f, 0x80, 0xff, 0x81] {
                let mut b = vec![fill; len];
                if len > 2 {
                    b[len / 2] = 0x05; // a terminator in the middle
                }
                inputs.push(b);
            }
        }
        // Random bytes, continuation bits set at random: every length of varint, at
        // every distance from the end (the word path and the byte loop both taken).
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for len in 0..40 {
            let mut b = Vec::with_capacity(len);
            for _ in 0..len {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let high = if x % 5 == 0 { 0 } else { 0x80 };
                b.push((x >> 24) as u8 & 0x7f | high);
            }
            inputs.push(b);
        }
        for b in &inputs {
            for start in 0..=b.len() + 1 {
                let mut c = Cursor::new(b, start, true);
                let got = (c.varint().ok(), c.pos);
                assert_eq!(got, reference(b, start), "{b:02x?} from {start}");
                // Skipping stops where reading stops, and fails where it fails (from
                // inside the data: past its end the two differ, as they always did).
                if start > b.len() {
                    continue;
                }
                let mut s = Cursor::new(b, start, true);
                let skipped = (s.skip_long().is_ok(), s.pos);
                assert_eq!(
                    skipped,
                    (got.0.is_some(), got.1),
                    "skip {b:02x?} from {start}"
                );
                // Bytes after the end (the rest of a chunk after an event) change nothing.
                let mut wide = b.clone();
                wide.extend_from_slice(&[0x80, 0x01, 0xff, 0x00, 0x80, 0x80, 0x80, 0x05, 0x7f]);
                let mut w = Cursor::within(&wide, b.len(), start, true);
                assert_eq!(
                    (w.varint().ok(), w.pos),
                    got,
                    "{b:02x?} within from {start}"
                );
                let mut w = Cursor::within(&wide, b.len(), start, true);
                assert_eq!(
                    (w.skip_long().is_ok(), w.pos),
                    skipped,
                    "skip {b:02x?} within from {start}"
                );
            }
        }
    }

    #[test]
    fn uncompressed_ints_are_big_endian() {
        let mut c = Cursor::new(&[0, 0, 1, 0], 0, false);
        assert_eq!(c.int(), Ok(256));
    }

    #[test]
    fn cut_varint_and_huge_counts_are_errors_not_panics() {
        let mut c = Cursor::new(&[0x80, 0x80], 0, true);
        assert!(c.varint().is_err());
        // A count of 1000 with 2 bytes left.
        let mut c = Cursor::new(&[0xe8, 0x07, 0, 0], 0, true);
        assert!(c.count().is_err());
    }

    #[test]
    fn lite_fields_read_what_the_full_decoder_reads() {
        let class = |id, name: &str, kind, fields| Class {
            id,
            name: Arc::from(name),
            super_type: None,
            kind,
            fields,
        };
        let field = |name: &str, class_id, constant_pool, array| Field {
            name: Arc::from(name),
            class_id,
            constant_pool,
            array,
        };
        let mut md = Metadata::default();
        md.classes
            .insert(1, class(1, "java.lang.String", Kind::String, vec![]));
        md.classes.insert(2, class(2, "long", Kind::Long, vec![]));
        let fields = vec![
            field("utf8", 1, false, false),
            field("n", 2, false, false),
            field("utf16", 1, false, false),
            field("latin1", 1, false, false),
            field("pooled", 1, true, false),
            field("longs", 2, false, true),
            field("utf16_wide", 1, false, false),
        ];
        let ev = class(10, "ev", Kind::Object, fields);
        md.classes.insert(10, ev.clone());
        let data = [
            3, 2, b'h', b'i', // "hi" in UTF-8
            0xac, 0x02, // 300
            4, 2, 0x41, 0x42, // "AB" as UTF-16 units
            5, 1, 0xe9, // "é" in Latin-1: not borrowed
            7,    // pool key 7
            2, 1, 2, // [1, 2]
            4, 1, 0xe9, 0x01, // U+00E9 as one UTF-16 unit of two varint bytes
        ];
        let dec = Decoder { md: &md };
        let mut full = Cursor::new(&data, 0, true);
        let values = dec.event(&mut full, &ev).unwrap();
        let mut lite = Cursor::new(&data, 0, true);
        let mut out = Vec::new();
        dec.event_lite(&mut lite, &ev, &mut out).unwrap();
        assert_eq!(lite.pos, full.pos);
        assert_eq!(lite.pos, data.len());
        assert_eq!(out.len(), values.len());
        assert!(matches!(out[0], Lite::Str("hi")));
        assert!(matches!(out[1], Lite::Int(300)));
        assert!(matches!(out[2], Lite::Str("AB")));
        assert!(matches!(out[3], Lite::Other));
        assert!(matches!(out[4], Lite::Ref(1, 7)));
        assert!(matches!(out[5], Lite::Other));
        assert!(matches!(out[6], Lite::Other));
        assert!(matches!(&values[6], Value::Str(s) if &**s == "é"));
        // By a plan: the same fields, the same bytes read.
        let plan = dec.lite_plan(&ev);
        let mut planned = Cursor::new(&data, 0, true);
        let mut out2 = Vec::new();
        dec.event_lite_planned(&mut planned, &ev, &plan, &mut out2)
            .unwrap();
        assert_eq!(planned.pos, full.pos);
        assert_eq!(format!("{out:?}"), format!("{out2:?}"));
        // Picked: each field alone, then all in reverse, read as `event_lite` reads
        // them, the others skipped to the same end; cut anywhere, both refuse alike.
        let mut wanted: Vec<Vec<Option<usize>>> =
            (0..ev.fields.len()).map(|i| vec![Some(i)]).collect();
        wanted.push((0..ev.fields.len()).rev().map(Some).collect());
        wanted.push(vec![None, Some(2)]);
        for w in &wanted {
            let plan = dec.pick_plan(&ev, w, true);
            let mut picked = Cursor::new(&data, 0, true);
            let mut got = vec![Lite::Null; w.len()];
            dec.event_pick(&mut picked, &ev, &plan, &mut got).unwrap();
            assert_eq!(picked.pos, full.pos, "{w:?}");
            for (slot, f) in w.iter().enumerate() {
                let want = f.map_or("Null".to_string(), |f| format!("{:?}", out[f]));
                assert_eq!(format!("{:?}", got[slot]), want, "{w:?}");
            }
            // Big-endian integers (a 1.x chunk): a plan of generic steps, the same reads.
            let raw_plan = dec.pick_plan(&ev, w, false);
            for cut in 0..data.len() {
                for (compressed, plan) in [(true, &plan), (false, &raw_plan)] {
                    let mut lite = Cursor::new(&data[..cut], 0, compressed);
                    let mut picked = Cursor::new(&data[..cut], 0, compressed);
                    let (a, b) = (
                        dec.event_lite(&mut lite, &ev, &mut out2).is_err(),
                        dec.event_pick(&mut picked, &ev, plan, &mut got).is_err(),
                    );
                    assert_eq!(a, b, "cut at {cut}, compressed {compressed}");
                    if !a {
                        assert_eq!(lite.pos, picked.pos, "cut at {cut}");
                    }
                }
            }
        }
        // Cut short: both refuse.
        let mut c = Cursor::new(&data[..9], 0, true);
        assert!(dec.event(&mut c, &ev).is_err());
        let mut c = Cursor::new(&data[..9], 0, true);
        assert!(dec.event_lite(&mut c, &ev, &mut out).is_err());
        let mut c = Cursor::new(&data[..9], 0, true);
        assert!(dec
            .event_lite_planned(&mut c, &ev, &plan, &mut out)
            .is_err());
    }

    #[test]
    fn strings_in_every_encoding() {
        let data = [3u8, 2, b'h', b'i', 5, 1, 0xe9, 4, 1, 0x41, 2, 7, 0, 1];
        let mut c = Cursor::new(&data, 0, true);
        let mut next = || match c.string().unwrap() {
            StrOrRef::Str(s) => s.to_string(),
            StrOrRef::Ref(k) => format!("ref {k}"),
            StrOrRef::Null => "null".into(),
        };
        assert_eq!(next(), "hi");
        assert_eq!(next(), "é");
        assert_eq!(next(), "A");
        assert_eq!(next(), "ref 7");
        assert_eq!(next(), "null");
        assert_eq!(next(), "");
    }
}
