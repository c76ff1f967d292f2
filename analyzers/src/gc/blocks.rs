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
//! part of a line's handling is done there. Memory: the blocks in flight (two per
//! worker and one being read), whatever the input's size.
//!
//! [`GcLogOptions::every_line`]: super::GcLogOptions::every_line

use std::collections::VecDeque;
use std::io::{self, Read};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};

use aho_corasick::{AhoCorasick, Input};

use super::analyzer::Analyzer;
use super::preparse::{preparse_block, PreLine};
use super::scan::{count_lines, trim_cr, LineSink, ScanSummary};

/// Whole lines read in one go: `buf[..len]`.
pub(crate) struct Block {
    pub(crate) buf: Vec<u8>,
    pub(crate) len: usize,
    /// Not lines but the head of one line longer than the buffer.
    pub(crate) head: bool,
}

/// A block and what the worker found in it.
pub(crate) struct Parsed {
    pub(crate) block: Block,
    /// The worker read `buf[..covered]` (a line start, or the block's end): a block of
    /// very many anchored lines is read by the analyzer's thread past that, so the
    /// results in flight stay bounded ([`MAX_PRE_LINES`](super::preparse::MAX_PRE_LINES)).
    pub(crate) covered: usize,
    /// Its anchored lines up to `covered`, in order.
    pub(crate) pre: Vec<PreLine>,
}

/// Reads an input into blocks of whole lines of at most `cap` bytes.
struct BlockReader<R> {
    inner: R,
    cap: usize,
    /// Bytes after the last newline of the previous block: the start of a line.
    carry: Vec<u8>,
    eof: bool,
    /// Inside a line longer than the buffer whose head was handed out already.
    skipping: bool,
    sum: ScanSummary,
}

impl<R: Read> BlockReader<R> {
    fn new(inner: R, buffer_bytes: usize) -> Self {
        BlockReader {
            inner,
            cap: buffer_bytes.max(64),
            carry: Vec::new(),
            eof: false,
            skipping: false,
            sum: ScanSummary::default(),
        }
    }

    /// Fill `buf` up to its end or the end of the input.
    fn read_more(&mut self, buf: &mut [u8], len: &mut usize) -> io::Result<()> {
        while *len < buf.len() && !self.eof {
            match self.inner.read(&mut buf[*len..]) {
                Ok(0) => self.eof = true,
                Ok(n) => {
                    if self.sum.first_nul.is_none() {
                        if let Some(i) = memchr::memchr(0, &buf[*len..*len + n]) {
                            self.sum.first_nul = Some(self.sum.bytes + i as u64);
                        }
                    }
                    self.sum.bytes += n as u64;
                    *len += n;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// The next block, read into `buf` (a spare buffer, reused), or `None` at the end.
    fn next_block(&mut self, mut buf: Vec<u8>) -> io::Result<Option<Block>> {
        buf.resize(self.cap, 0);
        let mut len = self.carry.len();
        buf[..len].copy_from_slice(&self.carry);
        self.carry.clear();
        loop {
            self.read_more(&mut buf, &mut len)?;
            if self.skipping {
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
            if let Some(i) = memchr::memrchr(b'\n', &buf[..len]) {
                self.carry.extend_from_slice(&buf[i + 1..len]);
                return Ok(Some(Block {
                    buf,
                    len: i + 1,
                    head: false,
                }));
            }
            if len == self.cap {
                // A line longer than the buffer: hand out its head, skip its tail.
                self.skipping = true;
                self.sum.lines_truncated += 1;
                return Ok(Some(Block {
                    buf,
                    len,
                    head: true,
                }));
            }
            // Short of the buffer without a newline: the input ended inside a line.
            self.sum.unterminated_last_line = true;
            return Ok(Some(Block {
                buf,
                len,
                head: false,
            }));
        }
    }
}

/// Read `input` in blocks through `workers` parser threads (0: parsed on this thread) and
/// feed the analyzer in input order.
pub(crate) fn drive(
    input: impl Read,
    ac: &AhoCorasick,
    buffer_bytes: usize,
    workers: usize,
    a: &mut Analyzer<'_, '_>,
) -> io::Result<ScanSummary> {
    let mut reader = BlockReader::new(input, buffer_bytes);
    let mut lines = 0u64;
    if workers == 0 {
        let mut spare = Vec::new();
        let mut pre = Vec::new();
        while let Some(block) = reader.next_block(std::mem::take(&mut spare))? {
            let parsed = preparse_block(block, ac, std::mem::take(&mut pre));
            feed(&parsed, ac, &mut lines, a);
            spare = parsed.block.buf;
            pre = parsed.pre;
        }
    } else {
        std::thread::scope(|scope| -> io::Result<()> {
            // One queue each way per worker, blocks dealt round-robin: results come back
            // in input order without reordering. At most two blocks per worker are in
            // flight, so no send ever waits on a full queue.
            const PER_WORKER: usize = 2;
            // A block travels with a spare vector for its results (both reused).
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
            let mut in_flight: VecDeque<usize> = VecDeque::new();
            let mut spares: Vec<(Vec<u8>, Vec<PreLine>)> = Vec::new();
            let mut next = 0usize;
            let mut ended = false;
            loop {
                while !ended && in_flight.len() < PER_WORKER * workers {
                    let (buf, pre) = spares.pop().unwrap_or_default();
                    match reader.next_block(buf)? {
                        Some(block) => {
                            to_workers[next]
                                .send((block, pre))
                                .expect("a parser thread does not stop while blocks are sent");
                            in_flight.push_back(next);
                            next = (next + 1) % workers;
                        }
                        None => ended = true,
                    }
                }
                let Some(w) = in_flight.pop_front() else {
                    break;
                };
                let parsed = from_workers[w]
                    .recv()
                    .expect("a parser thread answers every block");
                feed(&parsed, ac, &mut lines, a);
                spares.push((parsed.block.buf, parsed.pre));
            }
            // Dropping the queues ends the workers.
            Ok(())
        })?;
    }
    let mut sum = reader.sum;
    sum.lines = lines;
    Ok(sum)
}

/// Feed one parsed block to the analyzer: the lines the line scan would hand out, with
/// the same numbers. `lines` counts the lines before the block, and after it on return.
fn feed(p: &Parsed, ac: &AhoCorasick, lines: &mut u64, a: &mut Analyzer<'_, '_>) {
    let buf = &p.block.buf[..p.block.len];
    let base = *lines;
    if p.block.head {
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
