//! `probe-consumer-clients`: the post's consumer table, side by side. One prefilled topic per
//! message size (6 partitions, the seed's bytes), read from the start by librdkafka with
//! poll() at its defaults (the post's "rust") and with the batch API at 500 per call plus
//! fetch.queue.backoff.ms=10 ("rust-tuned"), and by one Java KafkaConsumer with
//! group.protocol=classic and =consumer; at each `--instances` K, K such clients in one
//! process, each with its own connection. Every run reports msg/s, MB/s, the cores of each
//! thread by role and CPU seconds per million messages; the catalogue decides
//! `java-consumer-one-core`, `librdkafka-broker-thread-limit` and
//! `instances-scale-past-broker-thread` ([`evidence`]).
//!
//! Here: the prefilled topics, the points and the Probe impl. Beside it: the options and the
//! probe (`options`), a point and its consumer (`point`), a run's figures (`figures`),
//! librdkafka's run (`librdkafka`), Java's (`java`), the catalogue's evidence (`evidence`), the
//! report's text (`render`).

pub mod evidence;
mod figures;
pub mod java;
pub mod librdkafka;
mod options;
mod point;
pub mod render;

pub use figures::{Figures, RoleCores};
pub use options::{ConsumerClients, GroupProtocol, LibrdkafkaApi, Options, NAME, PARTITIONS};
pub use point::{Api, Point, TUNED_BACKOFF_MS, TUNED_BATCH};

use crate::kit::broker::{Broker, TopicGuard};
use crate::kit::cli::CommonArgs;
use crate::kit::error::{ProbeError, Result};
use crate::kit::payload::{PayloadKind, Pool};
use crate::kit::placement::OwnCore;
use crate::kit::produce;
use crate::kit::{Context, Probe, Sweep};
use kgap_analyzers::findings::probe_result::{Client, ProbeResult};
use kgap_analyzers::findings::Verdict;
use kgap_analyzers::vocab::units;
use std::path::Path;

/// The prefilled topics, one per size.
pub struct Setup<'c> {
    pub topics: Vec<(u64, TopicGuard<'c>, u64)>,
}

impl Setup<'_> {
    /// The topic of a size and its message count.
    pub fn topic(&self, size: u64) -> Result<(&TopicGuard<'_>, u64)> {
        self.topics
            .iter()
            .find(|(s, _, _)| *s == size)
            .map(|(_, t, n)| (t, *n))
            .ok_or_else(|| ProbeError::Usage(format!("no topic of {size} B messages")))
    }
}

impl ConsumerClients {
    fn once<T: PartialEq + Copy>(v: &[T]) -> Vec<T> {
        let mut out: Vec<T> = Vec::new();
        for x in v {
            if !out.contains(x) {
                out.push(*x);
            }
        }
        out
    }

    /// The consumers of the sweep, librdkafka's then Java's.
    pub fn apis(&self) -> Vec<Api> {
        let clients = self.opts.client.clients();
        let mut v = Vec::new();
        if clients.contains(&Client::Librdkafka) {
            v.extend(Self::once(&self.opts.api).into_iter().map(|a| match a {
                LibrdkafkaApi::Poll => Api::Poll,
                LibrdkafkaApi::Tuned => Api::Tuned,
            }));
        }
        if clients.contains(&Client::Java) {
            v.extend(
                Self::once(&self.opts.group_protocol)
                    .into_iter()
                    .map(|g| match g {
                        GroupProtocol::Classic => Api::Classic,
                        GroupProtocol::Consumer => Api::Consumer,
                    }),
            );
        }
        v
    }

    /// Messages prefilled for a size.
    pub fn messages(&self, broker: &Broker, size: u64) -> u64 {
        let mb = self.opts.prefill_mb.unwrap_or(if broker.is_mock() {
            9 * PARTITIONS as u64
        } else {
            600
        });
        (mb * 1_000_000 / size).max(1000)
    }

    fn kind(broker: &Broker) -> PayloadKind {
        // The mock keeps only 5 MiB per partition: compressible text with lz4 holds more.
        if broker.is_mock() {
            PayloadKind::Text
        } else {
            PayloadKind::Random
        }
    }
}

impl Probe for ConsumerClients {
    type Point = Point;
    type Figures = Figures;
    type Setup<'c> = Setup<'c>;
    const NAME: &'static str = NAME;

    fn common(&self) -> &CommonArgs {
        &self.opts.common
    }

    fn clients(&self) -> Vec<Client> {
        self.opts.client.clients()
    }

    fn own_core(&self) -> Option<usize> {
        self.opts.own_core
    }

    fn check(&self) -> Result<()> {
        if self.opts.sizes.is_empty() || self.opts.instances.is_empty() || self.apis().is_empty() {
            return Err(ProbeError::Usage(
                "--sizes, --instances and the client's --api or --group-protocol need a value"
                    .into(),
            ));
        }
        if self.opts.own_core.is_some() && self.opts.instances.iter().any(|&k| k > 1) {
            return Err(ProbeError::Usage(
                "--own-core gives one limiting thread a cpu of its own: with --instances K > 1 \
                 the K instances' threads would share it (run --instances 1)"
                    .into(),
            ));
        }
        Ok(())
    }

    fn points(&self, _broker: &Broker) -> Vec<Point> {
        let mut v = Vec::new();
        for &size_bytes in &Self::once(&self.opts.sizes) {
            for &k in &Self::once(&self.opts.instances) {
                for api in self.apis() {
                    v.push(Point {
                        size_bytes,
                        api,
                        instances: k as usize,
                    });
                }
            }
        }
        v
    }

    fn applies(&self, client: Client, p: &Point) -> bool {
        p.api.client() == client
    }

    fn label(&self, p: &Point) -> String {
        let k = if p.instances > 1 {
            format!("-x{}", p.instances)
        } else {
            String::new()
        };
        format!("{}-{}B{k}", p.api.name(), p.size_bytes)
    }

    fn validate(&self, broker: &Broker, points: &[Point]) -> Result<()> {
        for p in points
            .iter()
            .filter(|p| p.api.client() == Client::Librdkafka)
        {
            broker.validate(&librdkafka::settings(p.api, "kgap.validate"))?;
        }
        Ok(())
    }

    fn prepare<'c>(&self, cx: &'c Context, result: &mut ProbeResult<Figures>) -> Result<Setup<'c>> {
        let broker = &cx.broker;
        let kind = Self::kind(broker);
        let compression = if broker.is_mock() { "lz4" } else { "none" };
        let mut topics = Vec::new();
        let mut prefills = serde_json::Map::new();
        for &size in &Self::once(&self.opts.sizes) {
            let pool = Pool::new(size as usize, kind);
            if result.payload.is_none() {
                result.payload = Some(pool.info());
            }
            if self.clients().contains(&Client::Java) {
                let java = crate::kit::java::pool_sha256(cx.java()?, size as usize, kind)?;
                if java != pool.sha256_hex() {
                    return Err(ProbeError::Kafka(format!(
                        "the Java companion's {size} B payload pool differs from the Rust kit's"
                    )));
                }
            }
            result.notes.push(format!(
                "{size} B: payload pool SHA-256 {} ({kind}, {} payloads)",
                pool.sha256_hex(),
                pool.count()
            ));
            let messages = self.messages(broker, size);
            let topic = broker.create_topic(NAME, PARTITIONS)?;
            result.topics.push(topic.name.clone());
            cx.progress(&format!(
                "topic {} ({PARTITIONS} partitions): prefilling {messages} × {size} B {kind} \
                 messages ({compression} compression)",
                topic.name
            ));
            let pre = produce::prefill(
                broker,
                &topic.name,
                PARTITIONS,
                &pool,
                messages,
                compression,
                &|l| cx.progress(l),
            )?;
            crate::kit::consumer_topic::check_retained(broker, &topic, messages)?;
            cx.progress(&format!("prefill done in {:.1} s", pre.seconds));
            if let Ok(v) = serde_json::to_value(&pre) {
                prefills.insert(format!("{size}"), v);
            }
            topics.push((size, topic, messages));
        }
        result.prefill = Some(serde_json::Value::Object(prefills));
        Ok(Setup { topics })
    }

    fn run(
        &self,
        cx: &Context,
        setup: &Setup<'_>,
        client: Client,
        p: &Point,
        dir: &Path,
    ) -> Result<Option<Figures>> {
        let (topic, messages) = setup.topic(p.size_bytes)?;
        let own = |threads| self.opts.own_core.map(|cpu| OwnCore { cpu, threads });
        match client {
            Client::Librdkafka => librdkafka::run(
                cx,
                topic,
                messages,
                p,
                self.opts.duration,
                own(librdkafka::LIMITING_THREADS),
            ),
            Client::Java => java::run(
                cx,
                topic,
                messages,
                p,
                self.opts.duration,
                dir,
                own(java::LIMITING_THREADS),
            ),
        }
    }

    fn describe(&self, f: &Figures) -> String {
        let (role, cores) = f
            .threads
            .iter()
            .filter_map(|r| r.cores.first().map(|c| (r.role.as_str(), *c)))
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .unwrap_or(("-", 0.0));
        format!(
            "{}, {:.1} MB/s, busiest {role} {}, {} CPU s/M",
            units::msgs_per_s(f.msgs_per_s),
            f.mb_per_s,
            units::cores(cores),
            format_args!("{:.2}", f.cpu_s_per_million)
        )
    }

    fn window_s(&self, f: &Figures) -> Option<f64> {
        Some(f.window_s)
    }

    fn verdicts(&self, sweep: &Sweep<Self>) -> Vec<Verdict> {
        evidence::verdicts(sweep)
    }

    fn headline(&self, sweep: &Sweep<Self>) -> String {
        let sizes: Vec<String> = Self::once(&self.opts.sizes)
            .iter()
            .map(|s| format!("{s} B"))
            .collect();
        format!(
            "one topic per size ({}), {PARTITIONS} partitions, read from the start by every \
             consumer; {} cores on this machine",
            sizes.join(", "),
            sweep.result.placement.machine_cores
        )
    }

    fn render(&self, sweep: &Sweep<Self>) -> String {
        render::render(sweep)
    }

    fn not_measured(&self, broker: &Broker) -> Vec<String> {
        let mut v = vec![
            "end-to-end latency (throughput only)".to_string(),
            "a consumer group's joins and commits: every consumer assign()s every partition \
             from the start, and commits nothing"
                .to_string(),
            "Java's GC and compiler threads one by one (their sums are roles gc and jit; the \
             rest of the JVM's CPU is role jvm); the heap's first touch (pre-touched at the \
             JVM's start) and the JIT's first compiles (a whole read of the topic before \
             the run)"
                .to_string(),
            "CPU of threads that exited inside the window".to_string(),
        ];
        if broker.is_mock() {
            v.push(
                "Apache Kafka's per-request cost, and Java: the broker was librdkafka's \
                 in-process mock, lz4-compressed text (the mock keeps 5 MiB per partition)"
                    .to_string(),
            );
        }
        v
    }

    fn notes(&self, _broker: &Broker) -> Vec<String> {
        vec![format!(
            "poll: librdkafka's defaults (fetch.queue.backoff.ms 1000, queued.min.messages \
             100000); tuned: the batch API at {TUNED_BATCH} per call with fetch.queue.backoff.ms=\
             {TUNED_BACKOFF_MS}; Java: kafka-clients' defaults (max.poll.records 500, \
             receive.buffer.bytes 64 KB) but group.protocol; with K instances each client \
             reads every partition, and the window closes when the first has read all"
        )]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn probe(args: &[&str]) -> ConsumerClients {
        let mut argv = vec![NAME];
        argv.extend_from_slice(args);
        ConsumerClients::new(Options::try_parse_from(argv).unwrap())
    }

    #[test]
    fn each_client_runs_its_own_consumers_once_each() {
        let p = probe(&["--client", "both", "--api", "tuned,tuned,poll"]);
        assert_eq!(
            p.apis(),
            vec![Api::Tuned, Api::Poll, Api::Classic, Api::Consumer]
        );
        assert!(p.applies(
            Client::Java,
            &Point {
                size_bytes: 100,
                api: Api::Classic,
                instances: 1
            }
        ));
        assert!(!p.applies(
            Client::Java,
            &Point {
                size_bytes: 100,
                api: Api::Tuned,
                instances: 1
            }
        ));
        assert_eq!(probe(&[]).apis(), vec![Api::Poll, Api::Tuned]);
        assert_eq!(
            probe(&["--client", "java", "--group-protocol", "consumer"]).apis(),
            vec![Api::Consumer]
        );
        let p = probe(&["--sizes", "100", "--instances", "1,2"]);
        assert_eq!(
            p.label(&Point {
                size_bytes: 100,
                api: Api::Tuned,
                instances: 2
            }),
            "tuned-100B-x2"
        );
    }

    #[test]
    fn own_core_runs_one_instance_a_point() {
        assert_eq!(probe(&["--own-core", "1"]).own_core(), Some(1));
        assert!(probe(&["--own-core", "1"]).check().is_ok());
        let e = probe(&["--own-core", "1", "--instances", "1,2"])
            .check()
            .unwrap_err();
        assert!(e.to_string().contains("would share it"), "{e}");
        assert_eq!(probe(&[]).own_core(), None);
    }

    #[test]
    fn bad_lists_are_refused_by_the_parser() {
        for bad in [
            &["--sizes", "100,,1024"][..],
            &["--sizes", "4"][..],
            &["--instances", "0"][..],
            &["--instances", "65"][..],
            &["--api", "fast"][..],
            &["--group-protocol", "classic,"][..],
        ] {
            let mut argv = vec![NAME];
            argv.extend_from_slice(bad);
            assert!(Options::try_parse_from(argv).is_err(), "{bad:?}");
        }
    }
}
