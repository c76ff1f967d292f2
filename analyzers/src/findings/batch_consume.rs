//! `batch-consume`: poll() hands over one message per call, so the application thread is
//! the limit; the batch API takes that cost away.
//!
//! The mechanism: with the fetch backoff fixed (fetch.queue.backoff.ms=10), rust-rdkafka's
//! poll() returns one message per call, so the thread that calls it saturates a core; the
//! batch API (`rd_kafka_consume_batch_queue`, 500 per call) reads faster on the same topic.
//! The rule asks for both: the application thread at ≥ [`SATURATED_CORES`] in every poll()
//! rep, and the batch API faster with min/max ranges apart. Where no consumer thread is
//! saturated (a 2-core machine shared with the broker), the consumer never reached its own
//! limit and the rule says CANNOT TELL with the cores it measured. What limits the batch API
//! next (librdkafka's broker thread) is its own finding,
//! [`super::librdkafka_broker_thread_limit`].

use super::finding::{direct, indirect, Finding, Reproduce, Side};
use super::reps::{check_at_least, Reps, MIN_REPS};
use super::verdict::{Check, Verdict};
use crate::vocab::units;
use serde::{Deserialize, Serialize};

/// A thread at or above this many cores is saturated: it is the limit. One threshold for
/// every consumer thread finding (the post's saturated threads sat at 0.94–0.98 cores).
pub use super::saturation::SATURATED_CORES;

/// The gain the batch API must show over poll(), with apart ranges. The post: 1.48M →
/// 2.02M msg/s, 1.37x.
pub const MIN_GAIN: f64 = 1.2;

/// The thread name of the loop that calls poll() or the batch API in kgap's probes.
pub const APP_THREAD: &str = "kgap-app";

/// What a probe measured with poll() and the batch API on one topic, per rep.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Evidence {
    /// fetch.queue.backoff.ms of both (the post's fix, 10).
    pub backoff_ms: u64,
    /// Messages per batch call (the post: 500).
    pub batch_size: u64,
    pub poll_msgs_per_s: Reps,
    pub batch_msgs_per_s: Reps,
    /// Cores of the thread calling poll(), per poll() rep.
    pub poll_app_cores: Reps,
    /// The busiest other consumer thread under poll() (the embedded mock's excluded), and
    /// its cores per rep.
    pub poll_other_thread: String,
    pub poll_other_cores: Reps,
    /// Cores of the whole consumer under poll() (the mock's thread excluded).
    pub poll_consumer_cores: Reps,
    /// Cores of the thread calling the batch API (shown beside).
    pub batch_app_cores: Reps,
    /// Cores of the machine the consumer ran on.
    pub machine_cores: usize,
    /// Cores the consumer may run on: its CPU affinity (`--cpus`), all of the machine's when
    /// not pinned; 0 when not known (results written before it was recorded).
    #[serde(default)]
    pub client_cores: usize,
}

/// One thread's cores against [`SATURATED_CORES`] in every rep, beside the busiest other
/// thread: what a "this thread is the limit" check needs.
#[derive(Debug, Clone, Copy)]
pub struct ThreadLimit<'a> {
    /// The thread the finding names (`kgap-app`, `rdk:broker`).
    pub thread: &'a str,
    pub cores: &'a Reps,
    /// The busiest other consumer thread and its cores in the same reps.
    pub other: &'a str,
    pub other_cores: &'a Reps,
    /// The whole consumer's cores in the same reps.
    pub consumer_cores: &'a Reps,
    pub machine_cores: usize,
    /// Cores the consumer may run on (0: not known).
    pub client_cores: usize,
}

/// The check "`thread` is saturated (≥ [`SATURATED_CORES`]) in every rep": passed when it is;
/// failed when it is in no rep and the other thread is saturated in every rep (that one is
/// the limit); undecided with too few reps, reps that disagree, or no consumer thread
/// saturated at all (the consumer was held back from outside: the broker or other load on
/// the machine's cores), with the cores measured.
pub fn check_thread_limit(condition: impl Into<String>, t: &ThreadLimit) -> Check {
    let condition = condition.into();
    let sat = |x: f64| x >= SATURATED_CORES;
    let n = t.cores.n();
    let hot = t.cores.values().iter().filter(|&&x| sat(x)).count();
    let shown = format!("{} {}", t.thread, t.cores.show(units::cores));
    if n == 0 {
        return Check::undecided(condition, format!("{} not measured", t.thread));
    }
    if n < MIN_REPS {
        return Check::undecided(
            condition,
            format!("{shown}: {MIN_REPS} reps are needed to call it (--reps {MIN_REPS})"),
        );
    }
    if hot == n {
        return Check::passed(condition, format!("{shown}, saturated in {n} of {n} reps"));
    }
    if hot > 0 {
        return Check::undecided(
            condition,
            format!(
                "{shown}, saturated in {hot} of {n} reps: the reps disagree; {}",
                super::reps::MORE_REPS_HINT
            ),
        );
    }
    let other_hot = t.other_cores.values().iter().filter(|&&x| sat(x)).count();
    let other = format!("{} {}", t.other, t.other_cores.show(units::cores));
    if other_hot == t.other_cores.n() && other_hot >= MIN_REPS {
        return Check::failed(
            condition,
            format!("{shown}; {other} was the saturated thread in every rep: it is the limit"),
        );
    }
    // Pinned to fewer cores than it has busy threads, the consumer fills its own cores: its
    // threads share them, and none can reach a core alone. That is this placement's limit,
    // not the finding's thread, and not load from outside.
    let k = t.client_cores;
    let filled = k > 0
        && k < t.machine_cores
        && t.consumer_cores.n() > 0
        && t.consumer_cores
            .values()
            .iter()
            .all(|&c| c >= SATURATED_CORES * k as f64);
    if filled {
        let (cores, them) = if k == 1 {
            ("the 1 core".to_string(), "that core")
        } else {
            (format!("the {k} cores"), "those cores")
        };
        return Check::undecided(
            condition,
            format!(
                "{shown}, {other}; the whole consumer used {} of {cores} it was pinned to \
                 (--cpus): its threads shared {them}, so none could reach {SATURATED_CORES} \
                 cores alone; the finding needs a core for each busy consumer thread beside \
                 the broker's (3 cores or more: scripts/kafka up --cpus 0, --cpus 1-2)",
                t.consumer_cores.show(units::cores),
            ),
        );
    }
    Check::undecided(
        condition,
        format!(
            "{shown}, {other}; no consumer thread reached {SATURATED_CORES} cores and the \
             whole consumer used {} of this {}-core machine: it was held back from outside \
             (the broker or other load on the same cores), so its own limit was not reached \
             here; pin the broker and the client apart (scripts/kafka up --cpus, --cpus) or \
             use a machine with more cores",
            t.consumer_cores.show(units::cores),
            t.machine_cores
        ),
    )
}

/// The rule: under poll() the application thread is the limit (saturated in every rep) and
/// the batch API reads ≥ [`MIN_GAIN`] × poll() with min/max ranges apart.
pub fn decide(e: &Evidence) -> Verdict {
    let checks = vec![
        check_thread_limit(
            format!("under poll() the application thread is the limit (≥ {SATURATED_CORES} cores)"),
            &ThreadLimit {
                thread: APP_THREAD,
                cores: &e.poll_app_cores,
                other: &e.poll_other_thread,
                other_cores: &e.poll_other_cores,
                consumer_cores: &e.poll_consumer_cores,
                machine_cores: e.machine_cores,
                client_cores: e.client_cores,
            },
        ),
        check_at_least(
            format!(
                "the batch API ({} per call) reads at least {MIN_GAIN}x poll()",
                e.batch_size
            ),
            &e.batch_msgs_per_s,
            &e.poll_msgs_per_s,
            MIN_GAIN,
            units::msgs_per_s,
        ),
    ];
    let mut warnings = e
        .poll_msgs_per_s
        .outlier_warnings("msg/s with poll()", units::msgs_per_s);
    warnings.extend(
        e.batch_msgs_per_s
            .outlier_warnings("msg/s with the batch API", units::msgs_per_s),
    );
    Verdict::from_checks(&FINDING, checks, e, || {
        let m = |r: &Reps| r.median().unwrap_or(0.0);
        format!(
            "at fetch.queue.backoff.ms={} the thread calling poll() sat at {} ({}): one \
             message per call is its limit; the batch API, {} per call, read {} ({}, the \
             application thread then at {})",
            e.backoff_ms,
            units::cores(m(&e.poll_app_cores)),
            units::msgs_per_s(m(&e.poll_msgs_per_s)),
            e.batch_size,
            units::msgs_per_s(m(&e.batch_msgs_per_s)),
            units::times(m(&e.batch_msgs_per_s) / m(&e.poll_msgs_per_s)),
            units::cores(m(&e.batch_app_cores)),
        )
    })
    .with_warnings(warnings)
}

pub const FINDING: Finding = Finding {
    id: "batch-consume",
    title: "poll() one message per call: the application thread is the limit",
    side: Side::Librdkafka,
    post: "poll() limits at 1.48M msg/s, its thread saturated; the batch API reads 2.02M (1.37x)",
    claim: "After the backoff fix the polling thread was saturated: rust-rdkafka's poll() \
            returns one message per call, Java's up to 500. rd_kafka_consume_batch_queue \
            at 500 per call: 1.48M → 2.02M msg/s (5.2x where it started).",
    cause: "one message per poll() call costs the application thread per message, and \
            that thread saturates a core first",
    fix: "consume with the batch API (rd_kafka_consume_batch_queue, ~500 per call)",
    reproduce: Reproduce {
        probe: "probe-batch-consume",
        exists: true,
        command: "probe-batch-consume --brokers 127.0.0.1:9092 --api poll,fixed --backoff-ms 10",
    },
    expected_shape: "the application thread saturated under poll(); the batch API faster \
                     on the same topic",
    rule: "under poll() the application thread at ≥ 0.9 cores in every rep (no consumer \
           thread saturated: CANNOT TELL, the consumer was held back from outside; another \
           thread saturated instead: DOES NOT HOLD), and the batch API ≥ 1.2x poll()'s msg/s \
           with min/max ranges apart (≥ 3 reps)",
    rule_fn: "findings::batch_consume::decide",
    sources: &[
        direct("batch-consume", "probe-batch-consume"),
        indirect("app-thread-saturated", "analyze-thread-cpu"),
        // Fetch queues full while lag grows: the application is the limit. (Empty queues
        // with lag growing point at the fetcher, which a throttle or the network also
        // explain: no evidence for a finding.)
        indirect("fetch-queue-full-lag-growing", "analyze-stats"),
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::findings::{CheckState, Outcome};

    use crate::findings::reps::of as reps;

    /// The post's figures: poll() 1.48M with its thread saturated, the batch API 2.02M.
    fn post() -> Evidence {
        Evidence {
            backoff_ms: 10,
            batch_size: 500,
            poll_msgs_per_s: reps(&[1.46e6, 1.48e6, 1.50e6]),
            batch_msgs_per_s: reps(&[2.00e6, 2.02e6, 2.05e6]),
            poll_app_cores: reps(&[0.97, 0.98, 0.96]),
            poll_other_thread: "rdk:broker1".into(),
            poll_other_cores: reps(&[0.6, 0.62, 0.58]),
            poll_consumer_cores: reps(&[1.7, 1.72, 1.69]),
            batch_app_cores: reps(&[0.4, 0.42, 0.41]),
            machine_cores: 32,
            client_cores: 32,
        }
    }

    /// The project's recorded run on Kafka 4.3.1 (docs/probe-batch-consume.md, 2026-11-30,
    /// load 5–6 on 2 cores): poll 811k (672k–985k), batch-fixed 1.11M (972k–1.32M), the
    /// application thread at 0.25 cores, rdk:broker 0.19, the consumer 0.4–0.6 cores. The old
    /// probe rule said HOLDS ("busiest thread"), `rules::batch_consume` said no.
    fn recorded_2026_11_30() -> Evidence {
        Evidence {
            backoff_ms: 10,
            batch_size: 500,
            poll_msgs_per_s: reps(&[672e3, 811e3, 985e3]),
            batch_msgs_per_s: reps(&[972e3, 1.11e6, 1.32e6]),
            poll_app_cores: reps(&[0.25, 0.25, 0.25]),
            poll_other_thread: "rdk:broker1".into(),
            poll_other_cores: reps(&[0.19, 0.19, 0.19]),
            poll_consumer_cores: reps(&[0.4, 0.5, 0.6]),
            batch_app_cores: reps(&[0.11, 0.11, 0.11]),
            machine_cores: 2,
            client_cores: 2,
        }
    }

    #[test]
    fn the_posts_figures_hold() {
        let v = decide(&post());
        assert_eq!(v.outcome, Outcome::Holds, "{v:#?}");
        assert_eq!(v.finding, "batch-consume");
        assert!(v.reason.contains("one message per call"), "{}", v.reason);
    }

    #[test]
    fn the_recorded_run_that_the_old_probe_called_a_hold_cannot_tell() {
        let v = decide(&recorded_2026_11_30());
        assert_eq!(v.outcome, Outcome::CannotTell, "{v:#?}");
        // The reason is the measured one: no thread was saturated on this machine.
        assert!(
            v.reason.contains("kgap-app 0.25 (0.25–0.25) cores"),
            "{}",
            v.reason
        );
        assert!(v.reason.contains("2-core machine"), "{}", v.reason);
        // And its gain was inside the noise as well.
        assert_eq!(v.checks[1].state, CheckState::Undecided);
        assert!(
            v.checks[1].detail.contains("overlap"),
            "{}",
            v.checks[1].detail
        );
    }

    #[test]
    fn a_consumer_that_filled_the_one_core_it_was_pinned_to_says_so() {
        // scripts/reproduce on this 2-core machine, quiet (2026-12-01): the broker on cpu 0,
        // the probe on cpu 1; poll() at 1.96M, the batch API at 2.81M (1.43x, apart), the app
        // thread 0.59 and rdk:broker1 0.40: together the one core the consumer had.
        let e = Evidence {
            poll_msgs_per_s: reps(&[1.87e6, 1.96e6, 2.01e6]),
            batch_msgs_per_s: reps(&[2.75e6, 2.81e6, 2.95e6]),
            poll_app_cores: reps(&[0.58, 0.59, 0.60]),
            poll_other_cores: reps(&[0.39, 0.40, 0.40]),
            poll_consumer_cores: reps(&[1.0, 1.0, 1.0]),
            client_cores: 1,
            ..recorded_2026_11_30()
        };
        let v = decide(&e);
        assert_eq!(v.outcome, Outcome::CannotTell, "{v:#?}");
        let d = &v.checks[0].detail;
        assert!(d.contains("of the 1 core it was pinned to"), "{d}");
        assert!(d.contains("3 cores or more"), "{d}");
        assert!(!d.contains("held back from outside"), "{d}");
        // Unpinned (or not known), the same cores are load from outside.
        let unpinned = decide(&Evidence {
            client_cores: 2,
            poll_consumer_cores: reps(&[1.0, 1.0, 1.0]),
            ..e.clone()
        });
        assert!(
            unpinned.checks[0].detail.contains("held back from outside"),
            "{:?}",
            unpinned.checks[0]
        );
    }

    #[test]
    fn a_clear_gain_without_a_saturated_thread_still_cannot_tell() {
        // Ranges apart and 1.37x: the number alone, without the mechanism.
        let e = Evidence {
            poll_msgs_per_s: reps(&[800e3, 811e3, 820e3]),
            batch_msgs_per_s: reps(&[1.10e6, 1.11e6, 1.12e6]),
            ..recorded_2026_11_30()
        };
        let v = decide(&e);
        assert_eq!(v.checks[1].state, CheckState::Passed);
        assert_eq!(v.outcome, Outcome::CannotTell, "{v:#?}");
    }

    #[test]
    fn another_saturated_thread_under_poll_does_not_hold() {
        let e = Evidence {
            poll_app_cores: reps(&[0.5, 0.55, 0.52]),
            poll_other_cores: reps(&[0.95, 0.96, 0.94]),
            ..post()
        };
        let v = decide(&e);
        assert_eq!(v.outcome, Outcome::DoesNotHold, "{v:#?}");
        assert!(v.reason.contains("rdk:broker1"), "{}", v.reason);
    }

    #[test]
    fn no_gain_from_the_batch_api_does_not_hold() {
        let e = Evidence {
            batch_msgs_per_s: reps(&[1.20e6, 1.22e6, 1.25e6]),
            ..post()
        };
        let v = decide(&e);
        assert_eq!(v.outcome, Outcome::DoesNotHold);
        assert!(v.reason.contains("the other way round"), "{}", v.reason);
    }

    #[test]
    fn one_rep_or_reps_that_disagree_cannot_tell() {
        let one = Evidence {
            poll_msgs_per_s: reps(&[1.48e6]),
            batch_msgs_per_s: reps(&[2.02e6]),
            poll_app_cores: reps(&[0.97]),
            poll_other_cores: reps(&[0.6]),
            poll_consumer_cores: reps(&[1.7]),
            ..post()
        };
        let v = decide(&one);
        assert_eq!(v.outcome, Outcome::CannotTell);
        assert!(v.reason.contains("--reps 3"), "{}", v.reason);
        let mixed = Evidence {
            poll_app_cores: reps(&[0.97, 0.7, 0.95]),
            ..post()
        };
        let v = decide(&mixed);
        assert_eq!(v.outcome, Outcome::CannotTell);
        assert!(v.reason.contains("2 of 3 reps"), "{}", v.reason);
    }

    #[test]
    fn nothing_measured_cannot_tell() {
        assert_eq!(decide(&Evidence::default()).outcome, Outcome::CannotTell);
    }

    #[test]
    fn the_probes_verdict_id_files_under_this_finding() {
        let f = crate::findings::for_diagnosis(FINDING.id, None).expect("a source");
        assert_eq!(f.id, FINDING.id);
        assert!(FINDING
            .sources
            .iter()
            .any(|s| s.source == "probe-batch-consume"));
        assert_eq!(
            crate::findings::get(FINDING.id).map(|f| f.rule_fn),
            Some(FINDING.rule_fn)
        );
    }
}
