//! `probe-gzip-batch`: gzip, not the same batch.
//!
//! The post compared gzip at batch.size 16 KB: Java 33.9k msg/s at a ratio of 5.39, librdkafka
//! 46.4k at 4.70. The setting means different things. librdkafka stops adding records when the
//! *uncompressed* MessageSet would pass batch.size (`rd_kafka_msgset_writer_write_msgq`: the
//! limit is min(batch.size, message.max.bytes) on the records as written, before the codec
//! runs); kafka-clients checks batch.size against a batch's *estimated compressed* size, and
//! also closes a batch on linger.ms. zlib compresses longer input better and more slowly.
//!
//! The probe sweeps batch.size × compression.level for one codec on word-list text, one fresh
//! topic per run, and reads input and wire bytes per batch from librdkafka's statistics
//! (topics[].batchcnt and batchsize) and, with `--client both`, from the Java companion's
//! kafka-clients metrics. Two catalogue rules decide: librdkafka's half
//! ([`kgap_analyzers::findings::gzip_batch_semantics`]) and Java's
//! ([`kgap_analyzers::findings::java_gzip_batch_closing`]), each its own verdict.

mod codec;
mod companion;
pub mod evidence;
mod figures;
mod librdkafka;
mod render;

pub use codec::{builtin_features, check_codec, Codec};
pub use companion::java_client_settings;
pub use figures::{batch_figures, Figures, JavaFigures, LibrdkafkaFigures};
pub use librdkafka::producer_settings;

use crate::kit::broker::Broker;
use crate::kit::cli::{parse_duration, CommonArgs};
use crate::kit::error::{ProbeError, Result};
use crate::kit::java::Client as ClientChoice;
use crate::kit::payload::{PayloadKind, Pool};
use crate::kit::produce::ThroughputSpec;
use crate::kit::{Context, Probe, Sweep};
use kgap_analyzers::findings::probe_result::{Client, ProbeResult};
use kgap_analyzers::findings::{gzip_batch_semantics, java_gzip_batch_closing, Verdict};
use kgap_analyzers::vocab::svg::LineChart;
use kgap_analyzers::vocab::units;
use serde::Serialize;
use std::path::Path;
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

/// One point: a codec at a level and a batch.size.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
pub struct Point {
    #[serde(rename = "compression.type")]
    pub codec: Codec,
    #[serde(rename = "compression.level")]
    pub level: i32,
    #[serde(rename = "batch.size")]
    pub batch_size: u64,
}

/// What every run shares: the payloads and their SHA-256.
pub struct Setup {
    pool: Pool,
    sha256: String,
}

fn dedup<T: PartialEq + Copy>(v: &[T]) -> Vec<T> {
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

    /// message.max.bytes as the producer will see it (the last -X wins).
    fn message_max_bytes(&self) -> Result<u64> {
        match self
            .opts
            .common
            .property
            .iter()
            .rev()
            .find(|(k, _)| k == "message.max.bytes")
        {
            Some((_, v)) => v
                .parse()
                .map_err(|_| ProbeError::Usage(format!("-X message.max.bytes={v}: not a number"))),
            None => Ok(DEFAULT_MESSAGE_MAX_BYTES),
        }
    }
}

impl Probe for GzipBatch {
    type Point = Point;
    type Figures = Figures;
    type Setup<'c> = Setup;
    const NAME: &'static str = "probe-gzip-batch";

    fn common(&self) -> &CommonArgs {
        &self.opts.common
    }

    fn clients(&self) -> Vec<Client> {
        self.opts.client.clients()
    }

    fn check(&self) -> Result<()> {
        // Before any broker: a codec this build lacks is exit 2 with what it has.
        check_codec(self.opts.codec, &builtin_features()?)?;
        let max = self.message_max_bytes()?;
        // librdkafka caps a batch at message.max.bytes: a larger batch.size is not swept.
        if let Some(b) = self.opts.batch_size.iter().find(|&&b| b > max) {
            return Err(ProbeError::Usage(format!(
                "--batch-size {b}: must be at most message.max.bytes ({max}; raise it with -X \
                 message.max.bytes=N)"
            )));
        }
        Ok(())
    }

    fn points(&self, _broker: &Broker) -> Vec<Point> {
        let sizes = dedup(&self.opts.batch_size);
        self.levels()
            .into_iter()
            .flat_map(|level| {
                sizes.iter().map(move |&batch_size| Point {
                    codec: self.opts.codec,
                    level,
                    batch_size,
                })
            })
            .collect()
    }

    fn label(&self, p: &Point) -> String {
        match p.level {
            -1 => format!("default-batch{}", p.batch_size),
            l => format!("level{l}-batch{}", p.batch_size),
        }
    }

    fn validate(&self, broker: &Broker, points: &[Point]) -> Result<()> {
        for p in points {
            broker.validate(&producer_settings(p.codec, p.level, p.batch_size))?;
        }
        Ok(())
    }

    fn prepare(&self, _cx: &Context, result: &mut ProbeResult<Figures>) -> Result<Setup> {
        let pool = Pool::new(self.opts.size as usize, self.opts.kind);
        let sha256 = pool.sha256_hex();
        result.payload = Some(pool.info());
        Ok(Setup { pool, sha256 })
    }

    fn run(
        &self,
        cx: &Context,
        setup: &Setup,
        client: Client,
        p: &Point,
        dir: &Path,
    ) -> Result<Option<Figures>> {
        match client {
            Client::Librdkafka => {
                let run = librdkafka::Run {
                    broker: &cx.broker,
                    pool: &setup.pool,
                    partitions: self.opts.partitions,
                    spec: ThroughputSpec {
                        warmup_messages: self.opts.warmup_messages,
                        window: self.opts.duration,
                    },
                    probe: Self::NAME,
                };
                librdkafka::produce_once(&run, p, dir).map(Some)
            }
            Client::Java => {
                let run = companion::Run {
                    java: cx.java()?,
                    broker: &cx.broker,
                    pool: &setup.pool,
                    pool_sha256: &setup.sha256,
                    partitions: self.opts.partitions,
                    warmup_messages: self.opts.warmup_messages,
                    window: self.opts.duration,
                    probe: Self::NAME,
                };
                companion::produce_once(&run, p, dir)
            }
        }
    }

    fn describe(&self, f: &Figures) -> String {
        let b = |x: Option<f64>| x.map_or("?".into(), units::bytes);
        format!(
            "{}, {} in → {} on the wire per batch (ratio {})",
            units::msgs_per_s(f.msgs_per_s),
            b(f.input_bytes_per_batch),
            b(f.wire_bytes_per_batch),
            f.compression_ratio
                .map_or("?".into(), |r| format!("{r:.2}")),
        )
    }

    fn run_topics(&self, f: &Figures) -> Vec<String> {
        vec![f.topic.clone()]
    }

    fn window_s(&self, f: &Figures) -> Option<f64> {
        Some(f.window_s)
    }

    fn verdicts(&self, sweep: &Sweep<Self>) -> Vec<Verdict> {
        vec![
            gzip_batch_semantics::decide(&evidence::librdkafka(self, sweep)),
            java_gzip_batch_closing::decide(&evidence::java(self, sweep)),
        ]
    }

    fn headline(&self, sweep: &Sweep<Self>) -> String {
        let (size, kind) = sweep
            .result
            .payload
            .as_ref()
            .map_or((self.opts.size as usize, self.opts.kind.to_string()), |p| {
                (p.size_bytes, p.kind.clone())
            });
        format!(
            "{size} B {kind} messages, {}, {} partition(s), a {} window after {} acknowledged",
            self.opts.codec.name(),
            self.opts.partitions,
            units::seconds(self.opts.duration.as_secs_f64()),
            self.opts.warmup_messages
        )
    }

    fn render(&self, sweep: &Sweep<Self>) -> String {
        render::render(self, sweep)
    }

    fn charts(&self, sweep: &Sweep<Self>) -> Vec<(String, LineChart)> {
        render::charts(self, sweep)
    }

    fn not_measured(&self, broker: &Broker) -> Vec<String> {
        let mut v = vec![
            "the ratio over the broker's partition sizes (DescribeLogDirs): rust-rdkafka 0.39 \
             and librdkafka 2.12.1 have no DescribeLogDirs, so the ratio is payload bytes over \
             the batch bytes the client sent"
                .to_string(),
            "the broker's own CPU (only this process's threads and the Java companion's are \
             sampled)"
                .to_string(),
        ];
        if self.opts.client == ClientChoice::Rust {
            v.push(
                "the Java client, so what closes a Java batch (java-gzip-batch-closing) is not \
                 judged: run with --client both and --brokers"
                    .to_string(),
            );
        } else {
            v.push(
                "a Java batch one by one: its figures are kafka-clients' sampled averages over \
                 about the window (1 s samples); its ratio is exact over the window"
                    .to_string(),
            );
        }
        if broker.is_mock() {
            v.push(
                "Apache Kafka's cost: the broker was librdkafka's in-process mock, whose \
                 rdk:mock thread shares this machine's cores with the compressing thread"
                    .to_string(),
            );
        }
        v
    }

    fn notes(&self, _broker: &Broker) -> Vec<String> {
        let mut v = vec![
            format!(
                "acks=1, linger.ms={LINGER_MS}, {} partition(s) round robin, \
                 compression.type={} (level -1 is the codec's default: 6 for gzip)",
                self.opts.partitions,
                self.opts.codec.name()
            ),
            "input per batch counts payload bytes only; librdkafka's batch.size limit also \
             counts the v2 record framing (~10 B per record) and the 61 B batch header, so its \
             input per batch stays a little under batch.size"
                .to_string(),
            format!(
                "each run has its own topic (deleted after it), a warmup of {} messages fully \
                 acknowledged, then a {} window counting acknowledged messages",
                self.opts.warmup_messages,
                units::seconds(self.opts.duration.as_secs_f64())
            ),
        ];
        for (k, val) in &self.opts.common.property {
            v.push(format!("-X {k}={val} (applied last, librdkafka only)"));
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn probe(args: &[&str]) -> GzipBatch {
        let mut argv = vec!["probe-gzip-batch"];
        argv.extend_from_slice(args);
        GzipBatch::new(Options::try_parse_from(argv).unwrap())
    }

    #[test]
    fn points_are_levels_by_batch_sizes_deduplicated() {
        let p = probe(&["--batch-size", "16384,90112,16384", "--level", "-1,1,-1"]);
        let broker_free: Vec<(i32, u64)> = {
            let sizes = dedup(&p.opts.batch_size);
            p.levels()
                .iter()
                .flat_map(|&l| sizes.iter().map(move |&b| (l, b)))
                .collect()
        };
        assert_eq!(
            broker_free,
            vec![(-1, 16384), (-1, 90112), (1, 16384), (1, 90112)]
        );
        assert_eq!(p.levels(), vec![-1, 1]);
        let pt = Point {
            codec: Codec::Gzip,
            level: -1,
            batch_size: 16384,
        };
        assert_eq!(p.label(&pt), "default-batch16384");
        let v = serde_json::to_value(pt).unwrap();
        assert_eq!(v["compression.type"], "gzip");
        assert_eq!(v["batch.size"], 16384);
    }

    #[test]
    fn bad_lists_are_refused_by_the_parser() {
        let argv = |a: &[&str]| {
            let mut v = vec!["p"];
            v.extend_from_slice(a);
            Options::try_parse_from(v)
        };
        assert!(argv(&["--batch-size", "16384,,32768"]).is_err());
        assert!(argv(&["--batch-size", ""]).is_err());
        assert!(argv(&["--batch-size", "0"]).is_err());
        assert!(argv(&["--level", "13"]).is_err());
        assert!(argv(&["--level", "x"]).is_err());
        assert!(argv(&["--codec", "brotli"]).is_err());
        assert!(argv(&["--level", "-1,1"]).is_ok());
    }

    #[test]
    fn a_batch_size_past_message_max_bytes_is_usage() {
        let p = probe(&["--batch-size", "2000000"]);
        assert_eq!(
            p.check().unwrap_err().exit_code(),
            crate::kit::error::exit::USAGE
        );
        let p = probe(&["--batch-size", "2000000", "-X", "message.max.bytes=3000000"]);
        assert!(p.check().is_ok());
        let p = probe(&["-X", "message.max.bytes=lots"]);
        assert!(p.check().unwrap_err().to_string().contains("not a number"));
    }
}
