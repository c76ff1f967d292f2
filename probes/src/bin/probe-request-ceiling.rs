//! probe-request-ceiling: is this producer bound by the broker's cost per ProduceRequest?

use clap::Parser;
use kgap_probes::cli::{
    finish, parse_duration, parse_list_u64, progress_printer, usage_exit, CommonArgs,
};
use kgap_probes::interrupt;
use kgap_probes::payload::PayloadKind;
use kgap_probes::request_ceiling::{self, Client, Options, Profile};
use std::time::Duration;

const ABOUT: &str = "\
Reproduces Gap 1 of the post: the producer that would not go faster.

librdkafka 2.12.1 sends one partition's batch per ProduceRequest, and a Kafka broker serves a
connection's requests one at a time, so with small batches the broker's fixed cost per request
sets the ceiling, whatever the partitions, linger or in-flight window (the post: ~240k × 1 KB
msg/s in 15.6 KB requests ≈ 65 µs each). The probe sweeps batch.size × partitions, reads
ProduceRequests/s and bytes per request from librdkafka's statistics, names the broker cost
per request and the batch.size where throughput stops rising, and hands a short debug=protocol
capture to analyze-protocol-log. Without --brokers it runs on librdkafka's in-process mock
cluster and says so.";

const AFTER: &str = "\
exit status: 0 measured (the verdict says whether the gap held), 1 the run failed, 2 bad
usage or a configuration librdkafka refused, 130 interrupted (what was measured is printed).

examples:
  probe-request-ceiling                                # 16K,64K,256K,1M × 1,6 partitions, mock
  probe-request-ceiling --brokers 127.0.0.1:9092 --out results/rc
                                                       # real broker; JSON, CSV, SVG chart, logs
  probe-request-ceiling --batch-size 16384,32768,65536,131072,262144,524288,1048576 --partitions 6
                                                       # the post's seven-point sweep
  probe-request-ceiling --profile matched              # the seed's Java-like librdkafka values
  probe-request-ceiling -X linger.ms=50 -X acks=all    # the knobs that did not help in the post
  probe-request-ceiling --brokers 127.0.0.1:9092 --client both
                                                       # librdkafka and kafka-clients side by side";

#[derive(Debug, Parser)]
#[command(name = "probe-request-ceiling", version, about = "Is this producer bound by the broker's cost per ProduceRequest?", long_about = ABOUT, after_help = AFTER)]
struct Cli {
    /// batch.size values to sweep, in bytes.
    #[arg(
        long,
        value_name = "BYTES[,…]",
        default_value = "16384,65536,262144,1048576"
    )]
    batch_size: String,

    /// Partition counts to sweep (each run has its own topic).
    #[arg(long, value_name = "N[,…]", default_value = "1,6")]
    partitions: String,

    /// native: librdkafka's defaults for every knob not swept; matched: the seed's Java-like
    /// values (max.in.flight 5, batch.num.messages 1000000, …).
    #[arg(long, value_enum, default_value_t = Profile::Native)]
    profile: Profile,

    /// Payload bytes per message.
    #[arg(long, default_value_t = 1024, value_parser = clap::value_parser!(u64).range(1..=10_485_760))]
    size: u64,

    /// Payload kind: random (the post's) or text.
    #[arg(long, default_value = "random")]
    kind: PayloadKind,

    /// Payloads in the pool (default: the seed's, min(16384, 64 MiB / size)). A pool of 1
    /// sends one cache-hot payload as rdkafka_performance does (scripts/bench-harness-producer);
    /// the seed's 16 MiB pool makes librdkafka's copy of each payload wait on memory.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=16_777_216))]
    pool_messages: Option<u64>,

    /// Measured window of each run, after the warmup (e.g. 3s, 10s).
    #[arg(long, default_value = "3s", value_parser = parse_duration)]
    duration: Duration,

    /// Messages sent and acknowledged before each window.
    #[arg(long, default_value_t = 200_000)]
    warmup_messages: u64,

    /// rust: librdkafka (the gap); java: kgap's Java companion (kafka-clients 4.3.1) at the
    /// same points; both: side by side. Java needs --brokers and a JDK 17+ with Maven.
    #[arg(long, value_enum, default_value_t = Client::Rust)]
    client: Client,

    /// Skip the short debug=protocol run analyzed by analyze-protocol-log.
    #[arg(long)]
    no_diagnose: bool,

    #[command(flatten)]
    common: CommonArgs,
}

fn main() {
    let cli = Cli::parse();
    interrupt::install();
    interrupt::name_this_thread("app");
    let usage = |msg: String| -> ! { usage_exit("probe-request-ceiling", &msg) };
    let batch_sizes =
        parse_list_u64(&cli.batch_size).unwrap_or_else(|e| usage(format!("--batch-size: {e}")));
    if batch_sizes.iter().any(|&b| b == 0 || b > i32::MAX as u64) {
        usage("--batch-size values must be between 1 and 2147483647".into());
    }
    let partitions: Vec<i32> = parse_list_u64(&cli.partitions)
        .unwrap_or_else(|e| usage(format!("--partitions: {e}")))
        .into_iter()
        .map(|p| {
            if (1..=10_000).contains(&p) {
                p as i32
            } else {
                usage("--partitions must be 1..10000".into())
            }
        })
        .collect();
    let opts = Options {
        client: cli.client,
        batch_sizes,
        partitions,
        profile: cli.profile,
        size: cli.size as usize,
        kind: cli.kind,
        window: cli.duration,
        warmup_messages: cli.warmup_messages,
        pool_messages: cli.pool_messages.map(|n| n as usize),
        diagnose: !cli.no_diagnose,
        common: cli.common,
    };
    let progress = progress_printer("probe-request-ceiling", opts.common.quiet);
    finish(
        "probe-request-ceiling",
        opts.common.json,
        request_ceiling::run(&opts, &progress),
        request_ceiling::render_text,
    );
}
