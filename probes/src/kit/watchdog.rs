//! Is the broker still answering? A `kgap-watchdog` thread asks the cluster for Metadata
//! once a second on a client of its own. Seconds without an answer are a stall: a run that
//! overlapped one measured the stall, not the client, so the kit sets it aside (and says
//! so). A stall longer than [`LOST_AFTER`] is a broker gone: the kit aborts the sweep with
//! what was measured, and a clear error, well within 30 s.
//!
//! The watchdog must hear a broker again as soon as a fresh client would: its client is
//! set up for that ([`CLIENT_SETTINGS`]) and made again after [`RENEW_AFTER`] of silence.

use crate::kit::broker::{Broker, Producer};
use crate::kit::capture::{KgapContext, Sink};
use crate::kit::interrupt;
use rdkafka::config::ClientConfig;
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

/// The watchdog client's settings, on top of the probe's (`-X` still applies last, for
/// security). librdkafka's defaults are made for clients that must not hammer a broker,
/// not for one that must notice it is back as soon as anyone could:
/// - `reconnect.backoff.max.ms` 10000 (default): after a broker restart the client's
///   reconnect attempts, refused while the broker's JVM starts, back off 0.1, 0.2, 0.4 …
///   up to 10 s (−25 %/+50 % jitter): the watchdog reconnected up to 15 s after the
///   broker listened again, while a fresh client connected at once. 1000: at most 1.5 s.
/// - `socket.timeout.ms` 60000 (default): a request sent to a paused broker waits a minute
///   on the same connection. 5000 (more than [`ASK_TIMEOUT`], less than a pause worth
///   reporting): a request unanswered for 5 s times out and, with `socket.max.fails` 1,
///   the connection is closed and made again, so after a pause the watchdog asks on a
///   fresh connection, as a fresh client would.
/// - `socket.connection.setup.timeout.ms` 30000 (default): a connection made while the
///   broker was paused (the kernel accepts it; ApiVersions waits) would hang for 30 s.
///   5000, for the same reason.
pub const CLIENT_SETTINGS: [(&str, &str); 3] = [
    ("reconnect.backoff.max.ms", "1000"),
    ("socket.timeout.ms", "5000"),
    ("socket.connection.setup.timeout.ms", "5000"),
];

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

/// What one tick means: a stall began or ended, the broker is gone, or nothing new.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tick {
    Same,
    StallBegan,
    StallEnded,
    Lost,
}

/// The watchdog's judgement, apart from its clock and client: fed whether the request sent
/// at `asked` was answered, as seen at `now`.
#[derive(Debug, Default)]
pub struct Silence {
    since: Option<Instant>,
}

impl Silence {
    pub fn observe(&mut self, answered: bool, asked: Instant, now: Instant) -> Tick {
        match (answered, self.since) {
            (false, None) => {
                self.since = Some(asked);
                Tick::StallBegan
            }
            (false, Some(since)) if now.duration_since(since) >= LOST_AFTER => Tick::Lost,
            (true, Some(_)) => {
                self.since = None;
                Tick::StallEnded
            }
            _ => Tick::Same,
        }
    }
}

/// How long without an answer before the watchdog makes its client again (and again, as
/// long as the silence lasts). A Metadata answer that lists no broker (a KRaft broker fenced
/// after a pause) makes librdkafka decommission every broker it knew, and its client did not
/// always bootstrap again: in a CI run it heard nothing for 60 s while a fresh client
/// answered at once. A new client bootstraps from the list it was given, as a fresh one does.
pub const RENEW_AFTER: Duration = Duration::from_secs(5);

/// Whether a client silent since `silent_since`, made at `made_at`, is due to be made
/// again at `now`.
pub fn renew_due(silent_since: Instant, made_at: Instant, now: Instant) -> bool {
    now.duration_since(silent_since) >= RENEW_AFTER && now.duration_since(made_at) >= RENEW_AFTER
}

/// The watchdog's questions: Metadata requests on a client of its own, made again from the
/// same configuration after [`RENEW_AFTER`] of silence.
pub struct Asker {
    config: ClientConfig,
    client: Producer,
    made_at: Instant,
    silent_since: Option<Instant>,
    renewals: u32,
}

impl Asker {
    /// The watchdog's own client, with [`CLIENT_SETTINGS`] on top of the probe's.
    pub fn new(broker: &Broker) -> Option<Asker> {
        let settings: Vec<(&str, String)> = CLIENT_SETTINGS
            .iter()
            .map(|&(k, v)| (k, v.to_string()))
            .collect();
        let config = broker.config(&settings);
        let client = make(&config)?;
        Some(Asker {
            config,
            client,
            made_at: Instant::now(),
            silent_since: None,
            renewals: 0,
        })
    }

    /// One Metadata request: whether the broker answered and listed at least one broker (a
    /// KRaft broker fenced after a pause lists none for a moment). A silence of
    /// [`RENEW_AFTER`] makes the client again for the next ask.
    pub fn ask(&mut self, timeout: Duration) -> bool {
        let asked = Instant::now();
        let answered = self
            .client
            .producer
            .client()
            .fetch_metadata(None, timeout)
            .is_ok_and(|md| !md.brokers().is_empty());
        if answered {
            self.silent_since = None;
            return true;
        }
        let since = *self.silent_since.get_or_insert(asked);
        let now = Instant::now();
        if renew_due(since, self.made_at, now) {
            if let Some(client) = make(&self.config) {
                self.client = client;
                self.made_at = now;
                self.renewals += 1;
            }
        }
        false
    }

    /// How many times the client was made again.
    pub fn renewals(&self) -> u32 {
        self.renewals
    }
}

fn make(config: &ClientConfig) -> Option<Producer> {
    Producer::from_config(config, KgapContext::new(Arc::new(Sink::default()))).ok()
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
        let mut asker = Asker::new(broker)?;
        let bootstrap = broker.bootstrap().to_string();
        let lost = broker.lost_flag();
        let stop = Arc::new(AtomicBool::new(false));
        let stalls: Arc<Mutex<Vec<Stall>>> = Arc::default();
        let (s, st) = (stop.clone(), stalls.clone());
        let thread = std::thread::Builder::new()
            .name("kgap-watchdog".into())
            .spawn(move || {
                let mut silence = Silence::default();
                while !s.load(Ordering::Acquire) {
                    let t = Instant::now();
                    let ok = asker.ask(ASK_TIMEOUT);
                    let now = Instant::now();
                    match silence.observe(ok, t, now) {
                        Tick::StallBegan => {
                            st.lock().expect("stalls").push(Stall { from: t, to: None });
                        }
                        Tick::Lost => {
                            lost.store(true, Ordering::SeqCst);
                            interrupt::abort(format!(
                                "the broker at {bootstrap} stopped answering: no Metadata answer \
                                 for {} s",
                                LOST_AFTER.as_secs()
                            ));
                            return;
                        }
                        Tick::StallEnded => {
                            if let Some(last) = st.lock().expect("stalls").last_mut() {
                                last.to = Some(now);
                            }
                        }
                        Tick::Same => {}
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_client_is_made_again_after_five_silent_seconds_and_not_more_often() {
        let t0 = Instant::now();
        let s = |x: f64| t0 + Duration::from_secs_f64(x);
        // Silent 4.9 s on a client made long ago: not yet.
        assert!(!renew_due(s(10.0), s(0.0), s(14.9)));
        assert!(renew_due(s(10.0), s(0.0), s(15.0)));
        // Made again at 15 s: the next renewal waits another 5 s of the same silence.
        assert!(!renew_due(s(10.0), s(15.0), s(19.0)));
        assert!(renew_due(s(10.0), s(15.0), s(20.0)));
        // A client made 1 s before a long silence began is made again 5 s into it.
        assert!(renew_due(s(1.0), s(0.0), s(6.0)));
    }

    #[test]
    fn silence_begins_a_stall_ends_it_on_an_answer_and_calls_the_broker_lost_at_its_limit() {
        let t0 = Instant::now();
        let at = |s: u64| t0 + Duration::from_secs(s);
        let mut s = Silence::default();
        assert_eq!(s.observe(true, at(0), at(0)), Tick::Same);
        // The stall is dated from the unanswered request, not from when it timed out.
        assert_eq!(s.observe(false, at(1), at(2)), Tick::StallBegan);
        assert_eq!(s.observe(false, at(3), at(4)), Tick::Same);
        assert_eq!(s.observe(true, at(5), at(5)), Tick::StallEnded);
        assert_eq!(s.observe(true, at(6), at(6)), Tick::Same);
        // Silent from 10 s: lost at 10 s + LOST_AFTER, not a tick before.
        assert_eq!(s.observe(false, at(10), at(11)), Tick::StallBegan);
        let limit = at(10) + LOST_AFTER;
        let before = limit - Duration::from_millis(1);
        assert_eq!(s.observe(false, before, before), Tick::Same);
        assert_eq!(s.observe(false, limit, limit), Tick::Lost);
    }
}
