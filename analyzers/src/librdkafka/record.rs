//! One librdkafka record found in a line, and the checks of librdkafka's own prefixes
//! (`[thrd:<name>]: `, `<broker>: `) both finders share: the fast path for librdkafka's
//! stderr format (`raw.rs`) and the finder for any wrapper.

use super::event::Event;
use super::timestamp::Timestamp;

/// One librdkafka record found in a line.
#[derive(Debug, Clone, PartialEq)]
pub struct Record<'a> {
    /// What librdkafka said.
    pub event: Event<'a>,
    /// The best time the line offers.
    pub timestamp: Option<Timestamp>,
    /// librdkafka's facility (`SEND`, `RECV`, `BACKOFF`, `FETCH`, …) when the wrapper
    /// kept it before the message.
    pub facility: Option<&'a str>,
    /// The client instance name (`rdkafka#producer-1`, `<client.id>#consumer-2`).
    pub client: Option<&'a str>,
    /// The librdkafka thread that logged (`[thrd:<name>]`).
    pub thread: Option<&'a str>,
    /// The broker handle's name (`host:port/<nodeid>`, `…/bootstrap`, `TxnCoordinator/1`),
    /// as printed: a JSON wrapper may have escaped its `/` as `\/`.
    pub broker: Option<&'a str>,
    /// Byte range of the message body in the line.
    pub body: std::ops::Range<usize>,
}

/// Index of the `]: ` that closes a `[thrd:` name (names may hold `]`, as in
/// `[::1]:9092/1`).
#[inline]
pub(super) fn thread_end(s: &[u8]) -> Option<usize> {
    memchr::memchr_iter(b']', s).find(|&i| s[i + 1..].starts_with(b": "))
}

/// librdkafka's broker log names: `[proto://]host:port/<id|bootstrap>`,
/// `TxnCoordinator/<id>`, `GroupCoordinator/<id>`, `:0/internal`.
#[inline]
pub(super) fn is_broker_name(tok: &[u8]) -> bool {
    if tok.is_empty() || tok.len() > 300 {
        return false;
    }
    // One pass: a `/` somewhere, no whitespace anywhere.
    let mut slash = false;
    for &b in tok {
        slash |= b == b'/';
        if b.is_ascii_whitespace() {
            return false;
        }
    }
    slash
}
