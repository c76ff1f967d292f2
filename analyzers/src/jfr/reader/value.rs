//! Values decoded the full way: an event's fields as [`Value`]s, inline objects and
//! arrays included.

use super::cursor::{Cursor, DResult, DecodeError, Kind, StrOrRef};
use super::metadata::{Class, Field, Metadata, MAX_DEPTH};
use std::sync::Arc;

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
