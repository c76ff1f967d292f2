//! The input cut into blocks of whole lines ([`line_blocks`]), as
//! [`LineReader`](crate::engine::input::LineReader) cuts it into lines: the same lines, the same
//! cut heads of too-long ones, the same counts, with the buffers reused.

use std::io::{self, Read};

use crate::engine::blocks::line_blocks;
use crate::engine::input::InputSummary;
use crate::vocab::error::AnalyzeError;

/// Bytes per block (more when a line is longer, up to the line cap).
pub(super) const BLOCK_BYTES: usize = 1 << 20;

/// Whole lines read in one go.
pub(super) type Block = line_blocks::LineBlock;

/// Reads an input into blocks of whole lines ([`line_blocks::BlockReader`]), with what the
/// report says of the input (gzip, a cut gzip stream).
pub(super) struct BlockReader<R> {
    pub(super) lines: line_blocks::BlockReader<R>,
    gzip: bool,
    cut: crate::engine::input::GzipCut,
}

impl<R: Read> BlockReader<R> {
    pub(super) fn new(
        inner: R,
        gzip: bool,
        cut: crate::engine::input::GzipCut,
        max_line: usize,
    ) -> Self {
        BlockReader {
            lines: line_blocks::BlockReader::new(inner, BLOCK_BYTES, max_line),
            gzip,
            cut,
        }
    }

    /// The next block, read into `buf` (a spare buffer, reused), or `None` at the end.
    pub(super) fn next_block(&mut self, buf: Vec<u8>) -> io::Result<Option<Block>> {
        self.lines.next_block(buf)
    }

    pub(super) fn error(&self, e: io::Error) -> AnalyzeError {
        if self.gzip {
            AnalyzeError::Gzip {
                bytes_read: self.lines.bytes_read(),
                source: e,
            }
        } else {
            AnalyzeError::Read(e)
        }
    }

    pub(super) fn summary(&self) -> InputSummary {
        InputSummary {
            bytes_read: self.lines.bytes_read(),
            gzip: self.gzip,
            lines_truncated: self.lines.lines_truncated(),
            binary_at_offset: self.lines.first_nul(),
            unterminated_last_line: self.lines.unterminated_last_line(),
            gzip_cut: self.cut.get(),
        }
    }
}
