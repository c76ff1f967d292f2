//! `java-send-buffer`: Java's fixed send buffer and the tail copied on every write.
//!
//! The mechanism: kafka-clients fixes the producer socket's SO_SNDBUF at send.buffer.bytes
//! (131072), so each write of a ProduceRequest takes only about that much (the kernel
//! doubles it), and because the batches live on the heap the JDK copies the whole unsent
//! rest into a temporary direct buffer before every write. A request of many writes is
//! copied many times over; with -1 the kernel autotunes the buffer, writes grow and the
//! copying shrinks. The rule asks, at the largest batch.size measured (the post's 1 MB),
//! for the cap (writes sized by the fixed buffer), its cost's precondition (a request takes
//! several writes), the larger writes with -1, and the throughput change the post saw,
//! compared the post's way: a change the other way is reported as such.

use super::finding::{direct, indirect, Finding, Reproduce, Side, Source, Strength};
use super::reps::{check_at_least, check_every_rep, Reps, MIN_REPS};
use super::saturation::SATURATED_CORES;
use super::thread_limit::{decided_by_cost, gain_by_cost, msgs_per_core};
use super::verdict::{Check, CheckState, Verdict};
use crate::vocab::svg::bytes_label;
use crate::vocab::units;
use serde::{Deserialize, Serialize};

/// kafka-clients' send.buffer.bytes.
pub const DEFAULT_SEND_BUFFER_BYTES: u64 = 131_072;
/// With the fixed buffer the median write lies in this band of send.buffer.bytes: the
/// buffer, not the data, ends each write (Linux doubles SO_SNDBUF: 261,932 B here; the
/// post: ~298 KB).
pub const CAPPED_WRITE_LO: f64 = 0.5;
pub const CAPPED_WRITE_HI: f64 = 3.0;
/// Writes per ProduceRequest from which re-copying the unsent rest costs several times the
/// request (the post: 22 writes, 11x).
pub const MIN_WRITES_PER_REQUEST: u64 = 4;
/// How much larger -1 makes the median write (the post: 298 → 692 KB, 2.3x).
pub const MIN_WRITE_GROWTH: f64 = 1.5;
/// The throughput gain -1 must show, ranges apart (the post: 630k → 875k msg/s at 1 MB,
/// 1.39x; it treats differences under ~3% as noise).
pub const MIN_THROUGHPUT_GAIN: f64 = 1.1;

/// Writes and bytes copied for one request when each write takes `write_bytes` and the
/// JDK copies the whole unsent rest on every write (6.29 MB at 298 KB: 22 writes, 69.6 MB).
pub fn tail_copy(request_bytes: f64, write_bytes: f64) -> (u64, f64) {
    if request_bytes <= 0.0 || write_bytes <= 0.0 {
        return (0, 0.0);
    }
    let writes = (request_bytes / write_bytes).ceil() as u64;
    let copied = (0..writes)
        .map(|i| (request_bytes - i as f64 * write_bytes).max(0.0))
        .sum();
    (writes, copied)
}

/// One batch.size, with send.buffer.bytes fixed and -1, per rep. Write sizes are the
/// producer's network thread's socket writes in the window (JFR jdk.SocketWrite).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WritePair {
    pub batch_size_bytes: u64,
    /// send.buffer.bytes of the fixed side.
    pub send_buffer_bytes: u64,
    pub fixed_write_bytes_p50: Reps,
    /// Bytes per ProduceRequest (kafka-clients' records-per-request-avg × bytes per record
    /// on the wire), when the companion reported them.
    pub fixed_request_bytes: Reps,
    pub fixed_msgs_per_s: Reps,
    pub os_write_bytes_p50: Reps,
    pub os_msgs_per_s: Reps,
    /// Cores of the producer's network thread (kafka-producer-network-thread), per rep: the
    /// thread that makes the writes and re-copies; with the rates, its cost per message.
    #[serde(default)]
    pub fixed_network_thread_cores: Reps,
    #[serde(default)]
    pub os_network_thread_cores: Reps,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Evidence {
    pub pairs: Vec<WritePair>,
}

fn med(r: &Reps) -> f64 {
    r.median().unwrap_or(0.0)
}

/// One pair's throughput change as the reasons print it, medians: `1M: 31k → 46k msg/s
/// (1.48x)` (no ratio when the fixed side measured nothing). The receive rule prints its
/// pairs the same way.
pub fn throughput_change(what: &str, fixed: &Reps, os: &Reps) -> String {
    format!(
        "{what}: {} → {} msg/s{}",
        units::si(med(fixed)),
        units::si(med(os)),
        match med(fixed) {
            d if d > 0.0 => format!(" ({})", units::times(med(os) / d)),
            _ => String::new(),
        }
    )
}

fn changes(pairs: &[WritePair]) -> String {
    pairs
        .iter()
        .map(|p| {
            throughput_change(
                &bytes_label(p.batch_size_bytes as f64),
                &p.fixed_msgs_per_s,
                &p.os_msgs_per_s,
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn check_writes_per_request(p: &WritePair) -> Check {
    let condition = format!(
        "a ProduceRequest takes ≥ {MIN_WRITES_PER_REQUEST} writes with the fixed buffer (each \
         re-copies the unsent rest)"
    );
    let n = p.fixed_request_bytes.n().min(p.fixed_write_bytes_p50.n());
    if p.fixed_request_bytes.is_empty() {
        return Check::undecided(
            condition,
            "bytes per ProduceRequest not measured (kafka-clients' records-per-request-avg)",
        );
    }
    let (request, write) = (med(&p.fixed_request_bytes), med(&p.fixed_write_bytes_p50));
    let (writes, copied) = tail_copy(request, write);
    let detail = format!(
        "{} requests in writes of {}: {writes} writes copying {} ({} the request)",
        p.fixed_request_bytes.show(units::bytes),
        units::bytes(write),
        units::bytes(copied),
        units::times(if request > 0.0 { copied / request } else { 0.0 })
    );
    if n < MIN_REPS {
        Check::undecided(
            condition,
            format!("{detail}: {MIN_REPS} reps are needed (--reps {MIN_REPS})"),
        )
    } else if writes >= MIN_WRITES_PER_REQUEST {
        Check::passed(condition, detail)
    } else {
        // A precondition, not the effect: small requests say nothing against the finding.
        Check::undecided(
            condition,
            format!(
                "{detail}: the state the finding is about was not reached (the post: 6.29 MB \
                 requests of 22 writes, its 1 MB batches full at 630k msg/s); at this \
                 machine's rate batches close on linger.ms before batch.size: {REACH_STATE}"
            ),
        )
    }
}

/// The settings that let 1 MB batches fill at a small machine's rate, and several of them
/// go in one request (the post's state).
pub const REACH_STATE: &str = "probe-java-socket-buffers --linger-ms 200 --max-request-size \
     8388608 (scripts/reproduce java-send-buffer does; 6.29 MB requests of 25 writes here)";

/// The rule: at the largest batch.size measured, writes capped by the fixed send buffer, a
/// request of several writes, larger writes with -1 and the throughput gain, ranges apart.
pub fn decide(e: &Evidence) -> Verdict {
    let measured: Vec<&WritePair> = e
        .pairs
        .iter()
        .filter(|p| !p.fixed_write_bytes_p50.is_empty() && !p.os_write_bytes_p50.is_empty())
        .collect();
    let Some(p) = measured.iter().max_by_key(|p| p.batch_size_bytes).copied() else {
        return Verdict::cannot_tell(
            &FINDING,
            "no producer pair was measured (send.buffer.bytes fixed and -1 at one batch.size)",
        );
    };
    let b = bytes_label(p.batch_size_bytes as f64);
    let buf = p.send_buffer_bytes as f64;
    let precondition = check_writes_per_request(p);
    let reached = precondition.state == CheckState::Passed;
    let mut throughput = check_at_least(
        format!(
            "send.buffer.bytes=-1 raises throughput at batch.size={b} ≥ {MIN_THROUGHPUT_GAIN}x \
             (the post: 630k → 875k msg/s at 1M)"
        ),
        &p.os_msgs_per_s,
        &p.fixed_msgs_per_s,
        MIN_THROUGHPUT_GAIN,
        units::msgs_per_s,
    );
    // The network thread short of a core in every rep: the rates are the machine's (the
    // broker, a shared core), so the gain is the thread's on a core of its own, as the post's
    // producer was bound by it (its re-copies are the cost -1 removes).
    let network_saturated = p
        .fixed_network_thread_cores
        .values()
        .iter()
        .chain(p.os_network_thread_cores.values())
        .any(|&c| c >= SATURATED_CORES);
    if throughput.state != CheckState::Passed
        && !network_saturated
        && p.fixed_network_thread_cores.n() >= MIN_REPS
        && p.os_network_thread_cores.n() >= MIN_REPS
    {
        throughput = gain_by_cost(
            throughput.condition.clone(),
            "network thread",
            (&p.fixed_network_thread_cores, &p.fixed_msgs_per_s),
            (&p.os_network_thread_cores, &p.os_msgs_per_s),
            MIN_THROUGHPUT_GAIN,
            format!(
                "it never reached a core here: {} and {}; the rates {} and {}",
                p.fixed_network_thread_cores.show(units::cores),
                p.os_network_thread_cores.show(units::cores),
                p.fixed_msgs_per_s.show(units::msgs_per_s),
                p.os_msgs_per_s.show(units::msgs_per_s),
            ),
        );
    }
    if !reached && throughput.state == CheckState::Failed {
        throughput.state = CheckState::Undecided;
        throughput.detail.push_str(
            ": not counted, since requests of several writes (the state the gain comes from) \
             were not shown",
        );
    }
    let by_cost = decided_by_cost(&throughput);
    let per_core = |cores: &Reps, rates: &Reps| med(&msgs_per_core(cores, rates));
    let gain = if by_cost {
        per_core(&p.os_network_thread_cores, &p.os_msgs_per_s)
            / per_core(&p.fixed_network_thread_cores, &p.fixed_msgs_per_s)
    } else {
        med(&p.os_msgs_per_s) / med(&p.fixed_msgs_per_s)
    };
    let checks = vec![
        check_every_rep(
            format!(
                "send.buffer.bytes={} caps each write at batch.size={b} (median write {}x–{}x \
                 the buffer)",
                p.send_buffer_bytes, CAPPED_WRITE_LO, CAPPED_WRITE_HI
            ),
            &p.fixed_write_bytes_p50,
            |w| w >= CAPPED_WRITE_LO * buf && w <= CAPPED_WRITE_HI * buf,
            units::bytes,
        ),
        precondition,
        check_at_least(
            format!("send.buffer.bytes=-1 makes writes ≥ {MIN_WRITE_GROWTH}x larger"),
            &p.os_write_bytes_p50,
            &p.fixed_write_bytes_p50,
            MIN_WRITE_GROWTH,
            units::bytes,
        ),
        throughput,
    ];
    let mut warnings = p.fixed_msgs_per_s.outlier_warnings(
        &format!("msg/s at batch.size={b}, fixed buffer"),
        units::msgs_per_s,
    );
    warnings.extend(
        p.os_msgs_per_s
            .outlier_warnings(&format!("msg/s at batch.size={b}, -1"), units::msgs_per_s),
    );
    let all = changes(&e.pairs);
    let mut v = Verdict::from_checks(&FINDING, checks, e, || {
        let (writes, copied) =
            tail_copy(med(&p.fixed_request_bytes), med(&p.fixed_write_bytes_p50));
        let effect = if by_cost {
            format!(
                "let the network thread send {} the messages on a core of its own (decided by \
                 cost per message; measured {all})",
                units::times(gain)
            )
        } else {
            format!("ran {} faster ({all})", units::times(gain))
        };
        format!(
            "at batch.size={b} each write took {} with send.buffer.bytes={} ({writes} writes per \
             {} request, copying {}) and {} with -1, and -1 {effect}: the JDK re-copies the \
             unsent rest of a heap buffer on every write, and the fixed buffer takes only so \
             much per write",
            units::bytes(med(&p.fixed_write_bytes_p50)),
            p.send_buffer_bytes,
            units::bytes(med(&p.fixed_request_bytes)),
            units::bytes(copied),
            units::bytes(med(&p.os_write_bytes_p50)),
        )
    })
    .with_warnings(warnings);
    if !v.holds() {
        // The throughput change is beside every outcome, whichever way it went.
        v.reason = format!("{}; fixed → -1 throughput: {all}", v.reason);
    }
    v
}

pub const FINDING: Finding = Finding {
    id: "java-send-buffer",
    title: "Java's fixed send buffer and the tail copied on every write",
    side: Side::Java,
    post: "send.buffer.bytes 128 KB: ~298 KB writes, 22 per 6.29 MB request; -1: ~692 KB, 1 MB batches 630k → 875k msg/s",
    claim: "send.buffer.bytes (128 KB) caps each write at ~298 KB; a 6.29 MB request \
            needs 22 writes and copies 69.6 MB (11x) into temporary direct buffers. \
            send.buffer.bytes=-1: ~692 KB writes, 1 MB batches 630k → 875k msg/s, the \
            128 KB peak 1.12M.",
    cause: "the JDK copies a heap buffer's whole unsent rest into a temporary direct \
            buffer on every write, and a fixed send buffer takes only ~298 KB per write",
    fix: "send.buffer.bytes=-1 (kernel autotuning), or keep requests small \
          (max.request.size=1100000); keep batch.size ≤ 256 KB",
    reproduce: Reproduce {
        probe: "probe-java-socket-buffers",
        exists: true,
        command: "probe-java-socket-buffers --brokers 127.0.0.1:9092 --consume-size 0",
    },
    expected_shape: "socket writes clustered at one size a few times send.buffer.bytes; \
                     copy amplification grows with the request",
    rule: "at the largest batch.size measured, with send.buffer.bytes fixed the median write \
           is 0.5x–3x the buffer in every rep and a ProduceRequest takes ≥ 4 writes (a \
           precondition: fewer is CANNOT TELL, the state not reached, with the settings that \
           reach it, and a throughput drop then is not counted); with -1 the median write is \
           ≥ 1.5x larger and msg/s ≥ 1.1x higher, min/max ranges apart over ≥ 3 reps (a drop \
           is reported as such); where the rates do not show it and the producer's network \
           thread stayed under 0.9 cores in every rep, decided by cost per message: its msg/s \
           per core ≥ 1.1x higher with -1, ranges apart",
    rule_fn: "findings::java_send_buffer::decide",
    sources: &[
        direct("java-send-buffer", "probe-java-socket-buffers"),
        Source {
            id: "fixed-socket-buffer",
            source: "analyze-jfr",
            op: Some("write"),
            strength: Strength::Direct,
            scope: crate::findings::scope::Scope::AnyProcess,
        },
        indirect("java-producer-network-saturated", "analyze-thread-cpu"),
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::findings::thread_limit::BY_COST;
    use crate::findings::{CheckState, Outcome};

    use crate::findings::reps::of as r;

    /// The post at 1 MB batches: ~298 KB writes, 6.29 MB requests, ~692 KB with -1, 630k
    /// → 875k msg/s (888k, 875k, 862k; the fixed side's reps are not given: ±10k).
    fn post() -> Evidence {
        Evidence {
            pairs: vec![WritePair {
                batch_size_bytes: 1 << 20,
                send_buffer_bytes: DEFAULT_SEND_BUFFER_BYTES,
                fixed_write_bytes_p50: r(&[298e3, 298e3, 298e3]),
                fixed_request_bytes: r(&[6.29e6, 6.29e6, 6.29e6]),
                fixed_msgs_per_s: r(&[620e3, 630e3, 640e3]),
                os_write_bytes_p50: r(&[692e3, 690e3, 695e3]),
                os_msgs_per_s: r(&[888e3, 875e3, 862e3]),
                ..WritePair::default()
            }],
        }
    }

    /// 20261206T103553Z (scripts/reproduce all, 2 cores, the client on cpu 1): the writes,
    /// the requests and the growth as the post's, the rates held back by the broker.
    fn small_machine() -> Evidence {
        Evidence {
            pairs: vec![WritePair {
                batch_size_bytes: 1 << 20,
                send_buffer_bytes: DEFAULT_SEND_BUFFER_BYTES,
                fixed_write_bytes_p50: r(&[261_932.0; 3]),
                fixed_request_bytes: r(&[6.237e6, 6.291e6, 6.259e6]),
                fixed_msgs_per_s: r(&[200_141.0, 299_441.0, 347_679.0]),
                os_write_bytes_p50: r(&[2_166_783.0, 2_166_783.0, 2_957_311.0]),
                os_msgs_per_s: r(&[239_508.0, 415_335.0, 307_851.0]),
                fixed_network_thread_cores: r(&[0.361, 0.533, 0.595]),
                os_network_thread_cores: r(&[0.154, 0.24, 0.183]),
            }],
        }
    }

    #[test]
    fn a_network_thread_short_of_a_core_is_decided_by_cost() {
        // The rates overlap (1.03x), but per core of the network thread -1 sends ~3x.
        let v = decide(&small_machine());
        assert_eq!(v.outcome, Outcome::Holds, "{v:#?}");
        assert!(
            v.checks[3].detail.starts_with(BY_COST),
            "{}",
            v.checks[3].detail
        );
        assert!(
            v.reason.contains("decided by cost per message"),
            "{}",
            v.reason
        );
        assert!(
            !v.checks[3].detail.contains("cores cores"),
            "{}",
            v.checks[3].detail
        );
        // Without the thread's cores the rates decide, and they overlap: CANNOT TELL.
        let mut e = small_machine();
        e.pairs[0].os_network_thread_cores = Reps::default();
        let v = decide(&e);
        assert_eq!(v.outcome, Outcome::CannotTell, "{v:#?}");
        // A saturated network thread: the rates are its own, and they decide.
        let mut e = small_machine();
        e.pairs[0].fixed_network_thread_cores = r(&[0.95, 0.96, 0.97]);
        assert_eq!(decide(&e).outcome, Outcome::CannotTell);
        // The same cost on both sides: no difference shown, CANNOT TELL.
        let mut e = small_machine();
        e.pairs[0].os_network_thread_cores = r(&[0.361, 0.533, 0.595]);
        e.pairs[0].os_msgs_per_s = e.pairs[0].fixed_msgs_per_s.clone();
        assert_eq!(decide(&e).outcome, Outcome::CannotTell);
        // -1 costlier per message, ranges apart: it does not hold.
        e.pairs[0].os_network_thread_cores = r(&[0.55, 0.80, 0.85]);
        assert_eq!(decide(&e).outcome, Outcome::DoesNotHold);
    }

    #[test]
    fn tail_copy_gives_the_posts_22_writes_and_69_6_mb() {
        let (writes, copied) = tail_copy(6.29e6, 298e3);
        assert_eq!(writes, 22);
        assert!((copied / 1e6 - 69.6).abs() < 0.2, "{copied}");
        assert_eq!(tail_copy(0.0, 298e3), (0, 0.0));
    }

    #[test]
    fn the_posts_figures_hold() {
        let v = decide(&post());
        assert_eq!(v.outcome, Outcome::Holds, "{v:#?}");
        assert!(v.reason.contains("22 writes"), "{}", v.reason);
        assert!(v.reason.contains("1M: 630k → 875k msg/s"), "{}", v.reason);
    }

    #[test]
    fn the_projects_run_reports_its_throughput_drop() {
        // docs/probe-java-socket-buffers.md, 1 MB batches at load 6–7.5: writes capped at
        // 261,932 B and 631 KB with -1, but 35k (32k–40k) → 21k (5.4k–69k) msg/s, −41%.
        let e = Evidence {
            pairs: vec![WritePair {
                batch_size_bytes: 1 << 20,
                send_buffer_bytes: DEFAULT_SEND_BUFFER_BYTES,
                fixed_write_bytes_p50: r(&[261_932.0; 3]),
                fixed_request_bytes: r(&[]),
                fixed_msgs_per_s: r(&[32e3, 35e3, 40e3]),
                os_write_bytes_p50: r(&[600e3, 631_295.0, 700e3]),
                os_msgs_per_s: r(&[5.4e3, 21e3, 69e3]),
                ..WritePair::default()
            }],
        };
        let v = decide(&e);
        assert_eq!(v.outcome, Outcome::CannotTell, "{v:#?}");
        assert!(v.reason.contains("35k → 21k msg/s (0.60x)"), "{}", v.reason);
        let tp = v
            .checks
            .iter()
            .find(|c| c.condition.contains("raises throughput"))
            .unwrap();
        assert_eq!(tp.state, CheckState::Undecided);
        assert!(
            tp.detail.contains("0.60x") && tp.detail.contains("overlap"),
            "{}",
            tp.detail
        );
        // The same drop with ranges apart contradicts the post: it does not hold.
        let mut apart = e.clone();
        apart.pairs[0].os_msgs_per_s = r(&[20e3, 21e3, 22e3]);
        apart.pairs[0].fixed_request_bytes = r(&[6.29e6; 3]);
        let v = decide(&apart);
        assert_eq!(v.outcome, Outcome::DoesNotHold, "{v:#?}");
        assert!(v.reason.contains("the other way round"), "{}", v.reason);
    }

    #[test]
    fn small_requests_cannot_tell_and_uncapped_writes_do_not_hold() {
        // Issue 38's first run: 615 KB requests of 3 writes (1 MB batches never filled at
        // 32k msg/s): the state was not reached, whatever the throughput did.
        let mut e = post();
        e.pairs[0].fixed_request_bytes = r(&[615e3; 3]);
        e.pairs[0].fixed_write_bytes_p50 = r(&[262e3; 3]);
        let v = decide(&e);
        assert_eq!(v.outcome, Outcome::CannotTell, "{v:#?}");
        assert!(v.reason.contains("3 writes"), "{}", v.reason);
        assert!(v.reason.contains("was not reached"), "{}", v.reason);
        assert!(v.reason.contains("--linger-ms 200"), "{}", v.reason);
        e.pairs[0].os_msgs_per_s = r(&[500e3, 510e3, 520e3]);
        let v = decide(&e);
        assert_eq!(v.outcome, Outcome::CannotTell, "{v:#?}");
        assert!(
            v.checks[3].detail.contains("not counted"),
            "{:?}",
            v.checks[3]
        );
        // 16 KB writes: the data, not the buffer, ended them.
        let mut e = post();
        e.pairs[0].fixed_write_bytes_p50 = r(&[16e3; 3]);
        assert_eq!(decide(&e).outcome, Outcome::DoesNotHold);
    }

    #[test]
    fn the_largest_batch_size_is_judged_and_nothing_is_not_a_verdict() {
        let mut e = post();
        let mut small = e.pairs[0].clone();
        small.batch_size_bytes = 128 << 10;
        small.fixed_request_bytes = r(&[786e3; 3]);
        e.pairs.insert(0, small);
        assert_eq!(decide(&e).outcome, Outcome::Holds);
        let v = decide(&Evidence::default());
        assert_eq!(v.outcome, Outcome::CannotTell);
        assert!(v.checks.is_empty());
        // One rep a side: no range, no verdict.
        let mut one = post();
        for p in &mut one.pairs {
            p.fixed_msgs_per_s = r(&[630e3]);
            p.os_msgs_per_s = r(&[875e3]);
        }
        assert_eq!(decide(&one).outcome, Outcome::CannotTell);
    }
}
