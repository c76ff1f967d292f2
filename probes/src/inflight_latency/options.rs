//! The probe's command line (its clap options) and the probe itself.

use crate::kit::cli::{parse_duration, CommonArgs};
use crate::kit::java::Client as ClientChoice;
use std::time::Duration;

const ABOUT: &str = "\
Reproduces the post's latency findings: librdkafka's in-flight window, and its linger.

At linger.ms=0 and 50k msg/s, librdkafka's default max.in.flight (1000000) gave a send-to-ack
p50/p99 of 14.1/26.4 ms; max.in.flight=5 gave 0.47/1.28 ms at the same rate: with an unlimited
window a request goes out as soon as a message or two is ready and requests queue at the
broker. At linger.ms=5 and 1k msg/s librdkafka's p50 was 5.1 ms (it lingers per partition)
and Java's 2.8 ms (per broker). The probe paces a producer at fixed rates over linger.ms x
max.in.flight, each run on a topic of its own, and measures send-to-ack (librdkafka's own
per-message latency, at a delivery report served as it arrives), end-to-end latency (a
consumer in the same process reads the payload's send stamp) and, from librdkafka's
statistics, ProduceRequests/s, messages per request and the requests awaiting a response.
The findings catalogue decides, over 3 reps at least: the p99 gap with the queue behind it at
a rate both windows sustained, and the wait linger adds to the end-to-end median against a
linger.ms=0 run. --client both runs kafka-clients 4.3.1 (kgap's Java companion) at the same
points. Without --brokers it runs on librdkafka's in-process mock cluster and says so.";

const AFTER: &str = "\
exit status: 0 measured (the verdicts say whether the findings held), 1 the run failed, 2 bad
usage or a configuration librdkafka refused, 130 interrupted (what was measured is printed).

examples:
  probe-inflight-latency                     # the default sweep, on the mock
  probe-inflight-latency --rates 50000 --linger-ms 0   # the post's worst case
  probe-inflight-latency --brokers 127.0.0.1:9092 --out il   # Kafka, files kept
  probe-inflight-latency --rates 1000 --max-in-flight 5   # the linger findings
  probe-inflight-latency --max-in-flight 1000000,5,1      # add a window of one
  probe-inflight-latency --brokers 127.0.0.1:9092 --client both   # and Java";

#[derive(Debug, Clone, clap::Parser)]
#[command(
    name = "probe-inflight-latency",
    version = crate::kit::build_info::version(),
    about = "Does librdkafka's in-flight window queue requests, and does it linger per partition?",
    long_about = ABOUT,
    after_help = AFTER
)]
pub struct Options {
    /// Target rates in messages per second.
    #[arg(long, value_name = "N[,N…]", value_delimiter = ',', default_value = "1000,10000,50000",
          value_parser = clap::value_parser!(u64).range(1..=10_000_000))]
    pub rates: Vec<u64>,

    /// linger.ms values (0 is the in-flight finding's; a value above 0 beside 0 is the
    /// linger findings').
    #[arg(long, value_name = "MS[,MS…]", value_delimiter = ',', default_value = "0,5",
          value_parser = clap::value_parser!(u64).range(0..=900_000))]
    pub linger_ms: Vec<u64>,

    /// max.in.flight.requests.per.connection values (1000000 is librdkafka's default).
    #[arg(long, value_name = "N[,N…]", value_delimiter = ',', default_value = "1000000,5",
          value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub max_in_flight: Vec<u64>,

    /// Partitions of each run's topic (the post's 6).
    #[arg(long, default_value_t = 6, value_parser = clap::value_parser!(i32).range(1..=1000))]
    pub partitions: i32,

    /// Payload bytes per message (at least 8: the send timestamp).
    #[arg(long, default_value_t = 1024, value_parser = clap::value_parser!(u64).range(8..=10_485_760))]
    pub size: u64,

    /// Warmup at the target rate before each window (Java's is at least 3 s, for the JIT).
    #[arg(long, default_value = "1s", value_parser = parse_duration)]
    pub warmup: Duration,

    /// Measured window of each run.
    #[arg(long, default_value = "3s", value_parser = parse_duration)]
    pub duration: Duration,

    /// rust: librdkafka (the probe's subject); java: kgap's Java companion (kafka-clients
    /// 4.3.1, its e2e mode) at the same points; both: side by side. Java needs --brokers and
    /// a JDK 17+ with Maven; -X settings apply to librdkafka only.
    #[arg(long, value_enum, default_value_t = ClientChoice::Rust)]
    pub client: ClientChoice,

    #[command(flatten)]
    pub common: CommonArgs,
}

/// The probe.
pub struct InflightLatency {
    pub opts: Options,
}

impl InflightLatency {
    pub fn new(opts: Options) -> InflightLatency {
        InflightLatency { opts }
    }
}
