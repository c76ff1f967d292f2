//! The protocol gaps: the per-request ceiling, in-flight queueing, request timeouts.

use serde_json::json;

use super::model::{MessagesPerRequest, ProduceShape, TimeoutSummary};
use super::slowest::Slowest;
use super::thresholds::{
    INFLIGHT_MAX_MESSAGES_PER_REQUEST, INFLIGHT_MAX_REQUEST_BYTES, LIBRDKAFKA_DEFAULT_BATCH_SIZE,
    MIN_REQUESTS_FOR_DIAGNOSIS,
};
use crate::librdkafka::requests::RequestStats;
use crate::vocab::report::{round3, Diagnosis, Examples};

pub(super) fn produce_stats<'a>(
    requests: &'a [RequestStats],
    shape: &ProduceShape,
) -> Option<&'a RequestStats> {
    requests
        .iter()
        .find(|r| r.request == "Produce" && r.broker == shape.broker && r.client == shape.client)
}

pub(super) fn diagnose_ceiling(
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
        if r.count < MIN_REQUESTS_FOR_DIAGNOSIS || p50 > LIBRDKAFKA_DEFAULT_BATCH_SIZE / 4 {
            continue;
        }
        // Requests of nearly one size were closed by batch.size, not by linger.ms:
        // the producer had more data than one request could carry.
        let full = p50 as f64 >= 0.8 * p99 as f64;
        if !full {
            continue;
        }
        // A rate over fewer than 3 complete seconds says little about flatness; then
        // (as without timestamps) only a large number of full requests counts.
        let rate = r.rate.as_ref();
        let measured = rate.filter(|s| s.seconds >= 3);
        match measured {
            Some(s) => {
                let flat = s.cv.is_some_and(|cv| cv <= 0.25);
                if !flat || s.per_s_mean < 1000.0 {
                    continue;
                }
            }
            None if r.count < 1000 => continue,
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
        out.push(Diagnosis {
            id: "per-request-ceiling".into(),
            title: format!("per-request ceiling on {who}: {headline}"),
            evidence: json!({
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
            cause: format!(
                "bound by the broker's per-request cost: {headline}. librdkafka sends one \
                 partition's batch per ProduceRequest, the batches are full (p50 {p50} B ≈ \
                 p99 {p99} B, far below librdkafka's default batch.size of 1 MB) and the \
                 broker handles a connection's requests one at a time, so the request rate \
                 is the ceiling"
            ),
            fix: "raise batch.size (librdkafka's default is 1000000) and linger.ms so each \
                  request carries more bytes"
                .into(),
            examples,
        });
    }
}

/// Whether a connection's ProduceRequests are small: a message or a few each (from the
/// debug=msg MessageSet lines), or, without them, small and not full batches. Full batches
/// queueing are the per-request ceiling's signature, not the in-flight window's.
pub(super) fn small_requests(r: &RequestStats, mpr: Option<&MessagesPerRequest>) -> bool {
    match (mpr, r.bytes_p50, r.bytes_p99) {
        (Some(m), _, _) => m.p50 <= INFLIGHT_MAX_MESSAGES_PER_REQUEST,
        (None, Some(p50), Some(p99)) => {
            p50 <= INFLIGHT_MAX_REQUEST_BYTES && (p50 as f64) < 0.8 * p99 as f64
        }
        _ => false,
    }
}

pub(super) fn diagnose_inflight(
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
        if r.count < MIN_REQUESTS_FOR_DIAGNOSIS || depth <= 5.0 || !small_requests(r, mpr) {
            continue;
        }
        if r.rate.as_ref().is_some_and(|s| s.per_s_mean < 500.0) {
            continue;
        }
        let shallow = shape.rtt_by_inflight[..2]
            .iter()
            .filter(|b| b.count >= 20)
            .filter_map(|b| b.rtt_ms_p50)
            .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.min(v))));
        let deep = shape.rtt_by_inflight[2..]
            .iter()
            .filter(|b| b.count >= 20)
            .filter_map(|b| b.rtt_ms_p50)
            .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))));
        let ratio = match (shallow, deep) {
            (Some(s), Some(d)) if s > 0.0 => Some(d / s),
            _ => None,
        };
        let corr = shape.rtt_depth_correlation;
        let growing = corr.is_some_and(|c| c >= 0.3) || ratio.is_some_and(|q| q >= 2.0);
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
        out.push(Diagnosis {
            id: "inflight-queueing".into(),
            title: format!(
                "in-flight queueing on {}: {depth:.1} requests in flight on average",
                r.broker
            ),
            evidence: json!({
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
            cause: format!(
                "tiny requests ({p50} B p50) at {rate} with {depth:.1} in flight on average \
                 and {growth}: with librdkafka's default window (1000000) a request goes out \
                 as soon as a message or two is ready, and the broker serves a connection's \
                 requests one at a time, so they queue behind each other"
            ),
            fix: "set max.in.flight.requests.per.connection ≈ 5: messages then wait for a \
                  free slot and coalesce into fewer, larger requests (throughput unchanged, \
                  latency down)"
                .into(),
            examples: slowest.take(),
        });
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

pub(super) fn diagnose_timeouts(out: &mut Vec<Diagnosis>, to: &TimeoutSummary, ex: &Examples) {
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
    out.push(Diagnosis {
        id: "request-timeouts".into(),
        title: format!("{total} requests timed out"),
        evidence: json!({
            "requests_timed_out": to.requests_timed_out,
            "by_request": to.by_request,
            "after_ms_max": to.after_ms_max,
            "held_back": to.held_back,
            "held_back_by": to.held_back_by,
            "summary_in_flight": to.summary_in_flight,
            "summary_out_queue": to.summary_out_queue,
        }),
        cause: format!(
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
        fix: if to.held_back > 0 {
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
        examples: ex.take(3),
    });
}
