//! Bad input (issue 3 §7): every case gets a report or a clear error, never a panic.

use std::io::{self, Read};

use kgap_analyzers::fetch_log::{analyze_fetch_log, FetchLogOptions};
use kgap_analyzers::librdkafka::find_record;
use kgap_analyzers::protocol_log::{analyze_protocol_log, ProtocolLogOptions, ProtocolLogReport};
use kgap_analyzers::AnalyzeError;

use crate::common::*;

fn protocol(bytes: &[u8]) -> ProtocolLogReport {
    analyze_protocol_log(bytes, &ProtocolLogOptions::default()).unwrap()
}

#[test]
fn empty_input() {
    let r = protocol(b"");
    assert_eq!((r.lines_read, r.records_recognised), (0, 0));
    assert!(!r.is_usable());
    let f = analyze_fetch_log(&b""[..], &FetchLogOptions::default()).unwrap();
    assert!(!f.is_usable());
}

#[test]
fn binary_input_is_reported_with_its_offset() {
    let mut bytes: Vec<u8> = (0..65_536u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    bytes[100] = 0;
    let r = protocol(&bytes);
    assert!(!r.is_usable());
    assert!(r.input.binary_at_offset.unwrap() <= 100);
}

#[test]
fn invalid_utf8_around_records_still_counts_them() {
    let mut log = Vec::new();
    for line in raw(&ceiling_log(1, 20, 1000)).lines() {
        log.extend_from_slice(b"\xff\xfe\xc3 ");
        log.extend_from_slice(line.as_bytes());
        log.extend_from_slice(b" \xed\xa0\x80\n");
    }
    let r = protocol(&log);
    assert_eq!(r.requests[0].count, 20);
    assert_eq!(r.requests[0].responses, 20);
}

/// A reader of `n` bytes of `x` without a newline, then `tail`: a huge line that is
/// never held in memory by the test itself.
struct HugeLine {
    left: u64,
    tail: io::Cursor<Vec<u8>>,
}

impl Read for HugeLine {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.left > 0 {
            let n = (buf.len() as u64).min(self.left) as usize;
            buf[..n].fill(b'x');
            self.left -= n as u64;
            return Ok(n);
        }
        self.tail.read(buf)
    }
}

#[test]
fn a_100_mb_line_is_cut_and_the_next_line_is_read() {
    let tail = format!("\n{}", raw(&ceiling_log(1, 3, 1000)));
    let input = HugeLine {
        left: 100 * 1024 * 1024,
        tail: io::Cursor::new(tail.into_bytes()),
    };
    let r = analyze_protocol_log(input, &ProtocolLogOptions::default()).unwrap();
    assert_eq!(r.input.lines_truncated, 1);
    assert_eq!(
        r.input.bytes_read,
        100 * 1024 * 1024 + 1 + raw(&ceiling_log(1, 3, 1000)).len() as u64
    );
    assert_eq!(r.requests[0].count, 3);
    assert!(r
        .warnings
        .iter()
        .any(|w| w.contains("longer than the line cap")));
}

#[test]
fn a_truncated_last_line_is_skipped_and_flagged() {
    let mut log = raw(&ceiling_log(1, 10, 1000));
    log.push_str("%7|1520428015.000|SEND|rdkafka#producer-1| [thrd:kafka-1:9092/1]: kafka-1:9092/1: Sent ProduceRequest (v10, 15621 bytes @ 0, Cor");
    let r = protocol(log.as_bytes());
    assert!(r.input.unterminated_last_line);
    assert_eq!(r.requests[0].count, 10);
    assert_eq!(r.lines_skipped, 1);
}

#[test]
fn crlf_endings_read_like_lf() {
    let lf = raw(&ceiling_log(2, 300, 15_621));
    let crlf = lf.replace('\n', "\r\n");
    let a = protocol(lf.as_bytes());
    let b = protocol(crlf.as_bytes());
    assert_eq!(
        serde_json::to_value(&a.requests).unwrap(),
        serde_json::to_value(&b.requests).unwrap()
    );
    assert_eq!(b.lines_skipped, 0);
}

#[test]
fn a_log_without_librdkafka_lines_is_unusable_but_counted() {
    let log = "2024-01-01 10:00:00 INFO app started\n2024-01-01 10:00:01 INFO Sent 5 emails\n";
    let r = protocol(log.as_bytes());
    assert_eq!(
        (r.lines_read, r.lines_skipped, r.records_recognised),
        (2, 2, 0)
    );
    assert!(!r.is_usable());
}

#[test]
fn lines_split_mid_word_lose_only_themselves() {
    // A log shipper that wraps long lines: cut inside the message body, both halves
    // are unusable and are skipped; every other line still counts.
    let recs = ceiling_log(1, 100, 1000);
    let mut log = String::new();
    let mut split = 0;
    let mut lost_sent = 0;
    for (i, line) in raw(&recs).lines().enumerate() {
        if i % 10 == 0 {
            let cut = line.find("Produce").unwrap() + 3; // "Pro|duce…"
            log.push_str(&line[..cut]);
            log.push('\n');
            log.push_str(&line[cut..]);
            split += 1;
            lost_sent += line.contains("Sent ProduceRequest") as u64;
        } else {
            log.push_str(line);
        }
        log.push('\n');
    }
    let r = protocol(log.as_bytes());
    assert_eq!(r.lines_read as usize, recs.len() + split);
    assert_eq!(r.lines_skipped as usize, 2 * split);
    assert_eq!(r.requests[0].count, 100 - lost_sent);
}

#[test]
fn truncated_gzip_keeps_what_it_read_and_corrupt_gzip_is_a_clear_error() {
    let gz = crate::gzip::gzip(raw(&ceiling_log(2, 500, 15_621)).as_bytes());
    // Cut short: the lines before the cut are analysed, and a warning says where it ended.
    let cut = analyze_protocol_log(
        crate::gzip::cut_in_half(&gz),
        &ProtocolLogOptions::default(),
    )
    .unwrap();
    assert!(cut.input.gzip_cut.is_some());
    assert!(cut.lines_read > 0);
    assert!(
        cut.warnings
            .iter()
            .any(|w| w.contains("the gzip stream ends early")),
        "{:?}",
        cut.warnings
    );
    let bad = crate::gzip::corrupt(&gz);
    match analyze_protocol_log(&bad[..], &ProtocolLogOptions::default()) {
        Err(AnalyzeError::Gzip { .. }) => {}
        other => panic!(
            "expected a gzip error, got {:?}",
            other.map(|r| r.lines_read)
        ),
    }
    let whole = protocol(&gz);
    assert!(whole.input.gzip);
    assert_eq!(whole.requests[0].count, 1000);
}

/// A small deterministic PRNG (SplitMix64) for the mutation test.
struct SplitMix(u64);
impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

#[test]
fn mutated_lines_never_panic_the_finder() {
    // cargo-fuzz does this properly (fuzz/); this keeps a cheap version in every run.
    let seeds: Vec<String> = raw(&ceiling_log(1, 3, 1000))
        .lines()
        .chain(raw(&fetch_backoff_log(1, 1, 1000)).lines())
        .chain(raw(&timeout_log()).lines())
        .map(str::to_string)
        .collect();
    let mut rng = SplitMix(42);
    let interesting = b"0123456789 ()[]:|/%.,+-@#\"\\\xff\x00";
    for _ in 0..20_000 {
        let seed = &seeds[(rng.next() % seeds.len() as u64) as usize];
        let mut line = seed.clone().into_bytes();
        for _ in 0..(1 + rng.next() % 4) {
            let pos = (rng.next() % (line.len() as u64 + 1)) as usize;
            match rng.next() % 3 {
                0 if pos < line.len() => {
                    line[pos] = interesting[(rng.next() % interesting.len() as u64) as usize]
                }
                1 => line.insert(
                    pos,
                    interesting[(rng.next() % interesting.len() as u64) as usize],
                ),
                _ => line.truncate(pos),
            }
        }
        let _ = find_record(&line);
    }
}
