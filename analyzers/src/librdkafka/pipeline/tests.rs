//! The block front end against the line-at-a-time reference
//! ([`LineReader`](crate::engine::input::LineReader) and the analyzers' `push_line`): the same
//! records on the same lines, the same counts, on every captured fixture and on the
//! edges (cut lines, `\r\n`, a last line without newline, `\/`, NUL, tiny buffers).

use super::*;
use crate::engine::input::for_each_line;
use crate::librdkafka::RecordFinder;

/// Everything a sink sees, as text: comparable between the two paths.
#[derive(Default, PartialEq, Debug)]
struct Seen {
    lines: u64,
    recognised: u64,
    records: Vec<String>,
}

impl RecordSink for Seen {
    type Tally = NoTally;
    fn tally(&self) -> NoTally {
        NoTally
    }
    fn merge(&mut self, _: NoTally) {}
    fn line_done(&mut self, recognised: bool) {
        self.lines += 1;
        self.recognised += recognised as u64;
    }
    fn record(&mut self, line_no: u64, line: &[u8], rec: &Record<'_>) {
        self.records.push(format!(
            "{line_no} {:?} {rec:?}",
            String::from_utf8_lossy(line)
        ));
    }
}

/// The reference: one line at a time, as the analyzers' `push_line` reads.
fn reference(input: &[u8], max_line: usize) -> (Seen, InputSummary) {
    let finder = RecordFinder::new();
    let mut seen = Seen::default();
    let mut scratch = Vec::new();
    let summary = for_each_line(input, max_line, |l| {
        feed_line(&mut seen, &finder, &mut scratch, l.number, l.bytes)
    })
    .unwrap();
    (seen, summary)
}

fn fast(input: &[u8], max_line: usize, workers: usize) -> (Seen, InputSummary) {
    let mut seen = Seen::default();
    let summary = drive(input, max_line, workers, &mut seen).unwrap();
    (seen, summary)
}

fn assert_same(input: &[u8], max_line: usize, what: &str) {
    let (want, want_sum) = reference(input, max_line);
    for workers in [0, 1, 3] {
        let (got, got_sum) = fast(input, max_line, workers);
        assert_eq!(got.lines, want.lines, "{what}: lines (workers {workers})");
        assert_eq!(got.recognised, want.recognised, "{what}: recognised lines");
        assert_eq!(got.records.len(), want.records.len(), "{what}: records");
        for (g, w) in got.records.iter().zip(&want.records) {
            assert_eq!(g, w, "{what}: workers {workers}, max_line {max_line}");
        }
        assert_eq!(
            format!("{got_sum:?}"),
            format!("{want_sum:?}"),
            "{what}: input summary"
        );
    }
}

fn fixture_logs() -> Vec<(String, Vec<u8>)> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/librdkafka");
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let d = e.unwrap().path();
        for name in ["debug.log", "debug.log.gz"] {
            let p = d.join(name);
            if let Ok(bytes) = std::fs::read(&p) {
                out.push((p.display().to_string(), bytes));
            }
        }
    }
    out.sort();
    assert!(out.len() >= 6, "the captured librdkafka fixtures are there");
    out
}

/// A fixture's bytes as text (`debug.log.gz` inflated).
fn gunzipped(bytes: Vec<u8>) -> Vec<u8> {
    if !bytes.starts_with(&[0x1f, 0x8b]) {
        return bytes;
    }
    let mut out = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::MultiGzDecoder::new(&bytes[..]), &mut out)
        .unwrap();
    out
}

#[test]
fn fixtures_give_the_same_records_as_the_line_reader() {
    for (name, bytes) in fixture_logs() {
        assert_same(&bytes, crate::engine::input::DEFAULT_MAX_LINE_BYTES, &name);
        let (seen, _) = fast(&bytes, crate::engine::input::DEFAULT_MAX_LINE_BYTES, 2);
        assert!(seen.recognised > 100, "{name}: records found");
    }
}

#[test]
fn fixtures_cut_to_short_lines_give_the_same_records() {
    // A cap shorter than most lines: the blocks are small, many lines are cut.
    for (name, bytes) in fixture_logs().into_iter().take(3) {
        let plain = gunzipped(bytes);
        let head = &plain[..plain.len().min(200_000)];
        for max_line in [97, 150, 4096] {
            assert_same(head, max_line, &name);
        }
    }
}

#[test]
fn near_repeats_of_captured_lines_give_the_same_records() {
    // The memos' ground: real raw lines repeated with one change each (a digit, a
    // byte anywhere, the stamp's length, the line cut short), next to the unchanged
    // line, so that most lookups find a line that differs from them in one place.
    let mut raw: Vec<Vec<u8>> = Vec::new();
    for (_, bytes) in fixture_logs() {
        let plain = gunzipped(bytes);
        raw.extend(
            plain
                .split(|&b| b == b'\n')
                .filter(|l| l.starts_with(b"%7|"))
                .take(400)
                .map(<[u8]>::to_vec),
        );
    }
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = |n: usize| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x % n as u64) as usize
    };
    let mut log = Vec::new();
    for _ in 0..20_000 {
        let line = &raw[next(raw.len())];
        let mut l = line.clone();
        match next(6) {
            0 => {
                let i = next(l.len());
                l[i] = b"0123456789 )(,|:x"[next(17)];
            }
            1 => {
                // A digit near the end: a CorrId, a round trip, a size.
                let i = l.len() - 1 - next(l.len().min(24));
                if l[i].is_ascii_digit() {
                    l[i] = b'0' + next(10) as u8;
                }
            }
            2 => {
                l.remove(3); // a nine-digit stamp
            }
            3 => l.truncate(next(l.len() + 1)),
            _ => {}
        }
        log.extend_from_slice(&l);
        log.push(b'\n');
        log.extend_from_slice(line);
        log.push(b'\n');
    }
    assert_same(
        &log,
        crate::engine::input::DEFAULT_MAX_LINE_BYTES,
        "near repeats",
    );
}

#[test]
fn edges_give_the_same_records() {
    let sent = "%7|1700000000.000|SEND|rdkafka#producer-1| [thrd:k:9092/1]: k:9092/1: \
                Sent ProduceRequest (v10, 15621 bytes @ 0, CorrId 4)";
    let json = r#"{"message":"[thrd:k:9092\/1]: k:9092\/1: Fetch 6\/6\/6 toppar(s)"}"#;
    let msgset =
        "%7|1700000000.000|PRODUCE|rdkafka#producer-1| [thrd:k:9092/1]: k:9092/1: t.x [4]: \
                  Produce MessageSet with 15 message(s) (15556 bytes, ApiVersion 10)";
    let fetch = "%7|1700000000.000|FETCH|rdkafka#consumer-6| [thrd:k:9092/1]: k:9092/1: \
                 Fetch topic t.x [4] at offset 27184 (leader epoch 0, current leader epoch 0, v2)";
    let decide = "%7|1700000000.000|FETCH|rdkafka#consumer-6| [thrd:k:9092/1]: k:9092/1: \
                  Topic t.x [4] in state active at offset 100000 (leader epoch 0) \
                  (0/100000 msgs, 0/65536 kb queued, opv 2) is fetchable";
    let recv = "%7|1700000000.001|RECV|rdkafka#producer-1| [thrd:k:9092/1]: k:9092/1: \
                Received ProduceResponse (v10, 62 bytes, CorrId 4, rtt 0.39ms)";
    let none = "%7|1700000000.000|PRODUCE|rdkafka#producer-1| [thrd:k:9092/1]: k:9092/1: t.x [4]: \
                No more space in current MessageSet (15 message(s), 15645 bytes)";
    let cases: Vec<String> = vec![
        String::new(),
        "\n\n\n".into(),
        sent.to_string(),
        format!("{sent}\r\n{sent}\r\n"),
        format!("noise\n{sent}\nnoise Sent nothing\n{json}\n{sent}"),
        format!("{}\n{sent}\n", "x".repeat(5000)),
        format!("{sent}\n{}", "Sent ".repeat(2000)),
        format!("{sent}\n\0binary\n{sent}\n"),
        format!("%7|\n%7\n{sent}\n%"),
        format!("{json}\n{json}\r\n{sent}{sent}\n"),
        // Repeated rests (the memo's hits): other stamps, nine digits, no record, a
        // rest after a stamp that is not one.
        [
            msgset.replace("1700000000.000", "1700000000.001"),
            none.to_string(),
            msgset.to_string(),
            msgset.replace("1700000000.000", "170000000.000"),
            none.replace("1700000000.000", "1700000009.999"),
            msgset.replace("1700000000.000", "17000x0000.000"),
            msgset.replace("[4]", "[5]"),
            msgset.to_string(),
            msgset.replace("%7|", "%6|"),
        ]
        .join("\n"),
        // FETCH lines that repeat through ` at offset ` (the offset memo), and ones
        // that hold the words elsewhere or end before or right after them.
        [
            fetch.to_string(),
            fetch.replace("offset 27184", "offset 27185"),
            fetch.replace("offset 27184 (", "offset 1 ("),
            fetch.replace("[4]", "[5]"),
            fetch.replace(" (leader epoch 0, current leader epoch 0, v2)", ""),
            fetch.replace("27184 (leader epoch 0, current leader epoch 0, v2)", ""),
            fetch.replace(
                "offset 27184 (leader epoch 0, current leader epoch 0, v2)",
                "offset",
            ),
            fetch.replace("Fetch topic", "Fetch  topic"),
            fetch.replace("[4] at offset", "[4] at offset at offset"),
            fetch.replace("|FETCH|", "|FETCHX|"),
            fetch.replace("1700000000.000", "170000000.000"),
            // The words in the client's name: the key ends before the record does.
            fetch.replace("rdkafka#consumer-6", "app at offset 1"),
            fetch
                .replace("rdkafka#consumer-6", "app at offset 1")
                .replace("[4]", "[5]"),
            decide.to_string(),
            decide.replace("(0/100000", "(1/100000"),
            fetch.to_string(),
        ]
        .join("\n"),
        // SEND/RECV lines that repeat but for their CorrId and round trip (the CorrId
        // memo), and ones whose tail differs in every way that matters.
        [
            sent.to_string(),
            sent.replace("CorrId 4)", "CorrId 5)"),
            sent.replace("CorrId 4)", "CorrId 123456)"),
            sent.replace("CorrId 4)", "CorrId -1)"),
            sent.replace("CorrId 4)", "CorrId 99999999999)"),
            sent.replace("CorrId 4)", "CorrId 6) CorrId 9"),
            // A second CorrId after the body: the memo's split is not the parser's,
            // so the first line must not be kept for the second.
            sent.replace("CorrId 4)", "CorrId 6) CorrId 9)"),
            sent.replace("CorrId 4)", "CorrId 6) CorrId 5)"),
            sent.replace("CorrId 4)", "CorrId 7"),
            sent.replace("CorrId 4)", "CorrId 8)x"),
            sent.replace("1700000000.000", "170000000.001"),
            sent.replace("15621 bytes", "15622 bytes"),
            sent.replace(
                "Sent ProduceRequest (v10, 15621 bytes @ 0",
                "Sent partial ProduceRequest (v10, 0+1000/15621 bytes",
            ),
            sent.replace(
                "Sent ProduceRequest (v10, 15621 bytes @ 0",
                "Sent partial ProduceRequest (v10, 0+1000/15621 bytes",
            )
            .replace("CorrId 4)", "CorrId 5)"),
            recv.to_string(),
            recv.replace("CorrId 4, rtt 0.39ms)", "CorrId 5, rtt 12.5ms)"),
            recv.replace("CorrId 4, rtt 0.39ms)", "CorrId 6, rtt 7ms)"),
            recv.replace("CorrId 4, rtt 0.39ms)", "CorrId 7, rtt ms)"),
            recv.replace("CorrId 4, rtt 0.39ms)", "CorrId 8)"),
            recv.replace(
                "CorrId 4, rtt 0.39ms)",
                "CorrId 9, rtt 1.0ms) CorrId 3, rtt 2ms)",
            ),
            recv.replace(
                "CorrId 4, rtt 0.39ms)",
                "CorrId 9, rtt 1.0ms) CorrId 4, rtt 5ms)",
            ),
            recv.replace(
                "CorrId 4, rtt 0.39ms)",
                "CorrId 10, rtt 0.123456789012345ms)",
            ),
        ]
        .join("\n"),
    ];
    for (i, c) in cases.iter().enumerate() {
        for max_line in [1, 2, 60, 100, 140, 1 << 20] {
            assert_same(c.as_bytes(), max_line, &format!("case {i}"));
        }
    }
}
