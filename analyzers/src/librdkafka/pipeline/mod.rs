//! The front end both librdkafka log analyzers share: read the input in large blocks of
//! whole lines, look only at the lines that can hold a record, parse them, and feed the
//! records to the analyzer in input order (its accounting depends on order: CorrId
//! pairing, backoff intervals, per-second counts).
//!
//! Where the time goes (issue 19): a line-at-a-time reader copying every line into a
//! chunk was a third of the work. Here the reader fills one buffer per block straight
//! from the input, and a worker finds the candidate lines with one multi-needle search
//! (the body anchors, [`RecordFinder::anchor_at`]) over the whole block: a line without
//! an anchor cannot hold a record (every parser starts at one; unescaping `\/` cannot
//! make one, none holds a `/`), so it is only counted. Blocks are parsed on all cores
//! (a plain file's chunks read by the threads that parse them:
//! [`read_file`](crate::engine::blocks::file::read_file)); records cross threads as byte
//! spans into their block, so nothing is allocated per record. Memory stays bounded: a
//! few blocks in flight.
//!
//! This folder is the librdkafka logs' part of the block front end every line-oriented
//! log shares ([`crate::engine::blocks`]): the records' parse ([`Records`], [`parse`]) and
//! feed ([`Feed`]), and how a stream is handed to parser threads ([`drive`]).
//!
//! The lines are those of [`LineReader`](crate::engine::input::LineReader), byte for byte: `\r`
//! trimmed, a line of `max_line` bytes or more cut to its head (and counted), the last
//! line without a newline flagged. The line-at-a-time path stays as the reference the
//! tests compare this one with.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::marker::PhantomData;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::{Arc, Mutex};

use crate::engine::blocks::file::read_file;
use crate::engine::blocks::line_blocks::LineBlock;
use crate::engine::blocks::{read_serial, BlockFeed, BlockParser};
use crate::engine::input::{for_each_line, Input, InputSummary, Source, DEFAULT_MAX_LINE_BYTES};
use crate::librdkafka::{raw_stderr_record, unescape_json_slashes, Record, RecordFinder};
use crate::vocab::error::AnalyzeError;
use crate::vocab::timeline::{Row, Timeline};

mod blocks;
mod parse;
mod tally;

use blocks::{Block, BlockReader, BLOCK_BYTES};
use parse::{parse_block, LineParser, Parsed, Span, SpanRecord};
pub use tally::{NoTally, Tally};

/// What the analyzers implement to be driven line by line.
pub trait RecordSink {
    /// The order-free part of the sink's accounting, which the block front end's parsing
    /// threads do themselves ([`NoTally`]: none).
    type Tally: Tally;
    /// A fresh tally, for one parsing thread.
    fn tally(&self) -> Self::Tally;
    /// A parsing thread's tally, once the input is read.
    fn merge(&mut self, tally: Self::Tally);
    /// A line was read; `recognised` when it held at least one record.
    fn line_done(&mut self, recognised: bool);
    /// One record of the line `line_no`.
    fn record(&mut self, line_no: u64, line: &[u8], rec: &Record<'_>);
    /// `n` lines without a record were read.
    fn lines_skipped(&mut self, n: u64) {
        for _ in 0..n {
            self.line_done(false);
        }
    }
    /// `n` lines were read whose one record a parsing thread's tally took.
    fn lines_tallied(&mut self, n: u64) {
        for _ in 0..n {
            self.line_done(true);
        }
    }
}

/// The finder both log analyzers share (built once per process).
pub(crate) fn shared_finder() -> &'static RecordFinder {
    static FINDER: std::sync::OnceLock<RecordFinder> = std::sync::OnceLock::new();
    FINDER.get_or_init(RecordFinder::new)
}

/// How a librdkafka log analyzer ([`ProtocolLogAnalyzer`](crate::protocol_log::ProtocolLogAnalyzer),
/// [`FetchLogAnalyzer`](crate::fetch_log::FetchLogAnalyzer)) reads: a whole input at once,
/// line by line or through the block front end, or one line at a time. Written once
/// here; an analyzer gives only its line cap and a scratch buffer.
pub trait LogAnalyzer: RecordSink + Sized {
    /// The line cap of the analyzer's options.
    fn max_line_bytes(&self) -> usize;
    /// A buffer for a line with its `\/` unescaped.
    fn scratch(&mut self) -> &mut Vec<u8>;

    /// Read a whole input (gzip detected), one line at a time: the reference
    /// [`read_parallel`](Self::read_parallel) is held to.
    fn read<R: Read>(&mut self, input: R) -> Result<InputSummary, AnalyzeError> {
        let max = self.max_line_bytes();
        for_each_line(input, max, |line| self.push_line(line.number, line.bytes))
    }

    /// [`read`](Self::read) through the block front end: a plain file read in chunks by
    /// `workers` threads, this one among them, a stream by a reader thread and `workers`
    /// parser threads (0: all on this thread); the analysis itself stays on this thread,
    /// in input order, so the report is the same as [`read`](Self::read)'s.
    fn read_parallel(
        &mut self,
        input: Source<'_>,
        workers: usize,
    ) -> Result<InputSummary, AnalyzeError> {
        let max = self.max_line_bytes();
        drive_source(input, max, workers, self)
    }

    /// Analyse one line (without its newline).
    fn push_line(&mut self, line_no: u64, line: &[u8]) {
        let mut scratch = std::mem::take(self.scratch());
        feed_line(self, shared_finder(), &mut scratch, line_no, line);
        *self.scratch() = scratch;
    }
}

/// The line cap an analyzer's options give (`None`: the default).
pub(crate) fn max_line_or_default(max: Option<usize>) -> usize {
    max.unwrap_or(DEFAULT_MAX_LINE_BYTES)
}

/// An analyzer's per-second timeline, written as a CSV or kept in memory.
pub(crate) trait Timed<'w>: Sized {
    type Row: Row;
    fn timeline_mut(&mut self) -> &mut Timeline<'w, Self::Row>;

    /// Also write a per-second CSV timeline.
    fn with_timeline(mut self, w: impl Write + 'w) -> Self {
        *self.timeline_mut() = Timeline::to_writer(w);
        self
    }

    /// Keep `columns` of the per-second timeline in memory instead (gap-report's charts).
    fn with_series(mut self, columns: &'static [&'static str]) -> Self {
        *self.timeline_mut() = Timeline::collecting(columns);
        self
    }
}

/// Two analyzers fed from one read (gap-report reads a librdkafka log once for both).
impl<A: RecordSink, B: RecordSink> RecordSink for (&mut A, &mut B) {
    // Both see every record: a record one tally took would be lost to the other.
    type Tally = NoTally;
    fn tally(&self) -> NoTally {
        NoTally
    }
    fn merge(&mut self, _: NoTally) {}
    fn line_done(&mut self, recognised: bool) {
        self.0.line_done(recognised);
        self.1.line_done(recognised);
    }
    fn record(&mut self, line_no: u64, line: &[u8], rec: &Record<'_>) {
        self.0.record(line_no, line, rec);
        self.1.record(line_no, line, rec);
    }
    fn lines_skipped(&mut self, n: u64) {
        self.0.lines_skipped(n);
        self.1.lines_skipped(n);
    }
}

/// One line (without its newline) into `sink`, the line-at-a-time way: librdkafka's
/// own stderr format first (one message at a known place, never JSON-escaped), then
/// any wrapper, with `\/` unescaped. The analyzers' `push_line`, and the reference the
/// block path is tested against.
pub(crate) fn feed_line<S: RecordSink>(
    sink: &mut S,
    finder: &RecordFinder,
    scratch: &mut Vec<u8>,
    line_no: u64,
    line: &[u8],
) {
    if let Some(found) = raw_stderr_record(line) {
        let any = found.is_some();
        if let Some(rec) = found {
            sink.record(line_no, line, &rec);
        }
        sink.line_done(any);
        return;
    }
    let text: &[u8] = if unescape_json_slashes(line, scratch) {
        scratch
    } else {
        line
    };
    let mut any = false;
    for rec in finder.records(text) {
        any = true;
        sink.record(line_no, text, &rec);
    }
    sink.line_done(any);
}

/// A fed block's buffer and records vector, back to the reader for another block.
type Spare = (Vec<u8>, Vec<SpanRecord>);

/// Most records a spare vector keeps room for (~2 MiB; a block of ordinary lines needs
/// four or five thousand).
const MAX_SPARE_RECORDS: usize = (2 << 20) / std::mem::size_of::<SpanRecord>();

/// The librdkafka logs' part of the block front end's parsing threads: a block's lines
/// into records ([`parse_block`]), spans into the block.
struct Records<'f, T>(PhantomData<(&'f RecordFinder, fn() -> T)>);

impl<T> Records<'_, T> {
    fn new() -> Self {
        Records(PhantomData)
    }
}

/// What a parsing thread keeps: the finder it searches with, its memos, its tally.
struct Worker<'f, T> {
    finder: &'f RecordFinder,
    parser: LineParser,
    tally: T,
}

impl<'f, T: Tally> Worker<'f, T> {
    fn new(finder: &'f RecordFinder, tally: T) -> Self {
        Worker {
            finder,
            parser: LineParser::default(),
            tally,
        }
    }
}

impl<'f, T: Tally> BlockParser for Records<'f, T> {
    type Worker = Worker<'f, T>;
    type Room = Vec<SpanRecord>;
    type Parsed = Parsed;

    #[inline]
    fn parse(&self, w: &mut Worker<'f, T>, block: LineBlock, records: Vec<SpanRecord>) -> Parsed {
        parse_block(block, w.finder, &mut w.parser, &mut w.tally, records)
    }

    #[inline]
    fn block(p: &Parsed) -> &LineBlock {
        &p.block
    }

    #[inline]
    fn into_spare(p: Parsed) -> Spare {
        (p.block.buf, p.records)
    }

    #[inline]
    fn pooled((buf, mut records): Spare) -> Spare {
        if records.capacity() > MAX_SPARE_RECORDS {
            records = Vec::new(); // a block of tiny records: do not keep its room
        }
        (buf, records)
    }
}

/// The analyzing thread's part: every parsed block's records to the sink, in order.
struct Feed<'s, S> {
    sink: &'s mut S,
    /// Lines fed so far.
    lines: u64,
}

impl<'f, S: RecordSink> BlockFeed<Records<'f, S::Tally>> for Feed<'_, S> {
    #[inline]
    fn feed(&mut self, p: &Parsed) {
        feed(p, self.lines, self.sink);
        self.lines += p.lines;
    }

    fn worker(&mut self) -> Worker<'f, S::Tally> {
        Worker::new(shared_finder(), self.sink.tally())
    }

    fn retire(&mut self, w: Worker<'f, S::Tally>) {
        self.sink.merge(w.tally);
    }
}

/// Worker threads to use: one per core (the reader and the analyzer's thread mostly wait).
pub(crate) fn default_workers() -> usize {
    crate::engine::cores::available()
}

/// Read `input` (gzip detected) and feed every line's records to `sink` in order:
/// a plain regular file read in chunks by `workers` parser threads ([`read_file`]), any
/// other input through [`drive`].
pub(crate) fn drive_source<S: RecordSink>(
    input: Source<'_>,
    max_line: usize,
    workers: usize,
    sink: &mut S,
) -> Result<InputSummary, AnalyzeError> {
    match input.chunked(workers) {
        Ok(file) => {
            // Spans are u32 offsets into a block: keep a block under 4 GiB.
            let max_line = max_line.clamp(1, 1 << 30);
            let finders: Vec<RecordFinder> =
                (0..workers.max(1)).map(|_| RecordFinder::new()).collect();
            let states = finders
                .iter()
                .map(|finder| Worker::new(finder, sink.tally()))
                .collect();
            let mut to = Feed { sink, lines: 0 };
            let read = read_file(
                file,
                BLOCK_BYTES,
                max_line,
                &Records::new(),
                states,
                &mut to,
            )
            .map_err(AnalyzeError::Read)?;
            Ok(InputSummary {
                bytes_read: read.bytes,
                gzip: false,
                lines_truncated: read.lines_truncated,
                binary_at_offset: read.first_nul,
                unterminated_last_line: read.unterminated_last_line,
                gzip_cut: None,
            })
        }
        Err(stream) => drive(stream, max_line, workers, sink),
    }
}

/// Read `input` (gzip detected) and feed every line's records to `sink` in order.
/// `workers` parser threads; 0 parses on this thread.
pub(crate) fn drive<R: Read + Send, S: RecordSink>(
    input: R,
    max_line: usize,
    workers: usize,
    sink: &mut S,
) -> Result<InputSummary, AnalyzeError> {
    // Spans are u32 offsets into a block: keep a block under 4 GiB.
    let max_line = max_line.clamp(1, 1 << 30);
    let input = Input::detect(input).map_err(AnalyzeError::Read)?;
    let gzip = input.is_gzip();
    let cut = input.gzip_cut();
    let mut reader = BlockReader::new(input, gzip, cut, max_line);
    if workers == 0 {
        let finder = RecordFinder::new();
        let mut worker = Worker::new(&finder, sink.tally());
        let mut to = Feed { sink, lines: 0 };
        let read = read_serial(&mut reader.lines, &Records::new(), &mut worker, &mut to);
        if let Err(e) = read {
            return Err(reader.error(e));
        }
        to.retire(worker);
        return Ok(reader.summary());
    }
    std::thread::scope(|scope| {
        let (block_tx, block_rx) = sync_channel::<(Block, Vec<SpanRecord>)>(workers * 2);
        let (parsed_tx, parsed_rx) = sync_channel::<Parsed>(workers * 2 + 2);
        // Fed blocks go back to the reader, with their records' vector: fresh ones
        // would cost the kernel a page fault and a zeroed page every 4 KiB (and the
        // analyzer's thread an munmap of each records vector). The pool holds every
        // block that can be in flight (both queues, one per worker parsing and one
        // waiting for its turn, the one fed, the one read): one that drops blocks when
        // full had the reader allocate anew whenever it ran ahead (page faults:
        // docs/perf.md).
        let in_flight = workers * 2 + (workers * 2 + 2) + workers * 2 + 2;
        let (spare_tx, spare_rx) = sync_channel::<Spare>(in_flight);
        let block_rx = Arc::new(Mutex::new(block_rx));
        let reader = scope.spawn(move || {
            let result = loop {
                let (buf, records) = spare_rx.try_recv().unwrap_or_default();
                match reader.next_block(buf) {
                    Ok(Some(b)) => {
                        if block_tx.send((b, records)).is_err() {
                            break Ok(()); // the consumer stopped
                        }
                    }
                    Ok(None) => break Ok(()),
                    Err(e) => break Err(reader.error(e)),
                }
            };
            drop(block_tx);
            result.map(|()| reader.summary())
        });
        let parsers: Vec<_> = (0..workers)
            .map(|_| {
                let rx = Arc::clone(&block_rx);
                let tx = parsed_tx.clone();
                let tally = sink.tally();
                scope.spawn(move || parse_blocks(rx, tx, tally))
            })
            .collect();
        drop(parsed_tx);
        feed_in_order(parsed_rx, sink, spare_tx);
        for p in parsers {
            sink.merge(p.join().expect("a parsing thread does not panic"));
        }
        reader.join().expect("the reader thread does not panic")
    })
}

/// A parsing thread: blocks in, parsed blocks out; gives its tally at the end.
fn parse_blocks<T: Tally>(
    rx: Arc<Mutex<Receiver<(Block, Vec<SpanRecord>)>>>,
    tx: SyncSender<Parsed>,
    tally: T,
) -> T {
    let finder = RecordFinder::new();
    let mut worker = Worker::new(&finder, tally);
    loop {
        let next = rx
            .lock()
            .expect("no worker panics holding the queue")
            .recv();
        let Ok((block, records)) = next else {
            return worker.tally;
        };
        let parsed = Records::new().parse(&mut worker, block, records);
        if tx.send(parsed).is_err() {
            return worker.tally;
        }
    }
}

fn feed_in_order<S: RecordSink>(rx: Receiver<Parsed>, sink: &mut S, spare: SyncSender<Spare>) {
    let mut pending: BTreeMap<u64, Parsed> = BTreeMap::new();
    let mut next = 0u64;
    let mut lines = 0u64;
    for parsed in rx {
        pending.insert(parsed.block.seq, parsed);
        while let Some(p) = pending.remove(&next) {
            feed(&p, lines, sink);
            lines += p.lines;
            next += 1;
            let kept = Records::<S::Tally>::pooled(Records::<S::Tally>::into_spare(p));
            let _ = spare.try_send(kept); // a full pool just drops them
        }
    }
}

/// Feed one parsed block; `base` lines came before it.
fn feed<S: RecordSink>(p: &Parsed, base: u64, sink: &mut S) {
    let buf = &p.block.buf;
    let mut recs = p.records.iter().peekable();
    let mut next_line = 0u64;
    // Lines without a record sent here: skipped ones, and the tallied ones among them.
    let mut gaps = 0u64;
    while let Some(first) = recs.peek() {
        let i = first.line as u64;
        gaps += i - next_line;
        let (ls, le) = (first.line_start as usize, first.line_end as usize);
        let line = &buf[ls..le];
        while let Some(r) = recs.next_if(|r| r.line as u64 == i) {
            // Checking the spans again here was a seventh of this thread's work (issue 19).
            let text = |s: Span| {
                let a = (r.base + s.0) as usize;
                let b = a + s.1 as usize;
                let bytes = &buf[a..b];
                debug_assert!(std::str::from_utf8(bytes).is_ok());
                // SAFETY: every span is made by `span_of` from a `&str` the worker's
                // parser took from these very bytes (or is empty), or is such a span of
                // an earlier line placed on this one by a memo, which does so only where
                // this line's bytes are those bytes; and nothing writes a block's buffer
                // after its worker parsed it (the one rewrite, `\/` unescaping, is of a
                // line before that line is parsed, inside that line).
                unsafe { std::str::from_utf8_unchecked(bytes) }
            };
            let rec = Record {
                event: r.event.clone().map(text),
                timestamp: r.timestamp,
                facility: r.facility.map(text),
                client: r.client.map(text),
                thread: r.thread.map(text),
                broker: r.broker.map(text),
                body: (r.base + r.body.0) as usize - ls..(r.base + r.body.1) as usize - ls,
            };
            sink.record(base + i + 1, line, &rec);
        }
        sink.line_done(true);
        next_line = i + 1;
    }
    gaps += p.lines - next_line;
    sink.lines_skipped(gaps - p.tallied);
    sink.lines_tallied(p.tallied);
}

#[cfg(test)]
mod tests;
