//! The block front end for a plain regular file: read and pre-parsed on every core by
//! [`chunk_threads`](crate::engine::chunk_threads), the analyzer fed in input order on the calling
//! thread. The lines and counts are those of [`scan::scan`](super::scan::scan), as the
//! stream front end ([`super::blocks::drive`]) hands them out; gzip, pipes and stdin still
//! take that one.

use std::fs::File;
use std::io;

use aho_corasick::AhoCorasick;

use super::analyzer::Analyzer;
use super::blocks::{block_reader, feed};
use super::preparse::preparse_block;
use super::scan::ScanSummary;
use crate::engine::chunk_threads::{self, Fed};
use crate::engine::file_chunks::FileChunks;
use crate::engine::progress::Progress;

/// Read the plain file `file` on `workers` (≥ 1) threads, this one among them, and feed
/// the analyzer in input order.
pub(crate) fn drive_file(
    mut progress: Progress<File>,
    ac: &AhoCorasick,
    buffer_bytes: usize,
    workers: usize,
    a: &mut Analyzer<'_, '_>,
) -> io::Result<ScanSummary> {
    // The stream front end's blocks: a line that does not fit the buffer with its
    // newline is cut to its head.
    let cap = buffer_bytes.max(64);
    let chunks = FileChunks::of(progress.get_ref(), cap, cap)?;
    let mut sum = ScanSummary {
        bytes: chunks.len(),
        ..ScanSummary::default()
    };
    let mut lines = 0u64;
    chunk_threads::drive(
        &chunks,
        vec![(); workers.max(1)],
        |(), block, pre| preparse_block(block, ac, pre),
        |fed| match fed {
            Fed::Parsed(p, first_nul) => {
                feed(&p, ac, &mut lines, a);
                progress.advance(p.block.len as u64);
                sum.unterminated_last_line |= p.block.unterminated;
                sum.first_nul = sum.first_nul.or(first_nul);
                Ok((p.block.buf, p.pre))
            }
            Fed::Long { start, body_end } => {
                // Read here as the stream front end reads every block without workers.
                let end = chunks.line_start_from(body_end, u64::MAX)?;
                let mut reader = block_reader(chunks.range(start, end), buffer_bytes);
                let (mut buf, mut pre) = (Vec::new(), Vec::new());
                while let Some(block) = reader.next_block(buf)? {
                    let parsed = preparse_block(block, ac, pre);
                    feed(&parsed, ac, &mut lines, a);
                    (buf, pre) = (parsed.block.buf, parsed.pre);
                }
                sum.lines_truncated += reader.lines_truncated();
                let nul = reader.first_nul().map(|n| start + n);
                sum.first_nul = sum.first_nul.or(nul);
                sum.unterminated_last_line |= reader.unterminated_last_line();
                progress.advance(end - start);
                Ok(Default::default())
            }
        },
    )?;
    progress.done();
    Ok(ScanSummary { lines, ..sum })
}
