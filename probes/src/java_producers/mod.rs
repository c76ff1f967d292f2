//! `probe-java-producers`: the post's "producer that collapsed at K=16", on this machine.
//!
//! K KafkaProducer instances in one JVM (one sending thread each) send 100 B records as fast
//! as they can. Each producer keeps up to buffer.memory (32 MB by default) of unsent batches,
//! and for every record in them a handful of small objects (callback, future, headers, thunk):
//! once the network threads fall behind, that backlog is live data, survives young
//! collections and fills the heap; GC then eats the CPU the network threads needed. The post
//! saw it at K=16 on 16 vCPUs (GC 37% of the window, full GCs ~1/s) and fixed it with
//! buffer.memory=2 MB per producer. The probe sweeps K and buffer.memory, one JVM per run,
//! reads GC from the JVM's MXBeans and from its own unified GC log (`kgap_analyzers::gc`), and
//! the catalogue's rule ([`kgap_analyzers::findings::java_gc_collapse`]) decides.

mod figures;
mod render;

pub use figures::{figures, figures_out_of_memory, point_evidence, read_gc_log, Figures};

use crate::kit::broker::Broker;
use crate::kit::cli::{parse_duration, parse_property, CommonArgs};
use crate::kit::error::{ProbeError, Result};
use crate::kit::java::{self, Jvm};
use crate::kit::payload::{PayloadKind, Pool};
use crate::kit::{Context, Probe, Sweep};
use kgap_analyzers::findings::probe_result::{Client, ProbeResult};
use kgap_analyzers::findings::{java_gc_collapse as rule, Verdict};
use kgap_analyzers::vocab::units;
use serde::{Serialize, Serializer};
use std::path::Path;
use std::time::Duration;

/// The post's heap per vCPU: 2 GB for K=16 on 16 vCPUs.
pub const POST_HEAP_MB_PER_CORE: usize = 2048 / 16;

const ABOUT: &str = "\
Reproduces the post's \"producer that collapsed at K=16\" with the Java client.

K KafkaProducer instances (kafka-clients 4.3.1) run in one JVM, one sending thread each, and
send 100 B records as fast as they can. Each keeps up to buffer.memory (32 MB by default) of
unsent records, with a few small heap objects per record; when the network threads fall
behind, that backlog is live data, fills the heap, and GC takes the CPU the network threads
needed. The post saw GC take 37% of the window at K=16 on 16 vCPUs, and buffer.memory=2 MB
per producer fix it. The probe sweeps K and buffer.memory, reads GC from the JVM's MXBeans
and from each run's own GC log (analyze-gc-log), and the findings catalogue decides: a rep
collapsed when GC took >= 20% of its window or of its worst second while young GCs left the
heap >= 80% full (or the JVM ran out of memory); HOLDS when, at the smallest K reaching the
cores (the post's K=16 on its 16 vCPUs), the default buffer.memory collapsed in most reps
and a ~2 MB bound in none (3 reps at least). The heap is the post's 2 GB per 16 vCPUs times
the cores (256m on 2 cores).

The Java side is kgap's companion (probes/java/Companion.java), built on first use by
scripts/java-companion (needs a JDK 17+ and Maven; jars from Maven Central). It needs a
real Kafka broker (--brokers; a local one: scripts/kafka up): librdkafka's embedded mock
cluster closes the Java client's connection right after ApiVersions.";

const AFTER: &str = "\
exit status: 0 measured (the verdict says whether the collapse happened and the bound fixed
it), 1 the run failed, 2 bad usage, no --brokers, no JDK, or a setting kafka-clients
refused, 130 interrupted (what was measured is printed).

examples:
  probe-java-producers --brokers 127.0.0.1:9092              # K=1..16 x 32M,2M
  probe-java-producers --brokers 127.0.0.1:9092 --producers 2    # K = the cores
  probe-java-producers --brokers 127.0.0.1:9092 --heap 2g    # the post's heap
  probe-java-producers --brokers 127.0.0.1:9092 -J linger.ms=20  # a -J setting
  probe-java-producers --brokers 127.0.0.1:9092 --json | jq .verdicts  # JSON";

/// buffer.memory per producer: kafka-clients' default (32 MB) or a bound in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BufferMemory(pub Option<u64>);

fn parse_buffer_memory(s: &str) -> std::result::Result<BufferMemory, String> {
    match s.trim() {
        "default" => Ok(BufferMemory(None)),
        t => java::parse_size(t).map(|b| BufferMemory(Some(b))),
    }
}

fn parse_heap(s: &str) -> std::result::Result<String, String> {
    java::parse_size(s)
        .map(|_| s.trim().to_string())
        .map_err(|_| format!("{s:?} is not a JVM size (e.g. 512m, 2g)"))
}

#[derive(Debug, Clone, clap::Parser)]
#[command(
    name = "probe-java-producers",
    version = crate::kit::build_info::version(),
    about = "Do K Java producers in one JVM collapse under GC, and does a bounded \
             buffer.memory stop it?",
    long_about = ABOUT,
    after_help = AFTER
)]
pub struct Options {
    /// K values: producer instances in one JVM (one thread and one connection each).
    /// Default: 1, 2, 4, … up to 4× the cores and at least the post's 16.
    #[arg(long, value_name = "K[,K…]", value_delimiter = ',',
          value_parser = clap::value_parser!(u32).range(1..=256))]
    pub producers: Vec<u32>,

    /// buffer.memory per producer: `default` (kafka-clients' 32 MB) and/or bounds (2M, 512k,
    /// bytes).
    #[arg(long, value_name = "SIZE[,SIZE…]", value_delimiter = ',', default_value = "default,2M",
          value_parser = parse_buffer_memory)]
    pub buffer_memory: Vec<BufferMemory>,

    /// The JVM's heap (-Xms and -Xmx). Default: the post's heap per vCPU (2 GB on 16) times
    /// the cores, at least 256m: sending rates, and so the backlog, scale with the cores.
    #[arg(long, value_parser = parse_heap)]
    pub heap: Option<String>,

    /// Partitions of each run's topic (records go round robin, as in the seed benchmark).
    #[arg(long, default_value_t = 6, value_parser = clap::value_parser!(i32).range(1..=10_000))]
    pub partitions: i32,

    /// Payload bytes per message (the post's scaling runs: 100).
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u64).range(1..=1_048_576))]
    pub size: u64,

    /// Measured window of each run, after the warmup. The backlog needs seconds to fill the
    /// heap: on a quiet 2-core machine K=2 collapsed in 5 of 5 reps with 10 s windows, in
    /// about 3 of 4 with 5 s and in none with 2 s.
    #[arg(long, default_value = "10s", value_parser = parse_duration)]
    pub duration: Duration,

    /// Messages each producer sends and flushes before the window.
    #[arg(long, default_value_t = 10_000)]
    pub warmup_messages: u64,

    /// kafka-clients producer property, applied last (repeatable): -J linger.ms=20.
    #[arg(short = 'J', value_name = "KEY=VALUE", value_parser = parse_property)]
    pub java_property: Vec<(String, String)>,

    #[command(flatten)]
    pub common: CommonArgs,
}

/// The probe.
pub struct JavaProducers {
    pub opts: Options,
}

/// One point: K producers at one buffer.memory.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
pub struct Point {
    /// None: kafka-clients' default (32 MB), written `"default"`.
    #[serde(rename = "buffer.memory", serialize_with = "default_or_bytes")]
    pub buffer_memory: Option<u64>,
    pub producers: u32,
}

fn default_or_bytes<S: Serializer>(b: &Option<u64>, s: S) -> std::result::Result<S::Ok, S::Error> {
    match b {
        Some(b) => s.serialize_u64(*b),
        None => s.serialize_str("default"),
    }
}

/// What every run shares: the payload pool's digest (the companion's is checked against it)
/// and the load average when the sweep began.
pub struct Setup {
    sha256: String,
    load_before: Option<String>,
}

/// Cores this process (and the JVMs it starts) may run on: its affinity.
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get())
}

/// The default heap on a machine with `cores`: the post's heap per vCPU times the cores, at
/// least 256m. Senders, and so the backlog they build, scale with the cores; a fixed heap
/// would hide the collapse on a big machine and fake it on a small one.
pub fn default_heap(cores: usize) -> String {
    format!("{}m", (POST_HEAP_MB_PER_CORE * cores).max(256))
}

/// 1, 2, 4, … up to 4× the cores and at least 16: past the core count is where the post's
/// collapse began.
pub fn default_producers(cores: usize) -> Vec<u32> {
    let top = (4 * cores as u32).max(16);
    let mut ks = vec![1u32];
    while ks[ks.len() - 1] * 2 <= top {
        ks.push(ks[ks.len() - 1] * 2);
    }
    ks
}

/// The producer settings of one run; `-J` comes after these.
pub fn producer_settings(buffer_memory: Option<u64>) -> Vec<(String, String)> {
    let mut v = vec![
        // The seed's baseline producer: acks=1, idempotence off (linger.ms 5 and batch.size
        // 16384 are kafka-clients 4.3.1's defaults already).
        ("acks".to_string(), "1".to_string()),
        ("enable.idempotence".to_string(), "false".to_string()),
    ];
    if let Some(b) = buffer_memory {
        v.push(("buffer.memory".to_string(), b.to_string()));
    }
    v
}

impl JavaProducers {
    pub fn new(opts: Options) -> JavaProducers {
        JavaProducers { opts }
    }

    /// The heap every JVM gets.
    pub fn heap(&self) -> String {
        self.opts
            .heap
            .clone()
            .unwrap_or_else(|| default_heap(cores()))
    }

    fn producers(&self) -> Vec<u32> {
        if self.opts.producers.is_empty() {
            default_producers(cores())
        } else {
            self.opts.producers.clone()
        }
    }
}

impl Probe for JavaProducers {
    type Point = Point;
    type Figures = Figures;
    type Setup<'c> = Setup;
    const NAME: &'static str = "probe-java-producers";

    fn common(&self) -> &CommonArgs {
        &self.opts.common
    }

    fn clients(&self) -> Vec<Client> {
        vec![Client::Java]
    }

    fn points(&self, _broker: &Broker) -> Vec<Point> {
        let mut v = Vec::new();
        for b in &self.opts.buffer_memory {
            for k in self.producers() {
                let p = Point {
                    buffer_memory: b.0,
                    producers: k,
                };
                if !v.contains(&p) {
                    v.push(p);
                }
            }
        }
        v
    }

    fn label(&self, p: &Point) -> String {
        format!(
            "bm{}-k{}",
            p.buffer_memory
                .map_or("default".to_string(), |b| b.to_string()),
            p.producers
        )
    }

    fn prepare<'c>(&self, cx: &'c Context, result: &mut ProbeResult<Figures>) -> Result<Setup> {
        let pool = Pool::new(self.opts.size as usize, PayloadKind::Random);
        result.payload = Some(pool.info());
        let java = cx.java()?;
        result
            .notes
            .insert(0, render::java_note(self, &java.version));
        let load_before = java::load_average();
        cx.progress(&format!(
            "{}; load average {}",
            java.version,
            load_before.as_deref().unwrap_or("?")
        ));
        Ok(Setup {
            sha256: pool.sha256_hex(),
            load_before,
        })
    }

    fn run(
        &self,
        cx: &Context,
        setup: &Setup,
        client: Client,
        p: &Point,
        dir: &Path,
    ) -> Result<Option<Figures>> {
        if client != Client::Java {
            return Err(ProbeError::Usage(
                "probe-java-producers runs the Java client only".into(),
            ));
        }
        let mut settings: Vec<(String, String)> = vec![(
            "bootstrap.servers".into(),
            cx.broker.bootstrap().to_string(),
        )];
        settings.extend(producer_settings(p.buffer_memory));
        settings.extend(self.opts.java_property.iter().cloned());
        let run = java::run_point(
            cx.java()?,
            &cx.broker,
            Self::NAME,
            self.opts.partitions,
            dir,
            &Jvm::heap(&self.heap()),
            &[
                ("mode", "produce".into()),
                ("size", self.opts.size.to_string()),
                ("kind", "random".into()),
                ("producers", p.producers.to_string()),
                ("warmup", self.opts.warmup_messages.to_string()),
                (
                    "seconds",
                    format!("{:.3}", self.opts.duration.as_secs_f64()),
                ),
            ],
            &settings,
            self.opts.duration + Duration::from_secs(120),
            &setup.sha256,
        );
        match run {
            Ok(Some((run, topic))) => Ok(Some(figures(
                &run.result,
                &read_gc_log(&run.gc_log)?,
                Some(topic),
            ))),
            Ok(None) => Ok(None),
            // The heap ran out for good: the finding's end state, not a failed probe.
            Err(ProbeError::JavaOutOfMemory(msg)) => {
                cx.progress(&format!(
                    "{}: out of memory, counted as collapsed at 0 msg/s ({msg})",
                    self.label(p)
                ));
                Ok(Some(figures_out_of_memory(&read_gc_log(
                    &dir.join("gc.log"),
                )?)))
            }
            Err(e) => Err(e),
        }
    }

    fn describe(&self, f: &Figures) -> String {
        if f.gc.out_of_memory {
            return "OutOfMemoryError: collapsed".into();
        }
        format!(
            "{}, p99 {}, GC {} of the window ({} of its worst second), heap after young GC {}: {}",
            units::msgs_per_s(f.msgs_per_s),
            f.send_to_ack_ms_p99.map_or("?".into(), units::ms),
            units::percent(f.gc.gc_share_window),
            f.gc.gc_share_worst_second
                .map_or("?".into(), units::percent),
            f.gc.heap_after_young_share
                .map_or("?".into(), units::percent),
            match f.collapsed {
                Some(true) => "collapsed",
                Some(false) => "clean",
                None => "heap not measured",
            }
        )
    }

    fn run_topics(&self, f: &Figures) -> Vec<String> {
        f.topic.iter().cloned().collect()
    }

    fn window_s(&self, f: &Figures) -> Option<f64> {
        (!f.gc.out_of_memory).then_some(f.window_s)
    }

    fn after(&self, _cx: &Context, setup: &Setup, sweep: &mut Sweep<Self>) -> Result<()> {
        sweep
            .result
            .notes
            .push(java::load_note(setup.load_before.as_deref()));
        Ok(())
    }

    fn verdicts(&self, sweep: &Sweep<Self>) -> Vec<Verdict> {
        vec![rule::decide(&figures::evidence(self, sweep))]
    }

    fn headline(&self, _sweep: &Sweep<Self>) -> String {
        format!(
            "K Java producers in one JVM, {} B random messages, a {} heap, {} windows",
            self.opts.size,
            self.heap(),
            units::seconds(self.opts.duration.as_secs_f64())
        )
    }

    fn render(&self, sweep: &Sweep<Self>) -> String {
        render::table(sweep)
    }

    fn not_measured(&self, _broker: &Broker) -> Vec<String> {
        render::not_measured()
    }

    fn notes(&self, _broker: &Broker) -> Vec<String> {
        render::notes(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn opts(args: &[&str]) -> std::result::Result<Options, clap::Error> {
        let mut argv = vec!["probe-java-producers"];
        argv.extend_from_slice(args);
        Options::try_parse_from(argv)
    }

    #[test]
    fn default_heap_is_the_posts_heap_per_vcpu() {
        assert_eq!(default_heap(16), "2048m"); // the post's machine: its 2 GB
        assert_eq!(default_heap(2), "256m");
        assert_eq!(default_heap(1), "256m"); // the floor: the JVM and the pool need room
        assert_eq!(default_heap(64), "8192m");
    }

    #[test]
    fn default_producers_pass_the_cores_and_the_posts_16() {
        assert_eq!(default_producers(2), vec![1, 2, 4, 8, 16]);
        assert_eq!(default_producers(16), vec![1, 2, 4, 8, 16, 32, 64]);
    }

    #[test]
    fn lists_parse_and_bad_items_are_refused() {
        let o = opts(&["--producers", "2,16", "--buffer-memory", "default,512k"]).unwrap();
        assert_eq!(o.producers, vec![2, 16]);
        assert_eq!(
            o.buffer_memory,
            vec![BufferMemory(None), BufferMemory(Some(512 << 10))]
        );
        assert!(opts(&["--producers", "2,,4"]).is_err());
        assert!(opts(&["--producers", "0"]).is_err());
        assert!(opts(&["--buffer-memory", "2X"]).is_err());
        assert!(opts(&["--buffer-memory", "default,"]).is_err());
        assert!(opts(&["--heap", "lots"]).is_err());
        let p = JavaProducers::new(
            opts(&["--producers", "2", "--buffer-memory", "default,2M"]).unwrap(),
        );
        let points = p.points(&Broker::start(None, &[]).unwrap());
        assert_eq!(points.len(), 2);
        assert_eq!(p.label(&points[1]), "bm2097152-k2");
        let params = serde_json::to_value(points[0]).unwrap();
        assert_eq!(params["buffer.memory"], "default");
        assert_eq!(params["producers"], 2);
    }
}
