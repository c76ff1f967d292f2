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
           `Timed out N in-flight, … out-queue …` summary, REQERR's `<Api>Request failed: \
           Local: Timed out in queue`, or `N request(s) timed out: disconnect`); a request \
           `possibly held back by` a preceding one is head-of-line blocking",
    thresholds: &[],
};

/// Too little read to tell anything: a few requests at connect, no error.
pub const PROTOCOL_LOG_TOO_SHORT: DiagnosisRule = DiagnosisRule {
    id: "protocol-log-too-short",
    analyzer: ANALYZER,
    level: Level::Refusal,
    scope: Scope::KafkaClient,
    rule: "no other diagnosis, no request timed out and no connection failed in what was \
           read, fewer than MIN_REQUESTS_FOR_DIAGNOSIS requests in all, and no Produce \
           MessageSet or ProduceRequest large enough (over CEILING_MAX_REQUEST_BYTES, more \
           than INFLIGHT_MAX_MESSAGES_PER_REQUEST messages) to rule out the per-request \
           ceiling and in-flight queueing: too little to diagnose",
    thresholds: &[Threshold {
        name: "MIN_REQUESTS_FOR_DIAGNOSIS",
        value: MIN_REQUESTS_FOR_DIAGNOSIS as f64,
        unit: "requests",
        source: "the fewest ProduceRequests the shape diagnoses judge: fewer, of any kind, \
                 show no shape to judge",
    }],
};

/// analyze-protocol-log's diagnoses.
pub const RULES: &[DiagnosisRule] = &[
    PER_REQUEST_CEILING,
    INFLIGHT_QUEUEING,
    REQUEST_TIMEOUTS,
    PROTOCOL_LOG_TOO_SHORT,
];

/// What a read gave beside the diagnoses' own figures: whether it was enough to tell.
pub(crate) struct ReadEvidence<'a> {
    pub lines_read: u64,
    /// Protocol records, error lines about requests and connections, MessageSets: with
    /// none, the report is a refusal already and says why.
    pub records: u64,
    pub requests: &'a [RequestStats],
    pub messages_per_request: Option<&'a MessagesPerRequest>,
    /// Produce MessageSets over CEILING_MAX_REQUEST_BYTES.
    pub large_messagesets: u64,
    /// `Connect to … failed` lines.
    pub connect_failures: u64,
}

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
    let queued = to.summary_out_queue.max(to.request_errors_in_queue);
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
    // The same timeouts can be told by several lines (REQTMOUT, REQERR, the disconnect):
    // the largest count of one kind of line, never their sum.
    let total = to
        .requests_timed_out
        .max(to.summary_in_flight + to.summary_out_queue)
        .max(to.request_errors_timed_out)
        .max(to.disconnect_requests);
    if total == 0 {
        return;
    }
    let disconnected = match to.disconnects {
        0 => String::new(),
        1 => "; librdkafka took the connection down for it".to_string(),
        n => format!("; librdkafka took the connection down for it {n} times"),
    };
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
            "request_errors_timed_out": to.request_errors_timed_out,
            "request_errors_in_queue": to.request_errors_in_queue,
            "disconnects": to.disconnects,
            "disconnect_requests": to.disconnect_requests,
        }),
        format!(
            "{}{}{}{held}{disconnected}",
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

/// Too little read to diagnose: see [`PROTOCOL_LOG_TOO_SHORT`].
pub(crate) fn diagnose_too_little(out: &mut Vec<Diagnosis>, read: &ReadEvidence<'_>) {
    if !out.is_empty() || read.connect_failures > 0 || read.records == 0 {
        return;
    }
    let requests: u64 = read.requests.iter().map(|r| r.count.max(r.responses)).sum();
    if requests >= MIN_REQUESTS_FOR_DIAGNOSIS {
        return;
    }
    // Large requests rule out both produce gaps: the ceiling is of small full batches,
    // the in-flight window's queueing of a message or two per request.
    let many_messages = read
        .messages_per_request
        .is_none_or(|m| m.p50 > INFLIGHT_MAX_MESSAGES_PER_REQUEST);
    let large_sets = read
        .messages_per_request
        .is_some_and(|m| read.large_messagesets * 2 > m.messagesets);
    let large_requests = read
        .requests
        .iter()
        .filter(|r| r.request == "Produce")
        .any(|r| r.bytes_p50.is_some_and(|b| b > CEILING_MAX_REQUEST_BYTES));
    if many_messages && (large_sets || large_requests) {
        return;
    }
    let connections = {
        let mut c: Vec<(&Option<String>, &str)> = read
            .requests
            .iter()
            .map(|r| (&r.client, r.broker.as_str()))
            .collect();
        c.dedup();
        c.len()
    };
    let sets = read.messages_per_request.map_or(0, |m| m.messagesets);
    out.push(
        PROTOCOL_LOG_TOO_SHORT.emit(
            format!(
                "too little to diagnose: {requests} request(s) in {} lines",
                read.lines_read
            ),
            json!({
                "lines_read": read.lines_read,
                "requests": requests,
                "connections": connections,
                "produce_messagesets": sets,
                "min_requests_for_diagnosis": MIN_REQUESTS_FOR_DIAGNOSIS,
            }),
            format!(
                "the log holds {requests} request(s) on {connections} connection(s){}, no \
             timeout and no failed connection: no gap shows, and the per-request ceiling \
             and in-flight queueing need at least {MIN_REQUESTS_FOR_DIAGNOSIS} \
             ProduceRequests on a connection to be judged",
                if sets > 0 {
                    format!(" and {sets} Produce MessageSet(s)")
                } else {
                    String::new()
                }
            ),
            "capture longer, while the client is busy, with debug=protocol (and msg for the \
         messages per request)"
                .into(),
            Vec::new(),
        ),
    );
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

    fn analyze(log: &str) -> crate::protocol_log::ProtocolLogReport {
        let opts = crate::protocol_log::ProtocolLogOptions::default();
        crate::protocol_log::analyze_protocol_log(log.as_bytes(), &opts).unwrap()
    }

    fn ids(log: &str) -> Vec<String> {
        analyze(log).diagnoses.into_iter().map(|d| d.id).collect()
    }

    fn line(t: f64, fac: &str, body: &str) -> String {
        format!("%7|{t:.3}|{fac}|rdkafka#producer-1| [thrd:k:9092/1]: k:9092/1: {body}\n")
    }

    fn requests(n: i32) -> String {
        let mut log = String::new();
        for i in 0..n {
            let t = 1_700_000_000.0 + f64::from(i) * 0.01;
            log += &line(
                t,
                "SEND",
                &format!("Sent MetadataRequest (v4, 40 bytes @ 0, CorrId {i})"),
            );
            log += &line(
                t,
                "RECV",
                &format!("Received MetadataResponse (v4, 400 bytes, CorrId {i}, rtt 0.50ms)"),
            );
        }
        log
    }

    #[test]
    fn a_few_requests_at_connect_are_too_little_to_diagnose() {
        let r = analyze(&requests(2));
        assert!(r.is_usable());
        let d = &r.diagnoses;
        assert_eq!(d.len(), 1, "{d:#?}");
        assert_eq!(d[0].id, PROTOCOL_LOG_TOO_SHORT.id);
        assert!(
            d[0].cause.contains("2 request(s) on 1 connection(s)"),
            "{}",
            d[0].cause
        );
        // Enough requests to show a shape: no gap, and not too little.
        assert!(ids(&requests(100)).is_empty());
    }

    #[test]
    fn a_failed_connect_or_large_messagesets_are_enough_to_say_no_gap() {
        let refused = line(
            1e9,
            "FAIL",
            "Connect to ipv4#127.0.0.1:9092 failed: Connection refused",
        );
        let r = analyze(&refused);
        assert!(
            r.is_usable() && r.diagnoses.is_empty(),
            "{:#?}",
            r.diagnoses
        );
        assert_eq!(r.connect_failures[0].name, "Connection refused");
        // .NET's pipe form of librdkafka#1711: full 1 MB MessageSets of 25639 messages.
        let full = line(1e9, "PRODUCE", "metrics4 [0]: Produce MessageSet with 25639 message(s) (999921 bytes, ApiVersion 2, MsgVersion 1)");
        let r = analyze(&full.repeat(3));
        assert!(
            r.is_usable() && r.diagnoses.is_empty(),
            "{:#?}",
            r.diagnoses
        );
        // Small ones leave the per-request ceiling open: too little.
        let small = full.replace("(999921 bytes", "(1197 bytes");
        assert_eq!(ids(&small.repeat(3)), vec![PROTOCOL_LOG_TOO_SHORT.id]);
    }

    #[test]
    fn a_disconnect_after_timeouts_is_request_timeouts_and_its_echo_counts_once() {
        let fail = "%3|1474038111.837|FAIL|app2#producer-1| queue4:9092/4: 3 request(s) timed out: disconnect\n";
        let log = format!("{fail}{}", fail.replace("|FAIL|", "|ERROR|"));
        let r = analyze(&log);
        assert_eq!(r.timeouts.disconnects, 1);
        let d = &r.diagnoses[0];
        assert_eq!(d.id, REQUEST_TIMEOUTS.id);
        assert!(d.title.starts_with("3 requests timed out"), "{}", d.title);
        assert!(d.cause.contains("took the connection down"), "{}", d.cause);
    }

    #[test]
    fn the_rules_are_in_the_catalogue() {
        for r in RULES {
            assert_eq!(super::super::rule(r.id, ANALYZER).map(|x| x.id), Some(r.id));
        }
    }
}
