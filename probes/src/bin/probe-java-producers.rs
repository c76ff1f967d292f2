//! probe-java-producers: do K Java producers in one JVM collapse under GC, and does a bounded
//! buffer.memory stop it?

use clap::Parser;
use kgap_probes::cli::{
    finish, parse_duration, parse_list_u64, parse_property, progress_printer, usage_exit,
    CommonArgs,
};
use kgap_probes::interrupt;
use kgap_probes::java::parse_size;
use kgap_probes::java_producers::{self, Options};
use std::time::Duration;

const ABOUT: &str = "\
Reproduces the post's \"producer that collapsed at K=16\" with the Java client.

K KafkaProducer instances (kafka-clients 4.3.1) run in one JVM, one sending thread each, and
send 100 B records as fast as they can. Each keeps up to buffer.memory (32 MB by default) of
unsent records, with a few small heap objects per record; when the network threads fall
behind, that backlog is live data, fills the heap, and GC takes the CPU the network threads
needed. The post saw GC take 37% of the window at K=16 on 16 vCPUs, and buffer.memory=2 MB
per producer fix it. The probe sweeps K and buffer.memory, reads GC from the JVM's MXBeans
and from the run's own GC log (analyze-gc-log), and says where it collapses and whether the
bound removes it. The post's machine scaled to this one: the heap is its 2 GB per 16 vCPUs
times the cores (256m on 2 cores), and the K sweep passes K = the cores, as its K=16 was its
vCPUs (a quiet 2-core machine collapses at K=2).

The Java side is kgap's companion (probes/java/Companion.java), built on first use by
scripts/java-companion (needs a JDK 17+ and Maven; jars from Maven Central). It needs a
real Kafka broker (--brokers; a local one: scripts/kafka up): librdkafka's embedded mock
cluster closes the Java client's connection right after ApiVersions.";

const AFTER: &str = "\
exit status: 0 measured (the verdict says whether the collapse happened and the bound fixed
it), 1 the run failed, 2 bad usage, no --brokers, no JDK, or a setting kafka-clients refused, 130
interrupted (what was measured is printed).

examples:
  probe-java-producers --brokers 127.0.0.1:9092          # K=1,2,4,8,16 × default,2M buffer.memory,
                                                        # heap 128m per core (the post's 2g / 16)
  probe-java-producers --brokers 127.0.0.1:9092 --producers 16 --heap 2g --reps 1
                                                        # the post's point (on 16 vCPUs)
  probe-java-producers --brokers kafka:9092 -J linger.ms=20 --out results/jp
                                                        # keep every run's gc.log, result.json";

#[derive(Debug, Parser)]
#[command(name = "probe-java-producers", version, about = "Do K Java producers in one JVM collapse under GC, and does a bounded buffer.memory stop it?", long_about = ABOUT, after_help = AFTER)]
struct Cli {
    /// K values: producer instances in one JVM (one thread and one connection each).
    /// Default: 1, 2, 4, … up to 4× the cores and at least the post's 16 (1,2,4,8,16 on 2
    /// cores).
    #[arg(long, value_name = "K[,…]")]
    producers: Option<String>,

    /// buffer.memory per producer: `default` (kafka-clients' 32 MB) and/or bounded sizes
    /// (2M, 512k, bytes).
    #[arg(long, value_name = "SIZE[,…]", default_value = "default,2M")]
    buffer_memory: String,

    /// The JVM's heap (-Xms and -Xmx). Default: the post's heap per vCPU (2 GB on 16) times
    /// this machine's cores, at least 256m (256m on 2 cores): sending rates, and so the
    /// backlog, scale with the cores, so the heap that holds it must too.
    #[arg(long)]
    heap: Option<String>,

    /// Partitions of each run's topic (records go round robin, as in the seed benchmark).
    #[arg(long, default_value_t = 6, value_parser = clap::value_parser!(i32).range(1..=10_000))]
    partitions: i32,

    /// Payload bytes per message (the post's scaling runs: 100).
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u64).range(1..=1_048_576))]
    size: u64,

    /// Measured window of each run, after the warmup. The backlog needs seconds to fill the
    /// heap: on a quiet 2-core machine K=2 collapsed in 5 of 5 reps with 10 s windows, in
    /// about 3 of 4 with 5 s and in none with 2 s. The default sweep takes about 6 minutes.
    #[arg(long, default_value = "10s", value_parser = parse_duration)]
    duration: Duration,

    /// Messages each producer sends and flushes before the window.
    #[arg(long, default_value_t = 10_000)]
    warmup_messages: u64,

    /// kafka-clients producer property, applied last (repeatable): -J linger.ms=20.
    /// (-X is librdkafka's, used for the probe's own topic management.)
    #[arg(short = 'J', value_name = "KEY=VALUE", value_parser = parse_property)]
    java_property: Vec<(String, String)>,

    #[command(flatten)]
    common: CommonArgs,
}

/// 1, 2, 4, … up to 4× the cores, and on to 16: past the core count is where the post's
/// collapse began, and on 2 cores K=8 does not yet collapse (GC 5–10% of a 2 s window, the
/// backlog still draining) while the post's K=16 does.
fn cores() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get())
}

fn default_producers() -> String {
    let top = (4 * cores() as u64).max(16);
    let mut ks = vec![1u64];
    while ks[ks.len() - 1] * 2 <= top {
        ks.push(ks[ks.len() - 1] * 2);
    }
    ks.iter().map(u64::to_string).collect::<Vec<_>>().join(",")
}

fn main() {
    let cli = Cli::parse();
    interrupt::install();
    interrupt::name_this_thread("app");
    let usage = |msg: String| -> ! { usage_exit("probe-java-producers", &msg) };
    let producers: Vec<u32> = parse_list_u64(&cli.producers.unwrap_or_else(default_producers))
        .unwrap_or_else(|e| usage(format!("--producers: {e}")))
        .into_iter()
        .map(|k| {
            if (1..=256).contains(&k) {
                k as u32
            } else {
                usage("--producers values must be 1..256".into())
            }
        })
        .collect();
    let buffer_memory: Vec<Option<u64>> = cli
        .buffer_memory
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| {
            if s == "default" {
                None
            } else {
                Some(parse_size(s).unwrap_or_else(|e| usage(format!("--buffer-memory: {e}"))))
            }
        })
        .collect();
    if buffer_memory.is_empty() {
        usage("--buffer-memory needs at least one value (default, 2M, …)".into());
    }
    let heap = cli
        .heap
        .unwrap_or_else(|| java_producers::default_heap(cores()));
    if parse_size(&heap).is_err() {
        usage(format!("--heap {heap:?} is not a JVM size (e.g. 512m, 2g)"));
    }
    let opts = Options {
        producers,
        buffer_memory,
        heap,
        partitions: cli.partitions,
        size: cli.size as usize,
        window: cli.duration,
        warmup_messages: cli.warmup_messages,
        java_properties: cli.java_property,
        common: cli.common,
    };
    let progress = progress_printer("probe-java-producers", opts.common.quiet);
    finish(
        "probe-java-producers",
        opts.common.json,
        java_producers::run(&opts, &progress),
        java_producers::render_text,
    );
}
