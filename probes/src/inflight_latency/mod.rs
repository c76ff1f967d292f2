//! `probe-inflight-latency`: the post's latency findings, librdkafka's in-flight window and
//! its per-partition linger (and Java's per-broker one).
//!
//! At linger.ms=0 and 50k msg/s, librdkafka's default window (max.in.flight 1000000) gave a
//! send-to-ack p50/p99 of 14.1/26.4 ms; max.in.flight=5 gave 0.47/1.28 ms at the same rate.
//! At linger.ms=5 and 1k msg/s over 6 partitions librdkafka's p50 was 5.1 ms and Java's 2.8.
//! The probe paces a producer at fixed rates over linger.ms × max.in.flight, each run on a
//! topic of its own: send-to-ack is librdkafka's own per-message latency at a delivery report
//! served as it arrives ([`crate::kit::paced`]), end-to-end is a consumer in the same process
//! reading the payload's stamp, and statistics give requests, batches and the requests
//! waiting on the connection. `--client both` runs the Java companion's e2e mode at the same
//! points. The catalogue decides: [`kgap_analyzers::findings::inflight_latency`],
//! [`per_partition_linger`](kgap_analyzers::findings::per_partition_linger) and, when Java
//! ran, [`java_per_broker_linger`](kgap_analyzers::findings::java_per_broker_linger).

mod evidence;
mod java;
mod render;
mod run;

pub use evidence::{inflight_evidence, linger_evidence};

use crate::kit::broker::Broker;
use crate::kit::cli::{parse_duration, CommonArgs};
use crate::kit::error::Result;
use crate::kit::java::Client as ClientChoice;
use crate::kit::measure::ThreadFigure;
use crate::kit::paced::producer_settings;
use crate::kit::payload::{PayloadKind, Pool};
use crate::kit::{Context, Probe, Sweep};
use kgap_analyzers::findings::probe_result::{Client, ProbeResult};
use kgap_analyzers::findings::{
    inflight_latency as inflight, java_per_broker_linger as java_linger,
    per_partition_linger as linger, Verdict,
};
use kgap_analyzers::vocab::svg::LineChart;
use serde::Serialize;
use std::path::Path;
use std::time::Duration;

pub use inflight::DEFAULT_WINDOW;

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

/// One point: a paced rate, linger.ms and max.in.flight.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
pub struct Point {
    pub rate_per_s: u64,
    #[serde(rename = "linger.ms")]
    pub linger_ms: u64,
    #[serde(rename = "max.in.flight.requests.per.connection")]
    pub max_in_flight: u64,
}

/// One run's figures, either client's (what one did not measure is absent).
#[derive(Debug, Clone, Default, Serialize)]
pub struct Figures {
    /// The run's own topic (created before, deleted after it).
    pub topic: String,
    pub rate_target_per_s: u64,
    /// Messages handed to the client per second in the window.
    pub rate_achieved_per_s: f64,
    /// At least 97% of the target (the catalogue's `SUSTAINED_SHARE`).
    pub sustained: bool,
    pub window_s: f64,
    pub pacer_worst_lag_ms: f64,
    pub pacer_reanchors: u64,
    /// Send-to-ack: librdkafka's own per-message latency (`rd_kafka_message_latency`) as the
    /// report is served; Java's send callback.
    pub ack_count: u64,
    pub ack_ms_p50: f64,
    pub ack_ms_p90: Option<f64>,
    pub ack_ms_p99: f64,
    pub ack_ms_p999: Option<f64>,
    pub ack_ms_max: f64,
    /// End-to-end: the payload's send stamp to the consumer in the same process (or JVM).
    pub e2e_count: u64,
    pub e2e_ms_p50: f64,
    pub e2e_ms_p90: f64,
    pub e2e_ms_p99: f64,
    pub e2e_ms_p999: f64,
    pub e2e_ms_max: f64,
    /// Window messages the consumer never saw.
    pub e2e_missing: i64,
    /// librdkafka: from a delivery report landing in the empty queue to its serving.
    pub delivery_serve_ms_p50: Option<f64>,
    pub delivery_serve_ms_p99: Option<f64>,
    pub delivery_serve_ms_max: Option<f64>,
    /// librdkafka's statistics over the window.
    pub produce_requests_per_s: Option<f64>,
    pub msgs_per_batch_mean: Option<f64>,
    pub batch_bytes_mean: Option<f64>,
    pub rtt_ms_p50: Option<f64>,
    pub rtt_ms_p99: Option<f64>,
    /// Requests awaiting a response on the connection (waitresp_cnt), mean of the emits.
    pub requests_in_flight_mean: Option<f64>,
    /// Each broker connection over the window (librdkafka runs; the figures above are the
    /// client's, summed or the busiest connection's).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub brokers: Vec<crate::kit::broker_figures::BrokerFigures>,
    /// The probe process's cores and threads over the window (librdkafka runs).
    pub cpu_cores: Option<f64>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub threads: Vec<ThreadFigure>,
    /// The Java companion's JVM: GC time and process CPU in the window.
    pub gc_time_ms: Option<u64>,
    pub process_cpu_s: Option<f64>,
    /// [latency ms, percentile] points of the CDFs, for the charts (librdkafka runs).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ack_cdf: Vec<[f64; 2]>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub e2e_cdf: Vec<[f64; 2]>,
}

/// What every run shares: the payload pool.
pub struct Setup {
    pool: Pool,
}

impl InflightLatency {
    pub fn new(opts: Options) -> InflightLatency {
        InflightLatency { opts }
    }

    fn java_runs(&self) -> bool {
        self.clients().contains(&Client::Java)
    }
}

fn dedup(v: &[u64]) -> Vec<u64> {
    let mut out: Vec<u64> = Vec::new();
    for &x in v {
        if !out.contains(&x) {
            out.push(x);
        }
    }
    out
}

/// `default` for librdkafka's default window, else the number.
pub fn window_label(max_in_flight: u64) -> String {
    if max_in_flight == DEFAULT_WINDOW {
        "default".into()
    } else {
        max_in_flight.to_string()
    }
}

impl Probe for InflightLatency {
    type Point = Point;
    type Figures = Figures;
    type Setup<'c> = Setup;
    const NAME: &'static str = "probe-inflight-latency";

    fn common(&self) -> &CommonArgs {
        &self.opts.common
    }

    fn clients(&self) -> Vec<Client> {
        self.opts.client.clients()
    }

    fn points(&self, _broker: &Broker) -> Vec<Point> {
        let mut v = Vec::new();
        for &rate_per_s in &dedup(&self.opts.rates) {
            for &linger_ms in &dedup(&self.opts.linger_ms) {
                for &max_in_flight in &dedup(&self.opts.max_in_flight) {
                    v.push(Point {
                        rate_per_s,
                        linger_ms,
                        max_in_flight,
                    });
                }
            }
        }
        v
    }

    fn label(&self, p: &Point) -> String {
        format!(
            "rate{}-linger{}-inflight{}",
            p.rate_per_s,
            p.linger_ms,
            window_label(p.max_in_flight)
        )
    }

    fn validate(&self, broker: &Broker, points: &[Point]) -> Result<()> {
        for p in points {
            broker.validate(&producer_settings(p.linger_ms, p.max_in_flight))?;
        }
        Ok(())
    }

    fn prepare(&self, _cx: &Context, result: &mut ProbeResult<Figures>) -> Result<Setup> {
        let pool = Pool::new(self.opts.size as usize, PayloadKind::Random);
        result.payload = Some(pool.info());
        Ok(Setup { pool })
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
            Client::Librdkafka => run::once(cx, &self.opts, &setup.pool, p, dir),
            Client::Java => java::once(cx, &self.opts, &setup.pool, p, dir),
        }
    }

    fn describe(&self, f: &Figures) -> String {
        render::describe(f)
    }

    fn window_s(&self, f: &Figures) -> Option<f64> {
        Some(f.window_s)
    }

    fn run_topics(&self, f: &Figures) -> Vec<String> {
        // Each run made and deleted a topic of its own.
        vec![f.topic.clone()]
    }

    fn verdicts(&self, sweep: &Sweep<Self>) -> Vec<Verdict> {
        let mut v = vec![inflight::decide(&inflight_evidence(sweep))];
        let partitions = self.opts.partitions as u32;
        v.push(
            match linger_evidence(sweep, Client::Librdkafka, partitions) {
                Some(e) => linger::decide(&e),
                None => Verdict::cannot_tell(
                    &linger::FINDING,
                    "librdkafka measured no linger.ms above 0 beside linger.ms=0 at the same rate \
                 and window (e.g. --rates 1000 --linger-ms 0,5)",
                ),
            },
        );
        if self.java_runs() {
            v.push(match linger_evidence(sweep, Client::Java, partitions) {
                Some(e) => java_linger::decide(&e),
                None => java_linger::not_measured(
                    "the Java client measured no linger.ms above 0 beside linger.ms=0 at the \
                     same rate and window (e.g. --rates 1000 --linger-ms 0,5)",
                ),
            });
        }
        v
    }

    fn headline(&self, _sweep: &Sweep<Self>) -> String {
        format!(
            "{} B messages paced over {} partitions, a {} warmup and a {} window per run",
            self.opts.size,
            self.opts.partitions,
            kgap_analyzers::vocab::units::seconds(self.opts.warmup.as_secs_f64()),
            kgap_analyzers::vocab::units::seconds(self.opts.duration.as_secs_f64())
        )
    }

    fn render(&self, sweep: &Sweep<Self>) -> String {
        render::text(sweep)
    }

    fn charts(&self, sweep: &Sweep<Self>) -> Vec<(String, LineChart)> {
        render::charts(sweep)
    }

    fn not_measured(&self, broker: &Broker) -> Vec<String> {
        let mut v = vec![
            "latency above the rates swept, and throughput (the producer is paced)".to_string(),
            "messages sent during the warmup (not recorded)".to_string(),
        ];
        if broker.is_mock() {
            v.push(
                "Apache Kafka's per-request cost: the broker was librdkafka's in-process mock"
                    .to_string(),
            );
        }
        if self.java_runs() {
            v.push(
                "Java's send-to-ack p90 and p99.9, its requests and batches (the companion \
                 reports send-to-ack p50, p99 and max)"
                    .to_string(),
            );
        }
        v
    }

    fn notes(&self, broker: &Broker) -> Vec<String> {
        let mut v = vec![format!(
            "each run: its own topic of {} partitions, {} B messages stamped with the send time, \
             a {:.1} s warmup at the rate, then a {:.1} s window; acks=1",
            self.opts.partitions,
            self.opts.size,
            self.opts.warmup.as_secs_f64(),
            self.opts.duration.as_secs_f64()
        )];
        if broker.is_mock() {
            v.push(
                "the consumer fetches with fetch.wait.max.ms=1 on the mock, which holds an \
                 empty fetch for the full wait even when data arrives (Apache Kafka answers at \
                 once)"
                    .to_string(),
            );
        }
        if self.java_runs() {
            v.push(java::note(self.opts.warmup));
        }
        for (k, val) in broker.overrides() {
            v.push(format!(
                "-X {k}={val} (applied last to librdkafka's clients)"
            ));
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn probe(args: &[&str]) -> InflightLatency {
        let mut argv = vec!["probe-inflight-latency"];
        argv.extend_from_slice(args);
        InflightLatency::new(Options::try_parse_from(argv).unwrap())
    }

    #[test]
    fn points_are_rates_by_lingers_by_windows_without_repeats() {
        let p = probe(&[
            "--rates",
            "1000,50000,1000",
            "--linger-ms",
            "0",
            "--max-in-flight",
            "5",
        ]);
        let b = Broker::start(None, &[]).unwrap();
        let pts = p.points(&b);
        assert_eq!(pts.len(), 2);
        assert_eq!(p.label(&pts[0]), "rate1000-linger0-inflight5");
        let d = probe(&[]).points(&b);
        assert_eq!(d.len(), 12);
        assert_eq!(probe(&[]).label(&d[0]), "rate1000-linger0-inflightdefault");
        let v = serde_json::to_value(d[0]).unwrap();
        assert_eq!(v["max.in.flight.requests.per.connection"], 1_000_000);
        assert_eq!(v["linger.ms"], 0);
    }

    #[test]
    fn bad_lists_are_refused_by_the_parser() {
        let argv = |k: &str, a: &str| Options::try_parse_from(["p", k, a]);
        assert!(argv("--rates", "1000,,20").is_err());
        assert!(argv("--rates", "0").is_err());
        assert!(argv("--max-in-flight", "0").is_err());
        assert!(argv("--linger-ms", "five").is_err());
        assert!(argv("--size", "4").is_err());
        assert!(argv("--client", "go").is_err());
    }
}
