//! The points set on top of the sweep: Java's two fixes for large batches (`--java-fixes`,
//! finding java-large-batch-copy) and the knobs the post tried first against the ceiling
//! (`--controls`, finding gap1-negative-controls). Each belongs to one client.

use kgap_analyzers::findings::probe_result::Client;
use serde::Serialize;

/// The value the post did not give for queue.buffering.backpressure.threshold; librdkafka's
/// default is 1 (build a MessageSet only when no request waits), so 100 lets it batch ahead.
pub const BACKPRESSURE_THRESHOLD: &str = "100";

/// One knob a point sets beside its batch.size and partitions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Knob {
    /// Java: send.buffer.bytes=-1, the kernel autotunes the socket's send buffer.
    SendBufferAuto,
    /// Java: max.request.size=1100000, one batch per request (as librdkafka sends).
    MaxRequestSize,
    /// Java: both fixes together (the post: 984k).
    BothFixes,
    /// librdkafka: max.in.flight=5 (Java's default) instead of librdkafka's 1000000.
    InFlight5,
    /// librdkafka: socket.nagle.disable=true (Java always sets TCP_NODELAY).
    NagleOff,
    /// librdkafka: queue.buffering.backpressure.threshold raised from 1.
    Backpressure,
}

impl Knob {
    pub const JAVA_FIXES: [Knob; 3] = [Knob::SendBufferAuto, Knob::MaxRequestSize, Knob::BothFixes];
    pub const CONTROLS: [Knob; 3] = [Knob::InFlight5, Knob::NagleOff, Knob::Backpressure];

    pub fn client(self) -> Client {
        match self {
            Knob::SendBufferAuto | Knob::MaxRequestSize | Knob::BothFixes => Client::Java,
            Knob::InFlight5 | Knob::NagleOff | Knob::Backpressure => Client::Librdkafka,
        }
    }

    /// The client properties the knob sets (after the point's own).
    pub fn settings(self) -> Vec<(&'static str, &'static str)> {
        match self {
            Knob::SendBufferAuto => vec![("send.buffer.bytes", "-1")],
            Knob::MaxRequestSize => vec![("max.request.size", "1100000")],
            Knob::BothFixes => vec![("send.buffer.bytes", "-1"), ("max.request.size", "1100000")],
            Knob::InFlight5 => vec![("max.in.flight.requests.per.connection", "5")],
            Knob::NagleOff => vec![("socket.nagle.disable", "true")],
            Knob::Backpressure => vec![(
                "queue.buffering.backpressure.threshold",
                BACKPRESSURE_THRESHOLD,
            )],
        }
    }

    /// `send.buffer.bytes=-1`, `max.in.flight=5 …`: how tables and verdicts name the point.
    pub fn describe(self) -> String {
        match self {
            Knob::InFlight5 => "max.in.flight=5".to_string(),
            k => k
                .settings()
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(" "),
        }
    }

    /// The short name in a table's batch.size column (`1M sndbuf=-1`); the notes below the
    /// table give the settings in full.
    pub fn short(self) -> &'static str {
        match self {
            Knob::SendBufferAuto => "sndbuf=-1",
            Knob::MaxRequestSize => "maxreq=1.1M",
            Knob::BothFixes => "both fixes",
            Knob::InFlight5 => "inflight=5",
            Knob::NagleOff => "nagle off",
            Knob::Backpressure => "bp=100",
        }
    }

    /// The suffix of a run folder's name.
    pub fn slug(self) -> &'static str {
        match self {
            Knob::SendBufferAuto => "sndbuf-os",
            Knob::MaxRequestSize => "maxreq-1100000",
            Knob::BothFixes => "both-fixes",
            Knob::InFlight5 => "inflight-5",
            Knob::NagleOff => "nagle-off",
            Knob::Backpressure => "backpressure-100",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_knob_belongs_to_one_client_and_names_its_settings() {
        for k in Knob::JAVA_FIXES {
            assert_eq!(k.client(), Client::Java);
        }
        for k in Knob::CONTROLS {
            assert_eq!(k.client(), Client::Librdkafka);
        }
        assert_eq!(
            Knob::BothFixes.describe(),
            "send.buffer.bytes=-1 max.request.size=1100000"
        );
        assert_eq!(Knob::InFlight5.describe(), "max.in.flight=5");
    }
}
