//! The kit's watchdog hears a broker again as soon as a fresh client would, after the two
//! faults of probes/tests/faults.rs, played here deterministically by a fake Kafka broker
//! of the test's own (ApiVersions and Metadata only):
//! - fenced: a KRaft broker paused longer than its session (SIGSTOP 10 s against
//!   broker.session.timeout.ms 9 s) is fenced when it resumes, and for a moment its
//!   Metadata answers list no broker (seen in the broker's log: "Fencing broker 1 …
//!   because its session has timed out", unfenced milliseconds to seconds later);
//! - restarted: the port closed (connections refused) for longer than librdkafka's
//!   reconnect backoff takes to reach its maximum, then listening again.
//!
//! In the fenced case librdkafka decommissions every broker it knew on an answer that lists
//! none, and its client did not always bootstrap again (a fresh-clone CI run heard nothing
//! for 60 s): the watchdog makes its client again after `RENEW_AFTER` of silence.

use kgap_probes::kit::broker::Broker;
use kgap_probes::kit::watchdog;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A fake Kafka broker (node 1) that speaks ApiVersions v0–3 and Metadata v0–1. While
/// `fenced`, its Metadata answers list no broker (topics still, when asked for all), as
/// a fenced KRaft broker's do.
struct FakeBroker {
    port: u16,
    fenced: Arc<AtomicBool>,
    /// Not listening, every connection closed (a broker stopped for a restart).
    down: Arc<AtomicBool>,
    /// Metadata requests answered: (all-topics, brokers-only).
    metadata: Arc<[AtomicUsize; 2]>,
}

const TOPIC: &str = "kgap-fake-topic";

impl FakeBroker {
    fn start() -> FakeBroker {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let fb = FakeBroker {
            port,
            fenced: Arc::default(),
            down: Arc::default(),
            metadata: Arc::new([AtomicUsize::new(0), AtomicUsize::new(0)]),
        };
        let (f, d, m) = (fb.fenced.clone(), fb.down.clone(), fb.metadata.clone());
        std::thread::spawn(move || {
            let mut listener = Some(listener);
            let mut conns: Vec<TcpStream> = Vec::new();
            loop {
                if d.load(Ordering::SeqCst) {
                    // Down: the port closed (refused), every connection cut.
                    listener = None;
                    for c in conns.drain(..) {
                        let _ = c.shutdown(std::net::Shutdown::Both);
                    }
                    std::thread::sleep(Duration::from_millis(10));
                    continue;
                }
                let l = listener.get_or_insert_with(|| {
                    TcpListener::bind(("127.0.0.1", port)).expect("the port again")
                });
                l.set_nonblocking(true).unwrap();
                match l.accept() {
                    Ok((c, _)) => {
                        c.set_nonblocking(false).unwrap();
                        conns.push(c.try_clone().unwrap());
                        let (f, d, m) = (f.clone(), d.clone(), m.clone());
                        std::thread::spawn(move || serve(c, port, &f, &d, &m));
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(10)),
                }
            }
        });
        fb
    }

    fn bootstrap(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }
}

fn serve(
    mut c: TcpStream,
    port: u16,
    fenced: &AtomicBool,
    down: &AtomicBool,
    metadata: &[AtomicUsize; 2],
) {
    loop {
        let mut len = [0u8; 4];
        if c.read_exact(&mut len).is_err() {
            return;
        }
        let mut req = vec![0u8; i32::from_be_bytes(len) as usize];
        if c.read_exact(&mut req).is_err() || down.load(Ordering::SeqCst) {
            return;
        }
        let key = i16::from_be_bytes([req[0], req[1]]);
        let version = i16::from_be_bytes([req[2], req[3]]);
        let correlation = &req[4..8];
        let mut body = Vec::new();
        match key {
            // ApiVersions: its response header is v0 whatever the version; v3's body is
            // flexible (compact array, tagged fields).
            18 => {
                let apis: [(i16, i16, i16); 2] = [(18, 0, 3), (3, 0, 1)];
                body.extend(0i16.to_be_bytes());
                if version >= 3 {
                    body.push(apis.len() as u8 + 1);
                } else {
                    body.extend((apis.len() as i32).to_be_bytes());
                }
                for (k, lo, hi) in apis {
                    body.extend(k.to_be_bytes());
                    body.extend(lo.to_be_bytes());
                    body.extend(hi.to_be_bytes());
                    if version >= 3 {
                        body.push(0);
                    }
                }
                if version >= 1 {
                    body.extend(0i32.to_be_bytes());
                }
                if version >= 3 {
                    body.push(0);
                }
            }
            // Metadata v0/v1: header v1 (client id after the correlation id), then the
            // topics array: -1 (v1) or 0 (v0) is every topic, 0 (v1) the brokers only.
            3 => {
                let client_id = i16::from_be_bytes([req[8], req[9]]).max(0) as usize;
                let at = 10 + client_id;
                let n = i32::from_be_bytes(req[at..at + 4].try_into().unwrap());
                let all_topics = n < 0 || (version == 0 && n == 0);
                metadata[usize::from(!all_topics)].fetch_add(1, Ordering::SeqCst);
                let up = !fenced.load(Ordering::SeqCst);
                // brokers
                body.extend(i32::from(up).to_be_bytes());
                if up {
                    body.extend(1i32.to_be_bytes());
                    body.extend(9i16.to_be_bytes());
                    body.extend(b"127.0.0.1");
                    body.extend(i32::from(port).to_be_bytes());
                    if version >= 1 {
                        body.extend((-1i16).to_be_bytes()); // rack: null
                    }
                }
                if version >= 1 {
                    body.extend(1i32.to_be_bytes()); // controller id
                }
                // topics: one, with no partitions, when all are asked for
                body.extend(i32::from(all_topics).to_be_bytes());
                if all_topics {
                    body.extend(0i16.to_be_bytes());
                    body.extend((TOPIC.len() as i16).to_be_bytes());
                    body.extend(TOPIC.as_bytes());
                    if version >= 1 {
                        body.push(0); // is_internal
                    }
                    body.extend(0i32.to_be_bytes());
                }
            }
            _ => return, // nothing else is asked of it
        }
        let mut resp = ((4 + body.len()) as i32).to_be_bytes().to_vec();
        resp.extend(correlation);
        resp.extend(body);
        if c.write_all(&resp).is_err() {
            return;
        }
    }
}

/// Asks until `want` (once a ~second at most, as the watchdog does), for at most `limit`:
/// how many asks it took, or None.
fn asks_until(asker: &mut watchdog::Asker, want: bool, limit: Duration) -> Option<u32> {
    let t = Instant::now();
    let mut n = 0;
    while t.elapsed() < limit {
        n += 1;
        let asked = Instant::now();
        if asker.ask(Duration::from_millis(1500)) == want {
            return Some(n);
        }
        std::thread::sleep(Duration::from_millis(1000).saturating_sub(asked.elapsed()));
    }
    None
}

/// The fake broker, the probe's view of it and the watchdog's asker, which has just heard it.
fn answered() -> (FakeBroker, Broker, watchdog::Asker) {
    let fake = FakeBroker::start();
    let broker = Broker::start(Some(&fake.bootstrap()), &[]).expect("the fake broker is reachable");
    let mut asker = watchdog::Asker::new(&broker).expect("the watchdog's client");
    assert_eq!(
        asks_until(&mut asker, true, Duration::from_secs(30)),
        Some(1),
        "answered at once"
    );
    (fake, broker, asker)
}

#[test]
fn the_watchdog_answers_again_right_after_a_fenced_broker_is_back() {
    let (fake, _broker, mut asker) = answered();
    // Fenced: the answers list no broker, so the watchdog hears none ...
    fake.fenced.store(true, Ordering::SeqCst);
    assert!(asks_until(&mut asker, false, Duration::from_secs(30)).is_some());
    std::thread::sleep(Duration::from_secs(2));
    assert!(!asker.ask(Duration::from_millis(1500)));
    // ... and unfenced, it hears the broker within the asks of one renewal: at once if its
    // client bootstrapped again, or on the client made after RENEW_AFTER of silence (an
    // answer listing no broker makes librdkafka decommission every broker it knew).
    fake.fenced.store(false, Ordering::SeqCst);
    let asks = asks_until(&mut asker, true, Duration::from_secs(60));
    let most = watchdog::RENEW_AFTER.as_secs() as u32 + 2;
    assert!(
        asks.is_some_and(|n| n <= most),
        "the watchdog's client heard the broker again after {asks:?} asks ({} renewals)",
        asker.renewals()
    );
}

#[test]
fn the_watchdog_reconnects_right_after_a_restarted_broker_listens_again() {
    let (fake, _broker, mut asker) = answered();
    // Down for 15 s, asked all the while: librdkafka's reconnect attempts are refused and
    // back off (0.1, 0.2, 0.4 … s: past 10 s in all they would reach its default 10 s max).
    fake.down.store(true, Ordering::SeqCst);
    let t = Instant::now();
    while t.elapsed() < Duration::from_secs(15) {
        assert!(!asker.ask(Duration::from_millis(1500)));
        std::thread::sleep(Duration::from_millis(500));
    }
    // Listening again: the watchdog hears it within its next three asks (its backoff is at
    // most 1.5 s). With librdkafka's default maximum it waited 7.5–15 s more: the bound is
    // the setting's, not the machine's speed.
    fake.down.store(false, Ordering::SeqCst);
    let asks = asks_until(&mut asker, true, Duration::from_secs(60));
    assert!(
        matches!(asks, Some(1..=3)),
        "the watchdog's client heard the broker again after {asks:?} asks"
    );
}
