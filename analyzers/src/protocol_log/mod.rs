//! `analyze-protocol-log`: what a librdkafka client's requests looked like on the
//! wire, and what bounded them.
//!
//! With `debug=protocol`, librdkafka logs every request it sends and every response
//! it receives, with sizes, CorrIds and round trips. From that alone this module
//! finds the post's Gap 1 (one small ProduceRequest per partition batch at a flat
//! rate: the broker's per-request cost is the ceiling), the in-flight queueing behind
//! the latency gap at `linger.ms=0`, and timeouts with head-of-line blocking.
//!
//! ```
//! use kgap_analyzers::protocol_log::{analyze_protocol_log, ProtocolLogOptions};
//!
//! let log = "\
//! %7|1700000000.000|SEND|rdkafka#producer-1| [thrd:k:9092/1]: k:9092/1: Sent ProduceRequest (v10, 15621 bytes @ 0, CorrId 4)
//! %7|1700000000.001|RECV|rdkafka#producer-1| [thrd:k:9092/1]: k:9092/1: Received ProduceResponse (v10, 62 bytes, CorrId 4, rtt 0.39ms)
//! ";
//! let report = analyze_protocol_log(log.as_bytes(), &ProtocolLogOptions::default()).unwrap();
//! let r = &report.requests[0];
//! assert_eq!((r.request.as_str(), r.count, r.bytes_total), ("Produce", 1, 15621));
//! assert_eq!(r.rtt_ms_max, Some(0.39));
//! ```

mod analyzer;
mod message_sets;
pub(crate) mod model;
mod options;
mod render;
pub(crate) mod slowest;

use std::io::{Read, Write};

use crate::engine::input::Source;
use crate::librdkafka::pipeline::{self, Timed};
pub use crate::librdkafka::pipeline::{LogAnalyzer, NoTally, RecordSink, Tally};
use crate::vocab::error::AnalyzeError;
pub use message_sets::MessageSetTally;

pub use analyzer::ProtocolLogAnalyzer;
pub use model::{
    Bucket, DepthRtt, MessagesPerRequest, NameCount, ProduceShape, ProtocolLogReport,
    TimeoutSummary,
};
pub use options::ProtocolLogOptions;

/// Analyse a librdkafka debug log (any wrapper, gzip or plain) for its requests.
pub fn analyze_protocol_log<R: Read>(
    input: R,
    opts: &ProtocolLogOptions,
) -> Result<ProtocolLogReport, AnalyzeError> {
    let mut a = ProtocolLogAnalyzer::new(opts);
    let summary = a.read(input)?;
    a.finish(summary)
}

/// [`analyze_protocol_log`], also writing a per-second CSV timeline to `timeline`.
pub fn analyze_protocol_log_with_timeline<R: Read, W: Write>(
    input: R,
    opts: &ProtocolLogOptions,
    timeline: W,
) -> Result<ProtocolLogReport, AnalyzeError> {
    let mut a = ProtocolLogAnalyzer::new(opts).with_timeline(timeline);
    let summary = a.read(input)?;
    a.finish(summary)
}

/// [`analyze_protocol_log`] on several cores (what the binary runs). A plain regular file
/// ([`Source::file`]) is read in chunks by the parser threads themselves; any other
/// input by a reading thread beside them. `timeline` receives the per-second CSV when
/// given. `workers`: threads (for a plain file this one among them, for a stream parser
/// threads beside the reading one and this one); `None` = one per core; `Some(0)` =
/// read on this thread only.
pub fn analyze_protocol_log_parallel(
    input: Source<'_>,
    opts: &ProtocolLogOptions,
    timeline: Option<&mut dyn Write>,
    workers: Option<usize>,
) -> Result<ProtocolLogReport, AnalyzeError> {
    let mut a = ProtocolLogAnalyzer::new(opts);
    if let Some(w) = timeline {
        a = a.with_timeline(w);
    }
    let summary = a.read_parallel(input, workers.unwrap_or_else(pipeline::default_workers))?;
    a.finish(summary)
}
