//! `fetch-backoff`: Gap 2: the consumer that took naps (fetch.queue.backoff.ms).
//!
//! The mechanism: a partition's local queue reaches queued.min.messages, the fetcher backs
//! off for fetch.queue.backoff.ms (`Fetch backoff for 1000ms … Local: Queue full` in its
//! debug=fetch log), and with the queue drained in milliseconds the consumer sits idle for
//! the rest of the backoff. The rule asks for all three: the Queue-full backoffs and the
//! idle time at the slow setting in every rep, and a real speed-up at the fast one.

use super::finding::{direct, indirect, Finding, Reproduce, Side};
use super::reps::{check_at_least, check_every_rep, Reps};
use super::verdict::{CheckState, Verdict};
use crate::vocab::units;
use serde::{Deserialize, Serialize};

/// The speed-up the fast setting must show, with apart ranges. The post saw 3.8x on 32
/// vCPUs; 1.3x is a clear effect that a 2-core machine still shows.
pub const MIN_SPEEDUP: f64 = 1.3;

/// What a probe (or a pair of captures) measured at the two settings, per rep.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Evidence {
    /// fetch.queue.backoff.ms of the slow setting (librdkafka's default, 1000).
    pub slow_backoff_ms: u64,
    /// fetch.queue.backoff.ms of the fast setting (the post's fix, 10).
    pub fast_backoff_ms: u64,
    pub slow_msgs_per_s: Reps,
    pub fast_msgs_per_s: Reps,
    /// `Fetch backoff … Local: Queue full` lines inside each slow rep's window.
    pub slow_queue_full_backoffs: Reps,
    /// Seconds of each slow rep's window in which no message arrived (100 ms slots).
    pub slow_idle_s: Reps,
    pub slow_window_s: Reps,
    /// The same at the fast setting, shown beside (not required).
    pub fast_queue_full_backoffs: Reps,
    pub fast_idle_s: Reps,
}

/// The rule: naps at the slow setting (Queue-full backoffs and idle time in every rep) and a
/// real speed-up at the fast one.
pub fn decide(e: &Evidence) -> Verdict {
    let (slow, fast) = (e.slow_backoff_ms, e.fast_backoff_ms);
    if slow <= fast {
        return Verdict::cannot_tell(
            &FINDING,
            format!(
                "only fetch.queue.backoff.ms={slow} was measured: the rule compares a slow \
                 setting with a faster one (e.g. --backoff-ms 1000,10)"
            ),
        );
    }
    let mut checks = vec![
        check_every_rep(
            format!("the fetcher backs off on a full local queue at {slow} ms"),
            &e.slow_queue_full_backoffs,
            |n| n > 0.0,
            |n| format!("{} Queue-full backoffs", units::count(n)),
        ),
        check_every_rep(
            format!("the consumer naps at {slow} ms (100 ms slots with no message)"),
            &e.slow_idle_s,
            |s| s > 0.0,
            units::seconds,
        ),
        check_at_least(
            format!("{fast} ms reads at least {MIN_SPEEDUP}x faster"),
            &e.fast_msgs_per_s,
            &e.slow_msgs_per_s,
            MIN_SPEEDUP,
            units::msgs_per_s,
        ),
    ];
    // No rep's queue ever filled: the fetcher, not poll(), was the slower side, so the
    // backoff never ran. That says nothing about what it costs when it runs: not a DOES NOT
    // HOLD (the post's broker had 7 cores of its own and out-fetched the application).
    let never_filled = !e.slow_queue_full_backoffs.is_empty()
        && e.slow_queue_full_backoffs
            .values()
            .iter()
            .all(|n| *n == 0.0);
    if never_filled {
        for c in &mut checks[..2] {
            if c.state == CheckState::Failed {
                c.state = CheckState::Undecided;
            }
        }
        checks[0].detail.push_str(&format!(
            ": the local queue never reached queued.min.messages, so the backoff never ran: \
             the application ({}) drained it as fast as the fetcher filled it; the finding \
             needs a fetcher faster than poll() (the post's broker had 7 cores of its own), \
             or -X queued.min.messages=10000 to take the race out",
            units::msgs_per_s(e.slow_msgs_per_s.median().unwrap_or(0.0))
        ));
    }
    let mut warnings = e
        .slow_msgs_per_s
        .outlier_warnings(&format!("msg/s at {slow} ms"), units::msgs_per_s);
    warnings.extend(
        e.fast_msgs_per_s
            .outlier_warnings(&format!("msg/s at {fast} ms"), units::msgs_per_s),
    );
    Verdict::from_checks(&FINDING, checks, e, || {
        let m = |r: &Reps| r.median().unwrap_or(0.0);
        format!(
            "at fetch.queue.backoff.ms={slow} the fetcher backed off {} times on a full local \
             queue (median) and no message arrived for {} of a {} window; at {fast} ms the \
             consumer read {} faster ({} → {}): a partition's local queue reaches \
             queued.min.messages, so librdkafka stops fetching it for fetch.queue.backoff.ms",
            units::count(m(&e.slow_queue_full_backoffs)),
            units::seconds(m(&e.slow_idle_s)),
            units::seconds(m(&e.slow_window_s)),
            units::times(m(&e.fast_msgs_per_s) / m(&e.slow_msgs_per_s)),
            units::msgs_per_s(m(&e.slow_msgs_per_s)),
            units::msgs_per_s(m(&e.fast_msgs_per_s)),
        )
    })
    .with_warnings(warnings)
}

pub const FINDING: Finding = Finding {
    id: "fetch-backoff",
    title: "Gap 2: the consumer that took naps (fetch.queue.backoff.ms)",
    side: Side::Librdkafka,
    post: "1000 ms backoff naps: 389k → 1.48M msg/s at 10 ms (3.8x)",
    claim: "The 100 B consumer ran at 389k msg/s on 0.46 cores, per-second counts lumpy \
            (457k, 571k, 400k, then 53k). `Fetch backoff for 1000ms: Local: Queue full`. \
            fetch.queue.backoff.ms=10: 1.48M msg/s (3.8x); =0: 948k (spins); =100: 1338k.",
    cause: "when a partition's local queue reaches queued.min.messages (100,000), \
            librdkafka stops fetching it for fetch.queue.backoff.ms (1000 ms by default) \
            while the application drains the queue in milliseconds",
    fix: "fetch.queue.backoff.ms=10",
    reproduce: Reproduce {
        probe: "probe-fetch-backoff",
        exists: true,
        command: "probe-fetch-backoff --brokers 127.0.0.1:9092 --backoff-ms 1000,10",
    },
    expected_shape: "Queue-full backoffs and idle seconds at 1000 ms; none at 10 ms, and a \
                     clear speed-up",
    rule: "in every rep of the slow setting, Queue-full backoffs and idle 100 ms slots; the \
           fast setting ≥ 1.3x the slow one's msg/s with min/max ranges apart (≥ 3 reps); no \
           backoff in any rep (the queue never filled): CANNOT TELL",
    rule_fn: "findings::fetch_backoff::decide",
    sources: &[
        direct("fetch-backoff", "probe-fetch-backoff"),
        direct("fetch-queue-backoff", "analyze-fetch-log"),
        // Statistics show the local queue at queued.min.messages with the receive rate in
        // bursts, but not the backoff itself: a debug=fetch log does.
        indirect("fetch-queue-backoff", "analyze-stats"),
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::findings::Outcome;

    use crate::findings::reps::of as reps;

    /// The post's figures: 389k at 1000 ms, 1.48M at 10 ms, naps seen.
    fn post() -> Evidence {
        Evidence {
            slow_backoff_ms: 1000,
            fast_backoff_ms: 10,
            slow_msgs_per_s: reps(&[380e3, 389e3, 400e3]),
            fast_msgs_per_s: reps(&[1.45e6, 1.48e6, 1.50e6]),
            slow_queue_full_backoffs: reps(&[12.0, 11.0, 12.0]),
            slow_idle_s: reps(&[2.1, 1.9, 2.4]),
            slow_window_s: reps(&[5.0, 5.1, 5.0]),
            ..Evidence::default()
        }
    }

    #[test]
    fn the_posts_figures_hold() {
        let v = decide(&post());
        assert_eq!(v.outcome, Outcome::Holds, "{v:#?}");
        assert!(v.reason.contains("queued.min.messages"), "{}", v.reason);
        assert!(!v.reason.contains("spins"), "the rule never measured 0 ms");
        assert_eq!(v.finding, "fetch-backoff");
    }

    #[test]
    fn a_queue_that_never_filled_cannot_tell_even_with_a_speedup() {
        // No backoff ran, so a speed-up is not this mechanism's: never a HOLDS.
        let e = Evidence {
            slow_queue_full_backoffs: reps(&[0.0, 0.0, 0.0]),
            ..post()
        };
        let v = decide(&e);
        assert_eq!(v.outcome, Outcome::CannotTell, "{v:#?}");
        assert!(
            v.reason.contains("never reached queued.min.messages"),
            "{}",
            v.reason
        );
        assert!(
            v.reason.contains("queued.min.messages=10000"),
            "{}",
            v.reason
        );
    }

    #[test]
    fn backoffs_without_naps_do_not_hold() {
        // The backoff ran in every rep, yet messages kept arriving in every 100 ms slot:
        // the queue it left was enough, and the nap the post saw did not happen.
        let e = Evidence {
            slow_idle_s: reps(&[0.0, 0.0, 0.0]),
            ..post()
        };
        let v = decide(&e);
        assert_eq!(v.outcome, Outcome::DoesNotHold, "{v:#?}");
        assert!(v.reason.contains("naps"), "{}", v.reason);
    }

    #[test]
    fn a_speedup_within_the_noise_cannot_tell() {
        // Medians 1.5x apart, but one slow rep reached the fast range.
        let e = Evidence {
            slow_msgs_per_s: reps(&[1.0e6, 1.46e6, 0.9e6]),
            ..post()
        };
        let v = decide(&e);
        assert_eq!(v.outcome, Outcome::CannotTell, "{v:#?}");
        assert!(v.reason.contains("overlap"));
    }

    #[test]
    fn one_rep_is_not_a_median() {
        let e = Evidence {
            slow_msgs_per_s: reps(&[389e3]),
            fast_msgs_per_s: reps(&[1.48e6]),
            slow_queue_full_backoffs: reps(&[12.0]),
            slow_idle_s: reps(&[2.0]),
            ..post()
        };
        let v = decide(&e);
        assert_eq!(v.outcome, Outcome::CannotTell);
        assert!(v.checks.iter().all(|c| c.state != CheckState::Failed));
    }

    #[test]
    fn one_setting_is_nothing_to_compare() {
        let e = Evidence {
            fast_backoff_ms: 1000,
            ..post()
        };
        let v = decide(&e);
        assert_eq!(v.outcome, Outcome::CannotTell);
        assert!(v.reason.contains("only fetch.queue.backoff.ms=1000"));
    }

    #[test]
    fn a_consumer_whose_queue_never_fills_cannot_tell() {
        // A run of reproduce on this 2-core machine (results 20261201T104248Z: 2.15M msg/s): the broker (one core) fetched
        // slower than poll() drained, the queue never filled, nothing napped.
        let e = Evidence {
            slow_queue_full_backoffs: reps(&[0.0, 0.0, 0.0]),
            slow_idle_s: reps(&[0.0, 0.0, 0.0]),
            slow_msgs_per_s: reps(&[1.6e6, 1.61e6, 1.62e6]),
            fast_msgs_per_s: reps(&[1.6e6, 1.62e6, 1.63e6]),
            ..post()
        };
        let v = decide(&e);
        assert_eq!(v.outcome, Outcome::CannotTell, "{v:#?}");
        assert!(
            v.reason.contains("application (1.61M msg/s)"),
            "{}",
            v.reason
        );
    }
}
