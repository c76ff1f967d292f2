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
//!
//! Here: the points and the Probe impl. Beside it: the options and the probe (`options`), a
//! point (`point`), a run's figures (`figures`), librdkafka's run (`run`), Java's (`java`), the
//! catalogue's evidence (`evidence`), the report's text (`render`).

mod evidence;
mod figures;
mod java;
mod options;
mod point;
mod render;
mod run;

pub use evidence::{inflight_evidence, linger_evidence};
pub use figures::Figures;
pub use options::{InflightLatency, Options};
pub use point::{window_label, Point};

use crate::kit::broker::Broker;
use crate::kit::cli::CommonArgs;
use crate::kit::error::Result;
use crate::kit::paced::producer_settings;
use crate::kit::payload::{PayloadKind, Pool};
use crate::kit::{Context, Probe, Sweep};
use kgap_analyzers::findings::probe_result::{Client, ProbeResult};
use kgap_analyzers::findings::{
    inflight_latency as inflight, java_per_broker_linger as java_linger,
    per_partition_linger as linger, Verdict,
};
use kgap_analyzers::vocab::svg::LineChart;
use std::path::Path;

pub use inflight::DEFAULT_WINDOW;

/// What every run shares: the payload pool.
pub struct Setup {
    pool: Pool,
}

impl InflightLatency {
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
