//! `allocator-eases-not-fixes`: a scalable allocator narrows the copying pipeline's gap but
//! does not close it (the postmortem's third change: "That did not fix the root cause, but
//! it reduced the pain").
//!
//! The mechanism: the allocator makes each allocation cheaper, not fewer. The rule asks for
//! the copying pipeline's allocation count unchanged on the scalable allocator (≥ 4 per
//! record in every rep), for the gap itself on the system allocator (borrowed ≥
//! [`MIN_GAP`]x copying), for the scalable allocator to narrow it (copying on it ≥
//! [`MIN_EASE`]x copying on the system one, in speed and in pipeline CPU per record), and
//! for what is left (borrowed on the system allocator still ≥ [`MIN_LEFT`]x copying on the
//! scalable one), every comparison with min/max ranges apart. Speed is msg/s unpaced and the
//! per-record p50 at the same input rate when paced; an unpaced copying pipeline that is not
//! the consumer's limit cannot tell.

use super::consumer_allocation_pattern::{load_warning, pipeline_limit_check, COPYING_MIN_ALLOCS};
use super::finding::{direct, Finding, Reproduce, Side};
use super::reps::{check_at_least, check_every_rep, Reps};
use super::verdict::{Check, Verdict};
use crate::vocab::units;
use serde::{Deserialize, Serialize};

/// The gap on the system allocator the finding is about.
pub const MIN_GAP: f64 = 1.2;
/// What "narrows" asks of the scalable allocator: a real, if small, gain.
pub const MIN_EASE: f64 = 1.05;
/// What "does not close" asks: the borrowed pipeline still clearly ahead.
pub const MIN_LEFT: f64 = 1.1;

/// One pipeline and allocator's speed and cost, per rep.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Side3 {
    pub msgs_per_s: Reps,
    pub p50_us: Reps,
    pub cpu_s_per_million: Reps,
    pub allocs_per_record: Reps,
}

/// What a probe measured: copying on both allocators, borrowed on the system one.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Evidence {
    /// The scalable allocator (`mimalloc`).
    pub scalable: String,
    pub paced_rate_per_s: Option<u64>,
    pub copying_system: Side3,
    pub copying_scalable: Side3,
    pub borrowed_system: Side3,
    /// Copying on the system allocator: the processing threads' busy share of the window.
    pub copying_busy_share: Reps,
    pub load_average_1m: Option<f64>,
    pub machine_cores: usize,
}

/// "`fast` is ≥ factor x faster than `slow`": msg/s unpaced, p50 per record paced.
fn faster(e: &Evidence, what: String, fast: &Side3, slow: &Side3, factor: f64) -> Check {
    match e.paced_rate_per_s {
        Some(_) => check_at_least(
            format!("{what} (p50 per record at the same input rate)"),
            &slow.p50_us,
            &fast.p50_us,
            factor,
            |x| format!("{x:.2} µs"),
        ),
        None => check_at_least(
            format!("{what} (msg/s)"),
            &fast.msgs_per_s,
            &slow.msgs_per_s,
            factor,
            units::msgs_per_s,
        ),
    }
}

/// The rule: see the module doc.
pub fn decide(e: &Evidence) -> Verdict {
    let sc = &e.scalable;
    let cpu = |x: f64| format!("{x:.2} CPU s/M records");
    let mut checks = vec![check_every_rep(
        format!("on {sc} the copying pipeline still makes ≥ {COPYING_MIN_ALLOCS} allocations per record"),
        &e.copying_scalable.allocs_per_record,
        |n| n >= COPYING_MIN_ALLOCS,
        |x| format!("{x:.2} allocations/record"),
    )];
    if e.paced_rate_per_s.is_none() {
        checks.extend(pipeline_limit_check(&e.copying_busy_share));
    }
    checks.push(faster(
        e,
        format!("on the system allocator borrowed is ≥ {MIN_GAP}x copying"),
        &e.borrowed_system,
        &e.copying_system,
        MIN_GAP,
    ));
    checks.push(check_at_least(
        format!("{sc} lowers the copying pipeline's CPU per record ≥ {MIN_EASE}x"),
        &e.copying_system.cpu_s_per_million,
        &e.copying_scalable.cpu_s_per_million,
        MIN_EASE,
        cpu,
    ));
    checks.push(faster(
        e,
        format!("{sc} narrows the gap: copying on it ≥ {MIN_EASE}x copying on system"),
        &e.copying_scalable,
        &e.copying_system,
        MIN_EASE,
    ));
    checks.push(faster(
        e,
        format!("but does not close it: borrowed on system ≥ {MIN_LEFT}x copying on {sc}"),
        &e.borrowed_system,
        &e.copying_scalable,
        MIN_LEFT,
    ));
    let warnings: Vec<String> = load_warning(e.load_average_1m, e.machine_cores)
        .into_iter()
        .collect();
    Verdict::from_checks(&FINDING, checks, e, || {
        let m = |r: &Reps| r.median().unwrap_or(0.0);
        format!(
            "{sc} cut the copying pipeline's CPU per record {} ({} → {}) with the same {:.1} \
             allocations per record, and the borrowed pipeline on the system allocator still \
             used {}: a cheaper allocation eases the pain, fewer allocations fix it",
            units::times(
                m(&e.copying_system.cpu_s_per_million) / m(&e.copying_scalable.cpu_s_per_million)
            ),
            cpu(m(&e.copying_system.cpu_s_per_million)),
            cpu(m(&e.copying_scalable.cpu_s_per_million)),
            m(&e.copying_scalable.allocs_per_record),
            cpu(m(&e.borrowed_system.cpu_s_per_million)),
        )
    })
    .with_warnings(warnings)
}

pub const FINDING: Finding = Finding {
    id: "allocator-eases-not-fixes",
    title: "Postmortem: a scalable allocator eases the allocation cost but does not fix it",
    side: Side::Harness,
    post: "a scalable allocator with bigger thread caches reduced the pain, not the cause",
    claim: "\"We linked with a more scalable allocator and gave the consumer larger \
            thread-local caches. That did not fix the root cause, but it reduced the pain \
            while we refactored the hot path.\"",
    cause: "the allocator makes each of the 4–5 allocations per record cheaper (per-thread \
            free lists, no shared arena lock) but the pipeline still makes them",
    fix: "reduce the allocations (borrowed payloads, reused buffers, a ring of slots); the \
          allocator is a stopgap",
    reproduce: Reproduce {
        probe: "probe-consumer-alloc",
        exists: true,
        command: "probe-consumer-alloc --brokers 127.0.0.1:9092 --variants copying,borrowed \
                  --allocators system,mimalloc",
    },
    expected_shape: "copying on mimalloc faster and cheaper per record than on the system \
                     allocator, still ≥ 4 allocations per record, still behind borrowed",
    rule: "in every rep the copying pipeline on the scalable allocator ≥ 4 allocations per \
           record; borrowed/system ≥ 1.2x copying/system; copying/scalable ≥ 1.05x \
           copying/system in speed and CPU per record; borrowed/system ≥ 1.1x \
           copying/scalable; speed is msg/s unpaced (CANNOT TELL when the copying pipeline's \
           threads are busy < 50% of the window) or p50 per record with --rate; ranges apart, \
           ≥ 3 reps",
    rule_fn: "findings::allocator_eases_not_fixes::decide",
    sources: &[direct("allocator-eases-not-fixes", "probe-consumer-alloc")],
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::findings::Outcome;

    use crate::findings::reps::of as reps;

    fn side(msgs: [f64; 3], cpu: [f64; 3], allocs: f64) -> Side3 {
        Side3 {
            msgs_per_s: reps(&msgs),
            p50_us: reps(&cpu.map(|c| c * 0.9)),
            cpu_s_per_million: reps(&cpu),
            allocs_per_record: reps(&[allocs, allocs, allocs]),
        }
    }

    /// The postmortem's shape: the allocator takes some of the 38% allocator share away,
    /// the allocations stay, the borrowed pipeline stays ahead.
    fn postmortem() -> Evidence {
        Evidence {
            scalable: "mimalloc".into(),
            paced_rate_per_s: None,
            copying_system: side([50e3, 51e3, 49e3], [20.0, 20.5, 19.8], 4.5),
            copying_scalable: side([65e3, 66e3, 64e3], [15.0, 15.5, 15.2], 4.5),
            borrowed_system: side([110e3, 112e3, 109e3], [8.5, 8.7, 8.6], 0.5),
            copying_busy_share: reps(&[0.9, 0.9, 0.9]),
            load_average_1m: None,
            machine_cores: 32,
        }
    }

    #[test]
    fn the_postmortems_shape_holds() {
        let v = decide(&postmortem());
        assert_eq!(v.outcome, Outcome::Holds, "{v:#?}");
        assert!(
            v.reason.contains("mimalloc cut") && v.reason.contains("4.5"),
            "{}",
            v.reason
        );
    }

    #[test]
    fn an_allocator_that_closes_the_gap_does_not_hold() {
        // Copying on mimalloc overtook borrowed: nothing left to fix.
        let e = Evidence {
            copying_scalable: side([118e3, 120e3, 121e3], [8.0, 8.1, 8.2], 4.5),
            ..postmortem()
        };
        let v = decide(&e);
        assert_eq!(v.outcome, Outcome::DoesNotHold, "{v:#?}");
        assert!(v.reason.contains("does not close"), "{}", v.reason);
    }

    #[test]
    fn an_allocator_that_changes_nothing_does_not_hold() {
        // 1.02x less CPU per record, ranges apart: real but not an easing.
        let e = Evidence {
            copying_system: side([50e3, 51e3, 49e3], [20.0, 20.1, 20.2], 4.5),
            copying_scalable: side([50e3, 50.5e3, 49.5e3], [19.5, 19.6, 19.7], 4.5),
            ..postmortem()
        };
        let v = decide(&e);
        assert_eq!(v.outcome, Outcome::DoesNotHold, "{v:#?}");
        assert!(
            v.reason.contains("lowers the copying pipeline's CPU"),
            "{}",
            v.reason
        );
    }

    #[test]
    fn noise_on_a_loaded_machine_cannot_tell() {
        let e = Evidence {
            copying_scalable: side([45e3, 66e3, 80e3], [14.0, 19.0, 21.0], 4.5),
            load_average_1m: Some(5.0),
            machine_cores: 2,
            ..postmortem()
        };
        let v = decide(&e);
        assert_eq!(v.outcome, Outcome::CannotTell, "{v:#?}");
        assert!(!v.warnings.is_empty());
    }

    #[test]
    fn a_faster_copy_with_fewer_allocations_is_another_mechanism() {
        // If the copying pipeline allocated less on the scalable allocator, the speed-up
        // would not be the allocator's.
        let e = Evidence {
            copying_scalable: side([65e3, 66e3, 64e3], [15.0, 15.5, 15.2], 2.0),
            ..postmortem()
        };
        assert_eq!(decide(&e).outcome, Outcome::DoesNotHold);
    }

    #[test]
    fn librdkafka_as_the_limit_cannot_tell_unpaced_but_paced_can() {
        let e = Evidence {
            copying_busy_share: reps(&[0.3, 0.3, 0.3]),
            ..postmortem()
        };
        assert_eq!(decide(&e).outcome, Outcome::CannotTell);
        let paced = Evidence {
            paced_rate_per_s: Some(40_000),
            ..e
        };
        assert_eq!(decide(&paced).outcome, Outcome::Holds);
    }
}
