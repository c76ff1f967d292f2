//! `analyze-jfr`: JDK Flight Recorder recordings, read natively, into a gap report.
//!
//! Reads `.jfr` files directly (gzip'd or not) ([`reader`]: chunk headers, compressed integers,
//! metadata, constant pools, several chunks, formats 1.x and 2.x; HotSpot,
//! async-profiler and dd-trace writers), or `jfr print --json` exports (streamed),
//! and reports what the post's Java gaps need: recording span and JVM, per-thread
//! CPU, socket I/O sizes per thread and remote address, hot methods, GC pauses
//! and heap after GC, allocation by class, lock contention, and diagnoses (a
//! fixed socket buffer, one consumer at one core, GC pressure, deflate).
//!
//! Memory is bounded by one chunk of the recording (plus one event of an export); a
//! recording in a file is mapped, two chunks at a time, not read.
//!
//! ```no_run
//! use kgap_analyzers::jfr::{analyze_jfr, ReportOptions};
//! let file = std::fs::File::open("recording.jfr").unwrap();
//! let report = analyze_jfr(file, "recording.jfr", &ReportOptions::default()).unwrap();
//! for d in &report.diagnoses {
//!     println!("{}: {}", d.id, d.fix);
//! }
//! ```

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Read};

pub mod analysis;
mod binary;
mod chunk_bytes;
mod chunk_part;
mod handler;
mod json;
pub mod reader;
mod socket_fields;
mod socket_memo;

pub use analysis::{JfrReport, ReportOptions, SocketOp};

use crate::AnalyzeError;
use analysis::{Aggregator, InputInfo};
use reader::{ChunkReader, MAGIC};

/// Read buffer: the input is peeked through it to tell a recording from an export.
const BUF: usize = 64 * 1024;

/// Analyse a recording (`.jfr`) or a `jfr print --json` export from `input`.
///
/// Only an I/O error is an `Err`: input that is not JFR, empty, cut short or
/// corrupt gives a report whose `input.problems` says what could not be read
/// (and [`JfrReport::is_usable`] is false when nothing could).
pub fn analyze_jfr<R: Read>(
    input: R,
    name: &str,
    opts: &ReportOptions,
) -> Result<JfrReport, AnalyzeError> {
    let mut input = BufReader::with_capacity(BUF, input);
    let head = input.fill_buf().map_err(AnalyzeError::Read)?;
    // Recordings and exports are often passed around gzip'd (`.jfr.gz`, `.json.gz`).
    if head.starts_with(&[0x1f, 0x8b]) {
        // A stream cut short reads as ended there: the recording is then cut, and said so.
        let gz = crate::engine::input::Input::detect(input).map_err(AnalyzeError::Read)?;
        let cut = gz.gzip_cut();
        let mut report = analyze_buffered(BufReader::with_capacity(BUF, gz), name, opts)?;
        report.input.format.push_str("+gzip");
        if let Some(c) = cut.get() {
            report.input.cut_at_byte.get_or_insert(report.input.bytes);
            report
                .input
                .problems
                .push(crate::engine::input::gzip_cut_warning(
                    &c,
                    report.input.bytes,
                ));
        }
        return Ok(report);
    }
    analyze_buffered(input, name, opts)
}

/// [`analyze_jfr`] of a file: the same report. A regular file holding a recording (not
/// gzip'd) has its chunks mapped where they lie instead of read (see `chunk_bytes`); any
/// other file is read as [`analyze_jfr`] reads it.
pub fn analyze_jfr_file(
    file: std::fs::File,
    name: &str,
    opts: &ReportOptions,
) -> Result<JfrReport, AnalyzeError> {
    let mut head = [0u8; 4];
    let n = chunk_bytes::read_full_at(&file, &mut head, 0).map_err(AnalyzeError::Read)?;
    let regular = file.metadata().map_err(AnalyzeError::Read)?.is_file();
    if !(regular && n == head.len() && &head == MAGIC) {
        return analyze_jfr(file, name, opts);
    }
    let mut agg = Aggregator::default();
    let mut info = InputInfo {
        name: name.to_string(),
        format: "jfr".into(),
        ..InputInfo::default()
    };
    read_binary(ChunkReader::mapped(file), &mut agg, &mut info)?;
    Ok(agg.finish(info, opts))
}

fn analyze_buffered<R: BufRead>(
    mut input: R,
    name: &str,
    opts: &ReportOptions,
) -> Result<JfrReport, AnalyzeError> {
    let head = input.fill_buf().map_err(AnalyzeError::Read)?;
    let mut agg = Aggregator::default();
    let mut info = InputInfo {
        name: name.to_string(),
        ..InputInfo::default()
    };
    let first = head.iter().find(|b| !b.is_ascii_whitespace()).copied();
    if head.is_empty() {
        info.format = "none".into();
        info.problems
            .push("the input is empty (0 bytes): a recording the JVM never wrote to".into());
    } else if head.starts_with(MAGIC) || (head.len() < 4 && MAGIC.starts_with(head)) {
        info.format = "jfr".into();
        read_binary(ChunkReader::new(&mut input), &mut agg, &mut info)?;
    } else if first == Some(b'{') {
        info.format = "jfr-json".into();
        let mut counted = CountingReader {
            inner: &mut input,
            n: 0,
        };
        let r = json::feed_json(&mut counted, &mut agg);
        info.bytes = counted.n;
        if let Err(e) = r {
            info.problems
                .push(format!("JSON export not read to its end: {e}"));
            if e.contains("EOF") {
                info.cut_at_byte = Some(info.bytes);
            }
        }
        info.chunks = 0;
    } else {
        info.format = "unknown".into();
        let shown: String = head
            .iter()
            .take(8)
            .map(|b| format!("{b:02x}"))
            .collect::<Vec<_>>()
            .join(" ");
        info.problems.push(format!(
            "not a JFR recording (no \"FLR\\0\" magic) nor a `jfr print --json` export \
             (first bytes: {shown})"
        ));
    }
    Ok(agg.finish(info, opts))
}

fn read_binary<R: Read>(
    mut chunks: ChunkReader<R>,
    agg: &mut Aggregator,
    info: &mut InputInfo,
) -> Result<(), AnalyzeError> {
    let mut versions = BTreeSet::new();
    let mut index = 0u64;
    // A mapped recording's next chunk is parsed on the other core while this one is
    // read: its bytes stay where they lie in the file, so holding two costs no memory.
    let ahead = chunks.is_mapped() && crate::engine::cores::available() > 1;
    let mut next = chunks.next_chunk().map_err(AnalyzeError::Read)?;
    while let Some(chunk) = next.take() {
        index += 1;
        versions.insert(format!("{}.{}", chunk.header.major, chunk.header.minor));
        for p in &chunk.problems {
            info.problems
                .push(format!("chunk {index} (offset {}): {p}", chunk.file_offset));
            if let reader::ChunkProblem::CutShort { got, .. } = p {
                info.cut_at_byte.get_or_insert(chunk.file_offset + *got);
            }
        }
        let undecoded = std::thread::scope(|s| -> Result<u64, AnalyzeError> {
            let parsing = match ahead {
                true => chunks
                    .next_bytes()
                    .map_err(AnalyzeError::Read)?
                    .map(|bytes| s.spawn(move || bytes.parse())),
                false => None,
            };
            let undecoded = binary::feed_chunk(&chunk, agg);
            next = parsing.map(|p| p.join().unwrap_or_else(|e| std::panic::resume_unwind(e)));
            Ok(undecoded)
        })?;
        if undecoded > 0 {
            info.problems.push(format!(
                "chunk {index}: {undecoded} events did not match their declared fields \
                 (counted, not analysed)"
            ));
        }
        chunks.recycle(chunk);
        if !ahead {
            next = chunks.next_chunk().map_err(AnalyzeError::Read)?;
        }
    }
    if let Some(s) = chunks.stopped.take() {
        info.problems.push(s);
        info.cut_at_byte.get_or_insert(chunks.offset());
    }
    info.chunks = index;
    info.bytes = chunks.offset();
    info.version =
        (!versions.is_empty()).then(|| versions.into_iter().collect::<Vec<_>>().join(", "));
    Ok(())
}

/// Counts the bytes read through it.
struct CountingReader<R> {
    inner: R,
    n: u64,
}

impl<R: Read> Read for CountingReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let k = self.inner.read(buf)?;
        self.n += k as u64;
        Ok(k)
    }
}
