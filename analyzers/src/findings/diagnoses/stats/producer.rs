//! The producer's diagnoses: the broker's cost per request as the ceiling, requests
//! queueing in flight, the producer queue filling, and latency bound by linger.ms.

use serde_json::{json, Value};

use super::context::{med, summ, Context};
use super::entries::{
    INFLIGHT_QUEUEING, LINGER_BOUND_LATENCY, PER_REQUEST_CEILING, PRODUCER_BACKLOG,
};
use super::held::fired;
use super::observe::Diagnoser;
use crate::stats::report::StatsDiagnosis;
use crate::stats::stat::round_sig;

impl Diagnoser {
    /// per-request-ceiling: a connection at the broker's cost per ProduceRequest while
    /// messages wait.
    pub(super) fn per_request_ceiling(&self, cx: &Context<'_>, out: &mut Vec<StatsDiagnosis>) {
        let t = cx.t;
        let acc = cx.acc;
        let (hits, held) = fired(&self.ceiling, |h| h.held.by_share(t));
        if !hits.is_empty() {
            let per_broker: Vec<Value> = hits
                .iter()
                .map(|(i, h)| {
                    json!({
                        "broker": cx.broker(*i),
                        "intervals_held": h.held.held,
                        "intervals_considered": h.held.considered,
                        "produce_requests_per_s": summ(&h.a),
                        "bytes_per_produce_request": summ(&h.b),
                        "int_latency_p50_ms": summ(&h.c),
                    })
                })
                .collect();
            // One connection's rate: the broker serves each connection one request at a
            // time, so the sum over brokers is not anyone's cost per request.
            let (bi, busiest) = hits
                .iter()
                .max_by(|a, b| {
                    a.1.a
                        .median()
                        .unwrap_or(0.0)
                        .total_cmp(&b.1.a.median().unwrap_or(0.0))
                })
                .map(|(i, h)| (*i, *h))
                .expect("hits is not empty");
            let rate = busiest.a.median().unwrap_or(0.0);
            let all_rate = hits
                .iter()
                .map(|(_, h)| h.a.median().unwrap_or(0.0))
                .sum::<f64>();
            let bytes = busiest.b.median().unwrap_or(0.0);
            let rate_cv = acc.total_produce_cv();
            let on = if hits.len() > 1 {
                format!(
                    " on {} (the busiest of {} connections at the ceiling, {:.0}/s together)",
                    cx.broker(bi),
                    hits.len(),
                    all_rate
                )
            } else {
                // One connection: the rate is its own (and the title as it always was).
                String::new()
            };
            let mut d = cx.base(
                &PER_REQUEST_CEILING,
                format!(
                    "bound by the broker's cost per request: {:.0} ProduceRequests/s of {:.0} B{on} \
                     while messages wait",
                    rate, bytes
                ),
                &held,
            );
            d.brokers = cx.brokers(&hits);
            let batch = acc.batch_bytes_p50();
            d.evidence = json!({
                "produce_requests_per_s_p50": round_sig(rate),
                "bytes_per_produce_request_p50": round_sig(bytes),
                "us_per_request_at_this_rate": if rate > 0.0 { round_sig(1e6 / rate) } else { 0.0 },
                "batches_per_produce_request_p50": med(&self.ceiling_batches),
                "batch_bytes_p50": batch.map(round_sig),
                "batch_size": cx.setting(cx.config.batch_size),
                "batch_fill_of_batch_size": batch.map(|b| round_sig(b / cx.config.batch_size.value)),
                "produce_request_rate_cv": rate_cv.map(round_sig),
                "int_latency_p50_ms_trend_per_s": acc.int_latency_trend().map(round_sig),
                "queue_share_p50": med(&hits[0].1.d),
                "per_broker": per_broker,
            });
            if hits.len() > 1 {
                if let Some(o) = d.evidence.as_object_mut() {
                    o.insert("busiest_broker".into(), cx.broker(bi).into());
                    o.insert(
                        "produce_requests_per_s_all_brokers".into(),
                        round_sig(all_rate).into(),
                    );
                }
            }
            let full = batch.is_some_and(|b| b >= t.full_batch_share * cx.config.batch_size.value);
            d.cause = format!(
                "Each ProduceRequest carries one partition's batch ({} per request here) and \
                 the broker serves a connection's requests one at a time, so at this request \
                 rate its fixed cost per request is the ceiling; messages queue in the client \
                 meanwhile (int_latency). {} The post: ~15,400 requests/s of 15.6 KB, ~65 µs \
                 each, ~240k msg/s whatever the partitions or linger.",
                med(&self.ceiling_batches),
                if full {
                    "The batches are full: batch.size closes them."
                } else {
                    "The batches are far below batch.size: they close before filling."
                }
            );
            d.fix = "Raise batch.size (librdkafka's default is 1000000; the post's producer \
                     went from 233k to 991k msg/s between 16 KB and 1 MB) and give linger.ms \
                     room to fill the batches, so each request carries more bytes."
                .into();
            d.cannot_tell = Some(
                "Statistics cannot tell the broker's per-request cost from librdkafka's own \
                 broker thread running out of CPU to build requests: per-thread CPU \
                 (analyze-thread-cpu: rdk:broker below one core) tells; a debug=protocol log \
                 (analyze-protocol-log) shows every request's size and rtt."
                    .into(),
            );
            out.push(d);
        }
    }

    /// inflight-queueing: requests waiting in flight on one connection, its round trip
    /// growing with the depth.
    pub(super) fn inflight_queueing(&self, cx: &Context<'_>, out: &mut Vec<StatsDiagnosis>) {
        let t = cx.t;
        let (hits, held) = fired(&self.inflight, |h| h.held.by_share(t));
        if !hits.is_empty() {
            let per_broker: Vec<Value> = hits
                .iter()
                .map(|(i, h)| {
                    json!({
                        "broker": cx.broker(*i),
                        "intervals_held": h.held.held,
                        "intervals_considered": h.held.considered,
                        "waitresp_cnt": summ(&h.a),
                        "rtt_p50_ms": summ(&h.b),
                        "rtt_min_ms": summ(&h.c),
                        "bytes_per_produce_request": summ(&h.d),
                        "waitresp_rtt_correlation": h.corr.r().map(round_sig),
                    })
                })
                .collect();
            // The connection where most requests wait: the one that queues.
            let (qi, h) = hits
                .iter()
                .max_by(|a, b| {
                    a.1.a
                        .median()
                        .unwrap_or(0.0)
                        .total_cmp(&b.1.a.median().unwrap_or(0.0))
                })
                .map(|(i, h)| (*i, *h))
                .expect("hits is not empty");
            let mut d = cx.base(
                &INFLIGHT_QUEUEING,
                format!(
                    "requests queue in flight{}: {:.0} waiting for a response, rtt p50 \
                     {:.2} ms against {:.2} ms for the fastest",
                    if hits.len() > 1 {
                        format!(" on {} (of {} connections)", cx.broker(qi), hits.len())
                    } else {
                        String::new()
                    },
                    h.a.median().unwrap_or(0.0),
                    h.b.median().unwrap_or(0.0),
                    h.c.median().unwrap_or(0.0)
                ),
                &held,
            );
            d.brokers = cx.brokers(&hits);
            d.evidence = json!({
                "waitresp_cnt_p50": med(&h.a),
                "rtt_p50_ms_p50": med(&h.b),
                "rtt_min_ms_p50": med(&h.c),
                "bytes_per_produce_request_p50": med(&h.d),
                "max_in_flight": cx.setting(cx.config.max_in_flight),
                "linger_ms": cx.setting(cx.config.linger_ms),
                "per_broker": per_broker,
            });
            d.cause = "Many small ProduceRequests are in flight on one connection at once \
                       (waitresp_cnt well above 5) and the broker serves them one at a time, so \
                       each waits behind the others: the round trip grows with the depth while \
                       the fastest request stays fast. librdkafka's default window is 1000000 \
                       requests; with linger.ms=0 a request leaves as soon as a message or two \
                       is ready. The post: p50/p99 14.1/26.4 ms against 0.47/1.28 ms at \
                       max.in.flight=5, same throughput."
                .into();
            d.fix = "Set max.in.flight.requests.per.connection=5 (Java's default): messages \
                     then wait for a free slot and coalesce into fewer, larger requests; it does \
                     not conflict with a large batch.size."
                .into();
            d.cannot_tell = Some(
                "waitresp_cnt is sampled once per interval; a debug=protocol log \
                 (analyze-protocol-log) pairs each request with its response and shows rtt \
                 against the depth it was sent at."
                    .into(),
            );
            out.push(d);
        }
    }

    /// producer-backlog: the producer queue near its limit, or filling while int_latency
    /// rises.
    pub(super) fn producer_backlog(&self, cx: &Context<'_>, out: &mut Vec<StatsDiagnosis>) {
        let t = cx.t;
        let acc = cx.acc;
        // Rising: int_latency high (and not just the linger) and growing while the queue fills
        // past half its limit; near the limit in any interval is enough by itself.
        let high = t
            .backlog_int_latency_ms
            .max(2.0 * cx.config.linger_ms.value);
        let rising = acc.int_latency_trend().is_some_and(|s| s > 0.0)
            && acc.int_latency_p50_median().is_some_and(|p| p >= high)
            && acc.queue_trend().is_some_and(|s| s > 0.0)
            && acc
                .queue_share_max()
                .is_some_and(|q| q >= 0.5 * t.backlog_queue_share);
        if self.backlog.held > 0 || rising {
            let share = self.backlog_share.max().or(acc.queue_share_max());
            let mut d = cx.base(
                &PRODUCER_BACKLOG,
                format!(
                    "the producer queue is {}full{}: produce() is about to fail with QueueFull",
                    share.map_or(String::new(), |s| format!("{:.0}% ", s * 100.0)),
                    if rising { " and int_latency rises" } else { "" }
                ),
                &self.backlog,
            );
            d.evidence = json!({
                "queue_share_max": share.map(round_sig),
                "queue_max_messages": acc.queue_max_messages(),
                "queue_max_bytes": acc.queue_max_bytes(),
                "int_latency_p50_ms_p50": acc.int_latency_p50_median().map(round_sig),
                "int_latency_max_ms_max": acc.int_latency_max().map(round_sig),
                "int_latency_p50_ms_trend_per_s": acc.int_latency_trend().map(round_sig),
                "int_latency_outofrange": acc.int_latency_outofrange(),
            });
            d.cause = "The application produces faster than the client sends: messages \
                       accumulate in the producer queue (msg_cnt/msg_size against \
                       queue.buffering.max.messages/kbytes) and wait longer and longer \
                       (int_latency). At the limit produce() returns QueueFull. The send side \
                       is the limit: see per-request-ceiling, inflight-queueing, \
                       broker-throttle or request-timeouts when they are present."
                .into();
            d.fix = "Remove what limits the send side (usually batch.size, see \
                     per-request-ceiling); until then, bound the application's rate or handle \
                     QueueFull by polling and retrying. A larger queue only delays it and \
                     raises latency."
                .into();
            d.cannot_tell = Some(
                "Statistics show the queue, not why the send side is slow when no other \
                 diagnosis names it: a debug=protocol log (analyze-protocol-log) and per-thread \
                 CPU (analyze-thread-cpu) tell the broker from the client."
                    .into(),
            );
            if acc.int_latency_outofrange() > 0.0 {
                d.cannot_tell = Some(format!(
                    "{} int_latency's percentiles read low: {} values fell beyond its histogram \
                     (max is exact).",
                    d.cannot_tell.unwrap_or_default(),
                    acc.int_latency_outofrange()
                ));
            }
            out.push(d);
        }
    }

    /// linger-bound-latency: messages waiting about linger.ms at a low rate.
    pub(super) fn linger_bound_latency(&self, cx: &Context<'_>, out: &mut Vec<StatsDiagnosis>) {
        let t = cx.t;
        let acc = cx.acc;
        if self.linger.by_share(t) {
            let linger = cx.config.linger_ms.value;
            let mut d = cx.base(
                &LINGER_BOUND_LATENCY,
                format!(
                    "messages wait about linger.ms ({} ms): int_latency p50 {:.2} ms at a low rate",
                    linger,
                    self.linger_p50.median().unwrap_or(0.0)
                ),
                &self.linger,
            );
            let parts = acc.partition_rates();
            let per_partition_per_linger: Vec<f64> = parts
                .iter()
                .map(|r| round_sig(r * linger / 1000.0))
                .collect();
            d.evidence = json!({
                "int_latency_p50_ms": summ(&self.linger_p50),
                "linger_ms": cx.setting(cx.config.linger_ms),
                "messages_per_s_p50": acc.tx_rate_median().map(round_sig),
                "messages_per_partition_per_linger": per_partition_per_linger,
                "batch_bytes_p50": acc.batch_bytes_p50().map(round_sig),
                "batch_messages_p50": acc.batch_msgs_p50().map(round_sig),
            });
            d.cause = "librdkafka holds each partition's batch for linger.ms after its first \
                       message; at this rate a partition sees fewer messages than that in a \
                       linger, so nearly every message waits the whole linger (Java lingers per \
                       broker connection and drains every partition at once: the post's p50 at \
                       1k msg/s over 6 partitions was 5.1 ms here, 2.8 ms in Java)."
                .into();
            d.fix = "Nothing is broken: expect p50 ≈ linger.ms at low rates. Lower linger.ms \
                     if that latency matters (0 sends at once, in more and smaller requests; \
                     pair it with max.in.flight=5)."
                .into();
            out.push(d);
        }
    }
}
