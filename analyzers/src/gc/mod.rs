//! `analyze-gc-log`: a JVM GC log into pauses, GC time per window, heap after young
//! GC, and diagnoses in the post's terms ("the producer that collapsed at K=16").
//!
//! Formats: JDK 9+ unified logging (`-Xlog:gc` or `-Xlog:gc*`, any decorations) for
//! G1, Parallel, Serial, ZGC (also generational) and Shenandoah; JDK 8
//! `-XX:+PrintGCDetails` for G1, Parallel, CMS and Serial. Input streams through one
//! fixed buffer ([`scan`]): memory stays flat whatever the log's size.
//!
//! ```no_run
//! use kgap_analyzers::gc::{analyze_gc_logs, GcInput, GcLogOptions};
//! use kgap_analyzers::engine::input::Source;
//! let file = std::fs::File::open("gc.log").unwrap();
//! let report = analyze_gc_logs(
//!     vec![GcInput { name: "gc.log".into(), reader: Source::file(file) }],
//!     &GcLogOptions::default(),
//!     None,
//! )
//! .unwrap();
//! for d in &report.diagnoses {
//!     println!("{}: {}", d.id, d.title);
//! }
//! ```

mod analyzer;
mod blocks;
pub(crate) mod event;
pub(crate) mod evidence;
pub mod files;
mod finish;
mod legacy;
mod legacy_event;
mod lines;
mod options;
mod pause_dist;
mod pause_lead;
mod pause_line;
mod pause_numbers;
mod pre_line;
mod preparse;
mod render;
pub(crate) mod report;
mod rounding;
pub(crate) mod scan;
mod series;
mod shipper;
pub mod svg;
mod tally;
mod trend;
pub(crate) mod unified;
mod windows;

use std::io::Write;

use crate::engine::input::{Input, Source};
use crate::vocab::error::AnalyzeError;
pub(crate) use analyzer::Analyzer;
pub use options::{default_threads, GcLogOptions};
pub use report::{
    Count, GcInputSummary, GcReport, HeapTrend, Humongous, PauseStats, PauseTypeStats, Promotion,
    Stalls, WindowSummary,
};
pub use series::Point;
/// One input: a name for messages and what to read (plain or gzip): a plain regular file
/// ([`Source::file`]) is read in chunks by every parser thread, any other stream
/// ([`Source::stream`]) on a thread of its own beside them.
pub struct GcInput<'a> {
    pub name: String,
    pub reader: Source<'a>,
}

/// Analyse one GC log (or several, the rotated files of one JVM, in the order given:
/// see [`files::order_by_first_timestamp`]). `timeline` receives one CSV row per window.
pub fn analyze_gc_logs<'a, 'w>(
    inputs: Vec<GcInput<'a>>,
    opts: &GcLogOptions,
    timeline: Option<Box<dyn Write + 'w>>,
) -> Result<GcReport, AnalyzeError> {
    let with_timeline = timeline.is_some();
    let mut a = Analyzer::new(opts, timeline);
    let ac = scan::anchors();
    for (index, input) in inputs.into_iter().enumerate() {
        a.file = index;
        a.files.push(input.name);
        a.first_line_of_file = true;
        // A plain file: read in chunks by every thread (`None`: by the line scan).
        let threads = opts.threads.unwrap_or(0);
        let reader = match input.reader.chunked(threads) {
            Ok(file) => {
                let s = blocks::drive_file(file, &ac, opts.buffer_bytes, threads, &mut a)
                    .map_err(AnalyzeError::Read)?;
                a.end_of_file(&s);
                continue;
            }
            Err(stream) => stream,
        };
        let input = Input::detect(reader).map_err(AnalyzeError::Read)?;
        let gzip = input.is_gzip();
        let cut = input.gzip_cut();
        a.summary.gzip |= gzip;
        let read = match opts.threads {
            None => scan::scan(input, &ac, opts.buffer_bytes, &mut a),
            Some(workers) => blocks::drive(input, &ac, opts.buffer_bytes, workers, &mut a),
        };
        let s = read.map_err(|source| {
            if gzip {
                AnalyzeError::Gzip {
                    bytes_read: 0,
                    source,
                }
            } else {
                AnalyzeError::Read(source)
            }
        })?;
        a.end_of_file(&s);
        if let Some(c) = cut.get() {
            let w = format!(
                "{}: {}",
                a.files[index],
                crate::engine::input::gzip_cut_warning(&c, s.bytes)
            );
            a.warnings.push(w);
            a.summary.gzip_cut.get_or_insert(c);
        }
    }
    a.finish()?;
    Ok(finish::build(a, with_timeline))
}
