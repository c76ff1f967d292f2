//! Measurement: the window, the per-second timeline, cores per thread, and honest summaries.
//!
//! The measured thread only bumps plain integers and publishes them with relaxed atomic
//! stores; a `kgap-sampler` thread reads them once per second. Reading the clock, /proc or
//! allocating happens at window edges and in the sampler, never per message.

use kgap_analyzers::thread_cpu::threads::{self, Snapshot, ThreadCores};
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Counters the measured thread publishes (relaxed stores of its own running totals).
#[derive(Default)]
pub struct Progress {
    pub messages: AtomicU64,
    pub bytes: AtomicU64,
}

impl Progress {
    #[inline]
    pub fn publish(&self, messages: u64, bytes: u64) {
        self.messages.store(messages, Ordering::Relaxed);
        self.bytes.store(bytes, Ordering::Relaxed);
    }
}

/// One sampler tick: counters, and on every full second every thread's CPU ticks.
#[derive(Debug, Clone)]
pub struct Tick {
    pub at_s: f64,
    pub messages: u64,
    /// Present on full-second ticks only.
    pub snapshot: Option<Snapshot>,
}

/// Sampler resolution: naps are found in 100 ms slots, rates reported per second.
pub const SLOT: Duration = Duration::from_millis(100);
pub const SLOTS_PER_SECOND: usize = 10;

/// Samples [`Progress`] every [`SLOT`] and thread CPU every second, anchored at its start
/// (no drift).
pub struct Sampler {
    stop: Arc<AtomicBool>,
    ticks: Arc<Mutex<Vec<Tick>>>,
    thread: Option<JoinHandle<()>>,
}

impl Sampler {
    pub fn start(progress: Arc<Progress>, origin: Instant) -> Sampler {
        let stop = Arc::new(AtomicBool::new(false));
        let ticks = Arc::new(Mutex::new(Vec::with_capacity(1024)));
        let (s, t) = (stop.clone(), ticks.clone());
        let thread = std::thread::Builder::new()
            .name("kgap-sampler".into())
            .spawn(move || {
                let start = Instant::now();
                let mut k = 1u32;
                while !s.load(Ordering::Acquire) {
                    let due = start + SLOT * k;
                    let now = Instant::now();
                    if due > now {
                        // Sleep in short slices so stop() is prompt.
                        std::thread::sleep((due - now).min(Duration::from_millis(50)));
                        continue;
                    }
                    let messages = progress.messages.load(Ordering::Relaxed);
                    let snapshot = if k as usize % SLOTS_PER_SECOND == 0 {
                        threads::snapshot(None, origin).ok()
                    } else {
                        None
                    };
                    t.lock().expect("ticks").push(Tick {
                        at_s: due.duration_since(origin).as_secs_f64(),
                        messages,
                        snapshot,
                    });
                    k += 1;
                }
            })
            .expect("spawn kgap-sampler");
        Sampler {
            stop,
            ticks,
            thread: Some(thread),
        }
    }

    pub fn stop(mut self) -> Vec<Tick> {
        self.stop.store(true, Ordering::Release);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        std::mem::take(&mut *self.ticks.lock().expect("ticks"))
    }
}

/// One edge of the measured window.
#[derive(Debug, Clone)]
pub struct Edge {
    pub at: Instant,
    /// CLOCK_MONOTONIC in microseconds: librdkafka's clock, the `ts` of its statistics.
    pub mono_us: i64,
    pub messages: u64,
    pub bytes: u64,
    pub snapshot: Option<Snapshot>,
}

impl Edge {
    pub fn now(origin: Instant, messages: u64, bytes: u64) -> Edge {
        Edge {
            at: Instant::now(),
            mono_us: monotonic_us(),
            messages,
            bytes,
            snapshot: threads::snapshot(None, origin).ok(),
        }
    }
}

/// CLOCK_MONOTONIC in microseconds, as librdkafka's rd_clock() reads it.
pub fn monotonic_us() -> i64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec * 1_000_000 + ts.tv_nsec / 1000
}

/// Cores of one thread name over the window (threads with the same name are summed).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ThreadFigure {
    pub name: String,
    pub cores: f64,
}

/// The figures every probe run reports.
#[derive(Debug, Clone, Serialize)]
pub struct WindowFigures {
    pub messages: u64,
    pub window_s: f64,
    pub msgs_per_s: f64,
    /// Payload megabytes (10^6 bytes) per second; protocol overhead not included.
    pub mb_per_s: f64,
    /// Whole-process cores over the window (all threads, the mock's included).
    pub cpu_cores: f64,
    /// Process CPU seconds per million messages.
    pub cpu_s_per_million: f64,
    pub threads: Vec<ThreadFigure>,
    /// Messages in each full second of the window.
    pub timeline: Vec<u64>,
    /// Seconds of the timeline below 20% of its median: naps.
    pub stall_seconds: u32,
    /// Time in 100 ms slots in which not one message arrived (naps, finer than a second).
    pub idle_s: f64,
    /// The longest run of such slots, in seconds.
    pub longest_idle_s: f64,
}

/// Figures of a window from its edges and the sampler's ticks (ticks anchored at `start`).
pub fn window_figures(start: &Edge, end: &Edge, ticks: &[Tick]) -> WindowFigures {
    let window_s = end.at.duration_since(start.at).as_secs_f64();
    let messages = end.messages.saturating_sub(start.messages);
    let bytes = end.bytes.saturating_sub(start.bytes);
    let per_s = |x: f64| if window_s > 0.0 { x / window_s } else { 0.0 };
    let tps = threads::ticks_per_second();
    let (cpu_cores, threads) = match (&start.snapshot, &end.snapshot) {
        (Some(a), Some(b)) => {
            // Rescale on our own clock: the snapshots' at_s come from the same origin.
            (
                threads::process_cores(a, b, tps),
                by_name(threads::cores_between(a, b, tps)),
            )
        }
        _ => (0.0, Vec::new()),
    };
    let timeline = timeline(start.messages, ticks);
    let stall_seconds = stall_seconds(&timeline);
    let (idle_slots, longest) = idle_slots(start.messages, ticks);
    WindowFigures {
        messages,
        window_s,
        msgs_per_s: per_s(messages as f64),
        mb_per_s: per_s(bytes as f64) / 1e6,
        cpu_cores,
        cpu_s_per_million: if messages > 0 {
            cpu_cores * window_s / (messages as f64 / 1e6)
        } else {
            0.0
        },
        threads,
        timeline,
        stall_seconds,
        idle_s: round3(idle_slots as f64 * SLOT.as_secs_f64()),
        longest_idle_s: round3(longest as f64 * SLOT.as_secs_f64()),
    }
}

/// Slots with no new message, and the longest run of them.
pub fn idle_slots(base: u64, ticks: &[Tick]) -> (usize, usize) {
    let (mut prev, mut idle, mut run, mut longest) = (base, 0, 0, 0);
    for t in ticks {
        if t.messages <= prev {
            idle += 1;
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
        prev = prev.max(t.messages);
    }
    (idle, longest)
}

/// Thread name of a probe's consume loop (fetch_backoff::consume_once, batch_consume).
pub const APP_THREAD: &str = "kgap-app";

/// Sums threads that share a name (e.g. several `rdk:broker-1`s are rare, but app pools are
/// not), busiest first, dropping idle ones — except the application thread: that it sat
/// idle (waiting through a fetch backoff nap) is itself the evidence.
pub fn by_name(threads: Vec<ThreadCores>) -> Vec<ThreadFigure> {
    let mut out: Vec<ThreadFigure> = Vec::new();
    for t in threads {
        match out.iter_mut().find(|f| f.name == t.name) {
            Some(f) => f.cores += t.cores,
            None => out.push(ThreadFigure {
                name: t.name,
                cores: t.cores,
            }),
        }
    }
    out.retain(|t| t.cores >= 0.005 || t.name == APP_THREAD);
    out.sort_by(|a, b| b.cores.total_cmp(&a.cores).then(a.name.cmp(&b.name)));
    for t in &mut out {
        t.cores = round3(t.cores);
    }
    out
}

/// Per-second message counts from the full-second ticks; `base` is the count at the window
/// start.
pub fn timeline(base: u64, ticks: &[Tick]) -> Vec<u64> {
    let mut prev = base;
    ticks
        .iter()
        .skip(SLOTS_PER_SECOND - 1)
        .step_by(SLOTS_PER_SECOND)
        .map(|t| {
            let d = t.messages.saturating_sub(prev);
            prev = t.messages.max(prev);
            d
        })
        .collect()
}

/// Seconds below 20% of the timeline's median rate.
pub fn stall_seconds(timeline: &[u64]) -> u32 {
    if timeline.is_empty() {
        return 0;
    }
    let med = median_u64(timeline);
    timeline.iter().filter(|&&c| (c as f64) < 0.2 * med).count() as u32
}

fn median_u64(v: &[u64]) -> f64 {
    let mut s: Vec<f64> = v.iter().map(|&x| x as f64).collect();
    median(&mut s)
}

/// Paces a producer at a fixed rate: park until shortly before a message is due, spin the
/// rest, and when behind send at once until back on the schedule. A late message is never
/// dropped from it (re-anchoring did, so a hiccup lost sends for good and their wait was
/// never counted: coordinated omission); each message's due time is its intended send time,
/// from which latency is also measured ([`Pacer::last_due`]).
#[derive(Debug, Clone)]
pub struct Pacer {
    anchor: Instant,
    interval: Duration,
    /// Messages released since the anchor.
    k: u32,
    /// The due time of the message last released.
    last_due: Instant,
    pub worst_lag: Duration,
    /// Messages sent more than [`LATE`] after their due time.
    pub late_sends: u64,
}

/// What the pacer says to do now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pace {
    /// Sleep this long (the message is far from due), then ask again.
    Park(Duration),
    /// Due within the spin threshold: ask again at once.
    Spin,
    /// Send now.
    Go,
}

/// Closer than this to the due time, spin: sleeping overshoots by tens of microseconds.
const SPIN: Duration = Duration::from_micros(100);
/// Further behind than this, a send counts as late.
pub const LATE: Duration = Duration::from_millis(1);

impl Pacer {
    pub fn new(rate_per_s: u64, now: Instant) -> Pacer {
        Pacer {
            anchor: now,
            interval: Duration::from_secs_f64(1.0 / rate_per_s.max(1) as f64),
            k: 0,
            last_due: now,
            worst_lag: Duration::ZERO,
            late_sends: 0,
        }
    }

    /// Decides for the next message at time `now` (pure: the caller reads the clock).
    pub fn next(&mut self, now: Instant) -> Pace {
        let due = self.anchor + self.interval * self.k;
        if now + SPIN < due {
            return Pace::Park(due - now - SPIN);
        }
        if now < due {
            return Pace::Spin;
        }
        let lag = now - due;
        self.worst_lag = self.worst_lag.max(lag);
        if lag > LATE {
            self.late_sends += 1;
        }
        self.last_due = due;
        self.k += 1;
        // Keep the multiplier small: move the anchor to the schedule every 2^20 messages.
        if self.k >= 1 << 20 {
            self.anchor += self.interval * self.k;
            self.k = 0;
        }
        Pace::Go
    }

    /// The intended send time of the message last released ([`Pace::Go`]).
    pub fn last_due(&self) -> Instant {
        self.last_due
    }

    /// Blocks until the next message is due (reads the clock; parks, then spins).
    pub fn wait(&mut self) {
        loop {
            match self.next(Instant::now()) {
                Pace::Go => return,
                Pace::Spin => std::hint::spin_loop(),
                Pace::Park(d) => std::thread::sleep(d),
            }
        }
    }
}

/// A latency histogram in microseconds: 1 µs to 10 minutes, 3 significant digits.
pub fn latency_histogram() -> hdrhistogram::Histogram<u64> {
    hdrhistogram::Histogram::new_with_bounds(1, 600_000_000, 3).expect("valid histogram bounds")
}

/// Latency percentiles in milliseconds, as every probe reports them.
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq)]
pub struct Percentiles {
    pub count: u64,
    pub p50_ms: f64,
    pub p90_ms: f64,
    pub p99_ms: f64,
    pub p999_ms: f64,
    pub max_ms: f64,
}

pub fn percentiles(h: &hdrhistogram::Histogram<u64>) -> Percentiles {
    if h.is_empty() {
        return Percentiles::default();
    }
    let ms = |us: u64| round3(us as f64 / 1000.0);
    Percentiles {
        count: h.len(),
        p50_ms: ms(h.value_at_quantile(0.50)),
        p90_ms: ms(h.value_at_quantile(0.90)),
        p99_ms: ms(h.value_at_quantile(0.99)),
        p999_ms: ms(h.value_at_quantile(0.999)),
        max_ms: ms(h.max()),
    }
}

/// The CDF at fixed quantiles, as [latency ms, percent] pairs (for charts).
pub fn cdf(h: &hdrhistogram::Histogram<u64>) -> Vec<[f64; 2]> {
    if h.is_empty() {
        return Vec::new();
    }
    const Q: [f64; 14] = [
        0.01, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.995, 0.999, 0.9995, 0.9999, 1.0,
    ];
    Q.iter()
        .map(|&q| [round3(h.value_at_quantile(q) as f64 / 1000.0), q * 100.0])
        .collect()
}

/// Median of a non-empty slice (mean of the middle two for even lengths); 0 when empty.
pub fn median(v: &mut [f64]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

pub fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// Per-second cores per thread over the window, for charts and for analyze-thread-cpu.
pub fn write_threads_csv(path: &std::path::Path, ticks: &[Tick]) {
    let tps = threads::ticks_per_second();
    let Ok(mut w) = csv::Writer::from_path(path) else {
        return;
    };
    let _ = w.write_record(["second", "tid", "thread", "cores"]);
    let snapshots: Vec<_> = ticks.iter().filter_map(|t| t.snapshot.as_ref()).collect();
    for (i, pair) in snapshots.windows(2).enumerate() {
        for t in threads::cores_between(pair[0], pair[1], tps) {
            if t.cores > 0.0 {
                let _ = w.write_record([
                    (i + 2).to_string(),
                    t.tid.to_string(),
                    t.name,
                    format!("{:.3}", t.cores),
                ]);
            }
        }
    }
    let _ = w.flush();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tick(at_s: f64, messages: u64) -> Tick {
        Tick {
            at_s,
            messages,
            snapshot: None,
        }
    }

    /// Ticks every 100 ms with the given cumulative counts at each full second, linear in
    /// between.
    fn seconds(base: u64, at_second: &[u64]) -> Vec<Tick> {
        let mut v = Vec::new();
        let mut prev = base;
        for (s, &c) in at_second.iter().enumerate() {
            for k in 1..=SLOTS_PER_SECOND as u64 {
                let m = prev + (c - prev) * k / SLOTS_PER_SECOND as u64;
                v.push(tick(s as f64 + k as f64 / 10.0, m));
            }
            prev = c;
        }
        v
    }

    #[test]
    fn timeline_is_per_second_deltas_from_the_window_base() {
        let t = seconds(1000, &[1500, 2500, 2600]);
        assert_eq!(timeline(1000, &t), vec![500, 1000, 100]);
        assert!(timeline(0, &[]).is_empty());
        // A partial last second is not in the timeline.
        assert_eq!(timeline(1000, &t[..25]), vec![500, 1000]);
    }

    #[test]
    fn idle_slots_find_naps_shorter_than_a_second() {
        let mut t = seconds(0, &[1000]);
        // 0.5 s with nothing, then progress again.
        for k in 0..5 {
            t.push(tick(1.1 + k as f64 / 10.0, 1000));
        }
        t.push(tick(1.6, 1200));
        assert_eq!(idle_slots(0, &t), (5, 5));
        assert_eq!(idle_slots(0, &seconds(0, &[1000, 2000])), (0, 0));
    }

    #[test]
    fn stalls_are_seconds_below_a_fifth_of_the_median() {
        // The post's shape: 457k, 571k, 400k, then 53k.
        assert_eq!(stall_seconds(&[457_000, 571_000, 400_000, 53_000]), 1);
        assert_eq!(stall_seconds(&[100, 100, 100]), 0);
        assert_eq!(stall_seconds(&[]), 0);
        assert_eq!(stall_seconds(&[1000, 0, 1000, 0, 1000]), 2);
    }

    #[test]
    fn pacer_parks_spins_and_releases_on_time() {
        let t0 = Instant::now();
        let mut p = Pacer::new(1000, t0);
        // The first message is due at once.
        assert_eq!(p.next(t0), Pace::Go);
        // The second is due at 1 ms: park until 100 µs before, then spin, then go.
        assert_eq!(
            p.next(t0 + Duration::from_micros(200)),
            Pace::Park(Duration::from_micros(700))
        );
        assert_eq!(p.next(t0 + Duration::from_micros(950)), Pace::Spin);
        assert_eq!(p.next(t0 + Duration::from_micros(1000)), Pace::Go);
        assert_eq!(p.worst_lag, Duration::ZERO);
        assert_eq!(p.late_sends, 0);
    }

    #[test]
    fn pacer_catches_up_when_behind_and_keeps_the_intended_times() {
        let t0 = Instant::now();
        let mut p = Pacer::new(1000, t0);
        assert_eq!(p.next(t0), Pace::Go);
        // 10 ms late for message 2 (due at 1 ms): sent, lag recorded, counted late...
        let late = t0 + Duration::from_millis(11);
        assert_eq!(p.next(late), Pace::Go);
        assert_eq!(p.worst_lag, Duration::from_millis(10));
        assert_eq!(p.late_sends, 1);
        assert_eq!(p.last_due(), t0 + Duration::from_millis(1));
        // ...and the messages due since go at once, none dropped from the schedule: the
        // ones due at 2..=11 ms are all owed at 11 ms.
        for ms in 2..=11u64 {
            assert_eq!(p.next(late), Pace::Go, "message due at {ms} ms");
            assert_eq!(p.last_due(), t0 + Duration::from_millis(ms));
        }
        assert_eq!(
            p.late_sends, 9,
            "due at 2..=9 ms are > 1 ms late; 10 and 11 are not"
        );
        // Back on the schedule: the next (12 ms) waits.
        assert!(matches!(p.next(late), Pace::Park(_)));
    }

    #[test]
    fn percentiles_in_milliseconds() {
        let mut h = latency_histogram();
        for us in 1..=1000u64 {
            h.record(us * 10).unwrap();
        }
        let p = percentiles(&h);
        assert_eq!(p.count, 1000);
        assert!((p.p50_ms - 5.0).abs() < 0.01, "{p:?}");
        assert!((p.p99_ms - 9.9).abs() < 0.01, "{p:?}");
        assert!((p.max_ms - 10.0).abs() < 0.01, "{p:?}");
        let c = cdf(&h);
        assert_eq!(c.last().unwrap()[1], 100.0);
        assert!(c.windows(2).all(|w| w[0][0] <= w[1][0]));
        assert_eq!(percentiles(&latency_histogram()), Percentiles::default());
    }

    #[test]
    fn medians() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [4.0, 1.0, 2.0, 3.0]), 2.5);
        assert_eq!(median(&mut []), 0.0);
    }

    #[test]
    fn threads_with_one_name_are_summed_busiest_first() {
        let t = |tid, name: &str, cores| ThreadCores {
            tid,
            name: name.into(),
            cores,
            user_cores: cores,
            system_cores: 0.0,
        };
        let f = by_name(vec![
            t(1, "app", 0.5),
            t(2, "rdk:broker1", 0.9),
            t(3, "app", 0.2),
            t(4, "idle", 0.001),
            t(5, APP_THREAD, 0.001),
        ]);
        assert_eq!(
            f,
            vec![
                ThreadFigure {
                    name: "rdk:broker1".into(),
                    cores: 0.9
                },
                ThreadFigure {
                    name: "app".into(),
                    cores: 0.7
                },
                ThreadFigure {
                    name: APP_THREAD.into(),
                    cores: 0.001
                },
            ]
        );
    }

    #[test]
    fn window_figures_rates() {
        let origin = Instant::now();
        let start = Edge {
            at: origin,
            mono_us: 0,
            messages: 100,
            bytes: 10_000,
            snapshot: None,
        };
        let end = Edge {
            at: origin + Duration::from_secs(2),
            mono_us: 2_000_000,
            messages: 2_100,
            bytes: 210_000,
            snapshot: None,
        };
        let f = window_figures(&start, &end, &seconds(100, &[1100, 2100]));
        assert_eq!(f.messages, 2000);
        assert!((f.msgs_per_s - 1000.0).abs() < 1e-9);
        assert!((f.mb_per_s - 0.1).abs() < 1e-12);
        assert_eq!(f.timeline, vec![1000, 1000]);
        assert_eq!(f.stall_seconds, 0);
    }
}
