//! The order-free part of an analyzer's accounting, which the parsing threads do
//! themselves.

use crate::librdkafka::{EventOf, Timestamp};

/// Accounting that gives the same result whatever the order of the records it takes
/// (counts, extremes, distributions). A parsing thread offers it each raw line's record:
/// one it takes never crosses to the analyzing thread (issue 19: a producer's MessageSet
/// lines are half its records, and the in-order feed was the bottleneck). The sink does
/// the same accounting with the same code on the line-at-a-time path.
pub trait Tally: Send {
    /// Take the record `event` at `timestamp` (a raw line's only record) when this tally
    /// accounts for it whole.
    fn take<S>(&mut self, event: &EventOf<S>, timestamp: Option<Timestamp>) -> bool;
}

/// A sink with no order-free part: every record goes to it.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoTally;

impl Tally for NoTally {
    #[inline]
    fn take<S>(&mut self, _: &EventOf<S>, _: Option<Timestamp>) -> bool {
        false
    }
}
