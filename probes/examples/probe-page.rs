//! The HTML page of a stored probe-gzip-batch result, for scripts/regen-docs' screenshot
//! (the same page every run writes as report.html, made from the numbers kept in the repo
//! rather than from a fresh run, so the picture changes only when the page does):
//!
//!   cargo run --example probe-page -- RESULT.json PAGE.html probe-gzip-batch OPTION…
//!
//! The probe's command line (the one that made RESULT.json) gives its options and is shown
//! on the page as the command that ran it. Only probe-gzip-batch reads its figures back.

use std::path::Path;

use kgap_probes::gzip_batch::{GzipBatch, Options};
use kgap_probes::kit::{export, stored};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 4 || args[3] != "probe-gzip-batch" {
        eprintln!("usage: probe-page RESULT.json PAGE.html probe-gzip-batch OPTION…");
        std::process::exit(2);
    }
    let command = &args[3..];
    let probe = GzipBatch::new(kgap_analyzers::vocab::args::parse_from::<Options, _, _>(
        command,
    ));
    let shown = kgap_analyzers::vocab::redact::command_line(command.iter().cloned());
    match stored::report(&probe, Path::new(&args[1]), shown).and_then(|r| {
        std::fs::write(&args[2], export::html(&r))
            .map_err(|e| kgap_probes::kit::error::ProbeError::io(&args[2], e))
    }) {
        Ok(()) => {}
        Err(e) => {
            eprintln!("probe-page: {e}");
            std::process::exit(e.exit_code());
        }
    }
}
