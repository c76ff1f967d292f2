//! Latency mode: a producer paced at a rate and a consumer in the same process, every
//! payload stamped with its send time, end-to-end latency recorded with each API. The
//! catalogue decides `batch-wrapper-latency` at the lowest rate run with both wrappers.

use super::api::{is_batch, ApiParams};
use super::notes::override_notes;
use super::options::{Options, EXTERNAL_PARTITIONS, NAME};
use crate::kit::batch::WaitPolicy;
use crate::kit::broker::{Broker, Consumer, Producer, TopicGuard};
use crate::kit::capture::{AckLatency, KgapContext, Sink};
use crate::kit::cli::CommonArgs;
use crate::kit::consume::{self, ConsumeApi, Flow};
use crate::kit::e2e::E2eRecorder;
use crate::kit::error::{ProbeError, Result};
use crate::kit::measure::{self, APP_THREAD};
use crate::kit::paced::{self, PacedWindow};
use crate::kit::payload::{PayloadKind, Pool};
use crate::kit::produce::TopicHandle;
use crate::kit::{Context, Measured, Probe, Sweep, Table};
use kgap_analyzers::findings::batch_wrapper_latency::{self as rule, SUSTAINED_SHARE};
use kgap_analyzers::findings::probe_result::{Client, ProbeResult};
use kgap_analyzers::findings::{Reps, Verdict};
use kgap_analyzers::vocab::report::wrap_into;
use kgap_analyzers::vocab::units;
use rdkafka::consumer::Consumer as _;
use rdkafka::producer::Producer as _;
use serde::Serialize;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The probe in latency mode.
pub struct Latency {
    pub opts: Options,
}

/// One point: an API at a producer rate.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Point {
    #[serde(flatten)]
    pub api: ApiParams,
    pub rate_per_s: u64,
}

/// One latency run's figures.
#[derive(Debug, Clone, Serialize)]
pub struct Figures {
    pub rate_target_per_s: u64,
    pub rate_achieved_per_s: f64,
    /// The producer reached ≥ 90% of its target rate (the catalogue's share).
    pub sustained: bool,
    /// The pacer's worst lag behind its schedule and how many sends were > 1 ms late (it
    /// catches up, dropping none).
    pub pacer_worst_lag_ms: f64,
    pub pacer_late_sends: u64,
    pub window_sent: u64,
    pub e2e_ms_p50: f64,
    pub e2e_ms_p90: f64,
    pub e2e_ms_p99: f64,
    pub e2e_ms_max: f64,
    pub e2e_count: u64,
    /// End-to-end from each message's intended send time (its pacer slot): a late send's
    /// wait counts (coordinated omission).
    pub e2e_intended_ms_p50: Option<f64>,
    pub e2e_intended_ms_p99: Option<f64>,
    /// The naive wrapper's arithmetic at the achieved rate: a message waits uniformly up
    /// to min(timeout, batch/rate), so p50 half of it and p99 99% of it.
    pub expected_wait_ms_p50: Option<f64>,
    pub expected_wait_ms_p99: Option<f64>,
    pub window_s: f64,
}

/// The topic every run produces to and reads from its end.
pub struct Setup<'c> {
    topic: TopicGuard<'c>,
    pool: Pool,
}

/// The naive wrapper's arithmetic, p50 and p99 in ms, at `rate`; None for other APIs.
pub fn expected_wait_ms(api: ConsumeApi, rate: f64) -> Option<(f64, f64)> {
    match api {
        ConsumeApi::Batch {
            size,
            policy: WaitPolicy::Naive { timeout },
        } => {
            let wait = rule::wait_ms(rate, size as f64, timeout.as_secs_f64() * 1000.0);
            Some((measure::round3(wait / 2.0), measure::round3(wait * 0.99)))
        }
        _ => None,
    }
}

fn producer_settings() -> Vec<(&'static str, String)> {
    // linger 0 and 5 in flight: the producer should add as little latency as it can.
    paced::producer_settings(0, 5)
        .into_iter()
        .filter(|(k, _)| *k != "statistics.interval.ms")
        .collect()
}

impl Latency {
    pub fn new(opts: Options) -> Latency {
        Latency { opts }
    }

    fn partitions(&self) -> i32 {
        self.opts.partitions.unwrap_or(EXTERNAL_PARTITIONS)
    }

    /// The points the rule compares: the lowest rate with both wrappers.
    fn at_lowest<'s>(&self, sweep: &'s Sweep<Self>) -> Option<[Option<Measured<'s, Self>>; 3]> {
        let both = |r: u64| {
            let has = |p: &str| {
                sweep
                    .measured()
                    .any(|m| m.point.rate_per_s == r && is_batch(m.point.api.api, p))
            };
            has("naive") && has("fixed")
        };
        let low = sweep
            .measured()
            .map(|m| m.point.rate_per_s)
            .filter(|&r| both(r))
            .min()?;
        let at = |want: &dyn Fn(ConsumeApi) -> bool| {
            sweep
                .measured()
                .find(|m| m.point.rate_per_s == low && want(m.point.api.api))
        };
        Some([
            at(&|a| is_batch(a, "naive")),
            at(&|a| is_batch(a, "fixed")),
            at(&|a| a == ConsumeApi::Poll),
        ])
    }
}

/// The catalogue's evidence from the naive and fixed wrappers (and poll()) at one rate.
pub fn evidence(
    naive: &Measured<'_, Latency>,
    fixed: &Measured<'_, Latency>,
    poll: Option<&Measured<'_, Latency>>,
) -> rule::Evidence {
    let (batch, timeout_ms) = match naive.point.api.api {
        ConsumeApi::Batch {
            size,
            policy: WaitPolicy::Naive { timeout },
        } => (size as u64, timeout.as_secs_f64() * 1000.0),
        _ => (0, 0.0),
    };
    rule::Evidence {
        rate_per_s: naive.point.rate_per_s,
        batch_size: batch,
        timeout_ms,
        naive_rate_achieved_per_s: naive.reps(|f| f.rate_achieved_per_s),
        fixed_rate_achieved_per_s: fixed.reps(|f| f.rate_achieved_per_s),
        naive_e2e_ms_p50: naive.reps(|f| f.e2e_intended_ms_p50.unwrap_or(f.e2e_ms_p50)),
        naive_e2e_ms_p99: naive.reps(|f| f.e2e_intended_ms_p99.unwrap_or(f.e2e_ms_p99)),
        fixed_e2e_ms_p50: fixed.reps(|f| f.e2e_intended_ms_p50.unwrap_or(f.e2e_ms_p50)),
        fixed_e2e_ms_p99: fixed.reps(|f| f.e2e_intended_ms_p99.unwrap_or(f.e2e_ms_p99)),
        poll_e2e_ms_p99: poll.map_or_else(Reps::default, |p| {
            p.reps(|f| f.e2e_intended_ms_p99.unwrap_or(f.e2e_ms_p99))
        }),
    }
}

/// Assigns every partition from its current end: this run reads only what it sends.
fn assign_from_end(c: &Consumer, topic: &TopicGuard) -> Result<()> {
    let mut tpl = rdkafka::TopicPartitionList::new();
    for p in 0..topic.partitions {
        let (_, high) = c
            .consumer
            .fetch_watermarks(&topic.name, p, Duration::from_secs(10))
            .map_err(|e| ProbeError::kafka(format!("watermarks of {} [{p}]", topic.name), e))?;
        tpl.add_partition_offset(&topic.name, p, rdkafka::Offset::Offset(high))
            .map_err(|e| ProbeError::kafka("assignment", e))?;
    }
    c.consumer
        .assign(&tpl)
        .map_err(|e| ProbeError::kafka("assign", e))
}

impl Probe for Latency {
    type Point = Point;
    type Figures = Figures;
    type Setup<'c> = Setup<'c>;
    const NAME: &'static str = NAME;

    fn common(&self) -> &CommonArgs {
        &self.opts.common
    }

    fn check(&self) -> Result<()> {
        self.opts.check()?;
        if self.opts.size < 8 {
            return Err(ProbeError::Usage(
                "--size must be at least 8 bytes in latency mode: the payload carries its send \
                 time"
                    .into(),
            ));
        }
        Ok(())
    }

    fn points(&self, _broker: &Broker) -> Vec<Point> {
        let apis = self.opts.apis();
        self.opts
            .rates()
            .into_iter()
            .flat_map(|r| {
                apis.iter().map(move |&a| Point {
                    api: ApiParams::of(a),
                    rate_per_s: r,
                })
            })
            .collect()
    }

    fn label(&self, p: &Point) -> String {
        format!("{}-rate{}", p.api.api.name(), p.rate_per_s)
    }

    fn validate(&self, broker: &Broker, _points: &[Point]) -> Result<()> {
        broker.validate(&producer_settings())?;
        broker.validate(&paced::consumer_settings("kgap.validate", broker.is_mock()))
    }

    fn prepare<'c>(&self, cx: &'c Context, result: &mut ProbeResult<Figures>) -> Result<Setup<'c>> {
        let pool = Pool::new(self.opts.size as usize, PayloadKind::Random);
        result.payload = Some(pool.info());
        let topic = cx.broker.create_topic(NAME, self.partitions())?;
        result.topics.push(topic.name.clone());
        cx.progress(&format!(
            "topic {} ({} partitions)",
            topic.name,
            self.partitions()
        ));
        Ok(Setup { topic, pool })
    }

    fn run(
        &self,
        cx: &Context,
        setup: &Setup<'_>,
        _client: Client,
        p: &Point,
        _dir: &Path,
    ) -> Result<Option<Figures>> {
        let broker = &cx.broker;
        let (topic, pool, rate, api) = (&setup.topic, &setup.pool, p.rate_per_s, p.api.api);
        let ack = Arc::new(AckLatency::new(Instant::now()));
        let producer = Producer::with_context(
            broker,
            &producer_settings(),
            KgapContext::with_ack_latency(Arc::new(Sink::default()), ack.clone()),
        )?;
        let handle = TopicHandle::new(&producer, &topic.name)?;
        let group = crate::kit::broker::topic_name("probe-batch-consume-group");
        let consumer = Consumer::new(
            broker,
            &paced::consumer_settings(&group, broker.is_mock()),
            Arc::new(Sink::default()),
        )?;
        assign_from_end(&consumer, topic)?;
        // Messages sent inside the window (wall-clock ns) are the ones recorded.
        let (from, to) = (AtomicI64::new(i64::MAX), AtomicI64::new(i64::MAX));
        let stop = AtomicBool::new(false);
        let (hist, side) = std::thread::scope(|scope| -> Result<_> {
            let (from, to, stop_r, c) = (&from, &to, &stop, &consumer);
            let reader = std::thread::Builder::new()
                .name(APP_THREAD.into())
                .spawn_scoped(scope, move || -> Result<E2eRecorder> {
                    let mut h = E2eRecorder::default();
                    let go_on = || {
                        if stop_r.load(Ordering::Relaxed) {
                            Flow::Stop
                        } else {
                            Flow::Continue
                        }
                    };
                    let on_message = |payload: &[u8]| {
                        let now = paced::wall_ns();
                        h.record(
                            payload,
                            now,
                            from.load(Ordering::Relaxed),
                            to.load(Ordering::Relaxed),
                        );
                        go_on()
                    };
                    consume::drive(c, api, Duration::from_millis(50), on_message, go_on)?;
                    Ok(h)
                })
                .expect("spawn kgap-app");
            let window = PacedWindow {
                partitions: topic.partitions,
                warmup: self.opts.warmup,
                window: self.opts.window,
            };
            let side =
                paced::produce_paced(&producer, &handle, pool, &window, rate, &ack, from, to);
            // Let the window's last messages arrive: acks first, then longer than any wait
            // the naive policy can add.
            let until = Instant::now() + Duration::from_secs(3);
            while Instant::now() < until && producer.producer.in_flight_count() > 0 {
                producer.producer.poll(Duration::from_millis(5));
            }
            std::thread::sleep(
                self.opts.naive_timeout.max(Duration::from_millis(200))
                    + Duration::from_millis(100),
            );
            stop.store(true, Ordering::Relaxed);
            let h = reader.join().expect("consumer thread");
            Ok((h?, side?))
        })?;
        drop(handle);
        drop(producer);
        drop(consumer);
        if crate::kit::interrupt::stopped() && side.window_sent == 0 {
            return Ok(None);
        }
        let e = measure::percentiles(&hist.sent);
        let intended = hist.intended_percentiles();
        let window_s = side.end.at.duration_since(side.start.at).as_secs_f64();
        let achieved = if window_s > 0.0 {
            side.window_sent as f64 / window_s
        } else {
            0.0
        };
        let expected = expected_wait_ms(api, achieved.max(1.0));
        Ok(Some(Figures {
            rate_target_per_s: rate,
            rate_achieved_per_s: measure::round3(achieved),
            sustained: achieved >= SUSTAINED_SHARE * rate as f64,
            pacer_worst_lag_ms: measure::round3(side.pacer.worst_lag.as_secs_f64() * 1000.0),
            pacer_late_sends: side.pacer.late_sends,
            window_sent: side.window_sent,
            e2e_ms_p50: e.p50_ms,
            e2e_ms_p90: e.p90_ms,
            e2e_ms_p99: e.p99_ms,
            e2e_ms_max: e.max_ms,
            e2e_count: e.count,
            e2e_intended_ms_p50: intended.as_ref().map(|i| i.p50_ms),
            e2e_intended_ms_p99: intended.as_ref().map(|i| i.p99_ms),
            expected_wait_ms_p50: expected.map(|x| x.0),
            expected_wait_ms_p99: expected.map(|x| x.1),
            window_s: measure::round3(window_s),
        }))
    }

    fn describe(&self, f: &Figures) -> String {
        format!(
            "e2e p50/p99 {}/{}{}{}",
            units::ms(f.e2e_ms_p50),
            units::ms(f.e2e_ms_p99),
            f.expected_wait_ms_p50
                .map(|e| format!(" (arithmetic: wait p50 {})", units::ms(e)))
                .unwrap_or_default(),
            if f.sustained {
                ""
            } else {
                " (rate NOT sustained)"
            }
        )
    }

    fn window_s(&self, f: &Figures) -> Option<f64> {
        Some(f.window_s)
    }

    fn verdicts(&self, sweep: &Sweep<Self>) -> Vec<Verdict> {
        let v = match self.at_lowest(sweep) {
            Some([Some(naive), Some(fixed), poll]) => {
                rule::decide(&evidence(&naive, &fixed, poll.as_ref()))
            }
            _ => Verdict::cannot_tell(
                &rule::FINDING,
                "the rule compares the naive and the fixed wrapper at one rate: run both \
                 (--api fixed,naive, with poll to show the transport's floor)",
            ),
        };
        vec![v]
    }

    fn headline(&self, sweep: &Sweep<Self>) -> String {
        let size = sweep.result.payload.as_ref().map_or(0, |p| p.size_bytes);
        format!(
            "{size} B messages, latency mode (a paced producer in the same process; a {} \
             warmup, then a {} window per run)",
            units::seconds(self.opts.warmup.as_secs_f64()),
            units::seconds(self.opts.window.as_secs_f64())
        )
    }

    fn render(&self, sweep: &Sweep<Self>) -> String {
        let mut t = Table::new([
            "rate/s",
            "api",
            "p50 ms (min–max)",
            "p99 ms (min–max)",
            "p99 from intended",
            "wait p50/p99",
            "sustained",
        ]);
        for m in sweep.measured() {
            let ms2 = |x: f64| format!("{x:.2}");
            let kept = m.runs.iter().filter(|f| f.sustained).count();
            t.row(vec![
                m.point.rate_per_s.to_string(),
                m.point.api.api.name(),
                m.reps(|f| f.e2e_ms_p50).show(ms2),
                m.reps(|f| f.e2e_ms_p99).show(ms2),
                m.reps_of(|f| f.e2e_intended_ms_p99).show(ms2),
                m.reps_of(|f| f.expected_wait_ms_p50)
                    .median()
                    .zip(m.reps_of(|f| f.expected_wait_ms_p99).median())
                    .map_or("-".into(), |(a, b)| format!("{a:.1}/{b:.1}")),
                format!("{kept}/{}", m.runs.len()),
            ]);
        }
        let mut s = t.render();
        s.push('\n');
        wrap_into(
            &mut s,
            "",
            &format!(
                "p50, p99: end-to-end latency, send to consume, median (min–max) over reps \
                 (p90 and max are in result.json and runs.csv). wait: the naive wrapper's arithmetic alone at the \
                 achieved rate, min(batch/rate, timeout) × 0.5 and × 0.99; end-to-end adds the \
                 transport (about the fixed wrapper's p50). sustained: reps whose producer \
                 reached ≥ {:.0}% of the rate.",
                SUSTAINED_SHARE * 100.0
            ),
        );
        s
    }

    fn not_measured(&self, _broker: &Broker) -> Vec<String> {
        vec![
            "throughput (latency mode paces the producer)".to_string(),
            "messages sent during the warmup (not recorded)".to_string(),
            "send-to-ack latency (this mode times send to consume)".to_string(),
        ]
    }

    fn notes(&self, broker: &Broker) -> Vec<String> {
        let mut v = vec![format!(
            "one topic of {} partitions; each run a fresh producer (linger.ms=0, 5 in flight) \
             and a fresh consumer assigned at the partitions' ends (fetch.queue.backoff.ms=10), \
             {} B messages stamped with the send time",
            self.partitions(),
            self.opts.size
        )];
        if broker.is_mock() {
            v.push(
                "the consumer fetches with fetch.wait.max.ms=1 on the mock, which holds an empty \
                 fetch for the full wait (Apache Kafka answers at once)"
                    .to_string(),
            );
        }
        v.extend(override_notes(broker.overrides()));
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_naive_arithmetic_follows_batch_over_rate_capped_at_the_timeout() {
        let naive = ConsumeApi::Batch {
            size: 500,
            policy: WaitPolicy::NAIVE_100MS,
        };
        // 1000/s: 500 messages take 500 ms > 100 ms, so the timeout decides.
        assert_eq!(expected_wait_ms(naive, 1000.0), Some((50.0, 99.0)));
        // 10000/s: the batch fills in 50 ms.
        assert_eq!(expected_wait_ms(naive, 10_000.0), Some((25.0, 49.5)));
        assert_eq!(expected_wait_ms(ConsumeApi::Poll, 1000.0), None);
    }
}
