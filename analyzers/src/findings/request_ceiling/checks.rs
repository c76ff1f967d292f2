//! The rule's checks, one per link of the chain (see the module doc of
//! [`request_ceiling`](super)), and the sentences they share.

use super::evidence::{busiest, median, PointEvidence};
use super::figures::{partitions, share, size};
use super::shape::{best, Shape};
use super::thresholds::{
    MAX_BATCHES_PER_REQUEST, MAX_PARTITION_GAIN, MAX_REQUEST_FILL, MIN_BATCHES_PER_REQUEST,
    MIN_BATCH_GAIN, MIN_PARTITION_GAIN, MIN_REQUEST_FILL, MIN_WAITING_REQUESTS, SATURATED_CORES,
};
use crate::findings::connection::Connection;
use crate::findings::reps::{check_at_least, check_every_rep, check_within, Reps, MIN_REPS};
use crate::findings::verdict::{Check, CheckState};
use crate::vocab::units;

/// The first client thread at or above [`SATURATED_CORES`] in any rep of these points.
pub(super) fn saturated(points: &[&PointEvidence]) -> Option<String> {
    for p in points {
        let threads = [
            ("app (the producing thread)", &p.app_cores),
            (p.broker_thread.as_str(), &p.broker_thread_cores),
        ];
        for (name, cores) in threads {
            if let Some(max) = cores.max().filter(|&c| c >= SATURATED_CORES) {
                return Some(format!(
                    "{name} reached {} at {}, batch.size {}",
                    units::cores(max),
                    partitions(p.partitions),
                    size(p.batch_size)
                ));
            }
        }
    }
    None
}

pub(super) fn check_partitions(s: &Shape) -> Check {
    let condition = format!(
        "at batch.size {} more partitions run at {MIN_PARTITION_GAIN}x–{MAX_PARTITION_GAIN}x \
         the fewest's rate (one partition per request: partitions only add requests)",
        size(s.smallest)
    );
    if s.at_smallest.len() < 2 {
        return Check::undecided(
            condition,
            format!(
                "only {} partition{} measured at batch.size {}: \"flat across partitions\" is true \
                 by construction with one partition count; sweep two or more (--partitions 1,6)",
                s.ceiling.partitions,
                if s.ceiling.partitions == 1 { " was" } else { "s were" },
                size(s.smallest)
            ),
        );
    }
    let fewest = s.at_smallest[0];
    let total = check_within(
        format!(
            "{condition}: {} partitions against {}",
            s.ceiling.partitions, fewest.partitions
        ),
        &s.ceiling.msgs_per_s,
        &fewest.msgs_per_s,
        MIN_PARTITION_GAIN,
        MAX_PARTITION_GAIN,
        units::msgs_per_s,
    );
    let several = s.ceiling.loaded().len() > 1 || fewest.loaded().len() > 1;
    let (Some(hi), Some(lo)) = (
        busiest(&s.ceiling.connections),
        busiest(&fewest.connections),
    ) else {
        return total;
    };
    if !several {
        return total;
    }
    // Several connections: each has its own ceiling, so it is one connection's rate that
    // stays flat, not the sum (three brokers on their own cores would triple the sum).
    let mut c = check_within(
        format!(
            "{condition}; per connection (librdkafka keeps one per broker): the busiest \
             connection's ProduceRequests/s at {} partitions ({}) against {} ({})",
            s.ceiling.partitions, hi.broker, fewest.partitions, lo.broker
        ),
        &hi.requests_per_s,
        &lo.requests_per_s,
        MIN_PARTITION_GAIN,
        MAX_PARTITION_GAIN,
        |x| format!("{}/s", units::si(x)),
    );
    if c.state == CheckState::Failed
        && median(&hi.requests_per_s) < median(&lo.requests_per_s)
        && median(&s.ceiling.msgs_per_s) >= MIN_PARTITION_GAIN * median(&fewest.msgs_per_s)
    {
        // Each connection carried less while the client's total held or rose: the
        // connections compete for one limit (brokers sharing this machine's cores), which
        // hides any one connection's ceiling. Never a pass: only undecided.
        c.state = CheckState::Undecided;
        c.detail = format!(
            "{}; but the total held ({}): the {} connections share one limit, as brokers \
             sharing this machine's cores do, so one connection's ceiling cannot show (brokers \
             on cores of their own, or --partitions on one broker)",
            c.detail,
            total.detail,
            s.ceiling.loaded().len()
        );
    }
    c
}

/// At the ceiling a connection is kept busy: its requests wait behind each other at the
/// broker, which serves them one at a time.
pub(super) fn check_connection_busy(s: &Shape) -> Check {
    let condition = format!(
        "a connection is kept busy at {}, batch.size {}: ≥ {MIN_WAITING_REQUESTS} requests \
         awaiting a response in every rep (the broker serves them one at a time)",
        partitions(s.ceiling.partitions),
        size(s.smallest)
    );
    let loaded = s.ceiling.loaded();
    if loaded.is_empty() {
        return Check::undecided(
            condition,
            "not measured per connection (statistics brokers[] were not read per broker)",
        );
    }
    let checks: Vec<(&Connection, Check)> = loaded
        .iter()
        .map(|c| {
            (
                *c,
                check_every_rep(
                    c.broker.clone(),
                    &c.waiting_requests,
                    |n| n >= MIN_WAITING_REQUESTS,
                    units::count,
                ),
            )
        })
        .collect();
    let each = |c: &Connection, k: &Check| {
        format!(
            "{}: {} waiting at {} ProduceRequests/s ({})",
            c.label(),
            c.waiting_requests.show(units::count),
            units::si(median(&c.requests_per_s)),
            k.mark()
        )
    };
    let detail = checks
        .iter()
        .map(|(c, k)| each(c, k))
        .collect::<Vec<_>>()
        .join("; ");
    if checks.iter().any(|(_, k)| k.state == CheckState::Passed) {
        let busy: Vec<String> = checks
            .iter()
            .filter(|(_, k)| k.state == CheckState::Passed)
            .map(|(c, _)| c.broker.clone())
            .collect();
        return Check::passed(condition, format!("busy: {}; {detail}", busy.join(", ")));
    }
    if checks.iter().all(|(_, k)| k.state == CheckState::Failed) {
        return Check::failed(
            condition,
            format!(
                "no connection was kept busy ({detail}): the requests of {} connection{} \
                 together are not one connection's ceiling",
                loaded.len(),
                if loaded.len() == 1 { "" } else { "s" }
            ),
        );
    }
    let why = checks
        .iter()
        .find(|(_, k)| k.state == CheckState::Undecided)
        .map(|(_, k)| k.detail.clone())
        .unwrap_or_default();
    Check::undecided(condition, format!("{detail}; {why}"))
}

/// The busy connection with the highest rate (the reason's µs per request), if any.
pub(super) fn busy_connection<'e>(s: &Shape<'e>) -> Option<&'e Connection> {
    s.ceiling
        .loaded()
        .into_iter()
        .filter(|c| {
            c.waiting_requests.n() > 0
                && c.waiting_requests
                    .values()
                    .iter()
                    .all(|&n| n >= MIN_WAITING_REQUESTS)
        })
        .max_by(|a, b| median(&a.requests_per_s).total_cmp(&median(&b.requests_per_s)))
}

pub(super) fn check_full_batches(s: &Shape) -> Check {
    let bs = s.smallest as f64;
    check_every_rep(
        format!(
            "each ProduceRequest carries a full batch ({MIN_REQUEST_FILL}–{MAX_REQUEST_FILL} × \
             batch.size {} bytes per request at {})",
            size(s.smallest),
            partitions(s.ceiling.partitions)
        ),
        &s.ceiling.bytes_per_request,
        |b| b >= MIN_REQUEST_FILL * bs && b <= MAX_REQUEST_FILL * bs,
        units::bytes,
    )
}

pub(super) fn check_one_batch(s: &Shape, log: Option<f64>) -> Check {
    let condition = format!(
        "each ProduceRequest carries one partition's batch ({MIN_BATCHES_PER_REQUEST}–\
         {MAX_BATCHES_PER_REQUEST} batches per request at {})",
        partitions(s.ceiling.partitions)
    );
    let within = |x: f64| (MIN_BATCHES_PER_REQUEST..=MAX_BATCHES_PER_REQUEST).contains(&x);
    let stats = &s.ceiling.batches_per_request;
    if !stats.is_empty() {
        let mut c = check_every_rep(condition, stats, within, share);
        c.detail = format!("statistics: {}", c.detail);
        if let Some(x) = log {
            c.detail
                .push_str(&format!("; the debug=protocol pass: {x:.2}"));
        }
        return c;
    }
    match log {
        Some(x) => Check::test(
            within(x),
            condition,
            format!("the debug=protocol pass: {x:.2} (statistics did not measure it)"),
        ),
        None => Check::undecided(
            condition,
            "not measured (no statistics, no debug=protocol pass)",
        ),
    }
}

pub(super) fn check_batch_gain(s: &Shape) -> Check {
    let base = s.curve[0];
    let condition = format!(
        "a larger batch.size raises the rate at least {MIN_BATCH_GAIN}x at {}",
        partitions(base.partitions)
    );
    let Some(best) = best(s) else {
        return Check::undecided(
            condition,
            format!(
                "only batch.size {} was run at {}: the rule compares batch.size values \
                 (sweep two or more, e.g. --batch-size 16384,1048576)",
                size(s.smallest),
                partitions(base.partitions)
            ),
        );
    };
    let mut c = check_at_least(
        format!("{condition} (best: {})", size(best.batch_size)),
        &best.msgs_per_s,
        &base.msgs_per_s,
        MIN_BATCH_GAIN,
        units::msgs_per_s,
    );
    // A short gain with a saturated client thread at the best point is the CPU's cap, not
    // evidence against the per-request cost.
    if c.state == CheckState::Failed {
        if let Some(why) = saturated(&[best]) {
            c.state = CheckState::Undecided;
            c.detail = format!(
                "{}; but {why}: the gain may be capped by the client's CPU (--cpus, or a \
                 quieter machine)",
                c.detail
            );
        }
    }
    c
}

pub(super) fn check_not_cpu_bound(s: &Shape) -> Check {
    let condition = format!(
        "no client thread near a full core (< {SATURATED_CORES}) at batch.size {}: the limit is \
         the broker, not the producer's CPU",
        size(s.smallest)
    );
    if let Some(why) = saturated(&s.at_smallest) {
        return Check::undecided(
            condition,
            format!(
                "{why}: the producer may be CPU-bound, and a CPU-bound producer gains from larger \
                 batches too (fewer requests to build); pin it apart (--cpus) or use a quieter \
                 machine"
            ),
        );
    }
    let n = s
        .at_smallest
        .iter()
        .map(|p| p.app_cores.n().min(p.broker_thread_cores.n()))
        .min()
        .unwrap_or(0);
    let busiest = |f: fn(&PointEvidence) -> &Reps| {
        s.at_smallest
            .iter()
            .filter_map(|p| f(p).max())
            .reduce(f64::max)
    };
    let (Some(app), Some(brk)) = (
        busiest(|p| &p.app_cores),
        busiest(|p| &p.broker_thread_cores),
    ) else {
        return Check::undecided(condition, "thread CPU not measured");
    };
    let detail = format!(
        "at most: app {}, {} {}",
        units::cores(app),
        s.ceiling.broker_thread,
        units::cores(brk)
    );
    if n < MIN_REPS {
        return Check::undecided(
            condition,
            format!(
                "{detail}, in {n} rep{}: {MIN_REPS} reps are needed (--reps {MIN_REPS})",
                if n == 1 { "" } else { "s" }
            ),
        );
    }
    Check::passed(condition, detail)
}

/// The embedded mock's caveat, said in every verdict from it.
pub(super) fn mock_caveat(s: &Shape) -> String {
    let mock = s.ceiling.mock_thread_cores.median();
    format!(
        "this ran on librdkafka's embedded mock broker, whose cost per request is not Apache \
         Kafka's: its serving thread rdk:mock{} competes with the client's threads for this \
         machine's cores; run with --brokers for Kafka's",
        mock.map(|c| format!(" ({} at the ceiling)", units::cores(c)))
            .unwrap_or_default()
    )
}
