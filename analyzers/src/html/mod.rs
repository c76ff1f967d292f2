//! The HTML reports: one self-contained page a person opens (gap-report's `--html`, every
//! probe's `report.html` and `--html`, scripts/reproduce's `summary.html`), built with maud
//! from the typed results and the findings catalogue, never from a text report.
//!
//! A file a job: the page itself (head, CSP, stylesheet, the small shared pieces) is
//! [`page`]'s; a verdict's card [`verdict`]'s; the Environment section [`environment`]'s;
//! the table-sorting script [`sorting`]'s; each kind of page its own file.

mod environment;
mod gap;
mod page;
mod probe;
mod sorting;
mod summary;
mod verdict;

use crate::findings::reproduce::Reproduction;
use crate::gap_report::GapReport;
use crate::vocab::host::Host;

pub use probe::ProbePage;
pub use sorting::SCRIPT as SORTING_SCRIPT;

/// gap-report's page of a folder, read on `host`.
pub fn gap_report(report: &GapReport, host: &Host) -> String {
    gap::render(report, host)
}

/// A probe's page.
pub fn probe(page: &ProbePage) -> String {
    probe::render(page)
}

/// scripts/reproduce's page.
pub fn reproduce_summary(rep: &Reproduction) -> String {
    summary::render(rep)
}
