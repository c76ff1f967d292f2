//! The findings catalogue: each finding of the post ("Java vs Rust Kafka Clients: Chasing
//! Down the Gaps") with its claim and figures, the command that reproduces it, the shape a
//! reproduction should show, and the rule that decides whether it held.
//!
//! Rules are pure functions over given numbers (medians a probe measured, or figures an
//! analyzer read), so they can be tested both ways with the post's own numbers. The
//! catalogue also maps every diagnosis id the analyzers emit and every probe verdict id
//! onto the finding it is evidence for; `gap-report` uses that map.
//!
//! ```
//! use kgap_analyzers::findings::{self, fetch_backoff, Outcome, Reps};
//! // Gap 2: 389k msg/s at the default 1000 ms backoff, 1.48M at 10 ms, naps in every rep.
//! let e = fetch_backoff::Evidence {
//!     slow_backoff_ms: 1000,
//!     fast_backoff_ms: 10,
//!     slow_msgs_per_s: Reps::new([380e3, 389e3, 400e3]),
//!     fast_msgs_per_s: Reps::new([1.45e6, 1.48e6, 1.5e6]),
//!     slow_queue_full_backoffs: Reps::new([12.0, 11.0, 12.0]),
//!     slow_idle_s: Reps::new([2.1, 1.9, 2.4]),
//!     ..Default::default()
//! };
//! assert_eq!(fetch_backoff::decide(&e).outcome, Outcome::Holds);
//! assert_eq!(findings::for_diagnosis("fetch-queue-backoff", None).unwrap().id, "fetch-backoff");
//! ```

use serde::Serialize;

pub mod reps;
pub mod verdict;
pub mod request_ceiling;
pub mod fetch_backoff;
pub mod batch_consume;
pub mod batch_wrapper_latency;
pub mod inflight_latency;
pub mod per_partition_linger;
pub mod gzip_batch_semantics;
pub mod java_send_buffer;
pub mod java_receive_buffer;
pub mod java_gc_collapse;
pub mod java_per_broker_linger;

pub use reps::Reps;
pub use verdict::{Check, CheckState, Outcome, Verdict};

/// Which client a finding is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Side {
    Librdkafka,
    Java,
    /// A difference between the two clients, not a fault of either.
    Both,
    /// The benchmark's own code (a harness bug).
    Harness,
}

/// How a probe reproduces a finding.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Reproduce {
    /// The probe binary.
    pub probe: &'static str,
    /// False for probes that are planned but not in the project yet.
    pub exists: bool,
    /// The command line.
    pub command: &'static str,
}

/// How strongly an analyzer's diagnosis speaks for a finding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Strength {
    /// The analyzer's rule is the finding's mechanism (e.g. `Fetch backoff … Queue full`).
    Direct,
    /// Consistent with the finding, but other causes give the same sign (a saturated
    /// thread, small requests in statistics).
    Indirect,
}

/// An analyzer diagnosis (or probe verdict) id that is evidence for a finding.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Source {
    /// The diagnosis id as the analyzer emits it, or a probe's verdict `finding`.
    pub id: &'static str,
    /// Who emits it (`analyze-fetch-log`, `probe-fetch-backoff`, `gap-report (stats)`, …).
    pub source: &'static str,
    /// For ids used with several meanings (analyze-jfr's `fixed-socket-buffer`), the
    /// evidence field `op` it must carry.
    pub op: Option<&'static str>,
    pub strength: Strength,
}

/// One finding of the post.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Finding {
    /// Stable id (kebab-case); probes use the same ids in their verdicts where they exist.
    pub id: &'static str,
    pub title: &'static str,
    pub side: Side,
    /// The post's headline figure in one line (beside every verdict and in summaries).
    pub post: &'static str,
    /// What the post claims, with its figures quoted.
    pub claim: &'static str,
    /// The cause, in the post's terms.
    pub cause: &'static str,
    /// The fix the post found.
    pub fix: &'static str,
    pub reproduce: Reproduce,
    /// What a reproduction should show.
    pub expected_shape: &'static str,
    /// The rule (see [`rules`]) in words.
    pub rule: &'static str,
    /// The name of the function in [`rules`] that decides it.
    pub rule_fn: &'static str,
    /// Analyzer diagnoses and probe verdicts that are evidence for it.
    pub sources: &'static [Source],
}

pub(crate) const fn direct(id: &'static str, source: &'static str) -> Source {
    Source {
        id,
        source,
        op: None,
        strength: Strength::Direct,
    }
}

pub(crate) const fn indirect(id: &'static str, source: &'static str) -> Source {
    Source {
        id,
        source,
        op: None,
        strength: Strength::Indirect,
    }
}

/// Statistics-derived evidence `gap-report` computes itself (librdkafka stats JSON).
pub const STATS_SMALL_PRODUCE_REQUESTS: &str = "stats-small-produce-requests";

/// Every finding of the post, in the order the post tells them.
pub const CATALOGUE: &[Finding] = &[
    request_ceiling::FINDING,
    fetch_backoff::FINDING,
    batch_consume::FINDING,
    batch_wrapper_latency::FINDING,
    inflight_latency::FINDING,
    per_partition_linger::FINDING,
    gzip_batch_semantics::FINDING,
    java_send_buffer::FINDING,
    java_receive_buffer::FINDING,
    java_gc_collapse::FINDING,
    java_per_broker_linger::FINDING,
];

/// The finding with this id.
pub fn get(id: &str) -> Option<&'static Finding> {
    CATALOGUE.iter().find(|f| f.id == id)
}

/// The finding an analyzer diagnosis (or probe verdict) id is evidence for, and how
/// strongly. `op` is the diagnosis evidence's `op` field when it has one.
pub fn for_diagnosis(id: &str, op: Option<&str>) -> Option<&'static Finding> {
    evidence_for(id, op).map(|(f, _)| f)
}

/// [`for_diagnosis`] with the strength of the evidence.
pub fn evidence_for(id: &str, op: Option<&str>) -> Option<(&'static Finding, Strength)> {
    CATALOGUE.iter().find_map(|f| {
        f.sources
            .iter()
            .find(|e| e.id == id && (e.op.is_none() || e.op == op))
            .map(|e| (f, e.strength))
    })
}

/// Diagnosis ids that say "looked, and found no problem" rather than a gap.
pub const ALL_CLEAR_IDS: &[&str] = &["no-gc-problem", "no-saturated-thread"];

/// The rules: pure functions over given numbers, one per finding.
pub mod rules {
    /// Gap 1 (the probe's rule): `partition_gain` = throughput at the most partitions over
    /// the fewest at the smallest batch.size; `bytes_per_request_share` = bytes per
    /// ProduceRequest over batch.size; `batch_gain` = the best batch.size's throughput over
    /// the smallest's.
    pub fn request_ceiling(
        partition_gain: f64,
        bytes_per_request_share: f64,
        batch_gain: f64,
    ) -> bool {
        partition_gain <= 1.25 && bytes_per_request_share >= 0.5 && batch_gain >= 1.5
    }

    /// Batch consume: the batch API at least 1.2x poll() (the post: 1.48M → 2.02M, 1.37x)
    /// and librdkafka's broker thread near a core under it (the post: 0.94).
    pub fn batch_consume(
        poll_msgs_per_s: f64,
        batch_msgs_per_s: f64,
        broker_thread_cores: f64,
    ) -> bool {
        poll_msgs_per_s > 0.0
            && batch_msgs_per_s / poll_msgs_per_s >= 1.2
            && broker_thread_cores >= 0.9
    }

    /// The wait a batch call that returns at `batch_messages` or `timeout_ms` adds at most.
    pub fn batch_wait_ms(rate_per_s: f64, batch_messages: f64, timeout_ms: f64) -> f64 {
        if rate_per_s <= 0.0 {
            return timeout_ms;
        }
        (batch_messages / rate_per_s * 1000.0).min(timeout_ms)
    }

    /// The batch wrapper's latency bug: the expected wait is long enough to matter
    /// (≥ 10 ms) and the measured p99 sits at it (0.5x–1.5x).
    pub fn batch_wrapper_latency(
        rate_per_s: f64,
        batch_messages: f64,
        timeout_ms: f64,
        p99_ms: f64,
    ) -> bool {
        let wait = batch_wait_ms(rate_per_s, batch_messages, timeout_ms);
        wait >= 10.0 && p99_ms >= 0.5 * wait && p99_ms <= 1.5 * wait
    }

    /// gzip batch semantics (the probe's rule), smallest vs largest batch.size: input per
    /// batch follows batch.size (≥ 1.5x), compresses better (≥ 1.02x) and runs slower (≤ 0.95x).
    pub fn gzip_batch(
        input_lo: f64,
        input_hi: f64,
        ratio_lo: f64,
        ratio_hi: f64,
        rate_lo: f64,
        rate_hi: f64,
    ) -> bool {
        input_hi >= 1.5 * input_lo
            && ratio_hi >= 1.02 * ratio_lo
            && rate_lo > 0.0
            && rate_hi <= 0.95 * rate_lo
    }

    /// Writes and bytes copied for one request when each write takes `write_bytes` and the
    /// JDK copies the whole unsent rest on every write. (6.29 MB at 298 KB: 22 writes,
    /// 69.6 MB.)
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

    /// Java's send buffer: a request takes ≥ 4 writes and writes sit between 1x and 3x the
    /// fixed send buffer, i.e. the buffer caps them (the kernel doubles it; the post saw
    /// 298 KB at 128 KB, and ~692 KB writes once autotuned up to 4 MB).
    pub fn java_send_buffer(
        request_bytes: f64,
        write_bytes_p50: f64,
        send_buffer_bytes: f64,
    ) -> bool {
        let (writes, _) = tail_copy(request_bytes, write_bytes_p50);
        send_buffer_bytes > 0.0
            && writes >= 4
            && write_bytes_p50 >= send_buffer_bytes
            && write_bytes_p50 <= 3.0 * send_buffer_bytes
    }

    /// Java's receive buffer: reads at or under the fixed receive buffer on a thread near
    /// one core (the post: ~56 KB reads at 64 KB, 0.95–0.98 cores).
    pub fn java_receive_buffer(
        read_bytes_p50: f64,
        receive_buffer_bytes: f64,
        thread_cores: f64,
    ) -> bool {
        receive_buffer_bytes > 0.0 && read_bytes_p50 <= receive_buffer_bytes && thread_cores >= 0.9
    }

    /// GC collapse (analyze-gc-log's rule): a window ≥ 20% in GC while the heap after young
    /// GC stays ≥ 80% of the maximum (the post: 37%, 1846 of 2048 MB).
    pub fn java_gc_collapse(gc_share_worst_window: f64, heap_after_young_share: f64) -> bool {
        gc_share_worst_window >= 0.20 && heap_after_young_share >= 0.80
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_every_rule_is_named() {
        for (i, f) in CATALOGUE.iter().enumerate() {
            assert!(CATALOGUE[i + 1..].iter().all(|g| g.id != f.id), "{}", f.id);
            assert!(f.rule_fn.starts_with("rules::") || f.rule_fn.starts_with("findings::"));
            assert!(f.reproduce.exists || f.reproduce.command.contains("(planned)"));
        }
        assert_eq!(CATALOGUE.len(), 11);
    }

    #[test]
    fn diagnosis_ids_map_onto_findings() {
        let f = |id, op| for_diagnosis(id, op).map(|f| f.id);
        assert_eq!(f("per-request-ceiling", None), Some("request-ceiling"));
        assert_eq!(f("inflight-queueing", None), Some("inflight-latency"));
        assert_eq!(f("fetch-queue-backoff", None), Some("fetch-backoff"));
        assert_eq!(
            f("fixed-socket-buffer", Some("write")),
            Some("java-send-buffer")
        );
        assert_eq!(
            f("fixed-socket-buffer", Some("read")),
            Some("java-receive-buffer")
        );
        assert_eq!(f("gc-collapse", None), Some("java-gc-collapse"));
        assert_eq!(
            f("gzip-batch-semantics", None),
            Some("gzip-batch-semantics")
        );
        // Not findings of the post.
        assert_eq!(f("request-timeouts", None), None);
        assert_eq!(f("long-pauses", None), None);
        assert_eq!(f("no-gc-problem", None), None);
    }
}
