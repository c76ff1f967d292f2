//! Why a paste gave no report.

use crate::vocab::error::AnalyzeError;

/// Why a paste gave no report.
#[derive(Debug, thiserror::Error)]
pub enum PasteError {
    #[error(transparent)]
    Input(#[from] AnalyzeError),
    /// Nothing in it is a table, backtrace or dump this tool reads.
    #[error(
        "line 1: not a recording (JSON lines from --save, or a probe's threads.csv), and no \
         thread snapshot in its {lines} line(s) either (top -H, ps -L, pidstat -t, gdb \
         backtraces, jstack / jcmd Thread.print){hint}"
    )]
    Nothing { lines: u64, hint: String },
    /// Thread rows above one core, and nothing but tables in the paste.
    #[error(
        "line {line}: {name} at {cores:.2} cores, and {more} more thread row(s) above one core: \
         one thread cannot use more than a core, so this table's figures are not threads' \
         shares (process rows, or a tool that mis-reports, as Android's toybox top -H does): \
         nothing to analyse"
    )]
    NotThreadsShares {
        line: u64,
        name: String,
        cores: f64,
        more: usize,
    },
    /// Tables were found, but not one thread row.
    #[error("{0}")]
    NoThreads(String),
}
