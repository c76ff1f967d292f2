//! JFR primitives read from bytes, bounds-checked: compressed and big-endian
//! integers, floats, counts and strings, and the primitive kinds of field.

use std::sync::Arc;

/// A decoding failure inside one event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError(pub &'static str);

pub(super) type DResult<T> = Result<T, DecodeError>;

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

    pub(super) fn take(&mut self, n: usize) -> DResult<&'a [u8]> {
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
    /// slice in one go (a bounds-checked `u8()` a byte was a large share of a socket
    /// recording's cost: docs/perf.md); at the end of the data the cursor stops there, as
    /// byte-by-byte reading did.
    #[inline(always)]
    pub fn varint(&mut self) -> DResult<i64> {
        // Most varints end within the next 8 bytes: found and gathered with a few
        // operations on one load, not a branch a byte (docs/perf.md).
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
    pub(super) fn skip_primitive(&mut self, kind: Kind) -> DResult<()> {
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
    pub(super) fn of(name: &str) -> Kind {
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
