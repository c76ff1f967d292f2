//! analyze-fetch-log's diagnoses: partitions asleep on a full queue
//! (fetch.queue.backoff.ms), and backoffs after fetch errors. What the analyzer gathered
//! (per-partition backoffs and fetch decisions, per-fetcher errors) in; the diagnoses with
//! their thresholds and words out.

use serde_json::json;

use super::rule::{DiagnosisRule, Level, Scope, Threshold};
use crate::fetch_log::model::{FetcherStats, PartitionFetch, ReasonCount};
use crate::fetch_log::reasons::count_reason;
use crate::vocab::report::{round3, Diagnosis, Examples, Window};

const ANALYZER: &str = "analyze-fetch-log";

/// Share of the window a partition must spend backed off on a full queue before
/// `fetch-queue-backoff` is reported.
pub const QUEUE_BACKOFF_FRACTION_THRESHOLD: f64 = 0.05;

/// Partitions asleep on a full local queue for fetch.queue.backoff.ms: the post's Gap 2.
pub const FETCH_QUEUE_BACKOFF: DiagnosisRule = DiagnosisRule {
    id: "fetch-queue-backoff",
    analyzer: ANALYZER,
    level: Level::Problem,
    scope: Scope::KafkaClient,
    rule: "partitions backed off on `Local: Queue full` and spent, on average, at least \
           QUEUE_BACKOFF_FRACTION_THRESHOLD of the window asleep (any such backoff when the \
           log has no timestamps); the limit hit is the one the fetch-decide lines name most",
    thresholds: &[Threshold {
        name: "QUEUE_BACKOFF_FRACTION_THRESHOLD",
        value: QUEUE_BACKOFF_FRACTION_THRESHOLD,
        unit: "share of the window (mean of the partitions backed off)",
        source: "reasoned margin: the post's consumer slept most of its window (1000 ms \
                 naps against milliseconds of draining); a twentieth is already a cost, \
                 less is a short nap",
    }],
};

/// Fetches paused for fetch.error.backoff.ms after errors (end of partition is not one).
pub const FETCH_ERROR_BACKOFF: DiagnosisRule = DiagnosisRule {
    id: "fetch-error-backoff",
    analyzer: ANALYZER,
    level: Level::Problem,
    scope: Scope::KafkaClient,
    rule: "at least one fetch backoff after an error, per partition or broker-wide \
           (`Broker: No more messages`, the end of a partition, is not an error)",
    thresholds: &[],
};

/// analyze-fetch-log's diagnoses.
pub const RULES: &[DiagnosisRule] = &[FETCH_QUEUE_BACKOFF, FETCH_ERROR_BACKOFF];

pub(crate) fn diagnose_queue_backoff(
    out: &mut Vec<Diagnosis>,
    partitions: &[PartitionFetch],
    window: Option<Window>,
    timed: bool,
    ex_backoff: &Examples,
    ex_decide: &Examples,
) {
    let hit: Vec<&PartitionFetch> = partitions
        .iter()
        .filter(|p| p.queue_full_backoffs > 0)
        .collect();
    if hit.is_empty() {
        return;
    }
    let fractions: Vec<f64> = hit.iter().filter_map(|p| p.backoff_fraction).collect();
    let mean =
        (!fractions.is_empty()).then(|| fractions.iter().sum::<f64>() / fractions.len() as f64);
    let max = fractions
        .iter()
        .cloned()
        .fold(None, |m: Option<f64>, f| Some(m.map_or(f, |m| m.max(f))));
    if timed && mean.is_some_and(|m| m < QUEUE_BACKOFF_FRACTION_THRESHOLD) {
        return;
    }
    let backoffs: u64 = hit.iter().map(|p| p.queue_full_backoffs).sum();
    let min_hits: u64 = hit
        .iter()
        .map(|p| p.decide.queued_min_messages_exceeded)
        .sum();
    let kb_hits: u64 = hit
        .iter()
        .map(|p| p.decide.queued_max_kbytes_exceeded)
        .sum();
    let backoff_ms = hit.iter().filter_map(|p| p.queue_backoff_ms).max();
    let queued_min = hit.iter().filter_map(|p| p.queued_min_messages).max();
    let queued_max_kb = hit.iter().filter_map(|p| p.queued_max_kbytes).max();
    let (limit, raise) = if kb_hits > min_hits {
        (
            format!(
                "queued.max.messages.kbytes{}",
                queued_max_kb
                    .map(|k| format!(" ({k} KiB)"))
                    .unwrap_or_default()
            ),
            "queued.max.messages.kbytes",
        )
    } else if min_hits > 0 {
        (
            format!(
                "queued.min.messages{}",
                queued_min
                    .map(|m| format!(" ({m} messages)"))
                    .unwrap_or_default()
            ),
            "queued.min.messages",
        )
    } else {
        (
            "queued.min.messages or queued.max.messages.kbytes".to_string(),
            "queued.min.messages",
        )
    };
    let asleep = match mean {
        Some(m) => format!("{:.0}% of the window", m * 100.0),
        None => format!("{backoffs} times (no timestamps: the share of the window is unknown)"),
    };
    let pause = backoff_ms
        .map(|ms| format!("{ms} ms"))
        .unwrap_or_else(|| "fetch.queue.backoff.ms".to_string());
    let mut per_partition: Vec<serde_json::Value> = hit
        .iter()
        .map(|p| {
            json!({"topic": p.topic, "partition": p.partition, "queue_full_backoffs": p.queue_full_backoffs,
                   "backoff_fraction": p.backoff_fraction, "queued_msgs_max": p.queued_msgs_max})
        })
        .collect();
    per_partition.truncate(20);
    let mut examples = ex_backoff.take(2);
    examples.extend(ex_decide.take(1));
    out.push(FETCH_QUEUE_BACKOFF.emit(
        format!("fetcher asleep {asleep}: local queue full"),
        json!({
            "partitions_backed_off": hit.len(),
            "queue_full_backoffs": backoffs,
            "fetch_queue_backoff_ms": backoff_ms,
            "backoff_fraction_mean": mean.map(round3),
            "backoff_fraction_max": max,
            "window_s": window.map(|w| round3(w.duration_s)),
            "decide_queued_min_messages_exceeded": min_hits,
            "decide_queued_max_kbytes_exceeded": kb_hits,
            "queued_min_messages": queued_min,
            "queued_max_kbytes": queued_max_kb,
            "per_partition": per_partition,
        }),
        format!(
            "the fetcher was asleep {asleep} because the local queue reached {limit}: \
             each time, librdkafka stopped fetching the partition for {pause} \
             (fetch.queue.backoff.ms) while the application drained the queue far sooner"
        ),
        format!(
            "lower fetch.queue.backoff.ms (10) or raise {raise}; if the application \
             thread is the limit after that, consume in batches"
        ),
        examples,
    ));
}

pub(crate) fn diagnose_error_backoff(
    out: &mut Vec<Diagnosis>,
    partitions: &[PartitionFetch],
    fetchers: &[FetcherStats],
    ex: &Examples,
) {
    let part_errors: u64 = partitions.iter().map(|p| p.error_backoffs).sum();
    let broker_errors: u64 = fetchers.iter().map(|f| f.error_backoffs).sum();
    if part_errors + broker_errors == 0 {
        return;
    }
    let mut reasons: Vec<ReasonCount> = Vec::new();
    for f in fetchers {
        for r in &f.error_reasons {
            for _ in 0..r.count.min(1_000_000) {
                count_reason(&mut reasons, &r.reason);
            }
        }
    }
    out.push(
        FETCH_ERROR_BACKOFF.emit(
            format!(
                "{} fetch backoffs after errors",
                part_errors + broker_errors
            ),
            json!({
                "partition_error_backoffs": part_errors,
                "broker_error_backoffs": broker_errors,
                "broker_error_reasons": reasons,
            }),
            "fetches failed and librdkafka paused them for fetch.error.backoff.ms \
                (500 ms by default) each time; the example lines name the error"
                .into(),
            "fix the error the lines name (leadership changes, authorization, an \
              unavailable broker); lowering fetch.error.backoff.ms only retries sooner"
                .into(),
            ex.take(3),
        ),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rules_are_in_the_catalogue() {
        for r in RULES {
            assert_eq!(super::super::rule(r.id, ANALYZER).map(|x| x.id), Some(r.id));
        }
    }

    #[test]
    fn no_backoff_is_no_diagnosis() {
        let mut out = Vec::new();
        diagnose_queue_backoff(
            &mut out,
            &[],
            None,
            true,
            &Examples::default(),
            &Examples::default(),
        );
        diagnose_error_backoff(&mut out, &[], &[], &Examples::default());
        assert!(out.is_empty());
    }
}
