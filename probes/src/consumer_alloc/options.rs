//! The probe's command line (its clap options, the record counts it defaults to) and the probe
//! itself.

use super::alloc_count::Allocator;
use super::pipeline::Variant;
use crate::kit::cli::{parse_duration, CommonArgs};
use crate::kit::payload::JSON_MIN_SIZE;
use std::time::Duration;

/// Records per partition on the mock (it keeps 5 MiB of batches per partition; 256 B JSON
/// records compress about 3x with lz4).
pub const MOCK_MESSAGES_PER_PARTITION: u64 = 40_000;
/// Records on a real broker: a window of seconds for the fastest variant.
pub const EXTERNAL_MESSAGES: u64 = 1_000_000;

const ABOUT: &str = "\
Reproduces the postmortem of a Rust consumer rewrite: allocation patterns, not safety.

The probe prefills a topic of its own with JSON records with keys, then reads it with one
processing thread per partition running the same deserialize → enrich → keyed aggregation
pipeline in three variants: copying (a fresh buffer at each step, cloned keys, a channel of
heap records), borrowed (payload borrowed from librdkafka's message, parsed in place, lines
in one shared buffer sent as bytes::Bytes views) and ring (pre-allocated slots passed by
index), each on the system allocator and on mimalloc. It counts the pipeline threads' heap
allocations per record, msg/s, CPU per million records, the per-record processing time
(p50/p99), the RSS every 100 ms (the sawtooth) and, where perf works, the share of samples
in malloc/free and memcpy. The findings catalogue decides. Without --brokers it runs on
librdkafka's in-process mock cluster and says so.";

const AFTER: &str = "\
exit status: 0 measured (the verdicts say whether the findings held), 1 the run failed,
2 bad usage or a configuration librdkafka refused, 130 interrupted.

examples:
  probe-consumer-alloc                              # every variant, on the mock
  probe-consumer-alloc --variants copying,borrowed  # before and after the fix
  probe-consumer-alloc --brokers 127.0.0.1:9092     # a real broker
  probe-consumer-alloc --rate 40000 --duration 5s   # one input rate: p50/p99
  probe-consumer-alloc --allocators system --no-perf --reps 1   # a quick look
  probe-consumer-alloc --json | jq .verdicts        # the catalogue's verdicts";

#[derive(Debug, Clone, clap::Parser)]
#[command(
    name = "probe-consumer-alloc",
    version,
    about = "Do allocation patterns decide this Rust consumer's speed?",
    long_about = ABOUT,
    after_help = AFTER
)]
pub struct Options {
    /// Pipeline variants to run.
    #[arg(long, value_delimiter = ',', default_value = "copying,borrowed,ring")]
    pub variants: Vec<Variant>,

    /// Allocators the pipeline threads run on.
    #[arg(long, value_delimiter = ',', default_value = "system,mimalloc")]
    pub allocators: Vec<Allocator>,

    /// Partitions of the probe's topic: one processing thread each.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(i32).range(1..=64))]
    pub partitions: i32,

    /// Total input rate in records/s over all partitions (paced); default: unpaced.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub rate: Option<u64>,

    /// Records prefilled and read per run. Default: 1000000 on a real broker, 40000 per
    /// partition on the mock (it keeps only 5 MiB per partition).
    #[arg(long, value_parser = clap::value_parser!(u64).range(100..))]
    pub messages: Option<u64>,

    /// Bytes per JSON record (at least 96).
    #[arg(long, default_value_t = 256, value_parser = clap::value_parser!(u64).range(JSON_MIN_SIZE as u64..=65536))]
    pub size: u64,

    /// Cap on each run's measured window.
    #[arg(long, value_parser = parse_duration, default_value = "10s")]
    pub duration: Duration,

    /// Do not sample with perf (its shares are then "not measured").
    #[arg(long)]
    pub no_perf: bool,

    #[command(flatten)]
    pub common: CommonArgs,
}

/// The probe.
pub struct ConsumerAlloc {
    pub opts: Options,
}

impl ConsumerAlloc {
    pub fn new(opts: Options) -> ConsumerAlloc {
        ConsumerAlloc { opts }
    }
}
