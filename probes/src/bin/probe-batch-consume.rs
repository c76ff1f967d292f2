//! probe-batch-consume: which thread limits this consumer — poll(), the batch API, or
//! librdkafka's broker thread — and what a naive batch wrapper does to latency.

use clap::Parser;
use kgap_probes::batch::DEFAULT_BATCH;
use kgap_probes::batch_consume::{self, parse_apis, Options};
use kgap_probes::cli::{
    finish, parse_duration, parse_list_u64, progress_printer, usage_exit, CommonArgs,
};
use kgap_probes::interrupt;
use std::time::Duration;

const ABOUT: &str = "\
Reproduces the post's chain of consumer limits, and its batch wrapper's latency bug.

Throughput mode (the default) prefills a topic of its own and consumes it with poll() (one
message per call), with librdkafka's batch API under the fixed policy (take what is queued,
block only when nothing is) and under the naive one (wait up to --naive-timeout for a full
batch), each at fetch.queue.backoff.ms 1000 and 10. It reports msg/s, MB/s and cores of the
consume thread and of librdkafka's broker thread, and names the saturated one: the backoff
first (naps), then the application thread with poll(), then rdk:broker with the batch API (the
post: ~0.94 cores at ~2.1M msg/s).

Latency mode (--rate 1000,10000) paces a producer in the same process and measures end-to-end
latency with each API: the naive wrapper lands near p50 = min(batch/rate, timeout)/2 and p99 =
that cycle, the fixed policy near poll(). Without --brokers it runs on librdkafka's in-process
mock cluster and says so.";

const AFTER: &str = "\
exit status: 0 measured (the verdict says whether the finding held), 1 the run failed, 2 bad
usage or a configuration librdkafka refused, 130 interrupted (what was measured is printed).

examples:
  probe-batch-consume                                   # the chain, embedded broker
  probe-batch-consume --brokers 127.0.0.1:9092 --out results/bc
  probe-batch-consume --size 1024 --api poll,fixed --backoff-ms 10
  probe-batch-consume --rate 1000,10000                 # the naive wrapper's latency
  probe-batch-consume --json | jq .verdict";

#[derive(Debug, Parser)]
#[command(name = "probe-batch-consume", version, about = "Which thread limits this consumer: poll(), the batch API, or librdkafka's broker thread?", long_about = ABOUT, after_help = AFTER)]
struct Cli {
    /// Consume APIs to compare: poll, fixed (batch API, the post's fix), naive (batch API
    /// waiting for a full batch, the post's bug).
    #[arg(long, value_name = "API[,…]", default_value = "poll,fixed,naive")]
    api: String,

    /// fetch.queue.backoff.ms values (throughput mode).
    #[arg(long, value_name = "MS[,MS…]", default_value = "1000,10")]
    backoff_ms: String,

    /// Messages per batch call.
    #[arg(long, default_value_t = DEFAULT_BATCH as u64, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    batch: u64,

    /// How long the naive policy waits for a full batch.
    #[arg(long, value_parser = parse_duration, default_value = "100ms")]
    naive_timeout: Duration,

    /// Latency mode: producer rates to pace at (msg/s), e.g. 1000,10000.
    #[arg(long, value_name = "MSG/S[,…]")]
    rate: Option<String>,

    /// Messages prefilled (throughput mode). Default: 2000000 on a real broker; 90000 per
    /// partition on the mock (it keeps only 5 MiB per partition).
    #[arg(long)]
    messages: Option<u64>,

    /// Payload bytes per message (the post: 100; also 1024 and 10240).
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u64).range(1..=10_485_760))]
    size: u64,

    /// Partitions of the probe's topic. Default: 6 on a real broker, 24 on the mock (it keeps
    /// ~90k messages per partition; more partitions make runs long enough to measure).
    #[arg(long, value_parser = clap::value_parser!(i32).range(1..=1000))]
    partitions: Option<i32>,

    /// Cap on each throughput run's measured window; a run also ends when every prefilled
    /// message has been consumed.
    #[arg(long, value_parser = parse_duration, default_value = "5s")]
    duration: Duration,

    /// Latency mode: warmup at the rate before each window.
    #[arg(long, value_parser = parse_duration, default_value = "1s")]
    warmup: Duration,

    /// Latency mode: the measured window of each run.
    #[arg(long, value_parser = parse_duration, default_value = "3s")]
    window: Duration,

    /// Path of librdkafka's examples/rdkafka_performance: run it (-C -G … -B <batch>) on the
    /// same topic, alternating with the probe's own runs, to check that the probe's consume
    /// loop is not the limit (target ≥ 0.97x). scripts/bench-batch-consume-harness builds it.
    #[arg(long, value_name = "PATH")]
    rdkafka_performance: Option<std::path::PathBuf>,

    #[command(flatten)]
    common: CommonArgs,
}

fn main() {
    let cli = Cli::parse();
    interrupt::install();
    interrupt::name_this_thread("main");
    let usage = |msg: String| -> ! { usage_exit("probe-batch-consume", &msg) };
    let apis = parse_apis(&cli.api, cli.batch as usize, cli.naive_timeout)
        .unwrap_or_else(|e| usage(format!("--api: {e}")));
    let backoff_ms =
        parse_list_u64(&cli.backoff_ms).unwrap_or_else(|e| usage(format!("--backoff-ms: {e}")));
    let rates = match &cli.rate {
        Some(r) => parse_list_u64(r).unwrap_or_else(|e| usage(format!("--rate: {e}"))),
        None => Vec::new(),
    };
    if rates.contains(&0) {
        usage("--rate values must be above 0".into());
    }
    if cli.messages.is_some_and(|m| m < 10) {
        usage("--messages must be at least 10".into());
    }
    if cli.naive_timeout.is_zero() {
        usage("--naive-timeout must be above 0 (0 is the fixed policy's first call)".into());
    }
    if let Some(p) = &cli.rdkafka_performance {
        if !p.is_file() {
            usage(format!(
                "--rdkafka-performance: {} is not a file",
                p.display()
            ));
        }
        if cli.rate.is_some() {
            usage("--rdkafka-performance compares throughput; it cannot go with --rate".into());
        }
    }
    let opts = Options {
        apis,
        backoff_ms,
        messages: cli.messages,
        size: cli.size as usize,
        partitions: cli.partitions,
        duration: Some(cli.duration),
        rates,
        warmup: cli.warmup,
        window: cli.window,
        rdkafka_performance: cli.rdkafka_performance,
        common: cli.common,
    };
    let progress = progress_printer("probe-batch-consume", opts.common.quiet);
    finish(
        "probe-batch-consume",
        opts.common.json,
        batch_consume::run(&opts, &progress),
        batch_consume::render_text,
    );
}
