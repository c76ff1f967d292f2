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

pub mod allocator_eases_not_fixes;
pub mod batch_consume;
pub mod batch_wrapper_latency;
pub mod connection;
pub mod consumer_allocation_pattern;
pub mod diagnoses;
pub mod each_at_best;
pub mod each_at_defaults;
pub mod fetch_backoff;
pub mod fetch_backoff_zero;
pub mod finding;
pub mod gap1_negative_controls;
pub mod gzip_batch_semantics;
pub mod inflight_latency;
pub mod instances_scale_past_broker_thread;
pub mod java_consumer_one_core;
pub mod java_gc_collapse;
pub mod java_gzip_batch_closing;
pub mod java_large_batch_copy;
pub mod java_per_broker_linger;
pub mod java_receive_buffer;
pub mod java_send_buffer;
pub mod librdkafka_broker_thread_limit;
pub mod per_partition_linger;
pub mod probe_result;
pub mod queued_min_messages;
pub mod reproduce;
pub mod reps;
pub mod request_ceiling;
pub mod saturation;
pub mod scope;
pub mod thread_limit;
pub mod verdict;

pub use finding::{Finding, Reproduce, Side, Source, Strength};
pub use reps::Reps;
pub use saturation::SATURATED_CORES;
pub use verdict::{Check, CheckState, Outcome, Verdict};

/// Every finding of the post, in the order the post tells them.
pub const CATALOGUE: &[Finding] = &[
    request_ceiling::FINDING,
    gap1_negative_controls::FINDING,
    fetch_backoff::FINDING,
    fetch_backoff_zero::FINDING,
    queued_min_messages::FINDING,
    batch_consume::FINDING,
    librdkafka_broker_thread_limit::FINDING,
    batch_wrapper_latency::FINDING,
    inflight_latency::FINDING,
    per_partition_linger::FINDING,
    gzip_batch_semantics::FINDING,
    java_gzip_batch_closing::FINDING,
    java_large_batch_copy::FINDING,
    java_send_buffer::FINDING,
    java_receive_buffer::FINDING,
    java_gc_collapse::FINDING,
    java_per_broker_linger::FINDING,
    consumer_allocation_pattern::FINDING,
    allocator_eases_not_fixes::FINDING,
    java_consumer_one_core::FINDING,
    instances_scale_past_broker_thread::FINDING,
    each_at_defaults::FINDING,
    each_at_best::FINDING,
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

/// [`for_diagnosis`] with the strength of the evidence (the first analyzer that emits the id).
pub fn evidence_for(id: &str, op: Option<&str>) -> Option<(&'static Finding, Strength)> {
    evidence_from(id, None, op)
}

/// The finding a diagnosis id from `source` (an analyzer's name) is evidence for, and how
/// strongly; `source` None takes the first analyzer that emits the id. The one map from
/// what the analyzers say to the post's findings.
pub fn evidence_from(
    id: &str,
    source: Option<&str>,
    op: Option<&str>,
) -> Option<(&'static Finding, Strength)> {
    CATALOGUE.iter().find_map(|f| {
        f.sources
            .iter()
            .find(|e| {
                e.id == id && source.is_none_or(|s| e.source == s) && (e.op.is_none() || e.op == op)
            })
            .map(|e| (f, e.strength))
    })
}

/// The catalogue entry of a diagnosis id from `source` (an analyzer's name): the finding
/// and the source it is listed as.
pub fn source_entry(
    id: &str,
    source: &str,
    op: Option<&str>,
) -> Option<(&'static Finding, &'static Source)> {
    CATALOGUE.iter().find_map(|f| {
        f.sources
            .iter()
            .find(|e| e.id == id && e.source == source && (e.op.is_none() || e.op == op))
            .map(|e| (f, e))
    })
}

/// Diagnosis ids that say "looked, and found no problem" rather than a gap.
pub const ALL_CLEAR_IDS: &[&str] = &["no-gc-problem", "no-saturated-thread"];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_every_rule_is_named() {
        for (i, f) in CATALOGUE.iter().enumerate() {
            assert!(CATALOGUE[i + 1..].iter().all(|g| g.id != f.id), "{}", f.id);
            assert!(f.rule_fn.starts_with("findings::"), "{}", f.rule_fn);
            assert!(f.reproduce.exists || f.reproduce.command.contains("(planned)"));
        }
        assert_eq!(CATALOGUE.len(), 23);
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
