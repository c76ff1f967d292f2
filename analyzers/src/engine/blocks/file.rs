//! The block front end for a plain regular file: read and parsed on every core by
//! [`chunk_threads`], the parsed blocks fed in input order on the calling thread. The
//! lines and counts are those of the stream front ends (a [`BlockReader`] over the whole
//! input), which gzip, pipes and stdin still take.

use std::fs::File;
use std::io;

use super::chunk_threads::{self, Fed};
use super::file_chunks::FileChunks;
use super::line_blocks::BlockReader;
use super::{read_serial, BlockFeed, BlockParser};
use crate::engine::progress::Progress;

/// What reading a file saw of it (its lines are counted by the feed).
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct FileRead {
    pub(crate) bytes: u64,
    pub(crate) lines_truncated: u64,
    pub(crate) first_nul: Option<u64>,
    pub(crate) unterminated_last_line: bool,
}

/// Read the plain file of `progress` in blocks of `block_bytes` (a line of `max_line`
/// bytes or more cut to its head) on as many threads as `workers` (one each; at least
/// one), this one among them, and feed `to` the parsed blocks in order. Every worker is
/// given back to `to` at the end.
pub(crate) fn read_file<P: BlockParser>(
    mut progress: Progress<File>,
    block_bytes: usize,
    max_line: usize,
    parser: &P,
    workers: Vec<P::Worker>,
    to: &mut impl BlockFeed<P>,
) -> io::Result<FileRead> {
    let chunks = FileChunks::of(progress.get_ref(), block_bytes, max_line)?;
    let mut read = FileRead {
        bytes: chunks.len(),
        ..FileRead::default()
    };
    let workers = chunk_threads::drive(
        &chunks,
        workers,
        |worker, block, room| parser.parse(worker, block, room),
        |fed| match fed {
            Fed::Parsed(p, first_nul) => {
                to.feed(&p);
                let block = P::block(&p);
                progress.advance(block.len as u64);
                read.unterminated_last_line |= block.unterminated;
                read.first_nul = read.first_nul.or(first_nul);
                Ok(P::pooled(P::into_spare(p)))
            }
            Fed::Long { start, body_end } => {
                // Read here as a stream is read without parser threads.
                let end = chunks.line_start_from(body_end, u64::MAX)?;
                let mut reader =
                    BlockReader::new(chunks.range(start, end), block_bytes, chunks.max_line());
                let mut worker = to.worker();
                read_serial(&mut reader, parser, &mut worker, to)?;
                to.retire(worker);
                read.lines_truncated += reader.lines_truncated();
                let nul = reader.first_nul().map(|n| start + n);
                read.first_nul = read.first_nul.or(nul);
                read.unterminated_last_line |= reader.unterminated_last_line();
                progress.advance(end - start);
                Ok(Default::default())
            }
        },
    );
    progress.done();
    for worker in workers? {
        to.retire(worker);
    }
    Ok(read)
}
