//! The broker a probe runs against, and the topics it creates there.
//!
//! Without `--brokers` a probe starts librdkafka's mock cluster in-process: its per-request
//! costs are not Apache Kafka's, so every output says which broker it was. With `--brokers`
//! the probe runs against any cluster, and only ever touches topics it created itself: a
//! unique `kgap.`-prefixed name, deleted at the end — also after an error, a panic or Ctrl-C.

use crate::kit::capture::{KgapContext, LogQueue, Sink};
use crate::kit::error::{from_kafka, ProbeError, Result};
use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::config::{ClientConfig, FromClientConfigAndContext, RDKafkaLogLevel};
use rdkafka::consumer::{BaseConsumer, Consumer as _};
use rdkafka::mocking::MockCluster;
use rdkafka::producer::{BaseProducer, DefaultProducerContext, Producer as _};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// How long a probe waits for an unreachable cluster before giving up.
pub const REACH_TIMEOUT: Duration = Duration::from_secs(8);

/// What the result document says about the broker.
pub use kgap_analyzers::findings::probe_result::{BrokerInfo, BrokerKind};

pub const MOCK_NOTE: &str = "embedded librdkafka mock cluster (in-process, one rdk:mock thread \
sharing the probe's cores): its per-request costs are not Apache Kafka's, so these numbers show \
librdkafka's side only";

/// The broker: librdkafka's mock cluster, or a real cluster's bootstrap list.
pub struct Broker {
    mock: Option<MockCluster<'static, DefaultProducerContext>>,
    bootstrap: String,
    overrides: Vec<(String, String)>,
    /// Set by the kit's watchdog when the cluster stopped answering: nothing more is asked
    /// of it (a topic deletion would only wait out its timeout).
    lost: Arc<AtomicBool>,
    /// Replicas of every partition of the topics this run creates (`--replication-factor`).
    replication_factor: i32,
}

impl Broker {
    /// Starts the mock (no `brokers`) or checks that the cluster answers a Metadata request
    /// within [`REACH_TIMEOUT`]. `overrides` are the user's `-X` properties, applied last to
    /// every client (security settings included).
    pub fn start(brokers: Option<&str>, overrides: &[(String, String)]) -> Result<Broker> {
        let broker = match brokers {
            None => {
                let mock = MockCluster::new(1)
                    .map_err(|e| ProbeError::kafka("starting librdkafka's mock cluster", e))?;
                Broker {
                    bootstrap: mock.bootstrap_servers(),
                    mock: Some(mock),
                    overrides: overrides.to_vec(),
                    lost: Arc::default(),
                    replication_factor: 1,
                }
            }
            Some(b) => Broker {
                mock: None,
                bootstrap: b.to_string(),
                overrides: overrides.to_vec(),
                lost: Arc::default(),
                replication_factor: 1,
            },
        };
        broker.check_reachable()?;
        Ok(broker)
    }

    /// Sets the replicas of the topics this run creates (1 by default; the mock has one
    /// broker, so it stays 1 there). Checked against the cluster's size at creation.
    pub fn set_replication_factor(&mut self, rf: i32) {
        self.replication_factor = rf.max(1);
    }

    pub fn replication_factor(&self) -> i32 {
        if self.is_mock() {
            1
        } else {
            self.replication_factor
        }
    }

    /// A replication factor the cluster cannot hold is a usage error before anything runs.
    pub fn check_replication_factor(&self) -> Result<()> {
        if self.replication_factor() > 1 {
            spread(&self.broker_ids()?, 1, self.replication_factor)?;
        }
        Ok(())
    }

    /// The cluster's broker ids, ascending, from a Metadata answer.
    pub fn broker_ids(&self) -> Result<Vec<i32>> {
        let sink = Arc::new(Sink::default());
        let p = Producer::new(self, &[], sink)?;
        let md = p
            .producer
            .client()
            .fetch_metadata(None, REACH_TIMEOUT)
            .map_err(|e| from_kafka("Metadata for the broker list", e))?;
        let mut ids: Vec<i32> = md.brokers().iter().map(|b| b.id()).collect();
        ids.sort_unstable();
        Ok(ids)
    }

    /// The leader of each partition of `topic`, by partition (-1: none), from Metadata.
    pub fn leaders(&self, topic: &str) -> Result<Vec<i32>> {
        let sink = Arc::new(Sink::default());
        let p = Producer::new(self, &[], sink)?;
        let md = p
            .producer
            .client()
            .fetch_metadata(Some(topic), REACH_TIMEOUT)
            .map_err(|e| from_kafka(&format!("Metadata for {topic}"), e))?;
        let mut v: Vec<(i32, i32)> = md
            .topics()
            .iter()
            .filter(|t| t.name() == topic)
            .flat_map(|t| t.partitions().iter().map(|p| (p.id(), p.leader())))
            .collect();
        v.sort_unstable();
        Ok(v.into_iter().map(|(_, l)| l).collect())
    }

    pub fn is_mock(&self) -> bool {
        self.mock.is_some()
    }

    /// The flag the watchdog sets when the cluster is gone.
    pub fn lost_flag(&self) -> Arc<AtomicBool> {
        self.lost.clone()
    }

    /// True once the watchdog found the cluster gone.
    pub fn is_lost(&self) -> bool {
        self.lost.load(Ordering::SeqCst)
    }

    pub fn bootstrap(&self) -> &str {
        &self.bootstrap
    }

    pub fn info(&self) -> BrokerInfo {
        BrokerInfo {
            kind: if self.is_mock() {
                BrokerKind::EmbeddedMock
            } else {
                BrokerKind::External
            },
            bootstrap: self.bootstrap.clone(),
            note: self.is_mock().then(|| MOCK_NOTE.to_string()),
        }
    }

    /// The label used in tables: `embedded mock` or the bootstrap list.
    pub fn label(&self) -> String {
        if self.is_mock() {
            "embedded librdkafka mock cluster (not Apache Kafka)".into()
        } else {
            format!("{} (external)", self.bootstrap)
        }
    }

    /// A client configuration: bootstrap, then the probe's `settings`, then the user's `-X`.
    pub fn config(&self, settings: &[(&str, String)]) -> ClientConfig {
        let mut c = ClientConfig::new();
        c.set("bootstrap.servers", &self.bootstrap);
        for (k, v) in settings {
            c.set(*k, v);
        }
        for (k, v) in &self.overrides {
            c.set(k, v);
        }
        // rust-rdkafka filters debug lines below this level even when `debug` asks for them.
        c.set_log_level(RDKafkaLogLevel::Debug);
        c
    }

    /// Validates a configuration the way librdkafka will see it (unknown keys, bad values):
    /// an error here is exit 2 with librdkafka's own message.
    pub fn validate(&self, settings: &[(&str, String)]) -> Result<()> {
        self.config(settings)
            .create_native_config()
            .map(drop)
            .map_err(|e| from_kafka("configuration", e))
    }

    fn check_reachable(&self) -> Result<()> {
        let sink = Arc::new(Sink::default());
        let producer = Producer::new(self, &[], sink.clone())?;
        match producer
            .producer
            .client()
            .fetch_metadata(None, REACH_TIMEOUT)
        {
            Ok(md) if !md.brokers().is_empty() => Ok(()),
            Ok(_) => Err(ProbeError::Unreachable {
                bootstrap: self.bootstrap.clone(),
                reason: "the cluster answered Metadata with no brokers".into(),
            }),
            Err(e) => Err(ProbeError::Unreachable {
                bootstrap: self.bootstrap.clone(),
                reason: format!(
                    "no Metadata answer within {} s ({e}){}",
                    REACH_TIMEOUT.as_secs(),
                    sink.last_error()
                        .map(|l| format!("; librdkafka: {l}"))
                        .unwrap_or_default()
                ),
            }),
        }
    }

    /// Creates a topic of this run (unique name from [`topic_name`]) and waits until every
    /// partition has a leader. The returned guard deletes it.
    pub fn create_topic(&self, probe: &str, partitions: i32) -> Result<TopicGuard<'_>> {
        let name = topic_name(probe);
        if let Some(mock) = &self.mock {
            mock.create_topic(&name, partitions, 1)
                .map_err(|e| ProbeError::kafka(format!("creating topic {name} on the mock"), e))?;
        } else {
            let admin = self.admin()?;
            let opts = admin_options();
            // Partitions spread over the brokers by hand, partition i led by the i-th broker
            // (round robin), so every connection carries partitions whatever the cluster's
            // own placement would do; replicas on the brokers after it.
            let ids = self.broker_ids()?;
            let assignment = spread(&ids, partitions, self.replication_factor)?;
            let rows: Vec<&[i32]> = assignment.iter().map(|r| r.as_slice()).collect();
            let topic = NewTopic::new(&name, partitions, TopicReplication::Variable(&rows));
            let results = futures_executor::block_on(admin.create_topics([&topic], &opts))
                .map_err(|e| ProbeError::kafka(format!("creating topic {name}"), e))?;
            for r in results {
                if let Err((t, code)) = r {
                    return Err(ProbeError::Kafka(format!("creating topic {t}: {code}")));
                }
            }
        }
        let guard = TopicGuard {
            broker: self,
            name,
            partitions,
        };
        guard.wait_for_leaders(Duration::from_secs(15))?;
        Ok(guard)
    }

    /// The -X overrides every client of this run gets, applied last.
    pub fn overrides(&self) -> &[(String, String)] {
        &self.overrides
    }

    /// Deletes a consumer group this run created (e.g. rdkafka_performance's, which commits
    /// offsets). A no-op on the mock.
    pub fn delete_group(&self, group: &str) -> Result<()> {
        if self.is_mock() {
            return Ok(());
        }
        let admin = self.admin()?;
        let results = futures_executor::block_on(admin.delete_groups(&[group], &admin_options()))
            .map_err(|e| ProbeError::kafka(format!("deleting group {group}"), e))?;
        for r in results {
            if let Err((g, code)) = r {
                return Err(ProbeError::Kafka(format!("deleting group {g}: {code}")));
            }
        }
        Ok(())
    }

    fn admin(&self) -> Result<AdminClient<DefaultClientContext>> {
        AdminClient::from_config_and_context(&self.config(&[]), DefaultClientContext)
            .map_err(|e| from_kafka("admin client", e))
    }
}

/// Replica lists of `partitions` partitions over the brokers `ids`: partition i's leader is
/// `ids[i % n]`, its followers the `rf - 1` brokers after it. More replicas than brokers is a
/// usage error.
pub fn spread(ids: &[i32], partitions: i32, rf: i32) -> Result<Vec<Vec<i32>>> {
    let n = ids.len();
    if n == 0 {
        return Err(ProbeError::Kafka("the cluster listed no brokers".into()));
    }
    if rf < 1 || rf as usize > n {
        return Err(ProbeError::Usage(format!(
            "--replication-factor {rf}: the cluster has {n} broker{} ({})",
            if n == 1 { "" } else { "s" },
            ids.iter()
                .map(|i| i.to_string())
                .collect::<Vec<_>>()
                .join(",")
        )));
    }
    Ok((0..partitions.max(0) as usize)
        .map(|i| (0..rf as usize).map(|r| ids[(i + r) % n]).collect())
        .collect())
}

fn admin_options() -> AdminOptions {
    AdminOptions::new()
        .operation_timeout(Some(Duration::from_secs(10)))
        .request_timeout(Some(Duration::from_secs(15)))
}

static TOPIC_SEQ: AtomicU64 = AtomicU64::new(0);

/// A unique topic name for one run: `kgap.<probe>.<unix ms>.<pid>.<seq>`. The prefix says
/// whose it is; millis, pid and a sequence make it unique across runs and processes.
pub fn topic_name(probe: &str) -> String {
    let ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_millis();
    let probe: String = probe
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .take(64)
        .collect();
    format!(
        "kgap.{}.{}.{}.{}",
        probe,
        ms,
        std::process::id(),
        TOPIC_SEQ.fetch_add(1, Ordering::Relaxed)
    )
}

/// A topic this run created; deleted on drop (on a real cluster — the mock cannot delete and
/// disappears with the process).
pub struct TopicGuard<'b> {
    broker: &'b Broker,
    pub name: String,
    pub partitions: i32,
}

impl TopicGuard<'_> {
    fn wait_for_leaders(&self, timeout: Duration) -> Result<()> {
        let sink = Arc::new(Sink::default());
        let p = Producer::new(self.broker, &[], sink)?;
        let end = std::time::Instant::now() + timeout;
        loop {
            let md = p
                .producer
                .client()
                .fetch_metadata(Some(&self.name), Duration::from_secs(5));
            if let Ok(md) = md {
                if let Some(t) = md.topics().iter().find(|t| t.name() == self.name) {
                    if t.error().is_none()
                        && t.partitions().len() == self.partitions as usize
                        && t.partitions().iter().all(|p| p.leader() >= 0)
                    {
                        return Ok(());
                    }
                }
            }
            if std::time::Instant::now() >= end {
                return Err(ProbeError::Kafka(format!(
                    "topic {} has no leader for every partition after {} s",
                    self.name,
                    timeout.as_secs()
                )));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Deletes the topic now; errors are returned (drop only warns).
    pub fn delete(mut self) -> Result<()> {
        let r = self.delete_inner();
        self.name.clear();
        r
    }

    fn delete_inner(&self) -> Result<()> {
        if self.name.is_empty() || self.broker.is_mock() {
            return Ok(());
        }
        if self.broker.is_lost() {
            return Err(ProbeError::Kafka(
                "the broker stopped answering, so it was not asked".into(),
            ));
        }
        let admin = self.broker.admin()?;
        let results = futures_executor::block_on(
            admin.delete_topics(&[self.name.as_str()], &admin_options()),
        )
        .map_err(|e| ProbeError::kafka(format!("deleting topic {}", self.name), e))?;
        for r in results {
            if let Err((t, code)) = r {
                return Err(ProbeError::Kafka(format!("deleting topic {t}: {code}")));
            }
        }
        Ok(())
    }
}

impl Drop for TopicGuard<'_> {
    fn drop(&mut self) {
        if let Err(e) = self.delete_inner() {
            eprintln!(
                "kgap: could not delete this run's topic {}: {e}; delete it by hand",
                self.name
            );
        }
    }
}

/// A consumer whose log events are served by its own thread ([`LogQueue`]).
pub struct Consumer {
    // Declared first: dropped (detached) before the consumer closes.
    _log: LogQueue,
    pub consumer: BaseConsumer<KgapContext>,
    pub sink: Arc<Sink>,
}

impl Consumer {
    pub fn new(broker: &Broker, settings: &[(&str, String)], sink: Arc<Sink>) -> Result<Consumer> {
        let consumer: BaseConsumer<KgapContext> = BaseConsumer::from_config_and_context(
            &broker.config(settings),
            KgapContext::new(sink.clone()),
        )
        .map_err(|e| from_kafka("creating the consumer", e))?;
        let log = unsafe { LogQueue::attach(consumer.client().native_ptr(), sink.clone()) };
        // Log lines librdkafka queued before the log queue existed (INIT) wait on the main
        // queue; served here they go through the context to the sink. Left there, a batch
        // call would serve them to librdkafka's stderr printer. Nothing is assigned yet, so
        // no message can be taken.
        let _ = consumer.poll(std::time::Duration::ZERO);
        Ok(Consumer {
            _log: log,
            consumer,
            sink,
        })
    }
}

impl Consumer {
    /// Assigns every partition of `topic` from its first offset (assign, not subscribe: no
    /// rebalance, and nothing committed for the group).
    pub fn assign_from_start(&self, topic: &str, partitions: i32) -> Result<()> {
        let mut tpl = rdkafka::TopicPartitionList::new();
        for p in 0..partitions {
            tpl.add_partition_offset(topic, p, rdkafka::Offset::Beginning)
                .map_err(|e| ProbeError::kafka("assignment", e))?;
        }
        self.consumer
            .assign(&tpl)
            .map_err(|e| ProbeError::kafka("assign", e))
    }
}

/// A producer whose log events are served by its own thread ([`LogQueue`]).
pub struct Producer {
    _log: LogQueue,
    pub producer: BaseProducer<KgapContext>,
    pub sink: Arc<Sink>,
    /// Memory librdkafka may reference without a copy (zero-copy payloads). Declared after
    /// `producer`, so it is freed only once rd_kafka_destroy has returned.
    pinned: std::sync::Mutex<Vec<Arc<[u8]>>>,
}

impl Producer {
    pub fn new(broker: &Broker, settings: &[(&str, String)], sink: Arc<Sink>) -> Result<Producer> {
        Producer::with_context(broker, settings, KgapContext::new(sink))
    }

    /// A producer with a context of the caller's (e.g. one recording send-to-ack latency).
    pub fn with_context(
        broker: &Broker,
        settings: &[(&str, String)],
        context: KgapContext,
    ) -> Result<Producer> {
        Producer::from_config(&broker.config(settings), context)
    }

    /// A producer from a configuration already made by [`Broker::config`] (the watchdog
    /// makes its client again from the same one).
    pub fn from_config(config: &ClientConfig, context: KgapContext) -> Result<Producer> {
        let sink = context.sink.clone();
        let producer: BaseProducer<KgapContext> =
            BaseProducer::from_config_and_context(config, context)
                .map_err(|e| from_kafka("creating the producer", e))?;
        let log = unsafe { LogQueue::attach(producer.client().native_ptr(), sink.clone()) };
        Ok(Producer {
            _log: log,
            producer,
            sink,
            pinned: std::sync::Mutex::new(Vec::new()),
        })
    }

    /// Keeps `bytes` alive as long as this producer: messages produced from them without
    /// RD_KAFKA_MSG_F_COPY stay valid whatever is still queued or in flight.
    pub fn pin(&self, bytes: Arc<[u8]>) {
        self.pinned.lock().expect("pinned").push(bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn topic_names_are_unique_prefixed_and_legal() {
        let a = topic_name("probe-fetch-backoff");
        let b = topic_name("probe-fetch-backoff");
        assert_ne!(a, b);
        assert!(a.starts_with("kgap.probe-fetch-backoff."), "{a}");
        for n in [&a, &b, &topic_name("we/ird name!")] {
            assert!(n.len() <= 249);
            assert!(n
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')));
        }
        assert!(topic_name(&"x".repeat(500)).len() <= 249);
    }

    #[test]
    fn partitions_are_spread_round_robin_with_replicas_after_the_leader() {
        let a = spread(&[1, 2, 3], 6, 1).unwrap();
        assert_eq!(a, [[1], [2], [3], [1], [2], [3]]);
        let a = spread(&[1, 2, 3], 4, 3).unwrap();
        assert_eq!(a[0], [1, 2, 3]);
        assert_eq!(a[1], [2, 3, 1]);
        assert_eq!(a[3], [1, 2, 3]);
        // More replicas than brokers is the user's mistake, said with the broker list.
        match spread(&[1, 2, 3], 6, 4) {
            Err(ProbeError::Usage(m)) => assert!(m.contains("3 brokers (1,2,3)"), "{m}"),
            other => panic!("{other:?}"),
        }
        assert!(matches!(spread(&[], 1, 1), Err(ProbeError::Kafka(_))));
    }
}
