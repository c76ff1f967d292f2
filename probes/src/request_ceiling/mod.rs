//! `probe-request-ceiling`: Gap 1 of the post, the producer that would not go faster.
//!
//! librdkafka 2.12.1 puts exactly one partition's batch in each ProduceRequest, and a Kafka
//! broker serves one connection's requests one at a time. So a producer with small batches is
//! bound by the broker's fixed cost per request, whatever the partitions, linger or window:
//! the post saw ~240k × 1 KB msg/s in 15.6 KB requests, ~15.4k requests/s ≈ 65 µs each. The
//! probe sweeps partitions × batch.size, each run on a topic of its own, and reads
//! ProduceRequests/s, bytes and partition batches per request from librdkafka's statistics and
//! the cores of the producing thread and of rdk:broker from /proc. A last short run with
//! debug=protocol,msg is handed to analyze-protocol-log. The catalogue's rule
//! ([`kgap_analyzers::findings::request_ceiling`]) decides; `--client java|both` adds the
//! Java companion's rows, which never enter it: they decide java-large-batch-copy (with
//! `--java-fixes`), each-at-defaults and each-at-best; `--controls` adds the knobs the post
//! tried first (gap1-negative-controls).
//!
//! Here: the points, the debug=protocol pass and the Probe impl. Beside it: the options and
//! the probe (`options`), a point (`point`) and its knobs (`knob`), a run's figures
//! (`figures`), librdkafka's run (`librdkafka`), Java's (`java_side`), the catalogue's evidence
//! (`evidence`, `comparisons`), the report's text (`render`).

mod comparisons;
mod evidence;
mod figures;
mod java_side;
mod knob;
mod librdkafka;
mod options;
mod point;
mod render;

pub use evidence::evidence;
pub use figures::Figures;
pub use java_side::JavaFigures;
pub use knob::Knob;
pub use librdkafka::{producer_settings, LibrdkafkaFigures, ProtocolPass};
pub use options::{Options, Profile, RequestCeiling};
pub use point::Point;

use crate::kit::broker::Broker;
use crate::kit::cli::CommonArgs;
use crate::kit::error::{ProbeError, Result};
use crate::kit::payload::Pool;
use crate::kit::{Context, Probe, Sweep};
use kgap_analyzers::findings::probe_result::{Client, ProbeResult};
use kgap_analyzers::findings::request_ceiling as rule;
use kgap_analyzers::findings::Verdict;
use kgap_analyzers::vocab::svg::LineChart;
use kgap_analyzers::vocab::units;
use std::path::Path;
use std::time::Duration;

/// What every run shares: the payload pool (and its digest, which the Java side checks).
pub struct Setup {
    pool: Pool,
    sha256: String,
}

impl RequestCeiling {
    fn dedup<T: PartialEq + Copy>(v: &[T]) -> Vec<T> {
        let mut out = Vec::new();
        for &x in v {
            if !out.contains(&x) {
                out.push(x);
            }
        }
        out
    }

    /// The smallest batch.size and the most partitions: where the ceiling shows, and where
    /// the debug=protocol pass runs.
    fn ceiling_point(&self) -> Point {
        Point::plain(
            self.most_partitions(),
            self.opts.batch_size.iter().copied().min().unwrap_or(16384),
        )
    }

    fn most_partitions(&self) -> i32 {
        self.opts.partitions.iter().copied().max().unwrap_or(1)
    }

    /// The extra points: Java's fixes at the largest batch.size, librdkafka's controls at the
    /// smallest, both on the most partitions.
    fn knob_points(&self) -> Vec<Point> {
        let clients = self.clients();
        let mut v = Vec::new();
        if self.opts.java_fixes && clients.contains(&Client::Java) {
            let largest = self
                .opts
                .batch_size
                .iter()
                .copied()
                .max()
                .unwrap_or(1 << 20);
            v.extend(Knob::JAVA_FIXES.map(|k| Point {
                knob: Some(k),
                ..Point::plain(self.most_partitions(), largest)
            }));
        }
        if self.opts.controls && clients.contains(&Client::Librdkafka) {
            v.extend(Knob::CONTROLS.map(|k| Point {
                knob: Some(k),
                ..self.ceiling_point()
            }));
        }
        v
    }
}

impl Probe for RequestCeiling {
    type Point = Point;
    type Figures = Figures;
    type Setup<'c> = Setup;
    const NAME: &'static str = "probe-request-ceiling";

    fn common(&self) -> &CommonArgs {
        &self.opts.common
    }

    fn clients(&self) -> Vec<Client> {
        self.opts.client.clients()
    }

    fn check(&self) -> Result<()> {
        if self.opts.pool_messages.is_some() && self.clients().contains(&Client::Java) {
            return Err(ProbeError::Usage(
                "--pool-messages is for --client rust: the Java companion always builds the \
                 seed's pool, and both clients must send the same bytes"
                    .into(),
            ));
        }
        if self.opts.java_fixes && !self.clients().contains(&Client::Java) {
            return Err(ProbeError::Usage(
                "--java-fixes are points of the Java companion: run with --client java or both"
                    .into(),
            ));
        }
        if self.opts.controls && !self.clients().contains(&Client::Librdkafka) {
            return Err(ProbeError::Usage(
                "--controls are librdkafka's knobs: run with --client rust or both".into(),
            ));
        }
        if self.opts.controls && self.opts.profile == Profile::Matched {
            return Err(ProbeError::Usage(
                "--controls compare against librdkafka's defaults: the matched profile already \
                 sets max.in.flight=5 and socket.nagle.disable=true (use --profile native)"
                    .into(),
            ));
        }
        Ok(())
    }

    fn points(&self, _broker: &Broker) -> Vec<Point> {
        let batch_sizes = Self::dedup(&self.opts.batch_size);
        let mut v: Vec<Point> = Self::dedup(&self.opts.partitions)
            .into_iter()
            .flat_map(|partitions| {
                batch_sizes
                    .iter()
                    .map(move |&batch_size| Point::plain(partitions, batch_size))
            })
            .collect();
        v.extend(self.knob_points());
        v
    }

    fn applies(&self, client: Client, p: &Point) -> bool {
        p.knob.is_none_or(|k| k.client() == client)
    }

    fn label(&self, p: &Point) -> String {
        let mut s = format!("p{}-batch{}", p.partitions, p.batch_size);
        if let Some(k) = p.knob {
            s.push('-');
            s.push_str(k.slug());
        }
        s
    }

    fn validate(&self, broker: &Broker, points: &[Point]) -> Result<()> {
        if self.clients().contains(&Client::Librdkafka) {
            for b in Self::dedup(&points.iter().map(|p| p.batch_size).collect::<Vec<_>>()) {
                broker.validate(&producer_settings(self.opts.profile, b))?;
            }
            for p in points
                .iter()
                .filter(|p| self.applies(Client::Librdkafka, p))
            {
                if p.knob.is_some() {
                    let mut s = producer_settings(self.opts.profile, p.batch_size);
                    s.extend(
                        p.knob_settings()
                            .into_iter()
                            .map(|(k, v)| (k, v.to_string())),
                    );
                    broker.validate(&s)?;
                }
            }
        }
        Ok(())
    }

    fn prepare(&self, _cx: &Context, result: &mut ProbeResult<Figures>) -> Result<Setup> {
        let size = self.opts.size as usize;
        let pool = match self.opts.pool_messages {
            None => Pool::new(size, self.opts.kind),
            Some(n) => Pool::with_count(size, self.opts.kind, n as usize),
        };
        let sha256 = pool.sha256_hex();
        result.payload = Some(pool.info());
        Ok(Setup { pool, sha256 })
    }

    fn run(
        &self,
        cx: &Context,
        setup: &Setup,
        client: Client,
        p: &Point,
        dir: &Path,
    ) -> Result<Option<Figures>> {
        match client {
            Client::Librdkafka => {
                let spec = librdkafka::RunSpec {
                    profile: self.opts.profile,
                    warmup_messages: self.opts.warmup_messages,
                    window: self.opts.duration,
                    debug_protocol: false,
                };
                librdkafka::run_once(&cx.broker, &setup.pool, &spec, p, dir)
                    .map(|f| Some(Figures::Librdkafka(Box::new(f))))
            }
            Client::Java => java_side::run_once(cx, &self.opts, &setup.sha256, p, dir)
                .map(|f| f.map(Figures::Java)),
        }
    }

    fn describe(&self, f: &Figures) -> String {
        match f {
            Figures::Librdkafka(f) => format!(
                "{}, {} ProduceRequests/s of {}",
                units::msgs_per_s(f.window.msgs_per_s),
                f.produce_requests_per_s.map_or("?".into(), units::si),
                f.bytes_per_request.map_or("?".into(), units::bytes),
            ),
            Figures::Java(f) => format!("{} (Java)", units::msgs_per_s(f.msgs_per_s)),
        }
    }

    fn window_s(&self, f: &Figures) -> Option<f64> {
        Some(match f {
            Figures::Librdkafka(f) => f.window.window_s,
            Figures::Java(f) => f.window_s,
        })
    }

    fn run_topics(&self, f: &Figures) -> Vec<String> {
        vec![f.topic().to_string()]
    }

    fn after(&self, cx: &Context, setup: &Setup, sweep: &mut Sweep<Self>) -> Result<()> {
        if !self.opts.no_diagnose && self.clients().contains(&Client::Librdkafka) {
            let p = self.ceiling_point();
            let dir = cx.out.run_dir(
                &format!("diagnose-p{}-batch{}", p.partitions, p.batch_size),
                1,
            )?;
            cx.progress("a short debug=protocol run for analyze-protocol-log (not in the table)");
            let spec = librdkafka::RunSpec {
                profile: self.opts.profile,
                warmup_messages: self.opts.warmup_messages.min(20_000),
                // Two seconds: analyze-protocol-log's rate needs a complete second of log.
                window: Duration::from_secs(2),
                debug_protocol: true,
            };
            let pass = librdkafka::protocol_pass(cx, &setup.pool, &spec, &p, &dir)?;
            sweep.result.topics.push(pass.topic.clone());
            sweep
                .result
                .diagnoses
                .push(serde_json::to_value(&pass).expect("the protocol pass serializes"));
        }
        // A broker that stopped answering during a run, by name (the kit's own stall note
        // says only that the cluster did; the other connections' figures show they went on).
        let mut silent: Vec<String> = Vec::new();
        let kept = sweep.result.points.iter().flat_map(|p| {
            p.runs
                .iter()
                .enumerate()
                .map(move |(i, f)| (p.label.clone(), i as u32 + 1, f))
        });
        let set_aside = sweep.result.discarded.iter().filter_map(|d| {
            let label = sweep.result.points.get(d.point)?.label.clone();
            Some((label, d.rep, d.figures.as_ref()?))
        });
        for (label, rep, f) in kept.chain(set_aside) {
            if let Some(rdk) = f.librdkafka() {
                if let Some(s) = crate::kit::broker_figures::silent_brokers(&rdk.brokers) {
                    let on: Vec<&str> = rdk
                        .brokers
                        .iter()
                        .filter(|b| b.silent_s < crate::kit::broker_figures::SILENT_MIN_S)
                        .filter(|b| b.requests_per_s > 0.0)
                        .map(|b| b.broker.as_str())
                        .collect();
                    let others = if on.is_empty() {
                        "; no other connection carried requests".to_string()
                    } else {
                        format!("; {} went on", on.join(", "))
                    };
                    silent.push(format!("{label} rep {rep}: {s}{others}"));
                }
            }
        }
        sweep.result.warnings.extend(silent);
        Ok(())
    }

    fn verdicts(&self, sweep: &Sweep<Self>) -> Vec<Verdict> {
        use kgap_analyzers::findings::{
            each_at_best, each_at_defaults, gap1_negative_controls, java_large_batch_copy,
        };
        let clients = self.clients();
        let (rdk, java) = (
            clients.contains(&Client::Librdkafka),
            clients.contains(&Client::Java),
        );
        let mut v = vec![if rdk {
            rule::decide(&evidence(sweep))
        } else {
            Verdict::cannot_tell(
                &rule::FINDING,
                "librdkafka did not run (--client java): the finding is librdkafka's, and Java's \
                 rows never enter its rule",
            )
        }];
        if self.opts.controls {
            v.push(gap1_negative_controls::decide(
                &comparisons::negative_controls(sweep),
            ));
        }
        if java {
            v.push(java_large_batch_copy::decide(
                &comparisons::large_batch_copy(sweep),
            ));
        }
        if rdk && java {
            v.push(each_at_defaults::decide(&comparisons::at_defaults(sweep)));
            v.push(each_at_best::decide(&comparisons::at_best(sweep)));
        }
        v
    }

    fn headline(&self, sweep: &Sweep<Self>) -> String {
        render::headline(self, sweep)
    }

    fn render(&self, sweep: &Sweep<Self>) -> String {
        render::body(sweep)
    }

    fn charts(&self, sweep: &Sweep<Self>) -> Vec<(String, LineChart)> {
        vec![("request-ceiling.svg".into(), render::chart(sweep))]
    }

    fn not_measured(&self, broker: &Broker) -> Vec<String> {
        let mut v = vec![
            "latency (throughput runs measure how fast acks return, not how long a message waits)"
                .to_string(),
            "the broker's own CPU (only this process's threads are sampled)".to_string(),
            "messages still unacknowledged when the window closed (they are not counted)"
                .to_string(),
        ];
        if broker.is_mock() {
            v.push(
                "Apache Kafka's per-request cost: the broker was librdkafka's in-process mock, \
                 whose rdk:mock thread shares this machine's cores"
                    .to_string(),
            );
        }
        if self.clients().contains(&Client::Java) {
            v.push(
                "the Java companion's request sizes (it reports records per request, not \
                 bytes): its rows enter java-large-batch-copy, each-at-defaults and \
                 each-at-best, never request-ceiling's rule"
                    .to_string(),
            );
        }
        v
    }

    fn notes(&self, _broker: &Broker) -> Vec<String> {
        let mut v = vec![format!(
            "profile {}",
            match self.opts.profile {
                Profile::Native =>
                    "native: librdkafka's defaults for every knob not swept (acks=1 as the \
                     post's scenario)",
                Profile::Matched =>
                    "matched: the seed's Java-like values: linger.ms=5, max.in.flight=5, \
                     batch.num.messages=1000000, queue.buffering.max.kbytes=32768, \
                     socket.nagle.disable=true",
            }
        )];
        v.push(format!(
            "each run has its own topic (deleted after it), a warmup of {} messages fully \
             acknowledged, then a {:.1} s window counting acknowledged messages",
            self.opts.warmup_messages,
            self.opts.duration.as_secs_f64()
        ));
        for (k, val) in &self.opts.common.property {
            v.push(format!(
                "-X {k}={val} (applied last to librdkafka's producer)"
            ));
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn probe(args: &[&str]) -> RequestCeiling {
        let mut argv = vec!["probe-request-ceiling"];
        argv.extend_from_slice(args);
        RequestCeiling::new(Options::try_parse_from(argv).unwrap())
    }

    #[test]
    fn the_grid_is_partitions_by_batch_size_without_repeats() {
        let p = probe(&["--partitions", "1,6,6", "--batch-size", "16384,1048576"]);
        let broker = Broker::start(None, &[]).unwrap();
        let pts: Vec<(i32, u64)> = p
            .points(&broker)
            .iter()
            .map(|p| (p.partitions, p.batch_size))
            .collect();
        assert_eq!(pts, [(1, 16384), (1, 1048576), (6, 16384), (6, 1048576)]);
        assert_eq!(p.ceiling_point(), Point::plain(6, 16384));
    }

    #[test]
    fn fixes_and_controls_are_one_clients_points_beside_the_grid() {
        let p = probe(&[
            "--client",
            "both",
            "--partitions",
            "1,6",
            "--batch-size",
            "16384,1048576",
            "--java-fixes",
            "--controls",
        ]);
        let broker = Broker::start(None, &[]).unwrap();
        let pts = p.points(&broker);
        assert_eq!(pts.len(), 4 + 3 + 3);
        let extra: Vec<&Point> = pts.iter().filter(|p| p.knob.is_some()).collect();
        for x in &extra {
            let k = x.knob.unwrap();
            assert_eq!(x.partitions, 6);
            // Java's fixes at the largest batch.size, librdkafka's controls at the smallest.
            let want = if k.client() == Client::Java {
                1048576
            } else {
                16384
            };
            assert_eq!(x.batch_size, want, "{k:?}");
            assert!(p.applies(k.client(), x));
            let other = if k.client() == Client::Java {
                Client::Librdkafka
            } else {
                Client::Java
            };
            assert!(!p.applies(other, x));
        }
        assert_eq!(
            p.label(extra[0]),
            format!("p6-batch1048576-{}", extra[0].knob.unwrap().slug())
        );
        // The plain grid is what request-ceiling's rule reads.
        assert!(pts.iter().take(4).all(|p| p.knob.is_none()));
    }

    #[test]
    fn fixes_and_controls_need_their_client_and_the_native_profile() {
        let refused = |a: &[&str]| matches!(probe(a).check(), Err(ProbeError::Usage(_)));
        assert!(refused(&["--java-fixes"]));
        assert!(refused(&["--client", "java", "--controls"]));
        assert!(refused(&["--controls", "--profile", "matched"]));
        assert!(!refused(&["--controls"]));
        assert!(!refused(&["--client", "java", "--java-fixes"]));
    }

    #[test]
    fn bad_lists_are_refused_by_the_parser() {
        let argv = |k: &str, a: &str| Options::try_parse_from(["p", k, a]);
        assert!(argv("--batch-size", "16384,,65536").is_err());
        assert!(argv("--batch-size", "0").is_err());
        assert!(argv("--batch-size", "3000000000").is_err());
        assert!(argv("--partitions", "0").is_err());
        assert!(argv("--partitions", "six").is_err());
        assert!(argv("--client", "go").is_err());
    }

    #[test]
    fn a_java_pool_of_its_own_is_refused() {
        let p = probe(&["--client", "both", "--pool-messages", "1"]);
        assert!(matches!(p.check(), Err(ProbeError::Usage(_))));
        assert!(probe(&["--pool-messages", "1"]).check().is_ok());
    }

    #[test]
    fn figures_serialize_flat_for_the_csv_and_the_bench() {
        let j = Figures::Java(JavaFigures {
            messages: 10,
            window_s: 1.0,
            msgs_per_s: 10.0,
            mb_per_s: 0.01,
            cpu_s_per_million: 1.0,
            gc_time_ms: 0,
            records_per_request_avg: None,
            network_thread_cpu_s: None,
            network_thread_user_cpu_s: None,
            wire_bytes: None,
            network_user_cpu_s_per_gb: None,
            network_sys_cpu_s_per_gb: None,
            topic: "t".into(),
        });
        let v = serde_json::to_value(&j).unwrap();
        assert_eq!(v["msgs_per_s"], 10.0);
        assert_eq!(j.topic(), "t");
        assert!(j.librdkafka().is_none());
    }
}
