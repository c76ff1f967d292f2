//! The instances dimension: K independent clients in one process, each its own client
//! object and so its own broker connection(s) and threads, started together and measured
//! over one window. The post's scaling scenarios ran exactly this ("K independent instances
//! in one process, each with its own connection"), and it is the post's only lever past
//! librdkafka's per-connection broker thread.
//!
//! What the kit gives a probe: [`run`] (K bodies on K threads behind a start gate, an
//! observer on the calling thread that opens and closes the window), the per-instance
//! counters they publish ([`Shared`]), per-instance figures over the window
//! ([`per_instance`]), the cores of every thread of one role told apart by thread id
//! ([`thread_cores`]: instances share thread names such as `rdk:broker1`), and how busy the
//! whole machine was ([`MachineCpu`]), which says whether the machine's cores ran out.

use crate::kit::error::{ProbeError, Result};
use kgap_analyzers::thread_cpu::threads::{self, Snapshot};
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

/// The most instances a sweep may ask for (each is a client with its own threads).
pub const MAX_INSTANCES: usize = 64;

/// One instance's running totals, published with relaxed stores by its own thread.
#[derive(Default)]
pub struct InstanceCounter {
    messages: AtomicU64,
    bytes: AtomicU64,
    done: AtomicBool,
}

impl InstanceCounter {
    #[inline]
    pub fn publish(&self, messages: u64, bytes: u64) {
        self.messages.store(messages, Ordering::Relaxed);
        self.bytes.store(bytes, Ordering::Relaxed);
    }

    /// This instance has finished (read everything, or failed).
    pub fn finish(&self) {
        self.done.store(true, Ordering::Release);
    }

    pub fn totals(&self) -> (u64, u64) {
        (
            self.messages.load(Ordering::Relaxed),
            self.bytes.load(Ordering::Relaxed),
        )
    }
}

/// What K instances and their observer share: a counter per instance, the start gate and
/// the stop flag.
pub struct Shared {
    pub counters: Vec<InstanceCounter>,
    ready: AtomicUsize,
    stop: AtomicBool,
    failed: AtomicBool,
}

impl Shared {
    fn new(k: usize) -> Shared {
        Shared {
            counters: (0..k).map(|_| InstanceCounter::default()).collect(),
            ready: AtomicUsize::new(0),
            stop: AtomicBool::new(false),
            failed: AtomicBool::new(false),
        }
    }

    pub fn instances(&self) -> usize {
        self.counters.len()
    }

    /// Called by each instance once its client is ready: returns when all K are (so they
    /// start together), or false when the run was stopped first.
    pub fn start_gate(&self) -> bool {
        self.ready.fetch_add(1, Ordering::AcqRel);
        while self.ready.load(Ordering::Acquire) < self.counters.len() {
            if self.stopped() {
                return false;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        !self.stopped()
    }

    /// Every instance has passed the start gate.
    pub fn all_started(&self) -> bool {
        self.ready.load(Ordering::Acquire) >= self.counters.len()
    }

    /// Tells every instance to stop at its next check.
    pub fn stop(&self) {
        self.stop.store(true, Ordering::Release);
    }

    pub fn stopped(&self) -> bool {
        self.stop.load(Ordering::Acquire)
    }

    /// An instance failed (its error is returned by [`run`]).
    pub fn failed(&self) -> bool {
        self.failed.load(Ordering::Acquire)
    }

    /// Some instance has finished.
    pub fn any_done(&self) -> bool {
        self.counters.iter().any(|c| c.done.load(Ordering::Acquire))
    }

    /// Every instance's (messages, bytes) now.
    pub fn totals(&self) -> Vec<(u64, u64)> {
        self.counters.iter().map(|c| c.totals()).collect()
    }

    /// The sum over instances.
    pub fn sum(&self) -> (u64, u64) {
        self.totals()
            .iter()
            .fold((0, 0), |(m, b), (x, y)| (m + x, b + y))
    }
}

/// Runs `body(i, client_i, shared)` for every client at once, each on its own thread named
/// `{thread_name}` (so every instance's application thread has the same role name), while
/// `observe(shared)` runs on the calling thread; the observer should call
/// [`Shared::stop`] when its window is over. The clients are made by the caller (a client
/// handle is Send, the broker that makes it need not be Sync). An instance's error stops
/// the others and is returned (the first one, by instance).
pub fn run<C: Send, T: Send, O>(
    clients: Vec<C>,
    thread_name: &str,
    body: impl Fn(usize, C, &Shared) -> Result<T> + Sync,
    observe: impl FnOnce(&Shared) -> O,
) -> Result<(Vec<T>, O)> {
    let k = clients.len();
    if k == 0 || k > MAX_INSTANCES {
        return Err(ProbeError::Usage(format!(
            "instances must be 1 to {MAX_INSTANCES}, got {k}"
        )));
    }
    let shared = Shared::new(k);
    let (results, observed) = std::thread::scope(|scope| {
        let handles: Vec<_> = clients
            .into_iter()
            .enumerate()
            .map(|(i, client)| {
                let (shared, body) = (&shared, &body);
                std::thread::Builder::new()
                    .name(thread_name.to_string())
                    .spawn_scoped(scope, move || {
                        let r = body(i, client, shared);
                        if r.is_err() {
                            shared.failed.store(true, Ordering::Release);
                            shared.stop();
                        }
                        shared.counters[i].finish();
                        r
                    })
            })
            .collect();
        let observed = observe(&shared);
        shared.stop();
        let results: Vec<Result<T>> = handles
            .into_iter()
            .map(|h| match h {
                Ok(h) => h.join().unwrap_or_else(|_| {
                    Err(ProbeError::Kafka("an instance's thread panicked".into()))
                }),
                Err(e) => Err(ProbeError::io("starting an instance's thread", e)),
            })
            .collect();
        (results, observed)
    });
    let results: Result<Vec<T>> = results.into_iter().collect();
    Ok((results?, observed))
}

/// One instance's share of the window.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct InstanceFigures {
    pub instance: usize,
    pub messages: u64,
    pub msgs_per_s: f64,
    pub mb_per_s: f64,
}

/// Per-instance figures from the counters at the window's edges.
pub fn per_instance(
    start: &[(u64, u64)],
    end: &[(u64, u64)],
    window_s: f64,
) -> Vec<InstanceFigures> {
    start
        .iter()
        .zip(end)
        .enumerate()
        .map(|(i, (a, b))| {
            let messages = b.0.saturating_sub(a.0);
            let bytes = b.1.saturating_sub(a.1);
            let per_s = |x: f64| if window_s > 0.0 { x / window_s } else { 0.0 };
            InstanceFigures {
                instance: i,
                messages,
                msgs_per_s: crate::kit::measure::round3(per_s(messages as f64)),
                mb_per_s: crate::kit::measure::round3(per_s(bytes as f64) / 1e6),
            }
        })
        .collect()
}

/// The cores of every thread whose name starts with `prefix`, one value per thread, busiest
/// first. K instances run K threads of the same name (`rdk:broker1`, `kgap-app`), so they
/// are told apart by thread id, not summed by name.
pub fn thread_cores(a: &Snapshot, b: &Snapshot, prefix: &str) -> Vec<f64> {
    let mut v: Vec<f64> = threads::cores_between(a, b, threads::ticks_per_second())
        .into_iter()
        .filter(|t| t.name.starts_with(prefix))
        .map(|t| crate::kit::measure::round3(t.cores))
        .collect();
    v.sort_by(|x, y| y.total_cmp(x));
    v
}

/// Ticks of /proc/stat a span must cover for its busy cores to be given (0.1 s at the usual
/// 100 Hz): below it the count is mostly rounding.
pub const MIN_MACHINE_SPAN_TICKS: f64 = 10.0;

/// The whole machine's CPU time at one moment (/proc/stat's first line), to say how many of
/// its cores were busy over a window: whether the machine, not the client, ran out.
#[derive(Debug, Clone, Copy)]
pub struct MachineCpu {
    busy_ticks: u64,
    at: std::time::Instant,
}

impl MachineCpu {
    /// Now; None where /proc/stat cannot be read.
    pub fn now() -> Option<MachineCpu> {
        let stat = std::fs::read_to_string("/proc/stat").ok()?;
        let busy = busy_ticks(stat.lines().next()?)?;
        Some(MachineCpu {
            busy_ticks: busy,
            at: std::time::Instant::now(),
        })
    }

    /// Busy cores (every process, this one and the broker included) from `self` to `later`;
    /// `None` (not measured) over a span shorter than [`MIN_MACHINE_SPAN_TICKS`] of /proc's
    /// ticks, where one tick more or less is a tenth of the answer (a 13 ms window read as
    /// 0.0 busy cores).
    pub fn busy_cores_until(&self, later: &MachineCpu) -> Option<f64> {
        let secs = later.at.duration_since(self.at).as_secs_f64();
        let tps = threads::ticks_per_second() as f64;
        if secs * tps < MIN_MACHINE_SPAN_TICKS {
            return None;
        }
        let ticks = later.busy_ticks.saturating_sub(self.busy_ticks) as f64;
        Some(crate::kit::measure::round3(ticks / tps / secs))
    }
}

/// Busy ticks of a `cpu  user nice system idle iowait irq softirq steal …` line: all but
/// idle and iowait (guest time is already inside user).
fn busy_ticks(line: &str) -> Option<u64> {
    let mut f = line.split_whitespace();
    if f.next()? != "cpu" {
        return None;
    }
    let v: Vec<u64> = f.take(8).map(|x| x.parse().ok()).collect::<Option<_>>()?;
    if v.len() < 4 {
        return None;
    }
    Some(v.iter().sum::<u64>() - v[3] - v.get(4).copied().unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instances_start_together_and_the_first_error_stops_the_rest() {
        let (out, seen) = run(
            vec![(); 3],
            "kgap-test",
            |i, (), s| {
                assert!(s.start_gate());
                s.counters[i].publish(i as u64 + 1, 10);
                Ok(i)
            },
            |s| {
                while !s.counters.iter().all(|c| c.done.load(Ordering::Acquire)) {
                    std::thread::sleep(Duration::from_millis(1));
                }
                s.sum()
            },
        )
        .unwrap();
        assert_eq!(out, vec![0, 1, 2]);
        assert_eq!(seen, (6, 30));
        let r = run(
            vec![(); 2],
            "kgap-test",
            |i, (), s| {
                if i == 1 {
                    return Err(ProbeError::Kafka("boom".into()));
                }
                // Never released by the gate: the failure stops it.
                assert!(!s.start_gate());
                Ok(())
            },
            |s| {
                while !s.failed() {
                    std::thread::sleep(Duration::from_millis(1));
                }
            },
        );
        assert!(matches!(r, Err(ProbeError::Kafka(m)) if m == "boom"));
        assert!(run(Vec::<()>::new(), "x", |_, (), _| Ok(()), |_| ()).is_err());
    }

    #[test]
    fn per_instance_figures_come_from_the_window_edges() {
        let f = per_instance(
            &[(10, 1000), (0, 0)],
            &[(110, 11_000), (50, 5_000_000)],
            2.0,
        );
        assert_eq!(f[0].messages, 100);
        assert_eq!(f[0].msgs_per_s, 50.0);
        assert_eq!(f[1].mb_per_s, 2.5);
    }

    #[test]
    fn busy_ticks_leave_out_idle_and_iowait() {
        assert_eq!(busy_ticks("cpu  10 1 5 100 7 1 1 0 0 0"), Some(18));
        assert_eq!(busy_ticks("cpu0 1 2 3 4"), None);
        assert_eq!(busy_ticks("cpu  x"), None);
        let a = MachineCpu::now().expect("/proc/stat");
        // The later snapshots at made-up times: a sleep of 20 ms overruns 100 ms on a loaded
        // machine, and the rule is about the span, not about how long this machine slept.
        let tps = threads::ticks_per_second() as f64;
        let after = |ticks: u64, span_ticks: f64| MachineCpu {
            busy_ticks: a.busy_ticks + ticks,
            at: a.at + Duration::from_secs_f64(span_ticks / tps),
        };
        // Two ticks' span: not measured, rather than a rounded 0.0; nor just under the floor.
        assert_eq!(a.busy_cores_until(&after(2, 2.0)), None);
        assert_eq!(
            a.busy_cores_until(&after(9, MIN_MACHINE_SPAN_TICKS * 0.99)),
            None
        );
        // Past the floor: busy ticks over the span's ticks (30 busy in 20 = 1.5 cores).
        assert!(a
            .busy_cores_until(&after(1, MIN_MACHINE_SPAN_TICKS * 1.01))
            .is_some());
        assert_eq!(a.busy_cores_until(&after(30, 20.0)), Some(1.5));
        assert_eq!(a.busy_cores_until(&after(0, 100.0)), Some(0.0));
        // A real second reading counts up from the first.
        let b = MachineCpu::now().unwrap();
        assert!(b.busy_ticks >= a.busy_ticks && b.at >= a.at);
    }
}
