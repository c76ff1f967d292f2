//! probe-gzip-batch: what does batch.size mean for a compressed librdkafka batch?

use clap::Parser;
use kgap_probes::cli::{
    finish, parse_duration, parse_list_u64, progress_printer, usage_exit, CommonArgs,
};
use kgap_probes::gzip_batch::{self, Codec, Options};
use kgap_probes::interrupt;
use kgap_probes::java::Client;
use kgap_probes::payload::PayloadKind;
use std::time::Duration;

const ABOUT: &str = "\
Reproduces \"gzip: not the same batch\" from the post.

At batch.size 16 KB the post's Java producer sent 33.9k msg/s of gzip-compressed 1 KB text at a
ratio of 5.39, librdkafka 46.4k at 4.70. librdkafka's batch.size limits a batch's uncompressed
input; Java closes a batch when its estimated compressed size reaches batch.size, so its batch
holds several times more input, which zlib compresses better and more slowly. The probe sweeps
batch.size × compression.level on word-list text, reads messages and wire bytes per batch from
librdkafka's statistics, and reports msg/s, input and wire bytes per batch, the ratio and the
cores of the broker thread that compresses. --java-equivalent BYTES prints the librdkafka
batch.size with the same input per batch as a Java batch.size of BYTES; --client both runs
kafka-clients 4.3.1 (kgap's Java companion) at the same points and measures a Java batch's input
beside librdkafka's. Without --brokers it runs on librdkafka's in-process mock cluster and says
so (the Java client needs --brokers).";

const AFTER: &str = "\
exit status: 0 measured (the verdict says whether the trade showed), 1 the run failed, 2 bad
usage, a codec this librdkafka was built without, or a configuration librdkafka refused, 130
interrupted (what was measured is printed).

examples:
  probe-gzip-batch                                     # gzip, 16K,32K,64K,88K × level default,1, mock
  probe-gzip-batch --brokers 127.0.0.1:9092 --out results/gz
                                                       # real broker; JSON, CSV, two SVG charts, logs
  probe-gzip-batch --java-equivalent 16384             # librdkafka batch.size matching Java's 16 KB
  probe-gzip-batch --batch-size 16384,90112 --level -1 # the post's two librdkafka points
  probe-gzip-batch --codec lz4                         # the same sweep with another codec
  probe-gzip-batch --brokers 127.0.0.1:9092 --client both --batch-size 3000,16384 --level -1
                                                       # Java and librdkafka at the same batch.size";

#[derive(Debug, Parser)]
#[command(name = "probe-gzip-batch", version, about = "What does batch.size mean for a compressed librdkafka batch?", long_about = ABOUT, after_help = AFTER)]
struct Cli {
    /// compression.type (a codec this librdkafka was built without is exit 2).
    #[arg(long, value_enum, default_value_t = Codec::Gzip)]
    codec: Codec,

    /// batch.size values to sweep, in bytes (each at most message.max.bytes).
    #[arg(
        long,
        value_name = "BYTES[,…]",
        default_value = "16384,32768,65536,90112"
    )]
    batch_size: String,

    /// compression.level values to sweep (-1: the codec's default, 6 for gzip).
    #[arg(
        long,
        value_name = "N[,…]",
        default_value = "-1,1",
        allow_hyphen_values = true
    )]
    level: String,

    /// Partitions of each run's topic (round robin; the post's baseline: 6).
    #[arg(long, default_value_t = 6, value_parser = clap::value_parser!(i32).range(1..=10_000))]
    partitions: i32,

    /// Payload bytes per message.
    #[arg(long, default_value_t = 1024, value_parser = clap::value_parser!(u64).range(1..=10_485_760))]
    size: u64,

    /// Payload kind: text (the post's gzip runs: word-list text) or random.
    #[arg(long, default_value = "text")]
    kind: PayloadKind,

    /// Measured window of each run, after the warmup (e.g. 3s, 10s).
    #[arg(long, default_value = "3s", value_parser = parse_duration)]
    duration: Duration,

    /// Messages sent and acknowledged before each window.
    #[arg(long, default_value_t = 20_000)]
    warmup_messages: u64,

    /// A Java batch.size to translate: prints the librdkafka batch.size whose input per batch
    /// matches it at the measured ratio (a Java batch's input ≈ BYTES × ratio).
    #[arg(long, value_name = "BYTES", value_parser = clap::value_parser!(u64).range(1..=2_147_483_647))]
    java_equivalent: Option<u64>,

    /// rust: librdkafka (the probe's subject); java: kgap's Java companion (kafka-clients
    /// 4.3.1) at the same points; both: side by side. Java needs --brokers and a JDK 17+ with
    /// Maven; -X settings apply to librdkafka only.
    #[arg(long, value_enum, default_value_t = Client::Rust)]
    client: Client,

    #[command(flatten)]
    common: CommonArgs,
}

fn parse_levels(s: &str) -> Result<Vec<i32>, String> {
    let v: Result<Vec<i32>, _> = s
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(str::parse::<i32>)
        .collect();
    match v {
        Ok(v) if !v.is_empty() && v.iter().all(|l| (-1..=12).contains(l)) => Ok(v),
        _ => Err(format!(
            "expected a comma-separated list of levels -1..12, got {s:?}"
        )),
    }
}

fn main() {
    let cli = Cli::parse();
    interrupt::install();
    interrupt::name_this_thread("app");
    let usage = |msg: String| -> ! { usage_exit("probe-gzip-batch", &msg) };
    let batch_sizes =
        parse_list_u64(&cli.batch_size).unwrap_or_else(|e| usage(format!("--batch-size: {e}")));
    // librdkafka caps a batch at message.max.bytes: a batch.size above it would not be swept.
    let max_msg: u64 = cli
        .common
        .property
        .iter()
        .rev()
        .find(|(k, _)| k == "message.max.bytes")
        .map(|(_, v)| {
            v.parse()
                .unwrap_or_else(|_| usage(format!("-X message.max.bytes={v}: not a number")))
        })
        .unwrap_or(1_000_000);
    if let Some(b) = batch_sizes.iter().find(|&&b| b == 0 || b > max_msg) {
        usage(format!(
            "--batch-size {b}: must be between 1 and message.max.bytes ({max_msg}; raise it with -X message.max.bytes=N)"
        ));
    }
    let levels = parse_levels(&cli.level).unwrap_or_else(|e| usage(format!("--level: {e}")));
    let opts = Options {
        client: cli.client,
        codec: cli.codec,
        batch_sizes,
        levels,
        partitions: cli.partitions,
        size: cli.size as usize,
        kind: cli.kind,
        window: cli.duration,
        warmup_messages: cli.warmup_messages,
        java_equivalent: cli.java_equivalent,
        common: cli.common,
    };
    let progress = progress_printer("probe-gzip-batch", opts.common.quiet);
    finish(
        "probe-gzip-batch",
        opts.common.json,
        gzip_batch::run(&opts, &progress),
        gzip_batch::render_text,
    );
}
