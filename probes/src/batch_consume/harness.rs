//! Harness mode: is the probe measuring librdkafka, not itself? The probe's batch loop and
//! librdkafka's own rdkafka_performance read the same prefilled topic, like for like:
//! - the same group semantics: each subscribes with a fresh group id (rdkafka_performance
//!   `-G`), nothing committed, the same consumer properties (rdkafka_performance's own
//!   defaults, set on both: queued.min.messages=1000000, session.timeout.ms=6000,
//!   enable.partition.eof=true), the same batch size;
//! - the same start point: every partition from its first offset;
//! - the same timing of the window: from the first message the application sees to the
//!   N-th, N the same for both and below what the topic holds (at the topic's end
//!   rdkafka_performance's last batch call would wait out its 1000 ms timeout).
//!
//! Beside them, the throughput mode's own window on the same topic (assign, the first 10%
//! as warmup, the whole topic), so a reader sees what that window's definition does to the
//! figure. No finding is decided: the ratio is the harness's check (target ≥ 0.97).

use super::notes::override_notes;
use super::options::{Options, NAME};
use super::pair::{pair_settings, Figures, Point, Side};
use super::rdkafka_performance::{self as rkp};
use super::subscribed;
use super::throughput;
use super::topic::{self, prefilled};
use crate::kit::batch::WaitPolicy;
use crate::kit::broker::{Broker, TopicGuard};
use crate::kit::cli::CommonArgs;
use crate::kit::consume::{self, ConsumeApi, ConsumeRun};
use crate::kit::error::{ProbeError, Result};
use crate::kit::measure;
use crate::kit::{Context, Probe, Sweep, Table};
use kgap_analyzers::findings::probe_result::{Client, ProbeResult};
use kgap_analyzers::findings::reps::{ratio, Apart, MIN_REPS};
use kgap_analyzers::findings::{Reps, Verdict};
use kgap_analyzers::vocab::report::wrap_into;
use kgap_analyzers::vocab::units;
use std::path::Path;

/// The probe's loop should read at least this share of rdkafka_performance's rate.
pub const TARGET_RATIO: f64 = 0.97;
/// The share of the topic both sides of the pair read (the rest keeps the last batch full).
pub const MEASURED_SHARE: f64 = 0.9;

/// The probe in harness mode.
pub struct Harness {
    pub opts: Options,
}

pub struct Setup<'c> {
    topic: TopicGuard<'c>,
    /// Messages in the topic, and how many each side of the pair reads.
    prefilled: u64,
    measured: u64,
}

impl Harness {
    pub fn new(opts: Options) -> Harness {
        Harness { opts }
    }

    fn backoff(&self) -> u64 {
        self.opts.backoffs().into_iter().min().unwrap_or(10)
    }

    fn rdkafka_performance(&self, cx: &Context, setup: &Setup<'_>, p: &Point) -> Result<Figures> {
        let path = self
            .opts
            .rdkafka_performance
            .as_deref()
            .expect("harness mode has a path");
        let group = crate::kit::broker::topic_name("probe-batch-consume-rkp");
        let run = rkp::run(
            &cx.broker,
            &rkp::Args {
                path,
                topic: &setup.topic.name,
                group: &group,
                batch: p.batch,
                messages: setup.measured,
                settings: &pair_settings(p.backoff_ms),
            },
        );
        subscribed::delete_group(&cx.broker, &group);
        let run = run?;
        Ok(Figures {
            messages: run.messages,
            window_s: measure::round3(run.window_s),
            msgs_per_s: run.msgs_per_s.round(),
            mb_per_s: run.mb_per_s,
            app_cores: None,
            broker_thread_cores: None,
            consumer_cores: None,
        })
    }

    fn window(
        &self,
        cx: &Context,
        setup: &Setup<'_>,
        p: &Point,
        dir: &Path,
    ) -> Result<Option<Figures>> {
        let run = ConsumeRun {
            api: ConsumeApi::Batch {
                size: p.batch,
                policy: WaitPolicy::Fixed,
            },
            settings: topic::settings(p.backoff_ms, cx.broker.is_mock()),
            backoff_ms: p.backoff_ms,
            duration: Some(self.opts.duration),
            expected: setup.prefilled,
        };
        let Some(w) = consume::measure_window(&cx.broker, &setup.topic, &run, dir)? else {
            return Ok(None);
        };
        let f = throughput::Figures::of(crate::kit::consumer_figures::ConsumerFigures::of(w)?);
        Ok(Some(Figures {
            messages: f.run.window.messages,
            window_s: measure::round3(f.run.window.window_s),
            msgs_per_s: f.run.window.msgs_per_s.round(),
            mb_per_s: measure::round3(f.run.window.mb_per_s),
            app_cores: Some(f.app_cores),
            broker_thread_cores: Some(f.broker_thread_cores),
            consumer_cores: Some(f.run.consumer_cores),
        }))
    }

    /// The pair's rates over reps: the probe's loop, rdkafka_performance's.
    fn pair(&self, sweep: &Sweep<Self>) -> (Reps, Reps) {
        let of = |side: Side| {
            sweep
                .measured()
                .find(|m| m.point.side == side)
                .map_or_else(Reps::default, |m| m.reps(|f| f.msgs_per_s))
        };
        (of(Side::ProbeLoop), of(Side::RdkafkaPerformance))
    }

    /// The ratio in one sentence (the report's and the result's note).
    fn comparison(&self, sweep: &Sweep<Self>) -> String {
        let (probe, rkp) = self.pair(sweep);
        match ratio(&probe, &rkp) {
            Ok(r) => {
                format!(
                "harness: the probe's batch loop read {} against rdkafka_performance's {} on the \
                 same topic: {} (target ≥ {TARGET_RATIO}: {}; the ranges {})",
                probe.show(units::msgs_per_s),
                rkp.show(units::msgs_per_s),
                units::times(r.value),
                if r.value >= TARGET_RATIO { "met" } else { "NOT met" },
                if probe.n().min(rkp.n()) < MIN_REPS {
                    "need 3 reps a side to be a range"
                } else if r.apart == Apart::Overlap {
                    "overlap"
                } else {
                    "are apart"
                }
            )
            }
            Err(why) => format!("harness: no ratio: {why}"),
        }
    }
}

impl Probe for Harness {
    type Point = Point;
    type Figures = Figures;
    type Setup<'c> = Setup<'c>;
    const NAME: &'static str = NAME;

    fn common(&self) -> &CommonArgs {
        &self.opts.common
    }

    fn check(&self) -> Result<()> {
        self.opts.check()?;
        match &self.opts.rdkafka_performance {
            Some(p) if p.is_file() => Ok(()),
            Some(p) => Err(ProbeError::Usage(format!(
                "--rdkafka-performance: {} is not a file (scripts/build-rdkafka-performance \
                 builds it)",
                p.display()
            ))),
            None => Err(ProbeError::Usage(
                "harness mode needs --rdkafka-performance".into(),
            )),
        }
    }

    fn points(&self, _broker: &Broker) -> Vec<Point> {
        [
            Side::ProbeLoop,
            Side::RdkafkaPerformance,
            Side::ThroughputWindow,
        ]
        .into_iter()
        .map(|side| Point {
            side,
            batch: self.opts.batch as usize,
            backoff_ms: self.backoff(),
        })
        .collect()
    }

    fn label(&self, p: &Point) -> String {
        p.side.name().replace('_', "-")
    }

    fn validate(&self, broker: &Broker, points: &[Point]) -> Result<()> {
        for p in points {
            let mut s = pair_settings(p.backoff_ms);
            s.push(("group.id", "kgap.validate".into()));
            broker.validate(&s)?;
            broker.validate(&topic::settings(p.backoff_ms, broker.is_mock()))?;
        }
        Ok(())
    }

    fn prepare<'c>(&self, cx: &'c Context, result: &mut ProbeResult<Figures>) -> Result<Setup<'c>> {
        let (topic, plan) = prefilled(cx, &self.opts, result)?;
        let measured = ((plan.messages as f64 * MEASURED_SHARE) as u64).max(1);
        Ok(Setup {
            topic,
            prefilled: plan.messages,
            measured,
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
        match p.side {
            Side::ProbeLoop => subscribed::read(&cx.broker, &setup.topic, setup.measured, p),
            Side::RdkafkaPerformance => self.rdkafka_performance(cx, setup, p).map(Some),
            Side::ThroughputWindow => self.window(cx, setup, p, dir),
        }
    }

    fn describe(&self, f: &Figures) -> String {
        format!(
            "{} over {} ({} messages)",
            units::msgs_per_s(f.msgs_per_s),
            units::seconds(f.window_s),
            f.messages
        )
    }

    fn window_s(&self, f: &Figures) -> Option<f64> {
        Some(f.window_s)
    }

    fn after(&self, _cx: &Context, _setup: &Setup<'_>, sweep: &mut Sweep<Self>) -> Result<()> {
        let line = self.comparison(sweep);
        sweep.result.notes.push(line);
        Ok(())
    }

    fn verdicts(&self, _sweep: &Sweep<Self>) -> Vec<Verdict> {
        // The harness check is not a finding of the post.
        Vec::new()
    }

    fn headline(&self, sweep: &Sweep<Self>) -> String {
        let size = sweep.result.payload.as_ref().map_or(0, |p| p.size_bytes);
        format!(
            "{size} B messages, harness mode (the probe's batch loop against rdkafka_performance \
             on one topic)"
        )
    }

    fn render(&self, sweep: &Sweep<Self>) -> String {
        let mut t = Table::new([
            "side",
            "msg/s (min–max)",
            "MB/s",
            "window s",
            "messages",
            "app",
            "rdk:broker",
        ]);
        for m in sweep.measured() {
            let med = |f: fn(&Figures) -> f64| m.reps(f).median().unwrap_or(0.0);
            let own = |f: fn(&Figures) -> Option<f64>| {
                m.reps_of(f)
                    .median()
                    .map_or("-".into(), |x| format!("{x:.2}"))
            };
            t.row(vec![
                m.point.side.name().to_string(),
                m.reps(|f| f.msgs_per_s).show(units::si),
                format!("{:.1}", med(|f| f.mb_per_s)),
                format!("{:.2}", med(|f| f.window_s)),
                format!("{:.0}", med(|f| f.messages as f64)),
                own(|f| f.app_cores),
                own(|f| f.broker_thread_cores),
            ]);
        }
        let mut s = t.render();
        s.push('\n');
        if !sweep.result.notes.iter().any(|n| n.starts_with("harness:")) {
            wrap_into(&mut s, "", &self.comparison(sweep));
        }
        wrap_into(
            &mut s,
            "",
            "probe-loop and rdkafka_performance: each subscribes with a fresh group, reads from \
             the first offset with the same properties and batch size, and is timed from its \
             first message to the same count (90% of the topic). throughput-window: the \
             throughput mode's own window on the same topic (assign, after a 10% warmup, to \
             the end), shown beside, not in the ratio. app, rdk:broker: cores of the probe's \
             threads (rdkafka_performance is another process).",
        );
        s
    }

    fn not_measured(&self, _broker: &Broker) -> Vec<String> {
        vec![
            "rdkafka_performance's per-thread CPU (another process)".to_string(),
            "the group join and the first fetch (both sides start their clock at the first \
             message)"
                .to_string(),
        ]
    }

    fn notes(&self, broker: &Broker) -> Vec<String> {
        let mut v = vec![format!(
            "both sides of the pair: {}",
            pair_settings(self.backoff())
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(", ")
        )];
        v.extend(override_notes(broker.overrides()));
        v
    }
}
