//! The probe's command line (its clap options, the heap value) and the probe itself.

use crate::kit::cli::{parse_duration, parse_property, CommonArgs};
use crate::kit::java;
use std::time::Duration;

const ABOUT: &str = "\
Reproduces the post's two Java socket-buffer gaps.

kafka-clients fixes its sockets' buffers: send.buffer.bytes=131072 for the producer and
receive.buffer.bytes=65536 for the consumer (librdkafka leaves both to the OS). The post: with
1 MB batches each producer write took ~298 KB and the JDK re-copied the unsent rest of the
request on every write (630k → 875k msg/s with -1); a 1 KB consumer read ~56 KB per call on
its polling thread (1229k → 1427k msg/s with -1). The probe runs kgap's Java companion with
each fixed default and with -1, records the window with JFR (every jdk.SocketWrite and
jdk.SocketRead, threshold 0), and counts bytes per socket call with kgap's native JFR reader.
The findings catalogue gives two verdicts: java-send-buffer from the producer's write pairs
(the largest batch.size), java-receive-buffer from the consumer's read pairs (the smallest
record size), each with its throughput change compared the post's way (3 reps, min/max
ranges apart).

Needs a real Kafka broker (--brokers; a local one: scripts/kafka up) and a JDK 17+ with
Maven (scripts/java-companion builds the companion on first use).";

const AFTER: &str = "\
exit status: 0 measured (the verdicts say what held), 1 the run failed, 2 bad usage, no
--brokers, no JDK, or a setting kafka-clients refused, 130 interrupted (what was measured
is printed).

examples:
  probe-java-socket-buffers --brokers 127.0.0.1:9092 --out sb    # both, kept
  probe-java-socket-buffers --brokers 127.0.0.1:9092 --consume-size 0  # send
  probe-java-socket-buffers --brokers 127.0.0.1:9092 --batch-size 0 # receive
  probe-java-socket-buffers --brokers 127.0.0.1:9092 --reps 5 # tighter ranges";

fn parse_heap(s: &str) -> std::result::Result<String, String> {
    java::parse_size(s)
        .map(|_| s.trim().to_string())
        .map_err(|_| format!("{s:?} is not a JVM size (e.g. 512m, 2g)"))
}

#[derive(Debug, Clone, clap::Parser)]
#[command(
    name = "probe-java-socket-buffers",
    version = crate::kit::build_info::version(),
    about = "Do kafka-clients' fixed socket buffers cap each socket call, and what does it cost?",
    long_about = ABOUT,
    after_help = AFTER
)]
pub struct Options {
    /// Producer batch.size values (1 KB records), each with send.buffer.bytes fixed and -1
    /// (0: no producer runs).
    #[arg(long, value_name = "BYTES[,…]", value_delimiter = ',', default_value = "131072,1048576",
          value_parser = clap::value_parser!(u64).range(0..=2_147_483_647))]
    pub batch_size: Vec<u64>,

    /// Consumer record sizes, each with receive.buffer.bytes fixed and -1 (0: no consumer
    /// runs).
    #[arg(long, value_name = "BYTES[,…]", value_delimiter = ',', default_value = "1024,10240",
          value_parser = clap::value_parser!(u64).range(0..=10_485_760))]
    pub consume_size: Vec<u64>,

    /// Bytes prefilled per consumer topic (librdkafka, not measured). Each consumer run reads
    /// up to 400 MB of it again and again until its JIT has settled, then all of it: the
    /// first 10% open the window, the window is the rest (2 GB: about 3 s at this
    /// machine's rate with the default buffer).
    #[arg(long, value_name = "BYTES", default_value_t = 2_000_000_000,
          value_parser = clap::value_parser!(u64).range(1_000_000..))]
    pub consume_bytes: u64,

    /// Partitions of every topic.
    #[arg(long, default_value_t = 6, value_parser = clap::value_parser!(i32).range(1..=10_000))]
    pub partitions: i32,

    /// The producer's linger.ms (the post's 5). On a machine slower than the post's, 1 MB
    /// batches close on linger.ms before they fill and requests stay a write or three: 200
    /// lets them fill, the state the finding is about.
    #[arg(long, value_name = "MS", default_value_t = 5)]
    pub linger_ms: u64,

    /// The producer's max.request.size (kafka-clients' 1048576 when not given): 8388608 lets
    /// one request carry a full 1 MB batch per partition, as the post's 6.29 MB requests did.
    #[arg(long, value_name = "BYTES", value_parser = clap::value_parser!(u64).range(1024..=2_147_483_647))]
    pub max_request_size: Option<u64>,

    /// Measured window of each producer run, after its warmup.
    #[arg(long, default_value = "3s", value_parser = parse_duration)]
    pub duration: Duration,

    /// The JVM's heap (-Xms and -Xmx).
    #[arg(long, default_value = "512m", value_parser = parse_heap)]
    pub heap: String,

    /// kafka-clients property for every client, applied last (repeatable): -J linger.ms=20.
    #[arg(short = 'J', value_name = "KEY=VALUE", value_parser = parse_property)]
    pub java_property: Vec<(String, String)>,

    /// Run without the JFR recording of the socket calls: msg/s and CPU only, the verdicts
    /// CANNOT TELL (no socket call is counted). For measuring what the recording itself
    /// costs the clients (scripts/bench-observer-effect runs the same points both ways).
    #[arg(long)]
    pub no_recording: bool,

    #[command(flatten)]
    pub common: CommonArgs,
}

/// Share of a consumer run's prefilled messages read before its window opens, after the
/// warmup reads that let the JIT settle (kit::java::WARMUP_PASSES): the connection and the
/// first fetches of the run's own read.
pub const CONSUME_WARMUP_FRACTION: f64 = 0.1;

/// The probe.
pub struct JavaSocketBuffers {
    pub opts: Options,
}

impl JavaSocketBuffers {
    pub fn new(opts: Options) -> JavaSocketBuffers {
        JavaSocketBuffers { opts }
    }
}
