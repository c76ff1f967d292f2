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
mod diagnose;
mod message_sets;
mod model;
mod options;
mod render;
mod slowest;
mod thresholds;

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
pub use thresholds::{
    INFLIGHT_MAX_MESSAGES_PER_REQUEST, INFLIGHT_MAX_REQUEST_BYTES, LIBRDKAFKA_DEFAULT_BATCH_SIZE,
    MIN_REQUESTS_FOR_DIAGNOSIS,
};

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

#[cfg(test)]
mod tests {
    use super::*;

    fn timed_out(summary: &str) -> String {
        // librdkafka's REQTMOUT summary, as librdkafka#3564's paste shows it (unwrapped).
        let line = format!(
            "%4|1632416490.525|REQTMOUT|rdkafka#producer-1| [thrd:k:9092/1003]: k:9092/1003: \
             {summary}\n"
        );
        let r = analyze_protocol_log(line.as_bytes(), &ProtocolLogOptions::default()).unwrap();
        let d = r
            .diagnoses
            .iter()
            .find(|d| d.id == "request-timeouts")
            .expect("request-timeouts");
        d.cause.clone()
    }

    #[test]
    fn requests_that_timed_out_in_the_out_queue_were_never_sent() {
        let queued = timed_out(
            "Timed out 0 in-flight, 0 retry-queued, 1 out-queue, 1 partially-sent requests",
        );
        assert!(queued.contains("before they were sent"), "{queued}");
        assert!(!queued.contains("got no response"), "{queued}");
        let sent = timed_out(
            "Timed out 3 in-flight, 0 retry-queued, 0 out-queue, 0 partially-sent requests",
        );
        assert!(sent.contains("got no response"), "{sent}");
        assert!(!sent.contains("before they were sent"), "{sent}");
    }
}
