//! "This thread is the consumer's limit", decided by saturation where the machine gives each
//! busy thread a core, and by cost per unit of work where it cannot.
//!
//! Saturation observed (≥ [`SATURATED_CORES`] in every rep) is the strongest evidence. On a
//! small machine the client's threads share cores with each other and with the broker, and
//! none reaches a core alone; the post's own way still decides there: each thread's CPU per
//! message, measured in the same reps. The thread that spends the most per message saturates
//! first on a core of its own, at 1 / cost messages per second. Both threads handle the same
//! messages in a rep, so the ratio of their costs is the ratio of their cores: it does not
//! move with the rate the machine allowed, only the ceiling it implies does.

use super::reps::{Reps, MIN_REPS, MORE_REPS_HINT};
use super::saturation::SATURATED_CORES;
use super::verdict::Check;
use crate::vocab::units;

/// A thread is the limit by cost when it spends at least this many times what the busiest
/// other thread spends per message, in every rep. A reasoned margin: /proc counts CPU in
/// 10 ms ticks, ±0.5% of a thread at 0.4 cores over a 5 s window, so 10% keeps two threads
/// of near-equal cost from being ranked by noise.
pub const COST_MARGIN: f64 = 1.1;

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
    /// Messages per second the consumer read in the same reps: the work the cores bought.
    /// Empty: not measured, and no cost can be worked out.
    pub msgs_per_s: &'a Reps,
    /// The post's figure for this limit, printed beside the ceiling a cost implies
    /// ("1.48M msg/s, its thread saturated").
    pub post: &'a str,
}

/// A thread's cost per message in each rep (core-seconds per message): cores / msg/s,
/// paired rep by rep; empty unless both were measured in the same reps.
pub fn cost_per_msg(cores: &Reps, msgs_per_s: &Reps) -> Reps {
    if cores.n() != msgs_per_s.n() {
        return Reps::default();
    }
    cores
        .values()
        .iter()
        .zip(msgs_per_s.values())
        .filter(|(&c, &m)| c > 0.0 && m > 0.0)
        .map(|(c, m)| c / m)
        .collect()
}

/// The messages per second a thread could handle on a core of its own: 1 / cost, per rep.
pub fn ceiling_msgs_per_s(cost: &Reps) -> Reps {
    cost.values().iter().map(|c| 1.0 / c).collect()
}

/// The msg/s a thread would handle on a core of its own, per rep: its cost's ceiling.
pub fn msgs_per_core(cores: &Reps, msgs_per_s: &Reps) -> Reps {
    ceiling_msgs_per_s(&cost_per_msg(cores, msgs_per_s))
}

/// A cost per message in microseconds: `0.389 µs/msg`.
pub fn us_per_msg(core_s: f64) -> String {
    format!("{:.3} µs/msg", core_s * 1e6)
}

/// How a check decided by cost begins: [`decided_by_cost`] reads it, so a verdict can say how
/// it was decided.
pub const BY_COST: &str = "decided by cost per message";

/// Whether a thread-limit check was decided by cost per message rather than saturation.
pub fn decided_by_cost(c: &Check) -> bool {
    c.detail.starts_with(BY_COST)
}

/// A knob's gain judged on the limiting thread's msg/s on a core of its own (the rates over
/// its cores, rep by rep), for a thread that never reached a core: `before` and `after` are
/// (cores, msg/s) without and with the knob; `measured` says in words what was read.
pub fn gain_by_cost(
    condition: String,
    thread: &str,
    before: (&Reps, &Reps),
    after: (&Reps, &Reps),
    min_gain: f64,
    measured: String,
) -> Check {
    let c = super::reps::check_at_least(
        condition,
        &msgs_per_core(after.0, after.1),
        &msgs_per_core(before.0, before.1),
        min_gain,
        units::msgs_per_s,
    );
    Check {
        detail: format!(
            "{BY_COST}, the {thread}'s msg/s on a core of its own ({measured}): {}",
            c.detail
        ),
        ..c
    }
}

/// Which of two threads caps first, decided from their cores in the same reps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CapsFirst {
    /// The named thread costs ≥ [`COST_MARGIN`] × the other's in every rep.
    Named,
    /// The other thread does.
    Other,
    /// Neither in every rep, or not measured in ≥ [`MIN_REPS`] paired reps.
    Neither,
}

/// The cost comparison: per rep, the named thread's cores over the other's (their costs per
/// message, since both handled the same messages).
pub fn caps_first(named: &Reps, other: &Reps) -> CapsFirst {
    let n = named.n();
    if n < MIN_REPS || other.n() != n {
        return CapsFirst::Neither;
    }
    let pairs = || named.values().iter().zip(other.values());
    if pairs().all(|(&a, &b)| b > 0.0 && a >= COST_MARGIN * b) {
        CapsFirst::Named
    } else if pairs().all(|(&a, &b)| a > 0.0 && b >= COST_MARGIN * a) {
        CapsFirst::Other
    } else {
        CapsFirst::Neither
    }
}

/// The words of a cost decision: each thread's cost and the ceiling it implies on a core.
fn cost_words(t: &ThreadLimit, first: &str) -> Option<String> {
    let named = cost_per_msg(t.cores, t.msgs_per_s);
    let other = cost_per_msg(t.other_cores, t.msgs_per_s);
    if named.n() < MIN_REPS || other.n() < MIN_REPS {
        return None;
    }
    let ceiling = |c: &Reps| {
        ceiling_msgs_per_s(c)
            .median()
            .map_or_else(|| "-".into(), units::msgs_per_s)
    };
    let (lead, lead_cost, second, second_cost) = if first == t.thread {
        (t.thread, &named, t.other, &other)
    } else {
        (t.other, &other, t.thread, &named)
    };
    let post = if t.post.is_empty() {
        String::new()
    } else {
        format!(" (the post: {})", t.post)
    };
    Some(format!(
        "{} {}, {} {}; on a core each, {lead} caps first at {}{post}, {second} at {}",
        t.thread,
        named.show(us_per_msg),
        t.other,
        other.show(us_per_msg),
        ceiling(lead_cost),
        ceiling(second_cost),
    ))
}

/// The check "`thread` is the limit": passed when it is saturated (≥ [`SATURATED_CORES`]) in
/// every rep; failed when it is in no rep and the other thread is saturated in every rep.
/// When no thread reached a core (a machine that could not give each thread one), decided
/// by cost per message instead ([`caps_first`]), and it says so; undecided with too few
/// reps, reps that disagree, or costs too close to rank, with the cores measured.
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
            format!("{shown}, saturated in {hot} of {n} reps: the reps disagree; {MORE_REPS_HINT}"),
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
    // No thread reached a core: why, in this placement's words.
    let k = t.client_cores;
    let filled = k > 0
        && k < t.machine_cores
        && t.consumer_cores.n() > 0
        && t.consumer_cores
            .values()
            .iter()
            .all(|&c| c >= SATURATED_CORES * k as f64);
    let why = if filled {
        // Pinned to fewer cores than it has busy threads, the consumer fills its own cores:
        // its threads share them, and none can reach a core alone.
        let cores = if k == 1 {
            "the 1 core".to_string()
        } else {
            format!("the {k} cores")
        };
        format!(
            "the whole consumer used {} of {cores} it was pinned to (--cpus), so no thread \
             could reach {SATURATED_CORES} cores alone",
            t.consumer_cores.show(units::cores),
        )
    } else {
        format!(
            "no consumer thread reached {SATURATED_CORES} cores and the whole consumer used {} \
             of this {}-core machine: it was held back from outside (the broker or other load \
             on the same cores)",
            t.consumer_cores.show(units::cores),
            t.machine_cores
        )
    };
    match caps_first(t.cores, t.other_cores) {
        CapsFirst::Named => {
            if let Some(costs) = cost_words(t, t.thread) {
                return Check::passed(
                    condition,
                    format!(
                        "{BY_COST}, since this machine could not give each thread a core \
                         ({why}): {costs}"
                    ),
                );
            }
        }
        CapsFirst::Other => {
            if let Some(costs) = cost_words(t, t.other) {
                return Check::failed(
                    condition,
                    format!(
                        "{BY_COST}, since this machine could not give each thread a core \
                         ({why}): {costs}: {} is the limit",
                        t.other
                    ),
                );
            }
        }
        CapsFirst::Neither => {}
    }
    let costs = cost_words(t, t.thread)
        .map(|c| {
            format!("; by cost per message neither caps first by {COST_MARGIN}x in every rep: {c}")
        })
        .unwrap_or_else(|| {
            "; the msg/s of the same reps were not measured, so costs per message could not decide"
                .into()
        });
    let hint = if filled {
        "the finding needs a core for each busy consumer thread beside the broker's (3 cores \
         or more: scripts/kafka up --cpus 0, --cpus 1-2)"
    } else {
        "pin the broker and the client apart (scripts/kafka up --cpus, --cpus) or use a \
         machine with more cores"
    };
    Check::undecided(condition, format!("{shown}, {other}; {why}{costs}; {hint}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::findings::reps::of as reps;
    use crate::findings::CheckState;

    /// scripts/reproduce on this 2-core machine (issue 38's first run): poll() at 1.53M msg/s,
    /// the app thread 0.59 and rdk:broker1 0.39 cores on the one core the consumer had.
    fn shared_core<'a>(
        cores: &'a Reps,
        other: &'a Reps,
        consumer: &'a Reps,
        msgs: &'a Reps,
    ) -> ThreadLimit<'a> {
        ThreadLimit {
            thread: "kgap-app",
            cores,
            other: "rdk:broker1",
            other_cores: other,
            consumer_cores: consumer,
            machine_cores: 2,
            client_cores: 1,
            msgs_per_s: msgs,
            post: "1.48M msg/s, its thread saturated",
        }
    }

    #[test]
    fn the_costlier_thread_is_the_limit_when_no_thread_has_a_core() {
        let (a, b, c, m) = (
            reps(&[0.58, 0.59, 0.60]),
            reps(&[0.39, 0.39, 0.40]),
            reps(&[1.0, 1.0, 1.0]),
            reps(&[1.52e6, 1.53e6, 1.56e6]),
        );
        let ch = check_thread_limit("app is the limit", &shared_core(&a, &b, &c, &m));
        assert_eq!(ch.state, CheckState::Passed, "{ch:?}");
        assert!(
            ch.detail.contains("decided by cost per message"),
            "{}",
            ch.detail
        );
        assert!(ch.detail.contains("pinned to"), "{}", ch.detail);
        // 0.59 / 1.53M = 0.385 µs a message: 2.60M msg/s on a core; the broker thread's 3.90M.
        assert!(
            ch.detail.contains("kgap-app caps first at 2.60M msg/s"),
            "{}",
            ch.detail
        );
        assert!(
            ch.detail.contains("rdk:broker1 at 3.90M msg/s"),
            "{}",
            ch.detail
        );
        assert!(
            ch.detail.contains("0.385 (0.382–0.386) µs/msg"),
            "{}",
            ch.detail
        );
        assert!(ch.detail.contains("the post: 1.48M"), "{}", ch.detail);
    }

    #[test]
    fn the_other_thread_costlier_in_every_rep_fails_the_check() {
        let (a, b, c, m) = (
            reps(&[0.30, 0.31, 0.31]),
            reps(&[0.63, 0.62, 0.64]),
            reps(&[1.0, 1.0, 1.0]),
            reps(&[2.2e6, 2.25e6, 2.3e6]),
        );
        let ch = check_thread_limit("app is the limit", &shared_core(&a, &b, &c, &m));
        assert_eq!(ch.state, CheckState::Failed, "{ch:?}");
        assert!(
            ch.detail.contains("rdk:broker1 is the limit"),
            "{}",
            ch.detail
        );
    }

    #[test]
    fn costs_within_the_margin_or_unpaired_cannot_tell() {
        let (a, b, c, m) = (
            reps(&[0.50, 0.52, 0.49]),
            reps(&[0.48, 0.47, 0.50]),
            reps(&[1.0, 1.0, 1.0]),
            reps(&[1.5e6, 1.5e6, 1.5e6]),
        );
        let ch = check_thread_limit("app is the limit", &shared_core(&a, &b, &c, &m));
        assert_eq!(ch.state, CheckState::Undecided, "{ch:?}");
        assert!(ch.detail.contains("neither caps first"), "{}", ch.detail);
        // One rep the other way round: not every rep, not decided.
        let mixed = reps(&[0.58, 0.40, 0.60]);
        let b2 = reps(&[0.39, 0.45, 0.40]);
        let ch = check_thread_limit("x", &shared_core(&mixed, &b2, &c, &m));
        assert_eq!(ch.state, CheckState::Undecided, "{ch:?}");
        // Rates not measured: the cores alone do not give a cost, and it says so.
        let none = Reps::default();
        let a = reps(&[0.58, 0.59, 0.60]);
        let b = reps(&[0.39, 0.39, 0.40]);
        let ch = check_thread_limit("x", &shared_core(&a, &b, &c, &none));
        assert_eq!(ch.state, CheckState::Undecided, "{ch:?}");
        assert!(ch.detail.contains("were not measured"), "{}", ch.detail);
    }

    #[test]
    fn saturation_still_decides_first() {
        let (a, b, c, m) = (
            reps(&[0.95, 0.96, 0.97]),
            reps(&[0.6, 0.6, 0.6]),
            reps(&[1.6, 1.6, 1.6]),
            reps(&[1.48e6, 1.48e6, 1.48e6]),
        );
        let t = ThreadLimit {
            client_cores: 32,
            machine_cores: 32,
            ..shared_core(&a, &b, &c, &m)
        };
        let ch = check_thread_limit("x", &t);
        assert_eq!(ch.state, CheckState::Passed);
        assert!(
            ch.detail.contains("saturated in 3 of 3 reps"),
            "{}",
            ch.detail
        );
        assert!(!ch.detail.contains("cost"), "{}", ch.detail);
    }

    #[test]
    fn cost_and_ceiling_pair_reps() {
        let cost = cost_per_msg(&reps(&[0.5, 1.0]), &reps(&[1e6, 2e6]));
        assert_eq!(cost.values(), &[0.5e-6, 0.5e-6]);
        assert_eq!(ceiling_msgs_per_s(&cost).values(), &[2e6, 2e6]);
        assert!(cost_per_msg(&reps(&[0.5]), &reps(&[1e6, 2e6])).is_empty());
        assert_eq!(us_per_msg(0.386e-6), "0.386 µs/msg");
    }
}
