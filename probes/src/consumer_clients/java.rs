//! One Java run at a point: kgap's companion in mode `consumers` (kafka-clients 4.3.1) on
//! the size's prefilled topic, K KafkaConsumers in one JVM, each on its own poll() thread,
//! group.protocol from the point, kafka-clients' defaults otherwise. The companion measures
//! its window the way the librdkafka side does (opens after 10% of all messages, closes when
//! the first consumer is done) and reports every thread's CPU with its role.

use super::figures::{Figures, RoleCores};
use super::point::{Api, Point};
use crate::kit::broker::TopicGuard;
use crate::kit::error::{ProbeError, Result};
use crate::kit::instances::InstanceFigures;
use crate::kit::interrupt;
use crate::kit::java::{self, Jvm};
use crate::kit::measure;
use crate::kit::placement::OwnCore;
use crate::kit::Context;
use serde::Deserialize;
use std::path::Path;
use std::time::Duration;

/// The threads `--own-core` gives a cpu of their own: the companion's poll() threads, a
/// KafkaConsumer's limit (java-consumer-one-core).
pub const LIMITING_THREADS: &str = "kgap-poll-";

/// The companion's RESULT line in mode `consumers` (the fields this probe reads).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ConsumersResult {
    pub messages: u64,
    pub seconds: f64,
    pub msgs_per_s: f64,
    pub mb_per_s: f64,
    pub process_cpu_s: f64,
    pub gc_time_ms: u64,
    pub consumers: usize,
    pub group_protocol: String,
    pub per_consumer: Vec<InstanceFigures>,
    pub threads: Vec<JavaThread>,
    pub kafka_clients_version: String,
    /// CPU seconds of the JVM's compiler threads and of its GC threads over the window (from
    /// /proc; the ThreadMXBean lists neither); None from a companion without them, or off
    /// Linux (-1).
    pub jit_cpu_s: Option<f64>,
    pub gc_cpu_s: Option<f64>,
}

/// One JVM thread's CPU over the window.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(default)]
pub struct JavaThread {
    pub name: String,
    /// poll, background, heartbeat or other (the companion's `role`).
    pub role: String,
    pub cpu_s: f64,
    pub user_s: f64,
}

/// Parses the companion's RESULT line.
pub fn parse(line: &str) -> Result<ConsumersResult> {
    let json = line.strip_prefix("RESULT ").unwrap_or(line);
    serde_json::from_str(json)
        .map_err(|e| ProbeError::Kafka(format!("the companion's RESULT line: {e}")))
}

/// The run's figures: cores per thread by role, and the rest of the JVM's CPU as `jvm`.
pub fn figures(r: &ConsumersResult) -> Figures {
    let secs = r.seconds.max(1e-9);
    let mut roles: Vec<RoleCores> = Vec::new();
    let mut threads_s = 0.0;
    for t in &r.threads {
        threads_s += t.cpu_s;
        let c = measure::round3(t.cpu_s / secs);
        match roles.iter_mut().find(|x| x.role == t.role) {
            Some(x) => x.cores.push(c),
            None => roles.push(RoleCores {
                role: t.role.clone(),
                cores: vec![c],
            }),
        }
    }
    for x in &mut roles {
        x.cores.sort_by(|a, b| b.total_cmp(a));
    }
    // The compiler's and the collector's threads by name, so a JIT still compiling in the
    // window shows as itself rather than as an unexplained share of the JVM.
    for (role, cpu_s) in [("jit", r.jit_cpu_s), ("gc", r.gc_cpu_s)] {
        if let Some(s) = cpu_s.filter(|&s| s >= 0.0) {
            threads_s += s;
            roles.push(RoleCores {
                role: role.into(),
                cores: vec![measure::round3(s / secs)],
            });
        }
    }
    let rest = (r.process_cpu_s - threads_s).max(0.0);
    roles.push(RoleCores {
        role: "jvm".into(),
        cores: vec![measure::round3(rest / secs)],
    });
    let process_cores = measure::round3(r.process_cpu_s / secs);
    Figures {
        messages: r.messages,
        window_s: measure::round3(r.seconds),
        msgs_per_s: r.msgs_per_s,
        mb_per_s: r.mb_per_s,
        process_cores,
        cpu_s_per_million: if r.messages > 0 {
            measure::round3(r.process_cpu_s / (r.messages as f64 / 1e6))
        } else {
            0.0
        },
        machine_busy_cores: None,
        threads: roles,
        per_instance: r.per_consumer.clone(),
        timeline: Vec::new(),
        gc_time_ms: Some(r.gc_time_ms),
    }
}

/// Ok(None): Ctrl-C stopped the JVM.
pub fn run(
    cx: &Context,
    topic: &TopicGuard,
    expected: u64,
    p: &Point,
    duration: Duration,
    dir: &Path,
    own_core: Option<OwnCore>,
) -> Result<Option<Figures>> {
    let protocol = match p.api {
        Api::Consumer => "consumer",
        _ => "classic",
    };
    let client = vec![
        (
            "bootstrap.servers".to_string(),
            cx.broker.bootstrap().to_string(),
        ),
        ("group.protocol".to_string(), protocol.to_string()),
    ];
    let kgap = [
        ("mode", "consumers".to_string()),
        ("topic", topic.name.clone()),
        ("partitions", topic.partitions.to_string()),
        ("messages", expected.to_string()),
        ("consumers", p.instances.to_string()),
        ("size", p.size_bytes.to_string()),
        ("seconds", format!("{:.3}", duration.as_secs_f64())),
        // Whole reads first, until the JIT has settled (ConsumeMode.warmupPasses).
        ("warmup-passes", java::WARMUP_PASSES.to_string()),
    ];
    let machine0 = crate::kit::instances::MachineCpu::now();
    let run = java::run(
        cx.java()?,
        dir,
        &Jvm {
            own_core,
            ..Jvm::heap("1g")
        },
        &kgap,
        &client,
        duration + Duration::from_secs(240),
    );
    let run = match run {
        Err(_) if interrupt::stopped() => return Ok(None),
        r => r?,
    };
    if let Some(own) = &own_core {
        own.require(run.own_core_threads, "in the JVM")?;
    }
    let r = parse(&run.result_line)?;
    if r.group_protocol != protocol {
        return Err(ProbeError::Kafka(format!(
            "the companion ran group.protocol={} where {protocol} was asked",
            r.group_protocol
        )));
    }
    let mut f = figures(&r);
    // The JVM's start and end are inside this span, not only its window: an upper bound.
    f.machine_busy_cores = machine0
        .zip(crate::kit::instances::MachineCpu::now())
        .and_then(|(a, b)| a.busy_cores_until(&b));
    Ok(Some(f))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_companions_threads_become_roles_and_the_rest_is_the_jvms() {
        let line = r#"RESULT {"messages":1000000,"seconds":2.0,"msgs_per_s":500000.0,
            "mb_per_s":512.0,"process_cpu_s":2.6,"gc_time_ms":12,"consumers":1,
            "group_protocol":"consumer","per_consumer":[{"instance":0,"messages":1000000,
            "msgs_per_s":500000.0,"mb_per_s":512.0}],"threads":[
            {"name":"kgap-poll-0","role":"poll","cpu_s":0.74,"user_s":0.6},
            {"name":"consumer_background_thread","role":"background","cpu_s":1.32,"user_s":1.0}]}"#;
        let r = parse(&line.replace('\n', " ")).unwrap();
        let f = figures(&r);
        assert_eq!(f.busiest("poll"), 0.37);
        assert_eq!(f.busiest("background"), 0.66);
        assert_eq!(f.busiest("jvm"), 0.27);
        assert_eq!(f.busiest("jit"), 0.0);
        let with_native = line.replace(
            r#""group_protocol""#,
            r#""jit_cpu_s":0.3,"gc_cpu_s":0.04,"group_protocol""#,
        );
        let f = figures(&parse(&with_native.replace('\n', " ")).unwrap());
        assert_eq!(f.busiest("jit"), 0.15);
        assert_eq!(f.busiest("gc"), 0.02);
        assert_eq!(f.busiest("jvm"), 0.1);
        assert_eq!(f.process_cores, 1.3);
        assert_eq!(f.cpu_s_per_million, 2.6);
        assert_eq!(f.per_instance[0].msgs_per_s, 500000.0);
        assert!(parse("RESULT {").is_err());
    }
}
