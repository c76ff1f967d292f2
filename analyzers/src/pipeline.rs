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
//! make one, none holds a `/`), so it is only counted. Blocks are parsed on all cores;
//! records cross threads as byte spans into their block, so nothing is allocated per
//! record. Memory stays bounded: a few blocks in flight.
//!
//! The lines are those of [`LineReader`](crate::input::LineReader), byte for byte: `\r`
//! trimmed, a line of `max_line` bytes or more cut to its head (and counted), the last
//! line without a newline flagged. The line-at-a-time path stays as the reference the
//! tests compare this one with.

use std::collections::BTreeMap;
use std::io::{self, Read, Write};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::{Arc, Mutex};

use crate::error::AnalyzeError;
use crate::input::{for_each_line, Input, InputSummary, DEFAULT_MAX_LINE_BYTES};
use crate::librdkafka::{corr_id_tail_at, raw_stamp_and_facility, CorrIdTail};
use crate::librdkafka::{
    raw_stderr_record, unescape_json_slashes, EventOf, HeadCache, Record, RecordFinder, Timestamp,
};
use crate::line_memo::{LineMemo, Lookup, Probe};
use crate::timeline::{Row, Timeline};

/// What the analyzers implement to be driven line by line.
pub trait RecordSink {
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

    /// [`read`](Self::read) through the block front end: a reader thread and `workers`
    /// parser threads (0: all on this thread); the analysis itself stays on this
    /// thread, in input order, so the report is the same as [`read`](Self::read)'s.
    fn read_parallel<R: Read + Send>(
        &mut self,
        input: R,
        workers: usize,
    ) -> Result<InputSummary, AnalyzeError> {
        let max = self.max_line_bytes();
        drive(input, max, workers, self)
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

/// Bytes per block (more when a line is longer, up to the line cap).
const BLOCK_BYTES: usize = 1 << 20;

/// A byte range in a block's buffer (start, len).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Span(u32, u32);

impl Span {
    /// The span `by` bytes earlier, when it starts no earlier than `by` (an empty one
    /// becomes `Span(0, 0)`: it reads as "" wherever it is).
    fn back(self, by: u32) -> Option<Span> {
        if self.1 == 0 {
            Some(Span(0, 0))
        } else {
            Some(Span(self.0.checked_sub(by)?, self.1))
        }
    }
}

/// Whole lines read in one go.
struct Block {
    seq: u64,
    /// The bytes are `buf[..len]`; the rest is room for the next read.
    buf: Vec<u8>,
    len: usize,
    /// Not lines but the head of one line of `max_line` bytes or more.
    long_head: bool,
    /// The last line has no newline (the input ended).
    unterminated: bool,
    /// A spare (empty) vector for the block's records, reused like the buffer.
    records: Vec<SpanRecord>,
}

#[derive(Clone, Copy)]
struct SpanRecord {
    /// Every span below, and `body`, counts from here in the block: 0 for a record
    /// parsed in place, the line's rest for one placed from a memo (so placing one is a
    /// copy, not a rewrite of each span).
    base: u32,
    /// Index of the line in its block.
    line: u32,
    /// The line's bytes in the block (after `\r` trimming and `\/` unescaping).
    line_start: u32,
    line_end: u32,
    event: EventOf<Span>,
    timestamp: Option<Timestamp>,
    facility: Option<Span>,
    client: Option<Span>,
    thread: Option<Span>,
    broker: Option<Span>,
    body: (u32, u32),
}

/// What a parsing thread keeps from line to line: the raw head of the last line, the
/// results of repeated raw lines, a buffer for unescaping.
struct LineParser {
    cache: HeadCache,
    memo: LineMemo<SpanRecord>,
    /// `SEND`/`RECV` lines by their bytes up to the CorrId: a request's lines repeat but
    /// for it (and the round trip).
    corr_memo: LineMemo<(SpanRecord, CorrIdTail)>,
    /// `FETCH` lines by their bytes through ` at offset `: `Fetch topic <t> [<p>] at
    /// offset ` ends its record there, and the offset after it moves on every line.
    offset_memo: LineMemo<SpanRecord>,
    at_offset: memchr::memmem::Finder<'static>,
    scratch: Vec<u8>,
}

impl Default for LineParser {
    fn default() -> Self {
        LineParser {
            cache: HeadCache::default(),
            memo: LineMemo::default(),
            corr_memo: LineMemo::default(),
            offset_memo: LineMemo::default(),
            at_offset: memchr::memmem::Finder::new(AT_OFFSET),
            scratch: Vec::new(),
        }
    }
}

/// `SEND` and `RECV`: a request's lines, which carry a CorrId, so never repeat whole.
fn is_send_recv(fac: &[u8]) -> bool {
    fac == b"SEND" || fac == b"RECV"
}

/// Where a `Fetch topic` record ends.
const AT_OFFSET: &[u8] = b" at offset ";

/// A fed block's buffer and records vector, back to the reader for another block.
type Spare = (Vec<u8>, Vec<SpanRecord>);

/// Most records a spare vector keeps room for (~2 MiB; a block of ordinary lines needs
/// four or five thousand).
const MAX_SPARE_RECORDS: usize = (2 << 20) / std::mem::size_of::<SpanRecord>();

struct Parsed {
    block: Block,
    lines: u64,
    records: Vec<SpanRecord>,
}

/// Worker threads to use: one per core (the reader and the analyzer's thread mostly wait).
pub(crate) fn default_workers() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}

/// Reads an input into blocks of whole lines.
struct BlockReader<R> {
    inner: R,
    gzip: bool,
    max_line: usize,
    /// Size of a block's buffer: at most `max_line`, so that a line that does not fit
    /// (with its newline) is one to cut, as [`LineReader`](crate::input::LineReader) does.
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
    cut: crate::input::GzipCut,
}

impl<R: Read> BlockReader<R> {
    fn new(inner: R, gzip: bool, cut: crate::input::GzipCut, max_line: usize) -> Self {
        let max_line = max_line.max(1);
        BlockReader {
            inner,
            gzip,
            max_line,
            cap: BLOCK_BYTES.min(max_line),
            carry: Vec::new(),
            eof: false,
            skipping: false,
            bytes_read: 0,
            first_nul: None,
            unterminated_last_line: false,
            lines_truncated: 0,
            seq: 0,
            cut,
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
    fn next_block(&mut self, mut buf: Vec<u8>) -> io::Result<Option<Block>> {
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
            if let Some(i) = memchr::memrchr(b'\n', &buf[..len]) {
                self.carry.extend_from_slice(&buf[i + 1..len]);
                self.seq += 1;
                return Ok(Some(Block {
                    seq,
                    buf,
                    len: i + 1,
                    long_head: false,
                    unterminated: false,
                    records: Vec::new(),
                }));
            }
            if len >= self.max_line {
                // Hand out the head of a too-long line and skip the rest.
                self.carry.extend_from_slice(&buf[self.max_line..len]);
                self.skipping = true;
                self.lines_truncated += 1;
                self.seq += 1;
                return Ok(Some(Block {
                    seq,
                    buf,
                    len: self.max_line,
                    long_head: true,
                    unterminated: false,
                    records: Vec::new(),
                }));
            }
            if self.eof {
                self.unterminated_last_line = true;
                self.seq += 1;
                return Ok(Some(Block {
                    seq,
                    buf,
                    len,
                    long_head: false,
                    unterminated: true,
                    records: Vec::new(),
                }));
            }
            // One line longer than the buffer: grow it, up to the line cap.
            if len == buf.len() {
                self.cap = (buf.len() * 2).min(self.max_line);
                buf.resize(self.cap, 0);
            }
        }
    }

    fn error(&self, e: io::Error) -> AnalyzeError {
        if self.gzip {
            AnalyzeError::Gzip {
                bytes_read: self.bytes_read,
                source: e,
            }
        } else {
            AnalyzeError::Read(e)
        }
    }

    fn summary(&self) -> InputSummary {
        InputSummary {
            bytes_read: self.bytes_read,
            gzip: self.gzip,
            lines_truncated: self.lines_truncated,
            binary_at_offset: self.first_nul,
            unterminated_last_line: self.unterminated_last_line,
            gzip_cut: self.cut.get(),
        }
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
        let mut parser = LineParser::default();
        let mut spare = Vec::new();
        let mut spare_records = Vec::new();
        let mut lines = 0u64;
        loop {
            let block = match reader.next_block(std::mem::take(&mut spare)) {
                Ok(Some(b)) => b,
                Ok(None) => break,
                Err(e) => return Err(reader.error(e)),
            };
            let records = std::mem::take(&mut spare_records);
            let parsed = parse_block(block, &finder, &mut parser, records);
            feed(&parsed, lines, sink);
            lines += parsed.lines;
            spare = parsed.block.buf;
            spare_records = parsed.records;
        }
        return Ok(reader.summary());
    }
    std::thread::scope(|scope| {
        let (block_tx, block_rx) = sync_channel::<Block>(workers * 2);
        let (parsed_tx, parsed_rx) = sync_channel::<Parsed>(workers * 2 + 2);
        // Fed blocks go back to the reader, with their records' vector: fresh ones
        // would cost the kernel a page fault and a zeroed page every 4 KiB (and the
        // analyzer's thread an munmap of each records vector). The pool holds every
        // block that can be in flight (both queues, one per worker parsing and one
        // waiting for its turn, the one fed, the one read): one that drops blocks when
        // full had the reader allocate anew whenever it ran ahead, ~100 k page faults
        // a GiB.
        let in_flight = workers * 2 + (workers * 2 + 2) + workers * 2 + 2;
        let (spare_tx, spare_rx) = sync_channel::<Spare>(in_flight);
        let block_rx = Arc::new(Mutex::new(block_rx));
        let reader = scope.spawn(move || {
            let result = loop {
                let (buf, records) = spare_rx.try_recv().unwrap_or_default();
                match reader.next_block(buf) {
                    Ok(Some(mut b)) => {
                        b.records = records;
                        if block_tx.send(b).is_err() {
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
        for _ in 0..workers {
            let rx = Arc::clone(&block_rx);
            let tx = parsed_tx.clone();
            scope.spawn(move || parse_blocks(rx, tx));
        }
        drop(parsed_tx);
        feed_in_order(parsed_rx, sink, spare_tx);
        reader.join().expect("the reader thread does not panic")
    })
}

/// Where `s` lies in `buf`. The only maker of spans: so every span's bytes are a
/// `&str`'s, which [`feed`] relies on.
fn span_of(buf: &[u8], s: &str) -> Span {
    let base = buf.as_ptr() as usize;
    let p = s.as_ptr() as usize;
    if p >= base && p + s.len() <= base + buf.len() {
        Span((p - base) as u32, s.len() as u32)
    } else {
        Span::default() // a static "" the parser substituted
    }
}

fn to_spans(buf: &[u8], line: u32, start: usize, end: usize, rec: Record<'_>) -> SpanRecord {
    SpanRecord {
        base: 0,
        line,
        line_start: start as u32,
        line_end: end as u32,
        event: rec.event.map(|s| span_of(buf, s)),
        timestamp: rec.timestamp,
        facility: rec.facility.map(|s| span_of(buf, s)),
        client: rec.client.map(|s| span_of(buf, s)),
        thread: rec.thread.map(|s| span_of(buf, s)),
        broker: rec.broker.map(|s| span_of(buf, s)),
        body: (
            (start + rec.body.start) as u32,
            (start + rec.body.end) as u32,
        ),
    }
}

/// A raw line's record with its spans counted from `base` (the line's rest, in the
/// block): what the memo keeps. `None` when a span starts before the rest (no raw
/// record does; such a record is just not kept).
fn relative(r: &SpanRecord, base: u32) -> Option<SpanRecord> {
    debug_assert_eq!(r.base, 0, "a record parsed in place");
    let back = |s: Option<Span>| match s {
        Some(s) => s.back(base).map(Some),
        None => Some(None),
    };
    let mut bad = false;
    let event = r.event.clone().map(|s| {
        s.back(base).unwrap_or_else(|| {
            bad = true;
            Span(0, 0)
        })
    });
    let out = SpanRecord {
        base: 0,
        line: 0,
        line_start: 0,
        line_end: 0,
        event,
        timestamp: r.timestamp,
        facility: back(r.facility)?,
        client: back(r.client)?,
        thread: back(r.thread)?,
        broker: back(r.broker)?,
        body: (r.body.0.checked_sub(base)?, r.body.1.checked_sub(base)?),
    };
    (!bad).then_some(out)
}

/// Where the digits of the last `CorrId ` in the line's last 48 bytes start.
fn corr_id_at(line: &[u8]) -> Option<usize> {
    const WORD: &[u8] = b"CorrId ";
    let from = line.len().saturating_sub(48);
    let mut to = line.len();
    while let Some(i) = memchr::memrchr(b'C', &line[from..to]) {
        let at = from + i;
        if line[at..].starts_with(WORD) {
            return Some(at + WORD.len());
        }
        to = at;
    }
    None
}

/// What the CorrId memo keeps of a `SEND`/`RECV` line's record (`line`, at `start` in its
/// block, whose last `CorrId ` digits start at `at`): the record counted from the line's
/// rest, and how its tail reads. Kept only when the tail read at `at` gives this record's
/// CorrId, round trip and end: then the whole parse read exactly the bytes before `at`
/// and then that tail (both digit runs end at the same `)`, and a run starts after the
/// space of `CorrId `), so any line with the same bytes before `at` parses the same way.
fn corr_template(
    r: &SpanRecord,
    line: &[u8],
    start: usize,
    key_at: usize,
    at: usize,
) -> Option<(SpanRecord, CorrIdTail)> {
    let (tail, id, rtt) = match r.event {
        EventOf::Sent { corr_id, .. } | EventOf::SentPartial { corr_id, .. } => {
            (CorrIdTail::Sent, corr_id, 0.0f64)
        }
        EventOf::Received {
            corr_id, rtt_ms, ..
        } => (CorrIdTail::Received, corr_id, rtt_ms),
        _ => return None,
    };
    let (got_id, got_rtt, body_end) = corr_id_tail_at(line, at, tail)?;
    let same = got_id == id
        && got_rtt.to_bits() == rtt.to_bits()
        && (start + body_end) as u32 == r.base + r.body.1;
    if !same {
        return None;
    }
    Some((relative(r, (start + key_at) as u32)?, tail))
}

/// Which memo missed a line, with its probe (and where its key ends).
enum Missed {
    None,
    Rest(Probe),
    Corr(Probe, usize),
    Offset(Probe, usize),
}

/// Tell the memo that missed `line` (at `start` in its block) what the raw parser made of
/// it: `rec`, its record, or none.
fn remember(
    parser: &mut LineParser,
    missed: Missed,
    line: &[u8],
    start: usize,
    rec: Option<&SpanRecord>,
) {
    match missed {
        Missed::None => {}
        Missed::Rest(probe) => {
            // The raw parser took the line: its result depends on the rest alone.
            let base = (start + probe.key_at()) as u32;
            let kept = match rec {
                None => Some(None),
                Some(r) => relative(r, base).map(Some),
            };
            if let Some(kept) = kept {
                parser.memo.insert(line, probe, kept);
            }
        }
        Missed::Corr(probe, at) => {
            if let Some(kept) = rec.and_then(|r| corr_template(r, line, start, probe.key_at(), at))
            {
                parser.corr_memo.insert(line, probe, Some(kept));
            }
        }
        Missed::Offset(probe, at) => {
            // Kept only when the record is a `Fetch topic` that ends at the ` at offset `
            // the key ends with: its parse ends with that literal, so it read no byte
            // after the key, and any line sharing the key parses the same way.
            let ends_there = |r: &&SpanRecord| {
                matches!(r.event, EventOf::FetchTopic { .. })
                    && (r.base + r.body.1) as usize == start + at
            };
            if let Some(r) = rec.filter(ends_there) {
                if let Some(kept) = relative(r, (start + probe.key_at()) as u32) {
                    parser.offset_memo.insert(line, probe, Some(kept));
                }
            }
        }
    }
}

/// The CorrId (and round trip) of a record placed from the CorrId memo.
fn with_corr_id(r: &mut SpanRecord, id: i32, rtt: f64) {
    match &mut r.event {
        EventOf::Sent { corr_id, .. } | EventOf::SentPartial { corr_id, .. } => *corr_id = id,
        EventOf::Received {
            corr_id, rtt_ms, ..
        } => {
            *corr_id = id;
            *rtt_ms = rtt;
        }
        _ => {}
    }
}

/// A kept record placed on the line `buf[start..end]` (index `line`) whose rest starts
/// at `key_at`, with that line's time.
fn placed(
    t: &SpanRecord,
    line: u32,
    start: usize,
    end: usize,
    key_at: usize,
    secs: f64,
) -> SpanRecord {
    SpanRecord {
        base: (start + key_at) as u32,
        line,
        line_start: start as u32,
        line_end: end as u32,
        timestamp: t.timestamp.map(|ts| Timestamp { secs, ..ts }),
        ..*t
    }
}

fn parse_blocks(rx: Arc<Mutex<Receiver<Block>>>, tx: SyncSender<Parsed>) {
    let finder = RecordFinder::new();
    let mut parser = LineParser::default();
    loop {
        let next = rx
            .lock()
            .expect("no worker panics holding the queue")
            .recv();
        let Ok(mut block) = next else { return };
        let records = std::mem::take(&mut block.records);
        let parsed = parse_block(block, &finder, &mut parser, records);
        if tx.send(parsed).is_err() {
            return;
        }
    }
}

/// The records of one line `buf[start..end]` (already cut and `\r`-trimmed), in the
/// analyzers' order: librdkafka's own format first (a repeat of a recent raw line
/// through the memo, else through `cache`: the block's lines come in order), then any
/// wrapper.
fn parse_line(
    buf: &mut [u8],
    index: u32,
    start: usize,
    mut end: usize,
    finder: &RecordFinder,
    parser: &mut LineParser,
    out: &mut Vec<SpanRecord>,
) {
    let line = &buf[start..end];
    // A raw line goes to one memo by its shape: a request's SEND/RECV line by its bytes up
    // to its CorrId, a FETCH line through ` at offset ` when it has the words, any other
    // line by its whole rest.
    let stamp = raw_stamp_and_facility(line);
    // The memo that missed, to be told the parse's result.
    let mut missed = Missed::None;
    if let Some(st) = stamp {
        let fac = &line[st.1..st.1 + st.2];
        if is_send_recv(fac) {
            if let Some(at) = corr_id_at(line) {
                match parser.corr_memo.lookup(line, st, at) {
                    Lookup::Hit {
                        secs,
                        key_at,
                        value,
                    } => {
                        // Only records are kept: with no record, the tail decided.
                        if let Some((t, tail)) = value {
                            if let Some((id, rtt, body_end)) = corr_id_tail_at(line, at, *tail) {
                                let mut r = placed(t, index, start, end, key_at, secs);
                                with_corr_id(&mut r, id, rtt);
                                r.body.1 = (start + body_end) as u32 - r.base;
                                out.push(r);
                            }
                        }
                        return;
                    }
                    Lookup::Miss(p) => missed = Missed::Corr(p, at),
                    Lookup::Pass => {}
                }
            }
        } else if let Some(at) = (fac == b"FETCH")
            .then(|| parser.at_offset.find(&line[st.1..]))
            .flatten()
            .map(|i| st.1 + i + AT_OFFSET.len())
        {
            match parser.offset_memo.lookup(line, st, at) {
                Lookup::Hit {
                    secs,
                    key_at,
                    value: Some(t),
                } => {
                    out.push(placed(t, index, start, end, key_at, secs));
                    return;
                }
                Lookup::Hit { .. } => {} // only records are kept
                Lookup::Miss(p) => missed = Missed::Offset(p, at),
                Lookup::Pass => {}
            }
        } else {
            match parser.memo.lookup(line, st, line.len()) {
                Lookup::Hit {
                    secs,
                    key_at,
                    value,
                } => {
                    if let Some(t) = value {
                        out.push(placed(t, index, start, end, key_at, secs));
                    }
                    return;
                }
                Lookup::Miss(p) => missed = Missed::Rest(p),
                Lookup::Pass => {}
            }
        }
    }
    // Without a raw stamp the raw parser takes nothing (`HeadCache::record` starts there).
    let found = stamp.and_then(|st| parser.cache.record_stamped(line, st));
    if let Some(found) = found {
        // Pushed where it goes (a record is ~150 bytes: moving it through options and
        // temporaries showed in callgrind).
        let pushed = found.is_some();
        if let Some(rec) = found {
            out.push(to_spans(buf, index, start, end, rec));
        }
        let rec = if pushed { out.last() } else { None };
        remember(parser, missed, &buf[start..end], start, rec);
        return;
    }
    let scratch = &mut parser.scratch;
    if unescape_json_slashes(&buf[start..end], scratch) {
        // Unescaping only shortens: rewrite the line in place.
        buf[start..start + scratch.len()].copy_from_slice(scratch);
        end = start + scratch.len();
    }
    let buf = &*buf;
    for rec in finder.records(&buf[start..end]) {
        out.push(to_spans(buf, index, start, end, rec));
    }
}

/// `%<level>|`: how every line of librdkafka's own stderr format starts.
#[inline]
fn is_raw_start(s: &[u8]) -> bool {
    s.len() >= 4 && s[0] == b'%' && s[1].is_ascii_digit() && s[2] == b'|'
}

fn trim_cr(buf: &[u8], start: usize, end: usize) -> usize {
    if end > start && buf[end - 1] == b'\r' {
        end - 1
    } else {
        end
    }
}

fn parse_block(
    mut block: Block,
    finder: &RecordFinder,
    parser: &mut LineParser,
    mut records: Vec<SpanRecord>,
) -> Parsed {
    records.clear();
    let len = block.len;
    let buf = &mut block.buf[..];
    if block.long_head {
        // The head of a too-long line, as it is (no `\r` trimming: its end was cut).
        parse_line(buf, 0, 0, len, finder, parser, &mut records);
        return Parsed {
            block,
            lines: 1,
            records,
        };
    }
    // Lines in `buf[from..to]` (`to` ends on a newline, or at `len` for the last line).
    let count_lines = |buf: &[u8], from: usize, to: usize| -> u64 {
        let n = memchr::memchr_iter(b'\n', &buf[from..to]).count() as u64;
        n + (to == len && block.unterminated && from < to) as u64
    };
    let mut pos = 0;
    let mut index = 0u64;
    while pos < len {
        if is_raw_start(&buf[pos..len]) {
            // librdkafka's own format: its parser finds the body at its known place,
            // cheaper than searching the line for anchors.
            let line_end = memchr::memchr(b'\n', &buf[pos..len]).map_or(len, |i| pos + i);
            let end = trim_cr(buf, pos, line_end);
            parse_line(buf, index as u32, pos, end, finder, parser, &mut records);
            index += 1;
            pos = line_end + 1;
            continue;
        }
        let Some(at) = finder.anchor_at(&buf[pos..len]).map(|a| pos + a) else {
            index += count_lines(buf, pos, len);
            break;
        };
        let line_start = memchr::memrchr(b'\n', &buf[pos..at]).map_or(pos, |i| pos + i + 1);
        index += count_lines(buf, pos, line_start);
        let line_end = memchr::memchr(b'\n', &buf[at..len]).map_or(len, |i| at + i);
        let end = trim_cr(buf, line_start, line_end);
        parse_line(
            buf,
            index as u32,
            line_start,
            end,
            finder,
            parser,
            &mut records,
        );
        index += 1;
        pos = line_end + 1;
    }
    Parsed {
        block,
        lines: index,
        records,
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
            let mut records = p.records;
            if records.capacity() > MAX_SPARE_RECORDS {
                records = Vec::new(); // a block of tiny records: do not keep its room
            }
            let _ = spare.try_send((p.block.buf, records)); // a full pool just drops them
        }
    }
}

/// Feed one parsed block; `base` lines came before it.
fn feed<S: RecordSink>(p: &Parsed, base: u64, sink: &mut S) {
    let buf = &p.block.buf;
    let mut recs = p.records.iter().peekable();
    let mut next_line = 0u64;
    while let Some(first) = recs.peek() {
        let i = first.line as u64;
        sink.lines_skipped(i - next_line);
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
    sink.lines_skipped(p.lines - next_line);
}

#[cfg(test)]
mod tests {
    //! The block front end against the line-at-a-time reference
    //! ([`LineReader`](crate::input::LineReader) and the analyzers' `push_line`): the same
    //! records on the same lines, the same counts, on every captured fixture and on the
    //! edges (cut lines, `\r\n`, a last line without newline, `\/`, NUL, tiny buffers).

    use super::*;
    use crate::input::for_each_line;
    use crate::librdkafka::RecordFinder;

    /// Everything a sink sees, as text: comparable between the two paths.
    #[derive(Default, PartialEq, Debug)]
    struct Seen {
        lines: u64,
        recognised: u64,
        records: Vec<String>,
    }

    impl RecordSink for Seen {
        fn line_done(&mut self, recognised: bool) {
            self.lines += 1;
            self.recognised += recognised as u64;
        }
        fn record(&mut self, line_no: u64, line: &[u8], rec: &Record<'_>) {
            self.records.push(format!(
                "{line_no} {:?} {rec:?}",
                String::from_utf8_lossy(line)
            ));
        }
    }

    /// The reference: one line at a time, as the analyzers' `push_line` reads.
    fn reference(input: &[u8], max_line: usize) -> (Seen, InputSummary) {
        let finder = RecordFinder::new();
        let mut seen = Seen::default();
        let mut scratch = Vec::new();
        let summary = for_each_line(input, max_line, |l| {
            feed_line(&mut seen, &finder, &mut scratch, l.number, l.bytes)
        })
        .unwrap();
        (seen, summary)
    }

    fn fast(input: &[u8], max_line: usize, workers: usize) -> (Seen, InputSummary) {
        let mut seen = Seen::default();
        let summary = drive(input, max_line, workers, &mut seen).unwrap();
        (seen, summary)
    }

    fn assert_same(input: &[u8], max_line: usize, what: &str) {
        let (want, want_sum) = reference(input, max_line);
        for workers in [0, 1, 3] {
            let (got, got_sum) = fast(input, max_line, workers);
            assert_eq!(got.lines, want.lines, "{what}: lines (workers {workers})");
            assert_eq!(got.recognised, want.recognised, "{what}: recognised lines");
            assert_eq!(got.records.len(), want.records.len(), "{what}: records");
            for (g, w) in got.records.iter().zip(&want.records) {
                assert_eq!(g, w, "{what}: workers {workers}, max_line {max_line}");
            }
            assert_eq!(
                format!("{got_sum:?}"),
                format!("{want_sum:?}"),
                "{what}: input summary"
            );
        }
    }

    fn fixture_logs() -> Vec<(String, Vec<u8>)> {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/librdkafka");
        let mut out = Vec::new();
        for e in std::fs::read_dir(dir).unwrap() {
            let d = e.unwrap().path();
            for name in ["debug.log", "debug.log.gz"] {
                let p = d.join(name);
                if let Ok(bytes) = std::fs::read(&p) {
                    out.push((p.display().to_string(), bytes));
                }
            }
        }
        out.sort();
        assert!(out.len() >= 6, "the captured librdkafka fixtures are there");
        out
    }

    /// A fixture's bytes as text (`debug.log.gz` inflated).
    fn gunzipped(bytes: Vec<u8>) -> Vec<u8> {
        if !bytes.starts_with(&[0x1f, 0x8b]) {
            return bytes;
        }
        let mut out = Vec::new();
        std::io::Read::read_to_end(&mut flate2::read::MultiGzDecoder::new(&bytes[..]), &mut out)
            .unwrap();
        out
    }

    #[test]
    fn fixtures_give_the_same_records_as_the_line_reader() {
        for (name, bytes) in fixture_logs() {
            assert_same(&bytes, crate::input::DEFAULT_MAX_LINE_BYTES, &name);
            let (seen, _) = fast(&bytes, crate::input::DEFAULT_MAX_LINE_BYTES, 2);
            assert!(seen.recognised > 100, "{name}: records found");
        }
    }

    #[test]
    fn fixtures_cut_to_short_lines_give_the_same_records() {
        // A cap shorter than most lines: the blocks are small, many lines are cut.
        for (name, bytes) in fixture_logs().into_iter().take(3) {
            let plain = gunzipped(bytes);
            let head = &plain[..plain.len().min(200_000)];
            for max_line in [97, 150, 4096] {
                assert_same(head, max_line, &name);
            }
        }
    }

    #[test]
    fn near_repeats_of_captured_lines_give_the_same_records() {
        // The memos' ground: real raw lines repeated with one change each (a digit, a
        // byte anywhere, the stamp's length, the line cut short), next to the unchanged
        // line, so that most lookups find a line that differs from them in one place.
        let mut raw: Vec<Vec<u8>> = Vec::new();
        for (_, bytes) in fixture_logs() {
            let plain = gunzipped(bytes);
            raw.extend(
                plain
                    .split(|&b| b == b'\n')
                    .filter(|l| l.starts_with(b"%7|"))
                    .take(400)
                    .map(<[u8]>::to_vec),
            );
        }
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = |n: usize| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % n as u64) as usize
        };
        let mut log = Vec::new();
        for _ in 0..20_000 {
            let line = &raw[next(raw.len())];
            let mut l = line.clone();
            match next(6) {
                0 => {
                    let i = next(l.len());
                    l[i] = b"0123456789 )(,|:x"[next(17)];
                }
                1 => {
                    // A digit near the end: a CorrId, a round trip, a size.
                    let i = l.len() - 1 - next(l.len().min(24));
                    if l[i].is_ascii_digit() {
                        l[i] = b'0' + next(10) as u8;
                    }
                }
                2 => {
                    l.remove(3); // a nine-digit stamp
                }
                3 => l.truncate(next(l.len() + 1)),
                _ => {}
            }
            log.extend_from_slice(&l);
            log.push(b'\n');
            log.extend_from_slice(line);
            log.push(b'\n');
        }
        assert_same(&log, crate::input::DEFAULT_MAX_LINE_BYTES, "near repeats");
    }

    #[test]
    fn edges_give_the_same_records() {
        let sent = "%7|1700000000.000|SEND|rdkafka#producer-1| [thrd:k:9092/1]: k:9092/1: \
                    Sent ProduceRequest (v10, 15621 bytes @ 0, CorrId 4)";
        let json = r#"{"message":"[thrd:k:9092\/1]: k:9092\/1: Fetch 6\/6\/6 toppar(s)"}"#;
        let msgset =
            "%7|1700000000.000|PRODUCE|rdkafka#producer-1| [thrd:k:9092/1]: k:9092/1: t.x [4]: \
                      Produce MessageSet with 15 message(s) (15556 bytes, ApiVersion 10)";
        let fetch = "%7|1700000000.000|FETCH|rdkafka#consumer-6| [thrd:k:9092/1]: k:9092/1: \
                     Fetch topic t.x [4] at offset 27184 (leader epoch 0, current leader epoch 0, v2)";
        let decide = "%7|1700000000.000|FETCH|rdkafka#consumer-6| [thrd:k:9092/1]: k:9092/1: \
                      Topic t.x [4] in state active at offset 100000 (leader epoch 0) \
                      (0/100000 msgs, 0/65536 kb queued, opv 2) is fetchable";
        let recv = "%7|1700000000.001|RECV|rdkafka#producer-1| [thrd:k:9092/1]: k:9092/1: \
                    Received ProduceResponse (v10, 62 bytes, CorrId 4, rtt 0.39ms)";
        let none =
            "%7|1700000000.000|PRODUCE|rdkafka#producer-1| [thrd:k:9092/1]: k:9092/1: t.x [4]: \
                    No more space in current MessageSet (15 message(s), 15645 bytes)";
        let cases: Vec<String> = vec![
            String::new(),
            "\n\n\n".into(),
            sent.to_string(),
            format!("{sent}\r\n{sent}\r\n"),
            format!("noise\n{sent}\nnoise Sent nothing\n{json}\n{sent}"),
            format!("{}\n{sent}\n", "x".repeat(5000)),
            format!("{sent}\n{}", "Sent ".repeat(2000)),
            format!("{sent}\n\0binary\n{sent}\n"),
            format!("%7|\n%7\n{sent}\n%"),
            format!("{json}\n{json}\r\n{sent}{sent}\n"),
            // Repeated rests (the memo's hits): other stamps, nine digits, no record, a
            // rest after a stamp that is not one.
            [
                msgset.replace("1700000000.000", "1700000000.001"),
                none.to_string(),
                msgset.to_string(),
                msgset.replace("1700000000.000", "170000000.000"),
                none.replace("1700000000.000", "1700000009.999"),
                msgset.replace("1700000000.000", "17000x0000.000"),
                msgset.replace("[4]", "[5]"),
                msgset.to_string(),
                msgset.replace("%7|", "%6|"),
            ]
            .join("\n"),
            // FETCH lines that repeat through ` at offset ` (the offset memo), and ones
            // that hold the words elsewhere or end before or right after them.
            [
                fetch.to_string(),
                fetch.replace("offset 27184", "offset 27185"),
                fetch.replace("offset 27184 (", "offset 1 ("),
                fetch.replace("[4]", "[5]"),
                fetch.replace(" (leader epoch 0, current leader epoch 0, v2)", ""),
                fetch.replace("27184 (leader epoch 0, current leader epoch 0, v2)", ""),
                fetch.replace(
                    "offset 27184 (leader epoch 0, current leader epoch 0, v2)",
                    "offset",
                ),
                fetch.replace("Fetch topic", "Fetch  topic"),
                fetch.replace("[4] at offset", "[4] at offset at offset"),
                fetch.replace("|FETCH|", "|FETCHX|"),
                fetch.replace("1700000000.000", "170000000.000"),
                // The words in the client's name: the key ends before the record does.
                fetch.replace("rdkafka#consumer-6", "app at offset 1"),
                fetch
                    .replace("rdkafka#consumer-6", "app at offset 1")
                    .replace("[4]", "[5]"),
                decide.to_string(),
                decide.replace("(0/100000", "(1/100000"),
                fetch.to_string(),
            ]
            .join("\n"),
            // SEND/RECV lines that repeat but for their CorrId and round trip (the CorrId
            // memo), and ones whose tail differs in every way that matters.
            [
                sent.to_string(),
                sent.replace("CorrId 4)", "CorrId 5)"),
                sent.replace("CorrId 4)", "CorrId 123456)"),
                sent.replace("CorrId 4)", "CorrId -1)"),
                sent.replace("CorrId 4)", "CorrId 99999999999)"),
                sent.replace("CorrId 4)", "CorrId 6) CorrId 9"),
                // A second CorrId after the body: the memo's split is not the parser's,
                // so the first line must not be kept for the second.
                sent.replace("CorrId 4)", "CorrId 6) CorrId 9)"),
                sent.replace("CorrId 4)", "CorrId 6) CorrId 5)"),
                sent.replace("CorrId 4)", "CorrId 7"),
                sent.replace("CorrId 4)", "CorrId 8)x"),
                sent.replace("1700000000.000", "170000000.001"),
                sent.replace("15621 bytes", "15622 bytes"),
                sent.replace(
                    "Sent ProduceRequest (v10, 15621 bytes @ 0",
                    "Sent partial ProduceRequest (v10, 0+1000/15621 bytes",
                ),
                sent.replace(
                    "Sent ProduceRequest (v10, 15621 bytes @ 0",
                    "Sent partial ProduceRequest (v10, 0+1000/15621 bytes",
                )
                .replace("CorrId 4)", "CorrId 5)"),
                recv.to_string(),
                recv.replace("CorrId 4, rtt 0.39ms)", "CorrId 5, rtt 12.5ms)"),
                recv.replace("CorrId 4, rtt 0.39ms)", "CorrId 6, rtt 7ms)"),
                recv.replace("CorrId 4, rtt 0.39ms)", "CorrId 7, rtt ms)"),
                recv.replace("CorrId 4, rtt 0.39ms)", "CorrId 8)"),
                recv.replace(
                    "CorrId 4, rtt 0.39ms)",
                    "CorrId 9, rtt 1.0ms) CorrId 3, rtt 2ms)",
                ),
                recv.replace(
                    "CorrId 4, rtt 0.39ms)",
                    "CorrId 9, rtt 1.0ms) CorrId 4, rtt 5ms)",
                ),
                recv.replace(
                    "CorrId 4, rtt 0.39ms)",
                    "CorrId 10, rtt 0.123456789012345ms)",
                ),
            ]
            .join("\n"),
        ];
        for (i, c) in cases.iter().enumerate() {
            for max_line in [1, 2, 60, 100, 140, 1 << 20] {
                assert_same(c.as_bytes(), max_line, &format!("case {i}"));
            }
        }
    }
}
