//! The typed evidence this sweep gives the catalogue, and its verdicts. No rule is decided
//! here: each finding's `decide` is.

use super::figures::Figures;
use super::options::ConsumerClients;
use super::point::{Api, TUNED_BACKOFF_MS, TUNED_BATCH};
use crate::kit::{Measured, Sweep};
use kgap_analyzers::findings::instances_scale_past_broker_thread as instances_rule;
use kgap_analyzers::findings::java_consumer_one_core as java_rule;
use kgap_analyzers::findings::librdkafka_broker_thread_limit as broker_rule;
use kgap_analyzers::findings::{Reps, Verdict};

type M<'a> = Measured<'a, ConsumerClients>;

/// The measured point of a consumer at a size and instance count.
fn at<'s>(sweep: &'s Sweep<ConsumerClients>, api: Api, size: u64, k: usize) -> Option<M<'s>> {
    sweep
        .measured()
        .find(|m| m.point.api == api && m.point.size_bytes == size && m.point.instances == k)
}

fn msgs(m: &M) -> Reps {
    m.reps(|f| f.msgs_per_s)
}

/// The busiest thread of the roles not skipped, over reps: the role it had most often and
/// its cores in each rep.
fn busiest_other(m: &M, skip: &[&str]) -> (String, Reps) {
    let per: Vec<(String, f64)> = m.runs.iter().map(|f| f.busiest_other(skip)).collect();
    let mut names: Vec<&str> = per.iter().map(|(n, _)| n.as_str()).collect();
    names.sort_unstable();
    let name = names
        .iter()
        .max_by_key(|n| names.iter().filter(|x| x == n).count())
        .map(|n| n.to_string())
        .unwrap_or_else(|| "no other thread".into());
    (name, Reps::new(per.iter().map(|(_, c)| *c)))
}

/// librdkafka's faster consumer at a size (one instance): higher median msg/s.
fn best_librdkafka<'s>(sweep: &'s Sweep<ConsumerClients>, size: u64) -> Option<M<'s>> {
    [Api::Tuned, Api::Poll]
        .into_iter()
        .filter_map(|a| at(sweep, a, size, 1))
        .max_by(|a, b| {
            let m = |x: &M| msgs(x).median().unwrap_or(0.0);
            m(a).total_cmp(&m(b))
        })
}

/// Evidence for `java-consumer-one-core`; None when Java's classic consumer never ran.
pub fn java_evidence(sweep: &Sweep<ConsumerClients>) -> Option<java_rule::Evidence> {
    let mut sizes: Vec<u64> = sweep.measured().map(|m| m.point.size_bytes).collect();
    sizes.sort_unstable();
    sizes.dedup();
    let mut out = Vec::new();
    for &size in &sizes {
        let (Some(j), Some(l)) = (
            at(sweep, Api::Classic, size, 1),
            best_librdkafka(sweep, size),
        ) else {
            continue;
        };
        let (other, other_cores) = busiest_other(&j, &["poll", "jvm", "jit", "gc"]);
        out.push(java_rule::SizeEvidence {
            size_bytes: size,
            java_msgs_per_s: msgs(&j),
            java_poll_cores: j.reps(|f| f.busiest("poll")),
            java_other_thread: other,
            java_other_cores: other_cores,
            java_process_cores: j.reps(|f| f.process_cores),
            librdkafka_api: l.point.api.name().into(),
            librdkafka_msgs_per_s: msgs(&l),
        });
    }
    let protocol = sizes.iter().rev().find_map(|&size| {
        let classic = at(sweep, Api::Classic, size, 1)?;
        let consumer = at(sweep, Api::Consumer, size, 1)?;
        Some(java_rule::ProtocolEvidence {
            size_bytes: size,
            classic_msgs_per_s: msgs(&classic),
            consumer_msgs_per_s: msgs(&consumer),
            poll_cores: consumer.reps(|f| f.busiest("poll")),
            background_cores: consumer.reps(|f| f.busiest("background")),
        })
    });
    if out.is_empty() && protocol.is_none() {
        return None;
    }
    Some(java_rule::Evidence {
        sizes: out,
        consumer_protocol: protocol,
        machine_cores: sweep.result.placement.machine_cores,
        client_cores: sweep.result.placement.client_cpus.len(),
    })
}

/// The smallest size the tuned consumer ran at with one instance.
fn small_tuned<'s>(sweep: &'s Sweep<ConsumerClients>) -> Option<M<'s>> {
    sweep
        .measured()
        .filter(|m| m.point.api == Api::Tuned && m.point.instances == 1)
        .min_by_key(|m| m.point.size_bytes)
}

/// Evidence for `librdkafka-broker-thread-limit`: the tuned consumer (the batch API) at the
/// smallest size, Java's classic consumer on the same topic.
pub fn broker_evidence(sweep: &Sweep<ConsumerClients>) -> Option<broker_rule::Evidence> {
    let t = small_tuned(sweep)?;
    let size = t.point.size_bytes;
    let (other, other_cores) = busiest_other(&t, &["rdk:broker", "mock"]);
    Some(broker_rule::Evidence {
        backoff_ms: TUNED_BACKOFF_MS,
        batch_size: TUNED_BATCH as u64,
        size_bytes: size,
        batch_msgs_per_s: msgs(&t),
        broker_thread: "rdk:broker".into(),
        broker_thread_cores: t.reps(|f| f.busiest("rdk:broker")),
        other_thread: other,
        other_cores,
        consumer_cores: t.reps(|f| f.process_cores),
        machine_cores: sweep.result.placement.machine_cores,
        client_cores: sweep.result.placement.client_cpus.len(),
        java_msgs_per_s: at(sweep, Api::Classic, size, 1)
            .map(|j| msgs(&j))
            .unwrap_or_default(),
        java_poll_cores: at(sweep, Api::Classic, size, 1)
            .map(|j| j.reps(|f| f.busiest("poll")))
            .unwrap_or_default(),
        own_core: sweep.result.placement.own_core,
    })
}

/// Evidence for `instances-scale-past-broker-thread`: the tuned consumer's curve over K at
/// the smallest size (poll()'s when tuned did not run).
pub fn instances_evidence(sweep: &Sweep<ConsumerClients>) -> Option<instances_rule::Evidence> {
    let api = [Api::Tuned, Api::Poll]
        .into_iter()
        .find(|a| sweep.measured().any(|m| m.point.api == *a))?;
    let size = sweep
        .measured()
        .filter(|m| m.point.api == api)
        .map(|m| m.point.size_bytes)
        .min()?;
    let mut points: Vec<M> = sweep
        .measured()
        .filter(|m| m.point.api == api && m.point.size_bytes == size)
        .collect();
    points.sort_by_key(|m| m.point.instances);
    let placement = &sweep.result.placement;
    Some(instances_rule::Evidence {
        size_bytes: size,
        api: api.name().into(),
        points: points
            .iter()
            .map(|m| {
                let k = m.point.instances;
                instances_rule::InstancesPoint {
                    instances: k,
                    aggregate_msgs_per_s: msgs(m),
                    broker_thread_cores_min: m.reps(|f: &Figures| f.kth("rdk:broker", k)),
                    app_cores_max: m.reps(|f| f.busiest("app")),
                    process_cores: m.reps(|f| f.process_cores),
                    machine_busy_cores: m.reps_of(|f| f.machine_busy_cores),
                }
            })
            .collect(),
        machine_cores: placement.machine_cores,
        client_cores: placement.client_cpus.len(),
        broker_shares_cores: sweep.result.broker.is_mock()
            || placement.shares_cores_with_broker == Some(true),
    })
}

/// The catalogue's verdicts on this sweep, one per finding.
pub fn verdicts(sweep: &Sweep<ConsumerClients>) -> Vec<Verdict> {
    vec![
        match java_evidence(sweep) {
            Some(e) => java_rule::decide(&e),
            None => Verdict::cannot_tell(
                &java_rule::FINDING,
                "Java's classic consumer was not measured beside librdkafka (--client both \
                 --brokers HOST:PORT)",
            ),
        },
        match broker_evidence(sweep) {
            Some(e) => broker_rule::decide(&e),
            None => Verdict::cannot_tell(
                &broker_rule::FINDING,
                "the tuned librdkafka consumer (the batch API) was not measured (--api tuned)",
            ),
        },
        match instances_evidence(sweep) {
            Some(e) => instances_rule::decide(&e),
            None => Verdict::cannot_tell(
                &instances_rule::FINDING,
                "no librdkafka consumer was measured (--client rust or both)",
            ),
        },
    ]
}
