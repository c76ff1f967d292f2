//! probe-fetch-backoff's options (clap derive), the probe itself, and what its options choose
//! before a run: the backoff values swept, the topic's partitions, the prefill.

use crate::kit::broker::Broker;
use crate::kit::cli::{parse_duration, CommonArgs};
use crate::kit::consumer_topic::{self, PrefillChoice, PrefillPlan};
use crate::kit::payload::PayloadKind;
use std::time::Duration;

/// librdkafka's default fetch.queue.backoff.ms.
pub const DEFAULT_BACKOFF_MS: u64 = 1000;
/// Partitions on the mock: 90k messages fit in each, so 40 give the fast setting a window
/// of more than two seconds at ~1.4M msg/s on 2 cores.
pub const MOCK_PARTITIONS: i32 = 40;
/// The default cap on a run's window: ten 1000 ms naps per partition are plenty, and the
/// slow setting would otherwise read for half a minute.
pub const DEFAULT_WINDOW: Duration = Duration::from_secs(10);
/// Partitions on a real broker (the post's 6).
pub const EXTERNAL_PARTITIONS: i32 = 6;

const ABOUT: &str = "\
Reproduces Gap 2 of the post: a librdkafka consumer that takes naps.

When a partition's local queue reaches queued.min.messages (100000 by default), librdkafka stops
fetching it for fetch.queue.backoff.ms (1000 ms by default). With small messages the application
drains the queue in milliseconds and the fetcher sleeps for the rest of the second. The probe
prefills a topic of its own, consumes it with a BaseConsumer poll loop at each backoff value,
counts 'Fetch backoff … Local: Queue full' in its own debug=fetch log, finds the naps in 100 ms
slots, and the findings catalogue decides: HOLDS when every rep of the slow setting napped and
the fast one read faster with min/max ranges apart (3 reps at least). Without --brokers it runs
on librdkafka's in-process mock cluster and says so.";

const AFTER: &str = "\
exit status: 0 measured (the verdict says whether the gap held), 1 the run failed (broker
unreachable, topic not created), 2 bad usage or a configuration librdkafka refused,
130 interrupted (what was measured is still printed).

examples:
  probe-fetch-backoff --backoff-ms 10            # 1000 ms against 10 ms, on the mock
  probe-fetch-backoff --backoff-ms 1000,100,10   # sweep three values
  probe-fetch-backoff --brokers 127.0.0.1:9092 --out fb   # a real broker, files kept
  probe-fetch-backoff --backoff-ms 1000,10,0     # 0 ms, worse than 10 (it re-checks)
  probe-fetch-backoff --queued-min-messages 1000000   # the post's other remedy
  probe-fetch-backoff --json | jq .verdicts      # the catalogue's verdict, as JSON";

#[derive(Debug, Clone, clap::Parser)]
#[command(
    name = "probe-fetch-backoff",
    version = crate::kit::build_info::version(),
    about = "Does the 1000 ms fetch queue backoff make this consumer nap?",
    long_about = ABOUT,
    after_help = AFTER
)]
pub struct Options {
    /// fetch.queue.backoff.ms values: one value is compared with librdkafka's default (1000);
    /// a comma-separated list is swept as given.
    #[arg(
        long,
        value_name = "MS[,MS…]",
        value_delimiter = ',',
        default_value = "10"
    )]
    pub backoff_ms: Vec<u64>,

    /// queued.min.messages values run as extra points at librdkafka's default backoff
    /// (1000 ms): the post's other remedy, 1000000.
    #[arg(long, value_name = "N[,N…]", value_delimiter = ',',
          value_parser = clap::value_parser!(u64).range(1..=10_000_000))]
    pub queued_min_messages: Vec<u64>,

    /// Messages prefilled and consumed per run. Default: 4000000 on a real broker; 90000 per
    /// partition on the mock (it keeps only 5 MiB per partition).
    #[arg(long, value_parser = clap::value_parser!(u64).range(10..))]
    pub messages: Option<u64>,

    /// Payload bytes per message.
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u64).range(1..=10_485_760))]
    pub size: u64,

    /// Payload kind: random (the post's) or text (word list, compressible). Default: random on
    /// a real broker, text on the mock (which must keep a compressed prefill).
    #[arg(long)]
    pub kind: Option<PayloadKind>,

    /// Partitions of the probe's topic. Default: 6 on a real broker (the post's), 40 on the
    /// mock (so that the fast setting's window lasts seconds).
    #[arg(long, value_parser = clap::value_parser!(i32).range(1..=1000))]
    pub partitions: Option<i32>,

    /// Cap on each run's measured window; a run also ends when every prefilled message has
    /// been consumed.
    #[arg(long, value_parser = parse_duration, default_value = "10s")]
    pub duration: Duration,

    /// compression.type of the prefill only. Default: none on a real broker; lz4 on the mock,
    /// which keeps only 5 MiB of batches per partition.
    #[arg(long, value_name = "CODEC")]
    pub prefill_compression: Option<String>,

    #[command(flatten)]
    pub common: CommonArgs,
}

/// The probe.
pub struct FetchBackoff {
    pub opts: Options,
}

impl FetchBackoff {
    pub fn new(opts: Options) -> FetchBackoff {
        FetchBackoff { opts }
    }

    /// The values to run: a single value is compared with librdkafka's default.
    pub fn settings(&self) -> Vec<u64> {
        let mut v = self.opts.backoff_ms.clone();
        if v.len() == 1 && v[0] != DEFAULT_BACKOFF_MS {
            v.insert(0, DEFAULT_BACKOFF_MS);
        }
        let mut seen = Vec::new();
        v.retain(|b| {
            let new = !seen.contains(b);
            seen.push(*b);
            new
        });
        v
    }

    pub(super) fn partitions(&self, broker: &Broker) -> i32 {
        self.opts.partitions.unwrap_or(if broker.is_mock() {
            MOCK_PARTITIONS
        } else {
            EXTERNAL_PARTITIONS
        })
    }

    pub(super) fn prefill(&self, broker: &Broker) -> PrefillPlan {
        consumer_topic::plan(
            broker.is_mock(),
            self.partitions(broker),
            PrefillChoice {
                messages: self.opts.messages,
                kind: self.opts.kind,
                compression: self.opts.prefill_compression.as_deref(),
            },
        )
    }
}
