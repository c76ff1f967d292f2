//! `each-at-best`: each producer at the batch.size where it peaked: close to parity.
//!
//! The post: Java 1.05M msg/s at 128 KB, librdkafka 1.00M at 1 MB, with almost the same CPU
//! (1.91 and 1.96 CPU seconds per million messages): neither client wins in general, each
//! needs its own batch.size. The rule asks for the parity (throughput and CPU per message
//! within a band) and for its condition: the two peak at different batch.size values, Java's
//! own rate really lower at librdkafka's best (one sweep cannot show parity of clients that
//! were never at their best).

use super::finding::{direct, Finding, Reproduce, Side};
use super::reps::{check_at_least, check_within, Reps, MIN_REPS};
use super::verdict::{Check, Verdict};
use crate::vocab::svg::bytes_label;
use crate::vocab::units;
use serde::{Deserialize, Serialize};

/// Java's best over librdkafka's best, and their CPU per message: parity within this band
/// (the post: 1.05x and 0.97x).
pub const PARITY_LO: f64 = 0.8;
pub const PARITY_HI: f64 = 1.25;
/// Java at its own best over Java at librdkafka's best batch.size (the post: 1.04M at 128K
/// against 634k at 1M).
pub const MIN_OWN_BEST_GAIN: f64 = 1.1;
/// batch.size values a client needs so that its best is a peak, not one of two.
pub const MIN_CURVE_POINTS: usize = 3;
/// A client process using this share of the cores it may run on (its affinity) is held by
/// the machine, not by its own design: its threads (and the JVM's GC and JIT) share them.
pub const MACHINE_BOUND_SHARE: f64 = 0.75;

/// The check that a comparison of two clients is theirs, not the machine's: at the points
/// compared, neither process used [`MACHINE_BOUND_SHARE`] or more of the `client_cores` it was
/// pinned to in any rep. Never a failure: a client held by the machine says nothing either way.
pub fn check_not_machine_bound(client_cores: usize, sides: &[(&str, &Reps)]) -> Check {
    let condition = format!(
        "the comparison is the clients', not the machine's: no client process used ≥ {:.0}% \
         of the cores it could run on",
        MACHINE_BOUND_SHARE * 100.0
    );
    if client_cores == 0 {
        return Check::undecided(
            condition,
            "the cores the client could run on were not recorded",
        );
    }
    let limit = MACHINE_BOUND_SHARE * client_cores as f64;
    let cores = |x: f64| format!("{x:.2}");
    let shown = sides
        .iter()
        .map(|(who, r)| format!("{who} {}", r.show(cores)))
        .collect::<Vec<_>>()
        .join(", ");
    let of = format!(
        "of the {client_cores} core{} it was pinned to (--cpus)",
        if client_cores == 1 { "" } else { "s" }
    );
    if sides.iter().any(|(_, r)| r.is_empty()) {
        return Check::undecided(condition, format!("{shown}: not measured"));
    }
    match sides
        .iter()
        .find(|(_, r)| r.max().is_some_and(|m| m >= limit))
    {
        Some((who, r)) => Check::undecided(
            condition,
            format!(
                "{who} used up to {:.2} {of}: its threads shared them, so its rate is this \
                 machine's ({shown} cores); the comparison needs more cores for the client",
                r.max().unwrap_or(0.0)
            ),
        ),
        None => Check::passed(condition, format!("{shown} cores {of}")),
    }
}

/// One client at one batch.size, per rep.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CurvePoint {
    pub batch_size_bytes: u64,
    pub msgs_per_s: Reps,
    pub cpu_s_per_million: Reps,
    /// The client process's cores over the window (its CPU seconds over the window).
    pub process_cores: Reps,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Evidence {
    pub partitions: i32,
    /// The cores the client could run on (its affinity; 0: not recorded).
    pub client_cores: usize,
    pub java: Vec<CurvePoint>,
    pub librdkafka: Vec<CurvePoint>,
}

fn med(r: &Reps) -> f64 {
    r.median().unwrap_or(0.0)
}

/// The point of `curve` with the highest median rate (None when none was measured).
pub fn best(curve: &[CurvePoint]) -> Option<&CurvePoint> {
    curve
        .iter()
        .filter(|p| !p.msgs_per_s.is_empty())
        .max_by(|a, b| med(&a.msgs_per_s).total_cmp(&med(&b.msgs_per_s)))
}

fn cpu(x: f64) -> String {
    format!("{x:.2} CPU s/M")
}

/// `checks` behind the machine's gate: while a client was held by the machine (the gate
/// undecided) a failed check is not counted against the finding (it too becomes undecided,
/// saying so), and the gate's reason comes first: CANNOT TELL, never DOES NOT HOLD.
pub fn behind_machine_gate(gate: Check, checks: Vec<Check>) -> Vec<Check> {
    use super::verdict::CheckState;
    let held = gate.state == CheckState::Undecided;
    let mut v = Vec::with_capacity(checks.len() + 1);
    if held {
        v.push(gate.clone());
    }
    v.extend(checks.into_iter().map(|c| {
        if held && c.state == CheckState::Failed {
            Check::undecided(
                c.condition,
                format!("{} (not counted: the machine held a client)", c.detail),
            )
        } else {
            c
        }
    }));
    if !held {
        v.push(gate);
    }
    v
}

/// The rule: see the module doc.
pub fn decide(e: &Evidence) -> Verdict {
    let measured = |c: &[CurvePoint]| c.iter().filter(|p| !p.msgs_per_s.is_empty()).count();
    let (nj, nr) = (measured(&e.java), measured(&e.librdkafka));
    if nj < MIN_CURVE_POINTS || nr < MIN_CURVE_POINTS {
        return Verdict::cannot_tell(
            &FINDING,
            format!(
                "each client needs ≥ {MIN_CURVE_POINTS} batch.size values for its best to be a \
                 peak (Java ran {nj}, librdkafka {nr}; e.g. --batch-size 16384,131072,1048576)"
            ),
        );
    }
    let (j, r) = (
        best(&e.java).expect("measured"),
        best(&e.librdkafka).expect("measured"),
    );
    let (jb, rb) = (
        bytes_label(j.batch_size_bytes as f64),
        bytes_label(r.batch_size_bytes as f64),
    );
    let own_condition = format!(
        "each needs its own batch.size: Java at its best ({jb}) ≥ {MIN_OWN_BEST_GAIN}x Java at \
         librdkafka's best ({rb}) (the post: 1.04M at 128K, 634k at 1M)"
    );
    // Java's best away from librdkafka's best batch.size against Java at it: when both
    // medians peaked at one batch.size this is Java's runner-up, and only ranges apart say
    // that the shared peak is real (a failure), not noise.
    let own = match (
        best(
            &e.java
                .iter()
                .filter(|p| p.batch_size_bytes != r.batch_size_bytes)
                .cloned()
                .collect::<Vec<_>>(),
        )
        .cloned(),
        e.java
            .iter()
            .find(|p| p.batch_size_bytes == r.batch_size_bytes && !p.msgs_per_s.is_empty()),
    ) {
        (Some(other), Some(at)) => {
            let mut c = check_at_least(
                format!(
                    "each needs its own batch.size: Java at {} ≥ {MIN_OWN_BEST_GAIN}x Java at \
                     librdkafka's best ({rb}) (the post: 1.04M at 128K, 634k at 1M)",
                    bytes_label(other.batch_size_bytes as f64)
                ),
                &other.msgs_per_s,
                &at.msgs_per_s,
                MIN_OWN_BEST_GAIN,
                units::msgs_per_s,
            );
            if j.batch_size_bytes == r.batch_size_bytes {
                c.detail = format!("both medians peaked at batch.size={jb}; {}", c.detail);
            }
            c
        }
        _ => Check::undecided(
            own_condition,
            format!("Java did not run at batch.size={rb} and another"),
        ),
    };
    let checks = vec![
        check_within(
            format!(
                "at their best the rates are within {PARITY_LO}x–{PARITY_HI}x: Java at {jb} \
                 against librdkafka at {rb} (the post: 1.05M against 1.00M)"
            ),
            &j.msgs_per_s,
            &r.msgs_per_s,
            PARITY_LO,
            PARITY_HI,
            units::msgs_per_s,
        ),
        check_within(
            format!(
                "and so is the CPU per message (the post: 1.91 against 1.96 CPU s per million)"
            ),
            &j.cpu_s_per_million,
            &r.cpu_s_per_million,
            PARITY_LO,
            PARITY_HI,
            cpu,
        ),
        own,
    ];
    let checks = behind_machine_gate(
        check_not_machine_bound(
            e.client_cores,
            &[("Java", &j.process_cores), ("librdkafka", &r.process_cores)],
        ),
        checks,
    );
    let mut warnings = Vec::new();
    if j.msgs_per_s.n() < MIN_REPS || r.msgs_per_s.n() < MIN_REPS {
        warnings.push(format!("a best of fewer than {MIN_REPS} reps"));
    }
    Verdict::from_checks(&FINDING, checks, e, || {
        format!(
            "Java peaked at {jb} with {} ({}), librdkafka at {rb} with {} ({}): {} apart, each \
             at its own batch.size (Java at {rb}: slower)",
            units::msgs_per_s(med(&j.msgs_per_s)),
            cpu(med(&j.cpu_s_per_million)),
            units::msgs_per_s(med(&r.msgs_per_s)),
            cpu(med(&r.cpu_s_per_million)),
            units::times(med(&j.msgs_per_s) / med(&r.msgs_per_s)),
        )
    })
    .with_warnings(warnings)
}

pub const FINDING: Finding = Finding {
    id: "each-at-best",
    title: "Each producer at its best batch.size: close to parity",
    side: Side::Both,
    post: "Java 1.05M msg/s at 128 KB, librdkafka 1.00M at 1 MB; 1.91 and 1.96 CPU s per million",
    claim: "Each at its best batch.size: Java 1.05M at 128 KB, Rust 1.00M at 1 MB, with almost \
            the same CPU (1.91 and 1.96 CPU seconds per million messages). Close to parity; \
            each needs its own batch.size.",
    cause: "Java packs every partition's batch into one request and slows past 128 KB (the \
            copying of java-large-batch-copy); librdkafka sends one batch per request and \
            needs large ones to pass its request ceiling",
    fix: "tune batch.size per client: 128–256 KB for Java, 1 MB for librdkafka",
    reproduce: Reproduce {
        probe: "probe-request-ceiling",
        exists: true,
        command: "probe-request-ceiling --brokers 127.0.0.1:9092 --client both --partitions 6 \
                  --batch-size 16384,131072,1048576 --no-diagnose",
    },
    expected_shape: "Java's curve peaks below the largest batch.size, librdkafka's at it; the \
                     two peaks close in msg/s and CPU per message",
    rule: "with ≥ 3 batch.size values per client and ≥ 3 reps, the two best rates and their \
           CPU s per million are within 0.8x–1.25x (outside only with ranges apart), Java's \
           best away from librdkafka's best batch.size runs ≥ 1.1x Java at it, ranges apart, \
           and neither client process used ≥ 75% of the cores it was pinned to (else cannot \
           tell: the machine, not the client, set its best)",
    rule_fn: "findings::each_at_best::decide",
    sources: &[direct("each-at-best", "probe-request-ceiling")],
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::findings::Outcome;

    use crate::findings::reps::of as r;

    fn p(batch: u64, rate: f64, cpu: f64) -> CurvePoint {
        let cores = rate * cpu / 1e6;
        CurvePoint {
            batch_size_bytes: batch,
            msgs_per_s: r(&[rate * 0.98, rate, rate * 1.02]),
            cpu_s_per_million: r(&[cpu * 0.98, cpu, cpu * 1.02]),
            process_cores: r(&[cores * 0.98, cores, cores * 1.02]),
        }
    }

    /// The post's 3-rep sweep at 16K, 128K and 1M (CPU at the ends not given: assumed).
    fn post() -> Evidence {
        Evidence {
            partitions: 6,
            // The post's c6i.8xlarge: 32 vCPUs, the client unpinned.
            client_cores: 32,
            java: vec![
                p(16 << 10, 552e3, 2.4),
                p(128 << 10, 1.05e6, 1.91),
                p(1 << 20, 634e3, 2.6),
            ],
            librdkafka: vec![
                p(16 << 10, 233e3, 4.0),
                p(128 << 10, 768e3, 2.3),
                p(1 << 20, 1.00e6, 1.96),
            ],
        }
    }

    #[test]
    fn the_posts_figures_hold() {
        let v = decide(&post());
        assert_eq!(v.outcome, Outcome::Holds, "{v:#?}");
        assert!(v.reason.contains("Java peaked at 128K"), "{}", v.reason);
    }

    #[test]
    fn a_real_gap_or_a_shared_peak_does_not_hold() {
        let mut e = post();
        e.java[1] = p(128 << 10, 2.0e6, 1.91);
        assert_eq!(decide(&e).outcome, Outcome::DoesNotHold);
        // Both peak at 1M: one batch.size would do for both.
        let mut e = post();
        e.java[2] = p(1 << 20, 1.1e6, 1.9);
        let v = decide(&e);
        assert_eq!(v.outcome, Outcome::DoesNotHold, "{v:#?}");
        assert!(v.reason.contains("both medians peaked"), "{}", v.reason);
        // Twice the CPU per message at parity.
        let mut e = post();
        e.java[1] = p(128 << 10, 1.05e6, 4.0);
        assert_eq!(decide(&e).outcome, Outcome::DoesNotHold);
    }

    #[test]
    fn a_client_that_filled_its_pinned_core_cannot_tell() {
        // This machine (2026-12-01, --cpus 1): Java 143k msg/s at 5.51 CPU s/M = 0.79 cores
        // of its one core, librdkafka 170k at 2.57; both medians at 1M, Java's 128K
        // overlapping; CPU per message 2.15x with ranges apart.
        let mut e = post();
        e.client_cores = 1;
        let v = decide(&e);
        assert_eq!(v.outcome, Outcome::CannotTell, "{v:#?}");
        assert!(
            v.reason.contains("of the 1 core it was pinned to"),
            "{}",
            v.reason
        );
        assert!(v.reason.contains("Java used up to 2.05"), "{}", v.reason);
        // The run itself, per rep.
        let reps = |batch: u64, rates: [f64; 3], cpu: f64| CurvePoint {
            batch_size_bytes: batch,
            msgs_per_s: r(&rates),
            cpu_s_per_million: r(&[cpu; 3]),
            process_cores: Reps::new(rates.iter().map(|x| x * cpu / 1e6)),
        };
        let recorded = Evidence {
            partitions: 6,
            client_cores: 1,
            java: vec![
                reps(16 << 10, [96e3, 115e3, 117e3], 8.37),
                reps(128 << 10, [64e3, 129e3, 143e3], 6.41),
                reps(1 << 20, [82e3, 143e3, 148e3], 5.51),
            ],
            librdkafka: vec![
                reps(16 << 10, [59e3, 103e3, 119e3], 4.99),
                reps(128 << 10, [78e3, 94e3, 173e3], 4.03),
                reps(1 << 20, [110e3, 170e3, 225e3], 2.57),
            ],
        };
        // CPU per message 2.15x with ranges apart, both medians at 1M: neither counted.
        let v = decide(&recorded);
        assert_eq!(v.outcome, Outcome::CannotTell, "{v:#?}");
        assert!(v.reason.contains("Java used up to 0.82"), "{}", v.reason);
        assert!(
            v.checks.iter().any(|c| c.detail.contains("not counted")),
            "{v:#?}"
        );
        // Not recorded: no claim either way.
        e.client_cores = 0;
        assert_eq!(decide(&e).outcome, Outcome::CannotTell);
    }

    #[test]
    fn short_curves_or_overlap_cannot_tell() {
        let mut e = post();
        e.java.remove(0);
        let v = decide(&e);
        assert_eq!(v.outcome, Outcome::CannotTell);
        assert!(v.reason.contains("Java ran 2"), "{}", v.reason);
        // Java's best and its 1M overlap: "each needs its own" is not shown.
        let mut e = post();
        e.java[2].msgs_per_s = r(&[600e3, 900e3, 1.1e6]);
        assert_eq!(decide(&e).outcome, Outcome::CannotTell);
    }
}
