//! Finding JSON objects in a byte stream, whatever surrounds them.
//!
//! Statistics arrive one object a line (a `stats_cb` that writes the string), several on a
//! line, pretty-printed over many lines (pasted into an issue), or after a log prefix (a
//! timestamp, a logger name, `STATS:`). The framer skips everything outside objects without
//! keeping it, and hands out each object's bytes as one slice of its buffer: memory is the
//! read buffer plus the largest object, never the input.
//!
//! Truncation is found without waiting for the end of the input:
//! - an object whose first line carries content (`{ "name": …`, librdkafka's own form) is
//!   one line: a newline before its closing brace means it was cut;
//! - a pretty-printed object (`{` alone on its line) continues only with lines that start
//!   with `"`, `}` or `]`; any other line (a log prefix, a new `{`) means it was cut, and that
//!   line is read again from its start;
//! - a raw newline inside a string is never JSON.
//!
//! Objects longer than the cap are skipped to their end and reported, not held.

use std::io::{self, Read};

/// Read size; objects are usually ~10 KB, so a read brings many.
pub const READ_BYTES: usize = 256 * 1024;
/// Default cap on one object (a client with ~40,000 partitions).
pub const DEFAULT_MAX_OBJECT_BYTES: usize = 32 * 1024 * 1024;

/// Why a candidate object was not handed out whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cut {
    /// A one-line object whose line ended first.
    LineEnded,
    /// A pretty-printed object followed by a line that is not its continuation.
    NotContinued,
    /// A newline inside a string.
    NewlineInString,
    /// The input ended first.
    InputEnded,
    /// Longer than the cap.
    TooLong,
}

impl Cut {
    pub fn reason(&self, cap: usize) -> String {
        match self {
            Cut::LineEnded => "truncated object: its line ended before the closing brace".into(),
            Cut::NotContinued => {
                "truncated object: a line that does not continue it came before the closing brace"
                    .into()
            }
            Cut::NewlineInString => "truncated object: a line ended inside a string".into(),
            Cut::InputEnded => "truncated object: the input ended before the closing brace".into(),
            Cut::TooLong => format!(
                "object longer than {} MiB: skipped (raise --max-object-mb)",
                cap / (1024 * 1024)
            ),
        }
    }
}

/// One candidate object.
#[derive(Debug)]
pub enum Frame<'a> {
    /// Braces balanced: the object's bytes (not yet known to be valid JSON).
    Whole { line: u64, text: &'a [u8] },
    /// Cut short; `head` is what was kept of it (empty for [`Cut::TooLong`] beyond the cap).
    Cut { line: u64, cut: Cut, head: &'a [u8] },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Layout {
    /// Not decided: no newline seen yet inside the object.
    Open,
    /// `{` alone on its line.
    Pretty,
}

pub struct Framer<R> {
    inner: R,
    buf: Vec<u8>,
    /// Next byte to scan.
    pos: usize,
    end: usize,
    eof: bool,
    max_object: usize,
    /// 1-based line of `buf[pos]`.
    line: u64,
    /// Bytes dropped from the front of `buf` so far (for offsets).
    dropped: u64,
    first_nul: Option<u64>,
    /// Inside an object: where it starts in `buf`, its line, and the scanner's state.
    obj: Option<ObjState>,
    /// The object grew past the cap: its bytes are dropped as they are scanned.
    skipping: bool,
    /// The last byte read (a last line without a newline still counts as a line).
    last_byte: Option<u8>,
}

#[derive(Debug, Clone, Copy)]
struct ObjState {
    start: usize,
    line: u64,
    depth: u32,
    in_str: bool,
    esc: bool,
    layout: Layout,
    /// Just after a newline in a pretty object: the next non-blank byte decides.
    at_line_start: bool,
    /// Where that line starts in `buf` (to re-read it when it does not continue the object).
    line_start: usize,
    /// Only whitespace since the opening brace.
    blank_so_far: bool,
}

impl<R: Read> Framer<R> {
    pub fn new(inner: R, max_object: usize) -> Self {
        Framer {
            inner,
            buf: vec![0; READ_BYTES],
            pos: 0,
            end: 0,
            eof: false,
            max_object: max_object.max(2),
            line: 1,
            dropped: 0,
            first_nul: None,
            obj: None,
            skipping: false,
            last_byte: None,
        }
    }

    /// Bytes read so far (decompressed, for gzip).
    pub fn bytes_read(&self) -> u64 {
        self.dropped + self.end as u64
    }

    /// Lines seen so far (a last line without a newline counts).
    pub fn lines(&self) -> u64 {
        let partial = self.last_byte.is_some_and(|b| b != b'\n');
        self.line - 1 + partial as u64
    }

    pub fn first_nul(&self) -> Option<u64> {
        self.first_nul
    }

    pub fn max_object(&self) -> usize {
        self.max_object
    }

    /// Keep the bytes from `keep` on, read more. Returns false at the end of the input.
    fn refill(&mut self, keep: usize) -> io::Result<bool> {
        if keep > 0 {
            self.buf.copy_within(keep..self.end, 0);
            self.dropped += keep as u64;
            self.end -= keep;
            self.pos -= keep;
            if let Some(o) = &mut self.obj {
                o.start -= keep.min(o.start);
                o.line_start -= keep.min(o.line_start);
            }
        }
        if self.end == self.buf.len() {
            // Grow only for an object that still fits under the cap.
            let grown = (self.buf.len() * 2).min(self.max_object + READ_BYTES);
            if grown > self.buf.len() {
                self.buf.resize(grown, 0);
            }
        }
        loop {
            match self.inner.read(&mut self.buf[self.end..]) {
                Ok(0) => {
                    self.eof = true;
                    return Ok(false);
                }
                Ok(n) => {
                    if self.first_nul.is_none() {
                        if let Some(i) = memchr::memchr(0, &self.buf[self.end..self.end + n]) {
                            self.first_nul = Some(self.dropped + (self.end + i) as u64);
                        }
                    }
                    self.end += n;
                    self.last_byte = Some(self.buf[self.end - 1]);
                    return Ok(true);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
    }

    /// The next candidate object, or `None` at the end of the input.
    pub fn next_frame(&mut self) -> io::Result<Option<Frame<'_>>> {
        loop {
            match self.obj {
                None => {
                    // Outside any object: find the next `{`, counting lines on the way.
                    let hay = &self.buf[self.pos..self.end];
                    let mut found = None;
                    for i in memchr::memchr2_iter(b'{', b'\n', hay) {
                        if hay[i] == b'\n' {
                            self.line += 1;
                        } else {
                            found = Some(i);
                            break;
                        }
                    }
                    match found {
                        Some(i) => {
                            let start = self.pos + i;
                            self.pos = start + 1;
                            self.obj = Some(ObjState {
                                start,
                                line: self.line,
                                depth: 1,
                                in_str: false,
                                esc: false,
                                layout: Layout::Open,
                                at_line_start: false,
                                line_start: start,
                                blank_so_far: true,
                            });
                            self.skipping = false;
                        }
                        None => {
                            self.pos = self.end;
                            if self.eof || !self.refill(self.end)? {
                                return Ok(None);
                            }
                        }
                    }
                }
                Some(_) => {
                    if let Some(done) = self.scan_object() {
                        return Ok(Some(self.finish(done)));
                    }
                    // Need more input.
                    let keep = if self.skipping {
                        // Drop what was scanned of an object past the cap.
                        let o = self.obj.as_mut().expect("in an object");
                        o.start = self.pos;
                        o.line_start = self.pos;
                        self.pos
                    } else {
                        let o = self.obj.as_ref().expect("in an object");
                        if self.pos - o.start > self.max_object {
                            self.skipping = true;
                            self.pos
                        } else {
                            o.start.min(o.line_start)
                        }
                    };
                    if self.eof || !self.refill(keep)? {
                        let o = self.obj.take().expect("in an object");
                        let cut = if self.skipping {
                            Cut::TooLong
                        } else {
                            Cut::InputEnded
                        };
                        let head = if self.skipping {
                            &[][..]
                        } else {
                            &self.buf[o.start..self.end]
                        };
                        self.pos = self.end;
                        return Ok(Some(Frame::Cut {
                            line: o.line,
                            cut,
                            head,
                        }));
                    }
                }
            }
        }
    }

    /// Scan the open object from `pos`. `Some` when it ended (whole or cut); the position is
    /// then just past it (or at the start of the line to read again).
    fn scan_object(&mut self) -> Option<Ended> {
        let mut o = self.obj.expect("in an object");
        let buf = &self.buf[..self.end];
        let mut i = self.pos;
        let result = loop {
            if i >= buf.len() {
                break None;
            }
            if o.in_str {
                if o.esc {
                    // The byte after a `\` that ended the previous read.
                    o.esc = false;
                    if buf[i] == b'\n' {
                        break Some(Ended::Cut(Cut::NewlineInString, i));
                    }
                    i += 1;
                    continue;
                }
                // Jump to the next byte that matters inside a string.
                match memchr::memchr3(b'"', b'\\', b'\n', &buf[i..]) {
                    None => {
                        i = buf.len();
                        continue;
                    }
                    Some(k) => i += k,
                }
                match buf[i] {
                    b'\\' => {
                        if i + 1 < buf.len() {
                            if buf[i + 1] == b'\n' {
                                break Some(Ended::Cut(Cut::NewlineInString, i + 1));
                            }
                            i += 2;
                        } else {
                            o.esc = true;
                            i += 1;
                        }
                    }
                    b'"' => {
                        o.in_str = false;
                        i += 1;
                    }
                    _ => break Some(Ended::Cut(Cut::NewlineInString, i)),
                }
                continue;
            }
            let c = buf[i];
            if o.at_line_start {
                match c {
                    b' ' | b'\t' | b'\r' => {
                        i += 1;
                        continue;
                    }
                    b'\n' => {}
                    b'"' | b'}' | b']' => o.at_line_start = false,
                    _ => break Some(Ended::Reread(o.line_start)),
                }
            }
            match c {
                b'"' => {
                    o.in_str = true;
                    o.blank_so_far = false;
                }
                b'{' | b'[' => {
                    o.depth += 1;
                    o.blank_so_far = false;
                }
                b'}' | b']' => {
                    o.depth -= 1;
                    o.blank_so_far = false;
                    if o.depth == 0 {
                        break Some(Ended::Whole(i + 1));
                    }
                }
                b'\n' => {
                    self.line += 1;
                    if o.layout == Layout::Open {
                        if o.blank_so_far {
                            o.layout = Layout::Pretty;
                        } else {
                            break Some(Ended::Cut(Cut::LineEnded, i));
                        }
                    }
                    o.at_line_start = true;
                    o.line_start = i + 1;
                }
                b' ' | b'\t' | b'\r' => {}
                _ => o.blank_so_far = false,
            }
            i += 1;
        };
        match result {
            None => {
                // The scanned newlines were counted; remember the state.
                self.pos = i;
                self.obj = Some(o);
                None
            }
            Some(r) => {
                self.obj = Some(o);
                Some(r)
            }
        }
    }

    fn finish(&mut self, done: Ended) -> Frame<'_> {
        let o = self.obj.take().expect("in an object");
        let skipped = std::mem::replace(&mut self.skipping, false);
        match done {
            Ended::Whole(end) => {
                self.pos = end;
                if skipped || end - o.start > self.max_object {
                    Frame::Cut {
                        line: o.line,
                        cut: Cut::TooLong,
                        head: &[],
                    }
                } else {
                    Frame::Whole {
                        line: o.line,
                        text: &self.buf[o.start..end],
                    }
                }
            }
            Ended::Cut(cut, at) => {
                // The newline at `at` is scanned again outside the object (and counted then).
                if cut == Cut::LineEnded || cut == Cut::NewlineInString {
                    // It was not counted yet for a string; for LineEnded it was: undo.
                    if cut == Cut::LineEnded {
                        self.line -= 1;
                    }
                }
                self.pos = at;
                let cut = if skipped { Cut::TooLong } else { cut };
                let head = if skipped {
                    &[][..]
                } else {
                    &self.buf[o.start..at]
                };
                Frame::Cut {
                    line: o.line,
                    cut,
                    head,
                }
            }
            Ended::Reread(line_start) => {
                // Read the line that broke the object again, from its start; its newline
                // before it was counted already.
                self.pos = line_start;
                let cut = if skipped {
                    Cut::TooLong
                } else {
                    Cut::NotContinued
                };
                let head = if skipped {
                    &[][..]
                } else {
                    &self.buf[o.start..line_start]
                };
                Frame::Cut {
                    line: o.line,
                    cut,
                    head,
                }
            }
        }
    }
}

#[derive(Debug, Clone, Copy)]
enum Ended {
    /// Closing brace at `end - 1`.
    Whole(usize),
    /// Cut at the byte `at` (a newline, read again outside the object).
    Cut(Cut, usize),
    /// Cut by the line starting at this position.
    Reread(usize),
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (line, text or cut) of every frame, reading through a tiny buffer too.
    fn frames(input: &[u8]) -> Vec<(u64, Result<String, Cut>)> {
        let mut f = Framer::new(input, 1 << 20);
        let mut out = Vec::new();
        while let Some(fr) = f.next_frame().unwrap() {
            out.push(match fr {
                Frame::Whole { line, text } => (line, Ok(String::from_utf8_lossy(text).into())),
                Frame::Cut { line, cut, .. } => (line, Err(cut)),
            });
        }
        out
    }

    fn whole(line: u64, s: &str) -> (u64, Result<String, Cut>) {
        (line, Ok(s.to_string()))
    }

    #[test]
    fn one_a_line_several_a_line_and_after_a_prefix() {
        let got = frames(
            b"{\"a\":1}\n{\"b\":{\"c\":\"}\"}}{\"d\":2}\n2024-01-01 INFO STATS: {\"e\":\"x\\\"}\"} tail\n",
        );
        assert_eq!(
            got,
            vec![
                whole(1, "{\"a\":1}"),
                whole(2, "{\"b\":{\"c\":\"}\"}}"),
                whole(2, "{\"d\":2}"),
                whole(3, "{\"e\":\"x\\\"}\"}"),
            ]
        );
    }

    #[test]
    fn pretty_printed_objects_span_lines() {
        let got = frames(b"{\n  \"a\": {\n    \"b\": 1\n  }\n}\n{\n \"c\": 2\n}\n");
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].0, 1);
        assert_eq!(got[1], whole(6, "{\n \"c\": 2\n}"));
    }

    #[test]
    fn a_cut_line_loses_only_itself() {
        let got = frames(b"{\"a\":1, \"b\":\n{\"c\":3}\n");
        assert_eq!(got, vec![(1, Err(Cut::LineEnded)), whole(2, "{\"c\":3}")]);
        let got = frames(b"{\"a\":\"abc\n{\"c\":3}\n");
        assert_eq!(
            got,
            vec![(1, Err(Cut::NewlineInString)), whole(2, "{\"c\":3}")]
        );
    }

    #[test]
    fn a_cut_pretty_object_gives_way_to_the_next_line() {
        let got = frames(b"{\n  \"a\": {\n    \"b\": 1\nINFO next {\"c\":3}\n{\n\"d\":1}\n");
        assert_eq!(
            got,
            vec![
                (1, Err(Cut::NotContinued)),
                whole(4, "{\"c\":3}"),
                (5, Err(Cut::LineEnded))
            ]
            .into_iter()
            .take(2)
            .chain([whole(5, "{\n\"d\":1}")])
            .collect::<Vec<_>>()
        );
    }

    #[test]
    fn crlf_is_whitespace() {
        let got = frames(b"{\r\n  \"a\": 1\r\n}\r\n{\"b\":2}\r\n");
        assert_eq!(got.len(), 2);
        assert_eq!(got[1], whole(4, "{\"b\":2}"));
    }

    #[test]
    fn the_end_of_input_cuts_an_open_object() {
        assert_eq!(frames(b"x {\"a\": [1, 2"), vec![(1, Err(Cut::InputEnded))]);
        assert_eq!(frames(b""), vec![]);
    }

    #[test]
    fn objects_over_the_cap_are_skipped_not_held() {
        let mut big = b"{\"a\":\"".to_vec();
        big.extend(std::iter::repeat_n(b'x', 5000));
        big.extend_from_slice(b"\"}\n{\"b\":1}\n");
        let mut f = Framer::new(&big[..], 1000);
        let mut got = Vec::new();
        while let Some(fr) = f.next_frame().unwrap() {
            got.push(match fr {
                Frame::Whole { line, text } => (line, Ok(text.len())),
                Frame::Cut { line, cut, .. } => (line, Err(cut)),
            });
        }
        assert_eq!(got, vec![(1, Err(Cut::TooLong)), (2, Ok(7))]);
        assert!(f.buf.len() <= 1000 + READ_BYTES);
    }

    #[test]
    fn line_numbers_survive_refills() {
        // A reader that hands out 3 bytes at a time.
        struct Slow<'a>(&'a [u8]);
        impl Read for Slow<'_> {
            fn read(&mut self, b: &mut [u8]) -> io::Result<usize> {
                let n = self.0.len().min(3).min(b.len());
                b[..n].copy_from_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                Ok(n)
            }
        }
        let input = b"a\nb\n{\"x\":\n1}\n\n{\n\"y\": 2\n}\nend";
        let mut f = Framer::new(Slow(input), 1 << 20);
        let mut got = Vec::new();
        while let Some(fr) = f.next_frame().unwrap() {
            got.push(match fr {
                Frame::Whole { line, text } => (line, Ok(String::from_utf8_lossy(text).into())),
                Frame::Cut { line, cut, .. } => (line, Err(cut)),
            });
        }
        assert_eq!(
            got,
            vec![(3, Err(Cut::LineEnded)), whole(6, "{\n\"y\": 2\n}")]
        );
        assert_eq!(f.lines(), 9);
    }
}
