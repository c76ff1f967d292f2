//! The probe's command line: its name, default partitions and messages, the clap options, the
//! mode they ask for and the APIs, backoffs and rates they sweep.

use crate::kit::batch::{WaitPolicy, DEFAULT_BATCH};
use crate::kit::cli::{parse_duration, CommonArgs};
use crate::kit::consume::ConsumeApi;
use crate::kit::error::{ProbeError, Result};
use std::path::PathBuf;
use std::time::Duration;

/// The binary's name, in every output.
pub const NAME: &str = "probe-batch-consume";
/// Partitions on the mock by default: it keeps ~90k messages per partition, so 48 give the
/// batch API a window of about two seconds at ~1.9M msg/s.
pub const MOCK_PARTITIONS: i32 = 48;
/// Partitions on a real broker by default (the post's 6).
pub const EXTERNAL_PARTITIONS: i32 = 6;
/// Messages prefilled on a real broker by default: at the post's ~2.1M msg/s the window
/// after the 10% warmup still lasts two seconds.
pub const EXTERNAL_MESSAGES: u64 = 5_000_000;

const ABOUT: &str = "\
Reproduces the post's consumer limits after the backoff fix, and its batch wrapper's bug.

Throughput mode (the default) prefills a topic of its own and reads it with poll() (one message
per call), with librdkafka's batch API under the fixed policy (take what is queued, block only
when nothing is) and under the naive one (wait up to --naive-timeout for a full batch), at each
fetch.queue.backoff.ms. It reports msg/s, MB/s and the cores of the consume thread (kgap-app)
and of librdkafka's broker thread. The findings catalogue decides two findings: batch-consume
(under poll() the application thread is saturated, >= 0.9 cores, and the batch API reads faster
with min/max ranges apart) and librdkafka-broker-thread-limit (with the batch API rdk:broker is
the saturated thread; the post: 0.94 cores at ~2.1M msg/s). Where no thread is saturated (a
2-core machine shared with the broker) the verdict is CANNOT TELL, with the cores measured.

Latency mode (--rate) paces a producer in the same process and measures end-to-end latency
with each API; batch-wrapper-latency holds when the naive wrapper's p99 sits at min(timeout,
batch/rate) and its p50 at half of it in every rep, and the fixed one stays under 1 ms.

Harness mode (--rdkafka-performance PATH) reads one topic with the probe's batch loop and
with librdkafka's own rdkafka_performance -G, both subscribed with a fresh group, both timed
from the first message to the same count, and prints their ratio (target >= 0.97).
Without --brokers it runs on librdkafka's in-process mock cluster and says so.";

const AFTER: &str = "\
exit status: 0 measured (the verdicts say whether the findings held), 1 the run failed,
2 bad usage or a configuration librdkafka refused, 130 interrupted (what was measured is
still printed).

examples:
  probe-batch-consume --api poll,fixed --backoff-ms 10  # on the mock
  probe-batch-consume --brokers 127.0.0.1:9092 --out bc # Kafka, files kept
  probe-batch-consume --size 1024 --api poll,fixed      # 1 KB messages
  probe-batch-consume --rate 1000,10000                 # the naive wrapper
  probe-batch-consume --rdkafka-performance PATH        # the harness check
  probe-batch-consume --json | jq .verdicts             # the verdicts, JSON";

/// A consume API as `--api` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ApiName {
    /// poll(): one message per call.
    Poll,
    /// The batch API, fixed policy: take what is queued, block only when nothing is.
    Fixed,
    /// The batch API, naive policy: wait up to --naive-timeout for a full batch.
    Naive,
}

#[derive(Debug, Clone, clap::Parser)]
#[command(
    name = "probe-batch-consume",
    version = crate::kit::build_info::version(),
    about = "Which thread limits this consumer: poll(), the batch API, or librdkafka's broker \
             thread? And what does a batch wrapper that waits do to latency?",
    long_about = ABOUT,
    after_help = AFTER
)]
pub struct Options {
    /// Consume APIs to compare: poll (one message per call), fixed (the batch API, the
    /// post's fix), naive (the batch API waiting for a full batch, the post's bug).
    #[arg(
        long,
        value_name = "API[,API…]",
        value_delimiter = ',',
        default_value = "poll,fixed,naive"
    )]
    pub api: Vec<ApiName>,

    /// fetch.queue.backoff.ms values (throughput mode; the harness runs the smallest).
    #[arg(
        long,
        value_name = "MS[,MS…]",
        value_delimiter = ',',
        default_value = "1000,10"
    )]
    pub backoff_ms: Vec<u64>,

    /// Messages per batch call.
    #[arg(long, default_value_t = DEFAULT_BATCH as u64,
          value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub batch: u64,

    /// How long the naive policy waits for a full batch.
    #[arg(long, value_parser = parse_duration, default_value = "100ms")]
    pub naive_timeout: Duration,

    /// Latency mode: producer rates to pace at, msg/s (e.g. 1000,10000).
    #[arg(long, value_name = "MSG/S[,…]", value_delimiter = ',',
          value_parser = clap::value_parser!(u64).range(1..))]
    pub rate: Vec<u64>,

    /// Messages prefilled (throughput and harness modes). Default: 5000000 on a real broker;
    /// 90000 per partition on the mock (it keeps only 5 MiB per partition).
    #[arg(long, value_parser = clap::value_parser!(u64).range(10..))]
    pub messages: Option<u64>,

    /// Payload bytes per message (the post: 100; also 1024 and 10240).
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u64).range(1..=10_485_760))]
    pub size: u64,

    /// Partitions of the probe's topic. Default: 6 on a real broker and in latency mode,
    /// 48 on the mock (more partitions hold more of a prefill there).
    #[arg(long, value_parser = clap::value_parser!(i32).range(1..=1000))]
    pub partitions: Option<i32>,

    /// Cap on each throughput run's measured window; a run also ends when every prefilled
    /// message has been consumed.
    #[arg(long, value_parser = parse_duration, default_value = "10s")]
    pub duration: Duration,

    /// Latency mode: warmup at the rate before each window.
    #[arg(long, value_parser = parse_duration, default_value = "1s")]
    pub warmup: Duration,

    /// Latency mode: the measured window of each run.
    #[arg(long, value_parser = parse_duration, default_value = "3s")]
    pub window: Duration,

    /// Harness mode: librdkafka's examples/rdkafka_performance against the probe's batch
    /// loop, like for like (scripts/build-rdkafka-performance builds it).
    #[arg(long, value_name = "PATH", conflicts_with = "rate")]
    pub rdkafka_performance: Option<PathBuf>,

    #[command(flatten)]
    pub common: CommonArgs,
}

/// What the options ask for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Throughput,
    Latency,
    Harness,
}

impl Options {
    pub fn mode(&self) -> Mode {
        if !self.rate.is_empty() {
            Mode::Latency
        } else if self.rdkafka_performance.is_some() {
            Mode::Harness
        } else {
            Mode::Throughput
        }
    }

    /// The APIs to run, once each, in the order given.
    pub fn apis(&self) -> Vec<ConsumeApi> {
        let mut v: Vec<ConsumeApi> = Vec::new();
        for a in &self.api {
            let api = match a {
                ApiName::Poll => ConsumeApi::Poll,
                ApiName::Fixed => ConsumeApi::Batch {
                    size: self.batch as usize,
                    policy: WaitPolicy::Fixed,
                },
                ApiName::Naive => ConsumeApi::Batch {
                    size: self.batch as usize,
                    policy: WaitPolicy::Naive {
                        timeout: self.naive_timeout,
                    },
                },
            };
            if !v.contains(&api) {
                v.push(api);
            }
        }
        v
    }

    /// The backoff values, once each, in the order given.
    pub fn backoffs(&self) -> Vec<u64> {
        let mut v: Vec<u64> = Vec::new();
        for b in &self.backoff_ms {
            if !v.contains(b) {
                v.push(*b);
            }
        }
        v
    }

    /// The same, once each, in the order given.
    pub fn rates(&self) -> Vec<u64> {
        let mut v: Vec<u64> = Vec::new();
        for r in &self.rate {
            if !v.contains(r) {
                v.push(*r);
            }
        }
        v
    }

    /// Checks every mode shares: a usage error is exit 2.
    pub fn check(&self) -> Result<()> {
        if self.api.is_empty() || self.backoff_ms.is_empty() {
            return Err(ProbeError::Usage(
                "--api and --backoff-ms need a value".into(),
            ));
        }
        Ok(())
    }
}
