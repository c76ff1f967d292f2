//! `java-large-batch-copy`: Java's producer slows down past its peak batch.size, and the
//! network thread's user-space copying is why.
//!
//! The mechanism: kafka-clients packs every ready partition's batch into one ProduceRequest
//! (6.29 MB at 1 MB × 6 partitions); its batches live on the heap, and the JDK copies a heap
//! buffer's whole unsent rest into a temporary direct buffer before every socket write, so a
//! large request is copied many times over in user space while the kernel's work per byte
//! stays the same. The rule asks for each link, from one probe-request-ceiling sweep of
//! Java's batch.size curve:
//! - the rate falls past its peak (the largest batch.size measured runs slower than the
//!   peak, ranges apart);
//! - the network thread's user CPU seconds per GB sent rise from the peak to the largest
//!   batch.size (the post: 0.44 → 1.02 s/GB, 2.3x), read beside the kernel's (flat in the
//!   post: the extra work is copying, not sending);
//! - a fix point at the largest batch.size (send.buffer.bytes=-1, max.request.size=1100000,
//!   or both) recovers part of the fall.

use super::each_at_best::{behind_machine_gate, check_not_machine_bound};
use super::finding::{direct, Finding, Reproduce, Side};
use super::reps::{check_at_least, Reps};
use super::verdict::{Check, Verdict};
use crate::vocab::svg::bytes_label;
use crate::vocab::units;
use serde::{Deserialize, Serialize};

/// The peak's rate over the largest batch.size's, ranges apart (the post: 1.04M / 634k,
/// 1.64x; differences under ~3% it calls noise).
pub const MIN_FALL: f64 = 1.1;
/// The network thread's user CPU per GB at the largest batch.size over the peak's (the post:
/// 1.02 / 0.44 s/GB, 2.3x).
pub const MIN_USER_CPU_RISE: f64 = 1.5;
/// A fix point's rate over the largest batch.size's without it, ranges apart (the post:
/// 630k → 875k, 922k, 984k: 1.39x–1.56x).
pub const MIN_RECOVERY: f64 = 1.1;

/// Java at one batch.size, per rep.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CurvePoint {
    pub batch_size_bytes: u64,
    pub msgs_per_s: Reps,
    /// The producer network thread's user-space CPU seconds per GB sent (bytes as the
    /// producer counted them on the wire).
    pub network_user_cpu_s_per_gb: Reps,
    /// Its kernel CPU seconds per GB sent.
    pub network_sys_cpu_s_per_gb: Reps,
    /// The JVM's cores over the window.
    #[serde(default)]
    pub process_cores: Reps,
}

/// Java at the largest batch.size with a fix set.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FixPoint {
    /// `send.buffer.bytes=-1`, `max.request.size=1100000`, or both.
    pub fix: String,
    pub batch_size_bytes: u64,
    pub msgs_per_s: Reps,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Evidence {
    /// The partitions of the curve (the sweep's most).
    pub partitions: i32,
    /// The cores the JVM could run on (its affinity; 0: not recorded).
    #[serde(default)]
    pub client_cores: usize,
    pub curve: Vec<CurvePoint>,
    pub fixes: Vec<FixPoint>,
}

fn med(r: &Reps) -> f64 {
    r.median().unwrap_or(0.0)
}

fn s_per_gb(x: f64) -> String {
    format!("{x:.2} s/GB")
}

/// The rule: see the module doc.
pub fn decide(e: &Evidence) -> Verdict {
    let measured: Vec<&CurvePoint> = e
        .curve
        .iter()
        .filter(|p| !p.msgs_per_s.is_empty())
        .collect();
    if measured.len() < 2 {
        return Verdict::cannot_tell(
            &FINDING,
            format!(
                "Java ran at {} batch.size value{}: a curve needs two or more (the post: 16K…1M)",
                measured.len(),
                if measured.len() == 1 { "" } else { "s" }
            ),
        );
    }
    let largest = *measured
        .iter()
        .max_by_key(|p| p.batch_size_bytes)
        .expect("two or more");
    let peak = *measured
        .iter()
        .max_by(|a, b| med(&a.msgs_per_s).total_cmp(&med(&b.msgs_per_s)))
        .expect("two or more");
    // When the largest is itself the peak, the best of the others is what it must fall from.
    let from = if peak.batch_size_bytes == largest.batch_size_bytes {
        *measured
            .iter()
            .filter(|p| p.batch_size_bytes != largest.batch_size_bytes)
            .max_by(|a, b| med(&a.msgs_per_s).total_cmp(&med(&b.msgs_per_s)))
            .expect("two or more")
    } else {
        peak
    };
    let (lb, fb) = (
        bytes_label(largest.batch_size_bytes as f64),
        bytes_label(from.batch_size_bytes as f64),
    );
    let mut checks = vec![
        check_at_least(
            format!(
                "Java's rate falls past its peak: {fb} ≥ {MIN_FALL}x {lb} (the post: 1.04M at \
                 128K, 634k at 1M)"
            ),
            &from.msgs_per_s,
            &largest.msgs_per_s,
            MIN_FALL,
            units::msgs_per_s,
        ),
        check_at_least(
            format!(
                "the network thread's user CPU per GB sent rises ≥ {MIN_USER_CPU_RISE}x from \
                 {fb} to {lb} (the post: 0.44 → 1.02 s/GB)"
            ),
            &largest.network_user_cpu_s_per_gb,
            &from.network_user_cpu_s_per_gb,
            MIN_USER_CPU_RISE,
            s_per_gb,
        ),
    ];
    let fixes: Vec<&FixPoint> = e
        .fixes
        .iter()
        .filter(|f| f.batch_size_bytes == largest.batch_size_bytes && !f.msgs_per_s.is_empty())
        .collect();
    let best_fix = fixes
        .iter()
        .max_by(|a, b| med(&a.msgs_per_s).total_cmp(&med(&b.msgs_per_s)))
        .copied();
    let fix_condition = format!(
        "a fix at {lb} (send.buffer.bytes=-1 or max.request.size=1100000) recovers ≥ \
         {MIN_RECOVERY}x (the post: 630k → 875k, 922k; both 984k)"
    );
    checks.push(match best_fix {
        None => Check::undecided(
            fix_condition,
            format!("no fix point was measured at {lb} (run with --java-fixes)"),
        ),
        Some(f) => {
            let mut c = check_at_least(
                fix_condition,
                &f.msgs_per_s,
                &largest.msgs_per_s,
                MIN_RECOVERY,
                units::msgs_per_s,
            );
            c.detail = format!("{}: {}", f.fix, c.detail);
            c
        }
    });
    // A JVM that filled its cores runs faster wherever it spends less CPU per message,
    // whatever the copying: its curve is the machine's.
    let checks = behind_machine_gate(
        check_not_machine_bound(
            e.client_cores,
            &[
                (&format!("Java at {fb}"), &from.process_cores),
                (&format!("Java at {lb}"), &largest.process_cores),
            ],
        ),
        checks,
    );
    let mut warnings = Vec::new();
    for p in &measured {
        warnings.extend(p.msgs_per_s.outlier_warnings(
            &format!(
                "Java msg/s at batch.size={}",
                bytes_label(p.batch_size_bytes as f64)
            ),
            units::msgs_per_s,
        ));
    }
    let kernel = |p: &CurvePoint| {
        p.network_sys_cpu_s_per_gb
            .median()
            .map_or("not measured".to_string(), s_per_gb)
    };
    let fixes_said = fixes
        .iter()
        .map(|f| format!("{} {}", f.fix, units::msgs_per_s(med(&f.msgs_per_s))))
        .collect::<Vec<_>>()
        .join(", ");
    Verdict::from_checks(&FINDING, checks, e, || {
        format!(
            "Java ran {} at batch.size={fb} and {} at {lb}, while its network thread's user CPU \
             per GB sent went {} → {} (kernel {} → {}): the JDK re-copies the unsent rest of a \
             large heap-buffer request on every write; at {lb} {fixes_said}",
            units::msgs_per_s(med(&from.msgs_per_s)),
            units::msgs_per_s(med(&largest.msgs_per_s)),
            s_per_gb(med(&from.network_user_cpu_s_per_gb)),
            s_per_gb(med(&largest.network_user_cpu_s_per_gb)),
            kernel(from),
            kernel(largest),
        )
    })
    .with_warnings(warnings)
}

pub const FINDING: Finding = Finding {
    id: "java-large-batch-copy",
    title: "Java's producer slows past its peak batch.size: the network thread copies",
    side: Side::Java,
    post: "Java 1.04M msg/s at 128 KB, 634k at 1 MB; network thread user CPU 0.44 → 1.02 s/GB; send.buffer.bytes=-1 875k, max.request.size=1100000 922k, both 984k",
    claim: "Java peaks at 1.04M msg/s with 128 KB batches and falls to 634k at 1 MB; the \
            network thread spends 1.02 user-space CPU seconds per GB at 1 MB against 0.44 at \
            128 KB while kernel time per byte stays flat. send.buffer.bytes=-1 gives 875k, \
            max.request.size=1100000 922k, both together 984k.",
    cause: "one ProduceRequest carries every partition's batch (6.29 MB at 1 MB × 6), and the \
            JDK copies a heap buffer's whole unsent rest into a temporary direct buffer on \
            every socket write: the extra work is copying, not sending",
    fix: "send.buffer.bytes=-1, or max.request.size=1100000 (one batch per request); keep \
          batch.size at 256 KB or below",
    reproduce: Reproduce {
        probe: "probe-request-ceiling",
        exists: true,
        command: "probe-request-ceiling --brokers 127.0.0.1:9092 --client java --partitions 6 \
                  --batch-size 16384,131072,1048576 --java-fixes --no-diagnose",
    },
    expected_shape: "Java's msg/s rises to a peak and falls at the largest batch.size; the \
                     network thread's user CPU per GB rises with it, its kernel CPU per GB \
                     flat; a fix point lifts the largest batch.size",
    rule: "with ≥ 3 reps at each point, Java's peak rate is ≥ 1.1x its rate at the largest \
           batch.size, the network thread's user CPU per GB sent at the largest is ≥ 1.5x \
           its value at the peak, and a fix point at the largest batch.size runs ≥ 1.1x faster \
           than without it, min/max ranges apart each time; a JVM that used ≥ 75% of the \
           cores it was pinned to makes it cannot tell",
    rule_fn: "findings::java_large_batch_copy::decide",
    sources: &[direct("java-large-batch-copy", "probe-request-ceiling")],
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::findings::{CheckState, Outcome};

    use crate::findings::reps::of as r;

    fn point(batch: u64, rate: &[f64], user: &[f64], sys: &[f64]) -> CurvePoint {
        CurvePoint {
            batch_size_bytes: batch,
            msgs_per_s: r(rate),
            network_user_cpu_s_per_gb: r(user),
            network_sys_cpu_s_per_gb: r(sys),
            // The post's JVM on 32 vCPUs: a few cores.
            process_cores: r(&[1.9, 2.0, 2.1]),
        }
    }

    /// The post's 3-rep sweep (552k at 16K, 1.04M at 128K, 634k at 1M) and its diagnosis
    /// runs' CPU (0.44 and 1.02 s/GB user; the kernel's flat, not given: 0.5).
    fn post() -> Evidence {
        Evidence {
            partitions: 6,
            client_cores: 32,
            curve: vec![
                point(
                    16 << 10,
                    &[545e3, 552e3, 560e3],
                    &[0.5, 0.5, 0.5],
                    &[0.5; 3],
                ),
                point(
                    128 << 10,
                    &[1.03e6, 1.04e6, 1.05e6],
                    &[0.43, 0.44, 0.45],
                    &[0.5; 3],
                ),
                point(
                    1 << 20,
                    &[620e3, 634e3, 640e3],
                    &[1.0, 1.02, 1.04],
                    &[0.5; 3],
                ),
            ],
            fixes: vec![
                FixPoint {
                    fix: "send.buffer.bytes=-1".into(),
                    batch_size_bytes: 1 << 20,
                    msgs_per_s: r(&[888e3, 875e3, 862e3]),
                },
                FixPoint {
                    fix: "max.request.size=1100000".into(),
                    batch_size_bytes: 1 << 20,
                    msgs_per_s: r(&[910e3, 922e3, 930e3]),
                },
            ],
        }
    }

    #[test]
    fn the_posts_figures_hold_with_the_mechanism() {
        let v = decide(&post());
        assert_eq!(v.outcome, Outcome::Holds, "{v:#?}");
        assert!(v.reason.contains("0.44 s/GB → 1.02 s/GB"), "{}", v.reason);
        assert!(v.reason.contains("at batch.size=128K"), "{}", v.reason);
        assert_eq!(v.checks.len(), 4);
    }

    #[test]
    fn a_fall_without_the_copying_does_not_hold() {
        // The rate falls, but the network thread's user CPU per GB stays flat: something
        // else (the broker, the machine) slowed the large batches.
        let mut e = post();
        e.curve[2].network_user_cpu_s_per_gb = r(&[0.50, 0.52, 0.55]);
        let v = decide(&e);
        assert_eq!(v.outcome, Outcome::DoesNotHold, "{v:#?}");
        assert!(v.reason.contains("user CPU per GB"), "{}", v.reason);
        assert!(v.reason.contains("below the 1.5x"), "{}", v.reason);
        // Flat within the reps' ranges: no rise shown either way.
        e.curve[2].network_user_cpu_s_per_gb = r(&[0.44, 0.45, 0.46]);
        assert_eq!(decide(&e).outcome, Outcome::CannotTell);
    }

    #[test]
    fn a_curve_that_keeps_rising_does_not_hold() {
        let mut e = post();
        e.curve[2].msgs_per_s = r(&[1.2e6, 1.25e6, 1.3e6]);
        let v = decide(&e);
        assert_eq!(v.outcome, Outcome::DoesNotHold, "{v:#?}");
        let fall = &v.checks[0];
        assert!(
            fall.condition.contains("128K ≥ 1.1x 1M"),
            "{}",
            fall.condition
        );
        assert!(
            fall.detail.contains("the other way round"),
            "{}",
            fall.detail
        );
    }

    #[test]
    fn a_jvm_that_filled_its_core_cannot_tell() {
        // This machine (2026-12-01, --cpus 1): Java 143k at 128K, 142k at 1M, the JVM at
        // 0.78–0.99 of its core; a rise at 1M with ranges apart is not counted against it.
        let mut e = post();
        e.client_cores = 1;
        for p in &mut e.curve {
            p.process_cores = r(&[0.78, 0.9, 0.99]);
        }
        e.curve[2].msgs_per_s = r(&[1.2e6, 1.25e6, 1.3e6]);
        let v = decide(&e);
        assert_eq!(v.outcome, Outcome::CannotTell, "{v:#?}");
        assert!(
            v.reason.contains("of the 1 core it was pinned to"),
            "{}",
            v.reason
        );
    }

    #[test]
    fn without_fix_points_or_reps_it_cannot_tell() {
        let mut e = post();
        e.fixes.clear();
        let v = decide(&e);
        assert_eq!(v.outcome, Outcome::CannotTell, "{v:#?}");
        assert!(v.reason.contains("--java-fixes"), "{}", v.reason);
        // A fix that does not help, ranges apart: the third link is missing.
        let mut e = post();
        for f in &mut e.fixes {
            f.msgs_per_s = r(&[500e3, 510e3, 520e3]);
        }
        assert_eq!(decide(&e).outcome, Outcome::DoesNotHold);
        // One rep each: no ranges.
        let mut one = post();
        for p in &mut one.curve {
            p.msgs_per_s = r(&[med(&p.msgs_per_s)]);
        }
        let v = decide(&one);
        assert_eq!(v.outcome, Outcome::CannotTell, "{v:#?}");
        assert_eq!(v.checks[0].state, CheckState::Undecided);
        // One batch.size: no curve.
        let mut e = post();
        e.curve.truncate(1);
        assert_eq!(decide(&e).outcome, Outcome::CannotTell);
        // The network thread's CPU not measured.
        let mut e = post();
        for p in &mut e.curve {
            p.network_user_cpu_s_per_gb = Reps::default();
        }
        assert_eq!(decide(&e).outcome, Outcome::CannotTell);
    }
}
