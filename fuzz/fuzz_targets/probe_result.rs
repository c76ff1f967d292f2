//! gap-report's reader of a probe's result.json on arbitrary bytes (issue 14 §5): plain or
//! gzip, any JSON, any schema version. A summary or a reason, never a panic. Seeds:
//! fixtures/librdkafka/*-result.json.
#![no_main]

use kgap_analyzers::gap_report::read_probe_result;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = read_probe_result(data);
});
