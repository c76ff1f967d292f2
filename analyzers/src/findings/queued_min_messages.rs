//! `queued-min-messages-fix`: raising queued.min.messages is another fix for the naps.
//!
//! The post: queued.min.messages=1000000 took the 100 B consumer from 389k to 1103k msg/s at
//! the default fetch.queue.backoff.ms=1000. The mechanism is Gap 2's, seen from the other
//! side: a local queue that holds more is full less often, so the fetcher backs off and the
//! consumer naps less. The rule asks for the rate (the raised setting ≥ [`MIN_SPEEDUP`]x the
//! default, min/max ranges apart) and for the mechanism: the default napping in every rep
//! (Queue-full backoffs and idle 100 ms slots) and the raised setting's idle share of the
//! window at most half the default's (medians).

use super::finding::{direct, Finding, Reproduce, Side};
use super::reps::{check_at_least, check_every_rep, Reps, MIN_REPS};
use super::verdict::{Check, Verdict};
use crate::vocab::units;
use serde::{Deserialize, Serialize};

/// The raised setting over librdkafka's default, with apart ranges (the post: 2.8x).
pub const MIN_SPEEDUP: f64 = 1.3;
/// The raised setting's idle share may be at most this fraction of the default's.
pub const MAX_IDLE_RATIO: f64 = 0.5;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Evidence {
    /// fetch.queue.backoff.ms of both (librdkafka's default, 1000).
    pub backoff_ms: u64,
    /// queued.min.messages of the raised setting (the post: 1000000) and the default's.
    pub raised_queued_min_messages: u64,
    pub default_queued_min_messages: u64,
    pub default_msgs_per_s: Reps,
    pub raised_msgs_per_s: Reps,
    pub default_queue_full_backoffs: Reps,
    /// Idle share of each rep's window (idle 100 ms slots over the window).
    pub default_idle_share: Reps,
    pub raised_idle_share: Reps,
}

pub fn decide(e: &Evidence) -> Verdict {
    let (d, r) = (e.default_queued_min_messages, e.raised_queued_min_messages);
    if r <= d {
        return Verdict::cannot_tell(
            &FINDING,
            format!("queued.min.messages={r} is not above the default's {d}: nothing raised"),
        );
    }
    let naps = check_every_rep(
        format!("at queued.min.messages={d} the fetcher backs off on a full queue"),
        &e.default_queue_full_backoffs,
        |n| n > 0.0,
        |n| format!("{} Queue-full backoffs", units::count(n)),
    );
    let idle_condition =
        format!("at queued.min.messages={r} the consumer naps at most {MAX_IDLE_RATIO}x as much");
    let shown = format!(
        "idle {} of the window against {}",
        e.raised_idle_share.show(units::percent),
        e.default_idle_share.show(units::percent)
    );
    let idle = match (e.raised_idle_share.median(), e.default_idle_share.median()) {
        _ if e.raised_idle_share.n() < MIN_REPS || e.default_idle_share.n() < MIN_REPS => {
            Check::undecided(
                idle_condition,
                format!("{shown}: {MIN_REPS} reps are needed"),
            )
        }
        (Some(_), Some(dflt)) if dflt <= 0.0 => Check::undecided(
            idle_condition,
            format!("{shown}: the default did not nap, so there was nothing to remove"),
        ),
        (Some(raised), Some(dflt)) => {
            Check::test(raised <= MAX_IDLE_RATIO * dflt, idle_condition, shown)
        }
        _ => Check::undecided(idle_condition, format!("{shown}: not measured")),
    };
    let rate = check_at_least(
        format!("queued.min.messages={r} reads ≥ {MIN_SPEEDUP}x the default's msg/s"),
        &e.raised_msgs_per_s,
        &e.default_msgs_per_s,
        MIN_SPEEDUP,
        units::msgs_per_s,
    );
    Verdict::from_checks(&FINDING, vec![naps, idle, rate], e, || {
        let m = |x: &Reps| x.median().unwrap_or(0.0);
        format!(
            "at fetch.queue.backoff.ms={} a local queue of queued.min.messages={r} is full \
             less often than one of {d}: idle {} of the window against {}, {} against {}",
            e.backoff_ms,
            units::percent(m(&e.raised_idle_share)),
            units::percent(m(&e.default_idle_share)),
            units::msgs_per_s(m(&e.raised_msgs_per_s)),
            units::msgs_per_s(m(&e.default_msgs_per_s)),
        )
    })
}

pub const FINDING: Finding = Finding {
    id: "queued-min-messages-fix",
    title: "Raising queued.min.messages is another fix for the naps",
    side: Side::Librdkafka,
    post: "queued.min.messages=1000000: 389k → 1103k msg/s at the default 1000 ms backoff",
    claim: "The 100 B consumer's naps come from a local queue that reaches \
            queued.min.messages (100,000) in milliseconds; queued.min.messages=1000000 took \
            it from 389k to 1103k msg/s, less than fetch.queue.backoff.ms=10 (1480k).",
    cause: "a local queue that holds ten times more is full less often, so the 1000 ms \
            backoff starts less often",
    fix: "queued.min.messages=1000000 (or fetch.queue.backoff.ms=10, the better fix)",
    reproduce: Reproduce {
        probe: "probe-fetch-backoff",
        exists: true,
        command: "probe-fetch-backoff --brokers 127.0.0.1:9092 --backoff-ms 1000 \
                  --queued-min-messages 1000000",
    },
    expected_shape: "fewer idle slots and a clear speed-up at the raised setting",
    rule: "the default naps in every rep (Queue-full backoffs), the raised setting's idle \
           share at most 0.5x the default's (medians), and ≥ 1.3x the default's msg/s with \
           ranges apart (≥ 3 reps)",
    rule_fn: "findings::queued_min_messages::decide",
    sources: &[direct("queued-min-messages-fix", "probe-fetch-backoff")],
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::findings::Outcome;

    use crate::findings::reps::of as reps;

    /// The post's rates: 389k at the default, 1103k raised.
    fn post() -> Evidence {
        Evidence {
            backoff_ms: 1000,
            raised_queued_min_messages: 1_000_000,
            default_queued_min_messages: 100_000,
            default_msgs_per_s: reps(&[380e3, 389e3, 400e3]),
            raised_msgs_per_s: reps(&[1.09e6, 1.103e6, 1.12e6]),
            default_queue_full_backoffs: reps(&[12.0, 11.0, 12.0]),
            default_idle_share: reps(&[0.4, 0.42, 0.45]),
            raised_idle_share: reps(&[0.05, 0.06, 0.08]),
        }
    }

    #[test]
    fn the_posts_figures_hold() {
        let v = decide(&post());
        assert_eq!(v.outcome, Outcome::Holds, "{v:#?}");
    }

    #[test]
    fn faster_but_still_napping_does_not_hold() {
        let e = Evidence {
            raised_idle_share: reps(&[0.35, 0.4, 0.42]),
            ..post()
        };
        assert_eq!(decide(&e).outcome, Outcome::DoesNotHold);
    }

    #[test]
    fn no_speedup_does_not_hold_and_no_naps_cannot_tell() {
        let e = Evidence {
            raised_msgs_per_s: reps(&[300e3, 305e3, 310e3]),
            ..post()
        };
        assert_eq!(decide(&e).outcome, Outcome::DoesNotHold);
        // Within the noise: no difference shown either way.
        let e = Evidence {
            raised_msgs_per_s: reps(&[370e3, 385e3, 390e3]),
            ..post()
        };
        assert_eq!(decide(&e).outcome, Outcome::CannotTell);
        let e = Evidence {
            default_idle_share: reps(&[0.0, 0.0, 0.0]),
            ..post()
        };
        assert_eq!(decide(&e).outcome, Outcome::CannotTell);
        let e = Evidence {
            raised_queued_min_messages: 100_000,
            ..post()
        };
        assert_eq!(decide(&e).outcome, Outcome::CannotTell);
    }
}
