//! The consume loops a probe can measure: rust-rdkafka's poll() (one message per call) or
//! the batch API ([`crate::kit::batch`]) with a waiting policy. One driver, so every consumer probe
//! counts, times and stops the same way whatever the API, and one measured window
//! ([`measure_window`]) that every consumer probe runs.

use crate::kit::batch::{BatchQueue, WaitPolicy};
use crate::kit::broker::{Broker, Consumer, TopicGuard};
use crate::kit::capture::Sink;
use crate::kit::error::{ProbeError, Result};
use crate::kit::interrupt;
use crate::kit::measure::{self, Edge, Progress, Sampler, WindowFigures};
use rdkafka::message::Message as _;
use serde::Serialize;
use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// How the application takes messages from librdkafka.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(into = "String")]
pub enum ConsumeApi {
    /// `BaseConsumer::poll()`: one message per call.
    Poll,
    /// `rd_kafka_consume_batch_queue`, up to `size` messages per call.
    Batch { size: usize, policy: WaitPolicy },
}

impl ConsumeApi {
    /// `poll`, `batch-fixed`, `batch-naive`: the names in tables, JSON and run folders.
    pub fn name(&self) -> String {
        match self {
            ConsumeApi::Poll => "poll".into(),
            ConsumeApi::Batch { policy, .. } => format!("batch-{}", policy.name()),
        }
    }
}

impl From<ConsumeApi> for String {
    fn from(a: ConsumeApi) -> String {
        a.name()
    }
}

/// What the driver does after a message or an empty wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    Continue,
    Stop,
}

/// Takes messages with `api` until a callback says stop. `on_message` gets each payload
/// (empty for a null payload); `on_idle` is called when a wait of `wait` found nothing.
/// Per-message errors are counted, not passed on. Returns that count. The loop allocates
/// nothing per message.
pub fn drive(
    c: &Consumer,
    api: ConsumeApi,
    wait: Duration,
    mut on_message: impl FnMut(&[u8]) -> Flow,
    mut on_idle: impl FnMut() -> Flow,
) -> Result<u64> {
    let mut errors = 0u64;
    match api {
        ConsumeApi::Poll => loop {
            match c.consumer.poll(wait) {
                Some(Ok(m)) => {
                    if on_message(m.payload().unwrap_or(&[])) == Flow::Stop {
                        break;
                    }
                }
                // An error is no message: the stop conditions (a signal, the broker gone,
                // the idle limit) are checked as after an empty wait, or a dead broker's
                // endless errors would keep the loop from ever seeing them.
                Some(Err(_)) => {
                    errors += 1;
                    if on_idle() == Flow::Stop {
                        break;
                    }
                }
                None => {
                    if on_idle() == Flow::Stop {
                        break;
                    }
                }
            }
        },
        ConsumeApi::Batch { size, policy } => {
            let mut q = BatchQueue::new(&c.consumer, size, policy)
                .map_err(|e| ProbeError::Kafka(e.to_string()))?;
            'outer: loop {
                let batch = q
                    .next_batch(wait)
                    .map_err(|e| ProbeError::Kafka(e.to_string()))?;
                if batch.is_empty() {
                    if on_idle() == Flow::Stop {
                        break;
                    }
                    continue;
                }
                let mut delivered = false;
                for m in batch.iter() {
                    if m.is_error() {
                        errors += 1;
                        continue;
                    }
                    delivered = true;
                    if on_message(m.payload().unwrap_or(&[])) == Flow::Stop {
                        break 'outer;
                    }
                }
                // A batch of errors only is no message: check the stop conditions.
                if !delivered && on_idle() == Flow::Stop {
                    break;
                }
            }
        }
    }
    Ok(errors)
}

/// One consume run: which API takes the messages, with which consumer settings.
#[derive(Debug, Clone)]
pub struct ConsumeRun {
    pub api: ConsumeApi,
    /// The consumer's settings ([`crate::kit::consumer_topic::consumer_settings`]); `-X` overrides
    /// come after them.
    pub settings: Vec<(&'static str, String)>,
    /// fetch.queue.backoff.ms of the run: sizes the idle limit, so a nap is never the end.
    pub backoff_ms: u64,
    /// Cap on the measured window.
    pub duration: Option<Duration>,
    /// Messages in the topic: the run ends when all arrived.
    pub expected: u64,
}

/// One measured run: a fresh consumer, assign() every partition from the beginning, take messages on
/// a thread of its own (`kgap-app`, so its cores are the application thread's) until every
/// prefilled message arrived (or the duration, or an idle timeout, or Ctrl-C).
pub fn measure_window(
    broker: &Broker,
    topic: &TopicGuard,
    run: &ConsumeRun,
    dir: &Path,
) -> Result<Option<ConsumedWindow>> {
    let log_path = dir.join("debug.log");
    let sink = Arc::new(
        Sink::to_files(Some(&log_path), Some(&dir.join("stats.jsonl")))
            .map_err(|e| ProbeError::io(format!("creating files in {}", dir.display()), e))?,
    );
    let c = Consumer::new(broker, &run.settings, sink.clone())?;
    c.assign_from_start(&topic.name, topic.partitions)?;

    let expected = run.expected;
    let warmup = (expected / 10).max(1);
    // Longer than any nap the setting can cause, so a nap is never taken for the end.
    let idle_limit = Duration::from_millis(10_000 + 3 * run.backoff_ms);
    let origin = Instant::now();
    let progress = Arc::new(Progress::default());
    let mut count = 0u64;
    let mut bytes = 0u64;
    let mut start: Option<(Edge, f64, Sampler)> = None;
    // Shared by the message and idle callbacks.
    let idle_since: Cell<Option<Instant>> = Cell::new(None);
    let deadline_check = 4096u64;
    let deadline: Cell<Option<Instant>> = Cell::new(None);

    // The measured loop: counters and relaxed stores only; clock reads every 4096 messages.
    let (cr, pr) = (&c, &progress);
    let (errors, count, _bytes, start, end) = std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name(measure::APP_THREAD.into())
            .spawn_scoped(scope, move || {
                let errors = drive(
                    cr,
                    run.api,
                    Duration::from_millis(100),
                    |payload| {
                        count += 1;
                        bytes += payload.len() as u64;
                        pr.publish(count, bytes);
                        if count == warmup {
                            let edge = Edge::now(origin, count, bytes);
                            let sampler = Sampler::start(pr.clone(), origin);
                            deadline.set(run.duration.map(|d| edge.at + d));
                            start = Some((edge, wall_s(), sampler));
                        }
                        if count >= expected {
                            return Flow::Stop;
                        }
                        idle_since.set(None);
                        if count % deadline_check == 0
                            && (deadline.get().is_some_and(|d| Instant::now() >= d)
                                || interrupt::stopped())
                        {
                            return Flow::Stop;
                        }
                        Flow::Continue
                    },
                    || {
                        if interrupt::stopped()
                            || deadline.get().is_some_and(|d| Instant::now() >= d)
                        {
                            return Flow::Stop;
                        }
                        let since = idle_since.get().unwrap_or_else(Instant::now);
                        idle_since.set(Some(since));
                        if since.elapsed() > idle_limit {
                            Flow::Stop
                        } else {
                            Flow::Continue
                        }
                    },
                );
                // The end edge on this thread, while it is still in /proc: its CPU counts.
                let end = Edge::now(origin, count, bytes);
                errors.map(|e| (e, count, bytes, start, end))
            })
            .expect("spawn kgap-app")
            .join()
            .expect("consume thread")
    })?;
    let end_wall = wall_s();
    drop(c);
    sink.flush();

    let Some((start, start_wall, sampler)) = start else {
        if interrupt::stopped() {
            return Ok(None);
        }
        return Err(ProbeError::Kafka(format!(
            "the consumer received {count} of {expected} messages before stopping ({errors} errors{}); \
             nothing was measured",
            sink.last_error().map(|e| format!("; librdkafka: {e}")).unwrap_or_default()
        )));
    };
    let ticks = sampler.stop();
    // Keep only ticks inside the window (the sampler may tick once after the end).
    let ticks: Vec<_> = ticks
        .into_iter()
        .filter(|t| t.at_s <= end.at.duration_since(origin).as_secs_f64() + 1e-6)
        .collect();
    measure::write_threads_csv(&dir.join("threads.csv"), &ticks);
    if count < expected && !interrupt::stopped() && run.duration.is_none() {
        return Err(ProbeError::Kafka(format!(
            "the consumer stalled at {count} of {expected} messages for {} s ({errors} errors{})",
            idle_limit.as_secs(),
            sink.last_error()
                .map(|e| format!("; librdkafka: {e}"))
                .unwrap_or_default()
        )));
    }
    let window = measure::window_figures(&start, &end, &ticks);
    Ok(Some(ConsumedWindow {
        window,
        start_wall_s: start_wall,
        end_wall_s: end_wall,
        debug_log: log_path,
        debug_log_lines: sink.lines(),
        errors,
    }))
}

/// What one consume run measured: the window's figures, its wall-clock edges (to cut the
/// run's debug log to the window) and where that log is.
#[derive(Debug, Clone)]
pub struct ConsumedWindow {
    pub window: WindowFigures,
    pub start_wall_s: f64,
    pub end_wall_s: f64,
    /// The run's librdkafka debug log (librdkafka's stderr format).
    pub debug_log: PathBuf,
    pub debug_log_lines: u64,
    /// Per-message errors the consumer returned (not fatal).
    pub errors: u64,
}

fn wall_s() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs_f64()
}
