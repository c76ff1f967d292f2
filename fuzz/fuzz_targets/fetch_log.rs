//! analyze-fetch-log end to end on arbitrary bytes (issue 14 §5): the parallel pipeline the
//! binary runs (one parser thread), a time window, fetch.wait.max.ms, the timeline CSV, the
//! text and JSON reports. Seeds: heads of fixtures/librdkafka/consumer-*/debug.log.
#![no_main]

use kgap_analyzers::fetch_log::{analyze_fetch_log_parallel, FetchLogOptions};
use kgap_analyzers::engine::input::Source;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (mode, log) = match data.split_first() {
        Some((m, rest)) => (*m, rest),
        None => (0, data),
    };
    let opts = FetchLogOptions {
        window_start: (mode & 2 != 0).then_some(1.0e9),
        window_end: (mode & 4 != 0).then_some(2.0e9),
        fetch_wait_max_ms: (mode & 16 != 0).then_some(u64::from(mode)),
        max_line_bytes: Some(if mode & 8 != 0 { 64 } else { 4096 }),
    };
    let mut csv = Vec::new();
    let workers = Some((mode & 1) as usize);
    if let Ok(report) = analyze_fetch_log_parallel(Source::stream(log), &opts, Some(&mut csv), workers) {
        let _ = report.render_text();
        let _ = report.is_usable();
        serde_json::to_string(&report).expect("the report serializes");
    }
});
