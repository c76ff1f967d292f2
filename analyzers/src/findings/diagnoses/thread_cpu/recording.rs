//! The diagnoses of a recording (`analyze-thread-cpu` on samples over time), in the post's
//! terms, from a finished report; the snapshot's diagnoses reuse their words.

use std::collections::HashMap;

use super::entries::*;
use crate::findings::diagnoses::rule::DiagnosisRule;
use crate::findings::scope::{self, KafkaClient};
use crate::thread_cpu::report::{SaturatedThread, ThreadCpuReport};
use crate::thread_cpu::roles::{ProcessKind, Role};
use crate::vocab::report::{round3, Diagnosis};

fn diag(
    rule: &DiagnosisRule,
    title: &str,
    evidence: serde_json::Value,
    cause: &str,
    fix: &str,
) -> Diagnosis {
    rule.emit(
        title.to_string(),
        evidence,
        cause.to_string(),
        fix.to_string(),
        Vec::new(),
    )
}

fn sat_evidence(ts: &[&SaturatedThread]) -> serde_json::Value {
    let first = ts[0];
    serde_json::json!({
        "thread": first.name,
        "tid": first.tid,
        "cores_mean": first.cores_mean,
        "seconds": first.seconds,
        "from_s": first.from_s,
        "saturated_threads": ts.len(),
        "threads": ts.iter().map(|t| serde_json::json!({
            "tid": t.tid, "name": t.name, "cores_mean": t.cores_mean, "seconds": t.seconds,
        })).collect::<Vec<_>>(),
    })
}

/// The diagnoses, in the post's terms, from a finished report.
pub fn diagnose(r: &ThreadCpuReport) -> Vec<Diagnosis> {
    let mut out = Vec::new();
    let sat = &r.saturated;
    let pick = |f: &dyn Fn(&SaturatedThread) -> bool| -> Vec<&SaturatedThread> {
        sat.iter().filter(|t| f(t)).collect()
    };
    let threshold = format!(
        "at ≥ {} cores for ≥ {} s",
        r.saturated_cores, r.saturated_seconds
    );

    let brokers = pick(&|t| t.role == Role::RdkBroker);
    if !brokers.is_empty() {
        out.push(rdk_broker_saturated(
            &format!("{} ({}) is {threshold}", brokers[0].name, brokers[0].tid),
            sat_evidence(&brokers),
        ));
    }
    if r.process_kind == ProcessKind::Librdkafka {
        let apps = pick(&|t| t.role == Role::App);
        if !apps.is_empty() {
            out.push(app_thread_saturated(
                &format!(
                    "{} ({}), not a librdkafka thread, is {threshold}",
                    apps[0].name, apps[0].tid
                ),
                sat_evidence(&apps),
            ));
        }
    }
    if r.process_kind == ProcessKind::Librdkafka {
        out.extend(pipeline_limit(
            r,
            &pick(&|t| t.role == Role::Pipeline),
            &threshold,
        ));
    }
    // A JVM's application thread is a Kafka consumer's poll thread only when the process
    // shows a consumer (its heartbeat or background thread): any other JVM's busy thread
    // is just a busy thread.
    let names = || r.threads.iter().map(|t| t.name.as_str());
    let consumer = (r.process_kind == ProcessKind::Jvm)
        .then(|| scope::shown_by(names(), [], Some(KafkaClient::JavaConsumer)))
        .flatten();
    if r.process_kind == ProcessKind::Jvm && consumer.is_some() {
        let consumers = pick(&|t| t.role == Role::App || t.role == Role::JavaConsumerBackground);
        if !consumers.is_empty() {
            let mut ev = sat_evidence(&consumers);
            ev[scope::KAFKA_CLIENT_KEY] = consumer.clone().expect("checked");
            out.push(java_consumer_thread_saturated(
                &format!(
                    "{} ({}) is {threshold}",
                    consumers[0].name, consumers[0].tid
                ),
                ev,
            ));
        }
    }
    if r.process_kind == ProcessKind::Jvm {
        let senders = pick(&|t| t.role == Role::JavaProducerNetwork);
        if !senders.is_empty() {
            out.push(java_producer_network_saturated(
                &format!("{} ({}) is {threshold}", senders[0].name, senders[0].tid),
                sat_evidence(&senders),
            ));
        }
    }
    // Everything else that is saturated, with what its role means.
    let covered = |t: &SaturatedThread| -> bool {
        t.role == Role::RdkBroker
            || (r.process_kind == ProcessKind::Librdkafka && t.role == Role::Pipeline)
            || (r.process_kind == ProcessKind::Librdkafka && t.role == Role::App)
            || (r.process_kind == ProcessKind::Jvm && t.role == Role::JavaProducerNetwork)
            || (r.process_kind == ProcessKind::Jvm
                && consumer.is_some()
                && matches!(t.role, Role::App | Role::JavaConsumerBackground))
    };
    let rest = pick(&|t| !covered(t));
    if !rest.is_empty() {
        let t = rest[0];
        let meaning = role_meaning(t.role);
        out.push(saturated_thread(
            &t.name,
            &format!("{} ({}) is {threshold}: {meaning}", t.name, t.tid),
            sat_evidence(&rest),
        ));
    }

    // GC threads dominate: the GC role uses more CPU than any other role.
    let mut by_role: HashMap<Role, f64> = HashMap::new();
    for t in &r.threads {
        *by_role.entry(t.role).or_insert(0.0) += t.cpu_s;
    }
    if r.duration_s > 0.0 {
        let gc = by_role.get(&Role::JvmGc).copied().unwrap_or(0.0);
        let (other_role, other) = by_role
            .iter()
            .filter(|(k, _)| **k != Role::JvmGc)
            .map(|(k, v)| (*k, *v))
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .unwrap_or((Role::App, 0.0));
        let gc_cores = gc / r.duration_s;
        if gc_cores >= GC_DOMINATES_MIN_CORES && gc >= other {
            let gc_threads = r.threads.iter().filter(|t| t.role == Role::JvmGc).count();
            let mut ev = serde_json::json!({
                "gc_cores": round3(gc_cores),
                "gc_threads": gc_threads,
                "next_role": other_role.as_str(),
                "next_role_cores": round3(other / r.duration_s),
            });
            if let Some(k) = scope::shown_by(names(), [], None) {
                ev[scope::KAFKA_CLIENT_KEY] = k;
            }
            out.push(gc_threads_dominate(
                gc_cores,
                other_role,
                other / r.duration_s,
                ev,
            ));
        }
    }

    if sat.is_empty() && out.is_empty() {
        let busiest = r.threads.first();
        out.push(diag(
            &NO_SATURATED_THREAD,
            "no thread saturated",
            serde_json::json!({
                "busiest_thread": busiest.map(|t| t.name.clone()),
                "busiest_tid": busiest.map(|t| t.tid),
                "busiest_cores_max": busiest.map(|t| t.cores_max),
                "busiest_longest_saturated_s": busiest.map(|t| t.longest_saturated_s),
                "process_cores_mean": r.process_cores_mean,
            }),
            &format!(
                "no thread stayed {threshold}: no single thread is the limit. The wait is \
                 elsewhere (the broker, the network, a fetch backoff, a rate limit, or \
                 several threads each waiting on the other)"
            ),
            "for a librdkafka consumer check the fetcher's naps (analyze-fetch-log: \
             fetch.queue.backoff.ms); for a producer the requests on the wire \
             (analyze-protocol-log); sample longer if the run was short",
        ));
    }
    out
}

/// The processing threads, not librdkafka, are the limit: one of them saturated, or all of
/// them together well above librdkafka's client threads (one thread per partition on fewer
/// cores than partitions shares the cores, so no one thread reaches a full core).
fn pipeline_limit(
    r: &ThreadCpuReport,
    saturated: &[&SaturatedThread],
    threshold: &str,
) -> Option<Diagnosis> {
    let cpu = |f: &dyn Fn(Role) -> bool| {
        r.threads
            .iter()
            .filter(|t| f(t.role))
            .map(|t| t.cpu_s)
            .sum::<f64>()
    };
    let pipe = cpu(&|x| x == Role::Pipeline);
    let rdk = cpu(&|x| x.is_rdk() && x != Role::RdkMock);
    if pipe <= 0.0 || r.duration_s <= 0.0 {
        return None;
    }
    let (pipe_cores, rdk_cores) = (pipe / r.duration_s, rdk / r.duration_s);
    let threads = r
        .threads
        .iter()
        .filter(|t| t.role == Role::Pipeline)
        .count();
    let subject = match saturated.first() {
        Some(t) => format!("{} ({}) is {threshold}", t.name, t.tid),
        None if pipe_cores >= PIPELINE_MIN_CORES && pipe >= PIPELINE_OVER_RDK * rdk => format!(
            "the {threads} pipeline threads use {pipe_cores:.2} cores together, {}x \
             librdkafka's client threads ({rdk_cores:.2} cores)",
            if rdk > 0.0 {
                format!("{:.1}", pipe / rdk)
            } else {
                "∞".into()
            }
        ),
        None => return None,
    };
    Some(diag(
        &PROCESSING_THREADS_LIMIT,
        "the processing threads, not librdkafka, are the limit",
        serde_json::json!({
            "pipeline_threads": threads,
            "pipeline_cores": round3(pipe_cores),
            "librdkafka_cores": round3(rdk_cores),
            "saturated_threads": saturated.iter().map(|t| t.name.clone()).collect::<Vec<_>>(),
        }),
        &format!(
            "{subject}. The application's per-record work (deserializing, copying, allocating, \
             aggregating) costs more CPU than the Kafka client's: in the postmortem of a Rust \
             consumer, 38% of CPU was in malloc/free and 20% in memcpy, the record consumer \
             itself under 10%"
        ),
        "profile the processing threads (perf: malloc/free and memcpy) and count their heap \
         allocations per record: borrow payloads from the message, reuse buffers, pass \
         pre-allocated slots (probe-consumer-alloc shows each step); more consumers will not help",
    ))
}

/// librdkafka's broker thread at a full core: `subject` says which thread and how busy.
pub(crate) fn rdk_broker_saturated(subject: &str, evidence: serde_json::Value) -> Diagnosis {
    diag(
        &RDK_BROKER_SATURATED,
        "librdkafka's broker thread is saturated (per-message work inside librdkafka: \
             more consumer instances)",
        evidence,
        &format!(
            "{subject}. librdkafka's broker thread reads the socket and \
                 builds one internal queue entry per fetched message; in the post it \
                 saturates at about 2.1M msg/s of 100 B messages. The batch API only saves \
                 work on the application side."
        ),
        "this is how librdkafka is built, not a knob: run more consumer instances \
             (each has its own broker threads); for large messages librdkafka is \
             not the limit",
    )
}

/// The application thread of a librdkafka client at a full core.
pub(crate) fn app_thread_saturated(subject: &str, evidence: serde_json::Value) -> Diagnosis {
    diag(
        &APP_THREAD_SATURATED,
        "the application thread is saturated (poll() once per message: use the \
                 batch API)",
        evidence,
        &format!(
            "{subject}. rust-rdkafka's poll() \
                     returns one message per call, so the thread that calls it pays a queue \
                     round trip per message (Java's poll() returns up to 500)"
        ),
        "consume in batches: rd_kafka_consume_batch_queue (500 messages per call, \
                 like max.poll.records) took the post's consumer from 1.48M to 2.02M msg/s; \
                 then the limit moves to rdk:broker*",
    )
}

/// One Java consumer thread at a full core.
pub(crate) fn java_consumer_thread_saturated(
    subject: &str,
    evidence: serde_json::Value,
) -> Diagnosis {
    diag(
        &JAVA_CONSUMER_THREAD_SATURATED,
        "one Java consumer thread at one core",
        evidence,
        &format!(
            "{subject}. In the classic consumer the thread that calls \
                     poll() also reads the socket and parses records: in the post it sits at \
                     0.95 to 0.98 cores in every configuration, reading 6 MB fetch responses \
                     in ~56 KB reads (receive.buffer.bytes=64 KB). group.protocol=consumer \
                     splits the work over two threads but it still runs in sequence"
        ),
        "receive.buffer.bytes=-1 (the OS sizes the socket buffer: +16 to 17% in the \
                 post); beyond that one KafkaConsumer does its per-byte work on one core \
                 (~1.4 to 1.6 GB/s): run more consumers",
    )
}

/// The Java producer's network thread at a full core.
pub(crate) fn java_producer_network_saturated(
    subject: &str,
    evidence: serde_json::Value,
) -> Diagnosis {
    diag(
        &JAVA_PRODUCER_NETWORK_SATURATED,
        "the Java producer's network thread is at one core",
        evidence,
        &format!(
            "{subject}. One sender thread per KafkaProducer writes every \
                     request: with heap buffers each socket write first copies the whole \
                     unsent rest of the request (big batches), and with compression it runs \
                     the codec (gzip: 96% in deflate in the post)"
        ),
        "send.buffer.bytes=-1 and batch.size ≤ 256 KB (or max.request.size near one \
                 batch); for gzip compare at equal input per batch or use a cheaper codec; \
                 more producers for more cores",
    )
}

/// Any other thread at a full core; `cause` names it and says what its role means.
pub(crate) fn saturated_thread(name: &str, cause: &str, evidence: serde_json::Value) -> Diagnosis {
    diag(
        &SATURATED_THREAD,
        &format!("thread {name} is saturated"),
        evidence,
        cause,
        "make that thread's work parallel (more instances or threads), or smaller",
    )
}

/// What a saturated thread's role means.
pub(crate) fn role_meaning(role: Role) -> &'static str {
    match role {
        Role::RdkMain => {
            "rdk:main runs librdkafka's timers, metadata and consumer-group \
                              logic; saturated it points at very many partitions or topics, \
                              or a stats callback doing heavy work"
        }
        Role::RdkMock => {
            "rdk:mock runs librdkafka's built-in mock cluster: the broker \
                              side of the test is the limit, not the client"
        }
        Role::RdkOther => {
            "a librdkafka helper thread (rdk:bg runs background event \
                               callbacks): the callback's work is the limit"
        }
        Role::JvmGc => {
            "a JVM garbage collector thread: see the GC diagnosis and the \
                            GC log (analyze-gc-log)"
        }
        Role::JvmJit => {
            "a JIT compiler thread: normal during warm-up; saturated for long, \
                             measure after a longer warm-up"
        }
        Role::JvmOther => "a JVM housekeeping thread",
        Role::JavaHeartbeat => "the consumer's heartbeat thread: it should be near idle",
        _ => "one thread of the process does the work of the whole pipeline",
    }
}

/// GC threads above every other role.
pub(crate) fn gc_threads_dominate(
    gc_cores: f64,
    other_role: Role,
    other_cores: f64,
    evidence: serde_json::Value,
) -> Diagnosis {
    diag(
        &GC_THREADS_DOMINATE,
        "GC threads dominate",
        evidence,
        &format!(
            "the JVM's GC threads use {:.2} cores, more than any other role ({} at \
                     {:.2}); in the post, 16 producers in one 2 GB heap kept ~436 MB of small \
                     per-record objects alive for 300 ms+, the heap stayed full after young \
                     collections and GC threads used 4.79 cores, more than the 16 application \
                     threads (4.50)",
            gc_cores,
            other_role.as_str(),
            other_cores
        ),
        "read the GC log (analyze-gc-log): fewer instances per JVM or a larger heap \
                 (-Xmx), and fewer records in flight (smaller buffer.memory)",
    )
}
