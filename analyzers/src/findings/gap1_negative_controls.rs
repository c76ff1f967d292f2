//! `gap1-negative-controls`: the knobs the post tried first against the request ceiling
//! moved nothing.
//!
//! At batch.size 16 KB the post tried the in-flight window (Java's 5 against librdkafka's
//! 1,000,000), Nagle's algorithm (`socket.nagle.disable`) and librdkafka's
//! `queue.buffering.backpressure.threshold`: "Nothing moved. The client was not busy either:
//! per-thread CPU from /proc showed no thread near a full core." The rule asks for both
//! halves: each control's rate within a band of the baseline's (outside it only with ranges
//! apart), a baseline steady enough for "nothing moved" to mean something, and no client
//! thread near a full core in any control run: a client that is neither CPU-bound nor held by
//! its window is waiting on the broker.

use super::finding::{direct, Finding, Reproduce, Side};
use super::reps::{check_every_rep, check_within, Reps, MIN_REPS};
use super::verdict::{Check, Verdict};
use crate::vocab::units;
use serde::{Deserialize, Serialize};

/// A control's rate over the baseline's that still counts as "nothing moved".
pub const SAME_LO: f64 = 0.87;
pub const SAME_HI: f64 = 1.15;
/// The baseline's (max − min) / median above which "nothing moved" cannot be told from noise.
pub const MAX_BASELINE_SPREAD: f64 = 0.25;
/// A client thread at or above this many cores may be the limit itself.
pub use super::saturation::SATURATED_CORES;
/// The controls the post tried, by the setting each changes.
pub const CONTROLS: [&str; 3] = [
    "max.in.flight",
    "socket.nagle.disable",
    "queue.buffering.backpressure.threshold",
];

/// One control run's figures, per rep.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Control {
    /// `max.in.flight=5`, `socket.nagle.disable=true`, …
    pub knob: String,
    pub msgs_per_s: Reps,
    /// The busiest client thread (app or rdk:broker), cores.
    pub busiest_thread_cores: Reps,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Evidence {
    pub partitions: i32,
    pub batch_size_bytes: u64,
    /// librdkafka at the point with no control set.
    pub baseline_msgs_per_s: Reps,
    pub baseline_busiest_thread_cores: Reps,
    pub controls: Vec<Control>,
}

fn cores(x: f64) -> String {
    format!("{x:.2} cores")
}

/// The rule: see the module doc.
pub fn decide(e: &Evidence) -> Verdict {
    let missing: Vec<&str> = CONTROLS
        .iter()
        .copied()
        .filter(|c| {
            !e.controls
                .iter()
                .any(|k| k.knob.starts_with(c) && !k.msgs_per_s.is_empty())
        })
        .collect();
    if e.baseline_msgs_per_s.is_empty() || !missing.is_empty() {
        return Verdict::cannot_tell(
            &FINDING,
            format!(
                "the baseline and all three controls are needed at one batch.size (missing: \
                 {}; run with --controls)",
                if e.baseline_msgs_per_s.is_empty() {
                    "the baseline".to_string()
                } else {
                    missing.join(", ")
                }
            ),
        );
    }
    let b = &e.baseline_msgs_per_s;
    let spread_condition = format!(
        "the baseline is steady enough to show that nothing moved (spread ≤ {:.0}% of its \
         median over ≥ {MIN_REPS} reps)",
        MAX_BASELINE_SPREAD * 100.0
    );
    let spread = match (b.median(), b.min(), b.max()) {
        (Some(m), Some(lo), Some(hi)) if m > 0.0 => (hi - lo) / m,
        _ => f64::INFINITY,
    };
    let mut checks = vec![if b.n() < MIN_REPS {
        Check::undecided(
            spread_condition,
            format!("{} rep(s) (run with --reps {MIN_REPS})", b.n()),
        )
    } else {
        // Noise, not a contradiction: CANNOT TELL.
        let detail = format!(
            "{}: spread {:.0}%",
            b.show(units::msgs_per_s),
            spread * 100.0
        );
        if spread <= MAX_BASELINE_SPREAD {
            Check::passed(spread_condition, detail)
        } else {
            Check::undecided(spread_condition, detail)
        }
    }];
    for c in &e.controls {
        checks.push(check_within(
            format!(
                "{} moves nothing: within {SAME_LO}x–{SAME_HI}x of the baseline",
                c.knob
            ),
            &c.msgs_per_s,
            b,
            SAME_LO,
            SAME_HI,
            units::msgs_per_s,
        ));
    }
    for c in &e.controls {
        checks.push(check_every_rep(
            format!(
                "with {} no client thread is near a full core (< {SATURATED_CORES}): the client \
                 waits on the broker",
                c.knob
            ),
            &c.busiest_thread_cores,
            |x| x < SATURATED_CORES,
            cores,
        ));
    }
    let moves = e
        .controls
        .iter()
        .map(|c| {
            format!(
                "{} {}",
                c.knob,
                units::times(c.msgs_per_s.median().unwrap_or(0.0) / b.median().unwrap_or(1.0))
            )
        })
        .collect::<Vec<_>>()
        .join(", ");
    Verdict::from_checks(&FINDING, checks, e, || {
        format!(
            "at batch.size={} none of the knobs the post tried first moved librdkafka's {} \
             ({moves} the baseline), and no client thread was near a full core: the producer \
             waits on the broker's cost per request",
            crate::vocab::svg::bytes_label(e.batch_size_bytes as f64),
            units::msgs_per_s(b.median().unwrap_or(0.0)),
        )
    })
}

pub const FINDING: Finding = Finding {
    id: "gap1-negative-controls",
    title: "The knobs that did not lift the request ceiling: in-flight, Nagle, backpressure",
    side: Side::Librdkafka,
    post: "at 16 KB batches: max.in.flight 5 or 1,000,000, Nagle, backpressure threshold: nothing moved; no thread near a full core",
    claim: "My first guess was the in-flight window … Then I tried Nagle's algorithm (Java \
            always sets TCP_NODELAY, librdkafka does not) and librdkafka's backpressure \
            threshold: Nothing moved. The client was not busy either: per-thread CPU from \
            /proc showed no thread near a full core.",
    cause: "the ceiling is the broker's fixed cost per ProduceRequest, one partition's batch \
            each: the window, Nagle and batching ahead do not change the request count",
    fix: "a larger batch.size (request-ceiling's fix); these knobs are not it",
    reproduce: Reproduce {
        probe: "probe-request-ceiling",
        exists: true,
        command: "probe-request-ceiling --brokers 127.0.0.1:9092 --partitions 1,6 --batch-size \
                  16384,1048576 --controls --no-diagnose",
    },
    expected_shape: "each control's msg/s inside the baseline's band at 16 KB; every client \
                     thread well under a core",
    rule: "with ≥ 3 reps at 16 KB (the sweep's smallest batch.size, most partitions), the \
           baseline spread ≤ 25% of its median, each of max.in.flight=5, \
           socket.nagle.disable=true and queue.buffering.backpressure.threshold=100 within \
           0.87x–1.15x of the baseline (outside only with ranges apart), and no client thread \
           ≥ 0.9 cores in any control rep",
    rule_fn: "findings::gap1_negative_controls::decide",
    sources: &[direct("gap1-negative-controls", "probe-request-ceiling")],
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::findings::Outcome;

    use crate::findings::reps::of as r;

    fn control(knob: &str, rate: &[f64]) -> Control {
        Control {
            knob: knob.into(),
            msgs_per_s: r(rate),
            busiest_thread_cores: r(&[0.35, 0.38, 0.4]),
        }
    }

    /// The post: ~240k at 16 KB whatever was changed.
    fn post() -> Evidence {
        Evidence {
            partitions: 6,
            batch_size_bytes: 16384,
            baseline_msgs_per_s: r(&[233e3, 240e3, 245e3]),
            baseline_busiest_thread_cores: r(&[0.38, 0.38, 0.39]),
            controls: vec![
                control("max.in.flight=5", &[236e3, 238e3, 244e3]),
                control("socket.nagle.disable=true", &[231e3, 241e3, 246e3]),
                control(
                    "queue.buffering.backpressure.threshold=100",
                    &[238e3, 240e3, 242e3],
                ),
            ],
        }
    }

    #[test]
    fn the_posts_nothing_moved_holds() {
        let v = decide(&post());
        assert_eq!(v.outcome, Outcome::Holds, "{v:#?}");
        assert!(v.reason.contains("max.in.flight=5 0.99x"), "{}", v.reason);
        assert_eq!(v.checks.len(), 7);
    }

    #[test]
    fn a_control_that_moves_the_rate_does_not_hold() {
        let mut e = post();
        e.controls[1].msgs_per_s = r(&[330e3, 340e3, 350e3]);
        let v = decide(&e);
        assert_eq!(v.outcome, Outcome::DoesNotHold, "{v:#?}");
        assert!(v.reason.contains("socket.nagle.disable"), "{}", v.reason);
        // A saturated thread: the client was the limit, not the broker.
        let mut e = post();
        e.controls[0].busiest_thread_cores = r(&[0.97, 0.98, 0.99]);
        assert_eq!(decide(&e).outcome, Outcome::DoesNotHold);
    }

    #[test]
    fn noise_or_missing_controls_cannot_tell() {
        // A baseline spread over 2x hides any movement.
        let mut e = post();
        e.baseline_msgs_per_s = r(&[120e3, 240e3, 300e3]);
        let v = decide(&e);
        assert_eq!(v.outcome, Outcome::CannotTell, "{v:#?}");
        assert!(v.reason.contains("spread"), "{}", v.reason);
        let mut e = post();
        e.controls.pop();
        let v = decide(&e);
        assert_eq!(v.outcome, Outcome::CannotTell);
        assert!(v.reason.contains("backpressure"), "{}", v.reason);
        // Outside the band with overlapping ranges: noise, not movement.
        let mut e = post();
        e.controls[2].msgs_per_s = r(&[200e3, 290e3, 300e3]);
        assert_eq!(decide(&e).outcome, Outcome::CannotTell);
    }
}
