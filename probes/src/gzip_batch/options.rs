//! The probe's command line (its clap options, the linger both clients use) and the probe itself.

use super::codec::Codec;
use crate::kit::cli::{parse_duration, CommonArgs};
use crate::kit::java::Client as ClientChoice;
use crate::kit::payload::PayloadKind;
use std::time::Duration;

/// linger.ms of both clients' producers (the post's baseline).
pub const LINGER_MS: u64 = 5;
/// librdkafka's default message.max.bytes: a batch is capped there.
pub const DEFAULT_MESSAGE_MAX_BYTES: u64 = 1_000_000;

const ABOUT: &str = "\
Reproduces \"gzip: not the same batch\" from the post.

At batch.size 16 KB the post's Java producer sent 33.9k msg/s of gzip-compressed 1 KB text at a
ratio of 5.39, librdkafka 46.4k at 4.70. librdkafka's batch.size limits a batch's uncompressed
input; kafka-clients checks it against the batch's estimated compressed size, and closes a
batch on linger.ms too. zlib compresses a longer input better and more slowly. The probe sweeps
batch.size × compression.level on word-list text, one fresh topic per run, reads messages and
wire bytes per batch from librdkafka's statistics, and reports msg/s, input and wire bytes per
batch, the ratio and the cores of the thread that compresses. --client both runs kafka-clients
4.3.1 (kgap's Java companion) at the same points and measures what a Java batch held and what
closed it. The findings catalogue decides two verdicts: gzip-batch-semantics (librdkafka's
half: input follows batch.size, bigger batches compress better and run slower, min/max ranges
apart over 3 reps) and java-gzip-batch-closing (Java's half, judged only when Java ran).
--java-equivalent BYTES prints the librdkafka batch.size with the input of a Java batch.size.
Without --brokers it runs on librdkafka's in-process mock cluster and says so (Java needs
--brokers).";

const AFTER: &str = "\
exit status: 0 measured (the verdicts say whether each half held), 1 the run failed, 2 bad
usage, a codec this librdkafka was built without, or a configuration librdkafka refused,
130 interrupted (what was measured is printed).

examples:
  probe-gzip-batch                          # 16K..88K × level default,1, mock
  probe-gzip-batch --brokers 127.0.0.1:9092 --out gz   # real broker, files kept
  probe-gzip-batch --batch-size 16384,90112 --level -1 # the post's two points
  probe-gzip-batch --java-equivalent 16384  # librdkafka size for Java's 16 KB
  probe-gzip-batch --codec lz4              # the same sweep, another codec
  probe-gzip-batch --brokers 127.0.0.1:9092 --client both --level -1
                                            # Java beside librdkafka";

#[derive(Debug, Clone, clap::Parser)]
#[command(
    name = "probe-gzip-batch",
    version = crate::kit::build_info::version(),
    about = "What does batch.size mean for a compressed batch, in librdkafka and in Java?",
    long_about = ABOUT,
    after_help = AFTER
)]
pub struct Options {
    /// compression.type (a codec this librdkafka was built without is exit 2).
    #[arg(long, value_enum, default_value_t = Codec::Gzip)]
    pub codec: Codec,

    /// batch.size values to sweep, in bytes (each at most message.max.bytes).
    #[arg(
        long,
        value_name = "BYTES[,…]",
        value_delimiter = ',',
        default_value = "16384,32768,65536,90112",
        value_parser = clap::value_parser!(u64).range(1..=2_147_483_647)
    )]
    pub batch_size: Vec<u64>,

    /// compression.level values to sweep (-1: the codec's default, 6 for gzip). The verdicts
    /// are drawn at the first.
    #[arg(
        long,
        value_name = "N[,…]",
        value_delimiter = ',',
        default_value = "-1,1",
        allow_hyphen_values = true,
        value_parser = clap::value_parser!(i32).range(-1..=12)
    )]
    pub level: Vec<i32>,

    /// Partitions of each run's topic (round robin; the post's baseline: 6).
    #[arg(long, default_value_t = 6, value_parser = clap::value_parser!(i32).range(1..=10_000))]
    pub partitions: i32,

    /// Payload bytes per message.
    #[arg(long, default_value_t = 1024, value_parser = clap::value_parser!(u64).range(1..=10_485_760))]
    pub size: u64,

    /// Payload kind: text (the post's gzip runs: word-list text) or random.
    #[arg(long, default_value = "text")]
    pub kind: PayloadKind,

    /// Measured window of each run, after the warmup (e.g. 3s, 10s).
    #[arg(long, default_value = "3s", value_parser = parse_duration)]
    pub duration: Duration,

    /// Messages sent and acknowledged before each window.
    #[arg(long, default_value_t = 20_000)]
    pub warmup_messages: u64,

    /// A Java batch.size to translate: the librdkafka batch.size whose input per batch
    /// matches it (measured when Java ran at it, else BYTES × the measured ratio).
    #[arg(long, value_name = "BYTES", value_parser = clap::value_parser!(u64).range(1..=2_147_483_647))]
    pub java_equivalent: Option<u64>,

    /// rust: librdkafka; java: kgap's Java companion (kafka-clients 4.3.1) at the same
    /// points; both: side by side, both verdicts. Java needs --brokers and a JDK 17+ with
    /// Maven; -X settings apply to librdkafka only.
    #[arg(long, value_enum, default_value_t = ClientChoice::Rust)]
    pub client: ClientChoice,

    #[command(flatten)]
    pub common: CommonArgs,
}

/// The probe.
pub struct GzipBatch {
    pub opts: Options,
}

pub(super) fn dedup<T: PartialEq + Copy>(v: &[T]) -> Vec<T> {
    let mut out = Vec::new();
    for x in v {
        if !out.contains(x) {
            out.push(*x);
        }
    }
    out
}

impl GzipBatch {
    pub fn new(opts: Options) -> GzipBatch {
        GzipBatch { opts }
    }

    /// The levels swept, in the order given (the first is the one judged).
    pub fn levels(&self) -> Vec<i32> {
        dedup(&self.opts.level)
    }
}
