//! The input cut into blocks of whole lines, as [`LineReader`](crate::input::LineReader)
//! cuts it into lines: the same lines, the same cut heads of too-long ones, the same
//! counts, with the buffers reused.

use std::io::{self, Read};

use super::SpanRecord;
use crate::error::AnalyzeError;
use crate::input::InputSummary;

/// Bytes per block (more when a line is longer, up to the line cap).
pub(super) const BLOCK_BYTES: usize = 1 << 20;

/// Whole lines read in one go.
pub(super) struct Block {
    pub(super) seq: u64,
    /// The bytes are `buf[..len]`; the rest is room for the next read.
    pub(super) buf: Vec<u8>,
    pub(super) len: usize,
    /// Not lines but the head of one line of `max_line` bytes or more.
    pub(super) long_head: bool,
    /// The last line has no newline (the input ended).
    pub(super) unterminated: bool,
    /// A spare (empty) vector for the block's records, reused like the buffer.
    pub(super) records: Vec<SpanRecord>,
}

/// Reads an input into blocks of whole lines.
pub(super) struct BlockReader<R> {
    inner: R,
    gzip: bool,
    max_line: usize,
    /// Size of a block's buffer: at most `max_line`, so that a line that does not fit
    /// (with its newline) is one to cut, as [`LineReader`](crate::input::LineReader) does.
    cap: usize,
    /// Bytes after the last newline of the previous block: the start of a line.
    carry: Vec<u8>,
    eof: bool,
    /// Inside a too-long line whose head was already handed out.
    skipping: bool,
    bytes_read: u64,
    first_nul: Option<u64>,
    unterminated_last_line: bool,
    lines_truncated: u64,
    seq: u64,
    cut: crate::input::GzipCut,
}

impl<R: Read> BlockReader<R> {
    pub(super) fn new(inner: R, gzip: bool, cut: crate::input::GzipCut, max_line: usize) -> Self {
        let max_line = max_line.max(1);
        BlockReader {
            inner,
            gzip,
            max_line,
            cap: BLOCK_BYTES.min(max_line),
            carry: Vec::new(),
            eof: false,
            skipping: false,
            bytes_read: 0,
            first_nul: None,
            unterminated_last_line: false,
            lines_truncated: 0,
            seq: 0,
            cut,
        }
    }

    fn read_more(&mut self, buf: &mut [u8], len: &mut usize) -> io::Result<()> {
        while *len < buf.len() && !self.eof {
            match self.inner.read(&mut buf[*len..]) {
                Ok(0) => self.eof = true,
                Ok(n) => {
                    if self.first_nul.is_none() {
                        if let Some(i) = memchr::memchr(0, &buf[*len..*len + n]) {
                            self.first_nul = Some(self.bytes_read + i as u64);
                        }
                    }
                    *len += n;
                    self.bytes_read += n as u64;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// The next block, read into `buf` (a spare buffer, reused), or `None` at the end.
    pub(super) fn next_block(&mut self, mut buf: Vec<u8>) -> io::Result<Option<Block>> {
        if buf.len() < self.cap {
            buf.resize(self.cap, 0);
        }
        let mut len = self.carry.len();
        buf[..len].copy_from_slice(&self.carry);
        self.carry.clear();
        loop {
            self.read_more(&mut buf, &mut len)?;
            if self.skipping {
                // The tail of a too-long line: drop it up to its newline.
                match memchr::memchr(b'\n', &buf[..len]) {
                    Some(i) => {
                        buf.copy_within(i + 1..len, 0);
                        len -= i + 1;
                        self.skipping = false;
                    }
                    None => {
                        len = 0;
                        if self.eof {
                            return Ok(None);
                        }
                    }
                }
                continue;
            }
            if len == 0 {
                return Ok(None);
            }
            let seq = self.seq;
            if let Some(i) = memchr::memrchr(b'\n', &buf[..len]) {
                self.carry.extend_from_slice(&buf[i + 1..len]);
                self.seq += 1;
                return Ok(Some(Block {
                    seq,
                    buf,
                    len: i + 1,
                    long_head: false,
                    unterminated: false,
                    records: Vec::new(),
                }));
            }
            if len >= self.max_line {
                // Hand out the head of a too-long line and skip the rest.
                self.carry.extend_from_slice(&buf[self.max_line..len]);
                self.skipping = true;
                self.lines_truncated += 1;
                self.seq += 1;
                return Ok(Some(Block {
                    seq,
                    buf,
                    len: self.max_line,
                    long_head: true,
                    unterminated: false,
                    records: Vec::new(),
                }));
            }
            if self.eof {
                self.unterminated_last_line = true;
                self.seq += 1;
                return Ok(Some(Block {
                    seq,
                    buf,
                    len,
                    long_head: false,
                    unterminated: true,
                    records: Vec::new(),
                }));
            }
            // One line longer than the buffer: grow it, up to the line cap.
            if len == buf.len() {
                self.cap = (buf.len() * 2).min(self.max_line);
                buf.resize(self.cap, 0);
            }
        }
    }

    pub(super) fn error(&self, e: io::Error) -> AnalyzeError {
        if self.gzip {
            AnalyzeError::Gzip {
                bytes_read: self.bytes_read,
                source: e,
            }
        } else {
            AnalyzeError::Read(e)
        }
    }

    pub(super) fn summary(&self) -> InputSummary {
        InputSummary {
            bytes_read: self.bytes_read,
            gzip: self.gzip,
            lines_truncated: self.lines_truncated,
            binary_at_offset: self.first_nul,
            unterminated_last_line: self.unterminated_last_line,
            gzip_cut: self.cut.get(),
        }
    }
}
