//! A regular file cut into chunks that the parsing threads read themselves, each with
//! positioned reads (`pread`), instead of one reading thread handing blocks out (issue 19:
//! on two cores the reading thread's copy landed in its own core's cache and every byte
//! crossed to a parser's; a stand-alone test on the 1 GiB fetch log read and scanned it
//! in 72-76 ms this way against 99-109 ms through a reading thread).
//!
//! Chunk `k`'s block is the lines that start in `[k·B, (k+1)·B)`: from the first line
//! start at or after `k·B` (the byte after the first newline at or after `k·B - 1`) to
//! the first one at or after `(k+1)·B`. Neighbours agree on the line start between them,
//! so the blocks partition the file and hold the lines [`BlockReader`] cuts, in order,
//! with every line whole. A line of `max_line` bytes or more, which `BlockReader` cuts to
//! its head, is left to it: the chunk holding its start says [`Chunk::Long`], and its
//! range is read through a `BlockReader` ([`FileChunks::range`]), rare at the 1 MiB cap.
//!
//! The file's length is taken when it is opened: a log written on meanwhile is read to
//! that length; one that shrinks meanwhile is an error (its bytes moved under the reader).

use std::fs::File;
use std::io::{self, Read};
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::engine::blocks::line_blocks::LineBlock;

/// Bytes read at a time when looking for a newline outside a chunk's body.
const PROBE_BYTES: usize = 16 << 10;

/// Whether `file` is read in chunks: a regular file, not gzip (which is inflated as a
/// stream). Anything else, or a file that cannot be asked, is read as a stream.
pub(crate) fn chunkable(file: &File) -> bool {
    file.metadata().is_ok_and(|m| m.is_file()) && is_gzip(file).is_ok_and(|gz| !gz)
}

/// Whether `file` starts with gzip's magic.
fn is_gzip(file: &File) -> io::Result<bool> {
    let mut magic = [0u8; 2];
    let mut n = 0;
    while n < 2 {
        match file.read_at(&mut magic[n..], n as u64) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n == 2 && magic == [0x1f, 0x8b])
}

/// A regular file, cut into chunks of whole lines.
pub(crate) struct FileChunks {
    file: File,
    len: u64,
    chunk: u64,
    max_line: usize,
    next: AtomicU64,
}

/// What one chunk holds.
pub(crate) enum Chunk {
    /// Its lines, whole (`block.len` may be 0: a chunk inside one line), and the file
    /// offset of its first NUL byte.
    Lines {
        block: LineBlock,
        first_nul: Option<u64>,
    },
    /// A range holding a line of `max_line` bytes or more: `start` is the chunk's first
    /// line start and `body_end` its body's end; read it with [`FileChunks::range`] from
    /// `start` to [`FileChunks::line_start_from`]`(body_end)`.
    Long { start: u64, body_end: u64 },
}

impl FileChunks {
    /// Chunks of `chunk_bytes` (at most `max_line`, so that only a chunk's last line can
    /// be one to cut).
    pub(crate) fn new(file: File, chunk_bytes: usize, max_line: usize) -> io::Result<Self> {
        let len = file.metadata()?.len();
        let max_line = max_line.max(1);
        Ok(FileChunks {
            file,
            len,
            chunk: chunk_bytes.clamp(1, max_line) as u64,
            max_line,
            next: AtomicU64::new(0),
        })
    }

    /// [`Self::new`] on a handle of its own on `file` (the caller's moves its progress bar
    /// as the chunks are fed).
    pub(crate) fn of(file: &File, chunk_bytes: usize, max_line: usize) -> io::Result<Self> {
        Self::new(file.try_clone()?, chunk_bytes, max_line)
    }

    /// The file's length when opened: the bytes the chunks cover.
    pub(crate) fn len(&self) -> u64 {
        self.len
    }

    /// Lines of this many bytes or more are cut to their head.
    pub(crate) fn max_line(&self) -> usize {
        self.max_line
    }

    /// How many chunks the file is cut into.
    pub(crate) fn count(&self) -> u64 {
        self.len.div_ceil(self.chunk)
    }

    /// The next chunk not yet claimed, or `None` past the end.
    pub(crate) fn claim(&self) -> Option<u64> {
        let k = self.next.fetch_add(1, Ordering::Relaxed);
        (k.saturating_mul(self.chunk) < self.len).then_some(k)
    }

    /// Fill `buf` from `offset`: every byte, or an error if the file ends first.
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        self.file.read_exact_at(buf, offset).map_err(|e| {
            if e.kind() == io::ErrorKind::UnexpectedEof {
                io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the file shrank while it was read",
                )
            } else {
                e
            }
        })
    }

    /// The first line start at or after `pos`, but not past `limit` (`limit` when none
    /// is before it): 0, or the byte after the first newline at or after `pos - 1`.
    pub(crate) fn line_start_from(&self, pos: u64, limit: u64) -> io::Result<u64> {
        if pos == 0 {
            return Ok(0);
        }
        let limit = limit.min(self.len);
        let mut probe = [0u8; PROBE_BYTES];
        let mut at = pos - 1;
        while at < limit {
            let n = (limit - at).min(PROBE_BYTES as u64) as usize;
            self.read_exact_at(&mut probe[..n], at)?;
            if let Some(i) = memchr::memchr(b'\n', &probe[..n]) {
                return Ok((at + i as u64 + 1).min(limit));
            }
            at += n as u64;
        }
        Ok(limit)
    }

    /// Read chunk `seq` into `buf` (a spare buffer, reused).
    pub(crate) fn read(&self, seq: u64, mut buf: Vec<u8>) -> io::Result<Chunk> {
        let lo = seq * self.chunk;
        let body_end = (lo + self.chunk).min(self.len);
        let start = self.line_start_from(lo, body_end)?;
        let block = |buf, len, unterminated| LineBlock {
            seq,
            buf,
            len,
            long_head: false,
            unterminated,
        };
        if start == body_end {
            return Ok(Chunk::Lines {
                block: block(buf, 0, false),
                first_nul: None,
            });
        }
        // The body, then the rest of its last line. The buffer is not cleared: zeroing a
        // block's room each time cost more than reading into it.
        let body = (body_end - start) as usize;
        if buf.len() < body {
            buf.resize(body, 0);
        }
        self.read_exact_at(&mut buf[..body], start)?;
        // The chunk's last line starts after the body's last newline but its last byte
        // (that newline ends the line before it): every other line is shorter than the
        // chunk, so under the cap.
        let last_start = memchr::memrchr(b'\n', &buf[..body - 1]).map_or(0, |i| i + 1);
        let mut end = (buf[body - 1] == b'\n').then_some(body);
        let mut filled = body;
        let mut at = body_end;
        while end.is_none() && at < self.len && filled - last_start < self.max_line {
            let n = (self.len - at).min(PROBE_BYTES as u64) as usize;
            if buf.len() < filled + n {
                buf.resize(filled + n, 0);
            }
            self.read_exact_at(&mut buf[filled..filled + n], at)?;
            end = memchr::memchr(b'\n', &buf[filled..filled + n]).map(|i| filled + i + 1);
            filled += n;
            at += n as u64;
        }
        let (len, unterminated) = match end {
            Some(e) => (e, false),
            None => (filled, true),
        };
        // The last line, without its newline: cut by a line reader from `max_line` bytes.
        if len - usize::from(!unterminated) - last_start >= self.max_line {
            return Ok(Chunk::Long { start, body_end });
        }
        let first_nul = memchr::memchr(0, &buf[..len]).map(|i| start + i as u64);
        Ok(Chunk::Lines {
            block: block(buf, len, unterminated),
            first_nul,
        })
    }

    /// The bytes `start..end` as a reader (for a [`BlockReader`](crate::engine::blocks::line_blocks::BlockReader)).
    pub(crate) fn range(&self, start: u64, end: u64) -> Range<'_> {
        Range {
            chunks: self,
            at: start,
            end,
        }
    }
}

/// Part of the file, read with positioned reads.
pub(crate) struct Range<'a> {
    chunks: &'a FileChunks,
    at: u64,
    end: u64,
}

impl Read for Range<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = (self.end - self.at).min(buf.len() as u64) as usize;
        self.chunks.read_exact_at(&mut buf[..n], self.at)?;
        self.at += n as u64;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::blocks::line_blocks::BlockReader;
    use std::io::Write;

    /// The lines `(text, long_head)` of blocks, as `BlockReader` cuts them, and the
    /// reader's counts: (lines, truncated, first NUL, unterminated).
    type Cut = (Vec<(Vec<u8>, bool)>, u64, Option<u64>, bool);

    fn lines_of(block: &LineBlock, out: &mut Vec<(Vec<u8>, bool)>) {
        let text = &block.buf[..block.len];
        if block.long_head {
            out.push((text.to_vec(), true));
            return;
        }
        assert!(block.unterminated || text.is_empty() || text.ends_with(b"\n"));
        for l in text.split_inclusive(|&c| c == b'\n') {
            out.push((l.strip_suffix(b"\n").unwrap_or(l).to_vec(), false));
        }
    }

    fn by_block_reader<R: Read>(input: R, max_line: usize) -> Cut {
        let mut r = BlockReader::new(input, 7, max_line);
        let mut out = Vec::new();
        while let Some(b) = r.next_block(Vec::new()).unwrap() {
            lines_of(&b, &mut out);
        }
        (
            out,
            r.lines_truncated(),
            r.first_nul(),
            r.unterminated_last_line(),
        )
    }

    fn by_chunks(path: &std::path::Path, chunk: usize, max_line: usize) -> Cut {
        let c = FileChunks::new(File::open(path).unwrap(), chunk, max_line).unwrap();
        let (mut out, mut truncated, mut nul, mut unterminated) = (Vec::new(), 0, None, false);
        let mut bytes = 0;
        let mut seq = 0;
        while let Some(k) = c.claim() {
            assert_eq!(k, seq);
            seq += 1;
            match c.read(k, Vec::new()).unwrap() {
                Chunk::Lines { block, first_nul } => {
                    bytes += block.len as u64;
                    unterminated |= block.unterminated;
                    nul = nul.or(first_nul);
                    lines_of(&block, &mut out);
                }
                Chunk::Long { start, body_end } => {
                    let end = c.line_start_from(body_end, u64::MAX).unwrap();
                    bytes += end - start;
                    let (l, t, n, u) = by_block_reader(c.range(start, end), max_line);
                    out.extend(l);
                    truncated += t;
                    nul = nul.or(n.map(|n| n + start));
                    unterminated |= u;
                }
            }
        }
        assert_eq!(bytes, c.len(), "the chunks cover the file");
        (out, truncated, nul, unterminated)
    }

    #[test]
    fn chunks_hold_the_lines_a_block_reader_cuts() {
        let dir = std::env::temp_dir().join(format!("kgap-chunks-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("log");
        let inputs: [&[u8]; 9] = [
            b"",
            b"\n",
            b"a",
            b"ab\nabcdefghij\nxy\nlast",
            b"ab\nabcdefghij\nxy\nlast\n",
            b"\n\n\nabcdefghijklmnopqrstuvwxyz\n\n",
            b"one\0two\nthree\n\0",
            b"abcdefghijklmnop",
            b"x\ny\nzzzzz\nwwww\nvvvvvv",
        ];
        let mut texts: Vec<Vec<u8>> = inputs.iter().map(|i| i.to_vec()).collect();
        // Lines of every length around the chunk sizes and caps below.
        let mut many = Vec::new();
        for n in 0..40 {
            many.extend(std::iter::repeat_n(b'a' + (n % 26) as u8, n));
            many.push(b'\n');
        }
        texts.push(many.clone());
        many.pop();
        texts.push(many);
        for text in &texts {
            std::fs::File::create(&path)
                .unwrap()
                .write_all(text)
                .unwrap();
            for max_line in [1, 2, 3, 5, 8, 13, 64, 1 << 20] {
                let want = by_block_reader(&text[..], max_line);
                for chunk in [1, 2, 3, 4, 5, 7, 16, 100, 1 << 20] {
                    assert_eq!(
                        by_chunks(&path, chunk, max_line),
                        want,
                        "{:?} in chunks of {chunk}, cap {max_line}",
                        String::from_utf8_lossy(text)
                    );
                }
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
