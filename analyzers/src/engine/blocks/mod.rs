//! The block front end every line-oriented log is read through (the librdkafka debug logs'
//! and the GC log's): an input cut into blocks of whole lines ([`line_blocks`]), each block
//! parsed by the log format's [`BlockParser`], and the parsed blocks fed in input order to
//! the analyzer's [`BlockFeed`]. A plain file is read and parsed on every core
//! ([`file::read_file`], over [`file_chunks`] and [`chunk_threads`]); a stream, or any input
//! without parser threads, block by block on the calling thread ([`read_serial`]).
//!
//! A format plugs in by its types (static dispatch, monomorphised): no call per line goes
//! through here, only one per block. What stays with each format: the parse of a block,
//! the feed of a parsed block (which lines it hands the analyzer, how it counts them), the
//! block size and line cap, and how a stream is handed to parser threads (see
//! `pipeline::drive` and `gc::blocks::drive`: each was measured on its own logs).

pub(crate) mod chunk_threads;
pub(crate) mod file;
pub(crate) mod file_chunks;
pub(crate) mod line_blocks;

use std::io::{self, Read};

use chunk_threads::Spare;
use line_blocks::{BlockReader, LineBlock};

/// A log format's parsing threads' part: a block of whole lines into what its analyzer
/// needs, on any thread.
pub(crate) trait BlockParser: Sync {
    /// What a parsing thread keeps from block to block (memos, buffers, a tally).
    type Worker: Send;
    /// The room for a block's results, reused from block to block with its buffer.
    type Room: Default + Send;
    /// A block, with what its worker made of it.
    type Parsed: Send;

    /// Parse `block` with `worker`'s state, its results into `room` (a spare, reused).
    fn parse(&self, worker: &mut Self::Worker, block: LineBlock, room: Self::Room) -> Self::Parsed;

    /// The block parsed.
    fn block(parsed: &Self::Parsed) -> &LineBlock;

    /// The block's buffer and its results' room, back for the next block.
    fn into_spare(parsed: Self::Parsed) -> Spare<Self::Room>;

    /// A spare as the pool of a reader with parser threads keeps it, where it may wait
    /// long (default: as it is).
    #[inline]
    fn pooled(spare: Spare<Self::Room>) -> Spare<Self::Room> {
        spare
    }
}

/// A log format's analyzing thread's part: takes the parsed blocks in input order.
pub(crate) trait BlockFeed<P: BlockParser> {
    /// Hand one parsed block's lines to the analyzer.
    fn feed(&mut self, parsed: &P::Parsed);

    /// A parsing state for blocks this thread parses itself (a too-long line's range).
    fn worker(&mut self) -> P::Worker;

    /// A parsing state done with (its order-free accounting, if any, taken back).
    fn retire(&mut self, worker: P::Worker);
}

/// Read `reader` to its end on this thread: each block parsed with `worker`, then fed.
/// One buffer and one results' room, reused.
#[inline]
pub(crate) fn read_serial<R: Read, P: BlockParser>(
    reader: &mut BlockReader<R>,
    parser: &P,
    worker: &mut P::Worker,
    to: &mut impl BlockFeed<P>,
) -> io::Result<()> {
    let (mut buf, mut room) = (Vec::new(), P::Room::default());
    while let Some(block) = reader.next_block(buf)? {
        let parsed = parser.parse(worker, block, room);
        to.feed(&parsed);
        (buf, room) = P::into_spare(parsed);
    }
    Ok(())
}
