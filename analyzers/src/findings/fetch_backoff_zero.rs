//! `fetch-backoff-zero`: fetch.queue.backoff.ms=0 is worse than 10 ms.
//!
//! The post: 948k msg/s at 0 ms against 1480k at 10 ms, "my guess is the fetcher then keeps
//! re-checking a full queue". The rule asks for the rate (10 ms ≥ [`MIN_PENALTY`]x 0 ms,
//! min/max ranges apart) and for the mechanism the post suggests, seen in the consumer's own
//! debug=fetch log: more `Fetch backoff … Local: Queue full` decisions per second at 0 ms
//! than at 10 ms, at least [`MIN_RECHECKS`]x, in the medians. Where the log does not show the
//! re-checks the answer is CANNOT TELL (the post's cause was a guess, and the rate alone
//! does not name it).

use super::finding::{direct, Finding, Reproduce, Side};
use super::reps::{check_at_least, Reps, MIN_REPS};
use super::verdict::{Check, Verdict};
use crate::vocab::units;
use serde::{Deserialize, Serialize};

/// 10 ms over 0 ms, with apart ranges (the post: 1.56x).
pub const MIN_PENALTY: f64 = 1.1;
/// Queue-full backoff decisions per second at 0 ms over those at 10 ms.
pub const MIN_RECHECKS: f64 = 2.0;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Evidence {
    /// The small nonzero backoff it is compared with (the post's 10).
    pub low_backoff_ms: u64,
    pub zero_msgs_per_s: Reps,
    pub low_msgs_per_s: Reps,
    /// Queue-full backoff lines per second of the window, per rep.
    pub zero_queue_full_per_s: Reps,
    pub low_queue_full_per_s: Reps,
}

pub fn decide(e: &Evidence) -> Verdict {
    let low = e.low_backoff_ms;
    let rate = check_at_least(
        format!("fetch.queue.backoff.ms={low} reads ≥ {MIN_PENALTY}x what 0 reads"),
        &e.low_msgs_per_s,
        &e.zero_msgs_per_s,
        MIN_PENALTY,
        units::msgs_per_s,
    );
    let condition = format!(
        "at 0 ms the fetcher re-checks its full queue: ≥ {MIN_RECHECKS}x the Queue-full \
         backoffs per second of {low} ms (debug=fetch)"
    );
    let (z, l) = (
        e.zero_queue_full_per_s.median(),
        e.low_queue_full_per_s.median(),
    );
    let shown = format!(
        "{} against {} per second",
        e.zero_queue_full_per_s.show(units::count),
        e.low_queue_full_per_s.show(units::count)
    );
    let mechanism = match (z, l) {
        _ if e.zero_queue_full_per_s.n() < MIN_REPS || e.low_queue_full_per_s.n() < MIN_REPS => {
            Check::undecided(condition, format!("{shown}: {MIN_REPS} reps are needed"))
        }
        (Some(z), Some(l)) if z > 0.0 && z >= MIN_RECHECKS * l => Check::passed(condition, shown),
        _ => Check::undecided(
            condition,
            format!(
                "{shown}: the log does not show the re-checks, so the cause of the rate is not \
                 shown (the post's explanation was a guess)"
            ),
        ),
    };
    Verdict::from_checks(&FINDING, vec![rate, mechanism], e, || {
        let m = |r: &Reps| r.median().unwrap_or(0.0);
        format!(
            "at fetch.queue.backoff.ms=0 the consumer read {} against {} at {low} ms, while its \
             fetcher logged {} Queue-full backoffs a second against {}: with no backoff it \
             keeps re-checking a full local queue instead of fetching",
            units::msgs_per_s(m(&e.zero_msgs_per_s)),
            units::msgs_per_s(m(&e.low_msgs_per_s)),
            units::count(m(&e.zero_queue_full_per_s)),
            units::count(m(&e.low_queue_full_per_s)),
        )
    })
}

pub const FINDING: Finding = Finding {
    id: "fetch-backoff-zero",
    title: "fetch.queue.backoff.ms=0 is worse than 10 ms",
    side: Side::Librdkafka,
    post: "=0 948k msg/s against =10 1480k (the fetcher re-checks a full queue, a guess)",
    claim: "fetch.queue.backoff.ms=10 removes the naps: 389k to 1.48M msg/s. Setting it to 0 \
            is worse than 10 ms (948k); the post's guess is that the fetcher then keeps \
            re-checking a full queue.",
    cause: "with no backoff, a partition whose local queue is at queued.min.messages is \
            re-checked on every fetcher pass instead of fetched",
    fix: "fetch.queue.backoff.ms=10, not 0",
    reproduce: Reproduce {
        probe: "probe-fetch-backoff",
        exists: true,
        command: "probe-fetch-backoff --brokers 127.0.0.1:9092 --backoff-ms 1000,10,0",
    },
    expected_shape: "0 ms slower than 10 ms, with many more Queue-full backoff lines a second",
    rule: "10 ms ≥ 1.1x 0 ms's msg/s with ranges apart (≥ 3 reps), and at 0 ms ≥ 2x the \
           Queue-full backoffs per second of 10 ms (medians); the log not showing that: \
           CANNOT TELL",
    rule_fn: "findings::fetch_backoff_zero::decide",
    sources: &[direct("fetch-backoff-zero", "probe-fetch-backoff")],
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::findings::Outcome;

    use crate::findings::reps::of as reps;

    /// The post's rates: 948k at 0 ms, 1480k at 10 ms; the re-checks as a probe counts them.
    fn post() -> Evidence {
        Evidence {
            low_backoff_ms: 10,
            zero_msgs_per_s: reps(&[930e3, 948e3, 960e3]),
            low_msgs_per_s: reps(&[1.46e6, 1.48e6, 1.5e6]),
            zero_queue_full_per_s: reps(&[900.0, 1000.0, 1100.0]),
            low_queue_full_per_s: reps(&[40.0, 50.0, 60.0]),
        }
    }

    #[test]
    fn the_posts_figures_hold() {
        let v = decide(&post());
        assert_eq!(v.outcome, Outcome::Holds, "{v:#?}");
        assert!(v.reason.contains("re-checking"), "{}", v.reason);
    }

    #[test]
    fn zero_as_fast_as_ten_does_not_hold() {
        let e = Evidence {
            zero_msgs_per_s: reps(&[1.6e6, 1.62e6, 1.65e6]),
            ..post()
        };
        assert_eq!(decide(&e).outcome, Outcome::DoesNotHold);
    }

    #[test]
    fn slower_without_the_rechecks_in_the_log_cannot_tell() {
        let e = Evidence {
            zero_queue_full_per_s: reps(&[50.0, 55.0, 60.0]),
            ..post()
        };
        let v = decide(&e);
        assert_eq!(v.outcome, Outcome::CannotTell, "{v:#?}");
        assert!(
            v.reason.contains("does not show the re-checks"),
            "{}",
            v.reason
        );
    }

    #[test]
    fn one_rep_cannot_tell() {
        let e = Evidence {
            zero_msgs_per_s: reps(&[948e3]),
            low_msgs_per_s: reps(&[1.48e6]),
            zero_queue_full_per_s: reps(&[1000.0]),
            low_queue_full_per_s: reps(&[50.0]),
            ..post()
        };
        assert_eq!(decide(&e).outcome, Outcome::CannotTell);
    }
}
