//! Bad input (the other analyzers' cases): each a clear outcome, never a panic or a hang.

use std::io::{self, Read};

use kgap_analyzers::stats::{analyze_stats, StatsOptions};
use kgap_analyzers::AnalyzeError;

use crate::common::*;

#[test]
fn empty_input_is_unusable_and_says_so() {
    let r = analyze(b"");
    assert!(!r.is_usable());
    assert_eq!(r.unusable_reason().unwrap(), "the input is empty");
}

#[test]
fn binary_input_is_reported_with_its_offset() {
    let mut bytes: Vec<u8> = (0..65_536u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    bytes[100] = 0;
    let r = analyze(&bytes);
    assert!(!r.is_usable());
    assert!(r.input.binary_at_offset.unwrap() <= 100);
    assert!(r.unusable_reason().unwrap().starts_with("binary data"));
}

#[test]
fn json_that_is_not_statistics_is_unusable_with_a_hint() {
    let r = analyze(b"{\"level\":\"info\",\"msg\":\"hello\"}\n{\"a\":[1,2]}\n");
    assert_eq!(r.input.other_objects, 2);
    assert!(r
        .unusable_reason()
        .unwrap()
        .contains("statistics.interval.ms"));
}

#[test]
fn a_truncated_object_is_counted_with_its_line_and_the_rest_is_read() {
    let two = two_emits();
    let lines: Vec<&[u8]> = two
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .collect();
    let mut input = lines[0].to_vec();
    input.push(b'\n');
    input.extend_from_slice(&lines[1][..lines[1].len() / 2]);
    input.push(b'\n');
    input.extend_from_slice(lines[1]);
    input.push(b'\n');
    // And cut at the very end of the input.
    input.extend_from_slice(&lines[0][..100]);
    let r = analyze(&input);
    assert_eq!(r.input.statistics_objects, 2);
    assert_eq!(r.input.truncated_objects, 2);
    assert_eq!(r.input.problems[0].line, 2);
    assert!(r.input.problems[0].reason.starts_with("truncated object"));
    assert_eq!(r.input.problems[1].line, 4);
    assert_eq!(r.clients[0].intervals, 1);
}

/// `n` bytes of `fill` without a newline, then `tail`: a huge line never held by the test.
struct HugeLine {
    head: io::Cursor<Vec<u8>>,
    left: u64,
    fill: u8,
    tail: io::Cursor<Vec<u8>>,
}

impl Read for HugeLine {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.head.read(buf)?;
        if n > 0 {
            return Ok(n);
        }
        if self.left > 0 {
            let n = (buf.len() as u64).min(self.left) as usize;
            buf[..n].fill(self.fill);
            self.left -= n as u64;
            return Ok(n);
        }
        self.tail.read(buf)
    }
}

const HUNDRED_MB: u64 = 100 * 1024 * 1024;

#[test]
fn a_100_mb_line_of_text_is_skipped_without_being_held() {
    let mut tail = b"\n".to_vec();
    tail.extend_from_slice(&two_emits());
    let input = HugeLine {
        head: io::Cursor::new(vec![]),
        left: HUNDRED_MB,
        fill: b'x',
        tail: io::Cursor::new(tail.clone()),
    };
    let r = analyze_stats(input, &StatsOptions::default()).unwrap();
    assert_eq!(r.input.statistics_objects, 2);
    assert_eq!(r.input.bytes_read, HUNDRED_MB + tail.len() as u64);
    assert_eq!(r.clients[0].first_line, 2);
}

#[test]
fn a_100_mb_object_is_skipped_at_the_cap_and_reported() {
    let mut tail = b"\"}\n".to_vec();
    tail.extend_from_slice(&two_emits());
    let input = HugeLine {
        head: io::Cursor::new(
            b"{\"name\":\"rdkafka#producer-1\",\"brokers\":{},\"pad\":\"".to_vec(),
        ),
        left: HUNDRED_MB,
        fill: b'x',
        tail: io::Cursor::new(tail),
    };
    let opts = StatsOptions {
        max_object_bytes: 8 * 1024 * 1024,
        ..StatsOptions::default()
    };
    let r = analyze_stats(input, &opts).unwrap();
    assert_eq!(r.input.oversized_objects, 1);
    assert_eq!(r.input.problems[0].line, 1);
    assert!(r.input.problems[0].reason.contains("longer than 8 MiB"));
    assert_eq!(r.input.statistics_objects, 2);
}

#[test]
fn invalid_utf8_inside_an_object_fails_that_object_only() {
    let two = two_emits();
    let text = String::from_utf8(two.clone()).unwrap();
    let bad = text.replacen(
        "\"client_id\": \"rdkafka\"",
        "\"client_id\": \"rdk\u{1}\"",
        1,
    );
    let mut bytes = bad.into_bytes();
    let at = memchr_find(&bytes, b"rdk\x01").unwrap();
    bytes[at + 3] = 0xff; // invalid UTF-8 inside a string
    let mut input = b"\xff\xfe garbage before \xc3 ".to_vec();
    input.extend_from_slice(&bytes);
    let r = analyze(&input);
    assert_eq!(r.input.invalid_objects, 1, "{:?}", r.input.problems);
    assert_eq!(r.input.statistics_objects, 1);
    assert_eq!(r.input.problems[0].line, 1);
}

fn memchr_find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

#[test]
fn crlf_endings_read_like_lf() {
    let lf = two_emits();
    let crlf: Vec<u8> = lf
        .iter()
        .flat_map(|&b| {
            if b == b'\n' {
                vec![b'\r', b'\n']
            } else {
                vec![b]
            }
        })
        .collect();
    let a = analyze(&lf);
    let b = analyze(&crlf);
    assert_eq!(
        serde_json::to_value(&a.clients).unwrap(),
        serde_json::to_value(&b.clients).unwrap()
    );
    assert_eq!(b.input.invalid_objects, 0);
}

#[test]
fn truncated_gzip_keeps_what_it_read_and_corrupt_gzip_is_a_clear_error() {
    let gz = crate::gzip::gzip(&two_emits().repeat(50));
    // Cut short: the emits before the cut are analysed, and the report says where it ended.
    let cut = analyze_stats(crate::gzip::cut_in_half(&gz), &StatsOptions::default()).unwrap();
    assert!(cut.input.gzip_cut.is_some(), "{:?}", cut.input);
    assert!(cut.input.statistics_objects > 0);
    assert!(
        cut.warnings
            .iter()
            .any(|w| w.contains("the gzip stream ends early")),
        "{:?}",
        cut.warnings
    );
    // Corrupt (the deflate data overwritten): still a gzip error, nothing made up.
    let bad = crate::gzip::corrupt(&gz);
    match analyze_stats(&bad[..], &StatsOptions::default()) {
        Err(AnalyzeError::Gzip { .. }) => {}
        other => panic!("expected a gzip error, got {:?}", other.map(|r| r.headline)),
    }
    let whole = analyze(&gz);
    assert!(whole.input.gzip);
    // 50 copies of the same two emits: the repeats are duplicates or restarts, none lost.
    assert_eq!(whole.input.statistics_objects, 100);
}

#[test]
fn duplicated_lines_are_counted_not_differenced() {
    let two = two_emits();
    let first = two.split(|&b| b == b'\n').next().unwrap();
    let mut input = first.to_vec();
    input.push(b'\n');
    input.extend_from_slice(&two);
    let r = analyze(&input);
    assert_eq!(r.input.duplicate_emits, 1);
    assert_eq!(r.clients.len(), 1);
    assert_eq!(r.clients[0].intervals, 1);
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
fn mutated_statistics_never_panic() {
    let base = two_emits();
    let mut rng = SplitMix(42);
    const BYTES: &[u8] = b"{}[]\",:\\\n\r 0-9e.\x00\xff";
    for _ in 0..300 {
        let mut m = base.clone();
        for _ in 0..(1 + rng.next() % 8) {
            let i = (rng.next() % m.len() as u64) as usize;
            match rng.next() % 3 {
                0 => m[i] = BYTES[(rng.next() % BYTES.len() as u64) as usize],
                1 => {
                    m.remove(i);
                }
                _ => m.insert(i, BYTES[(rng.next() % BYTES.len() as u64) as usize]),
            }
        }
        let r = analyze(&m);
        let _ = r.render_text();
        let _ = r.render_svgs();
        assert!(r.input.statistics_objects <= 2 + 2);
    }
}
