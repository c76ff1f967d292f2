//! probe-inflight-latency: does librdkafka's unlimited in-flight window queue requests?

use clap::Parser;
use kgap_probes::cli::{
    finish, parse_duration, parse_list_u64, progress_printer, usage_exit, CommonArgs,
};
use kgap_probes::inflight_latency::{self, Options};
use kgap_probes::interrupt;
use kgap_probes::java::Client;
use std::time::Duration;

const ABOUT: &str = "\
Reproduces the post's latency finding: librdkafka's in-flight window.

At linger.ms=0 and 50k msg/s, librdkafka's default max.in.flight (1000000) gave a send-to-ack
p50/p99 of 14.1/26.4 ms; max.in.flight=5 gave 0.47/1.28 ms at the same rate. With an unlimited
window a request goes out as soon as a message or two is ready, and the broker serves a
connection's requests one at a time, so tiny requests queue. The probe paces a producer at
fixed rates over linger.ms × max.in.flight, measures send-to-ack (delivery reports) and
end-to-end latency (a consumer in the same process reads the payload's timestamp), and reads
ProduceRequests/s and messages per batch from librdkafka's statistics. It says when a rate was
not sustained. --client both runs kafka-clients 4.3.1 (kgap's Java companion, the same pacing
and payloads, a consumer in the same JVM) at the same points. Without --brokers it runs on
librdkafka's in-process mock cluster and says so (the Java client needs --brokers).";

const AFTER: &str = "\
exit status: 0 measured (the verdict says whether the gap held), 1 the run failed, 2 bad
usage or a configuration librdkafka refused, 130 interrupted (what was measured is printed).

examples:
  probe-inflight-latency                                  # 1k,10k,50k/s × linger 0,5 × default,5
  probe-inflight-latency --rates 50000 --linger-ms 0      # the post's worst case only
  probe-inflight-latency --brokers 127.0.0.1:9092 --out results/il
                                                          # real broker; JSON, CSV, CDF charts
  probe-inflight-latency --max-in-flight 1000000,5,1      # add a window of one
  probe-inflight-latency --brokers 127.0.0.1:9092 --client both --rates 1000,50000
                                                          # librdkafka and kafka-clients";

#[derive(Debug, Parser)]
#[command(name = "probe-inflight-latency", version, about = "Does librdkafka's unlimited in-flight window queue requests at the broker?", long_about = ABOUT, after_help = AFTER)]
struct Cli {
    /// Target rates in messages per second.
    #[arg(long, value_name = "N[,…]", default_value = "1000,10000,50000")]
    rates: String,

    /// linger.ms values.
    #[arg(long, value_name = "MS[,…]", default_value = "0,5")]
    linger_ms: String,

    /// max.in.flight.requests.per.connection values (1000000 is librdkafka's default).
    #[arg(long, value_name = "N[,…]", default_value = "1000000,5")]
    max_in_flight: String,

    /// Partitions of each run's topic.
    #[arg(long, default_value_t = 6, value_parser = clap::value_parser!(i32).range(1..=1000))]
    partitions: i32,

    /// Payload bytes per message (at least 8: the send timestamp).
    #[arg(long, default_value_t = 1024, value_parser = clap::value_parser!(u64).range(8..=10_485_760))]
    size: u64,

    /// Warmup at the target rate before each window.
    #[arg(long, default_value = "1s", value_parser = parse_duration)]
    warmup: Duration,

    /// Measured window of each run.
    #[arg(long, default_value = "3s", value_parser = parse_duration)]
    duration: Duration,

    /// rust: librdkafka (the probe's subject); java: kgap's Java companion (kafka-clients
    /// 4.3.1, its e2e mode) at the same points; both: side by side. Java needs --brokers and
    /// a JDK 17+ with Maven; -X settings apply to librdkafka only.
    #[arg(long, value_enum, default_value_t = Client::Rust)]
    client: Client,

    #[command(flatten)]
    common: CommonArgs,
}

fn main() {
    let cli = Cli::parse();
    interrupt::install();
    interrupt::name_this_thread("app");
    let usage = |msg: String| -> ! { usage_exit("probe-inflight-latency", &msg) };
    let list =
        |s: &str, what: &str| parse_list_u64(s).unwrap_or_else(|e| usage(format!("{what}: {e}")));
    let rates = list(&cli.rates, "--rates");
    if rates.iter().any(|&r| r == 0 || r > 10_000_000) {
        usage("--rates must be between 1 and 10000000 msg/s".into());
    }
    let max_in_flight = list(&cli.max_in_flight, "--max-in-flight");
    if max_in_flight.contains(&0) {
        usage("--max-in-flight must be at least 1".into());
    }
    let opts = Options {
        client: cli.client,
        rates,
        linger_ms: list(&cli.linger_ms, "--linger-ms"),
        max_in_flight,
        partitions: cli.partitions,
        size: cli.size as usize,
        warmup: cli.warmup,
        window: cli.duration,
        common: cli.common,
    };
    let progress = progress_printer("probe-inflight-latency", opts.common.quiet);
    finish(
        "probe-inflight-latency",
        opts.common.json,
        inflight_latency::run(&opts, &progress),
        inflight_latency::render_text,
    );
}
