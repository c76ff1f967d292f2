//! What a capture gives back: the bundle, gap-report's reading of it, what it could not see.

use std::path::PathBuf;

use super::bundle::Manifest;
use crate::gap_report::GapReport;

/// A capture's outcome: the bundle, gap-report's reading, what it could not see.
#[derive(Debug, serde::Serialize)]
pub struct Capture {
    pub dir: PathBuf,
    pub manifest: Manifest,
    pub report: GapReport,
    pub cannot_see: Vec<String>,
    /// The exit status (see [`error`](super::error)).
    #[serde(skip)]
    pub exit_code: i32,
}
