//! `probe-fetch-backoff`: Gap 2 of the post, the consumer that took naps.
//!
//! When a partition's local queue reaches queued.min.messages (100,000 by default),
//! librdkafka stops fetching it for fetch.queue.backoff.ms (1000 ms by default). At 100 B the
//! application drains 100,000 messages in a few milliseconds, then the fetcher sleeps for the
//! rest of the second. The probe prefills its own topic once, then consumes it with a
//! BaseConsumer poll loop once per backoff value and rep, counting the backoffs in its own
//! `debug=fetch` log (through the fetch-log analyzer) and the naps in its 100 ms slots. The
//! catalogue's rule ([`kgap_analyzers::findings::fetch_backoff`]) decides.
//!
//! Here: the points, the prefilled topic and one run. Beside it: the options and the probe
//! (`options`), a run's figures (`figures`), the catalogue's evidence (`evidence`), the
//! report's text (`render`).

mod evidence;
mod figures;
mod options;
mod render;

pub use evidence::{evidence, queued_evidence, zero_evidence, DEFAULT_QUEUED_MIN_MESSAGES};
pub use figures::Figures;
pub use options::{
    FetchBackoff, Options, DEFAULT_BACKOFF_MS, DEFAULT_WINDOW, EXTERNAL_PARTITIONS, MOCK_PARTITIONS,
};

use crate::kit::broker::{Broker, TopicGuard};
use crate::kit::broker_figures;
use crate::kit::cli::CommonArgs;
use crate::kit::consume::{self, ConsumeApi, ConsumeRun};
use crate::kit::consumer_figures::ConsumerFigures;
use crate::kit::consumer_topic::{self, PrefillPlan};
use crate::kit::error::Result;
use crate::kit::probe::{Context, Probe, Sweep};
use kgap_analyzers::findings::probe_result::{Client, ProbeResult};
use kgap_analyzers::findings::Verdict;
use kgap_analyzers::findings::{fetch_backoff as rule, fetch_backoff_zero, queued_min_messages};
use serde::Serialize;
use std::path::Path;

/// One point: a fetch.queue.backoff.ms value, and queued.min.messages when it is raised.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
pub struct Point {
    #[serde(rename = "fetch.queue.backoff.ms")]
    pub backoff_ms: u64,
    /// None: the consumer's default (librdkafka's 100000; the mock's scaled value).
    #[serde(
        rename = "queued.min.messages",
        skip_serializing_if = "Option::is_none"
    )]
    pub queued_min_messages: Option<u64>,
}

impl Point {
    /// The consumer's settings at this point.
    pub fn settings(&self, group: &str, mock: bool) -> Vec<(&'static str, String)> {
        let mut v = consumer_topic::consumer_settings(self.backoff_ms, group, mock);
        if let Some(n) = self.queued_min_messages {
            v.retain(|(k, _)| *k != "queued.min.messages");
            v.push(("queued.min.messages", n.to_string()));
        }
        v
    }
}

/// The prefilled topic every run reads from the start.
pub struct Setup<'c> {
    topic: TopicGuard<'c>,
    prefill: PrefillPlan,
}

impl Probe for FetchBackoff {
    type Point = Point;
    type Figures = Figures;
    type Setup<'c> = Setup<'c>;
    const NAME: &'static str = "probe-fetch-backoff";

    fn common(&self) -> &CommonArgs {
        &self.opts.common
    }

    fn points(&self, _broker: &Broker) -> Vec<Point> {
        let mut v: Vec<Point> = self
            .settings()
            .into_iter()
            .map(|backoff_ms| Point {
                backoff_ms,
                queued_min_messages: None,
            })
            .collect();
        let mut raised = self.opts.queued_min_messages.clone();
        raised.dedup();
        if !raised.is_empty() && !v.iter().any(|p| p.backoff_ms == DEFAULT_BACKOFF_MS) {
            // The raised setting is compared with the default at the same backoff.
            v.insert(
                0,
                Point {
                    backoff_ms: DEFAULT_BACKOFF_MS,
                    queued_min_messages: None,
                },
            );
        }
        v.extend(raised.into_iter().map(|n| Point {
            backoff_ms: DEFAULT_BACKOFF_MS,
            queued_min_messages: Some(n),
        }));
        v
    }

    fn label(&self, p: &Point) -> String {
        match p.queued_min_messages {
            Some(n) => format!("backoff-{}ms-qmm{n}", p.backoff_ms),
            None => format!("backoff-{}ms", p.backoff_ms),
        }
    }

    fn validate(&self, broker: &Broker, points: &[Point]) -> Result<()> {
        for p in points {
            broker.validate(&p.settings("kgap.validate", broker.is_mock()))?;
        }
        Ok(())
    }

    fn prepare<'c>(&self, cx: &'c Context, result: &mut ProbeResult<Figures>) -> Result<Setup<'c>> {
        let broker = &cx.broker;
        let plan = self.prefill(broker);
        let partitions = self.partitions(broker);
        let topic = consumer_topic::create_prefilled(
            cx,
            Self::NAME,
            partitions,
            self.opts.size as usize,
            &plan,
            result,
        )?;
        Ok(Setup {
            topic,
            prefill: plan,
        })
    }

    fn run(
        &self,
        cx: &Context,
        setup: &Setup<'_>,
        _client: Client,
        p: &Point,
        dir: &Path,
    ) -> Result<Option<Figures>> {
        let run = ConsumeRun {
            api: ConsumeApi::Poll,
            settings: p.settings(
                &crate::kit::broker::topic_name("probe-fetch-backoff-group"),
                cx.broker.is_mock(),
            ),
            backoff_ms: p.backoff_ms,
            duration: Some(self.opts.duration),
            expected: setup.prefill.messages,
        };
        match consume::measure_window(&cx.broker, &setup.topic, &run, dir)? {
            Some(w) => {
                let emits =
                    figures::window_emits(&dir.join("stats.jsonl"), w.start_wall_s, w.end_wall_s);
                let brokers = broker_figures::per_broker(&emits, "Fetch", &w.window.threads);
                ConsumerFigures::of(w).map(|consumer| Some(Figures { consumer, brokers }))
            }
            None => Ok(None),
        }
    }

    fn describe(&self, f: &Figures) -> String {
        render::describe(f)
    }

    fn window_s(&self, f: &Figures) -> Option<f64> {
        Some(f.window.window_s)
    }

    fn verdicts(&self, sweep: &Sweep<Self>) -> Vec<Verdict> {
        let mut v = vec![match evidence(sweep) {
            Some(e) => rule::decide(&e),
            None => Verdict::cannot_tell(&rule::FINDING, "nothing was measured"),
        }];
        // The post's two corners; CANNOT TELL with how to run them when not swept.
        v.push(match zero_evidence(sweep) {
            Some(e) => fetch_backoff_zero::decide(&e),
            None => Verdict::cannot_tell(
                &fetch_backoff_zero::FINDING,
                "0 ms and a small nonzero backoff were not both measured (--backoff-ms \
                 1000,10,0)",
            ),
        });
        v.push(
            match queued_evidence(sweep, sweep.result.broker.is_mock()) {
                Some(e) => queued_min_messages::decide(&e),
                None => Verdict::cannot_tell(
                    &queued_min_messages::FINDING,
                    "a raised queued.min.messages was not measured beside the default at 1000 ms \
                 (--queued-min-messages 1000000)",
                ),
            },
        );
        v
    }

    fn headline(&self, sweep: &Sweep<Self>) -> String {
        render::headline(sweep)
    }

    fn render(&self, sweep: &Sweep<Self>) -> String {
        render::text(sweep)
    }

    fn not_measured(&self, broker: &Broker) -> Vec<String> {
        let plan = self.prefill(broker);
        let mut v = vec![
            "end-to-end latency (this probe measures consumer throughput only)".to_string(),
            "fetch.queue.backoff.ms=0 and a raised queued.min.messages unless swept \
             (--backoff-ms 1000,10,0, --queued-min-messages 1000000)"
                .to_string(),
            "CPU of threads that exited inside the window (in cpu_cores, not per thread)"
                .to_string(),
            "backoffs before the window (warmup: the first 10% of messages) and after it"
                .to_string(),
        ];
        if broker.is_mock() {
            v.push(
                "Apache Kafka's per-request cost: the broker was librdkafka's in-process mock"
                    .to_string(),
            );
        }
        if plan.compression != "none" {
            v.push(format!(
                "an uncompressed consumer: the prefill was {}-compressed, so the consumer's \
                 broker thread also decompresses",
                plan.compression
            ));
        }
        v
    }

    fn notes(&self, broker: &Broker) -> Vec<String> {
        let mut v = Vec::new();
        if broker.is_mock() {
            v.extend(consumer_topic::mock_note(broker.overrides()));
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn probe(args: &[&str]) -> FetchBackoff {
        let mut argv = vec!["probe-fetch-backoff"];
        argv.extend_from_slice(args);
        FetchBackoff::new(Options::try_parse_from(argv).unwrap())
    }

    #[test]
    fn a_single_value_is_compared_with_the_default() {
        assert_eq!(probe(&["--backoff-ms", "10"]).settings(), vec![1000, 10]);
        assert_eq!(probe(&["--backoff-ms", "1000"]).settings(), vec![1000]);
        assert_eq!(
            probe(&["--backoff-ms", "1000,100,10,0"]).settings(),
            vec![1000, 100, 10, 0]
        );
        assert_eq!(probe(&["--backoff-ms", "10,10"]).settings(), vec![10]);
    }

    #[test]
    fn a_raised_queued_min_messages_runs_beside_the_default_backoff() {
        let b = Broker::start(None, &[]).unwrap();
        let p = probe(&["--backoff-ms", "10", "--queued-min-messages", "1000000"]);
        let pts = p.points(&b);
        assert_eq!(pts.len(), 3, "{pts:?}");
        assert_eq!(pts[2].queued_min_messages, Some(1_000_000));
        assert_eq!(p.label(&pts[2]), "backoff-1000ms-qmm1000000");
        let s = pts[2].settings("g", true);
        assert_eq!(
            s.iter()
                .filter(|(k, _)| *k == "queued.min.messages")
                .count(),
            1,
            "the raised value replaces the mock's: {s:?}"
        );
        assert!(s.contains(&("queued.min.messages", "1000000".into())));
        let v = serde_json::to_value(pts[0]).unwrap();
        assert_eq!(v, serde_json::json!({"fetch.queue.backoff.ms": 1000}));
    }

    #[test]
    fn bad_lists_are_refused_by_the_parser() {
        let argv = |a: &str| Options::try_parse_from(["p", "--backoff-ms", a]);
        assert!(argv("10,,20").is_err());
        assert!(argv("ten").is_err());
        assert!(argv("-5").is_err());
        assert!(Options::try_parse_from(["p", "--messages", "5"]).is_err());
    }
}
