//! The postmortem's pipeline, deserialize → enrich → keyed aggregation, in the three shapes
//! a user compares. Each does the same work on the same JSON record and produces the same
//! enriched line for the writer; they differ only in who owns each byte:
//! - [`Copying`]: the first version. The payload copied into a `Vec<u8>`, a trimmed copy of
//!   it, a `String` for the JSON parser, a `serde_json::Value` (a map, `String` keys and
//!   values), the key cloned into the aggregation map, the line in a fresh `String`, sent as
//!   a `Box` over an unbounded channel.
//! - [`Borrowed`]: the fixes. The payload borrowed from librdkafka's message, the record
//!   parsed in place (`&str` fields), the key looked up by `&str` (a copy only the first
//!   time a key is seen), the line written into one shared buffer and sent as a
//!   `bytes::Bytes` view of it.
//! - [`Ring`]: the line written into a pre-allocated slot, the slot's index sent.

use bytes::{Bytes, BytesMut};
use serde::Deserialize;
use std::collections::HashMap;

/// The processing a record gets, per variant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Variant {
    Copying,
    Borrowed,
    Ring,
}

impl Variant {
    pub fn name(self) -> &'static str {
        match self {
            Variant::Copying => "copying",
            Variant::Borrowed => "borrowed",
            Variant::Ring => "ring",
        }
    }
}

/// A record that is not the JSON the pipeline expects.
#[derive(Debug, thiserror::Error)]
#[error("not a JSON record with key, event, seq and value: {0}")]
pub struct BadRecord(String);

/// Per-key aggregate: records and value bytes.
#[derive(Debug, Clone, Copy, Default)]
pub struct Agg {
    pub records: u64,
    pub value_bytes: u64,
}

/// The record's fields, borrowed from the payload.
#[derive(Deserialize)]
struct Parsed<'a> {
    #[serde(borrow)]
    key: &'a str,
    #[serde(borrow)]
    event: &'a str,
    seq: u64,
    #[serde(borrow)]
    value: &'a str,
}

/// The length without trailing padding (the validation step's trim).
pub fn trimmed_len(payload: &[u8]) -> usize {
    payload
        .iter()
        .rposition(|b| !b.is_ascii_whitespace())
        .map_or(0, |i| i + 1)
}

/// The enriched line every variant writes (same bytes whatever the variant).
fn write_line(
    out: &mut impl std::fmt::Write,
    key: &str,
    event: &str,
    seq: u64,
    value: &str,
    partition: i32,
    agg: &Agg,
) {
    let words = value.split(' ').count();
    let _ = writeln!(
        out,
        r#"{{"key":"{key}","event":"{event}","seq":{seq},"words":{words},"value_bytes":{},"partition":{partition},"key_records":{},"key_value_bytes":{}}}"#,
        value.len(),
        agg.records,
        agg.value_bytes
    );
}

/// A completed record of the copying pipeline: what its channel carries.
pub struct Record {
    pub key: String,
    pub line: String,
}

/// The first version: a fresh buffer at each step.
#[derive(Default)]
pub struct Copying {
    pub agg: HashMap<String, Agg>,
}

impl Copying {
    pub fn process(&mut self, payload: &[u8], partition: i32) -> Result<Box<Record>, BadRecord> {
        let bad = |e: &dyn std::fmt::Display| BadRecord(e.to_string());
        // The deserializer's payload, validation's trimmed copy, enrichment's String.
        let owned: Vec<u8> = payload.to_vec();
        let trimmed: Vec<u8> = owned[..trimmed_len(&owned)].to_vec();
        let text = String::from_utf8(trimmed.clone()).map_err(|e| bad(&e))?;
        let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| bad(&e))?;
        let field = |k: &str| v.get(k).and_then(|x| x.as_str()).map(str::to_string);
        let (Some(key), Some(event), Some(value)) = (field("key"), field("event"), field("value"))
        else {
            return Err(BadRecord("a field is missing".into()));
        };
        let seq = v
            .get("seq")
            .and_then(|x| x.as_u64())
            .ok_or_else(|| bad(&"no seq"))?;
        let agg = self.agg.entry(key.clone()).or_default();
        agg.records += 1;
        agg.value_bytes += value.len() as u64;
        let mut line = String::new();
        write_line(&mut line, &key, &event, seq, &value, partition, agg);
        Ok(Box::new(Record { key, line }))
    }
}

/// Capacity the borrowed pipeline's shared output buffer is refilled with.
pub const OUT_CHUNK: usize = 64 * 1024;

/// The fixes: borrowed payload, parsed in place, keys copied once, lines in one buffer.
#[derive(Default)]
pub struct Borrowed {
    pub agg: HashMap<Box<str>, Agg>,
    out: BytesMut,
}

/// Looks the key up by `&str`; copies it only the first time it is seen.
fn aggregate<'m>(map: &'m mut HashMap<Box<str>, Agg>, key: &str, value: &str) -> &'m Agg {
    if !map.contains_key(key) {
        map.insert(key.into(), Agg::default());
    }
    let agg = map.get_mut(key).expect("inserted");
    agg.records += 1;
    agg.value_bytes += value.len() as u64;
    agg
}

fn parse(payload: &[u8]) -> Result<Parsed<'_>, BadRecord> {
    serde_json::from_slice(&payload[..trimmed_len(payload)]).map_err(|e| BadRecord(e.to_string()))
}

impl Borrowed {
    /// The enriched line as a view of the shared buffer (no allocation but a new chunk when
    /// the buffer is full).
    pub fn process(&mut self, payload: &[u8], partition: i32) -> Result<Bytes, BadRecord> {
        let r = parse(payload)?;
        let agg = aggregate(&mut self.agg, r.key, r.value);
        if self.out.capacity() - self.out.len() < 1024 {
            self.out.reserve(OUT_CHUNK);
        }
        write_line(
            &mut self.out,
            r.key,
            r.event,
            r.seq,
            r.value,
            partition,
            agg,
        );
        Ok(self.out.split().freeze())
    }
}

/// Bytes of one ring slot: an enriched line fits (a longer one grows its slot once).
pub const SLOT_BYTES: usize = 512;

/// The ring: the line written into a pre-allocated slot.
#[derive(Default)]
pub struct Ring {
    pub agg: HashMap<Box<str>, Agg>,
}

impl Ring {
    pub fn process(
        &mut self,
        payload: &[u8],
        partition: i32,
        slot: &mut String,
    ) -> Result<(), BadRecord> {
        let r = parse(payload)?;
        let agg = aggregate(&mut self.agg, r.key, r.value);
        slot.clear();
        write_line(slot, r.key, r.event, r.seq, r.value, partition, agg);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kit::payload::{PayloadKind, Pool};

    #[test]
    fn every_variant_writes_the_same_line() {
        let pool = Pool::with_count(256, PayloadKind::Json, 64);
        let (mut c, mut b, mut r) = (Copying::default(), Borrowed::default(), Ring::default());
        let mut slot = String::with_capacity(SLOT_BYTES);
        for i in 0..200 {
            let p = pool.get(i);
            let line = c.process(p, 3).unwrap().line;
            let view = b.process(p, 3).unwrap();
            r.process(p, 3, &mut slot).unwrap();
            assert_eq!(line.as_bytes(), &view[..]);
            assert_eq!(line, slot);
            assert!(
                line.ends_with("}\n") && line.contains(r#""partition":3"#),
                "{line}"
            );
        }
        let hot = c.agg.values().map(|a| a.records).max().unwrap();
        assert!(hot > 3, "keys repeat: {hot}");
        assert_eq!(c.agg.len(), b.agg.len());
    }

    #[test]
    fn a_bad_record_is_an_error_not_a_panic() {
        assert!(Copying::default().process(b"{\"key\":1}", 0).is_err());
        assert!(Borrowed::default().process(b"not json   ", 0).is_err());
        assert!(Ring::default().process(b"", 0, &mut String::new()).is_err());
        assert_eq!(trimmed_len(b"ab  \n"), 2);
    }
}
