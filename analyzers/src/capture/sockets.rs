//! The target's TCP connections, from `ss -tinp`: per connection and per second, the kernel's
//! own view (round trip, send and receive queues, retransmits, bytes moved), so a broker that
//! is slow to answer shows without any client setting.
//!
//! Why `ss` and not netlink sock_diag: iproute2's `ss` is on every Linux host that runs a
//! broker or a client, it does the `/proc/PID/fd` to socket join itself (`users:(…pid=…)`),
//! and the `-i` line is the kernel's `tcp_info` as text. One run a second costs a few
//! milliseconds; sock_diag would save that at the price of binding the kernel's structs by
//! hand. The parser is pure and streams `ss`'s lines.

use std::io::{self, BufRead, Write};
use std::process::Command;

/// One connection of the target at one moment.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize)]
pub struct SocketSample {
    pub state: String,
    pub recv_q: u64,
    pub send_q: u64,
    pub local: String,
    pub peer: String,
    pub fd: Option<u32>,
    pub rtt_ms: Option<f64>,
    pub rttvar_ms: Option<f64>,
    /// Retransmitted segments over the connection's life (`retrans:now/total`).
    pub retrans_total: u64,
    pub bytes_sent: u64,
    pub bytes_received: u64,
    /// Bytes the application wrote that the kernel has not yet sent (`notsent:`).
    pub notsent: u64,
    /// Segments sent and not yet acknowledged (`unacked:`).
    pub unacked: u64,
}

/// Reads `ss -tinpH` output and keeps the connections of `pid`, one sample per connection
/// (a header line and the indented `tcp_info` line after it).
pub fn parse_ss<R: BufRead>(r: R, pid: i32) -> impl Iterator<Item = SocketSample> {
    let needle = format!("pid={pid},");
    let mut lines = r.lines().map_while(Result::ok).peekable();
    std::iter::from_fn(move || loop {
        let line = lines.next()?;
        if line.starts_with(char::is_whitespace) {
            continue; // an info line whose header was not the target's
        }
        let info = match lines.peek() {
            Some(l) if l.starts_with(char::is_whitespace) => lines.next(),
            _ => None,
        };
        if !line.contains(&needle) {
            continue;
        }
        if let Some(s) = header(&line, &needle) {
            let mut s = s;
            if let Some(info) = info {
                fill_info(&mut s, &info);
            }
            return Some(s);
        }
    })
}

fn header(line: &str, needle: &str) -> Option<SocketSample> {
    let mut w = line.split_whitespace();
    let state = w.next()?.to_string();
    let recv_q = w.next()?.parse().ok()?;
    let send_q = w.next()?.parse().ok()?;
    let local = w.next()?.to_string();
    let peer = w.next()?.to_string();
    // users:(("java",pid=12716,fd=92)): the fd of this pid's entry.
    let at = line.find(needle)? + needle.len();
    let fd = line[at..]
        .strip_prefix("fd=")
        .and_then(|r| r.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|d| d.parse().ok());
    Some(SocketSample {
        state,
        recv_q,
        send_q,
        local,
        peer,
        fd,
        ..SocketSample::default()
    })
}

fn fill_info(s: &mut SocketSample, info: &str) {
    for word in info.split_whitespace() {
        let Some((k, v)) = word.split_once(':') else {
            continue;
        };
        match k {
            "rtt" => {
                let (a, b) = v.split_once('/').unwrap_or((v, ""));
                s.rtt_ms = a.parse().ok();
                s.rttvar_ms = b.parse().ok();
            }
            "retrans" => {
                s.retrans_total = v
                    .split_once('/')
                    .and_then(|(_, t)| t.parse().ok())
                    .unwrap_or(0)
            }
            "bytes_sent" => s.bytes_sent = v.parse().unwrap_or(0),
            "bytes_received" => s.bytes_received = v.parse().unwrap_or(0),
            "notsent" => s.notsent = v.parse().unwrap_or(0),
            "unacked" => s.unacked = v.parse().unwrap_or(0),
            _ => {}
        }
    }
}

/// Runs `ss -tinpH` once and returns the target's connections; an error when `ss` cannot
/// run (not installed: iproute2).
pub fn sample(pid: i32) -> io::Result<Vec<SocketSample>> {
    let out = Command::new("ss").args(["-tinpH"]).output()?;
    if !out.status.success() {
        return Err(io::Error::other(format!(
            "ss -tinpH: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(parse_ss(io::Cursor::new(out.stdout), pid).collect())
}

/// The CSV header of `sockets.csv`.
pub const CSV_HEADER: &str = "at_s,fd,local,peer,state,recv_q,send_q,rtt_ms,rttvar_ms,\
                              retrans_total,bytes_sent,bytes_received,notsent,unacked";

/// Appends one moment's connections to `sockets.csv`.
pub fn write_rows(w: &mut dyn Write, at_s: f64, rows: &[SocketSample]) -> io::Result<()> {
    let opt = |v: Option<f64>| v.map(|v| v.to_string()).unwrap_or_default();
    for s in rows {
        writeln!(
            w,
            "{at_s:.3},{},{},{},{},{},{},{},{},{},{},{},{},{}",
            s.fd.map(|f| f.to_string()).unwrap_or_default(),
            s.local,
            s.peer,
            s.state,
            s.recv_q,
            s.send_q,
            opt(s.rtt_ms),
            opt(s.rttvar_ms),
            s.retrans_total,
            s.bytes_sent,
            s.bytes_received,
            s.notsent,
            s.unacked
        )?;
    }
    w.flush()
}

/// What one connection did over the capture.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Connection {
    pub local: String,
    pub peer: String,
    pub samples: u64,
    pub rtt_ms_max: Option<f64>,
    pub rtt_ms_last: Option<f64>,
    pub send_q_max_bytes: u64,
    pub recv_q_max_bytes: u64,
    pub notsent_max_bytes: u64,
    pub retransmits: u64,
    pub bytes_sent: u64,
    pub bytes_received: u64,
    first: (u64, u64, u64),
}

/// Folds samples into one [`Connection`] each, in the order first seen.
#[derive(Debug, Default)]
pub struct Connections {
    pub list: Vec<Connection>,
}

impl Connections {
    pub fn add(&mut self, s: &SocketSample) {
        let i = match self
            .list
            .iter()
            .position(|c| c.local == s.local && c.peer == s.peer)
        {
            Some(i) => i,
            None => {
                self.list.push(Connection {
                    local: s.local.clone(),
                    peer: s.peer.clone(),
                    samples: 0,
                    rtt_ms_max: None,
                    rtt_ms_last: None,
                    send_q_max_bytes: 0,
                    recv_q_max_bytes: 0,
                    notsent_max_bytes: 0,
                    retransmits: 0,
                    bytes_sent: 0,
                    bytes_received: 0,
                    first: (s.retrans_total, s.bytes_sent, s.bytes_received),
                });
                self.list.len() - 1
            }
        };
        let c = &mut self.list[i];
        c.samples += 1;
        c.rtt_ms_last = s.rtt_ms.or(c.rtt_ms_last);
        c.rtt_ms_max = match (c.rtt_ms_max, s.rtt_ms) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        c.send_q_max_bytes = c.send_q_max_bytes.max(s.send_q);
        c.recv_q_max_bytes = c.recv_q_max_bytes.max(s.recv_q);
        c.notsent_max_bytes = c.notsent_max_bytes.max(s.notsent);
        // Counters over the capture: the last sample less the first.
        c.retransmits = s.retrans_total.saturating_sub(c.first.0);
        c.bytes_sent = s.bytes_sent.saturating_sub(c.first.1);
        c.bytes_received = s.bytes_received.saturating_sub(c.first.2);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_target_s_connections_with_their_tcp_info() {
        // A connection of this process, seen by the real `ss` (no hand-typed output).
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let mut client = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
        let (_server, _) = listener.accept().unwrap();
        std::io::Write::write_all(&mut client, b"hello").unwrap();
        let rows = sample(std::process::id() as i32).expect("ss runs (iproute2)");
        let to_port: Vec<&SocketSample> = rows
            .iter()
            .filter(|r| r.peer.ends_with(&format!(":{port}")))
            .collect();
        assert_eq!(to_port.len(), 1, "{rows:?}");
        let r = to_port[0];
        assert_eq!(r.state, "ESTAB");
        assert!(r.fd.is_some() && r.rtt_ms.is_some(), "{r:?}");
        assert!(r.bytes_sent >= 5 || r.send_q >= 5, "{r:?}");
        // The server end is this process's too; another pid sees none of it.
        assert!(rows.iter().any(|r| r.local.ends_with(&format!(":{port}"))));
        assert!(sample(i32::MAX).unwrap().is_empty());
    }

    #[test]
    fn counters_are_over_the_capture() {
        let mut c = Connections::default();
        let mut s = SocketSample {
            local: "a:1".into(),
            peer: "b:9092".into(),
            retrans_total: 5,
            bytes_sent: 100,
            rtt_ms: Some(0.5),
            ..SocketSample::default()
        };
        c.add(&s);
        s.retrans_total = 7;
        s.bytes_sent = 1100;
        s.send_q = 40;
        s.rtt_ms = Some(2.0);
        c.add(&s);
        let k = &c.list[0];
        assert_eq!(
            (k.retransmits, k.bytes_sent, k.send_q_max_bytes),
            (2, 1000, 40)
        );
        assert_eq!(k.rtt_ms_max, Some(2.0));
    }
}
