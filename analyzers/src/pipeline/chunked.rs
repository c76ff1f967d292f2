//! The block front end for a plain regular file: read and parsed on every core by
//! [`chunk_threads`](crate::engine::chunk_threads), the records fed in order on the calling
//! thread. The lines, records and counts are those of the stream front end
//! ([`super::drive`]), which gzip, pipes and stdin still take.

use std::fs::File;
use std::io;

use super::blocks::BLOCK_BYTES;
use super::parse::{parse_block, LineParser};
use super::{feed, RecordSink, MAX_SPARE_RECORDS};
use crate::engine::chunk_threads::{self, Fed};
use crate::engine::file_chunks::FileChunks;
use crate::engine::input::InputSummary;
use crate::engine::line_blocks::BlockReader;
use crate::engine::progress::Progress;
use crate::librdkafka::RecordFinder;
use crate::vocab::error::AnalyzeError;

/// Read the plain file `file` on `workers` (≥ 1) threads, this one among them, and feed
/// `sink` its records in order.
pub(super) fn drive_file<S: RecordSink>(
    mut progress: Progress<File>,
    max_line: usize,
    workers: usize,
    sink: &mut S,
) -> Result<InputSummary, AnalyzeError> {
    let chunks =
        FileChunks::of(progress.get_ref(), BLOCK_BYTES, max_line).map_err(AnalyzeError::Read)?;
    let mut summary = InputSummary {
        bytes_read: chunks.len(),
        gzip: false,
        lines_truncated: 0,
        binary_at_offset: None,
        unterminated_last_line: false,
        gzip_cut: None,
    };
    let mut lines = 0u64;
    let states = (0..workers.max(1))
        .map(|_| (RecordFinder::new(), LineParser::default(), sink.tally()))
        .collect();
    let states = chunk_threads::drive(
        &chunks,
        states,
        |(finder, parser, tally), block, records| {
            parse_block(block, finder, parser, tally, records)
        },
        |fed| {
            match fed {
                Fed::Parsed(p, first_nul) => {
                    feed(&p, lines, sink);
                    lines += p.lines;
                    progress.advance(p.block.len as u64);
                    summary.unterminated_last_line |= p.block.unterminated;
                    summary.binary_at_offset = summary.binary_at_offset.or(first_nul);
                    let mut records = p.records;
                    if records.capacity() > MAX_SPARE_RECORDS {
                        records = Vec::new(); // a block of tiny records: do not keep its room
                    }
                    Ok((p.block.buf, records))
                }
                Fed::Long { start, body_end } => {
                    let end = chunks.line_start_from(body_end, u64::MAX)?;
                    read_range(&chunks, start..end, &mut lines, sink, &mut summary)?;
                    progress.advance(end - start);
                    Ok(Default::default())
                }
            }
        },
    );
    progress.done();
    for (_, _, tally) in states.map_err(AnalyzeError::Read)? {
        sink.merge(tally);
    }
    Ok(summary)
}

/// The lines of `range` (from a line start to a line start or the end) read, parsed and
/// fed on this thread, as the stream front end's `workers == 0` path does.
fn read_range<S: RecordSink>(
    chunks: &FileChunks,
    range: std::ops::Range<u64>,
    lines: &mut u64,
    sink: &mut S,
    summary: &mut InputSummary,
) -> io::Result<()> {
    let mut reader = BlockReader::new(
        chunks.range(range.start, range.end),
        BLOCK_BYTES,
        chunks.max_line(),
    );
    let mut parser = LineParser::default();
    let mut tally = sink.tally();
    let (mut buf, mut records) = (Vec::new(), Vec::new());
    while let Some(block) = reader.next_block(buf)? {
        let parsed = parse_block(
            block,
            super::shared_finder(),
            &mut parser,
            &mut tally,
            records,
        );
        feed(&parsed, *lines, sink);
        *lines += parsed.lines;
        (buf, records) = (parsed.block.buf, parsed.records);
    }
    sink.merge(tally);
    summary.lines_truncated += reader.lines_truncated();
    let nul = reader.first_nul().map(|n| range.start + n);
    summary.binary_at_offset = summary.binary_at_offset.or(nul);
    summary.unterminated_last_line |= reader.unterminated_last_line();
    Ok(())
}
