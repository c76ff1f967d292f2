//! `batch-wrapper-latency`: the batch wrapper that waits for a full batch.
//!
//! The mechanism (a harness bug, not librdkafka's): `rd_kafka_consume_batch_queue(q, T, buf,
//! N)` returns when N messages came or T passed, whichever first. At a rate below N/T every
//! call waits min(T, N/rate), and a message waits a uniformly random part of that: p99 at
//! the whole wait, p50 at half of it (plus the transport). The fixed wrapper takes what is
//! queued without waiting and blocks only when nothing is: sub-millisecond. The rule asks
//! for the arithmetic in every rep (p99 and p50), at a rate the machine sustained, and for
//! the fixed wrapper under a millisecond; where poll() itself is above a millisecond, the
//! machine's transport is the floor and the rule says CANNOT TELL.

use super::finding::{direct, Finding, Reproduce, Side};
use super::reps::{check_every_rep, Reps, MIN_REPS};
use super::verdict::{Check, CheckState, Verdict};
use crate::vocab::units;
use serde::{Deserialize, Serialize};

/// Below this wait the wrapper's delay cannot be told from the transport's.
pub const MIN_WAIT_MS: f64 = 10.0;
/// The naive p99 must sit within this band of the wait, min(T, N/rate), in every rep.
pub const P99_BAND: (f64, f64) = (0.8, 1.25);
/// The naive p50 must sit within this band of half the wait plus the transport (the fixed
/// wrapper's p50), in every rep.
pub const P50_BAND: (f64, f64) = (0.7, 1.3);
/// The fixed wrapper's p99 must be under this, in every rep (the post: 0.21 ms at 1k/s)…
pub const FIXED_P99_MAX_MS: f64 = 1.0;
/// …or, on a machine whose transport is above a millisecond, at most this share of the wait
/// min(T, N/rate) in every rep: the post's point is relative (0.21 against 99 ms). A reasoned
/// bound: a wrapper that waits for its batch puts 90% of its messages above a tenth of the
/// wait, so a p99 below it has not waited.
pub const FIXED_P99_MAX_SHARE_OF_WAIT: f64 = 0.1;
/// …or, where poll() itself (no wrapper: the transport) is that slow, at most this share of
/// the wait in every rep — a wrapper that waits for its batch has half its messages above
/// half the wait, its p99 near the whole wait (the naive check's band) — …
pub const FIXED_P99_MAX_SHARE_OF_WAIT_AT_FLOOR: f64 = 0.5;
/// …with its p99 median at most this multiple of poll()'s: it adds nothing to the transport
/// (a reasoned margin for a p99 over 3 reps; 2x poll()'s plus 1 ms is DOES NOT HOLD).
pub const FIXED_P99_MAX_OVER_POLL: f64 = 1.25;
/// A rep counts only when the paced producer reached this share of its target rate.
pub const SUSTAINED_SHARE: f64 = 0.9;

/// The wait a batch call that returns at `batch` messages or `timeout_ms` adds at most, at
/// `rate_per_s`: min(timeout, batch/rate), in ms. With no rate, the timeout.
pub fn wait_ms(rate_per_s: f64, batch: f64, timeout_ms: f64) -> f64 {
    if rate_per_s <= 0.0 {
        return timeout_ms;
    }
    (batch / rate_per_s * 1000.0).min(timeout_ms)
}

/// What a probe measured at one producer rate, per rep.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Evidence {
    /// The paced producer's target rate.
    pub rate_per_s: u64,
    /// Messages per batch call and the naive wrapper's timeout (the post: 500, 100 ms).
    pub batch_size: u64,
    pub timeout_ms: f64,
    /// The rate the producer reached in each rep of the naive and the fixed wrapper.
    pub naive_rate_achieved_per_s: Reps,
    pub fixed_rate_achieved_per_s: Reps,
    /// End-to-end latency, send to consume, per rep.
    pub naive_e2e_ms_p50: Reps,
    pub naive_e2e_ms_p99: Reps,
    pub fixed_e2e_ms_p50: Reps,
    pub fixed_e2e_ms_p99: Reps,
    /// poll() at the same rate, when it ran: the transport's floor.
    pub poll_e2e_ms_p99: Reps,
}

fn sustained(condition: String, achieved: &Reps, target: f64) -> Check {
    let c = check_every_rep(
        condition,
        achieved,
        |r| r >= SUSTAINED_SHARE * target,
        units::msgs_per_s,
    );
    if c.state == CheckState::Failed {
        // The machine could not pace the rate: the arithmetic is about another rate.
        return Check::undecided(
            c.condition,
            format!(
                "{}: this machine could not pace the rate; try a lower --rate",
                c.detail
            ),
        );
    }
    c
}

/// The rule: at a sustained rate whose wait is long enough to see, the naive wrapper's p99
/// at min(T, N/rate) and its p50 at half of it plus the transport, in every rep; the fixed
/// wrapper's p99 under a millisecond, or under a tenth of the wait, in every rep.
pub fn decide(e: &Evidence) -> Verdict {
    let target = e.rate_per_s as f64;
    let rate = e.naive_rate_achieved_per_s.median().unwrap_or(target);
    let wait = wait_ms(rate, e.batch_size as f64, e.timeout_ms);
    let transport = e.fixed_e2e_ms_p50.median();
    let mut checks = vec![
        sustained(
            format!("the naive wrapper's producer sustained {target} msg/s (≥ 90%)"),
            &e.naive_rate_achieved_per_s,
            target,
        ),
        sustained(
            format!("the fixed wrapper's producer sustained {target} msg/s (≥ 90%)"),
            &e.fixed_rate_achieved_per_s,
            target,
        ),
    ];
    let fill = e.batch_size as f64 / rate.max(1e-9) * 1000.0;
    let arithmetic = format!(
        "min({}, {} messages at {}: {}) = {}",
        units::ms(e.timeout_ms),
        e.batch_size,
        units::msgs_per_s(rate),
        units::ms(fill),
        units::ms(wait)
    );
    checks.push(if wait >= MIN_WAIT_MS {
        Check::passed(
            format!("the wait is long enough to see (≥ {MIN_WAIT_MS} ms)"),
            arithmetic.clone(),
        )
    } else {
        Check::undecided(
            format!("the wait is long enough to see (≥ {MIN_WAIT_MS} ms)"),
            format!(
                "{arithmetic}: too short to tell from the transport; run a lower --rate \
                 (the post: 1000 and 10000 msg/s)"
            ),
        )
    });
    let (lo, hi) = P99_BAND;
    checks.push(check_every_rep(
        format!(
            "the naive wrapper's p99 sits at the wait, {}, in every rep ({lo}x–{hi}x)",
            units::ms(wait)
        ),
        &e.naive_e2e_ms_p99,
        |p| p >= lo * wait && p <= hi * wait,
        units::ms,
    ));
    let (lo, hi) = P50_BAND;
    checks.push(match transport {
        Some(t) => {
            let at = wait / 2.0 + t;
            check_every_rep(
                format!(
                    "the naive wrapper's p50 sits at half the wait plus the transport, {} \
                     ({lo}x–{hi}x): a uniform wait",
                    units::ms(at)
                ),
                &e.naive_e2e_ms_p50,
                |p| p >= lo * at && p <= hi * at,
                units::ms,
            )
        }
        None => Check::undecided(
            "the naive wrapper's p50 sits at half the wait plus the transport",
            "the fixed wrapper's p50 (the transport) was not measured: run --api fixed,naive",
        ),
    });
    checks.push(fixed_check(e, wait));
    // At a rate the machine could not pace, queueing behind starved threads inflates every
    // latency: no latency check can fail then, it is not judged.
    let paced = checks[..2].iter().all(|c| c.state == CheckState::Passed);
    if !paced {
        for c in &mut checks[2..] {
            if c.state == CheckState::Failed {
                c.state = CheckState::Undecided;
                c.detail
                    .push_str(" (not judged: the rate was not sustained)");
            }
        }
    }
    Verdict::from_checks(&FINDING, checks, e, || {
        let m = |r: &Reps| r.median().unwrap_or(0.0);
        format!(
            "at {} the naive wrapper's end-to-end p50/p99 was {}/{} against the arithmetic's \
             {}/{} (a call returns at {} messages or {}); the fixed wrapper's p99 was {}: a \
             wrapper that waits for a full batch adds up to min(timeout, N/rate) to every \
             message",
            units::msgs_per_s(rate),
            units::ms(m(&e.naive_e2e_ms_p50)),
            units::ms(m(&e.naive_e2e_ms_p99)),
            units::ms(wait / 2.0),
            units::ms(wait * 0.99),
            e.batch_size,
            units::ms(e.timeout_ms),
            units::ms(m(&e.fixed_e2e_ms_p99)),
        )
    })
}

/// The fixed wrapper under a millisecond, or under a tenth of the wait where the machine's
/// transport is above a millisecond; DOES NOT HOLD only when poll() shows the transport is
/// faster than the fixed wrapper (else the machine is the floor).
fn fixed_check(e: &Evidence, wait: f64) -> Check {
    let condition = format!(
        "the fixed wrapper does not wait: its p99 under {FIXED_P99_MAX_MS} ms, or under \
         {FIXED_P99_MAX_SHARE_OF_WAIT}x the wait ({}), in every rep",
        units::ms(FIXED_P99_MAX_SHARE_OF_WAIT * wait)
    );
    let c = check_every_rep(
        condition.clone(),
        &e.fixed_e2e_ms_p99,
        |p| p < FIXED_P99_MAX_MS,
        units::ms,
    );
    // Some reps above a millisecond (or all): the wait decides, unless too few reps.
    if c.state == CheckState::Passed || e.fixed_e2e_ms_p99.n() < MIN_REPS {
        return c;
    }
    let poll = &e.poll_e2e_ms_p99;
    if let (Some(fixed), Some(floor)) = (e.fixed_e2e_ms_p99.median(), poll.median()) {
        if poll.n() >= MIN_REPS && fixed > 2.0 * floor + 1.0 {
            return Check::failed(
                condition,
                format!(
                    "{}, against poll()'s {}: the fixed wrapper adds latency of its own",
                    c.detail,
                    poll.show(units::ms)
                ),
            );
        }
    }
    let relative = check_every_rep(
        condition.clone(),
        &e.fixed_e2e_ms_p99,
        |p| p <= FIXED_P99_MAX_SHARE_OF_WAIT * wait,
        units::ms,
    );
    let floor = if poll.is_empty() {
        "poll() was not run at this rate to show the transport's floor".to_string()
    } else {
        format!("poll() at {}", poll.show(units::ms))
    };
    if relative.state == CheckState::Passed {
        return Check::passed(
            condition,
            format!(
                "{}: {} of the {} wait at most, so it did not wait for a batch; above the \
                 post's {FIXED_P99_MAX_MS} ms on this machine's transport ({floor})",
                e.fixed_e2e_ms_p99.show(units::ms),
                units::times(e.fixed_e2e_ms_p99.max().unwrap_or(0.0) / wait),
                units::ms(wait),
            ),
        );
    }
    // The transport's own floor: poll() (no wrapper) as slow, and every rep far below the
    // wait a waiting wrapper pays.
    if let (Some(fixed), Some(p)) = (e.fixed_e2e_ms_p99.median(), poll.median()) {
        let at_floor = check_every_rep(
            condition.clone(),
            &e.fixed_e2e_ms_p99,
            |v| v <= FIXED_P99_MAX_SHARE_OF_WAIT_AT_FLOOR * wait,
            units::ms,
        );
        if poll.n() >= MIN_REPS
            && fixed <= FIXED_P99_MAX_OVER_POLL * p
            && at_floor.state == CheckState::Passed
        {
            return Check::passed(
                condition,
                format!(
                    "{} against poll()'s {} ({}): the fixed wrapper adds nothing to this \
                     machine's transport, and every rep stays under \
                     {FIXED_P99_MAX_SHARE_OF_WAIT_AT_FLOOR}x the {} wait, where a waiting \
                     wrapper's p99 sits at the whole wait; decided against poll(), since the \
                     transport here is above the post's {FIXED_P99_MAX_MS} ms",
                    e.fixed_e2e_ms_p99.show(units::ms),
                    poll.show(units::ms),
                    units::times(fixed / p),
                    units::ms(wait),
                ),
            );
        }
    }
    Check::undecided(
        condition,
        format!(
            "{}, above {FIXED_P99_MAX_SHARE_OF_WAIT}x the wait in some rep, with {floor}: the \
             transport on this machine is above a millisecond (a loaded machine, or the broker \
             sharing the client's cores), so no consumer can be under it here",
            c.detail,
        ),
    )
}

pub const FINDING: Finding = Finding {
    id: "batch-wrapper-latency",
    title: "The batch wrapper that waits for a full batch",
    side: Side::Harness,
    post: "naive wrapper p50/p99 50/99 ms at 1k msg/s, 25/50 ms at 10k; fixed 0.21 ms p99",
    claim: "consume_batch_queue(q, 100 ms, buf, 500) returns at 500 messages or 100 ms: \
            p50/p99 50/99 ms at 1k msg/s, 25/50 ms at 10k msg/s, exactly the arithmetic. \
            Fixed (take what is queued, block only when empty): 0.21/0.23 ms p99, \
            throughput unchanged (2.12M–2.14M msg/s).",
    cause: "a batch call that waits for N messages or the timeout adds up to \
            min(timeout, N / rate) to every message at low rates",
    fix: "take whatever is queued with timeout 0; block only when the queue is empty",
    reproduce: Reproduce {
        probe: "probe-batch-consume",
        exists: true,
        command: "probe-batch-consume --brokers 127.0.0.1:9092 --rate 1000,10000",
    },
    expected_shape: "end-to-end p99 ≈ min(timeout, N/rate), p50 about half, with the \
                     waiting wrapper; sub-millisecond with the fixed one",
    rule: "at the lowest rate with both wrappers, sustained (≥ 90%) in every rep, with a wait \
           min(timeout, N/rate) ≥ 10 ms: the naive wrapper's p99 within 0.8x–1.25x of the \
           wait and its p50 within 0.7x–1.3x of half the wait plus the fixed wrapper's p50, \
           in every rep; the fixed wrapper's p99 < 1 ms in every rep, or, on a machine whose \
           transport is above a millisecond, ≤ 0.1x the wait in every rep (the post's point \
           is relative: 0.21 against 99 ms), or, where poll() (the transport) is as slow, \
           ≤ 1.25x poll()'s p99 and ≤ 0.5x the wait in every rep (a waiting wrapper's p99 \
           sits at the whole wait); above all of them with poll() as slow: CANNOT TELL, the \
           machine's transport is the floor; above 2x poll()'s p99 + 1 ms: DOES NOT HOLD; \
           ≥ 3 reps",
    rule_fn: "findings::batch_wrapper_latency::decide",
    sources: &[direct("batch-wrapper-latency", "probe-batch-consume")],
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::findings::Outcome;

    use crate::findings::reps::of as reps;

    /// The post at 1k msg/s: naive 50/99 ms, fixed 0.21 ms p99.
    fn post() -> Evidence {
        Evidence {
            rate_per_s: 1000,
            batch_size: 500,
            timeout_ms: 100.0,
            naive_rate_achieved_per_s: reps(&[1000.0, 999.0, 1000.0]),
            fixed_rate_achieved_per_s: reps(&[1000.0, 1000.0, 998.0]),
            naive_e2e_ms_p50: reps(&[50.1, 50.0, 49.8]),
            naive_e2e_ms_p99: reps(&[99.0, 99.1, 98.9]),
            fixed_e2e_ms_p50: reps(&[0.13, 0.13, 0.14]),
            fixed_e2e_ms_p99: reps(&[0.20, 0.21, 0.23]),
            poll_e2e_ms_p99: Reps::default(),
        }
    }

    #[test]
    fn the_arithmetic() {
        assert_eq!(wait_ms(1000.0, 500.0, 100.0), 100.0);
        assert_eq!(wait_ms(10_000.0, 500.0, 100.0), 50.0);
        assert_eq!(wait_ms(0.0, 500.0, 100.0), 100.0);
    }

    #[test]
    fn the_posts_figures_hold_at_1k_and_10k() {
        let v = decide(&post());
        assert_eq!(v.outcome, Outcome::Holds, "{v:#?}");
        assert!(v.reason.contains("min(timeout, N/rate)"), "{}", v.reason);
        let ten_k = Evidence {
            rate_per_s: 10_000,
            naive_rate_achieved_per_s: reps(&[10_000.0, 9_990.0, 10_000.0]),
            fixed_rate_achieved_per_s: reps(&[10_000.0, 10_000.0, 9_995.0]),
            naive_e2e_ms_p50: reps(&[25.0, 25.2, 24.9]),
            naive_e2e_ms_p99: reps(&[50.0, 49.6, 50.3]),
            fixed_e2e_ms_p99: reps(&[0.23, 0.22, 0.23]),
            ..post()
        };
        assert_eq!(decide(&ten_k).outcome, Outcome::Holds);
    }

    /// The project's recorded run (docs/probe-batch-consume.md, mock, load ≈ 6.5–7) at
    /// 1000 msg/s: naive 51.3/100.5 ms on the arithmetic, but fixed p99 4.85 ms with
    /// poll()'s 4.71 ms: the machine's transport, not the wrapper, is above a millisecond.
    #[test]
    fn the_recorded_run_holds_relative_to_the_wait_on_a_loaded_machine() {
        let e = Evidence {
            naive_rate_achieved_per_s: reps(&[965.0, 970.0, 975.0]),
            fixed_rate_achieved_per_s: reps(&[965.0, 970.0, 975.0]),
            naive_e2e_ms_p50: reps(&[51.33, 51.33, 51.33]),
            naive_e2e_ms_p99: reps(&[100.54, 100.54, 100.54]),
            fixed_e2e_ms_p50: reps(&[1.20, 1.20, 1.20]),
            fixed_e2e_ms_p99: reps(&[4.85, 4.85, 4.85]),
            poll_e2e_ms_p99: reps(&[4.71, 4.71, 4.71]),
            ..post()
        };
        let v = decide(&e);
        // The fixed p99 of 4.85 ms is 0.05x the 100 ms wait: it did not wait for a batch.
        assert_eq!(v.outcome, Outcome::Holds, "{v:#?}");
        assert!(
            v.checks[5].detail.contains("did not wait"),
            "{:?}",
            v.checks[5]
        );
        // Issue 38's first run: fixed p99 3.78 (0.86–9.40) ms against naive's 99.6.
        let first = Evidence {
            fixed_e2e_ms_p99: reps(&[0.86, 3.78, 9.40]),
            ..e.clone()
        };
        let v = decide(&first);
        assert_eq!(v.outcome, Outcome::Holds, "{v:#?}");
        // Issue 38's quiet run: poll() itself (the transport) at 16.3 (11.4–17.3) ms p99 and
        // the fixed wrapper beside it: it adds nothing, far under the wait.
        let floor = Evidence {
            fixed_e2e_ms_p99: reps(&[14.1, 15.2, 23.2]),
            poll_e2e_ms_p99: reps(&[11.4, 16.3, 17.3]),
            ..e.clone()
        };
        let v = decide(&floor);
        assert_eq!(v.outcome, Outcome::Holds, "{v:#?}");
        assert!(
            v.checks[5].detail.contains("adds nothing"),
            "{:?}",
            v.checks[5]
        );
        // 1.5x poll()'s p99: not shown either way.
        let above = Evidence {
            fixed_e2e_ms_p99: reps(&[22.0, 24.0, 25.0]),
            ..floor
        };
        assert_eq!(decide(&above).outcome, Outcome::CannotTell);
        // A rep past half the wait: not shown, and with poll() as slow, the machine.
        let slow = Evidence {
            fixed_e2e_ms_p99: reps(&[4.85, 60.0, 4.85]),
            poll_e2e_ms_p99: reps(&[15.0, 15.0, 15.0]),
            ..e
        };
        let v = decide(&slow);
        assert_eq!(v.outcome, Outcome::CannotTell, "{v:#?}");
        assert!(
            v.reason.contains("transport on this machine"),
            "{}",
            v.reason
        );
        // The naive half did match the arithmetic.
        assert!(
            v.checks[3].state == CheckState::Passed,
            "{:#?}",
            v.checks[3]
        );
        assert!(
            v.checks[4].state == CheckState::Passed,
            "{:#?}",
            v.checks[4]
        );
    }

    #[test]
    fn a_fixed_wrapper_slower_than_poll_does_not_hold() {
        let e = Evidence {
            fixed_e2e_ms_p99: reps(&[40.0, 45.0, 42.0]),
            poll_e2e_ms_p99: reps(&[0.3, 0.25, 0.4]),
            ..post()
        };
        let v = decide(&e);
        assert_eq!(v.outcome, Outcome::DoesNotHold, "{v:#?}");
        assert!(v.reason.contains("adds latency of its own"), "{}", v.reason);
    }

    #[test]
    fn a_naive_wrapper_without_the_wait_does_not_hold() {
        // The old catalogue rule's other side: p99 0.21 ms is no wait at all.
        let e = Evidence {
            naive_e2e_ms_p50: reps(&[0.12, 0.13, 0.14]),
            naive_e2e_ms_p99: reps(&[0.2, 0.21, 0.22]),
            ..post()
        };
        assert_eq!(decide(&e).outcome, Outcome::DoesNotHold);
    }

    #[test]
    fn a_constant_delay_is_not_the_uniform_wait() {
        // p99 at 100 ms but p50 there too (e.g. a fetch held for 100 ms): not this bug.
        let e = Evidence {
            naive_e2e_ms_p50: reps(&[99.0, 98.5, 99.2]),
            ..post()
        };
        let v = decide(&e);
        assert_eq!(v.outcome, Outcome::DoesNotHold, "{v:#?}");
        assert!(v.reason.contains("uniform wait"), "{}", v.reason);
    }

    #[test]
    fn a_rate_too_high_or_not_sustained_cannot_tell() {
        // 100k msg/s fills 500 in 5 ms: too short to see.
        let fast = Evidence {
            rate_per_s: 100_000,
            naive_rate_achieved_per_s: reps(&[100e3, 100e3, 100e3]),
            fixed_rate_achieved_per_s: reps(&[100e3, 100e3, 100e3]),
            naive_e2e_ms_p50: reps(&[3.0, 3.1, 3.2]),
            naive_e2e_ms_p99: reps(&[5.0, 5.0, 5.1]),
            ..post()
        };
        let v = decide(&fast);
        assert_eq!(v.outcome, Outcome::CannotTell, "{v:#?}");
        assert!(v.reason.contains("too short"), "{}", v.reason);
        // The recorded 10k run: the pacer lost up to 15% of its slots.
        let slow = Evidence {
            rate_per_s: 10_000,
            naive_rate_achieved_per_s: reps(&[8_500.0, 8_600.0, 8_550.0]),
            fixed_rate_achieved_per_s: reps(&[8_500.0, 8_700.0, 8_650.0]),
            naive_e2e_ms_p50: reps(&[40.5, 40.5, 40.5]),
            naive_e2e_ms_p99: reps(&[112.5, 112.5, 112.5]),
            fixed_e2e_ms_p99: reps(&[110.9, 110.9, 110.9]),
            poll_e2e_ms_p99: reps(&[28.0, 28.0, 28.0]),
            ..post()
        };
        let v = decide(&slow);
        assert_eq!(v.outcome, Outcome::CannotTell, "{v:#?}");
        assert!(v.reason.contains("could not pace"), "{}", v.reason);
    }

    #[test]
    fn one_rep_cannot_tell() {
        let e = Evidence {
            naive_rate_achieved_per_s: reps(&[1000.0]),
            fixed_rate_achieved_per_s: reps(&[1000.0]),
            naive_e2e_ms_p50: reps(&[50.0]),
            naive_e2e_ms_p99: reps(&[99.0]),
            fixed_e2e_ms_p50: reps(&[0.13]),
            fixed_e2e_ms_p99: reps(&[0.2]),
            ..post()
        };
        let v = decide(&e);
        assert_eq!(v.outcome, Outcome::CannotTell);
        assert!(v.reason.contains("--reps 3"), "{}", v.reason);
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
