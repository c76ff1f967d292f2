//! `probe-fetch-backoff`: Gap 2 of the post, the consumer that took naps.
//!
//! When a partition's local queue reaches queued.min.messages (100,000 by default),
//! librdkafka stops fetching it for fetch.queue.backoff.ms (1000 ms by default). At 100 B the
//! application drains 100,000 messages in a few milliseconds, then the fetcher sleeps for the
//! rest of the second. The probe prefills its own topic once, then consumes it with a
//! BaseConsumer poll loop once per backoff value and rep, counting the backoffs in its own
//! `debug=fetch` log (through the fetch-log analyzer) and the naps in its 100 ms slots. The
//! catalogue's rule ([`kgap_analyzers::findings::fetch_backoff`]) decides.

use crate::kit::broker::{Broker, TopicGuard};
use crate::kit::broker_figures::{self, BrokerFigures};
use crate::kit::cli::{parse_duration, CommonArgs};
use crate::kit::consume::{self, ConsumeApi, ConsumeRun};
use crate::kit::consumer_figures::ConsumerFigures;
use crate::kit::consumer_topic::{self, PrefillChoice, PrefillPlan};
use crate::kit::error::Result;
use crate::kit::payload::{PayloadKind, Pool};
use crate::kit::produce;
use crate::kit::{Context, Probe, Sweep, Table};
use kgap_analyzers::findings::probe_result::{Client, ProbeResult};
use kgap_analyzers::findings::Verdict;
use kgap_analyzers::findings::{fetch_backoff as rule, fetch_backoff_zero, queued_min_messages};
use kgap_analyzers::vocab::report::wrap_into;
use kgap_analyzers::vocab::units;
use serde::Serialize;
use std::path::Path;
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
/// One run's figures: the consumer's, and each broker connection's from its statistics
/// (Fetch requests/s, rtt, requests waiting, the rdk:broker<id> thread). Derefs to the
/// consumer's figures; the JSON keeps them flat, `brokers` beside.
#[derive(Debug, Clone, Serialize)]
pub struct Figures {
    #[serde(flatten)]
    pub consumer: ConsumerFigures,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub brokers: Vec<BrokerFigures>,
}

impl std::ops::Deref for Figures {
    type Target = ConsumerFigures;
    fn deref(&self) -> &ConsumerFigures {
        &self.consumer
    }
}

/// The statistics emits of a consumer run's window (wall clock `time`, whole seconds: the
/// span is the window give or take a second).
fn window_emits(
    path: &Path,
    start_wall_s: f64,
    end_wall_s: f64,
) -> Vec<kgap_analyzers::stats::Stats> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Vec::new();
    };
    let (a, b) = (start_wall_s.floor() as i64, end_wall_s.ceil() as i64);
    text.lines()
        .filter_map(|l| kgap_analyzers::stats::parse(l.as_bytes()).ok())
        .filter(|s| s.time >= a && s.time <= b)
        .collect()
}

pub struct FetchBackoff {
    pub opts: Options,
}

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

    fn partitions(&self, broker: &Broker) -> i32 {
        self.opts.partitions.unwrap_or(if broker.is_mock() {
            MOCK_PARTITIONS
        } else {
            EXTERNAL_PARTITIONS
        })
    }

    fn prefill(&self, broker: &Broker) -> PrefillPlan {
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

/// The typed evidence the catalogue's rule takes: the slowest and fastest settings measured
/// (at the default queued.min.messages; 0 ms is its own finding, not the fast setting).
pub fn evidence(sweep: &Sweep<FetchBackoff>) -> Option<rule::Evidence> {
    let measured: Vec<_> = sweep
        .measured()
        .filter(|m| m.point.queued_min_messages.is_none())
        .collect();
    let slow = measured.iter().max_by_key(|m| m.point.backoff_ms)?;
    let fast = measured
        .iter()
        .filter(|m| m.point.backoff_ms > 0 || measured.len() == 1)
        .min_by_key(|m| m.point.backoff_ms)?;
    let rate = |f: &Figures| f.window.msgs_per_s;
    Some(rule::Evidence {
        slow_backoff_ms: slow.point.backoff_ms,
        fast_backoff_ms: fast.point.backoff_ms,
        slow_msgs_per_s: slow.reps(rate),
        fast_msgs_per_s: fast.reps(rate),
        slow_queue_full_backoffs: slow.reps(|f| f.queue_full_backoffs as f64),
        slow_idle_s: slow.reps(|f| f.window.idle_s),
        slow_window_s: slow.reps(|f| f.window.window_s),
        fast_queue_full_backoffs: fast.reps(|f| f.queue_full_backoffs as f64),
        fast_idle_s: fast.reps(|f| f.window.idle_s),
    })
}

fn queue_full_per_s(f: &Figures) -> f64 {
    if f.window.window_s > 0.0 {
        f.queue_full_backoffs as f64 / f.window.window_s
    } else {
        0.0
    }
}

/// Evidence for `fetch-backoff-zero`: 0 ms against the smallest nonzero backoff below the
/// default, both at the default queued.min.messages.
pub fn zero_evidence(sweep: &Sweep<FetchBackoff>) -> Option<fetch_backoff_zero::Evidence> {
    let at = |b: u64| {
        sweep
            .measured()
            .find(|m| m.point.backoff_ms == b && m.point.queued_min_messages.is_none())
    };
    let zero = at(0)?;
    let low = sweep
        .measured()
        .filter(|m| m.point.queued_min_messages.is_none())
        .filter(|m| m.point.backoff_ms > 0 && m.point.backoff_ms < DEFAULT_BACKOFF_MS)
        .min_by_key(|m| m.point.backoff_ms)?;
    Some(fetch_backoff_zero::Evidence {
        low_backoff_ms: low.point.backoff_ms,
        zero_msgs_per_s: zero.reps(|f| f.window.msgs_per_s),
        low_msgs_per_s: low.reps(|f| f.window.msgs_per_s),
        zero_queue_full_per_s: zero.reps(queue_full_per_s),
        low_queue_full_per_s: low.reps(queue_full_per_s),
    })
}

/// Evidence for `queued-min-messages-fix`: the largest raised queued.min.messages against
/// the default backoff's point at the default queued.min.messages.
pub fn queued_evidence(
    sweep: &Sweep<FetchBackoff>,
    mock: bool,
) -> Option<queued_min_messages::Evidence> {
    let raised = sweep
        .measured()
        .filter(|m| m.point.backoff_ms == DEFAULT_BACKOFF_MS)
        .filter(|m| m.point.queued_min_messages.is_some())
        .max_by_key(|m| m.point.queued_min_messages)?;
    let dflt = sweep.measured().find(|m| {
        m.point.backoff_ms == DEFAULT_BACKOFF_MS && m.point.queued_min_messages.is_none()
    })?;
    let idle = |f: &Figures| {
        if f.window.window_s > 0.0 {
            f.window.idle_s / f.window.window_s
        } else {
            0.0
        }
    };
    Some(queued_min_messages::Evidence {
        backoff_ms: DEFAULT_BACKOFF_MS,
        raised_queued_min_messages: raised.point.queued_min_messages.unwrap_or(0),
        default_queued_min_messages: if mock {
            consumer_topic::MOCK_QUEUED_MIN_MESSAGES
        } else {
            DEFAULT_QUEUED_MIN_MESSAGES
        },
        default_msgs_per_s: dflt.reps(|f| f.window.msgs_per_s),
        raised_msgs_per_s: raised.reps(|f| f.window.msgs_per_s),
        default_queue_full_backoffs: dflt.reps(|f| f.queue_full_backoffs as f64),
        default_idle_share: dflt.reps(idle),
        raised_idle_share: raised.reps(idle),
    })
}

/// librdkafka's default queued.min.messages.
pub const DEFAULT_QUEUED_MIN_MESSAGES: u64 = 100_000;

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
        let pool = Pool::new(self.opts.size as usize, plan.kind);
        result.payload = Some(pool.info());
        let topic = broker.create_topic(Self::NAME, partitions)?;
        result.topics.push(topic.name.clone());
        cx.progress(&format!(
            "topic {} ({partitions} partitions): prefilling {} × {} B {} messages ({} compression)",
            topic.name, plan.messages, self.opts.size, plan.kind, plan.compression
        ));
        let pre = produce::prefill(
            broker,
            &topic.name,
            partitions,
            &pool,
            plan.messages,
            &plan.compression,
            &|l| cx.progress(l),
        )?;
        consumer_topic::check_retained(broker, &topic, plan.messages)?;
        cx.progress(&format!("prefill done in {:.1} s", pre.seconds));
        result.prefill = serde_json::to_value(&pre).ok();
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
                let emits = window_emits(&dir.join("stats.jsonl"), w.start_wall_s, w.end_wall_s);
                let brokers = broker_figures::per_broker(&emits, "Fetch", &w.window.threads);
                ConsumerFigures::of(w).map(|consumer| Some(Figures { consumer, brokers }))
            }
            None => Ok(None),
        }
    }

    fn describe(&self, f: &Figures) -> String {
        format!(
            "{}, {} Queue-full backoffs, idle {} of {}",
            units::msgs_per_s(f.window.msgs_per_s),
            f.queue_full_backoffs,
            units::seconds(f.window.idle_s),
            units::seconds(f.window.window_s)
        )
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
        let messages = sweep
            .measured()
            .next()
            .and_then(|m| m.runs.first())
            .map(|f| f.window.messages.to_string())
            .unwrap_or_else(|| "no".into());
        let size = sweep.result.payload.as_ref().map_or(0, |p| p.size_bytes);
        format!("{messages} × {size} B messages measured per run (after a 10% warmup)")
    }

    fn render(&self, sweep: &Sweep<Self>) -> String {
        let mut t = Table::new([
            "backoff ms",
            "msg/s median (min–max)",
            "MB/s",
            "cores",
            "busiest thread",
            "backoffs",
            "idle s",
            "window s",
        ]);
        for m in sweep.measured() {
            let med = |f: fn(&Figures) -> f64| m.reps(f).median().unwrap_or(0.0);
            let busiest = m
                .runs
                .iter()
                .max_by(|a, b| a.busiest_thread_cores.total_cmp(&b.busiest_thread_cores))
                .map(|f| format!("{} {:.2}", f.busiest_thread, f.busiest_thread_cores))
                .unwrap_or_default();
            t.row(vec![
                match m.point.queued_min_messages {
                    Some(n) => format!("{} (qmm {n})", m.point.backoff_ms),
                    None => m.point.backoff_ms.to_string(),
                },
                m.reps(|f| f.window.msgs_per_s).show(units::si),
                format!("{:.1}", med(|f| f.window.mb_per_s)),
                format!("{:.2}", med(|f| f.consumer_cores)),
                busiest,
                format!("{:.0}", med(|f| f.queue_full_backoffs as f64)),
                format!("{:.1}", med(|f| f.window.idle_s)),
                format!("{:.1}", med(|f| f.window.window_s)),
            ]);
        }
        let mut s = t.render();
        s.push_str("\nmsg/s per second, first rep (k msg/s; a nap shows as a low second):\n");
        for m in sweep.measured() {
            let Some(first) = m.runs.first() else {
                continue;
            };
            let mut line: Vec<String> = first
                .window
                .timeline
                .iter()
                .map(|v| format!("{:.0}", *v as f64 / 1000.0))
                .collect();
            if line.is_empty() {
                line.push("(window shorter than a second)".into());
            }
            s.push_str(&format!(
                "  {:>5} ms: {}\n",
                m.point.backoff_ms,
                line.join(" ")
            ));
        }
        s.push('\n');
        wrap_into(
            &mut s,
            "",
            "cores: the consumer process without the embedded broker's thread. busiest thread: \
             its busiest rep. backoffs: 'Fetch backoff … Local: Queue full' lines in the window \
             (debug=fetch). idle s: 100 ms slots in which no message arrived (naps).",
        );
        let per_broker: Vec<(Vec<String>, Vec<broker_figures::Connection>)> = sweep
            .measured()
            .map(|m| {
                let reps: Vec<&[BrokerFigures]> =
                    m.runs.iter().map(|f| f.brokers.as_slice()).collect();
                (
                    vec![m.point.backoff_ms.to_string()],
                    broker_figures::connections(&reps),
                )
            })
            .filter(|(_, c)| !c.is_empty())
            .collect();
        if !per_broker.is_empty() {
            s.push('\n');
            s.push_str(&broker_figures::table(&["backoff ms"], &per_broker).render());
            s.push('\n');
            wrap_into(
                &mut s,
                "",
                &format!(
                    "{} Here the requests are FetchRequests (a fetcher backs off per \
                     partition, on its leader's connection).",
                    broker_figures::TABLE_NOTE
                ),
            );
        }
        if let Some(d) = sweep
            .measured()
            .flat_map(|m| m.runs.iter())
            .find_map(|f| f.analyzer_diagnosis.as_deref())
        {
            s.push('\n');
            s.push_str("analyze-fetch-log on the probe's own debug log:\n");
            wrap_into(&mut s, "  ", d);
        }
        s
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
