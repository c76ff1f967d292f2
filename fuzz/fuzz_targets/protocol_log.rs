//! analyze-protocol-log end to end on arbitrary bytes (issue 14 §5): the parallel pipeline
//! the binary runs (one parser thread), a time window, the timeline CSV, the text and JSON
//! reports. Seeds: heads of fixtures/librdkafka/*/debug.log*.
#![no_main]

use kgap_analyzers::engine::input::Source;
use kgap_analyzers::protocol_log::{analyze_protocol_log_parallel, ProtocolLogOptions};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // The first byte picks the reading mode, so both paths and a window are fuzzed.
    let (mode, log) = match data.split_first() {
        Some((m, rest)) => (*m, rest),
        None => (0, data),
    };
    let opts = ProtocolLogOptions {
        window_start: (mode & 2 != 0).then_some(1.0e9),
        window_end: (mode & 4 != 0).then_some(2.0e9),
        max_line_bytes: Some(if mode & 8 != 0 { 64 } else { 4096 }),
    };
    let mut csv = Vec::new();
    let workers = Some((mode & 1) as usize);
    if let Ok(report) = analyze_protocol_log_parallel(Source::stream(log), &opts, Some(&mut csv), workers) {
        let _ = report.render_text();
        let _ = report.is_usable();
        serde_json::to_string(&report).expect("the report serializes");
    }
});
