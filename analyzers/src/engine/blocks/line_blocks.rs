//! An input cut into blocks of whole lines, the buffers reused: what both block front ends
//! read (the librdkafka log analyzers' [`pipeline`](crate::librdkafka::pipeline) and the GC analyzer's
//! `gc::blocks`). The lines are those a line reader cuts: a line of `max_line` bytes or
//! more (without its newline fitting) is handed out by its head, in a block of its own,
//! and its tail skipped; the last line without a newline is flagged.

use std::io::{self, Read};

/// Whole lines read in one go: `buf[..len]` (the rest is room for the next read).
pub(crate) struct LineBlock {
    /// The block's place in the input (0, 1, …).
    pub(crate) seq: u64,
    pub(crate) buf: Vec<u8>,
    pub(crate) len: usize,
    /// Not lines but the head of one line of `max_line` bytes or more.
    pub(crate) long_head: bool,
    /// The last line has no newline (the input ended).
    pub(crate) unterminated: bool,
}

/// Reads an input into blocks of whole lines.
pub(crate) struct BlockReader<R> {
    inner: R,
    max_line: usize,
    /// Size of a block's buffer: at most `max_line`, so that a line that does not fit
    /// (with its newline) is one to cut; it grows (up to `max_line`) for a long line.
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
}

impl<R: Read> BlockReader<R> {
    /// Blocks of `block_bytes` (more for a longer line, up to `max_line`).
    pub(crate) fn new(inner: R, block_bytes: usize, max_line: usize) -> Self {
        let max_line = max_line.max(1);
        BlockReader {
            inner,
            max_line,
            cap: block_bytes.clamp(1, max_line),
            carry: Vec::new(),
            eof: false,
            skipping: false,
            bytes_read: 0,
            first_nul: None,
            unterminated_last_line: false,
            lines_truncated: 0,
            seq: 0,
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
    pub(crate) fn next_block(&mut self, mut buf: Vec<u8>) -> io::Result<Option<LineBlock>> {
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
            let block = |buf, len, long_head, unterminated| LineBlock {
                seq,
                buf,
                len,
                long_head,
                unterminated,
            };
            if let Some(i) = memchr::memrchr(b'\n', &buf[..len]) {
                self.carry.extend_from_slice(&buf[i + 1..len]);
                self.seq += 1;
                return Ok(Some(block(buf, i + 1, false, false)));
            }
            if len >= self.max_line {
                // Hand out the head of a too-long line and skip the rest.
                self.carry.extend_from_slice(&buf[self.max_line..len]);
                self.skipping = true;
                self.lines_truncated += 1;
                self.seq += 1;
                return Ok(Some(block(buf, self.max_line, true, false)));
            }
            if self.eof {
                self.unterminated_last_line = true;
                self.seq += 1;
                return Ok(Some(block(buf, len, false, true)));
            }
            // One line longer than the buffer: grow it, up to the line cap.
            if len == buf.len() {
                self.cap = (buf.len() * 2).min(self.max_line);
                buf.resize(self.cap, 0);
            }
        }
    }

    /// Bytes read so far (of the inflated text, for gzip).
    pub(crate) fn bytes_read(&self) -> u64 {
        self.bytes_read
    }

    /// The offset of the first NUL byte read, if any (a binary file).
    pub(crate) fn first_nul(&self) -> Option<u64> {
        self.first_nul
    }

    pub(crate) fn lines_truncated(&self) -> u64 {
        self.lines_truncated
    }

    pub(crate) fn unterminated_last_line(&self) -> bool {
        self.unterminated_last_line
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every block's lines, `(text, long_head)`, and the reader at the end.
    fn blocks(input: &[u8], block_bytes: usize, max_line: usize) -> (Vec<(String, bool)>, u64) {
        let mut r = BlockReader::new(input, block_bytes, max_line);
        let (mut out, mut seq) = (Vec::new(), 0);
        while let Some(b) = r.next_block(Vec::new()).unwrap() {
            assert_eq!(b.seq, seq);
            seq += 1;
            let text = &b.buf[..b.len];
            if b.long_head {
                out.push((String::from_utf8_lossy(text).into_owned(), true));
                continue;
            }
            assert!(b.unterminated || text.ends_with(b"\n"));
            for l in text.split_inclusive(|&c| c == b'\n') {
                let l = l.strip_suffix(b"\n").unwrap_or(l);
                out.push((String::from_utf8_lossy(l).into_owned(), false));
            }
        }
        assert_eq!(r.bytes_read(), input.len() as u64);
        (out, r.lines_truncated())
    }

    #[test]
    fn lines_cut_at_the_cap_and_the_same_at_any_block_size() {
        let input = b"ab\nabcdefghij\nxy\nlast";
        let line = |s: &str, head| (s.to_string(), head);
        for block_bytes in [1, 2, 4, 5, 7, 64] {
            let (got, truncated) = blocks(input, block_bytes, 5);
            assert_eq!(
                got,
                vec![
                    line("ab", false),
                    line("abcde", true),
                    line("xy", false),
                    line("last", false)
                ],
                "blocks of {block_bytes}"
            );
            assert_eq!(truncated, 1);
        }
    }

    #[test]
    fn an_unterminated_last_line_and_a_nul_are_noted() {
        let mut r = BlockReader::new(&b"a\0\nb"[..], 64, 64);
        while r.next_block(Vec::new()).unwrap().is_some() {}
        assert!(r.unterminated_last_line());
        assert_eq!(r.first_nul(), Some(1));
        let mut r = BlockReader::new(&b"a\nb\n"[..], 64, 64);
        while r.next_block(Vec::new()).unwrap().is_some() {}
        assert!(!r.unterminated_last_line());
        assert_eq!(r.first_nul(), None);
    }
}
