//! Reading a whole input on several cores: one thread reads and splits lines into
//! chunks, worker threads find the librdkafka records in them, and the calling
//! thread feeds the records, in input order, to the analyzer (whose accounting
//! depends on order: CorrId pairing, backoff intervals, per-second counts).
//!
//! Records cross threads as byte spans into their chunk ([`EventOf<Span>`]), so
//! nothing is allocated per record. Memory stays bounded: a few chunks in flight.

use std::collections::BTreeMap;
use std::io::Read;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::{Arc, Mutex};

use crate::error::AnalyzeError;
use crate::input::{Input, InputSummary, LineReader, DEFAULT_BUFFER_BYTES};
use crate::librdkafka::{
    raw_stderr_record, unescape_json_slashes, EventOf, Record, RecordFinder, Timestamp,
};

/// What the analyzers implement to be driven line by line.
pub(crate) trait RecordSink {
    /// A line was read; `recognised` when it held at least one record.
    fn line_done(&mut self, recognised: bool);
    /// One record of the line `line_no`.
    fn record(&mut self, line_no: u64, line: &[u8], rec: &Record<'_>);
}

/// Chunks are cut at about this many bytes of lines.
const CHUNK_BYTES: usize = 256 * 1024;

/// A byte range in a chunk's buffer (start, len).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Span(u32, u32);

struct LineRef {
    number: u64,
    start: u32,
    end: u32,
}

struct Chunk {
    seq: u64,
    buf: Vec<u8>,
    lines: Vec<LineRef>,
}

struct SpanRecord {
    line: u32,
    event: EventOf<Span>,
    timestamp: Option<Timestamp>,
    facility: Option<Span>,
    client: Option<Span>,
    thread: Option<Span>,
    broker: Option<Span>,
    body: (u32, u32),
}

struct Parsed {
    chunk: Chunk,
    records: Vec<SpanRecord>,
}

/// Worker threads to use: all cores but the one feeding the analyzer, at least one.
pub(crate) fn default_workers() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get().saturating_sub(1).max(1))
        .unwrap_or(1)
}

/// Read `input` (gzip detected) and feed every line's records to `sink` in order.
pub(crate) fn drive<R: Read + Send, S: RecordSink>(
    input: R,
    max_line: usize,
    workers: usize,
    sink: &mut S,
) -> Result<InputSummary, AnalyzeError> {
    let workers = workers.max(1);
    // Spans are u32 offsets into a chunk of lines: keep a chunk under 4 GiB.
    let max_line = max_line.min(1 << 30);
    std::thread::scope(|scope| {
        let (chunk_tx, chunk_rx) = sync_channel::<Chunk>(workers * 2);
        let (parsed_tx, parsed_rx) = sync_channel::<Parsed>(workers * 2 + 2);
        // Fed chunks go back to the reader: fresh 256 KiB buffers would cost the
        // kernel a page fault and a zeroed page every 4 KiB.
        let (spare_tx, spare_rx) = sync_channel::<Chunk>(workers * 4 + 4);
        let chunk_rx = Arc::new(Mutex::new(chunk_rx));
        let reader = scope.spawn(move || read_chunks(input, max_line, chunk_tx, spare_rx));
        for _ in 0..workers {
            let rx = Arc::clone(&chunk_rx);
            let tx = parsed_tx.clone();
            scope.spawn(move || parse_chunks(rx, tx));
        }
        drop(parsed_tx);
        feed_in_order(parsed_rx, sink, spare_tx);
        reader.join().expect("the reader thread does not panic")
    })
}

fn read_chunks<R: Read>(
    input: R,
    max_line: usize,
    tx: SyncSender<Chunk>,
    spare: Receiver<Chunk>,
) -> Result<InputSummary, AnalyzeError> {
    let input = Input::detect(input).map_err(AnalyzeError::Read)?;
    let gzip = input.is_gzip();
    let mut reader = LineReader::with_limits(input, DEFAULT_BUFFER_BYTES, max_line);
    let mut truncated = 0;
    let mut seq = 0;
    let new_chunk = |seq| match spare.try_recv() {
        Ok(mut c) => {
            c.seq = seq;
            c.buf.clear();
            c.lines.clear();
            c
        }
        Err(_) => Chunk {
            seq,
            buf: Vec::with_capacity(CHUNK_BYTES + 4096),
            lines: Vec::new(),
        },
    };
    let mut chunk = new_chunk(seq);
    let result = loop {
        let line = match reader.next_line() {
            Ok(Some(line)) => line,
            Ok(None) => break Ok(()),
            Err(source) if gzip => {
                break Err(AnalyzeError::Gzip {
                    bytes_read: reader.bytes_read(),
                    source,
                })
            }
            Err(e) => break Err(AnalyzeError::Read(e)),
        };
        truncated += line.truncated as u64;
        let start = chunk.buf.len() as u32;
        chunk.buf.extend_from_slice(line.bytes);
        chunk.lines.push(LineRef {
            number: line.number,
            start,
            end: chunk.buf.len() as u32,
        });
        if chunk.buf.len() >= CHUNK_BYTES {
            seq += 1;
            let full = std::mem::replace(&mut chunk, new_chunk(seq));
            if tx.send(full).is_err() {
                break Ok(()); // the consumer stopped
            }
        }
    };
    if !chunk.lines.is_empty() {
        let _ = tx.send(chunk);
    }
    result?;
    Ok(InputSummary {
        bytes_read: reader.bytes_read(),
        gzip,
        lines_truncated: truncated,
        binary_at_offset: reader.first_nul(),
        unterminated_last_line: reader.unterminated_last_line(),
    })
}

fn span_of(buf: &[u8], s: &str) -> Span {
    let base = buf.as_ptr() as usize;
    let p = s.as_ptr() as usize;
    if p >= base && p + s.len() <= base + buf.len() {
        Span((p - base) as u32, s.len() as u32)
    } else {
        Span::default() // a static "" the parser substituted
    }
}

fn to_spans(buf: &[u8], line: u32, line_start: u32, rec: Record<'_>) -> SpanRecord {
    SpanRecord {
        line,
        event: rec.event.map(|s| span_of(buf, s)),
        timestamp: rec.timestamp,
        facility: rec.facility.map(|s| span_of(buf, s)),
        client: rec.client.map(|s| span_of(buf, s)),
        thread: rec.thread.map(|s| span_of(buf, s)),
        broker: rec.broker.map(|s| span_of(buf, s)),
        body: (
            line_start + rec.body.start as u32,
            line_start + rec.body.end as u32,
        ),
    }
}

fn parse_chunks(rx: Arc<Mutex<Receiver<Chunk>>>, tx: SyncSender<Parsed>) {
    let finder = RecordFinder::new();
    let mut scratch = Vec::new();
    loop {
        let next = rx
            .lock()
            .expect("no worker panics holding the queue")
            .recv();
        let Ok(mut chunk) = next else { return };
        let mut records = Vec::with_capacity(chunk.lines.len());
        for (i, l) in chunk.lines.iter_mut().enumerate() {
            let (start, end) = (l.start as usize, l.end as usize);
            // The same order as the analyzers' push_line: raw format first.
            if let Some(found) = raw_stderr_record(&chunk.buf[start..end]) {
                if let Some(rec) = found {
                    records.push(to_spans(&chunk.buf, i as u32, l.start, rec));
                }
                continue;
            }
            if unescape_json_slashes(&chunk.buf[start..end], &mut scratch) {
                // Unescaping only shortens: rewrite the line in place.
                chunk.buf[start..start + scratch.len()].copy_from_slice(&scratch);
                l.end = (start + scratch.len()) as u32;
            }
            let buf = &chunk.buf;
            for rec in finder.records(&buf[start..l.end as usize]) {
                records.push(to_spans(buf, i as u32, l.start, rec));
            }
        }
        if tx.send(Parsed { chunk, records }).is_err() {
            return;
        }
    }
}

fn feed_in_order<S: RecordSink>(rx: Receiver<Parsed>, sink: &mut S, spare: SyncSender<Chunk>) {
    let mut pending: BTreeMap<u64, Parsed> = BTreeMap::new();
    let mut next = 0u64;
    for parsed in rx {
        pending.insert(parsed.chunk.seq, parsed);
        while let Some(p) = pending.remove(&next) {
            feed(&p, sink);
            next += 1;
            let _ = spare.try_send(p.chunk); // a full pool just drops it
        }
    }
}

fn feed<S: RecordSink>(p: &Parsed, sink: &mut S) {
    let buf = &p.chunk.buf;
    let mut recs = p.records.iter().peekable();
    for (i, l) in p.chunk.lines.iter().enumerate() {
        let line = &buf[l.start as usize..l.end as usize];
        // The worker took every string from a `&str`, so each span is valid UTF-8;
        // checking the whole line once (nearly always ASCII) is cheaper than one
        // check per string.
        let ascii = line.is_ascii();
        let text = |s: Span| {
            let (a, b) = (s.0 as usize, (s.0 + s.1) as usize);
            if ascii && a >= l.start as usize && b <= l.end as usize {
                // SAFETY: the bytes lie inside an all-ASCII line: valid UTF-8.
                unsafe { std::str::from_utf8_unchecked(&buf[a..b]) }
            } else {
                std::str::from_utf8(&buf[a..b]).unwrap_or("")
            }
        };
        let mut any = false;
        while let Some(r) = recs.next_if(|r| r.line as usize == i) {
            any = true;
            let rec = Record {
                event: r.event.clone().map(text),
                timestamp: r.timestamp,
                facility: r.facility.map(text),
                client: r.client.map(text),
                thread: r.thread.map(text),
                broker: r.broker.map(text),
                body: (r.body.0 - l.start) as usize..(r.body.1 - l.start) as usize,
            };
            sink.record(l.number, line, &rec);
        }
        sink.line_done(any);
    }
}
