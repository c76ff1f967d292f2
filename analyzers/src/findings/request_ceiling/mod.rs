//! `request-ceiling`: Gap 1: the producer bound by the broker's cost per request.
//!
//! The mechanism: librdkafka 2.12.1 builds one ProduceRequest from one partition's batch, and a
//! Kafka broker serves one connection's requests one at a time, so with small batches the
//! request rate is the ceiling, whatever the partitions. The rule asks for each link of that
//! chain, not only the throughput numbers:
//! - two or more partition counts at the smallest batch.size, and the rate flat across them
//!   (two-sided: a real drop is as much a contradiction as a rise);
//! - requests that each carry one partition's full batch (bytes per request ≈ batch.size, one
//!   batch per request from statistics or the debug=protocol log);
//! - a real gain from a larger batch.size;
//! - no client thread near a full core at the ceiling: a CPU-bound producer also gains from
//!   larger batches (fewer requests to build), and that is not the broker's cost;
//! - per connection (librdkafka keeps one per broker): at the ceiling a connection is kept
//!   busy, its requests waiting behind each other at the broker; the µs per request come from
//!   that connection's rate, not the sum over brokers, and the verdict names it. On several
//!   brokers "flat across partitions" compares the busiest connection's requests/s.

mod checks;
pub mod evidence;
mod figures;
mod shape;
#[cfg(test)]
mod tests;
pub mod thresholds;

use super::finding::{direct, Finding, Reproduce, Side};
use super::verdict::Verdict;
use crate::vocab::units;
use checks::{
    busy_connection, check_batch_gain, check_connection_busy, check_full_batches,
    check_not_cpu_bound, check_one_batch, check_partitions, mock_caveat,
};
use evidence::median;
use figures::{partitions, size};
use shape::{best, knee, shape};

pub use super::connection::Connection;
pub use evidence::{busiest, Evidence, PointEvidence};
pub use thresholds::{
    KNEE_STEP, MAX_BATCHES_PER_REQUEST, MAX_PARTITION_GAIN, MAX_REQUEST_FILL,
    MIN_BATCHES_PER_REQUEST, MIN_BATCH_GAIN, MIN_PARTITION_GAIN, MIN_REQUEST_FILL,
    MIN_WAITING_REQUESTS, SATURATED_CORES,
};

/// The rule: see the module doc.
pub fn decide(e: &Evidence) -> Verdict {
    let Some(s) = shape(e) else {
        return Verdict::cannot_tell(&FINDING, "librdkafka's producer measured nothing");
    };
    let checks = vec![
        check_partitions(&s),
        check_full_batches(&s),
        check_one_batch(&s, e.log_batches_per_request),
        check_batch_gain(&s),
        check_not_cpu_bound(&s),
        check_connection_busy(&s),
    ];
    let mut warnings = Vec::new();
    for p in &e.points {
        warnings.extend(p.msgs_per_s.outlier_warnings(
            &format!(
                "msg/s at {}, batch.size {}",
                partitions(p.partitions),
                size(p.batch_size)
            ),
            units::msgs_per_s,
        ));
    }
    if e.broker_is_mock {
        warnings.push(mock_caveat(&s));
    }
    Verdict::from_checks(&FINDING, checks, e, || {
        let c = s.ceiling;
        // One connection's rate: a broker serves each connection one request at a time.
        let conn = busy_connection(&s).expect("the connection check passed");
        let rps = median(&conn.requests_per_s);
        let loaded = c.loaded().len();
        let on = if loaded > 1 {
            format!(
                " on {}, the busiest of {loaded} connections (all together {} ProduceRequests/s)",
                conn.label(),
                units::si(median(&c.produce_requests_per_s))
            )
        } else {
            format!(" on {}", conn.broker)
        };
        let base = s.curve[0];
        let best = best(&s).expect("the gain check passed, so a larger batch.size ran");
        let fewest = s.at_smallest[0];
        let mut reason = format!(
            "bound by the broker's cost per request: at batch.size {} librdkafka sent {} \
             ProduceRequests/s of {}, one partition's batch each, ≈ {:.0} µs per request{on} \
             with {} awaiting a response (the post: ~65 µs); {} partitions ran {} the rate of {} (partitions only add \
             requests); at {} batch.size {} gave {} ({} → {} msg/s) and throughput \
             stops rising after {}; no client thread was near a full core",
            size(s.smallest),
            units::si(rps),
            units::bytes(median(&c.bytes_per_request)),
            if rps > 0.0 { 1e6 / rps } else { 0.0 },
            units::count(median(&conn.waiting_requests)),
            c.partitions,
            units::times(median(&c.msgs_per_s) / median(&fewest.msgs_per_s)),
            fewest.partitions,
            partitions(base.partitions),
            size(best.batch_size),
            units::times(median(&best.msgs_per_s) / median(&base.msgs_per_s)),
            units::si(median(&base.msgs_per_s)),
            units::si(median(&best.msgs_per_s)),
            knee(&s.curve).map_or("?".into(), size),
        );
        if e.broker_is_mock {
            reason.push_str(&format!("; but {}", mock_caveat(&s)));
        }
        reason
    })
    .with_warnings(warnings)
}

pub const FINDING: Finding = Finding {
    id: "request-ceiling",
    title: "Gap 1: the producer bound by the broker's cost per request",
    side: Side::Librdkafka,
    post: "~240k × 1 KB msg/s in 15.6 KB requests whatever the partitions; batch.size 16K→1M: 233k→991k msg/s",
    claim: "The Rust producer stayed at about 240k msg/s (1 KB, ~250 MB/s) whatever the \
            partitions (1, 6, 12), linger.ms (0, 5, 50) or acks. Every ProduceRequest was \
            one 15.6 KB partition batch (`Sent ProduceRequest (v10, 15621 bytes …)`, rtt \
            0.39 ms): ~15,400 requests/s, ~65 µs of broker time each. batch.size 16K→1M: \
            Rust 233k→991k msg/s, Java peaks at 1042k at 128 KB.",
    cause: "librdkafka sends one partition's batch per ProduceRequest and the broker \
            handles one connection's requests one at a time, so the broker's fixed cost \
            per request sets the ceiling; Java packs all partitions' batches for a broker \
            into one request.",
    fix: "raise batch.size (librdkafka's own default, 1 MB, avoids it; the post's Rust \
          producer peaks there at ~1.0M msg/s)",
    reproduce: Reproduce {
        probe: "probe-request-ceiling",
        exists: true,
        command: "probe-request-ceiling --brokers 127.0.0.1:9092",
    },
    expected_shape: "at 16 KB, throughput flat across partition counts; requests are full \
                     batches of one partition; throughput climbs with batch.size; no client \
                     thread near a full core",
    rule: "≥ 2 partition counts at the smallest batch.size, the most partitions' msg/s within \
           0.8x–1.25x of the fewest's (outside it with ranges apart: does not hold); in every \
           rep there, bytes per request 0.8–1.1 × batch.size and 0.9–1.1 partition batches per \
           request (statistics, else the debug=protocol log); the best batch.size ≥ 1.5x the \
           smallest's msg/s with ranges apart; no client thread (app, rdk:broker) at ≥ 0.9 \
           cores at the smallest batch.size (else cannot tell: CPU-bound); per connection \
           (one per broker): at the ceiling a connection kept busy (≥ 1 request awaiting a \
           response in every rep), the µs per request from that connection's rate and the \
           verdict naming it; on several brokers the busiest connection's requests/s flat \
           across partitions (a drop while the total stays flat: cannot tell, the brokers share \
           one limit); ≥ 3 reps. On the embedded mock the verdict says its per-request cost \
           is not Kafka's",
    rule_fn: "findings::request_ceiling::decide",
    sources: &[
        direct("request-ceiling", "probe-request-ceiling"),
        direct("per-request-ceiling", "analyze-protocol-log"),
        // (analyze-stats' producer-backlog is no evidence: every unpaced producer has one.)
        direct("per-request-ceiling", "analyze-stats"),
    ],
};
