//! The probe's command line (its clap options and their value enums), its name and partitions,
//! and the probe itself.

use crate::kit::cli::{parse_duration, CommonArgs};
use crate::kit::instances::MAX_INSTANCES;
use crate::kit::java::Client as ClientChoice;
use std::time::Duration;

/// The binary's name.
pub const NAME: &str = "probe-consumer-clients";
/// Partitions of every topic (the post's 6).
pub const PARTITIONS: i32 = 6;

const ABOUT: &str = "\
Reproduces the post's consumer table: which consumer is faster at this message size, and which
thread is its limit.

One topic per message size (6 partitions, the seed's payload bytes, prefilled once) is read from
the start by librdkafka with poll() at its defaults (the post's rust) and with the batch API,
500 per call, and fetch.queue.backoff.ms=10 (rust-tuned), and by one Java KafkaConsumer
(kafka-clients 4.3.1) with group.protocol=classic and =consumer. With --instances K, K clients
run in one process, each with its own connection, all reading every partition. Every run
reports msg/s, MB/s, the cores of every thread by role (librdkafka's application thread and
rdk:broker threads; Java's poll() thread and, with group.protocol=consumer, its background
thread) and CPU seconds per million messages. The findings catalogue decides:
java-consumer-one-core (Java's poll thread at a core at 1 KB and 10 KB, librdkafka faster at
10 KB, the consumer protocol's two threads summing to about one core), librdkafka-broker-thread-
limit (at 100 B rdk:broker saturated under the batch API and Java faster) and instances-scale-
past-broker-thread (K instances read more, judged only up to the machine's cores). Where the
machine is the limit (2 cores shared with the broker) the verdict is CANNOT TELL with the cores
measured. Java needs --brokers; librdkafka alone runs on the in-process mock and says so.";

const AFTER: &str = "\
exit status: 0 measured (the verdicts say whether the findings held), 1 the run failed,
2 bad usage or a configuration a client refused, 130 interrupted (what was measured is
still printed).

examples:
  probe-consumer-clients                            # librdkafka on the mock
  probe-consumer-clients -b 127.0.0.1:9092 --client both   # the post's table
  probe-consumer-clients -b HOST:PORT --client both --sizes 100   # 100 B only
  probe-consumer-clients -b HOST:PORT --api tuned --instances 1,2,4   # instances
  probe-consumer-clients -b HOST:PORT --client java --group-protocol consumer
  probe-consumer-clients -b 127.0.0.1:9092 --client both --sizes 100 --api tuned --own-core 1
                                                    # 2 cores: each limit on a core of its own
  probe-consumer-clients --json | jq .verdicts      # the verdicts, JSON";

#[derive(Debug, Clone, clap::Parser)]
#[command(
    name = "probe-consumer-clients",
    version,
    about = "Which consumer is faster at this message size, and which thread is its limit?",
    long_about = ABOUT,
    after_help = AFTER
)]
pub struct Options {
    /// rust: librdkafka; java: kgap's Java companion (kafka-clients 4.3.1, needs --brokers);
    /// both: side by side on the same topics.
    #[arg(long, value_enum, default_value = "rust")]
    pub client: ClientChoice,

    /// Payload bytes per message, one prefilled topic each (the post: 100, 1024, 10240).
    #[arg(long, value_name = "BYTES[,…]", value_delimiter = ',', default_value = "100,1024,10240",
          value_parser = clap::value_parser!(u64).range(8..=1_048_576))]
    pub sizes: Vec<u64>,

    /// librdkafka's consumers: poll (its defaults, the post's rust) and tuned (the batch
    /// API, 500 per call, fetch.queue.backoff.ms=10, the post's rust-tuned).
    #[arg(
        long,
        value_name = "API[,…]",
        value_delimiter = ',',
        default_value = "poll,tuned"
    )]
    pub api: Vec<LibrdkafkaApi>,

    /// Java's group.protocol values.
    #[arg(
        long,
        value_name = "PROTOCOL[,…]",
        value_delimiter = ',',
        default_value = "classic,consumer"
    )]
    pub group_protocol: Vec<GroupProtocol>,

    /// K clients in one process at once, each its own connection, each reading every
    /// partition (comma-separated K values).
    #[arg(long, value_name = "K[,…]", value_delimiter = ',', default_value = "1",
          value_parser = clap::value_parser!(u64).range(1..=MAX_INSTANCES as u64))]
    pub instances: Vec<u64>,

    /// Megabytes of payload prefilled per size (messages = MB × 10^6 / size). Default: 600
    /// on a real broker; 9 per partition on the mock (it keeps 5 MiB of lz4 per partition).
    #[arg(long, value_name = "MB", value_parser = clap::value_parser!(u64).range(1..=100_000))]
    pub prefill_mb: Option<u64>,

    /// Cap on each run's measured window (a run also ends when its first instance has
    /// read every message).
    #[arg(long, value_parser = parse_duration, default_value = "8s")]
    pub duration: Duration,

    /// Give each client's limiting thread this cpu to itself — librdkafka's broker thread
    /// (rdk:broker…), Java's poll() thread — and run the rest of the client, and so the
    /// application thread beside the broker, on the other cpus (--cpus, or all). On a
    /// 2-core machine (--own-core 1 with the broker on cpu 0) each limit then runs on a
    /// core of its own and librdkafka hands every message across cores, as on the post's
    /// machine. One instance per point (--instances 1).
    #[arg(long, value_name = "CPU")]
    pub own_core: Option<usize>,

    #[command(flatten)]
    pub common: CommonArgs,
}

/// `--api` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LibrdkafkaApi {
    Poll,
    Tuned,
}

/// `--group-protocol` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum GroupProtocol {
    Classic,
    Consumer,
}

/// The probe.
pub struct ConsumerClients {
    pub opts: Options,
}

impl ConsumerClients {
    pub fn new(opts: Options) -> ConsumerClients {
        ConsumerClients { opts }
    }
}
