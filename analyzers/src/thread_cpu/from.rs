//! `--from FILE` (or `-`, plain or gzip): a recording (`--save`'s JSON lines, a probe's
//! `threads.csv`) or a paste of thread snapshots (top, ps, pidstat, gdb, jstack), told apart
//! by the first line that is not blank.

use std::io::{self, BufReader, Cursor, Read};

use super::analyzer::Analyzer;
use super::recording::{read_recording, RecordingError};
use super::report::{Source, ThreadCpuReport};
use super::snapshot::{read_paste, PasteError, PasteOptions, SnapshotReport};
use crate::engine::input::Input;

/// What `--from` read.
#[derive(Debug)]
pub enum FromReport {
    Recording(Box<ThreadCpuReport>),
    Snapshot(Box<SnapshotReport>),
}

impl FromReport {
    pub fn render_text(&self) -> String {
        match self {
            FromReport::Recording(r) => r.render_text(),
            FromReport::Snapshot(s) => s.render_text(),
        }
    }

    /// The `--json` document.
    pub fn to_json(&self) -> String {
        match self {
            FromReport::Recording(r) => crate::vocab::json_doc::pretty("analyze-thread-cpu", r),
            FromReport::Snapshot(s) => {
                crate::vocab::json_doc::pretty_kind("analyze-thread-cpu", "snapshot", s)
            }
        }
    }
}

/// Why `--from` gave no report.
#[derive(Debug, thiserror::Error)]
pub enum FromError {
    #[error("{0}")]
    Recording(#[from] RecordingError),
    #[error("{0}")]
    Paste(#[from] PasteError),
    #[error("cannot read input: {0}")]
    Read(#[source] io::Error),
    /// What went wrong, in a gzip stream that ended early: the cut may be why.
    #[error(
        "{source} (the gzip stream ends early ({cut}): only the part before the cut was read)"
    )]
    GzipCut {
        cut: String,
        #[source]
        source: Box<FromError>,
    },
}

impl FromError {
    fn after(self, cut: &crate::engine::input::GzipCut) -> FromError {
        match cut.get() {
            Some(cut) => FromError::GzipCut {
                cut,
                source: Box::new(self),
            },
            None => self,
        }
    }
}

/// The first non-blank line decides: a recording starts with `{` (its header or a snapshot)
/// or `second,tid,thread,cores`; binary input and an empty file go the recording's way too
/// (its reader says what is wrong with them).
fn is_recording(head: &[u8]) -> bool {
    let text = head
        .iter()
        .position(|&b| !b.is_ascii_whitespace())
        .map_or(&[][..], |i| &head[i..]);
    text.is_empty()
        || text.starts_with(b"{")
        || text.starts_with(b"second,tid,thread,cores")
        || memchr::memchr(0, head).is_some()
}

/// Reads up to the end of the first non-blank line (at most 64 KiB).
fn peek<R: Read>(r: &mut R) -> io::Result<Vec<u8>> {
    let mut head = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let non_blank = head.iter().position(|b: &u8| !b.is_ascii_whitespace());
        if let Some(i) = non_blank {
            if memchr::memchr(b'\n', &head[i..]).is_some() {
                return Ok(head);
            }
        }
        if head.len() >= 64 * 1024 {
            return Ok(head);
        }
        match r.read(&mut buf) {
            Ok(0) => return Ok(head),
            Ok(n) => head.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

/// Analyses `input` (named `name` in the report) as a recording, into `analyzer` (which may
/// write the `--timeline` CSV), or as a snapshot paste. `default_ticks` is this host's
/// USER_HZ, for a threads.csv or a recording without a header.
pub fn analyze_from<R: Read>(
    input: R,
    name: &str,
    mut analyzer: Analyzer,
    default_ticks: u64,
    paste: &PasteOptions,
) -> Result<FromReport, FromError> {
    let mut input = Input::detect(input).map_err(FromError::Read)?;
    let gzip = input.is_gzip();
    let cut = input.gzip_cut();
    let head = peek(&mut input).map_err(FromError::Read)?;
    let whole = Cursor::new(head.clone()).chain(input);
    if is_recording(&head) {
        let info = read_recording(BufReader::new(whole), &mut analyzer, default_ticks)
            .map_err(|e| FromError::from(e).after(&cut))?;
        let ticks = info
            .header
            .as_ref()
            .map_or(default_ticks, |h| h.ticks_per_s);
        let mut r = analyzer.finish(Source::Recording(name.to_string()), ticks);
        r.ended = "end of recording".into();
        r.warnings = info.warnings;
        if let Some(c) = cut.get() {
            r.ended = "a gzip stream cut short".into();
            r.warnings.push(format!(
                "the gzip stream ends early ({c}) after {} samples: the report covers the \
                 part before the cut",
                info.samples
            ));
        }
        return Ok(FromReport::Recording(Box::new(r)));
    }
    let mut report = read_paste(whole, name, paste).map_err(|e| FromError::from(e).after(&cut))?;
    report.input.gzip |= gzip;
    if let Some(c) = cut.get() {
        report.warnings.push(crate::engine::input::gzip_cut_warning(
            &c,
            report.input.bytes_read,
        ));
        report.input.gzip_cut = Some(c);
    }
    Ok(FromReport::Snapshot(Box::new(report)))
}
