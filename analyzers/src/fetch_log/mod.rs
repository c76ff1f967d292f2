//! `analyze-fetch-log`: where a librdkafka consumer's fetcher slept, and why.
//!
//! With `debug=fetch`, librdkafka logs each partition's fetch decisions and
//! backoffs. The post's Gap 2 in one line: `Fetch backoff for 1000ms: Local: Queue
//! full` — a partition's local queue reached `queued.min.messages`, so librdkafka
//! stopped fetching it for `fetch.queue.backoff.ms`, while the application drained
//! the queue in milliseconds. This module measures, per partition, how much of the
//! window the fetcher spent backed off, and names the knob.
//!
//! ```
//! use kgap_analyzers::fetch_log::{analyze_fetch_log, FetchLogOptions};
//!
//! let log = "\
//! %7|1700000000.000|FETCH|rdkafka#consumer-1| [thrd:k:9092/1]: k:9092/1: Fetch topic t [0] at offset 0 (v2)
//! %7|1700000000.100|BACKOFF|rdkafka#consumer-1| [thrd:k:9092/1]: k:9092/1: t [0]: Fetch backoff for 1000ms: Local: Queue full
//! %7|1700000001.100|FETCH|rdkafka#consumer-1| [thrd:k:9092/1]: k:9092/1: Fetch topic t [0] at offset 100000 (v2)
//! %7|1700000001.200|BACKOFF|rdkafka#consumer-1| [thrd:k:9092/1]: k:9092/1: t [0]: Fetch backoff for 1000ms: Local: Queue full
//! %7|1700000002.200|FETCH|rdkafka#consumer-1| [thrd:k:9092/1]: k:9092/1: Fetch topic t [0] at offset 200000 (v2)
//! ";
//! let report = analyze_fetch_log(log.as_bytes(), &FetchLogOptions::default()).unwrap();
//! let p = &report.partitions[0];
//! assert_eq!((p.topic.as_str(), p.partition, p.queue_full_backoffs), ("t", 0, 2));
//! assert!(p.backoff_fraction.unwrap() > 0.9);
//! assert_eq!(report.diagnoses[0].id, "fetch-queue-backoff");
//! ```

mod analyzer;
pub(crate) mod model;
mod options;
pub(crate) mod reasons;
mod render;

use std::io::{Read, Write};

use crate::engine::input::Source;
use crate::librdkafka::pipeline::{self, Timed};
pub use crate::librdkafka::pipeline::{LogAnalyzer, NoTally, RecordSink, Tally};
use crate::vocab::error::AnalyzeError;

pub use analyzer::{FetchLogAnalyzer, DEFAULT_FETCH_WAIT_MAX_MS, MAX_PARTITIONS};
pub use model::{DecideCounts, FetchLogReport, FetcherStats, PartitionFetch, ReasonCount};
pub use options::FetchLogOptions;

/// Analyse a librdkafka debug log (any wrapper, gzip or plain) for fetch backoffs.
pub fn analyze_fetch_log<R: Read>(
    input: R,
    opts: &FetchLogOptions,
) -> Result<FetchLogReport, AnalyzeError> {
    let mut a = FetchLogAnalyzer::new(opts);
    let summary = a.read(input)?;
    a.finish(summary)
}

/// [`analyze_fetch_log`], also writing a per-second CSV timeline to `timeline`.
pub fn analyze_fetch_log_with_timeline<R: Read, W: Write>(
    input: R,
    opts: &FetchLogOptions,
    timeline: W,
) -> Result<FetchLogReport, AnalyzeError> {
    let mut a = FetchLogAnalyzer::new(opts).with_timeline(timeline);
    let summary = a.read(input)?;
    a.finish(summary)
}

/// [`analyze_fetch_log`] on several cores (what the binary runs). A plain regular file
/// ([`Source::file`]) is read in chunks by the parser threads themselves; any other
/// input by a reading thread beside them. `timeline` receives the per-second CSV when
/// given. `workers`: threads (for a plain file this one among them, for a stream parser
/// threads beside the reading one and this one); `None` = one per core; `Some(0)` =
/// read on this thread only.
pub fn analyze_fetch_log_parallel(
    input: Source<'_>,
    opts: &FetchLogOptions,
    timeline: Option<&mut dyn Write>,
    workers: Option<usize>,
) -> Result<FetchLogReport, AnalyzeError> {
    let mut a = FetchLogAnalyzer::new(opts);
    if let Some(w) = timeline {
        a = a.with_timeline(w);
    }
    let summary = a.read_parallel(input, workers.unwrap_or_else(pipeline::default_workers))?;
    a.finish(summary)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(t: f64, fac: &str, msg: &str) -> String {
        format!("%7|{t:.3}|{fac}|rdkafka#consumer-1| [thrd:k:9092/1]: k:9092/1: {msg}\n")
    }

    #[test]
    fn end_of_partition_backoffs_are_not_failed_fetches() {
        // The shape of confluent-kafka-python#291's paste: a consumer at the head of its
        // partition, librdkafka backing off on "No more messages".
        let mut log = String::new();
        let t0 = 1_515_000_730.0;
        for i in 0..5 {
            let t = t0 + i as f64;
            log += &line(t, "FETCH", "Fetch topic t [2] at offset 17108 (v2)");
            log += &line(
                t + 0.1,
                "BACKOFF",
                "t [2]: Fetch backoff for 500ms: Broker: No more messages",
            );
        }
        let r = analyze_fetch_log(log.as_bytes(), &FetchLogOptions::default()).unwrap();
        let p = &r.partitions[0];
        assert_eq!(p.end_of_partition_backoffs, 5);
        assert_eq!(p.error_backoffs, 0);
        assert!(
            r.diagnoses.iter().all(|d| d.id != "fetch-error-backoff"),
            "{:#?}",
            r.diagnoses
        );
        // A real error still is one.
        let err = log.replace(
            "Broker: No more messages",
            "Broker: Not leader for partition",
        );
        let r = analyze_fetch_log(err.as_bytes(), &FetchLogOptions::default()).unwrap();
        assert!(r.diagnoses.iter().any(|d| d.id == "fetch-error-backoff"));
    }

    #[test]
    fn backoff_cut_short_by_a_fetch_counts_until_the_fetch() {
        let mut log = String::new();
        let t0 = 1_700_000_000.0;
        log += &line(t0, "FETCH", "Fetch topic t [0] at offset 0 (v2)");
        log += &line(
            t0 + 1.0,
            "BACKOFF",
            "t [0]: Fetch backoff for 1000ms: Local: Queue full",
        );
        log += &line(t0 + 1.25, "FETCH", "Fetch topic t [0] at offset 10 (v2)");
        log += &line(t0 + 10.0, "FETCH", "Fetch topic t [0] at offset 20 (v2)");
        let r = analyze_fetch_log(log.as_bytes(), &FetchLogOptions::default()).unwrap();
        let p = &r.partitions[0];
        assert_eq!(p.backoff_ms_total, 250.0);
        assert_eq!(p.backoff_fraction, Some(0.025));
        // 2.5% is under the threshold: a short nap is not a diagnosis.
        assert!(r.diagnoses.is_empty());
    }

    #[test]
    fn overlapping_backoffs_are_counted_once_and_clipped_at_window_end() {
        let mut log = String::new();
        log += &line(0.0 + 1e9, "FETCH", "Fetch topic t [1] at offset 0 (v2)");
        log += &line(
            1.0 + 1e9,
            "BACKOFF",
            "t [1]: Fetch backoff for 1000ms: Local: Queue full",
        );
        log += &line(
            1.5 + 1e9,
            "BACKOFF",
            "t [1]: Fetch backoff for 1000ms: Local: Queue full",
        );
        log += &line(2.0 + 1e9, "FETCH", "Fetch 1/1/1 toppar(s)");
        let r = analyze_fetch_log(log.as_bytes(), &FetchLogOptions::default()).unwrap();
        let p = &r.partitions[0];
        // [1.0,1.5) then [1.5, 2.0] clipped at the last line: 1000 ms of 2 s.
        assert_eq!(p.backoff_ms_total, 1000.0);
        assert_eq!(p.backoff_fraction, Some(0.5));
        assert_eq!(p.backoff_ms_announced, 2000);
        assert_eq!(r.diagnoses[0].id, "fetch-queue-backoff");
        assert!(
            r.diagnoses[0].cause.contains("50% of the window"),
            "{}",
            r.diagnoses[0].cause
        );
    }

    #[test]
    fn decide_reason_names_the_limit_that_was_hit() {
        let mut log = String::new();
        log += &line(1e9, "FETCH", "Topic t [0] in state active at offset 5 (leader epoch 0) (12/100000 msgs, 65600/65536 kb queued, opv 2) is not fetchable: queued.max.messages.kbytes exceeded");
        log += &line(
            1e9,
            "BACKOFF",
            "t [0]: Fetch backoff for 1000ms: Local: Queue full",
        );
        log += &line(1e9 + 2.0, "FETCH", "Topic t [0] in state active at offset 5 (leader epoch 0) (0/100000 msgs, 0/65536 kb queued, opv 2) is fetchable");
        let r = analyze_fetch_log(log.as_bytes(), &FetchLogOptions::default()).unwrap();
        let d = &r.diagnoses[0];
        assert!(
            d.cause.contains("queued.max.messages.kbytes (65536 KiB)"),
            "{}",
            d.cause
        );
        assert!(d.fix.contains("raise queued.max.messages.kbytes"));
        assert_eq!(r.partitions[0].decide.queued_max_kbytes_exceeded, 1);
        assert_eq!(r.partitions[0].decide.fetchable, 1);
    }

    #[test]
    fn without_timestamps_the_fraction_is_null_and_the_diagnosis_says_so() {
        let log = "LOG-7-BACKOFF: [thrd:k:9092/1]: k:9092/1: t [0]: Fetch backoff for 1000ms: Local: Queue full\n";
        let r = analyze_fetch_log(log.as_bytes(), &FetchLogOptions::default()).unwrap();
        assert_eq!(r.timestamps, "none");
        assert_eq!(r.partitions[0].backoff_fraction, None);
        assert_eq!(r.partitions[0].backoff_ms_total, 1000.0);
        assert!(r.diagnoses[0].cause.contains("unknown"));
        assert!(!r.not_computed.is_empty());
    }

    #[test]
    fn empty_fetch_held_to_wait_max_is_counted() {
        let mut log = String::new();
        log += &line(1e9, "FETCH", "Fetch 1/1/1 toppar(s)");
        log += &line(
            1e9 + 0.502,
            "FETCH",
            r#"Topic t [0] MessageSet size 0, error "Success", MaxOffset 1, LSO 1, Ver 2/2"#,
        );
        log += &line(1e9 + 0.503, "FETCH", "Fetch 1/1/1 toppar(s)");
        log += &line(
            1e9 + 0.513,
            "FETCH",
            r#"Topic t [0] MessageSet size 71, error "Success", MaxOffset 2, LSO 2, Ver 2/2"#,
        );
        let r = analyze_fetch_log(log.as_bytes(), &FetchLogOptions::default()).unwrap();
        let f = &r.fetchers[0];
        assert_eq!(
            (
                f.fetch_requests,
                f.responses,
                f.empty_responses,
                f.empty_held_to_wait_max
            ),
            (2, 2, 1, 1)
        );
        // Histograms keep 3 significant digits.
        let max = f.rtt_ms_max.unwrap();
        assert!((max - 502.0).abs() < 0.6, "{max}");
    }

    #[test]
    fn window_options_drop_records_outside() {
        let mut log = String::new();
        log += &line(
            1e9,
            "BACKOFF",
            "t [0]: Fetch backoff for 1000ms: Local: Queue full",
        );
        log += &line(
            1e9 + 5.0,
            "BACKOFF",
            "t [0]: Fetch backoff for 1000ms: Local: Queue full",
        );
        let opts = FetchLogOptions {
            window_start: Some(1e9 + 1.0),
            ..FetchLogOptions::default()
        };
        let r = analyze_fetch_log(log.as_bytes(), &opts).unwrap();
        assert_eq!(r.records_outside_window, 1);
        assert_eq!(r.partitions[0].backoffs, 1);
    }
}
