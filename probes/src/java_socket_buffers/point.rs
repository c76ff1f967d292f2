//! A point of the sweep: a side (producer or consumer), its size and the socket buffer it
//! sets, written in kafka-clients' names.

use kgap_analyzers::findings::{java_receive_buffer as receive, java_send_buffer as send};
use serde::ser::{Serialize, SerializeMap, Serializer};

/// Which client a point runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Produce,
    Consume,
}

/// The socket buffer a point sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Buffer {
    /// kafka-clients' fixed default (131072 to send, 65536 to receive).
    Fixed,
    /// -1: the kernel autotunes it.
    Os,
}

/// One point: a side, its size (batch.size or record bytes) and the buffer it sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Point {
    pub side: Side,
    pub size_bytes: u64,
    pub buffer: Buffer,
}

impl Point {
    /// The kafka-clients setting this point varies.
    pub fn knob(&self) -> &'static str {
        match self.side {
            Side::Produce => "send.buffer.bytes",
            Side::Consume => "receive.buffer.bytes",
        }
    }

    /// Its value: the fixed default, or -1.
    pub fn value(&self) -> i64 {
        match (self.buffer, self.side) {
            (Buffer::Os, _) => -1,
            (Buffer::Fixed, Side::Produce) => send::DEFAULT_SEND_BUFFER_BYTES as i64,
            (Buffer::Fixed, Side::Consume) => receive::DEFAULT_RECEIVE_BUFFER_BYTES as i64,
        }
    }
}

/// `{"side": "produce", "batch.size": 131072, "send.buffer.bytes": 131072}`: each side's
/// parameters in kafka-clients' names.
impl Serialize for Point {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(3))?;
        match self.side {
            Side::Produce => {
                m.serialize_entry("side", "produce")?;
                m.serialize_entry("batch.size", &self.size_bytes)?;
            }
            Side::Consume => {
                m.serialize_entry("side", "consume")?;
                m.serialize_entry("record_bytes", &self.size_bytes)?;
            }
        }
        m.serialize_entry(self.knob(), &self.value())?;
        m.end()
    }
}
