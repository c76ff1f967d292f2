//! The diagnoses of a snapshot, each with the paste's lines that show it. The ids are the
//! recordings' where the meaning is the same (`rdk-broker-saturated`, …), and new where a
//! backtrace or a thread dump tells more than CPU does (`rdk-broker-spin`,
//! `app-thread-own-work`, `java-heartbeat-waits-for-poll-thread`).

use std::collections::BTreeMap;

use serde_json::json;

use super::entries::*;
use super::recording::{self as text};
use crate::findings::diagnoses::rule::DiagnosisRule;
use crate::findings::scope::{self, KafkaClient};
use crate::thread_cpu::roles::{ProcessKind, Role};
use crate::thread_cpu::snapshot::format::{Figure, Format};
use crate::thread_cpu::snapshot::lock_waits::LockWait;
use crate::thread_cpu::snapshot::report::{SnapshotReport, SnapshotThread};
use crate::thread_cpu::snapshot::stacks::is_consumer_poll;
use crate::thread_cpu::snapshot::text::example;
use crate::vocab::report::{round3, Diagnosis, ExampleLine};

/// Evidence lines per diagnosis.
const MAX_EXAMPLES: usize = 6;

/// How busy a hot thread is, and what kind of figure that is, for a cause.
fn how_busy(t: &SnapshotThread) -> String {
    let c = t.cores_mean.unwrap_or(0.0);
    let (of, unit) = if t.sources.contains(&Format::Top) {
        ("top's", "frames")
    } else {
        ("pidstat's", "reports")
    };
    match t.figure {
        Some(Figure::Interval) if t.iterations > 1 => format!(
            "at {c:.2} cores ({of} %CPU, the mean of {} {unit}, {} of them at the threshold)",
            t.iterations, t.iterations_at_threshold
        ),
        Some(Figure::Interval) => format!("at {c:.2} cores ({of} %CPU over its refresh interval)"),
        Some(Figure::BetweenSnapshots) => format!(
            "at {c:.2} cores between two snapshots {:.1} s apart",
            t.over_s.unwrap_or(0.0)
        ),
        Some(Figure::Lifetime) => format!(
            "at {c:.2} cores over its whole life{} (a share over its life, not of now)",
            t.over_s
                .map(|s| format!(" of {s:.0} s"))
                .unwrap_or_default()
        ),
        _ => format!("at {c:.2} cores"),
    }
}

fn evidence(ts: &[&SnapshotThread]) -> serde_json::Value {
    let first = ts[0];
    json!({
        "thread": first.name,
        "tid": first.tid,
        "pid": first.pid,
        "cores_mean": first.cores_mean,
        "figure": first.figure.map(|f| f.as_str()),
        "over_s": first.over_s,
        "saturated_threads": ts.len(),
        "threads": ts.iter().map(|t| json!({
            "tid": t.tid, "name": t.name, "cores_mean": t.cores_mean,
            "figure": t.figure.map(|f| f.as_str()),
        })).collect::<Vec<_>>(),
    })
}

fn examples(ts: &[&SnapshotThread]) -> Vec<ExampleLine> {
    let mut out: Vec<ExampleLine> = Vec::new();
    for t in ts {
        for e in &t.evidence {
            if out.len() < MAX_EXAMPLES && !out.iter().any(|o| o.line == e.line) {
                out.push(e.clone());
            }
        }
    }
    out.sort_by_key(|e| e.line);
    out
}

fn with(
    mut d: Diagnosis,
    ts: &[&SnapshotThread],
    extra: &[(&str, serde_json::Value)],
) -> Diagnosis {
    if let Some(o) = d.evidence.as_object_mut() {
        for (k, v) in extra {
            o.insert(k.to_string(), v.clone());
        }
    }
    d.examples = examples(ts);
    d
}

fn diag(
    rule: &DiagnosisRule,
    title: &str,
    evidence: serde_json::Value,
    cause: String,
    fix: &str,
) -> Diagnosis {
    rule.emit(title.into(), evidence, cause, fix.into(), Vec::new())
}

/// The process kind of each pid the paste names (None: the threads whose pid it does not).
fn kinds(r: &SnapshotReport) -> BTreeMap<Option<i32>, ProcessKind> {
    let mut groups: BTreeMap<Option<i32>, Vec<&SnapshotThread>> = BTreeMap::new();
    for t in &r.threads {
        groups.entry(t.pid).or_default().push(t);
    }
    if groups.len() == 1 {
        return groups.into_keys().map(|k| (k, r.process_kind)).collect();
    }
    groups
        .into_iter()
        .map(|(k, ts)| {
            let kind = if ts.iter().any(|t| t.role.is_rdk()) {
                ProcessKind::Librdkafka
            } else if ts
                .iter()
                .any(|t| t.role.is_jvm_internal() || t.java.is_some())
            {
                ProcessKind::Jvm
            } else {
                ProcessKind::Other
            };
            (k, kind)
        })
        .collect()
}

/// The stack is in the Kafka client: librdkafka's C functions, or rust-rdkafka's wrappers
/// around them (`rdkafka::…`, `rdkafka_sys::…`).
fn in_librdkafka(frames: &[String]) -> bool {
    frames.iter().any(|f| {
        f.starts_with("rd_kafka") || f.contains("rdkafka::") || f.contains("rdkafka_sys::")
    })
}

/// The diagnoses of a finished snapshot report.
pub fn diagnose(r: &SnapshotReport, waits: &[LockWait]) -> Vec<Diagnosis> {
    let mut out = Vec::new();
    let threshold = r.saturated_cores;
    let kinds = kinds(r);
    let kind_of = |t: &SnapshotThread| kinds.get(&t.pid).copied().unwrap_or(r.process_kind);
    let hot: Vec<&SnapshotThread> = r.saturated.iter().collect();
    // Whether a process shows a Java Kafka consumer: a thread of kafka-clients' consumer by
    // name, or consumer frames in any of its stacks.
    let consumer_shown = |pid: Option<i32>| {
        let of_pid = || r.threads.iter().filter(move |x| x.pid == pid);
        let names: Vec<&str> = of_pid()
            .flat_map(|x| {
                std::iter::once(x.name.as_str()).chain(x.java.as_ref().map(|j| j.name.as_str()))
            })
            .collect();
        let frames: Vec<&str> = of_pid()
            .filter_map(|x| x.java.as_ref())
            .flat_map(|j| j.frames.iter().map(String::as_str))
            .collect();
        scope::shown_by(names, frames, Some(KafkaClient::JavaConsumer))
    };
    let mut brokers_working = Vec::new();
    let mut brokers_spinning = Vec::new();
    let mut apps_polling = Vec::new();
    let mut apps_own = Vec::new();
    let mut java_consumers = Vec::new();
    let mut java_senders = Vec::new();
    let mut rest = Vec::new();
    for &t in &hot {
        let kind = kind_of(t);
        let bt = t.backtrace.as_ref();
        match t.role {
            Role::RdkBroker => {
                // A thread at half a core waits half the time: only a thread at a full core
                // whose backtraces wait is waking over and over.
                let full = t.rate().is_some_and(|c| c >= SPIN_MIN_CORES);
                if full
                    && bt.is_some_and(|b| b.waiting as f64 > SPIN_WAITING_SHARE * b.samples as f64)
                {
                    brokers_spinning.push(t)
                } else {
                    brokers_working.push(t)
                }
            }
            Role::App if kind == ProcessKind::Librdkafka => {
                if bt.is_some_and(|b| !in_librdkafka(&b.frames)) {
                    apps_own.push(t)
                } else {
                    apps_polling.push(t)
                }
            }
            Role::JavaProducerNetwork if kind == ProcessKind::Jvm => java_senders.push(t),
            Role::JavaConsumerPoll | Role::JavaConsumerBackground => java_consumers.push(t),
            // A JVM application thread: the consumer's poll thread when its stack says so,
            // or, without a stack, when the process shows a Kafka consumer. Any other
            // JVM's busy thread is only a busy thread.
            Role::App
                if kind == ProcessKind::Jvm
                    && t.java.as_ref().map_or_else(
                        || consumer_shown(t.pid).is_some(),
                        |j| is_consumer_poll(&j.frames),
                    ) =>
            {
                java_consumers.push(t)
            }
            _ => rest.push(t),
        }
    }
    let thr = format!("≥ {threshold}");
    if !brokers_working.is_empty() {
        let t = brokers_working[0];
        let frames = t
            .backtrace
            .as_ref()
            .map(|b| b.frames.clone())
            .unwrap_or_default();
        let d = text::rdk_broker_saturated(
            &format!("{} ({}) is {}, {thr}", t.name, t.tid, how_busy(t)),
            evidence(&brokers_working),
        );
        let mut d = with(
            d,
            &brokers_working,
            &[
                ("backtrace_top", json!(frames.first())),
                (
                    "backtrace_samples",
                    json!(t.backtrace.as_ref().map(|b| b.samples)),
                ),
            ],
        );
        if t.backtrace.is_none() {
            d.cause.push_str(
                " (one backtrace of it, gdb -batch -ex 'thread apply all bt', tells per-message \
                 work from a spin)",
            );
        }
        out.push(d);
    }
    if !brokers_spinning.is_empty() {
        let t = brokers_spinning[0];
        let b = t.backtrace.as_ref().expect("spinning needs a backtrace");
        let d = diag(
            &RDK_BROKER_SPIN,
            "librdkafka's broker thread is at a full core while its backtraces wait in poll() \
             (it wakes over and over: a spin)",
            evidence(&brokers_spinning),
            format!(
                "{} ({}) is {}, {thr}, yet {} of its {} backtrace(s) wait in {}: a thread \
                 that waits that often and still uses a core wakes up constantly. In the post \
                 fetch.queue.backoff.ms=0 spins this way (948k msg/s, against 1480k at 10 ms)",
                t.name,
                t.tid,
                how_busy(t),
                b.waiting,
                b.samples,
                b.frames.first().map_or("a wait", |f| f.as_str())
            ),
            "set fetch.queue.backoff.ms to 10 or more (the post's choice: 10) and keep any \
             timeout the application passes to librdkafka above 0; take 3 to 5 backtraces a \
             second apart to be sure (one backtrace is one moment)",
        );
        out.push(with(
            d,
            &brokers_spinning,
            &[
                ("backtrace_samples", json!(b.samples)),
                ("backtrace_waiting", json!(b.waiting)),
            ],
        ));
    }
    let broker_max = r
        .threads
        .iter()
        .filter(|t| t.role == Role::RdkBroker)
        .filter_map(|t| t.rate())
        .fold(None, |m: Option<f64>, c| Some(m.map_or(c, |m| m.max(c))));
    if !apps_polling.is_empty() {
        let t = apps_polling[0];
        let d = text::app_thread_saturated(
            &format!(
                "{} ({}), not a librdkafka thread, is {}, {thr}{}",
                t.name,
                t.tid,
                how_busy(t),
                broker_max.map_or(String::new(), |m| format!(
                    ", while the busiest rdk:broker thread is at {m:.2}"
                ))
            ),
            evidence(&apps_polling),
        );
        out.push(with(
            d,
            &apps_polling,
            &[("broker_cores_max", json!(broker_max.map(round3)))],
        ));
    }
    if !apps_own.is_empty() {
        let t = apps_own[0];
        let frames = &t
            .backtrace
            .as_ref()
            .expect("own work needs a backtrace")
            .frames;
        let d = diag(
            &APP_THREAD_OWN_WORK,
            "the application thread is at a full core in its own code, not in librdkafka",
            evidence(&apps_own),
            format!(
                "{} ({}) is {}, {thr}, and its backtrace has no librdkafka frame (innermost: \
                 {}): the application's own work between polls is the limit, not the \
                 client{}",
                t.name,
                t.tid,
                how_busy(t),
                frames
                    .iter()
                    .take(3)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(" ← "),
                broker_max.map_or(String::new(), |m| format!(
                    " (the busiest rdk:broker thread is at {m:.2})"
                ))
            ),
            "profile that code (perf, or more backtraces), or move the work off the polling \
             thread; one backtrace is one moment",
        );
        out.push(with(
            d,
            &apps_own,
            &[("backtrace_top", json!(frames.first()))],
        ));
    }
    if !java_consumers.is_empty() {
        let t = java_consumers[0];
        let mut d = text::java_consumer_thread_saturated(
            &format!("{} ({}) is {}, {thr}", t.name, t.tid, how_busy(t)),
            evidence(&java_consumers),
        );
        if t.java.is_none() {
            d.cause.push_str(
                " (a thread dump, jstack PID, would show whether it is in KafkaConsumer.poll())",
            );
        }
        if let Some(k) = consumer_shown(t.pid) {
            d.evidence[scope::KAFKA_CLIENT_KEY] = k;
        }
        out.push(with(d, &java_consumers, &[]));
    }
    if !java_senders.is_empty() {
        let t = java_senders[0];
        let d = text::java_producer_network_saturated(
            &format!("{} ({}) is {}, {thr}", t.name, t.tid, how_busy(t)),
            evidence(&java_senders),
        );
        out.push(with(d, &java_senders, &[]));
    }
    if !rest.is_empty() {
        let t = rest[0];
        let meaning = match (&t.java, t.role) {
            (Some(j), Role::App) => format!(
                "a JVM application thread outside KafkaConsumer.poll() (innermost: {}): its \
                 own work is the limit",
                j.frames.first().map_or("?", |f| f.as_str())
            ),
            _ => text::role_meaning(t.role).to_string(),
        };
        let d = text::saturated_thread(
            &t.name,
            &format!(
                "{} ({}) is {}, {thr}: {meaning}",
                t.name,
                t.tid,
                how_busy(t)
            ),
            evidence(&rest),
        );
        out.push(with(d, &rest, &[]));
    }
    // GC threads above every other role (threads with a rate only).
    let gc = r
        .roles
        .iter()
        .find(|x| x.role == Role::JvmGc)
        .map_or(0.0, |x| x.cores);
    if gc >= GC_DOMINATES_MIN_CORES {
        let other = r.roles.iter().find(|x| x.role != Role::JvmGc);
        let (other_role, other_cores) = other.map_or((Role::App, 0.0), |o| (o.role, o.cores));
        if gc >= other_cores {
            let gcs: Vec<&SnapshotThread> = r
                .threads
                .iter()
                .filter(|t| t.role == Role::JvmGc && t.rate().is_some())
                .collect();
            let mut ev = json!({
                "gc_cores": round3(gc),
                "gc_threads": gcs.len(),
                "next_role": other_role.as_str(),
                "next_role_cores": round3(other_cores),
            });
            let names = r.threads.iter().map(|x| x.name.as_str());
            let frames = r
                .threads
                .iter()
                .filter_map(|x| x.java.as_ref())
                .flat_map(|j| j.frames.iter().map(String::as_str));
            if let Some(k) = scope::shown_by(names, frames, None) {
                ev[scope::KAFKA_CLIENT_KEY] = k;
            }
            let d = text::gc_threads_dominate(gc, other_role, other_cores, ev);
            out.push(with(d, &gcs[..gcs.len().min(3)], &[]));
        }
    }
    if let Some(d) = heartbeat(waits, r) {
        out.push(d);
    }
    let rated = r.threads.iter().filter(|t| t.rate().is_some()).count();
    if hot.is_empty() && rated == 0 {
        out.push(diag(
            &NO_THREAD_CPU_FIGURES,
            "the paste has no CPU figure per thread",
            json!({ "threads": r.threads.len() }),
            format!(
                "{} thread(s) are named{}, but nothing says how busy any of them is",
                r.threads.len(),
                if r.threads
                    .iter()
                    .any(|t| t.figure == Some(Figure::SinceBoot))
                {
                    " and pidstat's figures are since boot"
                } else {
                    ""
                }
            ),
            "add `top -b -H -n 3 -d 1 -p PID` (or `pidstat -t -p PID 1 5`) to the paste: its \
             TIDs join the backtraces and dumps",
        ));
    } else if hot.is_empty() && !out.iter().any(|d| d.id == GC_THREADS_DOMINATE.id) {
        let busiest = r.threads.iter().find(|t| t.rate().is_some());
        out.push(diag(
            &NO_SATURATED_THREAD,
            "no thread saturated",
            json!({
                "busiest_thread": busiest.map(|t| t.name.clone()),
                "busiest_tid": busiest.map(|t| t.tid),
                "busiest_cores": busiest.and_then(|t| t.cores_mean),
                "busiest_figure": busiest.and_then(|t| t.figure.map(|f| f.as_str())),
            }),
            format!(
                "no thread is at {thr} cores in this snapshot (the busiest, {}, {}): no \
                 single thread is the limit. The wait is elsewhere (the broker, the network, a \
                 fetch backoff, a rate limit), or the snapshot missed the busy moment",
                busiest.map_or("?".to_string(), |t| format!("{} ({})", t.name, t.tid)),
                busiest.map_or(String::new(), how_busy)
            ),
            "take the snapshot while the client is slow (top -b -H -n 5 -d 1 -p PID); for a \
             librdkafka consumer check the fetcher's naps (analyze-fetch-log), for a producer \
             the requests on the wire (analyze-protocol-log)",
        ));
    }
    out
}

/// The heartbeat thread waiting for a lock the poll thread holds.
fn heartbeat(waits: &[LockWait], r: &SnapshotReport) -> Option<Diagnosis> {
    let w = waits
        .iter()
        .find(|w| w.holder.is_some())
        .or(waits.first())?;
    let dumps = r
        .sections
        .iter()
        .filter(|s| s.format == Format::JvmDump)
        .map(|s| s.parts)
        .sum::<u32>()
        .max(1);
    let seen: std::collections::BTreeSet<u32> = waits.iter().map(|w| w.dump).collect();
    let holder = w.holder.as_ref();
    let holder_name = holder.map_or("another thread".to_string(), |h| {
        format!("{} ({})", h.1, h.0.map_or("?".into(), |t| t.to_string()))
    });
    let mut examples = vec![w.waiter.clone(), example(w.wait.line, &w.wait.text)];
    if let Some(h) = holder {
        examples.push(h.2.clone());
        if h.3.line != h.2.line || !w.holder_inferred {
            examples.push(h.3.clone());
        }
    }
    examples.dedup_by_key(|e| (e.line, e.text.clone()));
    examples.sort_by_key(|e| e.line);
    let mut d = diag(
        &JAVA_HEARTBEAT_WAITS_FOR_POLL_THREAD,
        "the consumer's heartbeat thread waits for a lock the poll thread holds",
        json!({
            "heartbeat_thread": w.waiter_name,
            "heartbeat_tid": w.waiter_tid,
            "lock": w.wait.describe(),
            "how": w.wait.how,
            "holder": holder.map(|h| h.1.clone()),
            "holder_tid": holder.and_then(|h| h.0),
            "holder_inferred": w.holder_inferred,
            "dumps_with_wait": seen.len(),
            "dumps": dumps,
        }),
        format!(
            "{} is {} {} held by {}{}, in {} of {} dump(s). The classic consumer's poll \
             thread holds ConsumerNetworkClient's lock while it polls the network (up to \
             fetch.max.wait.ms), and the heartbeat thread needs it to send a heartbeat: a \
             wait of one poll is normal; in every dump of a series, heartbeats are late and \
             after session.timeout.ms the group evicts the member and rebalances",
            w.waiter_name,
            w.wait.how,
            w.wait.describe(),
            holder_name,
            if w.holder_inferred {
                " (inferred: the thread inside ConsumerNetworkClient.poll; jstack -l names the owner)"
            } else {
                ""
            },
            seen.len(),
            dumps
        ),
        "not a finding of the post. Take 3 to 5 dumps a few seconds apart: if the heartbeat \
         thread waits in all of them, look at what the poll thread does while it holds the \
         lock; group.protocol=consumer sends heartbeats from its background thread",
    );
    d.examples = examples;
    Some(d)
}
