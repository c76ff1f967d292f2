//! short-episode: a per-connection producer rule (per-request-ceiling, inflight-queueing)
//! that held in some intervals but fewer than half. The run-level diagnosis keeps its share
//! (a passing spike does not name a capture); the intervals where it held are still named,
//! with their figures, however few — a capture that starts or ends inside an episode (561
//! requests waiting in its first interval) must not read as "no gap".

use serde_json::json;

use super::context::{summ, Context};
use super::entries::{INFLIGHT_QUEUEING, PER_REQUEST_CEILING, SHORT_EPISODE};
use super::held::{fired, BrokerHeld};
use super::observe::Diagnoser;
use crate::findings::diagnoses::rule::DiagnosisRule;
use crate::stats::report::StatsDiagnosis;

impl Diagnoser {
    pub(super) fn short_episodes(&self, cx: &Context<'_>, out: &mut Vec<StatsDiagnosis>) {
        let rules: [(&DiagnosisRule, &[BrokerHeld], [&str; 3]); 2] = [
            (
                &INFLIGHT_QUEUEING,
                &self.inflight,
                ["requests waiting", "rtt p50 ms", "fastest rtt ms"],
            ),
            (
                &PER_REQUEST_CEILING,
                &self.ceiling,
                [
                    "ProduceRequests/s",
                    "bytes per request",
                    "int_latency p50 ms",
                ],
            ),
        ];
        for (rule, per_broker, names) in rules {
            // Held by share: the rule's own diagnosis speaks for it.
            if !fired(per_broker, |h| h.held.by_share(cx.t)).0.is_empty() {
                continue;
            }
            let (hits, held) = fired(per_broker, |h| h.held.held > 0);
            let Some((bi, h)) = hits.iter().max_by_key(|(_, h)| h.held.held) else {
                continue;
            };
            let figures: Vec<String> = [&h.a, &h.b, &h.c]
                .iter()
                .zip(names)
                .filter_map(|(s, n)| s.median().map(|v| format!("{n} {}", fmt(v))))
                .collect();
            let first = held.episodes().first().cloned();
            let mut d = cx.base(
                &SHORT_EPISODE,
                format!(
                    "{} held in {} of {} intervals on {}{}: {} — an episode, not the \
                     capture's state",
                    rule.id,
                    h.held.held,
                    h.held.considered,
                    cx.broker(*bi),
                    first.map_or(String::new(), |e| format!(
                        " (from {:.1} s to {:.1} s)",
                        e.from_t_s, e.to_t_s
                    )),
                    figures.join(", ")
                ),
                &held,
            );
            d.brokers = cx.brokers(&hits);
            d.evidence = json!({
                "rule": rule.id,
                "rule_in_words": rule.rule,
                "broker": cx.broker(*bi),
                "intervals_held": h.held.held,
                "intervals_considered": h.held.considered,
                "min_share_of_intervals": cx.t.min_share_of_intervals,
                names[0]: summ(&h.a),
                names[1]: summ(&h.b),
                names[2]: summ(&h.c),
            });
            d.cause = format!(
                "In these intervals the connection was in the state {} describes ({}); in the \
                 rest of the capture it was not. The capture may have started or ended inside \
                 a longer episode, or the client met it briefly (a burst, a slow broker moment).",
                rule.id, rule.rule
            );
            d.fix = format!(
                "If these intervals are when the client was slow, read them as {}; a capture \
                 that spans more of the slow period (statistics.interval.ms=1000 for a few \
                 minutes) tells an episode from the client's state.",
                rule.id
            );
            out.push(d);
        }
    }
}

fn fmt(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}
