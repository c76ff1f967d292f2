//! The typed evidence of the sweep's other findings: Java's batch.size curve and its fixes
//! (java-large-batch-copy), each client at its defaults and at its best (each-at-defaults,
//! each-at-best), and librdkafka's controls at the ceiling (gap1-negative-controls). Each
//! reads the points on the sweep's most partitions; the catalogue's rules decide.

use super::figures::Figures;
use super::knob::Knob;
use super::options::RequestCeiling;
use crate::kit::{Measured, Sweep};
use kgap_analyzers::findings::probe_result::Client;
use kgap_analyzers::findings::{
    each_at_best, each_at_defaults, gap1_negative_controls, java_large_batch_copy, Reps,
};

type M<'a> = Measured<'a, RequestCeiling>;

fn most_partitions(sweep: &Sweep<RequestCeiling>) -> i32 {
    sweep
        .measured()
        .map(|m| m.point.partitions)
        .max()
        .unwrap_or(1)
}

/// One client's plain points (no knob) on `partitions`, by batch.size.
fn curve(sweep: &Sweep<RequestCeiling>, client: Client, partitions: i32) -> Vec<M<'_>> {
    let mut v: Vec<M> = sweep
        .of(client)
        .filter(|m| m.point.knob.is_none() && m.point.partitions == partitions)
        .collect();
    v.sort_by_key(|m| m.point.batch_size);
    v
}

fn rate(m: &M) -> Reps {
    m.reps(Figures::msgs_per_s)
}

/// The client process's cores over each rep's window: its CPU seconds per message times
/// messages per second.
fn process_cores(m: &M) -> Reps {
    m.reps(|f| f.cpu_s_per_million() * f.msgs_per_s() / 1e6)
}

fn client_cores(sweep: &Sweep<RequestCeiling>) -> usize {
    sweep.result.placement.client_cpus.len()
}

pub fn large_batch_copy(sweep: &Sweep<RequestCeiling>) -> java_large_batch_copy::Evidence {
    let partitions = most_partitions(sweep);
    let java = |f: &Figures| f.java().cloned();
    java_large_batch_copy::Evidence {
        partitions,
        client_cores: client_cores(sweep),
        curve: curve(sweep, Client::Java, partitions)
            .iter()
            .map(|m| java_large_batch_copy::CurvePoint {
                batch_size_bytes: m.point.batch_size,
                msgs_per_s: rate(m),
                network_user_cpu_s_per_gb: m.reps_of(|f| java(f)?.network_user_cpu_s_per_gb),
                network_sys_cpu_s_per_gb: m.reps_of(|f| java(f)?.network_sys_cpu_s_per_gb),
                process_cores: process_cores(m),
            })
            .collect(),
        fixes: sweep
            .of(Client::Java)
            .filter(|m| m.point.partitions == partitions)
            .filter_map(|m| {
                let k = m.point.knob.filter(|k| Knob::JAVA_FIXES.contains(k))?;
                Some(java_large_batch_copy::FixPoint {
                    fix: k.describe(),
                    batch_size_bytes: m.point.batch_size,
                    msgs_per_s: rate(&m),
                })
            })
            .collect(),
    }
}

pub fn at_defaults(sweep: &Sweep<RequestCeiling>) -> each_at_defaults::Evidence {
    let partitions = most_partitions(sweep);
    let java = curve(sweep, Client::Java, partitions);
    let rdk = curve(sweep, Client::Librdkafka, partitions);
    let at = |c: &[M], b: u64| {
        c.iter()
            .find(|m| m.point.batch_size == b)
            .map(rate)
            .unwrap_or_default()
    };
    let rdk_default =
        each_at_defaults::librdkafka_default_of(rdk.iter().map(|m| m.point.batch_size));
    let cores_at = |c: &[M], b: u64| {
        c.iter()
            .find(|m| m.point.batch_size == b)
            .map(process_cores)
            .unwrap_or_default()
    };
    each_at_defaults::Evidence {
        partitions,
        client_cores: client_cores(sweep),
        java_process_cores: cores_at(&java, each_at_defaults::JAVA_DEFAULT_BATCH_SIZE),
        librdkafka_process_cores: rdk_default.map(|b| cores_at(&rdk, b)).unwrap_or_default(),
        java_at_default: at(&java, each_at_defaults::JAVA_DEFAULT_BATCH_SIZE),
        librdkafka_batch_size: rdk_default
            .unwrap_or(each_at_defaults::LIBRDKAFKA_DEFAULT_BATCH_SIZE),
        librdkafka_at_default: rdk_default.map(|b| at(&rdk, b)).unwrap_or_default(),
        librdkafka_at_java_default: at(&rdk, each_at_defaults::JAVA_DEFAULT_BATCH_SIZE),
    }
}

pub fn at_best(sweep: &Sweep<RequestCeiling>) -> each_at_best::Evidence {
    let partitions = most_partitions(sweep);
    let points = |client| {
        curve(sweep, client, partitions)
            .iter()
            .map(|m| each_at_best::CurvePoint {
                batch_size_bytes: m.point.batch_size,
                msgs_per_s: rate(m),
                cpu_s_per_million: m.reps(Figures::cpu_s_per_million),
                process_cores: process_cores(m),
            })
            .collect()
    };
    each_at_best::Evidence {
        partitions,
        client_cores: client_cores(sweep),
        java: points(Client::Java),
        librdkafka: points(Client::Librdkafka),
    }
}

/// The busiest client thread of a librdkafka run: the producing thread or a broker thread.
fn busiest_thread(f: &Figures) -> Option<f64> {
    let r = f.librdkafka()?;
    let v = [r.app_cores, r.busiest_broker_thread_cores];
    v.into_iter().flatten().reduce(f64::max)
}

pub fn negative_controls(sweep: &Sweep<RequestCeiling>) -> gap1_negative_controls::Evidence {
    let partitions = most_partitions(sweep);
    let rdk = curve(sweep, Client::Librdkafka, partitions);
    let smallest = rdk.first();
    let batch = smallest.map_or(16384, |m| m.point.batch_size);
    gap1_negative_controls::Evidence {
        partitions,
        batch_size_bytes: batch,
        baseline_msgs_per_s: smallest.map(rate).unwrap_or_default(),
        baseline_busiest_thread_cores: smallest
            .map(|m| m.reps_of(busiest_thread))
            .unwrap_or_default(),
        controls: sweep
            .of(Client::Librdkafka)
            .filter(|m| m.point.partitions == partitions && m.point.batch_size == batch)
            .filter_map(|m| {
                let k = m.point.knob.filter(|k| Knob::CONTROLS.contains(k))?;
                Some(gap1_negative_controls::Control {
                    knob: k.describe(),
                    msgs_per_s: rate(&m),
                    busiest_thread_cores: m.reps_of(busiest_thread),
                })
            })
            .collect(),
    }
}
