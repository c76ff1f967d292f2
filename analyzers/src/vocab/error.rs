//! The one error type of the crate: what stopped an analysis before it could report.
//!
//! Bad *lines* are not errors: they are counted and skipped, and the report says how
//! many. Only input that cannot be read at all ends an analysis early.

use std::io;

/// Why an analysis could not produce a report.
#[derive(Debug, thiserror::Error)]
pub enum AnalyzeError {
    /// The input could not be read (file missing, permission, broken pipe on input).
    #[error("cannot read input: {0}")]
    Read(#[source] io::Error),
    /// The input starts like gzip but does not decompress.
    #[error("input looks like gzip but does not decompress (after {bytes_read} decompressed bytes): {source}")]
    Gzip {
        /// Decompressed bytes read before the failure.
        bytes_read: u64,
        /// The decoder's complaint.
        #[source]
        source: io::Error,
    },
    /// The per-second timeline could not be written.
    #[error("cannot write timeline: {0}")]
    Timeline(#[source] io::Error),
}
