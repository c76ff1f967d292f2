//! analyze-thread-cpu --from on arbitrary bytes (issue 14 §5): a recording (--save's JSON
//! lines, a probe's threads.csv) or a paste of snapshots (top -H, ps -L, pidstat -t, gdb /
//! pstack backtraces, jstack dumps), mixed. A report or an error, never a panic, and the
//! report renders. Seeds: fixtures/threads/*.txt and *.log.
#![no_main]

use kgap_analyzers::thread_cpu::snapshot::{looks_like_paste, PasteOptions};
use kgap_analyzers::thread_cpu::{analyze_from, Analyzer, Options};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = looks_like_paste(&data[..data.len().min(4096)]);
    let analyzer = Analyzer::new(Options { max_buckets: 8, ..Options::default() });
    if let Ok(report) = analyze_from(data, "fuzz", analyzer, 100, &PasteOptions::default()) {
        let _ = report.render_text();
        let _ = report.to_json();
    }
});
