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

use super::reps::{check_at_least, check_every_rep, Reps};
pub use super::request_ceiling::Connection;
use super::verdict::{Check, CheckState, Outcome, Verdict};
use super::{direct, Finding, Reproduce, Side};
use crate::vocab::units;
use serde::{Deserialize, Serialize};

/// librdkafka's default max.in.flight.requests.per.connection.
pub const DEFAULT_WINDOW: u64 = 1_000_000;
/// The window the post's fix sets.
pub const SMALL_WINDOW: u64 = 5;
/// The p99 gap the default window must show (the post: 26.4 / 1.28 ms = 20.6x).
pub const MIN_P99_GAP: f64 = 3.0;
/// Requests awaiting a response (mean of the statistics emits) that only a window wider
/// than 5 allows: twice the small window.
pub const MIN_WAITING_REQUESTS: f64 = 10.0;
/// More ProduceRequests per second for the same messages: smaller requests.
pub const MIN_MORE_REQUESTS: f64 = 1.2;
/// A run sustained its rate when it handed librdkafka at least this share of the target.
pub const SUSTAINED_SHARE: f64 = 0.97;
/// The post's rate; it says the queue never builds at 1k and 10k msg/s.
pub const POST_RATE: u64 = 50_000;

/// One window's figures at one rate, per rep (librdkafka only).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Window {
    /// Messages handed to librdkafka per second in each rep's window.
    pub rate_achieved_per_s: Reps,
    pub ack_ms_p50: Reps,
    /// Send-to-ack p99 (librdkafka's own per-message latency, at the delivery report).
    pub ack_ms_p99: Reps,
    pub e2e_ms_p99: Reps,
    /// ProduceRequests per second (statistics `req.Produce`).
    pub produce_requests_per_s: Reps,
    /// Messages per ProduceRequest (statistics `batchcnt`; one partition per request).
    pub msgs_per_request: Reps,
    /// Requests awaiting a response on the connection (statistics `waitresp_cnt`, mean of
    /// the emits in the window).
    pub waiting_requests: Reps,
    /// Each broker connection (librdkafka keeps one per broker; the window is per
    /// connection). Empty when the statistics were not read per broker.
    #[serde(default)]
    pub connections: Vec<Connection>,
}

/// Both windows at one rate.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RatePair {
    pub rate_per_s: u64,
    /// max.in.flight=1000000 (librdkafka's default).
    pub default_window: Window,
    /// max.in.flight=5.
    pub window_5: Window,
}

/// Every rate measured with both windows at linger.ms=0.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Evidence {
    pub pairs: Vec<RatePair>,
}

fn sustained(w: &Window, rate: u64) -> bool {
    !w.rate_achieved_per_s.is_empty()
        && w.rate_achieved_per_s
            .values()
            .iter()
            .all(|&a| a >= SUSTAINED_SHARE * rate as f64)
}

fn achieved(w: &Window) -> String {
    w.rate_achieved_per_s.show(units::msgs_per_s)
}

/// The sentence about rates above the judged one that a window could not hold.
fn unsustained_sentence(pairs: &[&RatePair]) -> Option<String> {
    let parts: Vec<String> = pairs
        .iter()
        .map(|p| {
            let (d, f) = (
                sustained(&p.default_window, p.rate_per_s),
                sustained(&p.window_5, p.rate_per_s),
            );
            let waiting = p
                .default_window
                .waiting_requests
                .median()
                .map(|n| format!(", {} requests waiting", units::count(n)))
                .unwrap_or_default();
            match (d, f) {
                (false, true) => format!(
                    "at {} the default window could not sustain the rate ({}{waiting}) while \
                     max.in.flight=5 did ({}): on this machine the unlimited window costs the \
                     rate before it shows as latency",
                    units::msgs_per_s(p.rate_per_s as f64),
                    achieved(&p.default_window),
                    achieved(&p.window_5)
                ),
                (true, false) => format!(
                    "at {} max.in.flight=5 could not sustain the rate ({}; the default window {})",
                    units::msgs_per_s(p.rate_per_s as f64),
                    achieved(&p.window_5),
                    achieved(&p.default_window)
                ),
                _ => format!(
                    "at {} neither window sustained the rate (default {}{waiting}; 5: {})",
                    units::msgs_per_s(p.rate_per_s as f64),
                    achieved(&p.default_window),
                    achieved(&p.window_5)
                ),
            }
        })
        .collect();
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// A check that passes when any of `checks` passed, fails when all failed, else undecided.
fn any_of(condition: &str, checks: Vec<Check>) -> Check {
    let state = if checks.iter().any(|c| c.state == CheckState::Passed) {
        CheckState::Passed
    } else if checks.iter().all(|c| c.state == CheckState::Failed) {
        CheckState::Failed
    } else {
        CheckState::Undecided
    };
    let detail = checks
        .iter()
        .map(|c| format!("{} {}: {}", c.mark(), c.condition, c.detail))
        .collect::<Vec<_>>()
        .join("; ");
    Check::new(condition, state, detail)
}

/// [`check_at_least`], except that overlapping ranges fail when even the most favourable
/// reps (the highest `high` over the lowest `low`) fall short of `factor`: no noise can
/// hide a 1.2x difference there.
fn at_least_or_short(
    condition: String,
    high: &Reps,
    low: &Reps,
    factor: f64,
    fmt: impl Fn(f64) -> String + Copy,
) -> Check {
    let c = check_at_least(condition, high, low, factor, fmt);
    let best = match (high.max(), low.min()) {
        (Some(h), Some(l)) if l > 0.0 => h / l,
        _ => return c,
    };
    if c.state == CheckState::Undecided
        && high.n().min(low.n()) >= super::reps::MIN_REPS
        && best < factor
    {
        let detail = format!(
            "{} against {}: even the most favourable reps give {}, short of {factor}x",
            high.show(fmt),
            low.show(fmt),
            units::times(best)
        );
        return Check::failed(c.condition, detail);
    }
    c
}

/// Requests queue on a connection with the default window: per broker when the connections
/// were measured (the window is per connection; the check names the ones that queued),
/// else the busiest connection's gauge.
fn waiting_check(d: &Window) -> Check {
    let condition = format!(
        "more than {MIN_WAITING_REQUESTS} requests await a response on a connection with the \
         default window (statistics waitresp_cnt; 5 caps it at 5)"
    );
    let loaded: Vec<&Connection> = d
        .connections
        .iter()
        .filter(|c| c.requests_per_s.median().unwrap_or(0.0) > 0.0)
        .collect();
    if loaded.is_empty() {
        return check_every_rep(
            condition,
            &d.waiting_requests,
            |n| n > MIN_WAITING_REQUESTS,
            units::count,
        );
    }
    let each: Vec<(&Connection, Check)> = loaded
        .iter()
        .map(|c| {
            (
                *c,
                check_every_rep(
                    c.broker.clone(),
                    &c.waiting_requests,
                    |n| n > MIN_WAITING_REQUESTS,
                    units::count,
                ),
            )
        })
        .collect();
    let detail = each
        .iter()
        .map(|(c, k)| format!("{} {}: {}", k.mark(), c.label(), k.detail))
        .collect::<Vec<_>>()
        .join("; ");
    let queued: Vec<&str> = each
        .iter()
        .filter(|(_, k)| k.state == CheckState::Passed)
        .map(|(c, _)| c.broker.as_str())
        .collect();
    if !queued.is_empty() {
        Check::passed(
            condition,
            format!("queued on {}; {detail}", queued.join(", ")),
        )
    } else if each.iter().all(|(_, k)| k.state == CheckState::Failed) {
        Check::failed(condition, format!("on no connection: {detail}"))
    } else {
        Check::undecided(condition, detail)
    }
}

/// The connections where requests queued (the reason names them), by median wait.
fn queued_on(d: &Window) -> Option<String> {
    let mut v: Vec<&Connection> = d
        .connections
        .iter()
        .filter(|c| {
            c.waiting_requests.n() > 0
                && c.waiting_requests
                    .values()
                    .iter()
                    .all(|&n| n > MIN_WAITING_REQUESTS)
        })
        .collect();
    v.sort_by(|a, b| {
        b.waiting_requests
            .median()
            .unwrap_or(0.0)
            .total_cmp(&a.waiting_requests.median().unwrap_or(0.0))
    });
    (!v.is_empty()).then(|| {
        v.iter()
            .map(|c| {
                format!(
                    "{} ({} waiting)",
                    c.broker,
                    units::count(c.waiting_requests.median().unwrap_or(0.0))
                )
            })
            .collect::<Vec<_>>()
            .join(", ")
    })
}

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

fn fmt_msgs(x: f64) -> String {
    format!("{x:.1}")
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

#[cfg(test)]
mod tests {
    use super::*;

    use crate::findings::reps::of as reps;

    fn window(rate: f64, p99: [f64; 3], requests: f64, msgs: f64, waiting: f64) -> Window {
        Window {
            rate_achieved_per_s: reps(&[rate, rate * 0.999, rate * 1.001]),
            ack_ms_p50: reps(&p99.map(|x| x / 2.0)),
            ack_ms_p99: reps(&p99),
            e2e_ms_p99: reps(&p99.map(|x| x + 0.2)),
            produce_requests_per_s: reps(&[requests, requests * 1.01, requests * 0.99]),
            msgs_per_request: reps(&[msgs; 3]),
            waiting_requests: reps(&[waiting, waiting * 1.1, waiting * 0.9]),
            connections: Vec::new(),
        }
    }

    fn conn(broker: &str, requests: f64, waiting: f64) -> Connection {
        Connection {
            broker: broker.into(),
            partitions_led: 2,
            requests_per_s: reps(&[requests, requests * 1.01, requests * 0.99]),
            waiting_requests: reps(&[waiting, waiting * 1.1, waiting * 0.9]),
            ..Connection::default()
        }
    }

    #[test]
    fn on_three_brokers_the_queue_is_judged_and_named_per_connection() {
        // The post's gap, its queue on broker 2's connection only.
        let mut e = post();
        e.pairs[0].default_window.connections = vec![
            conn("127.0.0.1:9400/1", 8_000.0, 3.0),
            conn("127.0.0.1:9410/2", 9_000.0, 400.0),
            conn("127.0.0.1:9420/3", 8_000.0, 4.0),
        ];
        let v = decide(&e);
        assert_eq!(v.outcome, Outcome::Holds, "{v:#?}");
        assert!(
            v.reason
                .contains("(queued on 127.0.0.1:9410/2 (400 waiting))"),
            "{}",
            v.reason
        );
        // The same gap with no connection queueing (the mean over brokers' gauges said
        // 400, but each connection had a few): the queue is not shown, and the request
        // counts (25k against 3.8k) are what is left of the mechanism.
        for c in e.pairs[0].default_window.connections.iter_mut() {
            c.waiting_requests = reps(&[3.0, 3.3, 2.7]);
        }
        let v = decide(&e);
        let mech = v.checks.last().unwrap();
        assert!(mech.detail.contains("on no connection"), "{}", mech.detail);
        assert_eq!(
            v.outcome,
            Outcome::Holds,
            "the 6.6x requests still show it: {v:#?}"
        );
        e.pairs[0].default_window.produce_requests_per_s = reps(&[3_800.0, 3_850.0, 3_750.0]);
        let v = decide(&e);
        assert_ne!(v.outcome, Outcome::Holds, "{v:#?}");
    }

    /// The post: 50k msg/s, 26.4 against 1.28 ms; requests not given, so the default
    /// window's tiny requests are its "a message or two" (2 against 13 messages).
    fn post() -> Evidence {
        Evidence {
            pairs: vec![RatePair {
                rate_per_s: 50_000,
                default_window: window(50_000.0, [25.0, 26.4, 28.0], 25_000.0, 2.0, 400.0),
                window_5: window(50_000.0, [1.2, 1.28, 1.4], 3_800.0, 13.0, 2.5),
            }],
        }
    }

    #[test]
    fn the_posts_figures_hold() {
        let v = decide(&post());
        assert_eq!(v.outcome, Outcome::Holds, "{v:#?}");
        assert!(v.reason.contains("20.6x"), "{}", v.reason);
        assert_eq!(v.finding, "inflight-latency");
    }

    /// The project's earlier quiet-machine run (one rep per point, spread here into three
    /// reps within ±3% of it): at 10k msg/s both held, p99 619 against 21.7 ms, 1,589
    /// requests waiting against 5, 4.3k against 4.0k requests/s; at 50k the default window
    /// reached 41k while 5 held 49k.
    fn quiet_run() -> Evidence {
        Evidence {
            pairs: vec![
                RatePair {
                    rate_per_s: 1000,
                    default_window: window(1000.0, [21.0, 21.02, 21.5], 999.0, 1.0, 0.7),
                    window_5: window(996.0, [17.0, 17.12, 17.3], 992.0, 1.0, 0.0),
                },
                RatePair {
                    rate_per_s: 10_000,
                    default_window: window(9_900.0, [600.0, 619.0, 640.0], 4_300.0, 2.0, 1_589.0),
                    window_5: window(9_900.0, [20.5, 21.68, 23.0], 4_000.0, 3.0, 5.0),
                },
                RatePair {
                    rate_per_s: 50_000,
                    default_window: window(41_000.0, [300.0, 309.5, 320.0], 8_200.0, 6.0, 526.5),
                    window_5: window(49_000.0, [25.0, 26.27, 27.0], 4_700.0, 13.0, 2.5),
                },
            ],
        }
    }

    #[test]
    fn the_quiet_run_holds_at_10k_and_says_50k_was_beyond_the_default_window() {
        let v = decide(&quiet_run());
        assert_eq!(v.outcome, Outcome::Holds, "{v:#?}");
        assert!(v.reason.contains("at 10k msg/s"), "{}", v.reason);
        assert!(v.reason.contains("1,589 requests awaiting"), "{}", v.reason);
        assert!(
            v.reason
                .contains("default window could not sustain the rate"),
            "{}",
            v.reason
        );
        // The ProduceRequest rates were about equal: the queue is the mechanism here.
        let mech = v.checks.last().unwrap();
        assert!(
            mech.detail.contains("✓ more than 10 requests"),
            "{}",
            mech.detail
        );
        assert!(
            mech.detail.contains("✗ the default window sends"),
            "{}",
            mech.detail
        );
    }

    #[test]
    fn a_gap_without_the_mechanism_does_not_hold() {
        // The old rule's wrong HOLDS (docs, the loaded run): at 1k msg/s, linger 5, p99 61
        // against 20 ms with one message per request on both and nothing waiting. Here at
        // the post's rate, so the rule may say DOES NOT HOLD.
        let e = Evidence {
            pairs: vec![RatePair {
                rate_per_s: 50_000,
                default_window: window(50_000.0, [58.0, 61.0, 64.0], 961.0, 1.0, 0.7),
                window_5: window(50_000.0, [19.0, 20.0, 21.0], 979.0, 1.0, 0.5),
            }],
        };
        let v = decide(&e);
        assert_eq!(v.outcome, Outcome::DoesNotHold, "{v:#?}");
        assert!(v.reason.starts_with("the mechanism"), "{}", v.reason);
    }

    #[test]
    fn the_same_case_below_the_posts_rate_cannot_tell() {
        let e = Evidence {
            pairs: vec![RatePair {
                rate_per_s: 1000,
                default_window: window(1000.0, [58.0, 61.0, 64.0], 961.0, 1.0, 0.7),
                window_5: window(1000.0, [19.0, 20.0, 21.0], 979.0, 1.0, 0.5),
            }],
        };
        let v = decide(&e);
        assert_eq!(v.outcome, Outcome::CannotTell, "{v:#?}");
        assert!(v.reason.contains("--rates 50000"), "{}", v.reason);
    }

    /// One window's reps as a recorded run gives them.
    fn recorded(
        ach: [f64; 3],
        p99: [f64; 3],
        req: [f64; 3],
        msgs: [f64; 3],
        wait: [f64; 3],
    ) -> Window {
        Window {
            rate_achieved_per_s: reps(&ach),
            ack_ms_p99: reps(&p99),
            produce_requests_per_s: reps(&req),
            msgs_per_request: reps(&msgs),
            waiting_requests: reps(&wait),
            ..Window::default()
        }
    }

    #[test]
    fn the_loaded_kafka_run_cannot_tell_and_says_which_rates_were_not_held() {
        // The project's default sweep on Kafka 4.3.1, 3 reps, load average 17–21 (docs): no
        // rate held by both windows, the default window's queue plain at 10k (729–1,358
        // requests waiting against at most 5).
        let e = Evidence {
            pairs: vec![
                RatePair {
                    rate_per_s: 1000,
                    default_window: recorded(
                        [716.3, 970.9, 962.6],
                        [10.27, 22.26, 697.3],
                        [700.8, 984.7, 952.9],
                        [1.0; 3],
                        [0.0, 13.0, 261.7],
                    ),
                    window_5: recorded(
                        [596.7, 907.9, 765.7],
                        [1.26, 23.07, 21.34],
                        [467.8, 929.1, 916.8],
                        [1.0; 3],
                        [0.0, 0.33, 0.33],
                    ),
                },
                RatePair {
                    rate_per_s: 10_000,
                    default_window: recorded(
                        [3625.0, 5843.5, 5393.3],
                        [1073.2, 436.2, 1647.6],
                        [3583.3, 4487.7, 216.8],
                        [2.0, 1.0, 2.0],
                        [1357.5, 729.0, 990.3],
                    ),
                    window_5: recorded(
                        [2147.0, 4982.6, 4436.7],
                        [58.5, 97.2, 120.7],
                        [1054.5, 979.6, 1177.4],
                        [1.0, 5.0, 4.0],
                        [2.0, 5.0, 5.0],
                    ),
                },
                RatePair {
                    rate_per_s: 50_000,
                    default_window: recorded(
                        [9994.5, 14566.9, 26447.3],
                        [319.2, 249.1, 262.1],
                        [3685.5, 3455.7, 5215.9],
                        [2.0, 3.0, 4.0],
                        [291.5, 21.5, 849.0],
                    ),
                    window_5: recorded(
                        [31011.3, 22116.2, 21591.8],
                        [86.7, 81.3, 73.3],
                        [538.8, 1399.0, 1997.5],
                        [15.0, 14.0, 13.0],
                        [5.0, 0.0, 5.0],
                    ),
                },
            ],
        };
        let v = decide(&e);
        assert_eq!(v.outcome, Outcome::CannotTell, "{v:#?}");
        assert!(
            v.reason.contains("no rate was sustained by both"),
            "{}",
            v.reason
        );
        assert!(v.reason.contains("990 requests waiting"), "{}", v.reason);
        // Had 10k been held by both, its figures would decide: gap and queue both there.
        let mut held = e.clone();
        held.pairs.truncate(2);
        held.pairs[1].default_window.rate_achieved_per_s = reps(&[9_900.0, 9_950.0, 10_000.0]);
        held.pairs[1].window_5.rate_achieved_per_s = reps(&[9_900.0, 9_950.0, 10_000.0]);
        assert_eq!(
            decide(&held).outcome,
            Outcome::Holds,
            "{:#?}",
            decide(&held)
        );
    }

    #[test]
    fn the_quiet_kafka_run_cannot_tell_from_1k_beneath_rates_not_held() {
        // docs/probe-inflight-latency.md: Kafka 4.3.1, 3 reps, load average 1.2–5.8. Both
        // windows held 1k msg/s (no queue there, as the post says); at 10k the default window
        // held 1 rep of 3 with 109 and 1,009 requests waiting in two; at 50k none.
        let e = Evidence {
            pairs: vec![
                RatePair {
                    rate_per_s: 1000,
                    default_window: recorded(
                        [998.8, 981.8, 986.8],
                        [0.732, 2.863, 0.734],
                        [998.7, 984.2, 983.3],
                        [1.0; 3],
                        [0.0, 0.0, 0.0],
                    ),
                    window_5: recorded(
                        [998.3, 984.1, 996.9],
                        [0.744, 1.118, 1.376],
                        [998.2, 978.2, 996.9],
                        [1.0; 3],
                        [0.333, 0.0, 0.5],
                    ),
                },
                RatePair {
                    rate_per_s: 10_000,
                    default_window: recorded(
                        [9973.4, 9221.7, 8137.6],
                        [567.3, 497.4, 3.453],
                        [4102.0, 4552.5, 3829.5],
                        [2.0, 1.0, 2.0],
                        [109.3, 1008.7, 0.333],
                    ),
                    window_5: recorded(
                        [9837.8, 9957.7, 9176.2],
                        [31.86, 54.88, 15.58],
                        [4741.3, 4769.8, 4111.9],
                        [2.0, 2.0, 1.0],
                        [5.0, 4.667, 5.0],
                    ),
                },
            ],
        };
        let v = decide(&e);
        assert_eq!(v.outcome, Outcome::CannotTell, "{v:#?}");
        assert!(
            v.reason.starts_with("at 10k msg/s neither window"),
            "{}",
            v.reason
        );
        assert!(
            v.reason
                .contains("at 1.0k msg/s, the highest rate both sustained"),
            "{}",
            v.reason
        );
    }

    #[test]
    fn nothing_sustained_cannot_tell() {
        let mut e = quiet_run();
        e.pairs.retain(|p| p.rate_per_s == 50_000);
        let v = decide(&e);
        assert_eq!(v.outcome, Outcome::CannotTell);
        assert!(
            v.reason.contains("could not sustain the rate"),
            "{}",
            v.reason
        );
        assert!(v.reason.contains("41k"), "{}", v.reason);
    }

    #[test]
    fn one_rep_is_not_a_range() {
        let mut e = post();
        let one = |w: &mut Window| {
            w.rate_achieved_per_s = reps(&[w.rate_achieved_per_s.values()[0]]);
            w.ack_ms_p99 = reps(&[w.ack_ms_p99.values()[0]]);
            w.waiting_requests = reps(&[w.waiting_requests.values()[0]]);
            w.produce_requests_per_s = reps(&[w.produce_requests_per_s.values()[0]]);
        };
        one(&mut e.pairs[0].default_window);
        one(&mut e.pairs[0].window_5);
        let v = decide(&e);
        assert_eq!(v.outcome, Outcome::CannotTell, "{v:#?}");
        assert!(v.reason.contains("--reps 3"), "{}", v.reason);
    }

    #[test]
    fn overlapping_p99_ranges_cannot_tell() {
        let mut e = post();
        e.pairs[0].window_5.ack_ms_p99 = reps(&[1.2, 1.28, 30.0]);
        let v = decide(&e);
        assert_eq!(v.outcome, Outcome::CannotTell, "{v:#?}");
        assert!(v.reason.contains("overlap"), "{}", v.reason);
    }

    #[test]
    fn a_small_gap_at_the_posts_rate_does_not_hold() {
        // The first run of the post: 1.94 ms p99 at the default window against 1.28.
        let mut e = post();
        e.pairs[0].default_window.ack_ms_p99 = reps(&[1.9, 1.94, 2.0]);
        let v = decide(&e);
        assert_eq!(v.outcome, Outcome::DoesNotHold, "{v:#?}");
        assert!(v.reason.contains("below the 3x"), "{}", v.reason);
    }

    #[test]
    fn nothing_measured_cannot_tell() {
        let v = decide(&Evidence::default());
        assert_eq!(v.outcome, Outcome::CannotTell);
        assert!(v.reason.contains("--max-in-flight 1000000,5"));
    }
}
