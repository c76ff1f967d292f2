//! The reader of `jfr print --json` exports on arbitrary bytes (issue 14 §5): whatever the
//! input, it is fed as an export (a `{` is put in front of what does not start with one), so
//! the fuzzer spends its time in the JSON reader rather than on the binary magic. A report or
//! an error, never a panic, and the report renders. Seeds: heads of
//! fixtures/jfr/*.export.json.gz, decompressed.
#![no_main]

use kgap_analyzers::jfr::{analyze_jfr, ReportOptions};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let first = data.iter().find(|b| !b.is_ascii_whitespace()).copied();
    let owned;
    let input: &[u8] = if first == Some(b'{') {
        data
    } else {
        owned = [b"{".as_slice(), data].concat();
        &owned
    };
    if let Ok(report) = analyze_jfr(input, "fuzz", &ReportOptions::default()) {
        let _ = report.render_text();
        let _ = report.render_events();
        serde_json::to_string(&report).expect("the report serializes");
    }
});
