//! analyze-gc-log on arbitrary bytes: it must never panic, whatever the input (issue 6
//! §5). The input is split at the first 0xFF byte into two "rotated files" so that
//! state carried from one file to the next is fuzzed too, and read through a small
//! buffer so lines straddle refills.
#![no_main]

use kgap_analyzers::gc::{analyze_gc_logs, GcInput, GcLogOptions};
use kgap_analyzers::engine::input::Source;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (a, b) = match data.iter().position(|&x| x == 0xFF) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &data[..0]),
    };
    let inputs = vec![
        GcInput { name: "gc.log.0".into(), reader: Source::stream(a) },
        GcInput { name: "gc.log".into(), reader: Source::stream(b) },
    ];
    let opts = GcLogOptions { buffer_bytes: 128, ..GcLogOptions::default() };
    if let Ok(report) = analyze_gc_logs(inputs, &opts, Some(Box::new(std::io::sink()))) {
        let _ = report.render_text();
        let _ = report.render_svg();
        let _ = serde_json::to_string(&report);
    }
});
