//! The probe's command line (its clap options, buffer.memory and heap values) and the probe
//! itself.

use super::cores::{cores, default_heap};
use crate::kit::cli::{parse_duration, parse_property, CommonArgs};
use crate::kit::java;
use std::time::Duration;

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
}
