//! What a file holds, from its first bytes (after gunzip): never from its name.

use std::fs;
use std::io::Read;
use std::path::Path;

use crate::engine::input::Input;
use crate::librdkafka::{raw_stderr_record, unescape_json_slashes, RecordFinder};

/// How many bytes of a file (decompressed) are looked at to tell what it is.
pub const HEAD_BYTES: usize = 64 * 1024;

/// The first [`HEAD_BYTES`] of a file, decompressed when gzip.
pub(crate) fn head(path: &Path) -> Result<(Vec<u8>, bool), String> {
    let f = fs::File::open(path).map_err(|e| format!("cannot open: {e}"))?;
    let input = Input::detect(f).map_err(|e| format!("cannot read: {e}"))?;
    let gzip = input.is_gzip();
    let cut = input.gzip_cut();
    let mut head = Vec::with_capacity(HEAD_BYTES);
    match input.take(HEAD_BYTES as u64).read_to_end(&mut head) {
        // Cut before anything inflated: not an empty file, a broken gzip.
        Ok(_) if head.is_empty() && cut.get().is_some() => Err(format!(
            "looks like gzip but does not decompress: {}",
            cut.get().unwrap_or_default()
        )),
        Ok(_) => Ok((head, gzip)),
        // A gzip stream cut short still gives its head; the analyzer then says where it broke.
        Err(_) if gzip && !head.is_empty() => Ok((head, gzip)),
        Err(e) if gzip => Err(format!("looks like gzip but does not decompress: {e}")),
        Err(e) => Err(format!("cannot read: {e}")),
    }
}

/// The kinds of input gap-report reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    /// librdkafka debug lines in any wrapper.
    LibrdkafkaLog,
    /// librdkafka statistics JSON, one emit a line.
    Stats,
    /// A JVM GC log (unified or JDK 8).
    GcLog,
    /// A JFR recording.
    Jfr,
    /// `jfr print --json` output.
    JfrJson,
    /// analyze-thread-cpu's recording, or a probe's threads.csv.
    ThreadCpu,
    /// A probe's result.json.
    ProbeResult,
    /// A probe's runs.csv: the same runs as its result.json.
    ProbeRuns,
    /// Nothing gap-report reads; the reason says what it looked like.
    Unusable(String),
}

impl Kind {
    /// Short name for reports.
    pub fn label(&self) -> &'static str {
        match self {
            Kind::LibrdkafkaLog => "librdkafka-log",
            Kind::Stats => "librdkafka-stats",
            Kind::GcLog => "gc-log",
            Kind::Jfr => "jfr",
            Kind::JfrJson => "jfr-json",
            Kind::ThreadCpu => "thread-cpu",
            Kind::ProbeResult => "probe-result",
            Kind::ProbeRuns => "probe-runs",
            Kind::Unusable(_) => "unusable",
        }
    }
}

/// Tell what `head` (a file's first bytes, decompressed) holds. Structured JSON kinds are
/// tried before librdkafka records: a probe's result quotes analyzer text, never log lines,
/// but a stray match must not turn a JSON document into a "log".
pub fn sniff(head: &[u8], finder: &RecordFinder) -> Kind {
    if head.is_empty() {
        return Kind::Unusable("empty file".into());
    }
    if head.starts_with(b"FLR\0") {
        return Kind::Jfr;
    }
    let text_end = head.iter().position(|&b| b == 0);
    let first_line = first_line(head);
    let trimmed = trim_start(head);
    if trimmed.starts_with(b"{") {
        if contains(first_line, b"\"recording\":\"kgap-thread-cpu\"")
            || contains(first_line, b"\"recording\": \"kgap-thread-cpu\"")
        {
            return Kind::ThreadCpu;
        }
        // `jfr print --json`: `{` then `"recording": {` then `"events": [`.
        let opening = &trimmed[..trimmed.len().min(200)];
        if contains(opening, b"\"recording\"") && contains(opening, b"\"events\"") {
            return Kind::JfrJson;
        }
        if contains(head, b"\"schema\": \"kgap.probe-result\"")
            || contains(head, b"\"schema\":\"kgap.probe-result\"")
            || (contains(head, b"\"probe\"") && contains(head, b"\"payload_sha256\""))
        {
            return Kind::ProbeResult;
        }
        if contains(first_line, b"\"brokers\"")
            && contains(first_line, b"\"type\"")
            && contains(first_line, b"\"ts\"")
        {
            return Kind::Stats;
        }
    }
    if let Some(at) = text_end {
        return Kind::Unusable(format!(
            "binary (found \"\\0\" byte around offset {at}), not a JFR recording (no \"FLR\\0\" \
             magic)"
        ));
    }
    let mut lines = 0;
    let mut scratch = Vec::new();
    for line in head.split(|&b| b == b'\n') {
        lines += 1;
        if is_librdkafka_line(line, finder, &mut scratch) {
            return Kind::LibrdkafkaLog;
        }
    }
    if is_gc_log(head) {
        return Kind::GcLog;
    }
    if first_line.starts_with(b"second,tid,thread,cores") {
        return Kind::ThreadCpu;
    }
    if first_line.starts_with(b"probe,broker,") {
        return Kind::ProbeRuns;
    }
    if trimmed.starts_with(b"{") || trimmed.starts_with(b"[") {
        return Kind::Unusable(
            "JSON, but not statistics, a probe result, a thread-CPU recording or a JFR export"
                .into(),
        );
    }
    Kind::Unusable(format!(
        "text ({lines} lines looked at), with no librdkafka record, GC log line, statistics \
         JSON or recording header"
    ))
}

/// The analyzers' own test for a record: librdkafka's stderr format first, then any
/// wrapper (with JSON-escaped slashes undone).
fn is_librdkafka_line(line: &[u8], finder: &RecordFinder, scratch: &mut Vec<u8>) -> bool {
    // librdkafka's own format counts even when its body is not one the analyzers know:
    // the report can then say which debug contexts were missing.
    if raw_stderr_record(line).is_some() {
        return true;
    }
    let text: &[u8] = if unescape_json_slashes(line, scratch) {
        scratch
    } else {
        line
    };
    finder.find(text).is_some()
}

/// JDK 9+ unified logging (`[gc]`, `[gc,heap]`, space-padded tags, `GC(N)`) or JDK 8
/// `-XX:+PrintGCDetails` (`[GC (`, `[Full GC`, `[GC pause`).
fn is_gc_log(head: &[u8]) -> bool {
    head.split(|&b| b == b'\n').take(2000).any(|l| {
        contains(l, b"[gc]")
            || contains(l, b"[gc,")
            || contains(l, b"[gc ")
            || contains(l, b"[GC (")
            || contains(l, b"[Full GC")
            || contains(l, b"[GC pause")
            || (contains(l, b" GC(") && contains(l, b"Pause"))
    })
}

fn first_line(head: &[u8]) -> &[u8] {
    let end = memchr::memchr(b'\n', head).unwrap_or(head.len());
    &head[..end]
}

fn trim_start(b: &[u8]) -> &[u8] {
    let i = b
        .iter()
        .position(|c| !c.is_ascii_whitespace())
        .unwrap_or(b.len());
    &b[i..]
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    memchr::memmem::find(hay, needle).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(s: &[u8]) -> Kind {
        sniff(s, &RecordFinder::new())
    }

    #[test]
    fn tells_kinds_by_content() {
        assert_eq!(kind(b"FLR\0\0\x02"), Kind::Jfr);
        assert_eq!(
            kind(b"%7|1700000000.000|SEND|rdkafka#producer-1| [thrd:k:9092/1]: k:9092/1: Sent ProduceRequest (v10, 15621 bytes @ 0, CorrId 4)\n"),
            Kind::LibrdkafkaLog
        );
        assert_eq!(
            kind(b"{\"name\":\"rdkafka#producer-1\",\"type\":\"producer\",\"ts\":5,\"brokers\":{}}\n"),
            Kind::Stats
        );
        assert_eq!(
            kind(b"[0.010s][info][gc] Using G1\n[1.0s][info][gc] GC(0) Pause Young (Normal) (G1 Evacuation Pause) 24M->2M(256M) 1.234ms\n"),
            Kind::GcLog
        );
        assert_eq!(
            kind(b"second,tid,thread,cores\n1,2,x,0.5\n"),
            Kind::ThreadCpu
        );
        assert_eq!(
            kind(b"{\"recording\":\"kgap-thread-cpu\",\"version\":1}\n"),
            Kind::ThreadCpu
        );
        assert_eq!(
            kind(b"{\n  \"recording\": {\n    \"events\": [{\n"),
            Kind::JfrJson
        );
        assert_eq!(
            kind(b"{\n  \"probe\": \"probe-fetch-backoff\",\n  \"payload_sha256\": \"ab\"}"),
            Kind::ProbeResult
        );
        assert_eq!(kind(b"probe,broker,batch.size\n"), Kind::ProbeRuns);
        assert!(matches!(kind(b""), Kind::Unusable(_)));
        assert!(matches!(kind(b"hello\nworld\n"), Kind::Unusable(_)));
        assert!(matches!(kind(b"\x7fELF\0\0"), Kind::Unusable(_)));
        assert!(matches!(kind(b"{\"a\": 1}"), Kind::Unusable(_)));
    }
}
