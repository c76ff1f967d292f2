//! Throughput mode: one prefilled topic read with each API at each fetch.queue.backoff.ms,
//! the consume thread's and librdkafka's broker thread's cores measured in every run. The
//! catalogue decides `batch-consume` and `librdkafka-broker-thread-limit` from the runs at
//! the smallest backoff.

use super::api::{is_batch, ApiParams};
use super::notes::override_notes;
use super::options::{Options, NAME};
use super::topic::{partitions, prefill_plan, prefilled, settings};
use crate::kit::broker::{Broker, TopicGuard};
use crate::kit::cli::CommonArgs;
use crate::kit::consume::{self, ConsumeApi, ConsumeRun};
use crate::kit::consumer_figures::ConsumerFigures;
use crate::kit::consumer_topic::{self, PrefillPlan};
use crate::kit::error::Result;
use crate::kit::measure::{self, ThreadFigure, APP_THREAD};
use crate::kit::{Context, Measured, Probe, Sweep, Table};
use kgap_analyzers::findings::batch_consume::{self as rule, SATURATED_CORES};
use kgap_analyzers::findings::librdkafka_broker_thread_limit as broker_rule;
use kgap_analyzers::findings::probe_result::{Client, ProbeResult};
use kgap_analyzers::findings::{Reps, Verdict};
use kgap_analyzers::vocab::report::wrap_into;
use kgap_analyzers::vocab::units;
use serde::Serialize;
use std::path::Path;

/// The probe in throughput mode.
pub struct Throughput {
    pub opts: Options,
}

/// One point: an API at a fetch.queue.backoff.ms.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Point {
    #[serde(flatten)]
    pub api: ApiParams,
    #[serde(rename = "fetch.queue.backoff.ms")]
    pub backoff_ms: u64,
}

/// One run's figures: the consumer run's own, and which thread was its limit.
#[derive(Debug, Clone, Serialize)]
pub struct Figures {
    #[serde(flatten)]
    pub run: ConsumerFigures,
    /// Cores of the thread calling poll() or the batch API (`kgap-app`).
    pub app_cores: f64,
    /// The busiest of librdkafka's rdk:broker threads, and its cores.
    pub broker_thread: String,
    pub broker_thread_cores: f64,
    /// The busiest consumer thread (the mock's excluded) when at ≥ 0.9 cores.
    pub saturated_thread: Option<String>,
}

impl Figures {
    pub fn of(run: ConsumerFigures) -> Figures {
        let threads = &run.window.threads;
        let broker = busiest(threads, |n| n.starts_with("rdk:broker"));
        let top = busiest(threads, |n| !n.starts_with("rdk:mock"));
        Figures {
            app_cores: measure::round3(run.cores_of(APP_THREAD)),
            broker_thread: broker.map(|t| t.name.clone()).unwrap_or_default(),
            broker_thread_cores: broker.map_or(0.0, |t| t.cores),
            saturated_thread: top
                .filter(|t| t.cores >= SATURATED_CORES)
                .map(|t| t.name.clone()),
            run,
        }
    }
}

/// The busiest thread whose name passes `keep`.
fn busiest(threads: &[ThreadFigure], keep: impl Fn(&str) -> bool) -> Option<&ThreadFigure> {
    threads
        .iter()
        .filter(|t| keep(&t.name))
        .max_by(|a, b| a.cores.total_cmp(&b.cores))
}

/// The busiest consumer thread other than those `skip` names, over a point's reps: the name
/// it had most often and its cores in each rep (0 where no such thread ran).
fn busiest_other(m: &Measured<'_, Throughput>, skip: impl Fn(&str) -> bool) -> (String, Reps) {
    let keep = |n: &str| !skip(n) && !n.starts_with("rdk:mock");
    let per_rep: Vec<Option<&ThreadFigure>> = m
        .runs
        .iter()
        .map(|f| busiest(&f.run.window.threads, keep))
        .collect();
    let mut names: Vec<&str> = per_rep.iter().flatten().map(|t| t.name.as_str()).collect();
    names.sort_unstable();
    let name = names
        .iter()
        .max_by_key(|n| names.iter().filter(|m| m == n).count())
        .map(|n| n.to_string())
        .unwrap_or_else(|| "no other thread".into());
    let cores = Reps::new(per_rep.iter().map(|t| t.map_or(0.0, |t| t.cores)));
    (name, cores)
}

/// The prefilled topic every run reads from the start.
pub struct Setup<'c> {
    topic: TopicGuard<'c>,
    prefill: PrefillPlan,
}

impl Throughput {
    pub fn new(opts: Options) -> Throughput {
        Throughput { opts }
    }

    fn partitions(&self, broker: &Broker) -> i32 {
        partitions(&self.opts, broker)
    }

    fn prefill(&self, broker: &Broker) -> PrefillPlan {
        prefill_plan(&self.opts, broker)
    }

    /// The runs the verdicts compare: poll() and the fixed batch API at the smallest backoff.
    fn pair<'s>(&self, sweep: &'s Sweep<Self>) -> (Option<u64>, [Option<Measured<'s, Self>>; 2]) {
        let fast = sweep.measured().map(|m| m.point.backoff_ms).min();
        let at = |want: fn(ConsumeApi) -> bool| {
            sweep
                .measured()
                .find(|m| Some(m.point.backoff_ms) == fast && want(m.point.api.api))
        };
        let poll = at(|a| a == ConsumeApi::Poll);
        let fixed = at(|a| is_batch(a, "fixed"));
        (fast, [poll, fixed])
    }
}

/// The catalogue's evidence for `batch-consume`, from poll() and the fixed batch API.
pub fn evidence(
    sweep: &Sweep<Throughput>,
    poll: &Measured<'_, Throughput>,
    fixed: &Measured<'_, Throughput>,
) -> rule::Evidence {
    let (other, other_cores) = busiest_other(poll, |n| n == APP_THREAD);
    rule::Evidence {
        backoff_ms: poll.point.backoff_ms,
        batch_size: fixed.point.api.batch.unwrap_or(0) as u64,
        poll_msgs_per_s: poll.reps(|f| f.run.window.msgs_per_s),
        batch_msgs_per_s: fixed.reps(|f| f.run.window.msgs_per_s),
        poll_app_cores: poll.reps(|f| f.app_cores),
        poll_other_thread: other,
        poll_other_cores: other_cores,
        poll_consumer_cores: poll.reps(|f| f.run.consumer_cores),
        batch_app_cores: fixed.reps(|f| f.app_cores),
        machine_cores: sweep.result.placement.machine_cores,
        client_cores: sweep.result.placement.client_cpus.len(),
    }
}

/// The catalogue's evidence for `librdkafka-broker-thread-limit`, from the fixed batch API.
pub fn broker_evidence(
    sweep: &Sweep<Throughput>,
    fixed: &Measured<'_, Throughput>,
) -> broker_rule::Evidence {
    let (other, other_cores) = busiest_other(fixed, |n| n.starts_with("rdk:broker"));
    let mut names: Vec<&str> = fixed
        .runs
        .iter()
        .map(|f| f.broker_thread.as_str())
        .collect();
    names.sort_unstable();
    let broker_thread = names
        .iter()
        .max_by_key(|n| names.iter().filter(|m| m == n).count())
        .map(|n| n.to_string())
        .unwrap_or_default();
    broker_rule::Evidence {
        backoff_ms: fixed.point.backoff_ms,
        batch_size: fixed.point.api.batch.unwrap_or(0) as u64,
        size_bytes: sweep
            .result
            .payload
            .as_ref()
            .map_or(0, |p| p.size_bytes as u64),
        batch_msgs_per_s: fixed.reps(|f| f.run.window.msgs_per_s),
        broker_thread,
        broker_thread_cores: fixed.reps(|f| f.broker_thread_cores),
        other_thread: other,
        other_cores,
        consumer_cores: fixed.reps(|f| f.run.consumer_cores),
        machine_cores: sweep.result.placement.machine_cores,
        client_cores: sweep.result.placement.client_cpus.len(),
        // This probe runs librdkafka only: the finding's Java half is probe-consumer-clients'.
        java_msgs_per_s: Reps::default(),
        java_poll_cores: Reps::default(),
        own_core: None,
    }
}

impl Probe for Throughput {
    type Point = Point;
    type Figures = Figures;
    type Setup<'c> = Setup<'c>;
    const NAME: &'static str = NAME;

    fn common(&self) -> &CommonArgs {
        &self.opts.common
    }

    fn check(&self) -> Result<()> {
        self.opts.check()
    }

    fn points(&self, _broker: &Broker) -> Vec<Point> {
        let apis = self.opts.apis();
        self.opts
            .backoffs()
            .into_iter()
            .flat_map(|b| {
                apis.iter().map(move |&a| Point {
                    api: ApiParams::of(a),
                    backoff_ms: b,
                })
            })
            .collect()
    }

    fn label(&self, p: &Point) -> String {
        format!("{}-backoff{}ms", p.api.api.name(), p.backoff_ms)
    }

    fn validate(&self, broker: &Broker, points: &[Point]) -> Result<()> {
        for p in points {
            broker.validate(&settings(p.backoff_ms, broker.is_mock()))?;
        }
        Ok(())
    }

    fn prepare<'c>(&self, cx: &'c Context, result: &mut ProbeResult<Figures>) -> Result<Setup<'c>> {
        let (topic, prefill) = prefilled(cx, &self.opts, result)?;
        Ok(Setup { topic, prefill })
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
            api: p.api.api,
            settings: settings(p.backoff_ms, cx.broker.is_mock()),
            backoff_ms: p.backoff_ms,
            duration: Some(self.opts.duration),
            expected: setup.prefill.messages,
        };
        match consume::measure_window(&cx.broker, &setup.topic, &run, dir)? {
            Some(w) => Ok(Some(Figures::of(ConsumerFigures::of(w)?))),
            None => Ok(None),
        }
    }

    fn describe(&self, f: &Figures) -> String {
        format!(
            "{}, {APP_THREAD} {}, {} {}, idle {}",
            units::msgs_per_s(f.run.window.msgs_per_s),
            units::cores(f.app_cores),
            f.broker_thread,
            units::cores(f.broker_thread_cores),
            units::seconds(f.run.window.idle_s)
        )
    }

    fn window_s(&self, f: &Figures) -> Option<f64> {
        Some(f.run.window.window_s)
    }

    fn verdicts(&self, sweep: &Sweep<Self>) -> Vec<Verdict> {
        let (fast, [poll, fixed]) = self.pair(sweep);
        let at = fast.map_or(String::new(), |b| format!(" at fetch.queue.backoff.ms={b}"));
        let consume = match (&poll, &fixed) {
            (Some(p), Some(f)) => rule::decide(&evidence(sweep, p, f)),
            _ => Verdict::cannot_tell(
                &rule::FINDING,
                format!("the rule compares poll() with the fixed batch API{at}: run both (--api poll,fixed)"),
            ),
        };
        let broker = match &fixed {
            Some(f) => broker_rule::decide(&broker_evidence(sweep, f)),
            None => Verdict::cannot_tell(
                &broker_rule::FINDING,
                format!("the rule reads the fixed batch API's threads{at}: run it (--api fixed)"),
            ),
        };
        vec![consume, broker]
    }

    fn headline(&self, sweep: &Sweep<Self>) -> String {
        let (size, kind) = sweep
            .result
            .payload
            .as_ref()
            .map_or((0, String::new()), |p| (p.size_bytes, p.kind.clone()));
        format!(
            "{size} B {kind} messages, throughput mode (a prefilled topic read by each API; \
             the first 10% of each run is warmup)"
        )
    }

    fn render(&self, sweep: &Sweep<Self>) -> String {
        let mut t = Table::new([
            "backoff",
            "api",
            "msg/s (min–max)",
            "MB/s",
            "app",
            "rdk:broker",
            "saturated",
            "idle s",
            "window s",
        ]);
        for m in sweep.measured() {
            let med = |f: fn(&Figures) -> f64| m.reps(f).median().unwrap_or(0.0);
            let hot: Vec<&str> = m
                .runs
                .iter()
                .filter_map(|f| f.saturated_thread.as_deref())
                .collect();
            let saturated = hot
                .iter()
                .max_by_key(|n| hot.iter().filter(|h| h == n).count())
                .map_or("-".to_string(), |n| {
                    let k = hot.iter().filter(|h| h == &n).count();
                    format!("{n} {k}/{}", m.runs.len())
                });
            t.row(vec![
                format!("{} ms", m.point.backoff_ms),
                m.point.api.api.name(),
                m.reps(|f| f.run.window.msgs_per_s).show(units::si),
                format!("{:.1}", med(|f| f.run.window.mb_per_s)),
                format!("{:.2}", med(|f| f.app_cores)),
                format!("{:.2}", med(|f| f.broker_thread_cores)),
                saturated,
                format!("{:.1}", med(|f| f.run.window.idle_s)),
                format!("{:.1}", med(|f| f.run.window.window_s)),
            ]);
        }
        let mut s = t.render();
        s.push('\n');
        wrap_into(
            &mut s,
            "",
            &format!(
                "msg/s: median (min–max) over reps. app: cores of the thread calling poll() or \
                 the batch API ('{APP_THREAD}'); rdk:broker: the busiest of librdkafka's broker \
                 threads (medians). saturated: the consumer thread at ≥ {SATURATED_CORES} cores and in how many \
                 reps (the embedded mock's thread excluded)."
            ),
        );
        s
    }

    fn not_measured(&self, broker: &Broker) -> Vec<String> {
        let plan = self.prefill(broker);
        let mut v = vec![
            "end-to-end latency (throughput mode; use --rate for latency)".to_string(),
            "librdkafka's statistics (off in every run: the batch call would swallow them)"
                .to_string(),
            "the first 10% of each run's messages (warmup)".to_string(),
            "Java's consumer (the post's comparison at 100 B is another probe's claim)".to_string(),
        ];
        if broker.is_mock() {
            v.push(
                "Apache Kafka's fetch path: the broker was librdkafka's in-process mock, whose \
                 thread shares the cores with the consumer"
                    .to_string(),
            );
        }
        if plan.compression != "none" {
            v.push(format!(
                "an uncompressed consumer: the prefill was {}-compressed, so the broker thread \
                 also decompresses",
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
        v.push(format!(
            "{} partitions; the consume loop runs on its own thread, '{APP_THREAD}'; a thread \
             at ≥ {SATURATED_CORES} cores is saturated",
            self.partitions(broker)
        ));
        v.extend(override_notes(broker.overrides()));
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kit::measure::WindowFigures;

    fn figures(threads: &[(&str, f64)]) -> Figures {
        let window = WindowFigures {
            messages: 1_800_000,
            window_s: 1.0,
            msgs_per_s: 1.8e6,
            mb_per_s: 180.0,
            cpu_cores: threads.iter().map(|t| t.1).sum(),
            cpu_s_per_million: 1.0,
            threads: threads
                .iter()
                .map(|(n, c)| ThreadFigure {
                    name: n.to_string(),
                    cores: *c,
                })
                .collect(),
            timeline: Vec::new(),
            stall_seconds: 0,
            idle_s: 0.0,
            longest_idle_s: 0.0,
        };
        Figures::of(ConsumerFigures {
            window,
            consumer_cores: 1.0,
            mock_cores: 0.0,
            busiest_thread: String::new(),
            busiest_thread_cores: 0.0,
            backoffs: 0,
            queue_full_backoffs: 0,
            backoff_ms_total: 0.0,
            backoff_fraction: 0.0,
            analyzer_diagnosis: None,
            debug_log_lines: 0,
        })
    }

    #[test]
    fn the_saturated_thread_is_the_busiest_consumer_thread_at_the_catalogues_threshold() {
        // The mock's thread is the broker's, not the consumer's.
        let f = figures(&[
            ("rdk:mock", 1.2),
            ("rdk:broker1", 0.93),
            ("rdk:broker-1", 0.01),
            ("kgap-app", 0.41),
        ]);
        assert_eq!(f.broker_thread, "rdk:broker1");
        assert_eq!(f.broker_thread_cores, 0.93);
        assert_eq!(f.app_cores, 0.41);
        assert_eq!(f.saturated_thread.as_deref(), Some("rdk:broker1"));
        // 0.85 was "saturated" in the old probe; the catalogue says 0.9.
        let f = figures(&[("kgap-app", 0.85), ("rdk:broker1", 0.3)]);
        assert_eq!(f.saturated_thread, None);
        let f = figures(&[("rdk:broker1", 0.3)]);
        assert_eq!(f.app_cores, 0.0);
        assert!(f.app_cores.is_sign_positive());
    }

    #[test]
    fn points_are_every_api_at_every_backoff_with_their_labels() {
        use clap::Parser;
        let t = Throughput::new(
            Options::try_parse_from([NAME, "--api", "poll,fixed", "--backoff-ms", "1000,10"])
                .unwrap(),
        );
        let broker = Broker::start(None, &[]).unwrap();
        let points = t.points(&broker);
        let labels: Vec<String> = points.iter().map(|p| t.label(p)).collect();
        assert_eq!(
            labels,
            [
                "poll-backoff1000ms",
                "batch-fixed-backoff1000ms",
                "poll-backoff10ms",
                "batch-fixed-backoff10ms"
            ]
        );
        let v = serde_json::to_value(points[1]).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"api": "batch-fixed", "batch": 500, "fetch.queue.backoff.ms": 1000})
        );
    }
}
