//! Recordings: JSON lines of `Snapshot` after one header line (`--save`), or a probe's
//! per-second `threads.csv`.

use std::io::{self, BufRead, Write};

use serde::{Deserialize, Serialize};

use super::analyzer::{Analyzer, IntervalCores, SnapshotIntervals};
use crate::thread_cpu::threads::{Snapshot, ThreadCores};

/// The first line of a `--save` recording.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RecordingHeader {
    /// Always "kgap-thread-cpu".
    pub recording: String,
    pub version: u32,
    /// The recording host's USER_HZ.
    pub ticks_per_s: u64,
    pub interval_ms: u64,
    pub pid: Option<i32>,
    pub command: Option<Vec<String>>,
}

/// Writes a recording: a header, then one flushed line per snapshot (a crash loses nothing).
pub struct RecordingWriter<W: Write> {
    w: W,
}

impl<W: Write> RecordingWriter<W> {
    pub fn new(mut w: W, header: &RecordingHeader) -> io::Result<Self> {
        serde_json::to_writer(&mut w, header).map_err(io::Error::other)?;
        w.write_all(b"\n")?;
        w.flush()?;
        Ok(RecordingWriter { w })
    }

    pub fn write(&mut self, s: &Snapshot) -> io::Result<()> {
        serde_json::to_writer(&mut self.w, s).map_err(io::Error::other)?;
        self.w.write_all(b"\n")?;
        self.w.flush()
    }
}

/// Why a recording cannot be analysed.
#[derive(Debug, thiserror::Error)]
pub enum RecordingError {
    #[error("{0}")]
    Io(#[from] io::Error),
    #[error("line {line}: {reason}")]
    Bad { line: u64, reason: String },
    #[error("the file is empty")]
    Empty,
    #[error(
        "{samples} sample(s): at least two are needed for one interval (record for longer \
         than one --interval)"
    )]
    TooShort { samples: u64 },
}

/// What reading a recording found, beside the intervals it fed to the analyzer.
#[derive(Debug, Clone, Default)]
pub struct RecordingInfo {
    pub header: Option<RecordingHeader>,
    pub samples: u64,
    pub warnings: Vec<String>,
}

/// Streams a recording (JSON lines from `--save`, or a probe's `threads.csv`) into
/// `analyzer`. `default_ticks` is used when the recording has no header.
pub fn read_recording<R: BufRead>(
    mut r: R,
    analyzer: &mut Analyzer,
    default_ticks: u64,
) -> Result<RecordingInfo, RecordingError> {
    let mut info = RecordingInfo::default();
    let mut line = String::new();
    let mut line_no = 0u64;
    let mut intervals: Option<SnapshotIntervals> = None;
    let mut csv_mode = false;
    let mut csv_second: Option<i64> = None;
    let mut csv_threads: Vec<ThreadCores> = Vec::new();
    let mut pending_err: Option<RecordingError> = None;
    loop {
        line.clear();
        let n = r.read_line(&mut line).map_err(|e| {
            if e.kind() == io::ErrorKind::InvalidData {
                RecordingError::Bad {
                    line: line_no + 1,
                    reason: "not text (invalid UTF-8): not a recording".into(),
                }
            } else {
                RecordingError::Io(e)
            }
        })?;
        if n == 0 {
            break;
        }
        line_no += 1;
        if let Some(e) = pending_err.take() {
            return Err(e); // a bad line that was not the last one
        }
        let complete = line.ends_with('\n');
        let text = line.trim();
        if text.is_empty() {
            continue;
        }
        if line_no == 1 && text.starts_with("second,tid,thread,cores") {
            csv_mode = true;
            continue;
        }
        if csv_mode {
            let Some((second, tid, name, cores)) = parse_threads_csv_row(text) else {
                let e = RecordingError::Bad {
                    line: line_no,
                    reason: "expected second,tid,thread,cores".into(),
                };
                if complete {
                    return Err(e);
                }
                pending_err = Some(e);
                continue;
            };
            if csv_second.is_some_and(|s| s != second) {
                flush_csv_second(analyzer, csv_second, &mut csv_threads)?;
                info.samples += 1;
            }
            csv_second = Some(second);
            csv_threads.push(ThreadCores {
                tid,
                name,
                cores,
                user_cores: cores,
                system_cores: 0.0,
            });
            continue;
        }
        if line_no == 1 && text.contains("\"recording\"") {
            match serde_json::from_str::<RecordingHeader>(text) {
                Ok(h) => {
                    intervals = Some(SnapshotIntervals::new(h.ticks_per_s));
                    info.header = Some(h);
                    continue;
                }
                Err(e) => {
                    return Err(RecordingError::Bad {
                        line: 1,
                        reason: format!("not a recording header: {e}"),
                    })
                }
            }
        }
        match serde_json::from_str::<Snapshot>(text) {
            Ok(s) => {
                info.samples += 1;
                let iv = intervals
                    .get_or_insert_with(|| SnapshotIntervals::new(default_ticks))
                    .push(s);
                if let Some(iv) = iv {
                    analyzer.add(&iv)?;
                }
            }
            Err(e) => {
                let reason = if line_no == 1 {
                    format!(
                        "not a recording (JSON lines from --save, or a probe's threads.csv): {e}"
                    )
                } else {
                    format!("not a snapshot: {e}")
                };
                let err = RecordingError::Bad {
                    line: line_no,
                    reason,
                };
                if complete || info.samples == 0 {
                    return Err(err);
                }
                // The last line, cut short: the recorder stopped mid-write.
                pending_err = Some(err);
            }
        }
    }
    if let Some(RecordingError::Bad { line, .. }) = pending_err {
        info.warnings.push(format!(
            "line {line}: the last line is incomplete (the recorder stopped mid-write): skipped"
        ));
    }
    if csv_mode && csv_second.is_some() {
        flush_csv_second(analyzer, csv_second, &mut csv_threads)?;
        info.samples += 1;
    }
    if line_no == 0 {
        return Err(RecordingError::Empty);
    }
    if analyzer.intervals() == 0 {
        return Err(RecordingError::TooShort {
            samples: info.samples,
        });
    }
    Ok(info)
}

fn parse_threads_csv_row(text: &str) -> Option<(i64, i32, String, f64)> {
    // second,tid,thread,cores: the thread name may contain commas (quoted) or spaces.
    let mut rd = csv::ReaderBuilder::new()
        .has_headers(false)
        .from_reader(text.as_bytes());
    let rec = rd.records().next()?.ok()?;
    if rec.len() != 4 {
        return None;
    }
    let cores: f64 = rec[3].parse().ok()?;
    if !cores.is_finite() || cores < 0.0 {
        return None;
    }
    Some((
        rec[0].parse().ok()?,
        rec[1].parse().ok()?,
        rec[2].to_string(),
        cores,
    ))
}

fn flush_csv_second(
    analyzer: &mut Analyzer,
    second: Option<i64>,
    threads: &mut Vec<ThreadCores>,
) -> io::Result<()> {
    let Some(s) = second else { return Ok(()) };
    threads.sort_by(|x, y| y.cores.total_cmp(&x.cores).then(x.tid.cmp(&y.tid)));
    let iv = IntervalCores {
        start_s: (s - 1) as f64,
        end_s: s as f64,
        process_cores: None,
        threads: std::mem::take(threads),
    };
    analyzer.add(&iv)
}
