//! One point of the sweep: K producers at one buffer.memory.

use serde::{Serialize, Serializer};

/// One point: K producers at one buffer.memory.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
pub struct Point {
    /// None: kafka-clients' default (32 MB), written `"default"`.
    #[serde(rename = "buffer.memory", serialize_with = "default_or_bytes")]
    pub buffer_memory: Option<u64>,
    pub producers: u32,
}

fn default_or_bytes<S: Serializer>(b: &Option<u64>, s: S) -> std::result::Result<S::Ok, S::Error> {
    match b {
        Some(b) => s.serialize_u64(*b),
        None => s.serialize_str("default"),
    }
}
