//! What a capture cannot see from outside the process, and the artifact that would show it:
//! the lines the report ends with. Which lines apply follows from what was captured.

use super::jmx::JmxSummary;
use super::target::ClientKind;

/// What the capture had, for choosing the lines.
#[derive(Debug, Clone, Default)]
pub struct Had {
    pub kind: Option<ClientKind>,
    pub stats: bool,
    pub log: bool,
    /// A JVM whose recording and GC log were taken.
    pub jvm_artifacts: bool,
    /// The thread dumps showed kafka-clients threads.
    pub kafka_threads: bool,
    /// What the JMX step found (None: no jcmd, so not asked).
    pub jmx: Option<JmxSummary>,
    pub stacks: bool,
    /// Why native stacks were not taken (no tool, `--no-stacks`).
    pub stacks_why_not: Option<String>,
}

/// The lines, each "what is missing: the artifact, and how to get it".
pub fn lines(h: &Had) -> Vec<String> {
    let mut out = Vec::new();
    match h.kind {
        Some(ClientKind::Librdkafka) => {
            if !h.stats {
                out.push(
                    "per-broker request latency, queue depths, the in-flight window and \
                     batch sizes: librdkafka's statistics. Set statistics.interval.ms=1000, \
                     write the stats callback's JSON to a file, then `capture --stats FILE`"
                        .into(),
                );
            }
            if !h.log {
                out.push(
                    "per-request sizes and in-flight queueing (producer), the fetch queue's \
                     backoff naps (consumer): librdkafka's debug log. Restart with \
                     debug=protocol (producer) or debug=fetch (consumer) logging to a file, \
                     then `capture --log FILE`"
                        .into(),
                );
            }
            if !h.stacks {
                if let Some(why) = &h.stacks_why_not {
                    out.push(why.clone());
                }
            }
        }
        Some(ClientKind::Jvm) => {
            match &h.jmx {
                Some(j) if j.reachable => {}
                Some(j) => out.push(format!(
                    "kafka-clients' own metrics (record-queue-time, request-latency, \
                     batch-size, fetch-latency): JMX, not reachable here: {}. `capture --jmx` \
                     starts the JVM's local JMX agent (jcmd PID ManagementAgent.start_local: a \
                     local connector, no network port; it cannot be stopped again and stays \
                     until the JVM exits), or start the JVM with -Dcom.sun.management.jmxremote",
                    j.how
                )),
                None => out.push(
                    "kafka-clients' own metrics (record-queue-time, request-latency, \
                     batch-size, fetch-latency): JMX, not asked (no jcmd attach: see the \
                     problems above)"
                        .into(),
                ),
            }
            if !h.jvm_artifacts {
                out.push(
                    "GC pauses, heap after GC and socket I/O sizes: the JVM's GC log and a \
                     JFR recording, which capture takes through jcmd (not taken here: see the \
                     problems above)"
                        .into(),
                );
            }
            if !h.kafka_threads {
                out.push(
                    "no kafka-clients thread in the thread dumps: this JVM showed no Kafka \
                     client, so no finding of the post is filed from its files (a client \
                     created later, or one in another JVM, is not seen)"
                        .into(),
                );
            }
        }
        None => {}
    }
    out.push(
        "the broker's side (request queue time, purgatory, disk): the broker's request \
         metrics (JMX kafka.network:type=RequestMetrics) or its request log"
            .into(),
    );
    out
}
