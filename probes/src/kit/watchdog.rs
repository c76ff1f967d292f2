//! Is the broker still answering? A `kgap-watchdog` thread asks the cluster for Metadata
//! once a second on a client of its own. Seconds without an answer are a stall: a run that
//! overlapped one measured the stall, not the client, so the kit sets it aside (and says
//! so). A stall longer than [`LOST_AFTER`] is a broker gone: the kit aborts the sweep with
//! what was measured, and a clear error, well within 30 s.

use crate::kit::broker::{Broker, Producer};
use crate::kit::capture::Sink;
use crate::kit::interrupt;
use rdkafka::producer::Producer as _;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long one Metadata request may take before the second counts as stalled.
const ASK_TIMEOUT: Duration = Duration::from_millis(1500);
/// How long without an answer makes the broker gone. A broker paused for 10 s needs a few
/// seconds after it resumes to answer again (more on a loaded machine: CI once saw 14 s in
/// all), and a dead one must still be reported within 30 s.
pub const LOST_AFTER: Duration = Duration::from_secs(20);
/// Stalls shorter than this are noise on a busy machine (one slow Metadata answer).
pub const STALL_MIN: Duration = Duration::from_secs(2);

/// A span without an answer, on the watchdog's clock.
#[derive(Debug, Clone, Copy)]
pub struct Stall {
    pub from: Instant,
    /// None while it lasts.
    pub to: Option<Instant>,
}

impl Stall {
    pub fn seconds(&self, now: Instant) -> f64 {
        self.to
            .unwrap_or(now)
            .duration_since(self.from)
            .as_secs_f64()
    }
}

pub struct Watchdog {
    stop: Arc<AtomicBool>,
    stalls: Arc<Mutex<Vec<Stall>>>,
    thread: Option<JoinHandle<()>>,
}

impl Watchdog {
    /// Starts watching a real cluster; None for the embedded mock (it lives and dies with
    /// the probe) or when no client can be made.
    pub fn start(broker: &Broker) -> Option<Watchdog> {
        if broker.is_mock() {
            return None;
        }
        let producer = Producer::new(broker, &[], Arc::new(Sink::default())).ok()?;
        let bootstrap = broker.bootstrap().to_string();
        let lost = broker.lost_flag();
        let stop = Arc::new(AtomicBool::new(false));
        let stalls: Arc<Mutex<Vec<Stall>>> = Arc::default();
        let (s, st) = (stop.clone(), stalls.clone());
        let thread = std::thread::Builder::new()
            .name("kgap-watchdog".into())
            .spawn(move || {
                let mut silent_since: Option<Instant> = None;
                while !s.load(Ordering::Acquire) {
                    let t = Instant::now();
                    let ok = producer
                        .producer
                        .client()
                        .fetch_metadata(None, ASK_TIMEOUT)
                        .is_ok_and(|md| !md.brokers().is_empty());
                    let now = Instant::now();
                    match (ok, silent_since) {
                        (false, None) => {
                            silent_since = Some(t);
                            st.lock().expect("stalls").push(Stall { from: t, to: None });
                        }
                        (false, Some(since)) if now.duration_since(since) >= LOST_AFTER => {
                            lost.store(true, Ordering::SeqCst);
                            interrupt::abort(format!(
                                "the broker at {bootstrap} stopped answering: no Metadata answer \
                                 for {} s",
                                LOST_AFTER.as_secs()
                            ));
                            return;
                        }
                        (true, Some(_)) => {
                            silent_since = None;
                            if let Some(last) = st.lock().expect("stalls").last_mut() {
                                last.to = Some(now);
                            }
                        }
                        _ => {}
                    }
                    let next = t + Duration::from_secs(1);
                    while Instant::now() < next && !s.load(Ordering::Acquire) {
                        std::thread::sleep(Duration::from_millis(50));
                    }
                }
            })
            .ok()?;
        Some(Watchdog {
            stop,
            stalls,
            thread: Some(thread),
        })
    }

    /// Stalls of at least [`STALL_MIN`] that overlap `from..to`, as (seconds, seconds from
    /// `from` to the stall's start).
    pub fn stalls_between(&self, from: Instant, to: Instant) -> Vec<(f64, f64)> {
        let now = Instant::now();
        self.stalls
            .lock()
            .expect("stalls")
            .iter()
            .filter(|s| s.from <= to && s.to.unwrap_or(now) >= from)
            .filter(|s| s.seconds(now) >= STALL_MIN.as_secs_f64())
            .map(|s| {
                (
                    s.seconds(now),
                    s.from.saturating_duration_since(from).as_secs_f64(),
                )
            })
            .collect()
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
