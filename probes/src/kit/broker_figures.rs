//! Per-connection figures of one run, from librdkafka's statistics and /proc's threads.
//!
//! librdkafka keeps one connection per broker, each served by its own thread
//! (`rdk:broker<nodeid>`), and a broker serves each connection's requests one at a time. So on a
//! cluster of several brokers the figures that explain a ceiling or a queue are per connection:
//! summing three brokers' requests/s makes "µs per request" a third of the truth and hides
//! which broker is slow. Every figure here is one broker's; the run's aggregate stays beside
//! them in the probe's own figures.

use crate::kit::measure::{round3, ThreadFigure};
use crate::kit::table::Table;
pub use kgap_analyzers::findings::request_ceiling::Connection;
use kgap_analyzers::findings::Reps;
use kgap_analyzers::stats::{self, Stats};
use kgap_analyzers::vocab::units;
use serde::{Deserialize, Serialize};

/// One broker connection over a run's window.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct BrokerFigures {
    /// librdkafka's name for the connection: `127.0.0.1:9410/2`.
    pub broker: String,
    pub nodeid: i32,
    /// Partitions of the run's topic this broker led (statistics `leader`, last emit).
    pub partitions_led: u32,
    /// Requests of the probe's API (Produce or Fetch) per second, first to last emit.
    pub requests_per_s: f64,
    /// All bytes sent over those requests (right when the API dominates).
    pub bytes_per_request: Option<f64>,
    /// Round trip: median of the per-interval p50s and the worst p99, ms (intervals with
    /// responses only).
    pub rtt_ms_p50: Option<f64>,
    pub rtt_ms_p99: Option<f64>,
    /// Requests sent and awaiting a response (`waitresp_cnt`), mean of the emits.
    pub waitresp_mean: Option<f64>,
    /// Requests waiting to be sent (`outbuf_cnt`), mean of the emits.
    pub outbuf_mean: Option<f64>,
    /// The connection's librdkafka thread and its cores over the window (None when /proc
    /// did not show it).
    pub thread: String,
    pub thread_cores: Option<f64>,
    /// Seconds of the window in which the broker answered nothing although requests were
    /// waiting for it (no response between two emits with `waitresp_cnt` > 0), or its
    /// connection was not UP: a broker that stopped (SIGSTOP, a dead JVM, a network cut).
    pub silent_s: f64,
    /// Its states in the order seen, when not only UP.
    pub states: Vec<String>,
}

/// librdkafka's thread name for a broker connection (`rd_kafka_set_thread_sysname`
/// "rdk:broker%d" with the nodeid; bootstrap connections are `rdk:broker-1`).
pub fn thread_name(nodeid: i32) -> String {
    format!("rdk:broker{nodeid}")
}

/// The per-broker figures of a window's emits (≥ 2 for rates), for requests of `api`, with
/// the threads' cores of the same window. Brokers in name order.
pub fn per_broker(emits: &[Stats], api: &str, threads: &[ThreadFigure]) -> Vec<BrokerFigures> {
    let (Some(first), Some(last)) = (emits.first(), emits.last()) else {
        return Vec::new();
    };
    let rates = if emits.len() >= 2 {
        stats::broker_rates(first, last, api)
    } else {
        Vec::new()
    };
    let mut names: Vec<(String, i32)> = emits
        .iter()
        .flat_map(|s| s.real_brokers().map(|b| (b.name.clone(), b.nodeid)))
        .collect();
    names.sort();
    names.dedup();
    names
        .into_iter()
        .map(|(name, nodeid)| {
            let seen: Vec<&stats::BrokerStats> = emits
                .iter()
                .filter_map(|s| s.brokers.values().find(|b| b.name == name))
                .collect();
            let mean = |f: fn(&stats::BrokerStats) -> u64| {
                (!seen.is_empty()).then(|| {
                    round3(seen.iter().map(|b| f(b) as f64).sum::<f64>() / seen.len() as f64)
                })
            };
            let mut p50s: Vec<f64> = seen
                .iter()
                .filter(|b| b.rtt.cnt > 0)
                .map(|b| b.rtt.p50 as f64 / 1000.0)
                .collect();
            let p99 = seen
                .iter()
                .filter(|b| b.rtt.cnt > 0)
                .map(|b| b.rtt.p99 as f64 / 1000.0)
                .reduce(f64::max)
                .map(round3);
            let r = rates.iter().find(|r| r.name == name);
            let thread = thread_name(nodeid);
            let mut states: Vec<String> = Vec::new();
            for b in &seen {
                if states.last() != Some(&b.state) {
                    states.push(b.state.clone());
                }
            }
            if states.iter().all(|s| s == "UP") {
                states.clear();
            }
            BrokerFigures {
                partitions_led: last
                    .topics
                    .values()
                    .flat_map(|t| t.partitions.values())
                    .filter(|p| p.partition >= 0 && p.leader == Some(nodeid))
                    .count() as u32,
                requests_per_s: r.map_or(0.0, |r| round3(r.requests_per_s)),
                bytes_per_request: r
                    .filter(|r| r.tx_bytes_per_request > 0.0)
                    .map(|r| r.tx_bytes_per_request.round()),
                rtt_ms_p50: (!p50s.is_empty())
                    .then(|| round3(crate::kit::measure::median(&mut p50s))),
                rtt_ms_p99: p99,
                waitresp_mean: mean(|b| b.waitresp_cnt),
                outbuf_mean: mean(|b| b.outbuf_cnt),
                thread_cores: threads.iter().find(|t| t.name == thread).map(|t| t.cores),
                thread,
                silent_s: round3(silent_seconds(emits, &name)),
                states,
                broker: name,
                nodeid,
            }
        })
        .collect()
}

/// Seconds between consecutive emits in which the broker `name` answered nothing while
/// requests waited for it, or its connection went down after having been UP. (librdkafka
/// connects only to the brokers it needs: one that leads nothing stays INIT, and that is
/// not silence.)
fn silent_seconds(emits: &[Stats], name: &str) -> f64 {
    let mut was_up = false;
    let mut total = 0.0;
    for w in emits.windows(2) {
        let (Some(a), Some(b)) = (
            w[0].brokers.values().find(|b| b.name == name),
            w[1].brokers.values().find(|b| b.name == name),
        ) else {
            continue;
        };
        was_up |= a.state == "UP";
        let dt = (w[1].ts - w[0].ts) as f64 / 1e6;
        let waited = a.waitresp_cnt > 0 && b.waitresp_cnt > 0;
        let silent = (waited && b.rx <= a.rx) || (was_up && b.state != "UP");
        if silent && dt > 0.0 {
            total += dt;
        }
    }
    total
}

/// Silence shorter than this is a slow interval, not a stopped broker (a p99 round trip of
/// over a second happens on a loaded 2-core machine).
pub const SILENT_MIN_S: f64 = 2.0;

/// The brokers that went silent in a run, as one sentence (None when all answered):
/// `127.0.0.1:9410/2 answered nothing for 4.0 s (states UP, DOWN, UP)`.
pub fn silent_brokers(brokers: &[BrokerFigures]) -> Option<String> {
    let parts: Vec<String> = brokers
        .iter()
        .filter(|b| b.silent_s >= SILENT_MIN_S)
        .map(|b| {
            let states = if b.states.is_empty() {
                String::new()
            } else {
                format!(" (states {})", b.states.join(", "))
            };
            format!(
                "{} answered nothing for {:.1} s{states}",
                b.broker, b.silent_s
            )
        })
        .collect();
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// The connections of a point over its reps, for the catalogue's rules: one entry per
/// broker any rep saw, each figure per rep (a rep where the broker was absent counts no
/// requests and no wait).
pub fn connections(reps: &[&[BrokerFigures]]) -> Vec<Connection> {
    let mut names: Vec<&str> = reps
        .iter()
        .flat_map(|r| r.iter().map(|b| b.broker.as_str()))
        .collect();
    names.sort_unstable();
    names.dedup();
    names
        .into_iter()
        .map(|name| {
            let each: Vec<Option<&BrokerFigures>> = reps
                .iter()
                .map(|r| r.iter().find(|b| b.broker == name))
                .collect();
            let of = |f: fn(&BrokerFigures) -> Option<f64>| {
                Reps::of_some(each.iter().map(|b| b.and_then(f)))
            };
            let any = each
                .iter()
                .flatten()
                .next()
                .copied()
                .cloned()
                .unwrap_or_default();
            Connection {
                broker: name.to_string(),
                partitions_led: each
                    .iter()
                    .flatten()
                    .map(|b| b.partitions_led)
                    .max()
                    .unwrap_or(0),
                requests_per_s: Reps::new(each.iter().map(|b| b.map_or(0.0, |b| b.requests_per_s))),
                bytes_per_request: of(|b| b.bytes_per_request),
                rtt_ms_p50: of(|b| b.rtt_ms_p50),
                waiting_requests: Reps::new(
                    each.iter()
                        .map(|b| b.and_then(|b| b.waitresp_mean).unwrap_or(0.0)),
                ),
                thread: any.thread,
                thread_cores: of(|b| b.thread_cores),
                queued_requests: of(|b| b.outbuf_mean),
                silent_s: of(|b| Some(b.silent_s)),
            }
        })
        .collect()
}

/// The per-broker table: one row per point and connection, medians over reps. `point` is
/// the point's own leading cells (their headers in `head`).
pub fn table(head: &[&str], rows: &[(Vec<String>, Vec<Connection>)]) -> Table {
    let mut h: Vec<&str> = head.to_vec();
    h.extend([
        "broker", "led", "req/s", "B/req", "µs/req", "rtt p50", "waiting", "queued", "cores",
        "silent",
    ]);
    let mut t = Table::new(h);
    let m = |r: &Reps, f: &dyn Fn(f64) -> String| r.median().map_or("-".into(), f);
    for (point, conns) in rows {
        for c in conns {
            let mut row = point.clone();
            let rps = c.requests_per_s.median().unwrap_or(0.0);
            row.extend([
                c.broker.clone(),
                c.partitions_led.to_string(),
                units::si(rps),
                m(&c.bytes_per_request, &|x| units::si(x)),
                if rps > 0.0 {
                    format!("{:.0}", 1e6 / rps)
                } else {
                    "-".into()
                },
                m(&c.rtt_ms_p50, &|x| format!("{x:.2}")),
                m(&c.waiting_requests, &|x| format!("{x:.1}")),
                m(&c.queued_requests, &|x| format!("{x:.1}")),
                m(&c.thread_cores, &|x| format!("{x:.2}")),
                c.silent_s
                    .max()
                    .map_or("-".into(), |x| format!("{:.1}", x + 0.0)),
            ]);
            t.row(row);
        }
    }
    t
}

/// What the per-broker table's columns are, for under it.
pub const TABLE_NOTE: &str = "Per broker connection (librdkafka keeps one per broker, served \
by its thread rdk:broker<id>; a broker serves each connection's requests one at a time), \
medians over reps: led: partitions of the run's topic it led; req/s, B/req (txbytes over \
requests) and µs/req (1 s over that connection's req/s) from its statistics; rtt p50 (ms): \
the median per-second p50; waiting: requests awaiting a response (waitresp_cnt), queued: \
waiting to be sent (outbuf_cnt), means of the emits; cores: its rdk:broker<id> thread; \
silent: the worst rep's seconds in which the broker answered nothing while requests waited.";

/// The busiest connection by request rate.
pub fn busiest(brokers: &[BrokerFigures]) -> Option<&BrokerFigures> {
    brokers
        .iter()
        .max_by(|a, b| a.requests_per_s.total_cmp(&b.requests_per_s))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> Vec<Stats> {
        let path = format!(
            "{}/../fixtures/librdkafka/{name}/stats.jsonl",
            env!("CARGO_MANIFEST_DIR")
        );
        std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{path}: {e}"))
            .lines()
            .map(|l| stats::parse(l.as_bytes()).unwrap())
            .collect()
    }

    #[test]
    fn one_broker_carries_everything_in_a_single_node_capture() {
        let e = fixture("producer-kafka431-batch16k-6p-protocol");
        let threads = [ThreadFigure {
            name: "rdk:broker1".into(),
            cores: 0.3,
        }];
        let b = per_broker(&e, "Produce", &threads);
        assert_eq!(b.len(), 1, "{b:?}");
        assert_eq!(b[0].nodeid, 1);
        assert!(b[0].requests_per_s > 0.0);
        assert_eq!(b[0].thread, "rdk:broker1");
        assert_eq!(b[0].thread_cores, Some(0.3));
        // The aggregate of one broker is that broker.
        let r = stats::rates(&e[0], e.last().unwrap(), "Produce").unwrap();
        assert!((b[0].requests_per_s - r.requests_per_s).abs() < 0.01);
        assert_eq!(silent_brokers(&b), None);
        assert!(per_broker(&[], "Produce", &[]).is_empty());
    }

    /// Two emits of a real capture with broker 1's state and counters set as a stop would
    /// leave them (the same emits, edited: the silence rule's cases one by one).
    #[test]
    fn silence_is_waiting_without_answers_or_a_connection_lost_not_a_broker_never_used() {
        let e = fixture("producer-kafka431-batch16k-6p-protocol");
        let (mut a, mut b) = (e[0].clone(), e[e.len() - 1].clone());
        let key = a
            .brokers
            .keys()
            .find(|k| a.brokers[*k].nodeid == 1)
            .unwrap()
            .clone();
        let name = a.brokers[&key].name.clone();
        let dt = (b.ts - a.ts) as f64 / 1e6;
        assert_eq!(silent_seconds(&[a.clone(), b.clone()], &name), 0.0);
        // Requests waiting at both emits, no response between them.
        a.brokers.get_mut(&key).unwrap().waitresp_cnt = 5;
        b.brokers.get_mut(&key).unwrap().waitresp_cnt = 5;
        b.brokers.get_mut(&key).unwrap().rx = a.brokers[&key].rx;
        assert!((silent_seconds(&[a.clone(), b.clone()], &name) - dt).abs() < 1e-9);
        // Never connected (INIT, nothing waiting): not silence.
        let (mut a2, mut b2) = (e[0].clone(), e[e.len() - 1].clone());
        a2.brokers.get_mut(&key).unwrap().state = "INIT".into();
        b2.brokers.get_mut(&key).unwrap().state = "INIT".into();
        assert_eq!(silent_seconds(&[a2.clone(), b2.clone()], &name), 0.0);
        // UP, then DOWN: the connection was lost.
        a2.brokers.get_mut(&key).unwrap().state = "UP".into();
        b2.brokers.get_mut(&key).unwrap().state = "DOWN".into();
        assert!((silent_seconds(&[a2, b2], &name) - dt).abs() < 1e-9);
    }
}
