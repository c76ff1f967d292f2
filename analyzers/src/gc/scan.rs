//! The fast path: find lines worth parsing without looking at every line.
//!
//! A `-Xlog:gc*` log spends most of its lines on phases, workers and TLAB statistics
//! that no report needs. Like grep, the scanner searches a fixed buffer for a few
//! anchor words at SIMD speed, and only the lines holding one are handed out; the
//! lines in between are only counted (for line numbers). When the sink asks for every
//! line (format not known yet, or JDK 8 records spanning lines), every line is handed
//! out. Memory is the buffer, whatever the input's size.

use std::io::{self, Read};

use aho_corasick::{AhoCorasick, Input, MatchKind};

/// Buffer size: large enough that reads are rare, small enough to stay in L2/L3.
pub(crate) const BUFFER_BYTES: usize = 1 << 20;

/// Words that mark a line some part of the report needs (unified logging).
pub(crate) const ANCHORS: &[&str] = &[
    "Pause ",
    "To-space exhausted",
    "Using G1",
    "Using Parallel",
    "Using Serial",
    "Using Concurrent Mark Sweep",
    "Using The Z Garbage Collector",
    "Using Shenandoah",
    "Version: ",
    "Max Capacity: ",
    "Maximum heap ",
    "Heap address: ",
    "egion size: ",
    "egion Size: ",
    "Initialize Shenandoah heap",
    "Old regions: ",
    "Humongous regions: ",
    "OldGen: ",
    "Tenured: ",
    "YoungGen: ",
    "DefNew: ",
    "ParNew: ",
    "Allocation Stall",
    "Collection (",
    "Concurrent cleanup ",
    "Cancelling GC",
    "Mark Abort",
    "Desired survivor size ",
    "Out Of Memory",
    "Completed GC (degenerated",
    // A JDK 8 record in a unified log: the sink switches to every-line mode.
    "[GC",
    "[Full GC",
];

/// Where scanned lines go.
pub(crate) trait LineSink {
    /// One line (without its newline); `truncated` when only its head fits the buffer.
    fn line(&mut self, number: u64, bytes: &[u8], truncated: bool);
    /// Hand out every line, not only anchored ones.
    fn wants_every_line(&self) -> bool;
}

/// What the scan saw of the input as a whole.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct ScanSummary {
    pub bytes: u64,
    pub lines: u64,
    pub lines_truncated: u64,
    pub first_nul: Option<u64>,
    pub unterminated_last_line: bool,
}

pub(crate) fn anchors() -> AhoCorasick {
    AhoCorasick::builder()
        .match_kind(MatchKind::LeftmostFirst)
        .build(ANCHORS)
        .expect("anchor words build an automaton")
}

/// Scan `input` through one buffer of `buffer_bytes`, handing lines to `sink`.
pub(crate) fn scan(
    mut input: impl Read,
    ac: &AhoCorasick,
    buffer_bytes: usize,
    sink: &mut dyn LineSink,
) -> io::Result<ScanSummary> {
    let cap = buffer_bytes.max(64);
    let mut buf = vec![0u8; cap];
    let (mut start, mut end) = (0usize, 0usize);
    let mut sum = ScanSummary::default();
    let mut eof = false;
    // Inside a line longer than the buffer whose head was handed out already.
    let mut skipping = false;
    loop {
        if start > 0 {
            buf.copy_within(start..end, 0);
            end -= start;
            start = 0;
        }
        while !eof && end < cap {
            match input.read(&mut buf[end..]) {
                Ok(0) => eof = true,
                Ok(n) => {
                    if sum.first_nul.is_none() {
                        if let Some(i) = memchr::memchr(0, &buf[end..end + n]) {
                            sum.first_nul = Some(sum.bytes + i as u64);
                        }
                    }
                    sum.bytes += n as u64;
                    end += n;
                    // One read per round is enough once a line is complete.
                    if memchr::memchr(b'\n', &buf[end - n..end]).is_some() {
                        break;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        if skipping {
            match memchr::memchr(b'\n', &buf[start..end]) {
                Some(i) => {
                    start += i + 1;
                    skipping = false;
                }
                None => {
                    start = end;
                    if eof {
                        return Ok(sum);
                    }
                    continue;
                }
            }
        }
        // Complete lines: up to the last newline (or everything, at the end).
        let complete = match memchr::memrchr(b'\n', &buf[start..end]) {
            Some(i) => start + i + 1,
            None if eof => end,
            None if end - start == cap => {
                // A line longer than the buffer: hand out its head, skip its tail.
                sum.lines += 1;
                sum.lines_truncated += 1;
                sink.line(sum.lines, &buf[start..end], true);
                start = end;
                skipping = true;
                continue;
            }
            None => continue,
        };
        if complete > start {
            if complete == end && eof && buf[end - 1] != b'\n' {
                sum.unterminated_last_line = true;
            }
            scan_region(&buf[start..complete], ac, sink, &mut sum.lines);
        }
        start = complete;
        if eof && start >= end {
            return Ok(sum);
        }
    }
}

/// Hand out the lines of `region` (whole lines; the last may lack its newline).
fn scan_region(region: &[u8], ac: &AhoCorasick, sink: &mut dyn LineSink, lines: &mut u64) {
    let len = region.len();
    let mut pos = 0;
    while pos < len {
        if sink.wants_every_line() {
            let le = memchr::memchr(b'\n', &region[pos..]).map_or(len, |i| pos + i);
            *lines += 1;
            sink.line(*lines, trim_cr(&region[pos..le]), false);
            pos = le + 1;
            continue;
        }
        match ac.find(Input::new(region).span(pos..len)) {
            None => {
                *lines += count_lines(&region[pos..]);
                return;
            }
            Some(m) => {
                let ls =
                    memchr::memrchr(b'\n', &region[pos..m.start()]).map_or(pos, |i| pos + i + 1);
                *lines += memchr::memchr_iter(b'\n', &region[pos..ls]).count() as u64;
                let le = memchr::memchr(b'\n', &region[m.end()..]).map_or(len, |i| m.end() + i);
                *lines += 1;
                sink.line(*lines, trim_cr(&region[ls..le]), false);
                pos = le + 1;
            }
        }
    }
}

/// Lines in `s`: its newlines, plus one for an unterminated tail.
pub(crate) fn count_lines(s: &[u8]) -> u64 {
    let n = memchr::memchr_iter(b'\n', s).count() as u64;
    n + u64::from(s.last().is_some_and(|&b| b != b'\n'))
}

pub(crate) fn trim_cr(line: &[u8]) -> &[u8] {
    match line.last() {
        Some(b'\r') => &line[..line.len() - 1],
        _ => line,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Collect {
        every: bool,
        got: Vec<(u64, String, bool)>,
    }
    impl LineSink for Collect {
        fn line(&mut self, n: u64, b: &[u8], t: bool) {
            self.got
                .push((n, String::from_utf8_lossy(b).into_owned(), t));
        }
        fn wants_every_line(&self) -> bool {
            self.every
        }
    }

    fn run(input: &[u8], buffer: usize, every: bool) -> (Vec<(u64, String, bool)>, ScanSummary) {
        let mut c = Collect {
            every,
            got: Vec::new(),
        };
        let s = scan(input, &anchors(), buffer, &mut c).unwrap();
        (c.got, s)
    }

    #[test]
    fn anchored_lines_keep_their_numbers_at_any_buffer_size() {
        let input = b"a\nGC(1) Pause Young 1ms\nb\r\nc\nUsing G1\nlast";
        for buffer in [64, 65, 100, 4096] {
            let (got, s) = run(input, buffer, false);
            assert_eq!(
                got,
                vec![
                    (2, "GC(1) Pause Young 1ms".to_string(), false),
                    (5, "Using G1".to_string(), false)
                ],
                "buffer {buffer}"
            );
            assert_eq!(s.lines, 6);
            assert!(s.unterminated_last_line);
        }
    }

    #[test]
    fn every_line_mode_and_a_line_longer_than_the_buffer() {
        let mut input = vec![b'x'; 300];
        input.extend_from_slice(b"\nPause 1ms\n");
        let (got, s) = run(&input, 64, true);
        assert_eq!(got.len(), 2);
        assert!(got[0].2);
        assert_eq!(got[0].1.len(), 64);
        assert_eq!(got[1], (2, "Pause 1ms".to_string(), false));
        assert_eq!(s.lines_truncated, 1);
    }

    #[test]
    fn nul_offset_is_kept() {
        let (_, s) = run(b"ab\0c\n", 64, true);
        assert_eq!(s.first_nul, Some(2));
    }
}
