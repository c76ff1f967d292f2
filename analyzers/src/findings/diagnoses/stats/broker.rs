//! The diagnoses of broker connections: throttling, timeouts and retries, a broker
//! silent while the others answer, a broker down or flapping.

use serde_json::{json, Value};

use super::context::{summ, Context};
use super::entries::{
    BROKER_DOWN, BROKER_FLAPPING, BROKER_SILENT, BROKER_THROTTLE, REQUEST_TIMEOUTS,
};
use super::held::{fired, BrokerHeld};
use super::observe::Diagnoser;
use super::rules;
use super::thresholds::SILENT_MIN_S;
use crate::stats::report::StatsDiagnosis;
use crate::stats::stat::round_sig;

impl Diagnoser {
    /// broker-throttle: a broker delaying its responses (a quota).
    pub(super) fn broker_throttle(&self, cx: &Context<'_>, out: &mut Vec<StatsDiagnosis>) {
        let (hits, held) = fired(&self.throttle, |h| h.held.held > 0);
        if !hits.is_empty() {
            let per_broker: Vec<Value> = hits
                .iter()
                .map(|(i, h)| {
                    json!({
                        "broker": cx.broker(*i),
                        "intervals_throttled": h.held.held,
                        "throttle_max_ms": summ(&h.a),
                        "throttle_avg_ms": summ(&h.b),
                        "throttled_responses": h.c.mean().map(|m| round_sig(m * h.c.count() as f64)),
                    })
                })
                .collect();
            let worst = hits
                .iter()
                .filter_map(|(_, h)| h.a.max())
                .fold(0.0, f64::max);
            let mut d = cx.base(
                &BROKER_THROTTLE,
                format!("the broker throttles this client: up to {worst:.0} ms per response"),
                &held,
            );
            d.brokers = cx.brokers(&hits);
            d.evidence = json!({"throttle_max_ms": worst, "per_broker": per_broker});
            d.cause = "The broker delays its responses to keep the client within a quota \
                       (producer_byte_rate, consumer_byte_rate or request_percentage for its \
                       client.id or user): throughput is capped by configuration, not by the \
                       client."
                .into();
            d.fix = "Raise or remove the quota for this client (kafka-configs --entity-type \
                     clients|users --alter --add-config ...), or spread the load over \
                     client.ids the quota allows."
                .into();
            out.push(d);
        }
    }

    /// request-timeouts: requests timed out or retried, or round trips of seconds.
    pub(super) fn request_timeouts(&self, cx: &Context<'_>, out: &mut Vec<StatsDiagnosis>) {
        let acc = cx.acc;
        let (hits, held) = fired(&self.timeouts, |h| h.held.held > 0);
        if !hits.is_empty() {
            let per_broker: Vec<Value> = hits
                .iter()
                .map(|(i, h)| {
                    json!({
                        "broker": cx.broker(*i),
                        "intervals_held": h.held.held,
                        "timeouts": h.a.mean().map(|m| m * h.a.count() as f64),
                        "retries": h.b.mean().map(|m| m * h.b.count() as f64),
                        "rtt_max_ms": h.c.max().map(round_sig),
                    })
                })
                .collect();
            let timeouts: f64 = hits
                .iter()
                .map(|(i, _)| acc.brokers.get(*i).map_or(0.0, |b| b.timeouts_total()))
                .sum();
            let retries: f64 = hits
                .iter()
                .map(|(i, _)| acc.brokers.get(*i).map_or(0.0, |b| b.retries_total()))
                .sum();
            let rtt_max = hits
                .iter()
                .filter_map(|(_, h)| h.c.max())
                .fold(0.0, f64::max);
            let title = if timeouts + retries > 0.0 {
                format!(
                    "requests time out or are retried: {timeouts:.0} timeouts, {retries:.0} \
                     retries, rtt up to {rtt_max:.0} ms"
                )
            } else {
                format!("round trips took seconds: rtt up to {rtt_max:.0} ms (no timeouts yet)")
            };
            let mut d = cx.base(&REQUEST_TIMEOUTS, title, &held);
            d.brokers = cx.brokers(&hits);
            d.evidence = json!({
                "timeouts": timeouts,
                "retries": retries,
                "rtt_max_ms": round_sig(rtt_max),
                "per_broker": per_broker,
            });
            d.cause = "Responses took seconds (and past request.timeout.ms the requests time \
                       out and are retried): the broker or the network stalled. A slow or \
                       timed-out request blocks the partitions behind it (head-of-line), and \
                       retries re-send whole batches."
                .into();
            d.fix = "Find the stall on the broker side (GC, disk, a partition leader moving, \
                     quotas); raise request.timeout.ms only if the broker is known to be slow \
                     but healthy."
                .into();
            d.cannot_tell = Some(
                "Statistics count timeouts per broker, not which requests: a debug=protocol log \
                 (analyze-protocol-log) names them and the partitions they blocked."
                    .into(),
            );
            out.push(d);
        }
    }

    /// broker-silent: a learned connection, not throttled, with requests waiting and no
    /// response for long enough, while the others answer.
    pub(super) fn broker_silent(&self, cx: &Context<'_>, out: &mut Vec<StatsDiagnosis>) {
        let acc = cx.acc;
        let silent_s = |h: &BrokerHeld| h.b.mean().unwrap_or(0.0) * h.b.count() as f64;
        // Learned brokers only (a coordinator's logical connection waits on joins by
        // design), for long enough, and not throttled: a throttled response is late on
        // purpose, and broker-throttle says so.
        let silent: Vec<BrokerHeld> = self
            .silent
            .iter()
            .enumerate()
            .map(|(i, h)| {
                let learned = cx
                    .track
                    .brokers
                    .get(i)
                    .is_some_and(|b| b.nodeid.is_some_and(|n| n >= 0));
                let throttled = self.throttle.get(i).is_some_and(|t| t.held.held > 0);
                if learned && !throttled && silent_s(h) >= SILENT_MIN_S {
                    h.clone()
                } else {
                    BrokerHeld::default()
                }
            })
            .collect();
        let (hits, held) = fired(&silent, |h| h.held.held > 0);
        if !hits.is_empty() {
            let answered: Vec<String> = (0..cx.track.brokers.len())
                .filter(|i| !hits.iter().any(|(j, _)| j == i))
                .filter(|i| {
                    cx.track.brokers[*i].nodeid.is_some_and(|n| n >= 0)
                        && acc.brokers.get(*i).is_some_and(|b| b.carried_requests())
                })
                .map(|i| cx.broker(i).to_string())
                .collect();
            let per_broker: Vec<Value> = hits
                .iter()
                .map(|(i, h)| {
                    json!({
                        "broker": cx.broker(*i),
                        "intervals_silent": h.held.held,
                        "seconds_silent": round_sig(silent_s(h)),
                        "waitresp_cnt": summ(&h.a),
                    })
                })
                .collect();
            let names: Vec<String> = hits
                .iter()
                .map(|(i, h)| format!("{} ({:.1} s)", cx.broker(*i), silent_s(h)))
                .collect();
            let mut d = cx.base(
                &BROKER_SILENT,
                format!(
                    "a broker stopped answering: {} with requests waiting{}",
                    names.join(", "),
                    if answered.is_empty() {
                        String::new()
                    } else {
                        format!("; {} answered", answered.join(", "))
                    }
                ),
                &held,
            );
            d.brokers = cx.brokers(&hits);
            d.evidence = json!({"per_broker": per_broker, "answered": answered});
            d.cause = "Requests were sent on the connection and awaited a response \
                       (waitresp_cnt > 0), the connection stayed UP, and not one response \
                       came back for a whole interval: the broker process stopped or stalled \
                       (a pause, a GC or disk stall, SIGSTOP) or the network dropped packets \
                       without closing the connection. The partitions it leads wait; the other \
                       connections are not held up."
                .into();
            d.fix = "Look at that broker (its log, GC log, the host); librdkafka times the \
                     requests out after request.timeout.ms and retries them."
                .into();
            d.cannot_tell = Some(
                "Statistics sample once per interval: a silence shorter than an interval, or \
                 a broker that answers only some requests, does not show; debug=protocol \
                 (analyze-protocol-log) times every request."
                    .into(),
            );
            out.push(d);
        }
    }

    /// broker-down or broker-flapping: a broker the client needs not UP, once or again
    /// and again.
    pub(super) fn broker_down_or_flapping(&self, cx: &Context<'_>, out: &mut Vec<StatsDiagnosis>) {
        let t = cx.t;
        let acc = cx.acc;
        let (hits, held) = fired(&self.unavailable, |h| h.held.held > 0);
        if !hits.is_empty() {
            let mut flapping = Vec::new();
            let per_broker: Vec<Value> = hits
                .iter()
                .map(|(i, h)| {
                    let track = cx.track.brokers.get(*i);
                    let disconnects = acc.brokers.get(*i).map_or(0.0, |b| b.disconnects());
                    let changes = track.map_or(0, |b| b.state_changes_total);
                    let episodes = track.map_or(0, |b| b.down_episodes);
                    if rules::flapping(disconnects, episodes, t) {
                        flapping.push(cx.broker(*i).to_string());
                    }
                    json!({
                        "broker": cx.broker(*i),
                        "intervals_affected": h.held.held,
                        "intervals_not_up": h.b.mean().map(|m| (m * h.b.count() as f64).round()),
                        "disconnects": disconnects,
                        "state_changes": changes,
                        "down_episodes": episodes,
                        "states": track.map(|b| b.states.clone()).unwrap_or_default(),
                    })
                })
                .collect();
            let rule = if flapping.is_empty() {
                &BROKER_DOWN
            } else {
                &BROKER_FLAPPING
            };
            let mut d = cx.base(
                rule,
                if flapping.is_empty() {
                    format!(
                        "a broker the client needs went down: {}",
                        cx.broker(hits[0].0)
                    )
                } else {
                    format!("broker connection flapping: {}", flapping.join(", "))
                },
                &held,
            );
            d.brokers = cx.brokers(&hits);
            d.evidence = json!({"flapping": flapping, "per_broker": per_broker});
            d.cause = if rule.id == BROKER_FLAPPING.id {
                "The connection to the broker was lost again and again (disconnects, state \
                 changes between UP and DOWN/CONNECT): requests to its partitions wait for each \
                 reconnect and in-flight ones are retried."
            } else {
                "A broker that leads partitions the client uses was not UP (or its connection \
                 dropped): produce and fetch to its partitions stop until it is back or \
                 leadership moves."
            }
            .into();
            d.fix = "Check the broker (process, network, listeners, idle-connection killers \
                     such as load balancers: connections.max.idle.ms); librdkafka reconnects by \
                     itself (reconnect.backoff.ms)."
                .into();
            d.cannot_tell = Some(
                "Statistics sample the state once per interval; the client's log (its \
                 connection errors, debug=broker) says why each connection closed."
                    .into(),
            );
            out.push(d);
        }
    }
}
