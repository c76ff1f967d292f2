//! `each-at-defaults`: each producer at its own defaults, the way users first meet them.
//!
//! Java's batch.size defaults to 16 KB, librdkafka's to 1 MB, so out of the box librdkafka
//! is faster (the post: 1.00M against 561k, 1.78x), though at the same 16 KB it is the slower
//! one (0.42x: the request ceiling). The rule asks for the lead and for its cause being the
//! default batch.size, not the client: librdkafka at Java's 16 KB loses its lead, and at 1 MB
//! gains over its own 16 KB.

use super::each_at_best::{behind_machine_gate, check_not_machine_bound};
use super::finding::{direct, Finding, Reproduce, Side};
use super::reps::{check_at_least, Reps};
use super::verdict::Verdict;
use crate::vocab::svg::bytes_label;
use crate::vocab::units;
use serde::{Deserialize, Serialize};

/// kafka-clients' and librdkafka's default batch.size.
pub const JAVA_DEFAULT_BATCH_SIZE: u64 = 16_384;
pub const LIBRDKAFKA_DEFAULT_BATCH_SIZE: u64 = 1_000_000;
/// librdkafka at its default over Java at its own, ranges apart (the post: 1.78x).
pub const MIN_LEAD: f64 = 1.25;
/// librdkafka at its default over itself at Java's 16 KB (the post: 1.00M / 233k, 4.3x).
pub const MIN_BATCH_GAIN: f64 = 1.5;

/// Per rep, on the same topic layout (the sweep's most partitions).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Evidence {
    pub partitions: i32,
    /// Java at its default batch.size (16 KB).
    pub java_at_default: Reps,
    /// librdkafka at the sweep's batch.size nearest its default (1 MB), and which that was.
    pub librdkafka_batch_size: u64,
    pub librdkafka_at_default: Reps,
    /// librdkafka at Java's default (16 KB).
    pub librdkafka_at_java_default: Reps,
    /// The cores the client could run on (its affinity; 0: not recorded), and each client
    /// process's cores at its default.
    pub client_cores: usize,
    pub java_process_cores: Reps,
    pub librdkafka_process_cores: Reps,
}

/// The batch.size of `sizes` that stands for librdkafka's default: 1,000,000 or the
/// nearest within 0.9x–1.1x (the sweep's 1048576).
pub fn librdkafka_default_of(sizes: impl IntoIterator<Item = u64>) -> Option<u64> {
    let d = LIBRDKAFKA_DEFAULT_BATCH_SIZE as f64;
    sizes
        .into_iter()
        .filter(|&b| (0.9..=1.1).contains(&(b as f64 / d)))
        .min_by_key(|&b| (b as i64 - LIBRDKAFKA_DEFAULT_BATCH_SIZE as i64).abs())
}

/// The rule: see the module doc.
pub fn decide(e: &Evidence) -> Verdict {
    if e.java_at_default.is_empty() || e.librdkafka_at_default.is_empty() {
        return Verdict::cannot_tell(
            &FINDING,
            "both clients at their own default batch.size are needed: Java at 16K and \
             librdkafka at 1M (--client both --batch-size 16384,1048576)",
        );
    }
    let b = bytes_label(e.librdkafka_batch_size as f64);
    let checks = vec![
        check_at_least(
            format!(
                "librdkafka at its default batch.size ({b}) ≥ {MIN_LEAD}x Java at its own (16K) \
                 (the post: 1.00M against 561k, 1.78x)"
            ),
            &e.librdkafka_at_default,
            &e.java_at_default,
            MIN_LEAD,
            units::msgs_per_s,
        ),
        check_at_least(
            format!(
                "the lead is the default batch.size's: librdkafka at {b} ≥ {MIN_BATCH_GAIN}x \
                 itself at Java's 16K (the post: 1.00M against 233k)"
            ),
            &e.librdkafka_at_default,
            &e.librdkafka_at_java_default,
            MIN_BATCH_GAIN,
            units::msgs_per_s,
        ),
    ];
    let checks = behind_machine_gate(
        check_not_machine_bound(
            e.client_cores,
            &[
                ("Java", &e.java_process_cores),
                ("librdkafka", &e.librdkafka_process_cores),
            ],
        ),
        checks,
    );
    let same = |r: &Reps| r.median().unwrap_or(0.0);
    Verdict::from_checks(&FINDING, checks, e, || {
        format!(
            "at their own defaults librdkafka ran {} at {b} and Java {} at 16K ({}); at the \
             same 16K librdkafka ran {} ({} Java's): the defaults, not the clients, make the \
             out-of-the-box difference",
            units::msgs_per_s(same(&e.librdkafka_at_default)),
            units::msgs_per_s(same(&e.java_at_default)),
            units::times(same(&e.librdkafka_at_default) / same(&e.java_at_default)),
            units::msgs_per_s(same(&e.librdkafka_at_java_default)),
            units::times(same(&e.librdkafka_at_java_default) / same(&e.java_at_default)),
        )
    })
}

pub const FINDING: Finding = Finding {
    id: "each-at-defaults",
    title: "Each producer at its own defaults: librdkafka's 1 MB batch.size wins out of the box",
    side: Side::Both,
    post: "Java 561k msg/s at its 16 KB batch.size, librdkafka 1.00M at its 1 MB: 1.78x",
    claim: "Each at its own defaults: Java stays at 561k with 16 KB; Rust jumps to 1.00M with \
            1 MB. Rust is 1.78x faster, which is what you would see running both out of the \
            box (at the same 16 KB: 0.42x).",
    cause: "the clients' default batch.size differ (16 KB against 1 MB), and librdkafka's \
            per-request ceiling is lifted only by large batches",
    fix: "compare clients at the same batch.size, or each at its best; give librdkafka a \
          large batch.size and Java 128–256 KB",
    reproduce: Reproduce {
        probe: "probe-request-ceiling",
        exists: true,
        command: "probe-request-ceiling --brokers 127.0.0.1:9092 --client both --partitions 6 \
                  --batch-size 16384,131072,1048576 --no-diagnose",
    },
    expected_shape: "librdkafka at 1M well above Java at 16K; librdkafka at 16K below both",
    rule: "with ≥ 3 reps, librdkafka at its default batch.size (1M) runs ≥ 1.25x Java at its \
           own (16K) and ≥ 1.5x itself at 16K, min/max ranges apart, and neither client \
           process used ≥ 75% of the cores it was pinned to (else cannot tell)",
    rule_fn: "findings::each_at_defaults::decide",
    sources: &[direct("each-at-defaults", "probe-request-ceiling")],
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::findings::Outcome;

    use crate::findings::reps::of as r;

    fn post() -> Evidence {
        Evidence {
            partitions: 6,
            java_at_default: r(&[556e3, 561e3, 570e3]),
            librdkafka_batch_size: 1 << 20,
            librdkafka_at_default: r(&[0.99e6, 1.00e6, 1.01e6]),
            librdkafka_at_java_default: r(&[230e3, 233e3, 240e3]),
            client_cores: 32,
            java_process_cores: r(&[1.3, 1.4, 1.5]),
            librdkafka_process_cores: r(&[1.9, 2.0, 2.1]),
        }
    }

    #[test]
    fn the_posts_figures_hold() {
        let v = decide(&post());
        assert_eq!(v.outcome, Outcome::Holds, "{v:#?}");
        assert!(v.reason.contains("1.78x"), "{}", v.reason);
    }

    #[test]
    fn no_lead_or_no_batch_gain_does_not_hold() {
        let mut e = post();
        e.librdkafka_at_default = r(&[540e3, 550e3, 555e3]);
        e.librdkafka_at_java_default = r(&[230e3, 233e3, 240e3]);
        assert_eq!(decide(&e).outcome, Outcome::DoesNotHold);
        // A lead that the batch.size does not explain: librdkafka as fast at 16K.
        let mut e = post();
        e.librdkafka_at_java_default = r(&[0.98e6, 1.0e6, 1.02e6]);
        let v = decide(&e);
        assert_eq!(v.outcome, Outcome::CannotTell, "{v:#?}");
        e.librdkafka_at_java_default = r(&[0.9e6, 0.91e6, 0.92e6]);
        let v = decide(&e);
        assert_eq!(v.outcome, Outcome::DoesNotHold, "{v:#?}");
        assert!(v.reason.contains("default batch.size's"), "{}", v.reason);
    }

    #[test]
    fn a_missing_side_or_overlap_cannot_tell() {
        let mut e = post();
        e.java_at_default = Reps::default();
        assert_eq!(decide(&e).outcome, Outcome::CannotTell);
        let mut e = post();
        e.java_at_default = r(&[300e3, 561e3, 1.2e6]);
        assert_eq!(decide(&e).outcome, Outcome::CannotTell);
    }

    #[test]
    fn java_filling_its_one_core_cannot_tell() {
        // This machine (--cpus 1): Java at 16K 115k msg/s at 8.37 CPU s/M, 0.96 cores.
        let mut e = post();
        e.client_cores = 1;
        e.java_process_cores = r(&[0.9, 0.96, 0.97]);
        e.librdkafka_process_cores = r(&[0.3, 0.44, 0.5]);
        let v = decide(&e);
        assert_eq!(v.outcome, Outcome::CannotTell, "{v:#?}");
        assert!(
            v.reason.contains("Java used up to 0.97 of the 1 core"),
            "{}",
            v.reason
        );
    }

    #[test]
    fn the_sweeps_1m_stands_for_librdkafkas_default() {
        assert_eq!(
            librdkafka_default_of([16384, 131072, 1048576]),
            Some(1048576)
        );
        assert_eq!(librdkafka_default_of([16384, 262144]), None);
    }
}
