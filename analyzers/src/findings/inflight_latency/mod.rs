//! `inflight-latency`: librdkafka's in-flight window and latency at linger.ms=0.
//!
//! The mechanism: with linger.ms=0 and librdkafka's default window (1,000,000 requests in
//! flight per connection) a ProduceRequest goes out as soon as a message or two is ready;
//! the broker serves a connection's requests one at a time, so they wait behind each other.
//! With max.in.flight=5 messages wait for a free slot instead and coalesce. The rule asks
//! for the gap and for the queue that makes it, at a rate both windows held:
//! - both windows sustained the rate in every rep (the paced producer kept up);
//! - p99 send-to-ack with the default window ≥ [`MIN_P99_GAP`] × the p99 with 5, min/max
//!   ranges apart over ≥ 3 reps;
//! - the mechanism: requests waiting for a response on the connection (statistics
//!   `waitresp_cnt`) above [`MIN_WAITING_REQUESTS`] in every rep, which a window of 5 cannot
//!   reach, or more (hence smaller) requests for the same messages, ≥ [`MIN_MORE_REQUESTS`]x.
//!
//! It judges the highest rate both windows sustained. When the default window could not
//! hold a rate that max.in.flight=5 held, that is said: on a small machine the queue costs
//! the client its rate before it shows as latency, and it is part of the finding there.

mod checks;
pub mod evidence;
mod sentences;
#[cfg(test)]
mod tests;
pub mod thresholds;

use super::finding::{direct, Finding, Reproduce, Side};
use super::reps::{check_at_least, check_every_rep, Reps};
use super::verdict::{Outcome, Verdict};
use crate::vocab::units;
use checks::{any_of, at_least_or_short, sustained, waiting_check};
use sentences::{fmt_msgs, queued_on, unsustained_sentence};

pub use super::connection::Connection;
pub use evidence::{Evidence, RatePair, Window};
pub use thresholds::{
    DEFAULT_WINDOW, MIN_MORE_REQUESTS, MIN_P99_GAP, MIN_WAITING_REQUESTS, POST_RATE, SMALL_WINDOW,
    SUSTAINED_SHARE,
};

/// The rule: see the module doc.
pub fn decide(e: &Evidence) -> Verdict {
    let mut pairs: Vec<&RatePair> = e.pairs.iter().collect();
    pairs.sort_by_key(|p| p.rate_per_s);
    if pairs.is_empty() {
        return Verdict::cannot_tell(
            &FINDING,
            "no rate was measured with both max.in.flight=1000000 and 5 at linger.ms=0: the \
             rule compares the two windows at one rate (--linger-ms 0 --max-in-flight \
             1000000,5)",
        );
    }
    let judged = pairs
        .iter()
        .rev()
        .find(|p| {
            sustained(&p.default_window, p.rate_per_s) && sustained(&p.window_5, p.rate_per_s)
        })
        .copied();
    let above: Vec<&RatePair> = pairs
        .iter()
        .filter(|p| judged.is_none_or(|j| p.rate_per_s > j.rate_per_s))
        .copied()
        .collect();
    let limits = unsustained_sentence(&above);
    let Some(p) = judged else {
        let mut v = Verdict::cannot_tell(
            &FINDING,
            format!(
                "no rate was sustained by both windows, so their latencies are not at the same \
                 rate: {}; a quieter machine, --cpus, or lower --rates",
                limits.unwrap_or_default()
            ),
        );
        v.evidence = serde_json::to_value(e).unwrap_or_default();
        return v;
    };
    let rate = p.rate_per_s;
    let at = units::msgs_per_s(rate as f64);
    let (d, f) = (&p.default_window, &p.window_5);
    let keeps_up = |w: &Window, name: &str| {
        check_every_rep(
            format!("{name} sustains {at}"),
            &w.rate_achieved_per_s,
            |a| a >= SUSTAINED_SHARE * rate as f64,
            units::msgs_per_s,
        )
    };
    let mechanism = any_of(
        "the mechanism: requests queue on the connection, or more and smaller requests go out",
        vec![
            waiting_check(d),
            at_least_or_short(
                format!("the default window sends ≥ {MIN_MORE_REQUESTS}x the ProduceRequests"),
                &d.produce_requests_per_s,
                &f.produce_requests_per_s,
                MIN_MORE_REQUESTS,
                |x| format!("{}/s", units::si(x)),
            ),
        ],
    );
    let checks = vec![
        keeps_up(d, "the default window"),
        keeps_up(f, "max.in.flight=5"),
        check_at_least(
            format!(
                "p99 send-to-ack with the default window ≥ {MIN_P99_GAP}x that with \
                 max.in.flight=5 at {at}"
            ),
            &d.ack_ms_p99,
            &f.ack_ms_p99,
            MIN_P99_GAP,
            units::ms,
        ),
        mechanism,
    ];
    let mut warnings = d
        .ack_ms_p99
        .outlier_warnings("p99 with the default window", units::ms);
    warnings.extend(
        f.ack_ms_p99
            .outlier_warnings("p99 with max.in.flight=5", units::ms),
    );
    let m = |r: &Reps| r.median().unwrap_or(0.0);
    let mut v = Verdict::from_checks(&FINDING, checks, e, || {
        format!(
            "at {at} and linger.ms=0 p99 send-to-ack was {} with librdkafka's default window \
             against {} with max.in.flight=5 ({}), with {} requests awaiting a response \
             against {}{} and {} against {} ProduceRequests/s of {} against {} messages: an \
             unlimited window lets tiny requests pile up and wait at the broker{}",
            units::ms(m(&d.ack_ms_p99)),
            units::ms(m(&f.ack_ms_p99)),
            units::times(m(&d.ack_ms_p99) / m(&f.ack_ms_p99)),
            units::count(m(&d.waiting_requests)),
            units::count(m(&f.waiting_requests)),
            queued_on(d)
                .map(|q| format!(" (queued on {q})"))
                .unwrap_or_default(),
            units::si(m(&d.produce_requests_per_s)),
            units::si(m(&f.produce_requests_per_s)),
            fmt_msgs(m(&d.msgs_per_request)),
            fmt_msgs(m(&f.msgs_per_request)),
            limits
                .as_ref()
                .map(|l| format!("; {l}"))
                .unwrap_or_default()
        )
    })
    .with_warnings(warnings);
    if v.outcome == Outcome::DoesNotHold {
        let at_judged = v.reason.clone();
        if let Some(l) = &limits {
            // The gap shows where the queue builds: a higher rate this machine could not
            // hold with both windows decides nothing about it.
            v.outcome = Outcome::CannotTell;
            v.reason = format!("{l}; at {at}, the highest rate both sustained: {at_judged}");
        } else if rate < POST_RATE {
            v.outcome = Outcome::CannotTell;
            v.reason = format!(
                "at {at}, the highest rate measured: {at_judged}; the post saw the queue at \
                 {} and says it never builds at 1k and 10k msg/s (add --rates {POST_RATE})",
                units::msgs_per_s(POST_RATE as f64)
            );
        }
    }
    v
}

pub const FINDING: Finding = Finding {
    id: "inflight-latency",
    title: "In-flight window and latency at linger.ms=0",
    side: Side::Librdkafka,
    post: "linger.ms 0, 50k msg/s: default window p50/p99 14.1/26.4 ms against 0.47/1.28 ms with 5",
    claim: "At linger.ms=0 and 50k msg/s, librdkafka's default window (1,000,000 in \
            flight): send-to-ack p50/p99 14.1/26.4 ms; max.in.flight=5: 0.47/1.28 ms, \
            throughput unchanged. The rerun: 17.6/32.9 ms against 0.66/1.93 ms (Java \
            0.64/0.93 ms).",
    cause: "with linger.ms=0 and an unlimited window librdkafka sends a request as soon \
            as a message or two is ready; the broker handles them one at a time with a \
            fixed cost each, so tiny requests queue",
    fix: "max.in.flight.requests.per.connection=5 (it does not conflict with a large \
          batch.size)",
    reproduce: Reproduce {
        probe: "probe-inflight-latency",
        exists: true,
        command: "probe-inflight-latency --brokers 127.0.0.1:9092 --linger-ms 0 \
                  --max-in-flight 1000000,5",
    },
    expected_shape: "at a rate both windows sustain, p99 send-to-ack several times higher \
                     with the default window than with 5, with requests waiting on the \
                     connection or more, smaller requests",
    rule: "at the highest rate both windows sustained in every rep (≥ 97% of the target), \
           linger.ms=0: p99 send-to-ack (librdkafka's per-message latency) with the default \
           window ≥ 3x that with max.in.flight=5, min/max ranges apart over ≥ 3 reps; and \
           more than 10 requests awaiting a response (waitresp_cnt) in every rep or ≥ 1.2x \
           the ProduceRequests/s. A higher rate the default window could not sustain while 5 \
           did is reported; a gap absent below the post's 50k msg/s, or at a rate beneath \
           one this machine could not hold, is CANNOT TELL",
    rule_fn: "findings::inflight_latency::decide",
    sources: &[
        direct("inflight-latency", "probe-inflight-latency"),
        direct("inflight-queueing", "analyze-protocol-log"),
        // Requests of a message or a few waiting on the connection (waitresp_msg_cnt).
        direct("inflight-queueing", "analyze-stats"),
    ],
};
