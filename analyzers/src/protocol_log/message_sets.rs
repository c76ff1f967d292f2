//! The order-free part of analyze-protocol-log's accounting: a producer's MessageSet
//! records (`Produce MessageSet with <n> message(s)`, `… delivered`, `… encountered
//! error`). Counts, the time span and the messages-per-set distribution come out the same
//! in any order, so the block front end's parsing threads take these records themselves
//! (half a producer's records with `debug=protocol,msg`), and the analyzer takes them
//! with this same code on the line-at-a-time path.

use crate::findings::diagnoses::protocol_log::CEILING_MAX_REQUEST_BYTES;
use crate::librdkafka::pipeline::Tally;
use crate::librdkafka::{EventOf, Timestamp};
use crate::vocab::report::{Dist, Span, TimestampCounts};

/// MessageSet records, counted.
#[derive(Debug, Clone, Default)]
pub struct MessageSetTally {
    /// `--from`/`--to`: records outside are counted as such, and nothing else.
    window_start: Option<f64>,
    window_end: Option<f64>,
    pub(crate) records: u64,
    pub(crate) outside: u64,
    pub(crate) span: Span,
    pub(crate) ts: TimestampCounts,
    pub(crate) msgs_per_set: Dist,
    /// Produce MessageSets larger than the per-request ceiling's requests can be.
    pub(crate) large_sets: u64,
    pub(crate) delivered: u64,
    pub(crate) errors: u64,
}

impl MessageSetTally {
    pub(crate) fn new(window_start: Option<f64>, window_end: Option<f64>) -> Self {
        MessageSetTally {
            window_start,
            window_end,
            ..MessageSetTally::default()
        }
    }

    /// Another tally's records as if taken here.
    pub(crate) fn merge(&mut self, other: &MessageSetTally) {
        self.records += other.records;
        self.outside += other.outside;
        self.span.merge(&other.span);
        self.ts.merge(&other.ts);
        self.msgs_per_set.merge(&other.msgs_per_set);
        self.large_sets += other.large_sets;
        self.delivered += other.delivered;
        self.errors += other.errors;
    }
}

/// Which MessageSet record, with its message count.
enum SetRecord {
    Produced(u64, u64),
    Delivered,
    Failed,
}

impl Tally for MessageSetTally {
    #[inline]
    fn take<S>(&mut self, event: &EventOf<S>, timestamp: Option<Timestamp>) -> bool {
        let set = match event {
            EventOf::ProduceMessageSet {
                messages, bytes, ..
            } => SetRecord::Produced(*messages, *bytes),
            EventOf::MessageSetDelivered { .. } => SetRecord::Delivered,
            EventOf::MessageSetError { .. } => SetRecord::Failed,
            _ => return false,
        };
        self.records += 1;
        if let Some(t) = timestamp.map(|t| t.secs) {
            let before = self.window_start.is_some_and(|s| t < s);
            let after = self.window_end.is_some_and(|e| t > e);
            if before || after {
                self.outside += 1;
                return true;
            }
            self.span.add(t);
        }
        self.ts.add(timestamp.map(|t| t.source));
        match set {
            SetRecord::Produced(messages, bytes) => {
                self.msgs_per_set.record(messages);
                self.large_sets += (bytes > CEILING_MAX_REQUEST_BYTES) as u64;
            }
            SetRecord::Delivered => self.delivered += 1,
            SetRecord::Failed => self.errors += 1,
        }
        true
    }
}
