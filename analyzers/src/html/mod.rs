//! The HTML reports: one self-contained page a person opens (gap-report's `--html`, every
//! probe's `report.html` and `--html`, scripts/reproduce's `summary.html`), built with maud
//! from the typed results and the findings catalogue, never from a text report. The page
//! itself (no script, nothing fetched, everything spliced in escaped) is [`page`]'s.

mod gap;
mod page;
mod probe;
mod summary;

use crate::findings::reproduce::Reproduction;
use crate::gap_report::GapReport;

pub use probe::ProbePage;

/// gap-report's page.
pub fn gap_report(report: &GapReport) -> String {
    gap::render(report)
}

/// A probe's page.
pub fn probe(page: &ProbePage) -> String {
    probe::render(page)
}

/// scripts/reproduce's page.
pub fn reproduce_summary(rep: &Reproduction) -> String {
    summary::render(rep)
}
