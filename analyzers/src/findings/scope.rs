//! Whether a diagnosis may be filed under a finding of the post. The post's findings are
//! about Kafka clients. A librdkafka log, its statistics and a probe's result come from one
//! by their nature; a GC log, a JFR recording or a thread snapshot can come from any JVM or
//! process. A diagnosis read from those is filed under a finding only with evidence, in the
//! same artifact, that it comes from the client the finding is about (a thread named
//! `kafka-producer-network-thread`, kafka-clients frames), or when the user says what the
//! JVM is (`--jvm-role producer`). Otherwise it stays at its own, generic level ("GC
//! collapse: the heap stays full after collections"), with the finding offered as a
//! question.

use serde::Serialize;
use serde_json::{json, Value};

pub use super::finding::Scope;
use super::finding::{Finding, Source, Strength};
use crate::thread_cpu::roles::{self, Role};

/// A Kafka client, as an artifact shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum KafkaClient {
    JavaProducer,
    JavaConsumer,
    Librdkafka,
}

impl KafkaClient {
    pub fn as_str(self) -> &'static str {
        match self {
            KafkaClient::JavaProducer => "java-producer",
            KafkaClient::JavaConsumer => "java-consumer",
            KafkaClient::Librdkafka => "librdkafka",
        }
    }
}

/// What the user says the JVM artifacts of a folder are (`--jvm-role`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum JvmRole {
    /// A Java application producing with kafka-clients.
    Producer,
    /// A Java application consuming with kafka-clients.
    Consumer,
    /// Not a Kafka client: no finding of the post is filed from its artifacts.
    Other,
}

/// The evidence key under which an analyzer says which Kafka client its artifact shows:
/// `{"client": "java-producer", "shown_by": "thread 'kafka-producer-network-thread | p-1'"}`.
pub const KAFKA_CLIENT_KEY: &str = "kafka_client";

/// The Kafka client a thread's name shows, if any. kafka-clients names its producer's
/// network thread `kafka-producer-network-thread | <client.id>`, its group heartbeat thread
/// `kafka-coordinator-heartbeat-thread | <group>` and (group.protocol=consumer) its
/// background thread `consumer_background_thread`; librdkafka names its threads `rdk:*`.
/// Tools cut names (top: 15 characters, `+` marks the cut).
pub fn kafka_thread(name: &str) -> Option<KafkaClient> {
    // The thread names are analyze-thread-cpu's roles (a cut name, `kafka-pro+`, by the
    // known name its head begins).
    let role = match name.strip_suffix('+') {
        Some(head) => roles::classify_cut(head),
        None => roles::classify(name),
    };
    match role {
        Role::JavaProducerNetwork => Some(KafkaClient::JavaProducer),
        Role::JavaHeartbeat | Role::JavaConsumerBackground => Some(KafkaClient::JavaConsumer),
        r if r.is_rdk() => Some(KafkaClient::Librdkafka),
        _ => None,
    }
}

/// The Kafka client a stack frame shows, if any: kafka-clients' producer and consumer
/// packages, or one of librdkafka's functions. (A broker runs `org.apache.kafka.clients`
/// too, for its own network client: only the producer and consumer packages count.)
pub fn kafka_frame(frame: &str) -> Option<KafkaClient> {
    if frame.starts_with("org.apache.kafka.clients.producer.") {
        Some(KafkaClient::JavaProducer)
    } else if frame.starts_with("org.apache.kafka.clients.consumer.") {
        Some(KafkaClient::JavaConsumer)
    } else if frame.starts_with("rd_kafka_") {
        Some(KafkaClient::Librdkafka)
    } else {
        None
    }
}

/// The evidence value an analyzer stores under [`KAFKA_CLIENT_KEY`].
pub fn kafka_client_evidence(client: KafkaClient, shown_by: &str) -> Value {
    json!({"client": client.as_str(), "shown_by": shown_by})
}

/// Evidence that an artifact comes from `want` (any Kafka client when None): the first of
/// its thread `names`, then of its stack `frames`, that shows one.
pub fn shown_by<'a>(
    names: impl IntoIterator<Item = &'a str>,
    frames: impl IntoIterator<Item = &'a str>,
    want: Option<KafkaClient>,
) -> Option<Value> {
    let fits = |c: KafkaClient| want.is_none_or(|w| w == c);
    names
        .into_iter()
        .find_map(|n| {
            kafka_thread(n)
                .filter(|&c| fits(c))
                .map(|c| kafka_client_evidence(c, &format!("thread '{n}'")))
        })
        .or_else(|| {
            frames.into_iter().find_map(|f| {
                kafka_frame(f)
                    .filter(|&c| fits(c))
                    .map(|c| kafka_client_evidence(c, &format!("frame {f}")))
            })
        })
}

/// The client a diagnosis's evidence says its artifact shows.
pub fn shown_client(evidence: &Value) -> Option<KafkaClient> {
    match evidence.get(KAFKA_CLIENT_KEY)?.get("client")?.as_str()? {
        "java-producer" => Some(KafkaClient::JavaProducer),
        "java-consumer" => Some(KafkaClient::JavaConsumer),
        "librdkafka" => Some(KafkaClient::Librdkafka),
        _ => None,
    }
}

/// The client a Java-side finding is about, for filing artifacts of any JVM under it.
/// Findings absent here take any Kafka client's evidence.
const FINDING_CLIENT: &[(&str, KafkaClient)] = &[
    ("java-gc-collapse", KafkaClient::JavaProducer),
    ("java-send-buffer", KafkaClient::JavaProducer),
    ("java-large-batch-copy", KafkaClient::JavaProducer),
    ("java-gzip-batch-closing", KafkaClient::JavaProducer),
    ("java-per-broker-linger", KafkaClient::JavaProducer),
    ("java-receive-buffer", KafkaClient::JavaConsumer),
    ("java-consumer-one-core", KafkaClient::JavaConsumer),
];

/// The client a finding is about, when it is one Java client.
pub fn finding_client(finding: &str) -> Option<KafkaClient> {
    FINDING_CLIENT
        .iter()
        .find(|(id, _)| *id == finding)
        .map(|&(_, c)| c)
}

/// How a diagnosis is filed.
#[derive(Debug, Clone)]
pub enum Filing {
    /// Under the finding, with its strength; `by_role` when the user's `--jvm-role`, not
    /// the artifact, made it a Kafka client's (such files count once per kind toward
    /// confidence: several GC logs are one kind of evidence).
    Under {
        finding: &'static Finding,
        strength: Strength,
        by_role: bool,
    },
    /// At its own, generic level: the finding it might be, as a question.
    Generic {
        finding: &'static Finding,
        question: String,
    },
}

/// The one rule for filing a diagnosis from `source` (an analyzer) under the finding the
/// catalogue maps it to.
pub fn filing(
    finding: &'static Finding,
    entry: &Source,
    evidence: &Value,
    role: Option<JvmRole>,
) -> Filing {
    let wanted = finding_client(finding.id);
    let fits = |c: KafkaClient| wanted.is_none_or(|w| w == c);
    if entry.scope == Scope::KafkaClient {
        return Filing::Under {
            finding,
            strength: entry.strength,
            by_role: false,
        };
    }
    if shown_client(evidence).is_some_and(fits) {
        return Filing::Under {
            finding,
            strength: entry.strength,
            by_role: false,
        };
    }
    let role_client = match role {
        Some(JvmRole::Producer) => Some(KafkaClient::JavaProducer),
        Some(JvmRole::Consumer) => Some(KafkaClient::JavaConsumer),
        _ => None,
    };
    if role_client.is_some_and(fits) {
        return Filing::Under {
            finding,
            strength: entry.strength,
            by_role: true,
        };
    }
    let question = match (role, wanted) {
        (Some(JvmRole::Other), _) => format!(
            "not filed under {}: --jvm-role other says this JVM is not a Kafka client",
            finding.id
        ),
        (_, Some(w)) => format!(
            "nothing in this file shows a Kafka client (no kafka-clients thread or frame): if \
             it comes from a {}, this is the post's {} ({}); say so with --jvm-role {}",
            match w {
                KafkaClient::JavaProducer => "Java Kafka producer",
                KafkaClient::JavaConsumer => "Java Kafka consumer",
                KafkaClient::Librdkafka => "librdkafka client",
            },
            finding.id,
            finding.cause,
            match w {
                KafkaClient::JavaConsumer => "consumer",
                _ => "producer",
            }
        ),
        (_, None) => format!(
            "nothing in this file shows a Kafka client: if it comes from one, this is the \
             post's {} ({})",
            finding.id, finding.cause
        ),
    };
    Filing::Generic { finding, question }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::findings::CATALOGUE;

    fn entry(finding: &str, id: &str) -> (&'static Finding, Source) {
        let f = CATALOGUE.iter().find(|f| f.id == finding).unwrap();
        let s = *f.sources.iter().find(|s| s.id == id).unwrap();
        (f, s)
    }

    #[test]
    fn names_and_frames_of_kafka_clients_are_told_from_others() {
        assert_eq!(
            kafka_thread("kafka-producer-network-thread | producer-1"),
            Some(KafkaClient::JavaProducer)
        );
        assert_eq!(kafka_thread("kafka-pro+"), Some(KafkaClient::JavaProducer));
        assert_eq!(
            kafka_thread("kafka-coordinator-heartbeat-thread | g"),
            Some(KafkaClient::JavaConsumer)
        );
        assert_eq!(kafka_thread("rdk:broker1"), Some(KafkaClient::Librdkafka));
        for other in [
            "main",
            "pool-1-thread-3",
            "GC Thread#0",
            "kafka-request-handler-1",
        ] {
            assert_eq!(kafka_thread(other), None, "{other}");
        }
        assert_eq!(
            kafka_frame("org.apache.kafka.clients.consumer.internals.Fetcher.collectFetch"),
            Some(KafkaClient::JavaConsumer)
        );
        // A broker's own network client is not a producer or a consumer.
        assert_eq!(
            kafka_frame("org.apache.kafka.clients.NetworkClient.poll"),
            None
        );
        assert_eq!(
            kafka_frame("kafka.server.ReplicaFetcherThread.doWork"),
            None
        );
    }

    #[test]
    fn a_gc_collapse_of_an_unknown_jvm_stays_generic_and_asks() {
        let (f, s) = entry("java-gc-collapse", "gc-collapse");
        assert_eq!(s.scope, Scope::AnyProcess);
        let ev = json!({"heap_after_gc_pct": 97.0});
        match filing(f, &s, &ev, None) {
            Filing::Generic { question, .. } => {
                assert!(question.contains("--jvm-role producer"), "{question}");
                assert!(question.contains("java-gc-collapse"), "{question}");
            }
            other => panic!("{other:?}"),
        }
        // The user's word files it, marked as such; a consumer's word does not.
        assert!(matches!(
            filing(f, &s, &ev, Some(JvmRole::Producer)),
            Filing::Under { by_role: true, .. }
        ));
        assert!(matches!(
            filing(f, &s, &ev, Some(JvmRole::Consumer)),
            Filing::Generic { .. }
        ));
        assert!(matches!(
            filing(f, &s, &ev, Some(JvmRole::Other)),
            Filing::Generic { .. }
        ));
    }

    #[test]
    fn a_socket_cap_on_a_kafka_thread_is_filed_and_on_any_other_is_not() {
        let (f, s) = entry("java-send-buffer", "fixed-socket-buffer");
        let mut ev = json!({"op": "write", "thread": "main"});
        assert!(matches!(filing(f, &s, &ev, None), Filing::Generic { .. }));
        ev[KAFKA_CLIENT_KEY] = kafka_client_evidence(
            KafkaClient::JavaProducer,
            "thread 'kafka-producer-network-thread | p'",
        );
        assert!(matches!(
            filing(f, &s, &ev, None),
            Filing::Under { by_role: false, .. }
        ));
        // A consumer's evidence does not make a producer's finding.
        ev[KAFKA_CLIENT_KEY] = kafka_client_evidence(KafkaClient::JavaConsumer, "frames");
        assert!(matches!(filing(f, &s, &ev, None), Filing::Generic { .. }));
    }

    #[test]
    fn kafka_artifacts_are_filed_as_they_are() {
        let (f, s) = entry("fetch-backoff", "fetch-queue-backoff");
        assert_eq!(s.scope, Scope::KafkaClient);
        assert!(matches!(
            filing(f, &s, &json!({}), Some(JvmRole::Other)),
            Filing::Under { by_role: false, .. }
        ));
    }
}
