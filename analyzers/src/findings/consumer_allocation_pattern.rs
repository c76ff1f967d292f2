//! `consumer-allocation-pattern`: allocation patterns, not safety, decide a Rust consumer
//! (the postmortem of a Rust rewrite of a Java consumer on rust-rdkafka).
//!
//! The mechanism: the first version allocated a fresh buffer at each step of every record
//! (the payload `Vec<u8>`, a trimmed copy, a `String` for JSON, cloned `String` keys): four
//! or five heap allocations per record, 38% of CPU in malloc/free and 20% in memcpy. The fix
//! kept records in one buffer (payloads borrowed, buffers reused, keys looked up by `&str`).
//! The rule asks for the allocation counts on both sides (≥ [`COPYING_MIN_ALLOCS`] per record
//! copying, ≤ [`BORROWED_MAX_ALLOCS`] borrowed, in every rep), for less pipeline CPU per
//! record borrowed, and for the borrowed pipeline faster with min/max ranges apart: msg/s
//! when unpaced, the per-record processing time at the same input rate when paced. An
//! unpaced run whose copying pipeline is not what limits msg/s (its processing threads spend
//! most of the window waiting for librdkafka to hand them records: a slow broker, a loaded
//! machine) cannot show a faster pipeline: CANNOT TELL, with the measured busy share.

use super::finding::{direct, indirect, Finding, Reproduce, Side};
use super::reps::{check_at_least, check_every_rep, Reps};
use super::verdict::{Check, Verdict};
use crate::vocab::units;
use serde::{Deserialize, Serialize};

/// The postmortem: "four or five heap allocations per record".
pub const COPYING_MIN_ALLOCS: f64 = 4.0;
/// Borrowed payloads and reused buffers: at most one allocation per record.
pub const BORROWED_MAX_ALLOCS: f64 = 1.0;
/// The speed-up (and the CPU per record saved) the borrowed pipeline must show, ranges
/// apart. The postmortem gives no ratio; 58% of CPU in malloc/free/memcpy leaves room for
/// far more, and 1.2x is a clear effect that a loaded 2-core machine can still show.
pub const MIN_SPEEDUP: f64 = 1.2;
/// The share of their window the copying pipeline's processing threads must spend
/// processing records (not waiting for them) to be what limits an unpaced run.
pub const MIN_BUSY_SHARE: f64 = 0.5;

/// What a probe measured for the copying and the borrowed pipelines on one allocator.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Evidence {
    /// The allocator both ran on (`system` is the postmortem's first version).
    pub allocator: String,
    /// The input rate when paced (--rate); None when unpaced.
    pub paced_rate_per_s: Option<u64>,
    pub copying_allocs_per_record: Reps,
    pub borrowed_allocs_per_record: Reps,
    pub copying_msgs_per_s: Reps,
    pub borrowed_msgs_per_s: Reps,
    /// Per-record processing time, p50, microseconds.
    pub copying_p50_us: Reps,
    pub borrowed_p50_us: Reps,
    /// Pipeline CPU seconds per million records (processing and writer threads).
    pub copying_cpu_s_per_million: Reps,
    pub borrowed_cpu_s_per_million: Reps,
    /// Copying run: the processing threads' busy share of their window (wall time
    /// processing records against waiting for them).
    pub copying_busy_share: Reps,
    /// Copying run: perf's share of the pipeline's samples in malloc/free and memcpy, percent
    /// (empty where perf did not measure; shown, not required).
    pub copying_alloc_pct: Reps,
    pub copying_memcpy_pct: Reps,
    /// The 1-minute load average at the runs and the machine's cores.
    pub load_average_1m: Option<f64>,
    pub machine_cores: usize,
}

fn us(x: f64) -> String {
    format!("{x:.2} µs")
}

fn per_record(x: f64) -> String {
    format!("{x:.2} allocations/record")
}

fn cpu(x: f64) -> String {
    format!("{x:.2} CPU s/M records")
}

/// The check that an unpaced run can show a faster pipeline at all: None when the copying
/// pipeline was busy (the limit), or not measured (the speed check then decides alone).
pub fn pipeline_limit_check(busy: &Reps) -> Option<Check> {
    let m = busy.median()?;
    (m < MIN_BUSY_SHARE).then(|| {
        Check::undecided(
            "the copying pipeline is what limits msg/s",
            format!(
                "its processing threads were busy {} of the window (< {} is not the limit: \
                 they waited for librdkafka to hand them records — the broker or a loaded \
                 machine is the limit): a faster pipeline cannot show as msg/s here; run with \
                 --rate to compare per-record time at the same input rate",
                units::percent(m),
                units::percent(MIN_BUSY_SHARE)
            ),
        )
    })
}

/// The warning a loaded machine gets.
pub fn load_warning(load: Option<f64>, cores: usize) -> Option<String> {
    let l = load?;
    (cores > 0 && l > cores as f64).then(|| {
        format!(
            "the load average was {l:.2} on {cores} cores: other processes took CPU from the \
             runs, so msg/s and per-record times are noisier than the allocation counts"
        )
    })
}

/// The rule: see the module doc.
pub fn decide(e: &Evidence) -> Verdict {
    let mut checks = vec![
        check_every_rep(
            format!(
                "the copying pipeline makes ≥ {COPYING_MIN_ALLOCS} heap allocations per record"
            ),
            &e.copying_allocs_per_record,
            |n| n >= COPYING_MIN_ALLOCS,
            per_record,
        ),
        check_every_rep(
            format!("the borrowed pipeline makes ≤ {BORROWED_MAX_ALLOCS} per record"),
            &e.borrowed_allocs_per_record,
            |n| n <= BORROWED_MAX_ALLOCS,
            per_record,
        ),
        check_at_least(
            format!("the copying pipeline spends ≥ {MIN_SPEEDUP}x the CPU per record"),
            &e.copying_cpu_s_per_million,
            &e.borrowed_cpu_s_per_million,
            MIN_SPEEDUP,
            cpu,
        ),
    ];
    match e.paced_rate_per_s {
        Some(rate) => checks.push(check_at_least(
            format!(
                "at the same input rate ({}) the borrowed pipeline processes a record \
                 ≥ {MIN_SPEEDUP}x faster (p50)",
                units::msgs_per_s(rate as f64)
            ),
            &e.copying_p50_us,
            &e.borrowed_p50_us,
            MIN_SPEEDUP,
            us,
        )),
        None => checks.push(
            pipeline_limit_check(&e.copying_busy_share).unwrap_or_else(|| {
                check_at_least(
                    format!("the borrowed pipeline reads ≥ {MIN_SPEEDUP}x the copying one's msg/s"),
                    &e.borrowed_msgs_per_s,
                    &e.copying_msgs_per_s,
                    MIN_SPEEDUP,
                    units::msgs_per_s,
                )
            }),
        ),
    }
    let mut warnings: Vec<String> = load_warning(e.load_average_1m, e.machine_cores)
        .into_iter()
        .collect();
    warnings.extend(
        e.copying_msgs_per_s
            .outlier_warnings("copying msg/s", units::msgs_per_s),
    );
    warnings.extend(
        e.borrowed_msgs_per_s
            .outlier_warnings("borrowed msg/s", units::msgs_per_s),
    );
    Verdict::from_checks(&FINDING, checks, e, || {
        let m = |r: &Reps| r.median().unwrap_or(0.0);
        let perf = match (e.copying_alloc_pct.median(), e.copying_memcpy_pct.median()) {
            (Some(a), Some(c)) => format!(
                "; perf: {a:.0}% of the copying pipeline's samples in the allocator, {c:.0}% in \
                 memcpy (the postmortem: 38% and 20%)"
            ),
            _ => String::new(),
        };
        format!(
            "on the {} allocator the copying pipeline made {:.1} heap allocations per record, \
             the borrowed one {:.2}, and spent {} the pipeline CPU per record ({} → {}){perf}: \
             a fresh buffer at each step, not the language's safety checks, is the cost",
            e.allocator,
            m(&e.copying_allocs_per_record),
            m(&e.borrowed_allocs_per_record),
            units::times(m(&e.copying_cpu_s_per_million) / m(&e.borrowed_cpu_s_per_million)),
            cpu(m(&e.copying_cpu_s_per_million)),
            cpu(m(&e.borrowed_cpu_s_per_million)),
        )
    })
    .with_warnings(warnings)
}

pub const FINDING: Finding = Finding {
    id: "consumer-allocation-pattern",
    title: "Postmortem: allocation patterns, not safety, decide a Rust consumer",
    side: Side::Harness,
    post: "4–5 heap allocations per record: 38% of CPU in malloc/free, 20% in memcpy",
    claim: "A Rust rewrite of a Java consumer on rust-rdkafka was slower than the Java one: \
            higher p99 at the same input rate, ~35% more memory per partition, a sawtooth \
            RSS. Profiling: 38% of CPU in malloc/free and the allocator, 20% in memcpy, the \
            record consumer itself under 10%; 4–5 heap allocations per record (payload \
            Vec<u8>, a trimmed copy, a String for JSON, cloned String keys).",
    cause: "the application's own data flow allocated a fresh buffer at each step of every \
            record and cloned keys into the aggregation map; librdkafka was not the problem",
    fix: "keep records in one buffer: payloads borrowed from the batch buffer (bytes), \
          reused deserialization buffers, keys looked up by &str, a bounded ring of \
          pre-allocated slots instead of channels of heap records",
    reproduce: Reproduce {
        probe: "probe-consumer-alloc",
        exists: true,
        command: "probe-consumer-alloc --brokers 127.0.0.1:9092 --variants copying,borrowed",
    },
    expected_shape: "copying ≥ 4 allocations per record, borrowed ≤ 1; borrowed less CPU per \
                     record and faster",
    rule: "in every rep copying ≥ 4 heap allocations per record and borrowed ≤ 1 (the \
           counting allocator, pipeline threads); copying ≥ 1.2x the pipeline CPU per record; \
           borrowed ≥ 1.2x the msg/s (unpaced; CANNOT TELL when the copying pipeline's \
           threads are busy < 50% of the window) or ≥ 1.2x faster per record at p50 (--rate), ranges \
           apart (≥ 3 reps)",
    rule_fn: "findings::consumer_allocation_pattern::decide",
    sources: &[
        direct("consumer-allocation-pattern", "probe-consumer-alloc"),
        // The pipeline's threads above librdkafka's: consistent with the pattern, but any
        // heavy per-record work gives the same sign.
        indirect("processing-threads-limit", "analyze-thread-cpu"),
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::findings::{CheckState, Outcome};

    use crate::findings::reps::of as reps;

    /// The postmortem's shape: 4–5 allocations per record against the fixed version's
    /// fraction of one, the copying pipeline's CPU 58% allocator and memcpy (so the fixed one
    /// needs well under half of it), the pipeline the consumer's limit.
    fn postmortem() -> Evidence {
        Evidence {
            allocator: "system".into(),
            paced_rate_per_s: None,
            copying_allocs_per_record: reps(&[4.5, 4.6, 4.4]),
            borrowed_allocs_per_record: reps(&[0.5, 0.5, 0.6]),
            copying_msgs_per_s: reps(&[50e3, 52e3, 49e3]),
            borrowed_msgs_per_s: reps(&[110e3, 118e3, 112e3]),
            copying_p50_us: reps(&[18.0, 19.0, 18.5]),
            borrowed_p50_us: reps(&[7.5, 8.0, 7.8]),
            copying_cpu_s_per_million: reps(&[20.0, 21.0, 19.5]),
            borrowed_cpu_s_per_million: reps(&[8.4, 8.8, 8.6]),
            copying_busy_share: reps(&[0.9, 0.9, 0.9]),
            copying_alloc_pct: reps(&[38.0, 37.0, 39.0]),
            copying_memcpy_pct: reps(&[20.0, 21.0, 19.0]),
            load_average_1m: Some(1.0),
            machine_cores: 32,
        }
    }

    #[test]
    fn the_postmortems_figures_hold() {
        let v = decide(&postmortem());
        assert_eq!(v.outcome, Outcome::Holds, "{v:#?}");
        assert!(
            v.reason.contains("4.5 heap allocations") && v.reason.contains("38%"),
            "{}",
            v.reason
        );
        assert!(v.warnings.is_empty(), "{:?}", v.warnings);
    }

    #[test]
    fn three_allocations_per_record_is_not_the_pattern() {
        let e = Evidence {
            copying_allocs_per_record: reps(&[3.0, 3.1, 2.9]),
            ..postmortem()
        };
        let v = decide(&e);
        assert_eq!(v.outcome, Outcome::DoesNotHold);
        assert!(v.reason.contains("≥ 4 heap allocations"), "{}", v.reason);
    }

    #[test]
    fn a_borrowed_pipeline_that_still_allocates_does_not_hold() {
        // Halving the allocations (the bytes crate alone) is not the whole fix.
        let e = Evidence {
            borrowed_allocs_per_record: reps(&[2.2, 2.3, 2.2]),
            ..postmortem()
        };
        assert_eq!(decide(&e).outcome, Outcome::DoesNotHold);
    }

    #[test]
    fn fewer_allocations_without_a_speedup_does_not_hold() {
        let e = Evidence {
            borrowed_msgs_per_s: reps(&[52e3, 53e3, 54e3]),
            copying_msgs_per_s: reps(&[49e3, 50e3, 50.5e3]),
            ..postmortem()
        };
        let v = decide(&e);
        assert_eq!(v.outcome, Outcome::DoesNotHold, "{v:#?}");
        assert!(v.reason.contains("below the 1.2x"), "{}", v.reason);
    }

    #[test]
    fn overlapping_ranges_on_a_loaded_machine_cannot_tell() {
        let e = Evidence {
            borrowed_msgs_per_s: reps(&[45e3, 110e3, 118e3]),
            load_average_1m: Some(5.7),
            machine_cores: 2,
            ..postmortem()
        };
        let v = decide(&e);
        assert_eq!(v.outcome, Outcome::CannotTell, "{v:#?}");
        assert!(v.reason.contains("overlap"));
        assert!(v
            .warnings
            .iter()
            .any(|w| w.contains("load average was 5.70 on 2 cores")));
    }

    #[test]
    fn when_librdkafka_is_the_limit_msgs_cannot_tell() {
        // Same msg/s, but the pipeline waited for records 80% of the time: the broker on a
        // loaded machine was the limit (Kafka 4.3.1 at load 16 here), not a refutation.
        let e = Evidence {
            copying_busy_share: reps(&[0.2, 0.25, 0.2]),
            borrowed_msgs_per_s: reps(&[50e3, 51e3, 52e3]),
            ..postmortem()
        };
        let v = decide(&e);
        assert_eq!(v.outcome, Outcome::CannotTell, "{v:#?}");
        assert!(v.reason.contains("--rate"), "{}", v.reason);
    }

    #[test]
    fn paced_runs_compare_the_per_record_time() {
        let e = Evidence {
            paced_rate_per_s: Some(50_000),
            copying_msgs_per_s: reps(&[50e3, 50e3, 50e3]),
            borrowed_msgs_per_s: reps(&[50e3, 50e3, 50e3]),
            ..postmortem()
        };
        assert_eq!(decide(&e).outcome, Outcome::Holds);
        // 1.1x faster, ranges apart: a real difference but not the pattern's.
        let slow = Evidence {
            borrowed_p50_us: reps(&[16.5, 16.8, 17.0]),
            ..e
        };
        assert_eq!(decide(&slow).outcome, Outcome::DoesNotHold);
    }

    #[test]
    fn uncounted_allocations_never_hold() {
        let e = Evidence {
            copying_allocs_per_record: Reps::default(),
            borrowed_allocs_per_record: Reps::default(),
            ..postmortem()
        };
        let v = decide(&e);
        assert_eq!(v.outcome, Outcome::CannotTell);
        assert_eq!(v.checks[0].state, CheckState::Undecided);
        let one = Evidence {
            copying_allocs_per_record: reps(&[4.5]),
            ..postmortem()
        };
        assert_eq!(decide(&one).outcome, Outcome::CannotTell);
    }
}
