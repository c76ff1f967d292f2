//! One librdkafka run at a point: K consumers in this process (the kit's instances), each
//! its own client and connection, each assign()ing every partition from the start, each
//! consuming on its own `kgap-app` thread with poll() or the batch API. The window opens
//! when all of them together have read 10% of their messages and closes when the first has
//! read every one (or at the duration): all K run through all of it. Cores per thread come
//! from /proc at the edges, by thread id (K instances share thread names).

use super::figures::{Figures, RoleCores};
use super::point::{Api, Point, TUNED_BACKOFF_MS, TUNED_BATCH};
use crate::kit::batch::WaitPolicy;
use crate::kit::broker::{Consumer, TopicGuard};
use crate::kit::capture::Sink;
use crate::kit::consume::{self, ConsumeApi, Flow};
use crate::kit::error::{ProbeError, Result};
use crate::kit::instances::{self, MachineCpu, Shared};
use crate::kit::interrupt;
use crate::kit::measure::{self, Edge, Progress, Sampler, APP_THREAD};
use crate::kit::placement::OwnCore;
use crate::kit::Context;
use kgap_analyzers::thread_cpu::threads::{self, Snapshot};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A consumer that hears nothing for this long has stalled (longer than any 1000 ms nap).
const IDLE_LIMIT: Duration = Duration::from_secs(15);

/// The threads `--own-core` gives a cpu of their own: librdkafka's broker threads, the
/// consumer's limit under the batch API (librdkafka-broker-thread-limit).
pub const LIMITING_THREADS: &str = "rdk:broker";

/// The consumer's settings for an API; `-X` overrides come after them.
pub fn settings(api: Api, group: &str) -> Vec<(&'static str, String)> {
    let mut v = vec![
        // A fresh group id; nothing is committed (assign, no auto commit): no group is left.
        ("group.id", group.to_string()),
        ("enable.auto.commit", "false".into()),
        ("enable.auto.offset.store", "false".into()),
        ("auto.offset.reset", "earliest".into()),
    ];
    if api == Api::Tuned {
        v.push(("fetch.queue.backoff.ms", TUNED_BACKOFF_MS.to_string()));
    }
    v
}

fn consume_api(api: Api) -> ConsumeApi {
    match api {
        Api::Tuned => ConsumeApi::Batch {
            size: TUNED_BATCH,
            policy: WaitPolicy::Fixed,
        },
        _ => ConsumeApi::Poll,
    }
}

/// The role of a librdkafka process thread by its name.
pub fn role(name: &str) -> &'static str {
    if name == APP_THREAD {
        "app"
    } else if name.starts_with("rdk:broker") {
        "rdk:broker"
    } else if name.starts_with("rdk:mock") {
        "mock"
    } else if name.starts_with("rdk:main") {
        "rdk:main"
    } else {
        "other"
    }
}

/// Cores per thread by role between two snapshots, busiest thread first in each role.
pub fn roles(a: &Snapshot, b: &Snapshot) -> Vec<RoleCores> {
    let mut out: Vec<RoleCores> = Vec::new();
    for t in threads::cores_between(a, b, threads::ticks_per_second()) {
        let r = role(&t.name);
        let c = measure::round3(t.cores);
        match out.iter_mut().find(|x| x.role == r) {
            Some(x) => x.cores.push(c),
            None => out.push(RoleCores {
                role: r.to_string(),
                cores: vec![c],
            }),
        }
    }
    for r in &mut out {
        r.cores.sort_by(|x, y| y.total_cmp(x));
    }
    out
}

/// What the observer saw: the window's edges and the sampler's ticks.
struct Window {
    start: Edge,
    end: Edge,
    start_each: Vec<(u64, u64)>,
    end_each: Vec<(u64, u64)>,
    machine: Option<(MachineCpu, MachineCpu)>,
    ticks: Vec<measure::Tick>,
    /// Threads found pinned to the own core when the window opened.
    own_core_threads: usize,
}

/// Ok(None): Ctrl-C came before the window opened.
pub fn run(
    cx: &Context,
    topic: &TopicGuard,
    expected: u64,
    p: &Point,
    duration: Duration,
    own_core: Option<OwnCore>,
) -> Result<Option<Figures>> {
    let k = p.instances;
    let api = consume_api(p.api);
    let group = crate::kit::broker::topic_name("probe-consumer-clients-group");
    let origin = Instant::now();
    let mut consumers = Vec::with_capacity(k);
    for i in 0..k {
        let c = Consumer::new(
            &cx.broker,
            &settings(p.api, &format!("{group}-{i}")),
            Arc::new(Sink::default()),
        )?;
        c.assign_from_start(&topic.name, topic.partitions)?;
        consumers.push(c);
    }
    let (errors, window) = instances::run(
        consumers,
        APP_THREAD,
        |i, c, shared| {
            if !shared.start_gate() {
                return Ok(0);
            }
            consume_one(&c, api, expected, i, shared)
        },
        |shared| observe(shared, origin, expected * k as u64 / 10, duration, own_core),
    )?;
    let Some(w) = window else {
        if interrupt::stopped() {
            return Ok(None);
        }
        return Err(ProbeError::Kafka(format!(
            "the consumers stopped before the window opened ({} errors)",
            errors.iter().sum::<u64>()
        )));
    };
    if let Some(own) = &own_core {
        own.require(w.own_core_threads, "when the window opened")?;
    }
    let figures = measure::window_figures(&w.start, &w.end, &w.ticks);
    let roles = match (&w.start.snapshot, &w.end.snapshot) {
        (Some(a), Some(b)) => roles(a, b),
        _ => Vec::new(),
    };
    let mock: f64 = roles
        .iter()
        .filter(|r| r.role == "mock")
        .flat_map(|r| r.cores.iter())
        .sum();
    let process_cores = measure::round3((figures.cpu_cores - mock).max(0.0));
    Ok(Some(Figures {
        messages: figures.messages,
        window_s: measure::round3(figures.window_s),
        msgs_per_s: measure::round3(figures.msgs_per_s),
        mb_per_s: measure::round3(figures.mb_per_s),
        process_cores,
        cpu_s_per_million: if figures.messages > 0 {
            measure::round3(process_cores * figures.window_s / (figures.messages as f64 / 1e6))
        } else {
            0.0
        },
        machine_busy_cores: w.machine.and_then(|(a, b)| a.busy_cores_until(&b)),
        threads: roles,
        per_instance: instances::per_instance(&w.start_each, &w.end_each, figures.window_s),
        timeline: figures.timeline,
        gc_time_ms: None,
    }))
}

/// One instance's consume loop: counts, publishes its totals, stops when it has read
/// `expected`, when told to, or when it hears nothing for [`IDLE_LIMIT`].
fn consume_one(c: &Consumer, api: ConsumeApi, expected: u64, i: usize, s: &Shared) -> Result<u64> {
    let counter = &s.counters[i];
    let (mut n, mut bytes) = (0u64, 0u64);
    let mut idle_since: Option<Instant> = None;
    let mut stalled = false;
    let errors = consume::drive(
        c,
        api,
        Duration::from_millis(100),
        |payload| {
            n += 1;
            bytes += payload.len() as u64;
            counter.publish(n, bytes);
            if n >= expected {
                return Flow::Stop;
            }
            if n % 4096 == 0 && (s.stopped() || interrupt::stopped()) {
                return Flow::Stop;
            }
            Flow::Continue
        },
        || {
            if s.stopped() || interrupt::stopped() {
                return Flow::Stop;
            }
            let since = *idle_since.get_or_insert_with(Instant::now);
            if since.elapsed() > IDLE_LIMIT {
                stalled = true;
                return Flow::Stop;
            }
            Flow::Continue
        },
    )?;
    // Done before the consumer closes: the window ends now. The thread stays until the
    // observer has read the end edge, so its CPU is still in /proc then.
    counter.publish(n, bytes);
    counter.finish();
    while !s.stopped() {
        std::thread::sleep(Duration::from_millis(1));
    }
    if stalled && !s.stopped() {
        return Err(ProbeError::Kafka(format!(
            "instance {i} stalled at {n} of {expected} messages for {} s ({errors} errors{})",
            IDLE_LIMIT.as_secs(),
            c.sink
                .last_error()
                .map(|e| format!("; librdkafka: {e}"))
                .unwrap_or_default()
        )));
    }
    Ok(errors)
}

/// On the calling thread: opens the window once `warmup` messages arrived in all, closes it
/// when the first instance is done, the duration is up, or Ctrl-C; None if it never opened.
/// With `own_core`, pins the limiting threads every 50 ms until the window opens, and once
/// more then.
fn observe(
    s: &Shared,
    origin: Instant,
    warmup: u64,
    duration: Duration,
    own_core: Option<OwnCore>,
) -> Option<Window> {
    let progress = Arc::new(Progress::default());
    let mut opened: Option<(Edge, Vec<(u64, u64)>, Option<MachineCpu>, Sampler, Instant)> = None;
    let mut own_core_threads = 0;
    let mut pinned_at: Option<Instant> = None;
    loop {
        std::thread::sleep(Duration::from_millis(2));
        if let Some(own) = &own_core {
            if opened.is_none() && pinned_at.is_none_or(|t| t.elapsed().as_millis() >= 50) {
                own_core_threads = own.pin(std::process::id());
                pinned_at = Some(Instant::now());
            }
        }
        let (m, b) = s.sum();
        progress.publish(m, b);
        if s.failed() {
            return None;
        }
        match &opened {
            None => {
                if s.any_done() || interrupt::stopped() {
                    return None;
                }
                if s.all_started() && m >= warmup.max(1) {
                    if let Some(own) = &own_core {
                        own_core_threads = own.pin(std::process::id());
                    }
                    let each = s.totals();
                    let (m, b) = each.iter().fold((0, 0), |(x, y), (a, c)| (x + a, y + c));
                    progress.publish(m, b);
                    let edge = Edge::now(origin, m, b);
                    let machine = MachineCpu::now();
                    let sampler = Sampler::start(progress.clone(), origin);
                    let deadline = edge.at + duration;
                    opened = Some((edge, each, machine, sampler, deadline));
                }
            }
            Some((_, _, _, _, deadline)) => {
                if s.any_done() || Instant::now() >= *deadline || interrupt::stopped() {
                    break;
                }
            }
        }
    }
    let (start, start_each, machine0, sampler, _) = opened?;
    let end_each = s.totals();
    let (m, b) = end_each
        .iter()
        .fold((0, 0), |(x, y), (a, c)| (x + a, y + c));
    let end = Edge::now(origin, m, b);
    let machine1 = MachineCpu::now();
    s.stop();
    let end_s = end.at.duration_since(origin).as_secs_f64();
    let ticks: Vec<_> = sampler
        .stop()
        .into_iter()
        .filter(|t| t.at_s <= end_s + 1e-6)
        .collect();
    Some(Window {
        start,
        end,
        start_each,
        end_each,
        machine: machine0.zip(machine1),
        ticks,
        own_core_threads,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_take_their_roles_by_name() {
        assert_eq!(role("kgap-app"), "app");
        assert_eq!(role("rdk:broker1"), "rdk:broker");
        assert_eq!(role("rdk:broker-1"), "rdk:broker");
        assert_eq!(role("rdk:mock"), "mock");
        assert_eq!(role("rdk:main"), "rdk:main");
        assert_eq!(role("kgap-sampler"), "other");
    }

    #[test]
    fn the_tuned_consumer_backs_off_10_ms_and_takes_batches() {
        assert!(settings(Api::Tuned, "g").contains(&("fetch.queue.backoff.ms", "10".into())));
        assert!(!settings(Api::Poll, "g")
            .iter()
            .any(|(k, _)| *k == "fetch.queue.backoff.ms"));
        assert_eq!(consume_api(Api::Tuned).name(), "batch-fixed");
        assert_eq!(consume_api(Api::Poll), ConsumeApi::Poll);
    }
}
