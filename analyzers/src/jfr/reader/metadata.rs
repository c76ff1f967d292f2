//! A chunk's metadata: the classes and their fields, parsed from the element tree
//! over its string table.

use super::cursor::{Cursor, DResult, DecodeError, Kind, StrOrRef};
use crate::engine::fast_hash::FastMap;
use std::sync::Arc;

/// Deepest nesting of inline objects decoded (metadata could declare a class that
/// contains itself; real ones nest 2 or 3 deep).
pub(super) const MAX_DEPTH: u32 = 24;

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
