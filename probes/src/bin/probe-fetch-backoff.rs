//! probe-fetch-backoff: does librdkafka's 1000 ms fetch queue backoff make this consumer nap?

use clap::Parser;
use kgap_probes::cli::{
    finish, parse_duration, parse_list_u64, progress_printer, usage_exit, CommonArgs,
};
use kgap_probes::fetch_backoff::{self, Options};
use kgap_probes::interrupt;
use kgap_probes::payload::PayloadKind;
use std::time::Duration;

const ABOUT: &str = "\
Reproduces Gap 2 of the post: a librdkafka consumer that takes naps.

When a partition's local queue reaches queued.min.messages (100000 by default), librdkafka stops
fetching it for fetch.queue.backoff.ms (1000 ms by default). With small messages the application
drains the queue in milliseconds and the fetcher sleeps for the rest of the second. The probe
prefills a topic of its own, consumes it with a BaseConsumer poll loop at each backoff value,
counts 'Fetch backoff … Local: Queue full' in its own debug=fetch log, finds the naps in the
per-second timeline, and prints a verdict. Without --brokers it runs on librdkafka's in-process
mock cluster and says so.";

const AFTER: &str = "\
exit status: 0 measured (the verdict says whether the gap held), 1 the run failed (broker
unreachable, topic not created), 2 bad usage or a configuration librdkafka refused,
130 interrupted (what was measured is still printed).

examples:
  probe-fetch-backoff --backoff-ms 10                 # default (1000) against 10 ms, embedded broker
  probe-fetch-backoff --backoff-ms 1000,100,10,0      # sweep four values
  probe-fetch-backoff --brokers 127.0.0.1:9092 --backoff-ms 10 --out results/fb
                                                      # a real broker; keep logs, stats, CSV
  probe-fetch-backoff -X queued.min.messages=1000000  # the post's other remedy
  probe-fetch-backoff --json --reps 5 | jq .verdict   # the result document";

#[derive(Debug, Parser)]
#[command(name = "probe-fetch-backoff", version, about = "Does the 1000 ms fetch queue backoff make this consumer nap?", long_about = ABOUT, after_help = AFTER)]
struct Cli {
    /// fetch.queue.backoff.ms values: one value is compared with librdkafka's default (1000);
    /// a comma-separated list is swept as given.
    #[arg(long, value_name = "MS[,MS…]", default_value = "10")]
    backoff_ms: String,

    /// Messages prefilled and consumed per run. Default: 2000000 on a real broker; 90000 per
    /// partition on the mock (it keeps only 5 MiB per partition). Either way the default run
    /// ends in under a minute on 2 cores.
    #[arg(long)]
    messages: Option<u64>,

    /// Payload bytes per message.
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u64).range(1..=10_485_760))]
    size: u64,

    /// Payload kind: random (the post's) or text (word list, compressible). Default: random on
    /// a real broker, text on the mock (which must keep a compressed prefill).
    #[arg(long)]
    kind: Option<PayloadKind>,

    /// Partitions of the probe's topic.
    #[arg(long, default_value_t = 6, value_parser = clap::value_parser!(i32).range(1..=1000))]
    partitions: i32,

    /// Cap on each run's measured window (e.g. 20s); by default a run ends when every
    /// prefilled message has been consumed.
    #[arg(long, value_parser = parse_duration)]
    duration: Option<Duration>,

    /// compression.type of the prefill only. Default: none on a real broker; gzip on the mock,
    /// which keeps only 5 MiB of batches per partition.
    #[arg(long, value_name = "CODEC")]
    prefill_compression: Option<String>,

    #[command(flatten)]
    common: CommonArgs,
}

fn main() {
    let cli = Cli::parse();
    interrupt::install();
    interrupt::name_this_thread("app");
    let usage = |msg: String| -> ! { usage_exit("probe-fetch-backoff", &msg) };
    let backoff_ms =
        parse_list_u64(&cli.backoff_ms).unwrap_or_else(|e| usage(format!("--backoff-ms: {e}")));
    if cli.messages.is_some_and(|m| m < 10) {
        usage("--messages must be at least 10".into());
    }
    let opts = Options {
        backoff_ms,
        messages: cli.messages,
        size: cli.size as usize,
        kind: cli.kind,
        partitions: cli.partitions,
        duration: cli.duration,
        prefill_compression: cli.prefill_compression,
        common: cli.common,
    };
    let progress = progress_printer("probe-fetch-backoff", opts.common.quiet);
    finish(
        "probe-fetch-backoff",
        opts.common.json,
        fetch_backoff::run(&opts, &progress),
        fetch_backoff::render_text,
    );
}
