//! probe-request-ceiling's options (clap derive), the profiles of librdkafka's knobs, and the
//! probe itself.

use crate::kit::cli::{parse_duration, CommonArgs};
use crate::kit::java;
use crate::kit::payload::PayloadKind;
use serde::Serialize;
use std::time::Duration;

/// Which librdkafka values the knobs not swept take.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Profile {
    /// librdkafka's defaults for every knob the probe does not sweep.
    Native,
    /// The seed benchmark's Java-like values (max.in.flight 5, batch.num.messages 1000000, …).
    Matched,
}

const ABOUT: &str = "\
Reproduces Gap 1 of the post: the producer that would not go faster.

librdkafka 2.12.1 sends one partition's batch per ProduceRequest, and a Kafka broker serves a
connection's requests one at a time, so with small batches the broker's fixed cost per request
sets the ceiling, whatever the partitions, linger or in-flight window (the post: ~240k × 1 KB
msg/s in 15.6 KB requests ≈ 65 µs each). The probe sweeps partitions × batch.size, reads
ProduceRequests/s, bytes and partition batches per request from librdkafka's statistics and the
cores of the producing thread and rdk:broker from /proc, hands a short debug=protocol capture to
analyze-protocol-log, and the findings catalogue decides: HOLDS when, with 3 reps or more, the
rate at the smallest batch.size is flat across two or more partition counts (0.8x-1.25x), every
request is one partition's full batch, a larger batch.size gains at least 1.5x, and no client
thread is near a full core. Without --brokers it runs on librdkafka's in-process mock cluster
and says so.

--controls adds librdkafka points with the knobs the post tried first at the smallest
batch.size (gap1-negative-controls: none should move the rate). --client both adds the Java
companion at the same points (each-at-defaults, each-at-best: the same sweep, each client at
its own defaults and at its best), and --java-fixes adds Java's two fixes at the largest
batch.size (java-large-batch-copy: Java slows past its peak while its network thread's user
CPU per GB rises).";

const AFTER: &str = "\
exit status: 0 measured (the verdict says whether the gap held), 1 the run failed, 2 bad
usage or a configuration librdkafka refused, 130 interrupted (what was measured is printed).

examples:
  probe-request-ceiling                          # 1,6 partitions × 16K-1M, mock
  probe-request-ceiling --brokers 127.0.0.1:9092 --out rc   # Kafka; files kept
  probe-request-ceiling --batch-size 16384,131072,1048576   # three sizes
  probe-request-ceiling --profile matched        # the seed's Java-like values
  probe-request-ceiling -X linger.ms=50 -X acks=all   # knobs that did not help
  probe-request-ceiling --brokers 127.0.0.1:9092 --client both   # and Java
  probe-request-ceiling --brokers 127.0.0.1:9092 --controls   # in-flight, Nagle, …
  probe-request-ceiling --brokers 127.0.0.1:9092 --client java --partitions 6 \\
      --batch-size 16384,131072,1048576 --java-fixes   # Java's curve and fixes";

#[derive(Debug, Clone, clap::Parser)]
#[command(
    name = "probe-request-ceiling",
    version = crate::kit::build_info::version(),
    about = "Is this producer bound by the broker's cost per ProduceRequest?",
    long_about = ABOUT,
    after_help = AFTER
)]
pub struct Options {
    /// batch.size values to sweep, in bytes (comma-separated).
    #[arg(
        long,
        value_name = "BYTES[,…]",
        value_delimiter = ',',
        default_value = "16384,65536,262144,1048576",
        value_parser = clap::value_parser!(u64).range(1..=i32::MAX as u64)
    )]
    pub batch_size: Vec<u64>,

    /// Partition counts to sweep (comma-separated; each run has its own topic). The rule
    /// needs two or more: with one, "flat across partitions" is true by construction.
    #[arg(
        long,
        value_name = "N[,…]",
        value_delimiter = ',',
        default_value = "1,6",
        value_parser = clap::value_parser!(i32).range(1..=10_000)
    )]
    pub partitions: Vec<i32>,

    /// native: librdkafka's defaults for every knob not swept; matched: the seed's Java-like
    /// values (max.in.flight 5, batch.num.messages 1000000, …).
    #[arg(long, value_enum, default_value_t = Profile::Native)]
    pub profile: Profile,

    /// Payload bytes per message.
    #[arg(long, default_value_t = 1024, value_parser = clap::value_parser!(u64).range(1..=10_485_760))]
    pub size: u64,

    /// Payload kind: random (the post's) or text.
    #[arg(long, default_value = "random")]
    pub kind: PayloadKind,

    /// Payloads in the pool (default: the seed's, min(16384, 64 MiB / size)). A pool of 1
    /// sends one cache-hot payload as rdkafka_performance does (scripts/bench-harness-producer);
    /// the seed's 16 MiB pool makes librdkafka's copy of each payload wait on memory.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=16_777_216))]
    pub pool_messages: Option<u64>,

    /// Measured window of each run, after the warmup (e.g. 3s, 10s).
    #[arg(long, default_value = "3s", value_parser = parse_duration)]
    pub duration: Duration,

    /// Messages sent and acknowledged before each window.
    #[arg(long, default_value_t = 200_000)]
    pub warmup_messages: u64,

    /// rust: librdkafka (the gap); java: kgap's Java companion (kafka-clients 4.3.1) at the
    /// same points; both: side by side. Java needs --brokers and a JDK 17+ with Maven.
    #[arg(long, value_enum, default_value_t = java::Client::Rust)]
    pub client: java::Client,

    /// Skip the short debug=protocol run analyzed by analyze-protocol-log.
    #[arg(long)]
    pub no_diagnose: bool,

    /// Java's two fixes for large batches as extra Java points at the largest batch.size
    /// (most partitions): send.buffer.bytes=-1, max.request.size=1100000, and both (finding
    /// java-large-batch-copy; the post: 630k → 875k, 922k, 984k msg/s at 1 MB).
    #[arg(long)]
    pub java_fixes: bool,

    /// The knobs the post tried first, as extra librdkafka points at the smallest
    /// batch.size (most partitions): max.in.flight=5, socket.nagle.disable=true,
    /// queue.buffering.backpressure.threshold=100 (finding gap1-negative-controls: none
    /// should move the rate). Needs --profile native.
    #[arg(long)]
    pub controls: bool,

    #[command(flatten)]
    pub common: CommonArgs,
}

/// The probe.
pub struct RequestCeiling {
    pub opts: Options,
}

impl RequestCeiling {
    pub fn new(opts: Options) -> RequestCeiling {
        RequestCeiling { opts }
    }
}
