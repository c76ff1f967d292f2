//! `instances-scale-past-broker-thread`: more librdkafka instances are the lever past the
//! broker thread.
//!
//! The mechanism: one librdkafka consumer has one broker thread per broker connection, and
//! at 100 B with the batch API that thread saturates a core (the post: 0.94 cores at ~2.1M
//! msg/s). K independent instances in one process have K connections and K broker threads,
//! so in aggregate they read more, until the machine's cores run out (the post: 16 tuned
//! consumers read about 13 GB/s of 1 KB messages on 32 vCPUs). The rule asks for the
//! mechanism at K=1 (rdk:broker saturated in every rep) and, at every K the machine can
//! hold, an aggregate ≥ [`MIN_SCALE`]x K=1's with min/max ranges apart. It judges only the
//! K that fit: K broker threads need K cores besides the broker's own when the broker runs
//! on the same machine ([`judged_up_to`]); beyond that, or when the machine's cores were all
//! busy, the answer is CANNOT TELL with the measured reason.

use super::finding::{direct, Finding, Reproduce, Side};
use super::reps::{apart, check_at_least, Apart, Reps};
use super::saturation::SATURATED_CORES;
use super::thread_limit::{check_thread_limit, ThreadLimit};
use super::verdict::{Check, CheckState, Verdict};
use crate::vocab::units;
use serde::{Deserialize, Serialize};

/// The aggregate gain a judged K must show over one instance, with apart ranges.
pub const MIN_SCALE: f64 = 1.3;
/// A machine with no more idle time than this (in cores) ran out of cores.
pub const IDLE_CORES_MARGIN: f64 = 0.15;

/// One instance count, per rep.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct InstancesPoint {
    pub instances: usize,
    /// Messages per second of all instances together over one window.
    pub aggregate_msgs_per_s: Reps,
    /// The least busy instance's broker thread (the K busiest rdk:broker threads' minimum).
    pub broker_thread_cores_min: Reps,
    /// The busiest application thread (calling the batch API).
    pub app_cores_max: Reps,
    /// The consumer process's cores (the embedded mock's thread excluded).
    pub process_cores: Reps,
    /// Busy cores of the whole machine over the window (every process: the broker too).
    pub machine_busy_cores: Reps,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Evidence {
    pub size_bytes: u64,
    /// The librdkafka API of the curve (`tuned`: the batch API, fetch.queue.backoff.ms=10).
    pub api: String,
    /// Every instance count measured, K=1 among them, in increasing K.
    pub points: Vec<InstancesPoint>,
    pub machine_cores: usize,
    /// Cores the consumer may run on: its CPU affinity (`--cpus`), all of the machine's when
    /// not pinned; 0 when not known (results written before it was recorded).
    #[serde(default)]
    pub client_cores: usize,
    /// Whether the broker ran on the same cores (a local broker or the embedded mock).
    pub broker_shares_cores: bool,
}

/// The largest K this run can judge: the cores the client may run on (its affinity, `--cpus`;
/// the machine's when not known), less one for a broker on the same cores.
pub fn judged_up_to(machine_cores: usize, client_cores: usize, broker_shares_cores: bool) -> usize {
    let cores = if client_cores > 0 {
        client_cores.min(machine_cores)
    } else {
        machine_cores
    };
    cores.saturating_sub(usize::from(broker_shares_cores))
}

/// The rule: see the module doc.
pub fn decide(e: &Evidence) -> Verdict {
    let mut checks = Vec::new();
    let Some(one) = e.points.iter().find(|p| p.instances == 1) else {
        return Verdict::cannot_tell(&FINDING, "one instance (--instances 1,…) was not measured");
    };
    checks.push(check_thread_limit(
        format!(
            "one instance's broker thread is its limit (≥ {SATURATED_CORES} cores), {} at {} B",
            e.api, e.size_bytes
        ),
        &ThreadLimit {
            thread: "rdk:broker",
            cores: &one.broker_thread_cores_min,
            other: "kgap-app",
            other_cores: &one.app_cores_max,
            consumer_cores: &one.process_cores,
            machine_cores: e.machine_cores,
            client_cores: e.client_cores,
            msgs_per_s: &one.aggregate_msgs_per_s,
            post: "rdk:broker at 0.94 cores, ~2.1M msg/s at 100 B",
        },
    ));
    let limit = judged_up_to(e.machine_cores, e.client_cores, e.broker_shares_cores);
    let pinned = e.client_cores > 0 && e.client_cores < e.machine_cores;
    let more: Vec<&InstancesPoint> = e.points.iter().filter(|p| p.instances > 1).collect();
    if more.is_empty() {
        checks.push(Check::undecided(
            "more instances read more in aggregate",
            "only one instance was measured (--instances 1,2)",
        ));
    }
    for p in &more {
        let condition = format!(
            "{} instances read ≥ {MIN_SCALE}x one instance's aggregate msg/s",
            p.instances
        );
        let shown = format!(
            "{} against {}; the machine {} of {} cores busy",
            p.aggregate_msgs_per_s.show(units::msgs_per_s),
            one.aggregate_msgs_per_s.show(units::msgs_per_s),
            p.machine_busy_cores.show(units::cores),
            e.machine_cores
        );
        if p.instances > limit {
            checks.push(Check::undecided(
                condition,
                format!(
                    "not judged: {} broker threads need {} cores and {}{} ({shown})",
                    p.instances,
                    p.instances,
                    if pinned {
                        format!(
                            "the client was pinned to {} of this machine's {} (--cpus)",
                            e.client_cores, e.machine_cores
                        )
                    } else {
                        format!("this machine has {}", e.machine_cores)
                    },
                    if e.broker_shares_cores {
                        ", one of them the broker's"
                    } else {
                        ""
                    }
                ),
            ));
            continue;
        }
        let mut c = check_at_least(
            condition,
            &p.aggregate_msgs_per_s,
            &one.aggregate_msgs_per_s,
            MIN_SCALE,
            units::msgs_per_s,
        );
        // No gain on a machine with no idle core left says the machine ran out, not that
        // instances do not scale.
        let busy = p.machine_busy_cores.median();
        let full = busy.is_some_and(|b| b >= e.machine_cores as f64 - IDLE_CORES_MARGIN);
        if c.state == CheckState::Failed && busy.is_none() {
            // Without the machine's busy cores a lack of gain cannot be told from a
            // machine that ran out.
            c = Check::undecided(
                c.condition,
                format!(
                    "{}: the machine's busy cores were not measured (a window under a tenth \
                     of a second, or no /proc/stat), so a machine that ran out cannot be \
                     ruled out",
                    c.detail
                ),
            );
        } else if c.state == CheckState::Failed && full {
            c = Check::undecided(
                c.condition,
                format!(
                    "{}: every core of the machine was busy ({} of {}), so the machine ran \
                     out, not the instances",
                    c.detail,
                    p.machine_busy_cores.show(units::cores),
                    e.machine_cores
                ),
            );
        }
        checks.push(c);
    }
    Verdict::from_checks(&FINDING, checks, e, || {
        let m = |r: &Reps| r.median().unwrap_or(0.0);
        let best = more
            .iter()
            .filter(|p| p.instances <= limit)
            .max_by_key(|p| p.instances)
            .copied()
            .unwrap_or(one);
        format!(
            "one instance's rdk:broker sat at {} at {}; {} instances, each with its own \
             connection and broker thread, read {} together ({:.2}x), judged up to {} \
             instances on this {}-core machine",
            units::cores(m(&one.broker_thread_cores_min)),
            units::msgs_per_s(m(&one.aggregate_msgs_per_s)),
            best.instances,
            units::msgs_per_s(m(&best.aggregate_msgs_per_s)),
            m(&best.aggregate_msgs_per_s) / m(&one.aggregate_msgs_per_s).max(1.0),
            limit,
            e.machine_cores
        )
    })
}

/// Whether two points' aggregates differ (for tables: `higher`, `lower`, `overlap`).
pub fn compare(a: &Reps, b: &Reps) -> &'static str {
    match apart(a, b) {
        Some(Apart::Higher) => "higher",
        Some(Apart::Lower) => "lower",
        Some(Apart::Overlap) => "overlap",
        None => "-",
    }
}

pub const FINDING: Finding = Finding {
    id: "instances-scale-past-broker-thread",
    title: "More librdkafka instances are the lever past the broker thread",
    side: Side::Librdkafka,
    post: "one broker thread per connection; 16 tuned consumers ~13 GB/s of 1 KB (32 vCPUs)",
    claim: "librdkafka builds one queue entry per fetched message on its broker thread, and \
            that thread saturates at about 2.1M msg/s; this is how librdkafka is built, and \
            the only lever the post found is more instances. Its scaling scenarios ran K \
            independent instances in one process, each with its own connection: 16 tuned \
            Rust consumers read about 13 GB/s of 1 KB messages.",
    cause: "one rdk:broker thread per broker connection does the per-message work; K \
            instances have K of them",
    fix: "more consumer instances (one process or several), up to the machine's cores",
    reproduce: Reproduce {
        probe: "probe-consumer-clients",
        exists: true,
        command: "probe-consumer-clients --brokers 127.0.0.1:9092 --client rust --sizes 100 \
                  --api tuned --instances 1,2,4",
    },
    expected_shape: "one instance's rdk:broker near a core; the aggregate rising with K until \
                     the machine's cores are busy",
    rule: "one instance's rdk:broker at ≥ 0.9 cores in every rep (≥ 3 reps), and every K the \
           machine can hold (K ≤ its cores, less one when the broker shares them) ≥ 1.3x one \
           instance's aggregate msg/s with ranges apart; K beyond that: not judged (CANNOT \
           TELL with the machine's cores); no gain with every core busy, or the machine's busy \
           cores not measured: CANNOT TELL",
    rule_fn: "findings::instances_scale_past_broker_thread::decide",
    sources: &[direct(
        "instances-scale-past-broker-thread",
        "probe-consumer-clients",
    )],
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::findings::{CheckState, Outcome};

    use crate::findings::reps::of as reps;

    fn point(k: usize, agg: [f64; 3], broker: f64, busy: f64) -> InstancesPoint {
        InstancesPoint {
            instances: k,
            aggregate_msgs_per_s: reps(&agg),
            broker_thread_cores_min: reps(&[broker - 0.01, broker, broker + 0.01]),
            app_cores_max: reps(&[0.4, 0.42, 0.45]),
            process_cores: reps(&[1.4 * k as f64, 1.45 * k as f64, 1.5 * k as f64]),
            machine_busy_cores: reps(&[busy, busy, busy]),
        }
    }

    /// The post: one tuned consumer at ~2.1M msg/s with rdk:broker at 0.94 cores (100 B),
    /// and its scaling curve to 16 instances on a c6i.8xlarge (32 vCPUs, the broker pinned
    /// apart). 16 × 1 KB consumers read ~13 GB/s, 8.8x one instance's 1.44M; the K=16
    /// figure here is that 8.8x applied to the 100 B instance, as the post gives no 100 B
    /// curve.
    fn post() -> Evidence {
        Evidence {
            size_bytes: 100,
            api: "tuned".into(),
            points: vec![
                point(1, [2.0e6, 2.02e6, 2.1e6], 0.94, 3.0),
                point(16, [17.0e6, 17.8e6, 18.2e6], 0.93, 28.0),
            ],
            machine_cores: 32,
            client_cores: 32,
            broker_shares_cores: false,
        }
    }

    #[test]
    fn the_posts_curve_holds() {
        let v = decide(&post());
        assert_eq!(v.outcome, Outcome::Holds, "{v:#?}");
        assert!(v.reason.contains("16 instances"), "{}", v.reason);
    }

    /// This machine: 2 cores, the broker on them. K=2 is past what it can hold.
    #[test]
    fn past_the_machines_cores_is_not_judged() {
        let e = Evidence {
            points: vec![
                point(1, [2.0e6, 2.02e6, 2.1e6], 0.94, 1.95),
                point(2, [2.0e6, 2.05e6, 2.1e6], 0.7, 1.99),
            ],
            machine_cores: 2,
            client_cores: 2,
            broker_shares_cores: true,
            ..post()
        };
        let v = decide(&e);
        assert_eq!(v.outcome, Outcome::CannotTell, "{v:#?}");
        assert!(
            v.reason.contains("not judged: 2 broker threads"),
            "{}",
            v.reason
        );
        assert!(
            v.reason.contains("one of them the broker's"),
            "{}",
            v.reason
        );
    }

    /// The project's run (docs/probe-consumer-clients.md shape): on 2 loaded cores one
    /// instance's broker thread never reaches a core, so costs per message decide which
    /// thread caps first.
    #[test]
    fn no_thread_at_a_core_is_decided_by_cost() {
        // The application thread (0.40–0.45 cores) spends more per message than rdk:broker
        // (0.35): on a core each the app caps first, so the broker thread is not the limit.
        let e = Evidence {
            points: vec![point(1, [300e3, 320e3, 340e3], 0.35, 1.98)],
            machine_cores: 2,
            client_cores: 2,
            broker_shares_cores: true,
            ..post()
        };
        let v = decide(&e);
        assert_eq!(v.outcome, Outcome::DoesNotHold, "{v:#?}");
        assert!(
            v.reason.contains("decided by cost per message"),
            "{}",
            v.reason
        );
        assert!(v.reason.contains("kgap-app is the limit"), "{}", v.reason);
        // rdk:broker at 0.6 against the app's 0.45 at most: the broker thread caps first.
        let e = Evidence {
            points: vec![point(1, [300e3, 320e3, 340e3], 0.6, 1.98)],
            ..e
        };
        let v = decide(&e);
        assert_eq!(v.checks[0].state, CheckState::Passed, "{v:#?}");
        // Within 1.1x of each other: CANNOT TELL, with both costs.
        let e = Evidence {
            points: vec![point(1, [300e3, 320e3, 340e3], 0.43, 1.98)],
            ..e
        };
        let v = decide(&e);
        assert_eq!(v.checks[0].state, CheckState::Undecided, "{v:#?}");
        assert!(v.checks[0].detail.contains("neither caps first"), "{v:#?}");
    }

    #[test]
    fn no_gain_with_idle_cores_does_not_hold_but_with_none_cannot_tell() {
        let mut e = post();
        e.points[1] = point(16, [2.0e6, 2.01e6, 2.02e6], 0.2, 6.0);
        e.points[1].aggregate_msgs_per_s = reps(&[1.5e6, 1.6e6, 1.7e6]);
        let v = decide(&e);
        assert_eq!(v.outcome, Outcome::DoesNotHold, "{v:#?}");
        e.points[1].machine_busy_cores = reps(&[31.9, 31.95, 32.0]);
        let v = decide(&e);
        assert_eq!(v.outcome, Outcome::CannotTell, "{v:#?}");
        assert!(v.reason.contains("the machine ran out"), "{}", v.reason);
        // Not measured (windows too short for /proc's ticks): a lack of gain is not judged.
        e.points[1].machine_busy_cores = Reps::default();
        let v = decide(&e);
        assert_eq!(v.outcome, Outcome::CannotTell, "{v:#?}");
        assert!(
            v.reason.contains("busy cores were not measured"),
            "{}",
            v.reason
        );
    }

    #[test]
    fn a_client_pinned_to_fewer_cores_than_instances_is_not_judged_there() {
        // The same no-gain K=16 that does not hold on 32 free cores, from a client pinned to 8:
        // 16 broker threads on 8 cores say nothing about instances.
        let mut e = post();
        e.points[1] = point(16, [2.0e6, 2.01e6, 2.02e6], 0.2, 6.0);
        e.points[1].aggregate_msgs_per_s = reps(&[1.5e6, 1.6e6, 1.7e6]);
        e.client_cores = 8;
        let v = decide(&e);
        assert_ne!(v.outcome, Outcome::DoesNotHold, "{v:#?}");
        assert!(
            v.reason.contains("pinned to 8 of this machine's 32"),
            "{}",
            v.reason
        );
    }

    #[test]
    fn one_instance_only_or_none_cannot_tell() {
        let mut e = post();
        e.points.truncate(1);
        assert_eq!(decide(&e).outcome, Outcome::CannotTell);
        e.points.clear();
        assert_eq!(decide(&e).outcome, Outcome::CannotTell);
        assert_eq!(judged_up_to(2, 2, true), 1);
        assert_eq!(judged_up_to(32, 32, false), 32);
        // Pinned to one core of two, the broker apart: K=2 is not judged.
        assert_eq!(judged_up_to(2, 1, false), 1);
        assert_eq!(judged_up_to(2, 0, false), 2);
        assert_eq!(
            compare(&reps(&[3.0, 4.0, 5.0]), &reps(&[1.0, 2.0, 2.5])),
            "higher"
        );
    }
}
