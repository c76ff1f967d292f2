//! The statistics reader on arbitrary bytes (issue 14 §5): the frame finder (objects after
//! any prefix, pretty or one a line, cut, over the cap), the model (one emit), and the whole
//! analysis with its renderings. A report or an error, never a panic; frames inside the
//! input. Seeds: heads of fixtures/stats/*.jsonl and *.log.
#![no_main]

use kgap_analyzers::stats::frame::{Frame, Framer};
use kgap_analyzers::stats::{analyze_stats_with_timeline, model, StatsOptions};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // A small cap reaches the over-the-cap path on small inputs.
    let cap = 512;
    let mut framer = Framer::new(data, cap);
    while let Ok(Some(frame)) = framer.next_frame() {
        match frame {
            Frame::Whole { text, .. } => {
                assert!(text.len() <= data.len());
                if let Ok(emit) = model::parse(text) {
                    let _ = emit.is_statistics();
                }
            }
            Frame::Cut { head, .. } => assert!(head.len() <= data.len()),
        }
    }
    assert!(framer.bytes_read() <= data.len() as u64);
    let opts = StatsOptions { max_object_bytes: 1 << 16, ..StatsOptions::default() };
    let mut csv = Vec::new();
    if let Ok(report) = analyze_stats_with_timeline(data, &opts, Some(&mut csv)) {
        let _ = report.render_text();
        let _ = report.render_svgs();
        let _ = report.unusable_reason();
        serde_json::to_string(&report).expect("the report serializes");
    }
});
