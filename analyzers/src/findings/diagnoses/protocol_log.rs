//! analyze-protocol-log's diagnoses: the per-request ceiling, in-flight queueing, request
//! timeouts. What the analyzer gathered (per-connection request figures, the ProduceRequests'
//! shape, the REQTMOUT lines) in; the diagnoses with their thresholds and words out.

use serde_json::json;

use super::rule::{DiagnosisRule, Level, Scope, Threshold};
use crate::librdkafka::requests::RequestStats;
use crate::protocol_log::model::{MessagesPerRequest, ProduceShape, TimeoutSummary};
use crate::protocol_log::slowest::Slowest;
use crate::vocab::report::{round3, Diagnosis, Examples};

const ANALYZER: &str = "analyze-protocol-log";

/// librdkafka's default `batch.size` (1,000,000 bytes).
pub use crate::findings::each_at_defaults::LIBRDKAFKA_DEFAULT_BATCH_SIZE;
/// Fewest ProduceRequests on a connection before its shape is diagnosed.
pub const MIN_REQUESTS_FOR_DIAGNOSIS: u64 = 100;
/// The per-request ceiling is of requests far below librdkafka's default `batch.size`: a
/// median at most a quarter of it.
pub const CEILING_MAX_REQUEST_BYTES: u64 = LIBRDKAFKA_DEFAULT_BATCH_SIZE / 4;
/// Requests of nearly one size (median at least this share of the 99th percentile) were
/// closed by `batch.size`, not by `linger.ms`: full batches.
pub const FULL_BATCH_P50_OF_P99: f64 = 0.8;
/// Complete seconds of timestamps before a request rate is judged flat or not.
pub const CEILING_MIN_RATE_SECONDS: u64 = 3;
/// A flat rate: σ/mean of the requests per second at most this.
pub const CEILING_FLAT_RATE_MAX_CV: f64 = 0.25;
/// Fewest requests per second for a rate to be a ceiling.
pub const CEILING_MIN_REQUESTS_PER_S: f64 = 1000.0;
/// Without a measured rate, fewest full requests for the ceiling on sizes alone.
pub const CEILING_MIN_REQUESTS_UNTIMED: u64 = 1000;
/// In-flight queueing is a window of *small* requests queueing behind each other: at most
/// this many messages per ProduceRequest (the post: "a message or two").
pub const INFLIGHT_MAX_MESSAGES_PER_REQUEST: u64 = 4;
/// Without debug=msg lines (messages per request unknown), requests count as small at
/// most this size and when they are not full batches (p50 below 0.8 × p99).
pub const INFLIGHT_MAX_REQUEST_BYTES: u64 = 4096;
/// More requests in flight than this on average when one is sent: deeper than the window
/// the fix sets (max.in.flight.requests.per.connection ≈ 5).
pub const INFLIGHT_MIN_DEPTH_MEAN: f64 = 5.0;
/// Fewest requests per second for requests to queue behind each other.
pub const INFLIGHT_MIN_REQUESTS_PER_S: f64 = 500.0;
/// Fewest responses in an in-flight depth bucket before its rtt median counts.
pub const INFLIGHT_MIN_BUCKET_RESPONSES: u64 = 20;
/// rtt growing with depth: their correlation at least this, …
pub const INFLIGHT_MIN_RTT_DEPTH_CORRELATION: f64 = 0.3;
/// … or the rtt median above 5 in flight at least this multiple of the one at ≤ 5.
pub const INFLIGHT_MIN_RTT_GROWTH: f64 = 2.0;

/// Small full ProduceRequests at a flat rate: the broker's cost per request is the ceiling.
pub const PER_REQUEST_CEILING: DiagnosisRule = DiagnosisRule {
    id: "per-request-ceiling",
    analyzer: ANALYZER,
    level: Level::Problem,
    scope: Scope::KafkaClient,
    rule: "a connection's ProduceRequests (≥ MIN_REQUESTS_FOR_DIAGNOSIS) are far smaller than \
           librdkafka's default batch.size (p50 ≤ CEILING_MAX_REQUEST_BYTES), full (p50 ≥ \
           FULL_BATCH_P50_OF_P99 × p99) and sent at a flat rate (σ/mean ≤ \
           CEILING_FLAT_RATE_MAX_CV over ≥ CEILING_MIN_RATE_SECONDS complete seconds, ≥ \
           CEILING_MIN_REQUESTS_PER_S requests/s); without such a rate, ≥ \
           CEILING_MIN_REQUESTS_UNTIMED full requests, the rate said to be unknown",
    thresholds: &[
        Threshold {
            name: "MIN_REQUESTS_FOR_DIAGNOSIS",
            value: MIN_REQUESTS_FOR_DIAGNOSIS as f64,
            unit: "ProduceRequests",
            source: "reasoned margin: fewer requests give no shape to judge",
        },
        Threshold {
            name: "CEILING_MAX_REQUEST_BYTES",
            value: CEILING_MAX_REQUEST_BYTES as f64,
            unit: "bytes (request p50)",
            source: "a quarter of librdkafka's default batch.size (1000000): the post's \
                     requests were 16 KB batches, far below it",
        },
        Threshold {
            name: "FULL_BATCH_P50_OF_P99",
            value: FULL_BATCH_P50_OF_P99,
            unit: "share of the request p99",
            source: "reasoned margin: batches closed by batch.size are of one size, those \
                     closed by linger.ms vary",
        },
        Threshold {
            name: "CEILING_MIN_RATE_SECONDS",
            value: CEILING_MIN_RATE_SECONDS as f64,
            unit: "complete seconds",
            source: "reasoned margin: fewer seconds say little about flatness",
        },
        Threshold {
            name: "CEILING_FLAT_RATE_MAX_CV",
            value: CEILING_FLAT_RATE_MAX_CV,
            unit: "σ/mean of requests per second",
            source: "reasoned margin: the post's ceiling was a flat ~15.4k requests/s",
        },
        Threshold {
            name: "CEILING_MIN_REQUESTS_PER_S",
            value: CEILING_MIN_REQUESTS_PER_S,
            unit: "requests/s",
            source: "reasoned margin, far under the post's ~15.4k requests/s: a slower \
                     steady producer is bound by its input, not the broker",
        },
        Threshold {
            name: "CEILING_MIN_REQUESTS_UNTIMED",
            value: CEILING_MIN_REQUESTS_UNTIMED as f64,
            unit: "ProduceRequests",
            source: "reasoned margin: many full requests without a rate to judge",
        },
    ],
};

/// Tiny requests, a deep in-flight window and rtt growing with depth.
pub const INFLIGHT_QUEUEING: DiagnosisRule = DiagnosisRule {
    id: "inflight-queueing",
    analyzer: ANALYZER,
    level: Level::Problem,
    scope: Scope::KafkaClient,
    rule: "a connection's ProduceRequests (≥ MIN_REQUESTS_FOR_DIAGNOSIS) are small (p50 ≤ \
           INFLIGHT_MAX_MESSAGES_PER_REQUEST messages, or without debug=msg ≤ \
           INFLIGHT_MAX_REQUEST_BYTES bytes and not full batches), more than \
           INFLIGHT_MIN_DEPTH_MEAN were in flight on average at send, at ≥ \
           INFLIGHT_MIN_REQUESTS_PER_S requests/s when timed, and rtt grows with depth \
           (correlation ≥ INFLIGHT_MIN_RTT_DEPTH_CORRELATION, or the rtt p50 above 5 in \
           flight ≥ INFLIGHT_MIN_RTT_GROWTH × the one at ≤ 5, buckets of ≥ \
           INFLIGHT_MIN_BUCKET_RESPONSES responses)",
    thresholds: &[
        Threshold {
            name: "MIN_REQUESTS_FOR_DIAGNOSIS",
            value: MIN_REQUESTS_FOR_DIAGNOSIS as f64,
            unit: "ProduceRequests",
            source: "reasoned margin: fewer requests give no shape to judge",
        },
        Threshold {
            name: "INFLIGHT_MAX_MESSAGES_PER_REQUEST",
            value: INFLIGHT_MAX_MESSAGES_PER_REQUEST as f64,
            unit: "messages per ProduceRequest (p50)",
            source: "the post: at linger.ms=0 a request goes out with \"a message or two\"",
        },
        Threshold {
            name: "INFLIGHT_MAX_REQUEST_BYTES",
            value: INFLIGHT_MAX_REQUEST_BYTES as f64,
            unit: "bytes (request p50)",
            source: "reasoned margin: a few small messages per request",
        },
        Threshold {
            name: "INFLIGHT_MIN_DEPTH_MEAN",
            value: INFLIGHT_MIN_DEPTH_MEAN,
            unit: "requests in flight at send (mean)",
            source: "the post's fix: max.in.flight.requests.per.connection ≈ 5",
        },
        Threshold {
            name: "INFLIGHT_MIN_REQUESTS_PER_S",
            value: INFLIGHT_MIN_REQUESTS_PER_S,
            unit: "requests/s",
            source: "reasoned margin: slower requests do not queue behind each other",
        },
        Threshold {
            name: "INFLIGHT_MIN_BUCKET_RESPONSES",
            value: INFLIGHT_MIN_BUCKET_RESPONSES as f64,
            unit: "responses per depth bucket",
            source: "reasoned margin: a median of fewer is noise",
        },
        Threshold {
            name: "INFLIGHT_MIN_RTT_DEPTH_CORRELATION",
            value: INFLIGHT_MIN_RTT_DEPTH_CORRELATION,
            unit: "Pearson correlation of depth and rtt",
            source: "reasoned margin: a weak but real growth of rtt with depth",
        },
        Threshold {
            name: "INFLIGHT_MIN_RTT_GROWTH",
            value: INFLIGHT_MIN_RTT_GROWTH,
            unit: "rtt p50 deep / shallow",
            source: "reasoned margin; the post's p50 went 0.47 → 14.1 ms with the window",
        },
    ],
};

/// Requests librdkafka timed out (REQTMOUT), with what held them back.
pub const REQUEST_TIMEOUTS: DiagnosisRule = DiagnosisRule {
    id: "request-timeouts",
    analyzer: ANALYZER,
    level: Level::Problem,
    scope: Scope::KafkaClient,
    rule: "librdkafka timed out at least one request (`Timed out <Api>Request …` or the \
           `Timed out N in-flight, … out-queue …` summary); a request `possibly held back \
           by` a preceding one is head-of-line blocking",
    thresholds: &[],
};

/// analyze-protocol-log's diagnoses.
pub const RULES: &[DiagnosisRule] = &[PER_REQUEST_CEILING, INFLIGHT_QUEUEING, REQUEST_TIMEOUTS];

fn produce_stats<'a>(
    requests: &'a [RequestStats],
    shape: &ProduceShape,
) -> Option<&'a RequestStats> {
    requests
        .iter()
        .find(|r| r.request == "Produce" && r.broker == shape.broker && r.client == shape.client)
}

pub(crate) fn diagnose_ceiling(
    out: &mut Vec<Diagnosis>,
    requests: &[RequestStats],
    produce: &[ProduceShape],
    mpr: Option<&MessagesPerRequest>,
    ex_sent: &Examples,
    ex_recv: &Examples,
) {
    for shape in produce {
        let Some(r) = produce_stats(requests, shape) else {
            continue;
        };
        let (Some(p50), Some(p99)) = (r.bytes_p50, r.bytes_p99) else {
            continue;
        };
        if r.count < MIN_REQUESTS_FOR_DIAGNOSIS || p50 > CEILING_MAX_REQUEST_BYTES {
            continue;
        }
        // Requests of nearly one size were closed by batch.size, not by linger.ms:
        // the producer had more data than one request could carry.
        let full = p50 as f64 >= FULL_BATCH_P50_OF_P99 * p99 as f64;
        if !full {
            continue;
        }
        // A rate over fewer than 3 complete seconds says little about flatness; then
        // (as without timestamps) only a large number of full requests counts.
        let rate = r.rate.as_ref();
        let measured = rate.filter(|s| s.seconds >= CEILING_MIN_RATE_SECONDS);
        match measured {
            Some(s) => {
                let flat = s.cv.is_some_and(|cv| cv <= CEILING_FLAT_RATE_MAX_CV);
                if !flat || s.per_s_mean < CEILING_MIN_REQUESTS_PER_S {
                    continue;
                }
            }
            None if r.count < CEILING_MIN_REQUESTS_UNTIMED => continue,
            None => {}
        }
        let who = format!(
            "{}{}",
            r.broker,
            r.client
                .as_deref()
                .map(|c| format!(" ({c})"))
                .unwrap_or_default()
        );
        let (headline, us) = match rate {
            Some(s) => {
                let us = 1e6 / s.per_s_mean;
                let short = if measured.is_none() {
                    let plural = if s.seconds == 1 { "" } else { "s" };
                    format!(" (over only {} complete second{plural})", s.seconds)
                } else {
                    String::new()
                };
                (
                    format!(
                        "{:.0} req/s of {} bytes ≈ {:.0} µs per request{short}",
                        s.per_s_mean, p50, us
                    ),
                    Some(round3(us)),
                )
            }
            None => (
                format!(
                    "{} requests of {} bytes (no timestamps: the rate and µs per request \
                     are unknown)",
                    r.count, p50
                ),
                None,
            ),
        };
        let mut examples = ex_sent.take(2);
        examples.extend(ex_recv.take(1));
        out.push(
            PER_REQUEST_CEILING.emit(
                format!("per-request ceiling on {who}: {headline}"),
                json!({
                    "client": r.client,
                    "broker": r.broker,
                    "produce_requests": r.count,
                    "bytes_p50": p50,
                    "bytes_p99": p99,
                    "requests_per_s_mean": rate.map(|s| s.per_s_mean),
                    "requests_per_s_cv": rate.and_then(|s| s.cv),
                    "seconds_measured": rate.map(|s| s.seconds),
                    "us_per_request": us,
                    "rtt_ms_p50": r.rtt_ms_p50,
                    "messages_per_request_p50": mpr.map(|m| m.p50),
                    "librdkafka_default_batch_size": LIBRDKAFKA_DEFAULT_BATCH_SIZE,
                }),
                format!(
                    "bound by the broker's per-request cost: {headline}. librdkafka sends one \
                 partition's batch per ProduceRequest, the batches are full (p50 {p50} B ≈ \
                 p99 {p99} B, far below librdkafka's default batch.size of 1 MB) and the \
                 broker handles a connection's requests one at a time, so the request rate \
                 is the ceiling"
                ),
                "raise batch.size (librdkafka's default is 1000000) and linger.ms so each \
                  request carries more bytes"
                    .into(),
                examples,
            ),
        );
    }
}

/// Whether a connection's ProduceRequests are small: a message or a few each (from the
/// debug=msg MessageSet lines), or, without them, small and not full batches. Full batches
/// queueing are the per-request ceiling's signature, not the in-flight window's.
fn small_requests(r: &RequestStats, mpr: Option<&MessagesPerRequest>) -> bool {
    match (mpr, r.bytes_p50, r.bytes_p99) {
        (Some(m), _, _) => m.p50 <= INFLIGHT_MAX_MESSAGES_PER_REQUEST,
        (None, Some(p50), Some(p99)) => {
            p50 <= INFLIGHT_MAX_REQUEST_BYTES && (p50 as f64) < FULL_BATCH_P50_OF_P99 * p99 as f64
        }
        _ => false,
    }
}

pub(crate) fn diagnose_inflight(
    out: &mut Vec<Diagnosis>,
    requests: &[RequestStats],
    produce: &[ProduceShape],
    mpr: Option<&MessagesPerRequest>,
    slowest: &Slowest,
) {
    for shape in produce {
        let Some(r) = produce_stats(requests, shape) else {
            continue;
        };
        let (Some(p50), Some(depth)) = (r.bytes_p50, shape.inflight_at_send_mean) else {
            continue;
        };
        if r.count < MIN_REQUESTS_FOR_DIAGNOSIS
            || depth <= INFLIGHT_MIN_DEPTH_MEAN
            || !small_requests(r, mpr)
        {
            continue;
        }
        if r.rate
            .as_ref()
            .is_some_and(|s| s.per_s_mean < INFLIGHT_MIN_REQUESTS_PER_S)
        {
            continue;
        }
        let shallow = shape.rtt_by_inflight[..2]
            .iter()
            .filter(|b| b.count >= INFLIGHT_MIN_BUCKET_RESPONSES)
            .filter_map(|b| b.rtt_ms_p50)
            .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.min(v))));
        let deep = shape.rtt_by_inflight[2..]
            .iter()
            .filter(|b| b.count >= INFLIGHT_MIN_BUCKET_RESPONSES)
            .filter_map(|b| b.rtt_ms_p50)
            .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))));
        let ratio = match (shallow, deep) {
            (Some(s), Some(d)) if s > 0.0 => Some(d / s),
            _ => None,
        };
        let corr = shape.rtt_depth_correlation;
        let growing = corr.is_some_and(|c| c >= INFLIGHT_MIN_RTT_DEPTH_CORRELATION)
            || ratio.is_some_and(|q| q >= INFLIGHT_MIN_RTT_GROWTH);
        if !growing {
            continue;
        }
        let rate = r
            .rate
            .as_ref()
            .map(|s| format!("{:.0} req/s", s.per_s_mean))
            .unwrap_or_else(|| format!("{} requests", r.count));
        let growth = match (shallow, deep) {
            (Some(s), Some(d)) => format!("rtt p50 {s:.2} ms at ≤5 in flight vs {d:.2} ms above"),
            _ => format!("rtt/depth correlation {:.2}", corr.unwrap_or(0.0)),
        };
        out.push(
            INFLIGHT_QUEUEING.emit(
                format!(
                    "in-flight queueing on {}: {depth:.1} requests in flight on average",
                    r.broker
                ),
                json!({
                    "client": r.client,
                    "broker": r.broker,
                    "produce_requests": r.count,
                    "bytes_p50": p50,
                    "requests_per_s_mean": r.rate.as_ref().map(|s| s.per_s_mean),
                    "inflight_at_send_mean": depth,
                    "rtt_ms_p50_shallow": shallow,
                    "rtt_ms_p50_deep": deep,
                    "rtt_depth_correlation": corr,
                    "rtt_ms_p50": r.rtt_ms_p50,
                    "rtt_ms_p99": r.rtt_ms_p99,
                    "rtt_by_inflight": shape.rtt_by_inflight,
                    "messages_per_request_p50": mpr.map(|m| m.p50),
                }),
                format!(
                    "tiny requests ({p50} B p50) at {rate} with {depth:.1} in flight on average \
                 and {growth}: with librdkafka's default window (1000000) a request goes out \
                 as soon as a message or two is ready, and the broker serves a connection's \
                 requests one at a time, so they queue behind each other"
                ),
                "set max.in.flight.requests.per.connection ≈ 5: messages then wait for a \
                  free slot and coalesce into fewer, larger requests (throughput unchanged, \
                  latency down)"
                    .into(),
                slowest.take(),
            ),
        );
    }
}

/// Sent requests that got no answer, told apart from those that timed out in the out-queue
/// (librdkafka's "N in-flight, M out-queue" summary): the second were never sent.
fn what_timed_out(to: &TimeoutSummary, total: u64) -> String {
    let queued = to.summary_out_queue;
    if queued == 0 {
        return format!("{total} requests got no response within their timeout");
    }
    let sent = total.saturating_sub(queued);
    format!(
        "{}{queued} request(s) timed out in the out-queue before they were sent (the \
         connection could not take them: not up, or its in-flight window full)",
        if sent > 0 {
            format!("{sent} sent request(s) got no response within their timeout, and ")
        } else {
            String::new()
        }
    )
}

pub(crate) fn diagnose_timeouts(out: &mut Vec<Diagnosis>, to: &TimeoutSummary, ex: &Examples) {
    let total = to
        .requests_timed_out
        .max(to.summary_in_flight + to.summary_out_queue);
    if total == 0 {
        return;
    }
    let held = if to.held_back > 0 {
        let by: Vec<String> = to
            .held_back_by
            .iter()
            .map(|n| format!("{}Request ×{}", n.name, n.count))
            .collect();
        format!(
            "; {} were possibly held back by a preceding {} on the same connection \
             (head-of-line blocking)",
            to.held_back,
            by.join(", ")
        )
    } else {
        String::new()
    };
    let by: Vec<String> = to
        .by_request
        .iter()
        .map(|n| format!("{} ×{}", n.name, n.count))
        .collect();
    out.push(REQUEST_TIMEOUTS.emit(
        format!("{total} requests timed out"),
        json!({
            "requests_timed_out": to.requests_timed_out,
            "by_request": to.by_request,
            "after_ms_max": to.after_ms_max,
            "held_back": to.held_back,
            "held_back_by": to.held_back_by,
            "summary_in_flight": to.summary_in_flight,
            "summary_out_queue": to.summary_out_queue,
        }),
        format!(
            "{}{}{}{held}",
            what_timed_out(to, total),
            if by.is_empty() {
                String::new()
            } else {
                format!(" ({})", by.join(", "))
            },
            to.after_ms_max
                .map(|ms| format!(", the longest after {ms} ms"))
                .unwrap_or_default()
        ),
        if to.held_back > 0 {
            "a long-blocking request occupies the connection ahead of the others: find why \
             it blocks (group rebalance, an overloaded broker); if many small requests \
             queue behind a deep in-flight window, set \
             max.in.flight.requests.per.connection ≈ 5"
                .into()
        } else {
            "the broker or the network did not answer in time: check the broker's request \
             latency and the connection; if requests queue behind a deep in-flight window, \
             set max.in.flight.requests.per.connection ≈ 5; raise request.timeout.ms only \
             for a broker known to be slow"
                .into()
        },
        ex.take(3),
    ));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn timed_out(to: &TimeoutSummary) -> Vec<Diagnosis> {
        let mut out = Vec::new();
        diagnose_timeouts(&mut out, to, &Examples::default());
        out
    }

    #[test]
    fn no_request_timed_out_is_no_diagnosis() {
        assert!(timed_out(&TimeoutSummary::default()).is_empty());
    }

    #[test]
    fn requests_that_timed_out_in_the_out_queue_were_never_sent() {
        // librdkafka#3564's REQTMOUT summary: 0 in-flight, 1 out-queue.
        let queued = TimeoutSummary {
            summary_out_queue: 1,
            ..TimeoutSummary::default()
        };
        let d = timed_out(&queued);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].id, REQUEST_TIMEOUTS.id);
        assert!(
            d[0].cause.contains("before they were sent"),
            "{}",
            d[0].cause
        );
        assert!(!d[0].cause.contains("got no response"), "{}", d[0].cause);
        let sent = TimeoutSummary {
            summary_in_flight: 3,
            ..TimeoutSummary::default()
        };
        let d = timed_out(&sent);
        assert!(d[0].cause.contains("got no response"), "{}", d[0].cause);
        assert!(
            !d[0].cause.contains("before they were sent"),
            "{}",
            d[0].cause
        );
    }

    #[test]
    fn the_rules_are_in_the_catalogue() {
        for r in RULES {
            assert_eq!(super::super::rule(r.id, ANALYZER).map(|x| x.id), Some(r.id));
        }
    }
}
