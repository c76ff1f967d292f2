//! A slow TCP relay of the tests' own: a forwarding proxy on 127.0.0.1 that delivers every
//! read `delay` after it was read, in both directions, the way a tunnel adds latency to a
//! path. Reads are pipelined (a delay line, not a sleep before each write), so a request
//! that arrives in three reads costs one `delay`, not three: every round trip through the
//! relay costs 2 × `delay` more, whatever the chunking.
//!
//! The advertised address: a Kafka client asks the bootstrap address for Metadata and then
//! connects to the address each broker advertises. A broker that advertises its own port
//! would be reached directly after the first request, around the relay. The simplest
//! correct way is the broker's: it gets a second listener ([`listener_props`]), whose
//! advertised address is the relay's port. Kafka answers Metadata with the addresses of the
//! listener the client came in on, so a client of the relay is sent back to the relay, and a
//! client of the broker's own port never sees it. No bytes of the protocol are rewritten.

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The broker's server.properties lines (for KGAP_KAFKA_PROPS, which wins over the
/// script's) that add a listener RELAYED on `relayed_port`, advertised at the relay's port.
pub fn listener_props(broker_port: u16, relayed_port: u16, relay_port: u16) -> String {
    let h = "127.0.0.1";
    format!(
        "listeners=PLAINTEXT://{h}:{broker_port},CONTROLLER://{h}:{c},RELAYED://{h}:{relayed_port} \
         advertised.listeners=PLAINTEXT://{h}:{broker_port},RELAYED://{h}:{relay_port} \
         listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,RELAYED:PLAINTEXT",
        c = broker_port + 1
    )
}

pub struct Relay {
    pub port: u16,
    stop: Arc<AtomicBool>,
    open: Arc<Mutex<Vec<TcpStream>>>,
    accept: Option<JoinHandle<()>>,
}

impl Relay {
    /// A listening socket for the relay, bound before the broker starts (the broker must
    /// advertise its port).
    pub fn bind() -> TcpListener {
        TcpListener::bind("127.0.0.1:0").expect("a port for the relay")
    }

    /// Forwards every connection to `listener` to `upstream`, each read `delay` late.
    pub fn start(listener: TcpListener, upstream: SocketAddr, delay: Duration) -> Relay {
        let port = listener.local_addr().unwrap().port();
        listener.set_nonblocking(true).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let open: Arc<Mutex<Vec<TcpStream>>> = Arc::default();
        let (s, o) = (stop.clone(), open.clone());
        let accept = std::thread::spawn(move || {
            while !s.load(Ordering::Acquire) {
                match listener.accept() {
                    Ok((client, _)) => {
                        client.set_nonblocking(false).unwrap();
                        let Ok(server) = TcpStream::connect(upstream) else {
                            let _ = client.shutdown(Shutdown::Both);
                            continue;
                        };
                        let _ = client.set_nodelay(true);
                        let _ = server.set_nodelay(true);
                        {
                            let mut open = o.lock().unwrap();
                            open.push(client.try_clone().unwrap());
                            open.push(server.try_clone().unwrap());
                        }
                        pipe(
                            client.try_clone().unwrap(),
                            server.try_clone().unwrap(),
                            delay,
                        );
                        pipe(server, client, delay);
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(20)),
                }
            }
        });
        Relay {
            port,
            stop,
            open,
            accept: Some(accept),
        }
    }
}

/// One direction: a reader that stamps each read, a writer that sends it when it is due.
fn pipe(mut from: TcpStream, mut to: TcpStream, delay: Duration) {
    let (tx, rx) = mpsc::channel::<(Instant, Vec<u8>)>();
    std::thread::spawn(move || {
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            match from.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    if tx
                        .send((Instant::now() + delay, buf[..n].to_vec()))
                        .is_err()
                    {
                        break;
                    }
                }
            }
        }
    });
    std::thread::spawn(move || {
        for (due, bytes) in rx {
            let now = Instant::now();
            if due > now {
                std::thread::sleep(due - now);
            }
            if to.write_all(&bytes).is_err() {
                break;
            }
        }
        // The reader saw the end: pass it on.
        let _ = to.shutdown(Shutdown::Write);
    });
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        for s in self.open.lock().unwrap().iter() {
            let _ = s.shutdown(Shutdown::Both);
        }
        if let Some(t) = self.accept.take() {
            let _ = t.join();
        }
    }
}
