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
//!
//! Here: the points, the message.max.bytes check and the Probe impl. Beside it: the options
//! and the probe (`options`), a point (`point`), the codecs (`codec`), a run's figures
//! (`figures`), librdkafka's run (`librdkafka`), Java's (`companion`), the catalogue's
//! evidence (`evidence`), the report's text (`render`).

mod codec;
mod companion;
pub mod evidence;
mod figures;
mod librdkafka;
mod options;
mod point;
mod render;

pub use codec::{builtin_features, check_codec, Codec};
pub use companion::java_client_settings;
pub use figures::{batch_figures, Figures, JavaFigures, LibrdkafkaFigures};
pub use librdkafka::producer_settings;
pub use options::{GzipBatch, Options, DEFAULT_MESSAGE_MAX_BYTES, LINGER_MS};
pub use point::Point;

use crate::kit::broker::Broker;
use crate::kit::cli::CommonArgs;
use crate::kit::error::{ProbeError, Result};
use crate::kit::java::Client as ClientChoice;
use crate::kit::payload::Pool;
use crate::kit::produce::ThroughputSpec;
use crate::kit::{Context, Probe, Sweep};
use kgap_analyzers::findings::probe_result::{Client, ProbeResult};
use kgap_analyzers::findings::{gzip_batch_semantics, java_gzip_batch_closing, Verdict};
use kgap_analyzers::vocab::svg::LineChart;
use kgap_analyzers::vocab::units;
use options::dedup;
use std::path::Path;

/// What every run shares: the payloads and their SHA-256.
pub struct Setup {
    pool: Pool,
    sha256: String,
}

impl GzipBatch {
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
