//! librdkafka statistics JSON (STATISTICS.md), the figures kgap reads from it.
//!
//! A client with `statistics.interval.ms` set emits one JSON object per interval. Counters
//! (`tx`, `txbytes`, `req.Produce`, …) are cumulative since the client started; windows
//! (`rtt`, `int_latency`, `batchsize`, …) cover only the last interval and are reset at every
//! emit (an idle interval has `cnt` 0); `ts` is a monotonic microsecond clock. So rates come
//! from the difference of two samples, and percentiles from the windows one interval at a
//! time. Unknown fields are ignored: newer librdkafka versions add fields freely.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One statistics emit.
#[derive(Debug, Clone, Deserialize, Serialize, Default)]
#[serde(default)]
pub struct Stats {
    /// Client instance name (`rdkafka#producer-1`).
    pub name: String,
    /// "producer" or "consumer".
    #[serde(rename = "type")]
    pub client_type: String,
    /// Monotonic clock, microseconds.
    pub ts: i64,
    /// Wall clock, seconds since the epoch.
    pub time: i64,
    /// Messages (and bytes) in the producer's queues.
    pub msg_cnt: u64,
    pub msg_size: u64,
    pub brokers: BTreeMap<String, BrokerStats>,
    pub topics: BTreeMap<String, TopicStats>,
}

#[derive(Debug, Clone, Deserialize, Serialize, Default)]
#[serde(default)]
pub struct BrokerStats {
    pub name: String,
    /// -1 for bootstrap and logical (coordinator) brokers.
    pub nodeid: i32,
    pub state: String,
    pub outbuf_cnt: u64,
    pub waitresp_cnt: u64,
    pub tx: u64,
    pub txbytes: u64,
    pub txretries: u64,
    pub txerrs: u64,
    pub req_timeouts: u64,
    pub rx: u64,
    pub rxbytes: u64,
    /// Requests sent per API name (cumulative): `Produce`, `Fetch`, …
    pub req: BTreeMap<String, u64>,
    /// Round-trip time window of the last interval, microseconds.
    pub rtt: Window,
    /// Time in the producer queue before transmission, microseconds.
    pub int_latency: Window,
    pub outbuf_latency: Window,
}

/// A latency or size window: statistics over the last interval only.
#[derive(Debug, Clone, Copy, Deserialize, Serialize, Default, PartialEq)]
#[serde(default)]
pub struct Window {
    pub min: i64,
    pub max: i64,
    pub avg: i64,
    pub p50: i64,
    pub p90: i64,
    pub p99: i64,
    pub cnt: i64,
    pub outofrange: i64,
}

#[derive(Debug, Clone, Deserialize, Serialize, Default)]
#[serde(default)]
pub struct TopicStats {
    pub topic: String,
    /// Batch size in bytes, last interval.
    pub batchsize: Window,
    /// Messages per batch, last interval.
    pub batchcnt: Window,
    pub partitions: BTreeMap<String, PartitionStats>,
}

#[derive(Debug, Clone, Deserialize, Serialize, Default)]
#[serde(default)]
pub struct PartitionStats {
    /// -1 is the internal UA (unassigned) partition.
    pub partition: i32,
    pub msgq_cnt: u64,
    pub xmit_msgq_cnt: u64,
    /// Messages and bytes fetched and waiting for the application.
    pub fetchq_cnt: u64,
    pub fetchq_size: u64,
    pub fetch_state: String,
    pub consumer_lag: i64,
    /// The partition's leader (broker nodeid; -1 unknown). Absent before librdkafka 0.9.
    pub leader: Option<i32>,
    pub txmsgs: u64,
    pub rxmsgs: u64,
}

/// Parses one statistics emit.
pub fn parse(json: &[u8]) -> Result<Stats, serde_json::Error> {
    serde_json::from_slice(json)
}

impl Stats {
    /// Real brokers only (not bootstrap or coordinator entries).
    pub fn real_brokers(&self) -> impl Iterator<Item = &BrokerStats> {
        self.brokers.values().filter(|b| b.nodeid >= 0)
    }

    /// Requests of one API sent so far to all real brokers (e.g. "Produce").
    pub fn requests(&self, api: &str) -> u64 {
        self.real_brokers()
            .map(|b| b.req.get(api).copied().unwrap_or(0))
            .sum()
    }

    pub fn tx_bytes(&self) -> u64 {
        self.real_brokers().map(|b| b.txbytes).sum()
    }

    pub fn rx_bytes(&self) -> u64 {
        self.real_brokers().map(|b| b.rxbytes).sum()
    }

    /// Messages waiting in the local fetch queues (consumer), over real partitions.
    pub fn fetchq_cnt(&self) -> u64 {
        self.topics
            .values()
            .flat_map(|t| t.partitions.values())
            .filter(|p| p.partition >= 0)
            .map(|p| p.fetchq_cnt)
            .sum()
    }
}

/// Rates between two emits of one client (counters are cumulative).
#[derive(Debug, Clone, Copy, Serialize, PartialEq)]
pub struct Rates {
    pub seconds: f64,
    pub requests_per_s: f64,
    pub tx_bytes_per_s: f64,
    pub rx_bytes_per_s: f64,
    /// Bytes sent per request of this API (all requests' bytes over this API's count; right
    /// when this API dominates, as Produce does for a producer).
    pub tx_bytes_per_request: f64,
}

/// Request rate of `api` and byte rates between an earlier and a later emit, from the
/// monotonic `ts`. None if the two are not in order.
pub fn rates(earlier: &Stats, later: &Stats, api: &str) -> Option<Rates> {
    let seconds = (later.ts - earlier.ts) as f64 / 1e6;
    if seconds <= 0.0 {
        return None;
    }
    let reqs = later.requests(api).saturating_sub(earlier.requests(api)) as f64;
    let tx = later.tx_bytes().saturating_sub(earlier.tx_bytes()) as f64;
    let rx = later.rx_bytes().saturating_sub(earlier.rx_bytes()) as f64;
    Some(Rates {
        seconds,
        requests_per_s: reqs / seconds,
        tx_bytes_per_s: tx / seconds,
        rx_bytes_per_s: rx / seconds,
        tx_bytes_per_request: if reqs > 0.0 { tx / reqs } else { 0.0 },
    })
}

/// One connection's rates between two emits: the per-connection figures a 3-broker
/// cluster must not sum (librdkafka keeps one connection per broker, and a broker serves
/// each connection's requests one at a time).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct BrokerRates {
    /// librdkafka's name for the connection: `127.0.0.1:9410/2`.
    pub name: String,
    pub nodeid: i32,
    pub seconds: f64,
    /// Requests of the API asked for, per second.
    pub requests_per_s: f64,
    /// Responses received per second (all APIs).
    pub responses_per_s: f64,
    pub tx_bytes_per_s: f64,
    pub rx_bytes_per_s: f64,
    /// All bytes sent over this API's requests (right when it dominates, as Produce does).
    pub tx_bytes_per_request: f64,
}

/// Per-connection rates of `api` between an earlier and a later emit, real brokers of the
/// later emit in name order (a broker the earlier emit lacks counts from zero). Empty if the
/// two are not in order.
pub fn broker_rates(earlier: &Stats, later: &Stats, api: &str) -> Vec<BrokerRates> {
    let seconds = (later.ts - earlier.ts) as f64 / 1e6;
    if seconds <= 0.0 {
        return Vec::new();
    }
    let mut out: Vec<BrokerRates> = later
        .real_brokers()
        .map(|b| {
            let before = earlier.brokers.values().find(|e| e.name == b.name);
            let d = |f: fn(&BrokerStats) -> u64| f(b).saturating_sub(before.map_or(0, f)) as f64;
            let reqs = b
                .req
                .get(api)
                .copied()
                .unwrap_or(0)
                .saturating_sub(before.and_then(|e| e.req.get(api).copied()).unwrap_or(0))
                as f64;
            let tx = d(|x| x.txbytes);
            BrokerRates {
                name: b.name.clone(),
                nodeid: b.nodeid,
                seconds,
                requests_per_s: reqs / seconds,
                responses_per_s: d(|x| x.rx) / seconds,
                tx_bytes_per_s: tx / seconds,
                rx_bytes_per_s: d(|x| x.rxbytes) / seconds,
                tx_bytes_per_request: if reqs > 0.0 { tx / reqs } else { 0.0 },
            }
        })
        .collect();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const BACKOFF_1000: &str = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../fixtures/librdkafka/consumer-kafka431-backoff-1000ms/stats.jsonl"
    ));

    fn fixture() -> Vec<Stats> {
        BACKOFF_1000
            .lines()
            .map(|l| parse(l.as_bytes()).expect("fixture parses"))
            .collect()
    }

    #[test]
    fn parses_a_real_consumer_emit() {
        let s = fixture();
        assert_eq!(s.len(), 2);
        let first = &s[0];
        assert_eq!(first.client_type, "consumer");
        assert!(first.name.starts_with("rdkafka#consumer-"));
        // The real broker, not the GroupCoordinator entry.
        let real: Vec<_> = first.real_brokers().collect();
        assert_eq!(real.len(), 1);
        assert_eq!(real[0].name, "127.0.0.1:9092/1");
        assert!(first.requests("Fetch") > 0);
        assert!(real[0].rtt.cnt > 0 && real[0].rtt.p50 > 0);
        let t = first.topics.values().next().expect("the probe's topic");
        assert!(t.topic.starts_with("kgap.probe-fetch-backoff."));
        // Six partitions plus the internal UA partition (-1).
        assert_eq!(t.partitions.len(), 7);
    }

    #[test]
    fn rates_come_from_cumulative_counters_and_the_monotonic_clock() {
        let s = fixture();
        let r = rates(&s[0], &s[1], "Fetch").expect("in order");
        assert!((r.seconds - 1.0).abs() < 0.1, "{r:?}");
        assert!(r.requests_per_s > 0.0);
        // A consumer receives far more than it sends.
        assert!(r.rx_bytes_per_s > 100.0 * r.tx_bytes_per_s, "{r:?}");
        assert!(rates(&s[1], &s[0], "Fetch").is_none());
    }

    #[test]
    fn unknown_and_missing_fields_are_tolerated() {
        let s = parse(br#"{"name":"x","type":"producer","ts":5,"future_field":[1,2],"brokers":{"b/1":{"nodeid":1,"req":{"Produce":7},"txbytes":700}}}"#).unwrap();
        assert_eq!(s.requests("Produce"), 7);
        assert_eq!(s.tx_bytes(), 700);
        assert_eq!(s.fetchq_cnt(), 0);
        assert!(parse(b"not json").is_err());
    }
}
