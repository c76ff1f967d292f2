//! The JFR reader on arbitrary bytes: binary chunks (seed the corpus with
//! fixtures/jfr/*.jfr), `jfr print --json` text, gzip of either. It must return a
//! report or an error, never panic, and the report must render.
#![no_main]

use kgap_analyzers::jfr::{analyze_jfr, ReportOptions};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // An Err is an I/O error, which a slice only gives through a bad gzip stream.
    if let Ok(report) = analyze_jfr(data, "fuzz", &ReportOptions::default()) {
        let _ = report.render_text();
        let _ = report.render_events();
        serde_json::to_string(&report).expect("the report serializes");
    }
});
