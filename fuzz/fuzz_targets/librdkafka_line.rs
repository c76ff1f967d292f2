//! Fuzz the librdkafka record finder and both log analyzers (issue 3 §7):
//! `cargo +nightly fuzz run librdkafka_line` from this directory.
//! Seeds worth giving it: lines of fixtures/librdkafka/*.log.
#![no_main]

use kgap_analyzers::fetch_log::{analyze_fetch_log, FetchLogOptions};
use kgap_analyzers::librdkafka::{raw_stderr_record, HeadCache, RecordFinder};
use kgap_analyzers::protocol_log::{analyze_protocol_log, ProtocolLogOptions};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // The finder on one line: every record's body must lie inside the line, and
    // records must come in order without overlapping.
    let finder = RecordFinder::new();
    let mut last_end = 0;
    for rec in finder.records(data) {
        assert!(rec.body.start >= last_end && rec.body.end <= data.len());
        assert!(rec.body.start <= rec.body.end);
        last_end = rec.body.end;
    }
    if let Some(Some(rec)) = raw_stderr_record(data) {
        assert!(rec.body.end <= data.len());
    }
    // The head cache on the bytes as lines: line for line what the plain parse gives.
    let mut cache = HeadCache::new();
    for line in data.split(|&b| b == b'\n') {
        assert_eq!(cache.record(line), raw_stderr_record(line));
    }
    // The whole analyzers on the bytes as a log (small line cap to reach the
    // long-line path too): a report or an error, never a panic.
    let small = 64;
    let _ = analyze_protocol_log(
        data,
        &ProtocolLogOptions { max_line_bytes: Some(small), ..Default::default() },
    );
    let _ = analyze_fetch_log(data, &FetchLogOptions::default());
});
