//! Streaming input: gzip detection and a line reader over a fixed-size buffer.
//!
//! Memory never follows the input's size: lines are handed out as slices of one
//! buffer, and a line longer than the buffer's cap is cut to its head (the rest is
//! skipped up to the next newline, and counted).

use std::io::{self, Cursor, Read};
use std::sync::{Arc, OnceLock};

use crate::vocab::error::AnalyzeError;

/// Buffer size for reads; large enough that a read syscall is rare per line.
pub const DEFAULT_BUFFER_BYTES: usize = 256 * 1024;
/// Longest line kept whole. librdkafka's own messages are at most 2 KiB (its
/// formatting buffer), so 1 MiB leaves room for any wrapper around them.
pub const DEFAULT_MAX_LINE_BYTES: usize = 1024 * 1024;

/// Input after gzip detection: plain bytes, or the decompressed stream.
pub enum Input<R: Read> {
    /// Not gzip: the peeked bytes, then the rest.
    Plain(io::Chain<Cursor<Vec<u8>>, R>),
    /// gzip (one or more members, as `cat a.gz b.gz` makes).
    Gzip(
        Box<flate2::read::MultiGzDecoder<io::Chain<Cursor<Vec<u8>>, R>>>,
        GzipCut,
    ),
}

/// Set when a gzip stream ends before its end (a file copied while it was written, or
/// truncated): the decoder's words. The input then reads as ended, so what inflated before
/// the cut is analysed, and the reports say where it stopped.
#[derive(Debug, Clone, Default)]
pub struct GzipCut(Arc<OnceLock<String>>);

impl GzipCut {
    pub fn get(&self) -> Option<String> {
        self.0.get().cloned()
    }
}

impl<R: Read> Input<R> {
    /// Peek at the first two bytes and decompress if they are gzip's magic.
    pub fn detect(mut inner: R) -> io::Result<Self> {
        let mut magic = Vec::with_capacity(2);
        let mut byte = [0u8; 2];
        while magic.len() < 2 {
            match inner.read(&mut byte[..2 - magic.len()]) {
                Ok(0) => break,
                Ok(n) => magic.extend_from_slice(&byte[..n]),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
        let gzip = magic == [0x1f, 0x8b];
        let chained = Cursor::new(magic).chain(inner);
        Ok(if gzip {
            Input::Gzip(
                Box::new(flate2::read::MultiGzDecoder::new(chained)),
                GzipCut::default(),
            )
        } else {
            Input::Plain(chained)
        })
    }

    /// True when the input was gzip.
    pub fn is_gzip(&self) -> bool {
        matches!(self, Input::Gzip(..))
    }

    /// The handle that says, once the input is read, whether a gzip stream was cut short.
    pub fn gzip_cut(&self) -> GzipCut {
        match self {
            Input::Plain(_) => GzipCut::default(),
            Input::Gzip(_, cut) => cut.clone(),
        }
    }
}

impl<R: Read> Read for Input<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Input::Plain(r) => r.read(buf),
            // A stream cut short ends here; a corrupt one (InvalidInput) stays an error.
            Input::Gzip(r, cut) => match r.read(buf) {
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
                    let _ = cut.0.set(e.to_string());
                    Ok(0)
                }
                other => other,
            },
        }
    }
}

/// What an analyzer reads: a regular file, which the block front ends read in chunks on
/// their parsing threads (positioned reads, no reading thread), or any other stream (a
/// pipe, stdin, a FIFO, bytes in memory), read in order on a thread of its own.
pub enum Source<'a> {
    /// A regular file, with the progress bar its reading moves.
    File(crate::engine::progress::Progress<std::fs::File>),
    Stream(Box<dyn Read + Send + 'a>),
}

impl<'a> Source<'a> {
    /// A regular file (no progress bar).
    pub fn file(file: std::fs::File) -> Source<'a> {
        Source::File(crate::engine::progress::Progress::hidden(file))
    }

    /// Any reader, read in order.
    pub fn stream(reader: impl Read + Send + 'a) -> Source<'a> {
        Source::Stream(Box::new(reader))
    }

    /// The file to read in chunks on `threads` threads: a plain (not gzip) regular file,
    /// and one thread at least; else the source back, to read as a stream.
    pub(crate) fn chunked(
        self,
        threads: usize,
    ) -> Result<crate::engine::progress::Progress<std::fs::File>, Self> {
        match self {
            Source::File(f)
                if threads > 0 && crate::engine::blocks::file_chunks::chunkable(f.get_ref()) =>
            {
                Ok(f)
            }
            other => Err(other),
        }
    }
}

impl Read for Source<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Source::File(f) => f.read(buf),
            Source::Stream(r) => r.read(buf),
        }
    }
}

/// The warning every report gives for a gzip stream cut short.
pub fn gzip_cut_warning(decoder: &str, bytes_read: u64) -> String {
    format!(
        "the gzip stream ends early ({decoder}) after {bytes_read} decompressed bytes: the \
         report covers the part before the cut"
    )
}

/// One line handed out by [`LineReader`], without its `\n` (and `\r`).
#[derive(Debug)]
pub struct Line<'a> {
    /// 1-based line number.
    pub number: u64,
    /// The line's bytes (its head only, when `truncated`).
    pub bytes: &'a [u8],
    /// The line was longer than the reader's cap; `bytes` is its head.
    pub truncated: bool,
}

/// Reads lines through one buffer that rolls forward.
pub struct LineReader<R> {
    inner: R,
    buf: Vec<u8>,
    start: usize,
    end: usize,
    eof: bool,
    max_line: usize,
    /// Inside a too-long line whose head was already handed out.
    skipping: bool,
    line_no: u64,
    bytes_read: u64,
    first_nul: Option<u64>,
    unterminated_last_line: bool,
}

impl<R: Read> LineReader<R> {
    /// A reader with the default buffer and line cap.
    pub fn new(inner: R) -> Self {
        Self::with_limits(inner, DEFAULT_BUFFER_BYTES, DEFAULT_MAX_LINE_BYTES)
    }

    /// A reader whose buffer starts at `buffer` bytes and never holds a line longer
    /// than `max_line` bytes (both at least 1).
    pub fn with_limits(inner: R, buffer: usize, max_line: usize) -> Self {
        let max_line = max_line.max(1);
        LineReader {
            inner,
            buf: vec![0; buffer.clamp(1, max_line)],
            start: 0,
            end: 0,
            eof: false,
            max_line,
            skipping: false,
            line_no: 0,
            bytes_read: 0,
            first_nul: None,
            unterminated_last_line: false,
        }
    }

    /// Bytes read from the input so far (decompressed bytes for gzip).
    pub fn bytes_read(&self) -> u64 {
        self.bytes_read
    }

    /// Offset of the first NUL byte seen, the mark of binary input.
    pub fn first_nul(&self) -> Option<u64> {
        self.first_nul
    }

    /// The input did not end with a newline (a truncated last line).
    pub fn unterminated_last_line(&self) -> bool {
        self.unterminated_last_line
    }

    /// Lines handed out so far.
    pub fn lines(&self) -> u64 {
        self.line_no
    }

    fn fill(&mut self) -> io::Result<()> {
        // Move the unread tail to the front, growing the buffer only while the
        // current line still fits under the cap.
        if self.start > 0 {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        if self.end == self.buf.len() {
            let grown = (self.buf.len() * 2).min(self.max_line.max(self.buf.len()));
            if grown > self.buf.len() {
                self.buf.resize(grown, 0);
            }
        }
        loop {
            match self.inner.read(&mut self.buf[self.end..]) {
                Ok(0) => {
                    self.eof = true;
                    return Ok(());
                }
                Ok(n) => {
                    if self.first_nul.is_none() {
                        if let Some(i) = memchr::memchr(0, &self.buf[self.end..self.end + n]) {
                            self.first_nul = Some(self.bytes_read + i as u64);
                        }
                    }
                    self.end += n;
                    self.bytes_read += n as u64;
                    return Ok(());
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
    }

    /// The next line, or `None` at the end of the input.
    pub fn next_line(&mut self) -> io::Result<Option<Line<'_>>> {
        loop {
            if let Some(i) = memchr::memchr(b'\n', &self.buf[self.start..self.end]) {
                let line_start = self.start;
                let line_end = self.start + i;
                self.start = line_end + 1;
                if self.skipping {
                    // The tail of a too-long line: its head was already handed out.
                    self.skipping = false;
                    continue;
                }
                self.line_no += 1;
                return Ok(Some(Line {
                    number: self.line_no,
                    bytes: trim_cr(&self.buf[line_start..line_end]),
                    truncated: false,
                }));
            }
            let pending = self.end - self.start;
            if self.skipping {
                // Still inside a too-long line: drop what we have.
                self.start = self.end;
            } else if pending >= self.max_line {
                // Hand out the head of a too-long line and skip the rest.
                let line_start = self.start;
                self.start = self.end;
                self.skipping = true;
                self.line_no += 1;
                return Ok(Some(Line {
                    number: self.line_no,
                    bytes: &self.buf[line_start..line_start + self.max_line],
                    truncated: true,
                }));
            }
            if self.eof {
                if self.start < self.end && !self.skipping {
                    let line_start = self.start;
                    self.start = self.end;
                    self.unterminated_last_line = true;
                    self.line_no += 1;
                    return Ok(Some(Line {
                        number: self.line_no,
                        bytes: trim_cr(&self.buf[line_start..self.end]),
                        truncated: false,
                    }));
                }
                return Ok(None);
            }
            self.fill()?;
        }
    }
}

fn trim_cr(line: &[u8]) -> &[u8] {
    match line.last() {
        Some(b'\r') => &line[..line.len() - 1],
        _ => line,
    }
}

/// What the reader saw of the input as a whole, for every report.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct InputSummary {
    /// Bytes read (after decompression).
    pub bytes_read: u64,
    /// The input was gzip.
    pub gzip: bool,
    /// Lines longer than the line cap; only their head was analysed.
    pub lines_truncated: u64,
    /// Offset of the first NUL byte: the input is (at least partly) binary.
    pub binary_at_offset: Option<u64>,
    /// The last line had no newline (a log cut mid-write).
    pub unterminated_last_line: bool,
    /// gzip: the stream ended early (the decoder's words); what came before was analysed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gzip_cut: Option<String>,
}

/// Read `input` line by line (gzip detected), calling `on_line` for each line.
pub(crate) fn for_each_line<R: Read>(
    input: R,
    max_line: usize,
    mut on_line: impl FnMut(&Line<'_>),
) -> Result<InputSummary, AnalyzeError> {
    let input = Input::detect(input).map_err(AnalyzeError::Read)?;
    let gzip = input.is_gzip();
    let cut = input.gzip_cut();
    let mut reader = LineReader::with_limits(input, DEFAULT_BUFFER_BYTES, max_line);
    let mut truncated = 0;
    loop {
        let line = match reader.next_line() {
            Ok(Some(line)) => line,
            Ok(None) => break,
            Err(source) if gzip => {
                return Err(AnalyzeError::Gzip {
                    bytes_read: reader.bytes_read(),
                    source,
                })
            }
            Err(e) => return Err(AnalyzeError::Read(e)),
        };
        truncated += line.truncated as u64;
        on_line(&line);
    }
    Ok(InputSummary {
        bytes_read: reader.bytes_read(),
        gzip,
        lines_truncated: truncated,
        binary_at_offset: reader.first_nul(),
        unterminated_last_line: reader.unterminated_last_line(),
        gzip_cut: cut.get(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines_of(input: &[u8], buffer: usize, max_line: usize) -> Vec<(Vec<u8>, bool)> {
        let mut r = LineReader::with_limits(input, buffer, max_line);
        let mut out = Vec::new();
        while let Some(l) = r.next_line().unwrap() {
            out.push((l.bytes.to_vec(), l.truncated));
        }
        out
    }

    #[test]
    fn splits_lines_and_strips_crlf() {
        let got = lines_of(b"a\r\nbb\n\nccc", 4, 100);
        let want: Vec<(Vec<u8>, bool)> = vec![
            (b"a".to_vec(), false),
            (b"bb".to_vec(), false),
            (b"".to_vec(), false),
            (b"ccc".to_vec(), false),
        ];
        assert_eq!(got, want);
    }

    #[test]
    fn buffer_of_one_byte_still_yields_whole_lines() {
        // Capacity 1 forces a grow on every byte: the edge ripgrep tests too.
        let got = lines_of(b"hello\nworld\n", 1, 100);
        assert_eq!(
            got,
            vec![(b"hello".to_vec(), false), (b"world".to_vec(), false)]
        );
    }

    #[test]
    fn long_line_is_cut_to_its_head_and_the_next_line_survives() {
        let mut input = vec![b'x'; 1000];
        input.extend_from_slice(b"\nnext\n");
        let got = lines_of(&input, 16, 64);
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].0.len(), 64);
        assert!(got[0].1);
        assert_eq!(got[1], (b"next".to_vec(), false));
    }

    #[test]
    fn long_unterminated_last_line_is_cut_once() {
        let input = vec![b'y'; 500];
        let got = lines_of(&input, 8, 100);
        assert_eq!(got.len(), 1);
        assert!(got[0].1);
    }

    #[test]
    fn gzip_is_detected_and_decompressed() {
        use flate2::write::GzEncoder;
        use std::io::Write;
        let mut enc = GzEncoder::new(Vec::new(), flate2::Compression::fast());
        enc.write_all(b"one\ntwo\n").unwrap();
        let gz = enc.finish().unwrap();
        let mut seen = Vec::new();
        let summary = for_each_line(&gz[..], 1024, |l| seen.push(l.bytes.to_vec())).unwrap();
        assert!(summary.gzip);
        assert_eq!(seen, vec![b"one".to_vec(), b"two".to_vec()]);
    }

    #[test]
    fn nul_byte_offset_is_reported() {
        let summary = for_each_line(&b"ab\ncd\0ef\n"[..], 1024, |_| {}).unwrap();
        assert_eq!(summary.binary_at_offset, Some(5));
    }
}
