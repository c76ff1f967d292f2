//! The block front end: the input read in blocks of whole lines, each block's anchored
//! lines found and parsed on a worker thread ([`super::preparse`]), and the analyzer fed
//! the results in input order on the calling thread.
//!
//! The lines are those of [`scan::scan`], byte for byte: a line that does not fit the
//! buffer with its newline is handed out by its head (truncated, no `\r` trimmed) and its
//! tail skipped; the last line without a newline is flagged. Whenever the analyzer wants
//! every line (format not known yet, JDK 8 records, [`GcLogOptions::every_line`]) the
//! block is read line by line on this thread from where it stands, so its state-dependent
//! modes stay exactly those of the line scan; the worker's results are used only for the
//! lines the line scan would hand out in anchored mode, and only the state-independent
//! part of a line's handling is done there. With workers the input is read (and gzip
//! inflated) on a thread of its own. Memory: the blocks in flight (two per worker and one
//! more), whatever the input's size. A plain file is read in chunks by every thread
//! instead ([`drive_file`], through the shared
//! [`read_file`](crate::engine::blocks::file::read_file)), with the same blocks' handling
//! ([`feed`]). This file and [`super::preparse`] are the GC log's part of the block front
//! end ([`crate::engine::blocks`]).
//!
//! [`GcLogOptions::every_line`]: super::GcLogOptions::every_line

use std::fs::File;
use std::io::{self, Read};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{channel, sync_channel, Receiver, SyncSender};

use aho_corasick::{AhoCorasick, Input};

use super::analyzer::Analyzer;
use super::pre_line::PreLine;
use super::preparse::{preparse_block, Parsed, Preparse};
use super::scan::{count_lines, trim_cr, LineSink, ScanSummary};
use crate::engine::blocks::file::read_file;
use crate::engine::blocks::line_blocks::{BlockReader, LineBlock};
use crate::engine::blocks::{read_serial, BlockFeed};
use crate::engine::progress::Progress;

/// Whole lines read in one go: `buf[..len]`; `long_head`: not lines but the head of one
/// line longer than the buffer.
pub(crate) type Block = LineBlock;

/// The analyzing thread's part: every parsed block's lines to the analyzer, in order.
struct Feed<'f, 'o, 'w> {
    ac: &'f AhoCorasick,
    /// Lines fed so far.
    lines: u64,
    a: &'f mut Analyzer<'o, 'w>,
}

impl BlockFeed<Preparse<'_>> for Feed<'_, '_, '_> {
    #[inline]
    fn feed(&mut self, p: &Parsed) {
        feed(p, self.ac, &mut self.lines, self.a);
    }

    fn worker(&mut self) {}

    fn retire(&mut self, (): ()) {}
}

/// Blocks of the buffer's size, a line that does not fit it with its newline cut to its
/// head: the lines of [`scan::scan`](super::scan::scan).
fn block_reader<R: Read>(input: R, buffer_bytes: usize) -> BlockReader<R> {
    let cap = buffer_bytes.max(64);
    BlockReader::new(input, cap, cap)
}

/// What the line scan says of the input, from the reader at its end (`lines`: counted by
/// the feed).
fn summary<R: Read>(reader: &BlockReader<R>, lines: u64) -> ScanSummary {
    ScanSummary {
        bytes: reader.bytes_read(),
        lines,
        lines_truncated: reader.lines_truncated(),
        first_nul: reader.first_nul(),
        unterminated_last_line: reader.unterminated_last_line(),
    }
}

/// Read `input` in blocks through `workers` parser threads (0: read and parsed on this
/// thread) and feed the analyzer in input order. With workers, a reading thread reads
/// (and inflates gzip) beside them: the analyzer's thread only analyses.
pub(crate) fn drive(
    input: impl Read + Send,
    ac: &AhoCorasick,
    buffer_bytes: usize,
    workers: usize,
    a: &mut Analyzer<'_, '_>,
) -> io::Result<ScanSummary> {
    if workers == 0 {
        let mut reader = block_reader(input, buffer_bytes);
        let mut to = Feed { ac, lines: 0, a };
        read_serial(&mut reader, &Preparse { ac }, &mut (), &mut to)?;
        return Ok(summary(&reader, to.lines));
    }
    let mut lines = 0u64;
    // Parser threads in use: all of them while the analyzer's thread has little to do
    // per block (a `gc*` log: most lines are phases the search skips), one fewer while it
    // has as much as a parser (a dense `-Xlog:gc` log, every line a pause to account):
    // then it needs a core of its own, and a parser more only contends for the cores (on
    // two cores one parser read such a log in 0.78-0.84 s where two took 0.88-0.97 s).
    let active = AtomicUsize::new(workers);
    let sum = std::thread::scope(|scope| -> io::Result<ScanSummary> {
        // One queue each way per worker, and the order the blocks were dealt in on a queue
        // of its own, so results are taken in input order without reordering. At most
        // `blocks` blocks exist (each travels with a vector for its results; both come
        // back to the reader to be reused), so memory stays flat whatever the input's
        // size.
        const PER_WORKER: usize = 2;
        let blocks = PER_WORKER * workers + 1;
        let mut to_workers: Vec<SyncSender<(Block, Vec<PreLine>)>> = Vec::new();
        let mut from_workers: Vec<Receiver<Parsed>> = Vec::new();
        for _ in 0..workers {
            let (block_tx, block_rx) = sync_channel::<(Block, Vec<PreLine>)>(PER_WORKER);
            let (parsed_tx, parsed_rx) = sync_channel::<Parsed>(PER_WORKER);
            scope.spawn(move || {
                for (block, pre) in block_rx {
                    if parsed_tx.send(preparse_block(block, ac, pre)).is_err() {
                        return;
                    }
                }
            });
            to_workers.push(block_tx);
            from_workers.push(parsed_rx);
        }
        let (spare_tx, spare_rx) = channel::<(Vec<u8>, Vec<PreLine>)>();
        let (order_tx, order_rx) = channel::<usize>();
        let active = &active;
        let reading = scope.spawn(move || -> io::Result<ScanSummary> {
            let mut reader = block_reader(input, buffer_bytes);
            let (mut made, mut next) = (0, 0);
            loop {
                let (buf, pre) = match spare_rx.try_recv() {
                    Ok(spare) => spare,
                    Err(_) if made < blocks => {
                        made += 1;
                        Default::default()
                    }
                    // All in flight: wait for the analyzer to hand one back (an error: it
                    // stopped, and so does the reading).
                    Err(_) => match spare_rx.recv() {
                        Ok(spare) => spare,
                        Err(_) => break,
                    },
                };
                let Some(block) = reader.next_block(buf)? else {
                    break;
                };
                if to_workers[next].send((block, pre)).is_err() || order_tx.send(next).is_err() {
                    break;
                }
                next = (next + 1) % active.load(Ordering::Relaxed);
            }
            // Dropping the queues ends the workers once they are done, and the analyzer's
            // loop once it took every block dealt.
            Ok(summary(&reader, 0))
        });
        while let Ok(w) = order_rx.recv() {
            let Ok(parsed) = from_workers[w].recv() else {
                break;
            };
            let before = lines;
            feed(&parsed, ac, &mut lines, a);
            // A dense block: half its lines or more pre-parsed for the analyzer.
            let dense = parsed.pre.len() as u64 * 2 >= lines - before;
            let want = if dense { workers - 1 } else { workers };
            // At least one parser (`workers` is one or more here).
            active.store(want.max(1), Ordering::Relaxed);
            // The reader may have stopped already: then the spare is not needed.
            let _ = spare_tx.send((parsed.block.buf, parsed.pre));
        }
        drop(spare_tx);
        reading.join().expect("the reading thread does not panic")
    })?;
    Ok(ScanSummary { lines, ..sum })
}

/// Read the plain file `file` on `workers` (≥ 1) threads, this one among them, and feed
/// the analyzer in input order.
pub(crate) fn drive_file(
    progress: Progress<File>,
    ac: &AhoCorasick,
    buffer_bytes: usize,
    workers: usize,
    a: &mut Analyzer<'_, '_>,
) -> io::Result<ScanSummary> {
    // The stream front end's blocks: a line that does not fit the buffer with its
    // newline is cut to its head.
    let cap = buffer_bytes.max(64);
    let mut to = Feed { ac, lines: 0, a };
    let states = vec![(); workers.max(1)];
    let read = read_file(progress, cap, cap, &Preparse { ac }, states, &mut to)?;
    Ok(ScanSummary {
        bytes: read.bytes,
        lines: to.lines,
        lines_truncated: read.lines_truncated,
        first_nul: read.first_nul,
        unterminated_last_line: read.unterminated_last_line,
    })
}

/// Feed one parsed block to the analyzer: the lines the line scan would hand out, with
/// the same numbers. `lines` counts the lines before the block, and after it on return.
fn feed(p: &Parsed, ac: &AhoCorasick, lines: &mut u64, a: &mut Analyzer<'_, '_>) {
    let buf = &p.block.buf[..p.block.len];
    let base = *lines;
    if p.block.long_head {
        *lines += 1;
        a.line(*lines, buf, true);
        return;
    }
    let len = buf.len();
    let mut pos = 0;
    let mut next = 0;
    while pos < len {
        if a.wants_every_line() {
            // The line scan's every-line mode, from here on until the analyzer leaves it.
            let le = memchr::memchr(b'\n', &buf[pos..]).map_or(len, |i| pos + i);
            *lines += 1;
            a.line(*lines, trim_cr(&buf[pos..le]), false);
            pos = le + 1;
            continue;
        }
        if pos >= p.covered {
            // Past what the worker read: the line scan's anchored mode, here.
            let Some(m) = ac.find(Input::new(buf).span(pos..len)) else {
                *lines += count_lines(&buf[pos..]);
                break;
            };
            let ls = memchr::memrchr(b'\n', &buf[pos..m.start()]).map_or(pos, |i| pos + i + 1);
            *lines += memchr::memchr_iter(b'\n', &buf[pos..ls]).count() as u64;
            let le = memchr::memchr(b'\n', &buf[m.end()..]).map_or(len, |i| m.end() + i);
            *lines += 1;
            a.line(*lines, trim_cr(&buf[ls..le]), false);
            pos = le + 1;
            continue;
        }
        // Anchored mode: the next anchored line at or after `pos`.
        while next < p.pre.len() && p.pre[next].start < pos {
            next += 1;
        }
        let Some(l) = p.pre.get(next) else {
            // No anchored line before `covered`: a line start, or the block's end.
            *lines += count_lines(&buf[pos..p.covered]);
            pos = p.covered;
            continue;
        };
        *lines = base + l.index + 1;
        a.preparsed_line(*lines, buf, l);
        pos = l.next;
        next += 1;
    }
}
