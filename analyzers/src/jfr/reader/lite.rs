//! Events read without allocating: fields as [`Lite`]s, by a plan made once per
//! class ([`LiteStep`], [`Pick`]), with what cannot be read this way left to the
//! full decoder.

use super::cursor::{Cursor, DResult, DecodeError, Kind};
use super::metadata::{Class, Field, MAX_DEPTH};
use super::value::{Decoder, Value};

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
    /// once per chunk, not a class lookup per field of every event (docs/perf.md).
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
    pub(super) fn skip_value(&self, c: &mut Cursor<'_>, class_id: i64, depth: u32) -> DResult<()> {
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

#[cfg(test)]
mod tests {
    use super::super::metadata::Metadata;
    use super::*;
    use std::sync::Arc;

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
}
