//! The probe's side of the harness pair: a subscribed consumer (a fresh group, as
//! rdkafka_performance -G), poll() until the first message, then the fixed batch loop to the
//! N-th, timed from the first message the application sees to the N-th, as
//! rdkafka_performance times itself.

use super::options::NAME;
use super::pair::{pair_settings, Figures, Point};
use crate::kit::batch::WaitPolicy;
use crate::kit::broker::{Broker, Consumer, TopicGuard};
use crate::kit::capture::Sink;
use crate::kit::consume::{self, ConsumeApi, Flow};
use crate::kit::error::{ProbeError, Result};
use crate::kit::interrupt;
use crate::kit::measure::{self, Edge, APP_THREAD};
use rdkafka::consumer::Consumer as _;
use std::cell::Cell;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The probe's side: subscribe, poll() until the first message (it serves the
/// rebalance; a batch call straight after subscribe does not, FACTS.md §5), then the
/// fixed batch loop to the N-th message.
pub fn read(broker: &Broker, topic: &TopicGuard, n: u64, p: &Point) -> Result<Option<Figures>> {
    let group = crate::kit::broker::topic_name("probe-batch-consume-harness");
    let mut settings = pair_settings(p.backoff_ms);
    settings.push(("group.id", group.clone()));
    let c = Consumer::new(broker, &settings, Arc::new(Sink::default()))?;
    c.consumer
        .subscribe(&[topic.name.as_str()])
        .map_err(|e| ProbeError::kafka("subscribe", e))?;
    let origin = Instant::now();
    let idle_limit = Duration::from_millis(20_000 + 3 * p.backoff_ms);
    let batch = ConsumeApi::Batch {
        size: p.batch,
        policy: WaitPolicy::Fixed,
    };
    let cr = &c;
    let edges = std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name(APP_THREAD.into())
            .spawn_scoped(scope, move || -> Result<Option<(Edge, Edge)>> {
                let (mut count, mut bytes) = (0u64, 0u64);
                // Since when no message came; reset by every message.
                let quiet: Cell<Option<Instant>> = Cell::new(None);
                let idle = || idle(&quiet, idle_limit);
                let mut first = None;
                consume::drive(
                    cr,
                    ConsumeApi::Poll,
                    Duration::from_millis(100),
                    |m| {
                        // The clock first: the snapshot's cost falls inside the probe's window.
                        first = Some(Edge::now(origin, 0, 0));
                        count = 1;
                        bytes = m.len() as u64;
                        Flow::Stop
                    },
                    idle,
                )?;
                let Some(start) = first else { return Ok(None) };
                consume::drive(
                    cr,
                    batch,
                    Duration::from_millis(100),
                    |m| {
                        quiet.set(None);
                        count += 1;
                        bytes += m.len() as u64;
                        if count >= n {
                            Flow::Stop
                        } else {
                            Flow::Continue
                        }
                    },
                    idle,
                )?;
                Ok(Some((start, Edge::now(origin, count, bytes))))
            })
            .expect("spawn kgap-app")
            .join()
            .expect("consume thread")
    })?;
    drop(c);
    delete_group(broker, &group);
    let Some((start, end)) = edges else {
        if interrupt::stopped() {
            return Ok(None);
        }
        return Err(ProbeError::Kafka(format!(
            "the probe's subscribed consumer received no message in {} s",
            idle_limit.as_secs()
        )));
    };
    if end.messages < n && !interrupt::stopped() {
        return Err(ProbeError::Kafka(format!(
            "the probe's subscribed consumer stalled at {} of {n} messages",
            end.messages
        )));
    }
    let w = measure::window_figures(&start, &end, &[]);
    let cores = |prefix: &str| {
        w.threads
            .iter()
            .filter(|t| t.name.starts_with(prefix))
            .map(|t| t.cores)
            .fold(0.0, f64::max)
    };
    Ok(Some(Figures {
        messages: w.messages,
        window_s: measure::round3(w.window_s),
        msgs_per_s: w.msgs_per_s.round(),
        mb_per_s: measure::round3(w.mb_per_s),
        app_cores: Some(cores(APP_THREAD)),
        broker_thread_cores: Some(cores("rdk:broker")),
        consumer_cores: Some(w.cpu_cores),
    }))
}

/// The idle callback: stop on Ctrl-C or after `limit` without a message.
fn idle(quiet: &Cell<Option<Instant>>, limit: Duration) -> Flow {
    let since = quiet.get().unwrap_or_else(Instant::now);
    quiet.set(Some(since));
    if interrupt::stopped() || since.elapsed() > limit {
        Flow::Stop
    } else {
        Flow::Continue
    }
}

/// Deletes a group a side created (subscribe leaves one on the cluster); a failure is only
/// a warning on stderr, retried while the group's member is still leaving.
pub fn delete_group(broker: &Broker, group: &str) {
    let mut last = None;
    for _ in 0..5 {
        match broker.delete_group(group) {
            Ok(()) => return,
            Err(e) => last = Some(e),
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    if let Some(e) = last {
        eprintln!("{NAME}: could not delete the consumer group {group}: {e}");
    }
}
