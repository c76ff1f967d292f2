//! Thread snapshots users already have: `top -H` (batch or interactive, any locale), `ps -L`
//! / `-T` / `-eLf`, `pidstat -t`, `gdb`/`pstack` backtraces and JVM thread dumps (`jstack`,
//! `jcmd Thread.print`, `kill -3` in a log), alone or mixed in one paste, joined by thread id
//! (a JVM dump's `nid` is top's TID).
//!
//! Each format has its reader ([`top`], [`ps`], [`pidstat`], [`backtrace`], [`jvm`]); a line
//! goes to the reader that is inside a table, backtrace or dump, else to the first that
//! recognises it, else it is prose and skipped. The readers hand whole tables, backtraces and
//! dumps to the [`collect`]or, which keeps one record per thread (memory follows the number of
//! threads, not of lines or frames) and says what kind of figure each thread's cores are
//! ([`Figure`]): a share now (top's and pidstat's interval), a rate between two snapshots, or a
//! share over the thread's life, which is not the share now.

mod backtrace;
mod collect;
mod error;
pub(crate) mod format;
mod jvm;
pub(crate) mod lock_waits;
mod options;
mod pidstat;
mod ps;
mod render;
pub(crate) mod report;
pub(crate) mod stacks;
mod table;
#[cfg(test)]
mod tests;
pub(crate) mod text;
mod top;

use std::io::Read;

use crate::engine::input::{self, InputSummary};

pub use error::PasteError;
pub use format::{Figure, Format};
pub use options::PasteOptions;
pub use report::{
    BacktraceSummary, Iteration, JavaSummary, RoleCores, Section, SnapshotReport, SnapshotThread,
};

/// Longest line kept whole: tables and dumps have short lines (a Java frame is rarely over
/// 300 bytes); longer lines are cut to their head, which holds what is read.
const MAX_LINE_BYTES: usize = 64 * 1024;

/// Reads a paste of thread snapshots and reports which threads are hot, what each is, and
/// the diagnoses. `name` is shown as the source.
pub fn read_paste<R: Read>(
    input: R,
    name: &str,
    opts: &PasteOptions,
) -> Result<SnapshotReport, PasteError> {
    let mut paste = Paste::new(opts.clone());
    let summary = input::for_each_line(input, MAX_LINE_BYTES, |line| {
        let text = String::from_utf8_lossy(line.bytes);
        paste.feed(line.number, &text, line.truncated);
    })?;
    paste.finish(name, summary)
}

/// True when `head` (the first kilobytes of a file) holds a thread snapshot this module
/// reads: for a sniffer such as gap-report's, which must tell it from a log.
pub fn looks_like_paste(head: &[u8]) -> bool {
    let text = String::from_utf8_lossy(head);
    let mut paste = Paste::new(PasteOptions::default());
    for (i, line) in text.lines().enumerate() {
        paste.feed(i as u64 + 1, line, false);
        if paste.collector.recognised() {
            return true;
        }
    }
    paste.end_all();
    paste.collector.recognised()
}

/// Which reader holds the line being read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reader {
    Jvm,
    Gdb,
    Pidstat,
    Top,
    Ps,
}

const ORDER: [Reader; 5] = [
    Reader::Jvm,
    Reader::Gdb,
    Reader::Pidstat,
    Reader::Top,
    Reader::Ps,
];

/// The line dispatcher: one reader per format and the collector they feed.
struct Paste {
    collector: collect::Collector,
    jvm: jvm::JvmReader,
    gdb: backtrace::GdbReader,
    pidstat: pidstat::PidstatReader,
    top: top::TopReader,
    ps: ps::PsReader,
    active: Option<Reader>,
}

impl Paste {
    fn new(opts: PasteOptions) -> Self {
        Paste {
            collector: collect::Collector::new(opts),
            jvm: jvm::JvmReader::default(),
            gdb: backtrace::GdbReader::default(),
            pidstat: pidstat::PidstatReader::default(),
            top: top::TopReader::default(),
            ps: ps::PsReader::default(),
            active: None,
        }
    }

    fn offer(&mut self, r: Reader, no: u64, line: &str) -> bool {
        let c = &mut self.collector;
        match r {
            Reader::Jvm => self.jvm.feed(no, line, c),
            Reader::Gdb => self.gdb.feed(no, line, c),
            Reader::Pidstat => self.pidstat.feed(no, line, c),
            Reader::Top => self.top.feed(no, line, c),
            Reader::Ps => self.ps.feed(no, line, c),
        }
    }

    fn end(&mut self, r: Reader) {
        let c = &mut self.collector;
        match r {
            Reader::Jvm => self.jvm.end(c),
            Reader::Gdb => self.gdb.end(c),
            Reader::Pidstat => self.pidstat.end(c),
            Reader::Top => self.top.end(c),
            Reader::Ps => self.ps.end(c),
        }
    }

    fn end_all(&mut self) {
        for r in ORDER {
            self.end(r);
        }
    }

    fn feed(&mut self, no: u64, raw: &str, truncated: bool) {
        let line = text::clean(raw);
        if truncated {
            self.collector
                .warn(format!("line {no}: longer than 64 KiB: read its head only"));
        }
        // The reader inside a table, backtrace or dump has the first say.
        if let Some(r) = self.active {
            if self.offer(r, no, &line) {
                return;
            }
            self.end(r);
            self.active = None;
        }
        for r in ORDER {
            if self.offer(r, no, &line) {
                self.active = Some(r);
                return;
            }
        }
        self.collector.prose(no, &line);
    }

    fn finish(mut self, name: &str, input: InputSummary) -> Result<SnapshotReport, PasteError> {
        self.end_all();
        self.collector.finish(name, input)
    }
}
