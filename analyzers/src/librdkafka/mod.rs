//! Finding librdkafka's debug records in any log line, whatever wrapped them.
//!
//! Wrappers put their own things around librdkafka's message: the raw stderr format
//! (`%7|<secs>.<ms>|<FAC>|<client>| <message>`), JSON objects, .NET's
//! `7|<date>|<client>|<FAC>| <message>`, rust-rdkafka through the `log` crate,
//! syslog/journald/docker prefixes, application loggers, strace captures. Rather
//! than knowing each of them, the finder looks for the message *body*
//! (`Sent …Request (…)`, `Received …Response (…)`, `Fetch backoff for …`, …) anywhere
//! in the line, parses it strictly, and only then looks around it for the rest: the
//! `[thrd:<name>]: ` and `<broker>: ` prefixes librdkafka itself writes, the best
//! timestamp, the facility and the client name.
//!
//! ```
//! use kgap_analyzers::librdkafka::{find_record, Event, TimestampSource};
//!
//! let line = br#"{"ts":"2024-05-01T10:00:00.250Z","fac":"RECV","message":"[thrd:k1:9092/1]: k1:9092/1: Received ProduceResponse (v10, 62 bytes, CorrId 4, rtt 0.39ms)"}"#;
//! let rec = find_record(line).expect("a librdkafka record");
//! assert_eq!(rec.broker, Some("k1:9092/1"));
//! assert_eq!(rec.thread, Some("k1:9092/1"));
//! assert_eq!(rec.facility, Some("RECV"));
//! assert_eq!(rec.timestamp.unwrap().source, TimestampSource::Wrapper);
//! assert!(matches!(rec.event, Event::Received { api: "Produce", corr_id: 4, .. }));
//! ```

mod body;
mod event;
pub(crate) mod pipeline;
mod raw;
mod record;
pub mod requests;
mod scan;
mod timestamp;

use std::sync::OnceLock;

use aho_corasick::{AhoCorasick, MatchKind};

pub(crate) use body::{corr_id_tail_at, CorrIdTail};
pub use event::{Event, EventOf};
#[cfg(test)]
pub(crate) use raw::stamp_and_facility as raw_stamp_and_facility;
pub(crate) use raw::StampMemo;
pub use raw::{raw_stderr_record, HeadCache};
pub use record::Record;
use record::{is_broker_name, thread_end};
pub use timestamp::{librdkafka_stamp, wrapper_stamp, Timestamp, TimestampSource};

/// Finds librdkafka records in lines. Build one and reuse it ([`find_record`] does).
pub struct RecordFinder {
    anchors: AhoCorasick,
    thrd: memchr::memmem::FinderRev<'static>,
}

impl Default for RecordFinder {
    fn default() -> Self {
        Self::new()
    }
}

impl RecordFinder {
    /// A finder for every body the analyzers understand.
    pub fn new() -> Self {
        let anchors = AhoCorasick::builder()
            .match_kind(MatchKind::LeftmostFirst)
            .build(body::ANCHORS)
            .expect("static anchor set builds");
        RecordFinder {
            anchors,
            thrd: memchr::memmem::FinderRev::new(b"[thrd:"),
        }
    }

    /// The first record in `line` whose body starts at or after byte `from`; the text
    /// between `from` and the body is taken as that record's prefix.
    pub fn find_from<'a>(&self, line: &'a [u8], from: usize) -> Option<Record<'a>> {
        if from == 0 {
            if let Some(found) = raw_stderr_record(line) {
                return found;
            }
        }
        let from = from.min(line.len());
        for m in self.anchors.find_iter(&line[from..]) {
            let at = from + m.start();
            if let Some(parsed) = body::parse_at(line, m.pattern().as_usize(), at) {
                if parsed.start < from {
                    continue;
                }
                return Some(self.dress(line, from, parsed));
            }
        }
        None
    }

    /// Where the first body anchor (`Sent `, `Fetch `, …) in `hay` starts. Every record's
    /// body holds one, so a line without any cannot hold a record: the block front end
    /// ([`crate::librdkafka::pipeline`]) searches whole blocks with this and skips such lines.
    pub(crate) fn anchor_at(&self, hay: &[u8]) -> Option<usize> {
        self.anchors.find(hay).map(|m| m.start())
    }

    /// The first record in `line`.
    pub fn find<'a>(&self, line: &'a [u8]) -> Option<Record<'a>> {
        self.find_from(line, 0)
    }

    /// Every record in `line` (a JSON array on one line can hold several).
    pub fn records<'f, 'a>(&'f self, line: &'a [u8]) -> Records<'f, 'a> {
        Records {
            finder: self,
            line,
            from: 0,
            done: false,
        }
    }

    /// Add what surrounds the body: thread, broker, time, facility, client.
    fn dress<'a>(&self, line: &'a [u8], from: usize, parsed: body::Parsed<'a>) -> Record<'a> {
        let seg = &line[from..parsed.start];
        let mut thread = None;
        let mut broker = None;
        // Where the wrapper's part of the line ends and librdkafka's message begins.
        let mut msg_start = seg.len();
        let mut broker_region_start = None;
        if let Some(t) = self.thrd.rfind(seg) {
            let name_start = t + b"[thrd:".len();
            if let Some(close) = thread_end(&seg[name_start..]) {
                thread = std::str::from_utf8(&seg[name_start..name_start + close]).ok();
                msg_start = t;
                broker_region_start = Some(name_start + close + 3);
            }
        }
        // `<broker>: ` right before the body (rd_rkb_dbg's prefix).
        if let Some(head) = seg.strip_suffix(b": ") {
            let lo = broker_region_start.unwrap_or(0).min(head.len());
            let tok_start = head[lo..]
                .iter()
                .rposition(|&b| is_token_boundary(b))
                .map(|p| lo + p + 1)
                .unwrap_or(lo);
            let tok = &head[tok_start..];
            let whole_region = broker_region_start.map_or(true, |s| s == tok_start);
            if whole_region && is_broker_name(tok) {
                broker = std::str::from_utf8(tok).ok();
                if broker_region_start.is_none() {
                    msg_start = msg_start.min(tok_start);
                }
            }
        }
        let prefix = &seg[..msg_start];
        let timestamp = if let Some(secs) = librdkafka_stamp(prefix) {
            Some(Timestamp {
                secs,
                source: TimestampSource::Librdkafka,
            })
        } else {
            let after = &line[parsed.end..line.len().min(parsed.end + 256)];
            wrapper_stamp(prefix)
                .or_else(|| {
                    if from == 0 {
                        wrapper_stamp(after)
                    } else {
                        None
                    }
                })
                .map(|secs| Timestamp {
                    secs,
                    source: TimestampSource::Wrapper,
                })
        };
        Record {
            event: parsed.event,
            timestamp,
            facility: facility(prefix),
            client: client_name(prefix),
            thread,
            broker,
            body: parsed.start..parsed.end,
        }
    }
}

/// Iterator over the records of one line.
pub struct Records<'f, 'a> {
    finder: &'f RecordFinder,
    line: &'a [u8],
    from: usize,
    done: bool,
}

impl<'a> Iterator for Records<'_, 'a> {
    type Item = Record<'a>;
    fn next(&mut self) -> Option<Record<'a>> {
        if self.done {
            return None;
        }
        if self.from == 0 {
            // librdkafka's own format holds exactly one message per line.
            if let Some(found) = raw_stderr_record(self.line) {
                self.done = true;
                return found;
            }
        }
        let rec = self.finder.find_from(self.line, self.from)?;
        self.from = rec.body.end.max(self.from + 1);
        Some(rec)
    }
}

/// The first librdkafka record in `line`, using a shared finder.
pub fn find_record(line: &[u8]) -> Option<Record<'_>> {
    static FINDER: OnceLock<RecordFinder> = OnceLock::new();
    FINDER.get_or_init(RecordFinder::new).find(line)
}

/// JSON encoders that escape `/` (Java's, PHP's by default) turn
/// `Fetch 6/6/6 toppar(s)` into `Fetch 6\/6\/6 toppar(s)`. When `line` holds `\/`,
/// write it with those unescaped into `out` and return true; otherwise leave `out`
/// alone and return false (the common case costs one search).
pub fn unescape_json_slashes(line: &[u8], out: &mut Vec<u8>) -> bool {
    let escaped = |i: usize| line.get(i + 1) == Some(&b'/');
    let Some(first) = memchr::memchr_iter(b'\\', line).find(|&i| escaped(i)) else {
        return false;
    };
    out.clear();
    out.extend_from_slice(&line[..first]);
    let mut from = first;
    for i in memchr::memchr_iter(b'\\', &line[first..]).map(|i| i + first) {
        if i >= from && escaped(i) {
            out.extend_from_slice(&line[from..i]);
            from = i + 1; // keep the '/', drop the '\\'
        }
    }
    out.extend_from_slice(&line[from..]);
    true
}

fn is_token_boundary(b: u8) -> bool {
    b.is_ascii_whitespace() || matches!(b, b'"' | b'|' | b'\'' | b'{' | b',' | b'>' | b'=')
}

/// The last all-capitals word before the message: librdkafka's facility in every
/// wrapper that keeps it (`|RECV|`, `"fac":"RECV"`, `LOG-7-FETCH:`, `librdkafka: RECV`).
fn facility(prefix: &[u8]) -> Option<&str> {
    const NOT_FACILITIES: &[&[u8]] = &[
        b"DEBUG",
        b"INFO",
        b"WARN",
        b"WARNING",
        b"ERROR",
        b"ERR",
        b"TRACE",
        b"NOTICE",
        b"CRIT",
        b"CRITICAL",
        b"FATAL",
        b"ALERT",
        b"EMERG",
        b"LOG",
        b"RDKAFKA",
        b"UTC",
        b"GMT",
        b"CET",
        b"CEST",
        b"PST",
        b"PDT",
        b"EST",
        b"EDT",
        b"JSON",
        b"STDERR",
        b"STDOUT",
    ];
    let mut end = prefix.len();
    while end > 0 {
        // Find the previous word (alphanumerics and `_`).
        while end > 0 && !is_word_byte(prefix[end - 1]) {
            end -= 1;
        }
        let mut start = end;
        while start > 0 && is_word_byte(prefix[start - 1]) {
            start -= 1;
        }
        let word = &prefix[start..end];
        let capitals = word.first().is_some_and(u8::is_ascii_uppercase)
            && word
                .iter()
                .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || *b == b'_');
        if capitals && (3..=16).contains(&word.len()) && !NOT_FACILITIES.contains(&word) {
            return std::str::from_utf8(word).ok();
        }
        end = start;
    }
    None
}

fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// `<name>#producer-<n>` / `<name>#consumer-<n>`: librdkafka's instance name.
fn client_name(prefix: &[u8]) -> Option<&str> {
    let hash = memchr::memrchr_iter(b'#', prefix).find(|&h| {
        let rest = &prefix[h + 1..];
        rest.starts_with(b"producer-") || rest.starts_with(b"consumer-")
    })?;
    let mut end = hash + 10;
    while end < prefix.len() && prefix[end].is_ascii_digit() {
        end += 1;
    }
    if end == hash + 10 {
        return None;
    }
    let start = prefix[..hash]
        .iter()
        .rposition(|&b| is_token_boundary(b) || b == b'[' || b == b'(')
        .map(|p| p + 1)
        .unwrap_or(0);
    std::str::from_utf8(&prefix[start..end]).ok()
}

#[cfg(test)]
mod tests;
