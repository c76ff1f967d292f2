//! Protocol accounting shared by both log analyzers: requests per connection and
//! request type, Sent/Received paired by CorrId, in-flight depth.
//!
//! A connection is (client instance, broker name): two clients in one log talk to
//! the same broker over different connections with their own CorrIds.

use std::collections::{HashMap, VecDeque};

use serde::Serialize;

use crate::engine::bytes_eq::same_bytes;
use crate::librdkafka::{Event, Record};
use crate::vocab::report::{round3, us_to_ms, Dist, PerSecond, RateSummary};

/// Most connections tracked; later ones are pooled under one "(other)" entry.
pub const MAX_CONNECTIONS: usize = 4096;
/// Most request types per connection (librdkafka knows ~75 ApiKeys).
pub const MAX_APIS_PER_CONNECTION: usize = 128;
/// Most requests awaiting a response per connection; the oldest are forgotten
/// beyond that (and counted), so memory stays bounded on any input.
pub const MAX_OUTSTANDING: usize = 1 << 16;

/// One request type on one connection, as reported.
#[derive(Debug, Clone, Serialize)]
pub struct RequestStats {
    /// Client instance (`rdkafka#producer-1`), when the wrapper kept it.
    pub client: Option<String>,
    /// Broker name as librdkafka logs it (`host:port/<nodeid>`).
    pub broker: String,
    /// ApiKey name without `Request` (`Produce`, `Fetch`, …).
    pub request: String,
    /// Requests sent completely (a request sent in parts counts once).
    pub count: u64,
    /// Bytes of all requests.
    pub bytes_total: u64,
    /// Mean request size.
    pub bytes_mean: Option<f64>,
    /// Median request size.
    pub bytes_p50: Option<u64>,
    /// 99th percentile request size.
    pub bytes_p99: Option<u64>,
    /// Largest request.
    pub bytes_max: Option<u64>,
    /// `Sent partial` lines: the socket took the request in several writes.
    pub partial_chunks: u64,
    /// Responses received.
    pub responses: u64,
    /// Responses whose CorrId was never seen sent (log started mid-flight, or lines lost).
    pub unknown_corr_ids: u64,
    /// Round trip as librdkafka measured it (the `rtt` in the Received line).
    pub rtt_ms_p50: Option<f64>,
    /// 99th percentile round trip.
    pub rtt_ms_p99: Option<f64>,
    /// Slowest round trip.
    pub rtt_ms_max: Option<f64>,
    /// Mean round trip.
    pub rtt_ms_mean: Option<f64>,
    /// `Retrying …Request` lines.
    pub retries: u64,
    /// REQTMOUT `Timed out …Request` lines.
    pub timeouts: u64,
    /// Requests per second over the complete seconds of the log (needs timestamps).
    pub rate: Option<RateSummary>,
}

/// One connection, as reported.
#[derive(Debug, Clone, Serialize)]
pub struct ConnectionStats {
    /// Client instance.
    pub client: Option<String>,
    /// Broker name.
    pub broker: String,
    /// Most requests awaiting a response at once.
    pub inflight_max: u64,
    /// Mean number in flight (this request included) when a request was sent.
    pub inflight_at_send_mean: Option<f64>,
    /// Requests forgotten because more than [`MAX_OUTSTANDING`] awaited a response.
    pub forgotten_requests: u64,
    /// REQTMOUT summary lines' in-flight total.
    pub timed_out_in_flight: u64,
    /// REQTMOUT summary lines' out-queue total.
    pub timed_out_out_queue: u64,
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct Outstanding {
    pub api: u16,
    pub depth_at_send: u32,
}

#[derive(Debug)]
pub(crate) struct ApiAcc {
    pub name: String,
    pub count: u64,
    pub bytes_total: u64,
    pub bytes: Dist,
    pub partial_chunks: u64,
    pub responses: u64,
    pub unknown_corr_ids: u64,
    pub rtt_us: Dist,
    pub retries: u64,
    pub timeouts: u64,
    pub rate: PerSecond,
    /// rtt by in-flight depth at send: [1], [2..=5], [6..=20], [21..].
    pub rtt_by_depth: [Dist; 4],
    /// Streaming sums for the depth/rtt correlation.
    pub corr: Correlation,
    /// Sum and count of the in-flight depth when requests of this type were sent.
    pub depth_sum: u64,
    pub depth_n: u64,
}

impl ApiAcc {
    fn new(name: &str) -> Self {
        ApiAcc {
            name: name.to_string(),
            count: 0,
            bytes_total: 0,
            bytes: Dist::default(),
            partial_chunks: 0,
            responses: 0,
            unknown_corr_ids: 0,
            rtt_us: Dist::default(),
            retries: 0,
            timeouts: 0,
            rate: PerSecond::default(),
            rtt_by_depth: Default::default(),
            corr: Correlation::default(),
            depth_sum: 0,
            depth_n: 0,
        }
    }
}

/// Pearson correlation, accumulated one pair at a time.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Correlation {
    n: f64,
    sx: f64,
    sy: f64,
    sxx: f64,
    syy: f64,
    sxy: f64,
}

impl Correlation {
    pub fn add(&mut self, x: f64, y: f64) {
        self.n += 1.0;
        self.sx += x;
        self.sy += y;
        self.sxx += x * x;
        self.syy += y * y;
        self.sxy += x * y;
    }

    pub fn r(&self) -> Option<f64> {
        if self.n < 3.0 {
            return None;
        }
        let vx = self.n * self.sxx - self.sx * self.sx;
        let vy = self.n * self.syy - self.sy * self.sy;
        if vx <= 0.0 || vy <= 0.0 {
            return None;
        }
        Some((self.n * self.sxy - self.sx * self.sy) / (vx.sqrt() * vy.sqrt()))
    }
}

/// Requests awaiting a response on one connection, by CorrId. librdkafka numbers a
/// connection's requests in sending order, so a window of slots from the oldest
/// outstanding CorrId up does it in O(1) per request and bounded memory.
#[derive(Debug, Default)]
pub(crate) struct InFlight {
    base: i64,
    slots: VecDeque<Option<Outstanding>>,
    count: usize,
}

impl InFlight {
    /// Requests awaiting a response.
    pub fn len(&self) -> usize {
        self.count
    }

    /// Track a sent request; returns how many older ones had to be forgotten to
    /// stay within [`MAX_OUTSTANDING`] slots.
    pub fn insert(&mut self, corr_id: i32, o: Outstanding) -> u64 {
        let id = corr_id as i64;
        let mut forgotten = 0;
        let end = self.base + self.slots.len() as i64;
        if self.slots.is_empty() || id < self.base || id - end >= MAX_OUTSTANDING as i64 {
            // First request, a CorrId from before the window (a new numbering), or
            // a jump too far ahead: start over from this one.
            forgotten += self.count as u64;
            self.slots.clear();
            self.count = 0;
            self.base = id;
        }
        let end = self.base + self.slots.len() as i64;
        if id >= end {
            for _ in end..id {
                self.slots.push_back(None);
            }
            self.slots.push_back(Some(o));
            self.count += 1;
        } else {
            let slot = &mut self.slots[(id - self.base) as usize];
            if slot.is_none() {
                self.count += 1;
            }
            *slot = Some(o);
        }
        while self.slots.len() > MAX_OUTSTANDING {
            if self.slots.pop_front().flatten().is_some() {
                self.count -= 1;
                forgotten += 1;
            }
            self.base += 1;
        }
        self.trim();
        forgotten
    }

    /// The request with this CorrId, if it was awaiting a response.
    pub fn remove(&mut self, corr_id: i32) -> Option<Outstanding> {
        let id = corr_id as i64;
        if id < self.base || id >= self.base + self.slots.len() as i64 {
            return None;
        }
        let o = self.slots[(id - self.base) as usize].take()?;
        self.count -= 1;
        self.trim();
        Some(o)
    }

    /// Forget the oldest outstanding request of type `api` (a timeout took it).
    pub fn remove_oldest_of(&mut self, api: u16) -> bool {
        let found = self
            .slots
            .iter()
            .position(|s| s.is_some_and(|o| o.api == api));
        match found {
            Some(i) => {
                self.slots[i] = None;
                self.count -= 1;
                self.trim();
                true
            }
            None => false,
        }
    }

    fn trim(&mut self) {
        while let Some(None) = self.slots.front() {
            self.slots.pop_front();
            self.base += 1;
        }
    }
}

pub(crate) fn depth_bucket(depth: u32) -> usize {
    match depth {
        0..=1 => 0,
        2..=5 => 1,
        6..=20 => 2,
        _ => 3,
    }
}

/// Labels of the depth buckets, in order.
pub const DEPTH_BUCKETS: [&str; 4] = ["1", "2-5", "6-20", ">20"];

#[derive(Debug)]
pub(crate) struct ConnAcc {
    pub client: Option<String>,
    pub broker: String,
    raw_client: Vec<u8>,
    raw_broker: Vec<u8>,
    pub apis: Vec<ApiAcc>,
    /// The index [`api_index`](Self::api_index) gave last.
    last_api: usize,
    pub outstanding: InFlight,
    pub inflight_max: u64,
    depth_sum: u64,
    depth_n: u64,
    pub forgotten: u64,
    pub timed_out_in_flight: u64,
    pub timed_out_out_queue: u64,
}

impl ConnAcc {
    pub fn api_index(&mut self, name: &str) -> usize {
        // A connection's records are mostly of one type (Produce, Fetch): the last one
        // found is tried first.
        if let Some(a) = self.apis.get(self.last_api) {
            if same_bytes(a.name.as_bytes(), name.as_bytes()) {
                return self.last_api;
            }
        }
        let i = self.find_api(name);
        self.last_api = i;
        i
    }

    fn find_api(&mut self, name: &str) -> usize {
        // Inline compares (`same_bytes`): libc's memcmp call per API name and record
        // showed in perf.
        if let Some(i) = self
            .apis
            .iter()
            .position(|a| same_bytes(a.name.as_bytes(), name.as_bytes()))
        {
            return i;
        }
        if self.apis.len() >= MAX_APIS_PER_CONNECTION {
            // Pool the excess (only hostile input gets here).
            return self.apis.len() - 1;
        }
        self.apis.push(ApiAcc::new(name));
        self.apis.len() - 1
    }
}

/// Up to this many connections, a record's is found by a linear search.
const FEW_CONNECTIONS: usize = 16;

/// Requests of every connection in the log.
#[derive(Debug, Default)]
pub(crate) struct RequestAccounting {
    pub conns: Vec<ConnAcc>,
    index: HashMap<(Vec<u8>, Vec<u8>), usize>,
    last: Option<usize>,
}

/// What a protocol event did, for the analyzer that fed it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Effect {
    None,
    /// A request completed its send: (connection, api, depth after sending).
    Sent {
        conn: usize,
        api: usize,
        depth: u32,
    },
    /// A response arrived: (connection, api, rtt ms).
    Received {
        conn: usize,
        api: usize,
        rtt_ms: f64,
    },
}

impl RequestAccounting {
    /// The connection a record belongs to.
    pub fn conn(&mut self, client: Option<&str>, broker: Option<&str>) -> usize {
        let c = client.unwrap_or("").as_bytes();
        let b = broker.unwrap_or("").as_bytes();
        if let Some(i) = self.last {
            let k = &self.conns[i];
            if same_bytes(&k.raw_client, c) && same_bytes(&k.raw_broker, b) {
                return i;
            }
        }
        // A producer's records alternate between its brokers, so the last connection
        // misses often: a few connections are searched in place, without building the
        // map's key (two allocations) for every record.
        if self.conns.len() <= FEW_CONNECTIONS {
            if let Some(i) = self
                .conns
                .iter()
                .position(|k| same_bytes(&k.raw_client, c) && same_bytes(&k.raw_broker, b))
            {
                self.last = Some(i);
                return i;
            }
        }
        let i = if let Some(&i) = self.index.get(&(c.to_vec(), b.to_vec())) {
            i
        } else if self.conns.len() >= MAX_CONNECTIONS {
            self.conns.len() - 1
        } else {
            let display = broker.unwrap_or("(unknown broker)").replace('\\', "");
            self.conns.push(ConnAcc {
                client: client.map(str::to_string),
                broker: display,
                raw_client: c.to_vec(),
                raw_broker: b.to_vec(),
                apis: Vec::new(),
                last_api: 0,
                outstanding: InFlight::default(),
                inflight_max: 0,
                depth_sum: 0,
                depth_n: 0,
                forgotten: 0,
                timed_out_in_flight: 0,
                timed_out_out_queue: 0,
            });
            let i = self.conns.len() - 1;
            self.index.insert((c.to_vec(), b.to_vec()), i);
            i
        };
        self.last = Some(i);
        i
    }

    /// Account one protocol record (other events are ignored).
    pub fn add(&mut self, rec: &Record<'_>, t: Option<f64>) -> Effect {
        if !rec.event.is_protocol() {
            return Effect::None;
        }
        let ci = self.conn(rec.client, rec.broker);
        let conn = &mut self.conns[ci];
        match rec.event {
            Event::SentPartial { api, .. } => {
                let ai = conn.api_index(api);
                conn.apis[ai].partial_chunks += 1;
                Effect::None
            }
            Event::Sent {
                api,
                bytes,
                corr_id,
                ..
            } => {
                let ai = conn.api_index(api);
                let a = &mut conn.apis[ai];
                a.count += 1;
                a.bytes_total += bytes;
                a.bytes.record(bytes);
                if let Some(t) = t {
                    a.rate.add(t);
                }
                let depth = conn.outstanding.len() as u32 + 1;
                conn.forgotten += conn.outstanding.insert(
                    corr_id,
                    Outstanding {
                        api: ai as u16,
                        depth_at_send: depth,
                    },
                );
                let depth = conn.outstanding.len() as u32;
                let a = &mut conn.apis[ai];
                a.depth_sum += depth as u64;
                a.depth_n += 1;
                conn.inflight_max = conn.inflight_max.max(depth as u64);
                conn.depth_sum += depth as u64;
                conn.depth_n += 1;
                Effect::Sent {
                    conn: ci,
                    api: ai,
                    depth,
                }
            }
            Event::Received {
                api,
                corr_id,
                rtt_ms,
                ..
            } => {
                let ai = conn.api_index(api);
                let sent = conn.outstanding.remove(corr_id);
                let a = &mut conn.apis[ai];
                a.responses += 1;
                let rtt_us = (rtt_ms * 1000.0).round().max(0.0) as u64;
                a.rtt_us.record(rtt_us);
                match sent {
                    Some(o) => {
                        a.rtt_by_depth[depth_bucket(o.depth_at_send)].record(rtt_us);
                        a.corr.add(o.depth_at_send as f64, rtt_ms);
                    }
                    None => a.unknown_corr_ids += 1,
                }
                Effect::Received {
                    conn: ci,
                    api: ai,
                    rtt_ms,
                }
            }
            Event::Retrying {
                api, prev_corr_id, ..
            } => {
                let ai = conn.api_index(api);
                conn.apis[ai].retries += 1;
                if let Some(id) = prev_corr_id {
                    conn.outstanding.remove(id);
                }
                Effect::None
            }
            Event::TimedOutRequest { api, .. } => {
                let ai = conn.api_index(api);
                conn.apis[ai].timeouts += 1;
                // The timed-out request leaves the in-flight queue; librdkafka scans
                // from the oldest, so drop the oldest of that type.
                conn.outstanding.remove_oldest_of(ai as u16);
                Effect::None
            }
            Event::TimedOutSummary {
                in_flight,
                out_queue,
                ..
            } => {
                conn.timed_out_in_flight += in_flight;
                conn.timed_out_out_queue += out_queue;
                Effect::None
            }
            _ => Effect::None,
        }
    }

    /// Per connection and request type, in log order of first appearance.
    pub fn request_stats(&self) -> Vec<RequestStats> {
        let mut out = Vec::new();
        for c in &self.conns {
            for a in &c.apis {
                let has_bytes = !a.bytes.is_empty();
                let has_rtt = !a.rtt_us.is_empty();
                out.push(RequestStats {
                    client: c.client.clone(),
                    broker: c.broker.clone(),
                    request: a.name.clone(),
                    count: a.count,
                    bytes_total: a.bytes_total,
                    bytes_mean: has_bytes.then(|| round3(a.bytes_total as f64 / a.count as f64)),
                    bytes_p50: has_bytes.then(|| a.bytes.quantile(0.5)),
                    bytes_p99: has_bytes.then(|| a.bytes.quantile(0.99)),
                    bytes_max: has_bytes.then(|| a.bytes.max()),
                    partial_chunks: a.partial_chunks,
                    responses: a.responses,
                    unknown_corr_ids: a.unknown_corr_ids,
                    rtt_ms_p50: has_rtt.then(|| us_to_ms(a.rtt_us.quantile(0.5))),
                    rtt_ms_p99: has_rtt.then(|| us_to_ms(a.rtt_us.quantile(0.99))),
                    rtt_ms_max: has_rtt.then(|| us_to_ms(a.rtt_us.max())),
                    rtt_ms_mean: has_rtt.then(|| round3(a.rtt_us.mean() / 1000.0)),
                    retries: a.retries,
                    timeouts: a.timeouts,
                    rate: a.rate.summary(),
                });
            }
        }
        out
    }

    pub fn connection_stats(&self) -> Vec<ConnectionStats> {
        self.conns
            .iter()
            .map(|c| ConnectionStats {
                client: c.client.clone(),
                broker: c.broker.clone(),
                inflight_max: c.inflight_max,
                inflight_at_send_mean: (c.depth_n > 0)
                    .then(|| round3(c.depth_sum as f64 / c.depth_n as f64)),
                forgotten_requests: c.forgotten,
                timed_out_in_flight: c.timed_out_in_flight,
                timed_out_out_queue: c.timed_out_out_queue,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::librdkafka::find_record;

    fn feed(acc: &mut RequestAccounting, lines: &[&str]) {
        for l in lines {
            let rec = find_record(l.as_bytes()).expect(l);
            acc.add(&rec, rec.timestamp.map(|t| t.secs));
        }
    }

    #[test]
    fn partial_sends_count_once_and_pair_by_corr_id() {
        let mut acc = RequestAccounting::default();
        feed(
            &mut acc,
            &[
                "%7|1700000000.000|SEND|p#producer-1| [thrd:b:9092/1]: b:9092/1: Sent partial ProduceRequest (v10, 0+65536/100000 bytes, CorrId 7)",
                "%7|1700000000.001|SEND|p#producer-1| [thrd:b:9092/1]: b:9092/1: Sent ProduceRequest (v10, 100000 bytes @ 65536, CorrId 7)",
                "%7|1700000000.002|RECV|p#producer-1| [thrd:b:9092/1]: b:9092/1: Received ProduceResponse (v10, 62 bytes, CorrId 7, rtt 2.00ms)",
                "%7|1700000000.003|RECV|p#producer-1| [thrd:b:9092/1]: b:9092/1: Received ProduceResponse (v10, 62 bytes, CorrId 99, rtt 1.00ms)",
            ],
        );
        let s = &acc.request_stats()[0];
        assert_eq!((s.count, s.partial_chunks, s.bytes_total), (1, 1, 100000));
        assert_eq!((s.responses, s.unknown_corr_ids), (2, 1));
        assert_eq!(s.rtt_ms_max, Some(2.0));
        assert_eq!(acc.conns[0].outstanding.len(), 0);
    }

    #[test]
    fn two_clients_on_one_broker_keep_their_own_corr_ids() {
        let mut acc = RequestAccounting::default();
        feed(
            &mut acc,
            &[
                "%7|1700000000.000|SEND|p#producer-1| [thrd:b:9092/1]: b:9092/1: Sent ProduceRequest (v10, 10 bytes @ 0, CorrId 3)",
                "%7|1700000000.000|SEND|c#consumer-2| [thrd:b:9092/1]: b:9092/1: Sent FetchRequest (v11, 10 bytes @ 0, CorrId 3)",
                "%7|1700000000.001|RECV|c#consumer-2| [thrd:b:9092/1]: b:9092/1: Received FetchResponse (v11, 10 bytes, CorrId 3, rtt 1.00ms)",
            ],
        );
        assert_eq!(acc.conns.len(), 2);
        assert_eq!(
            acc.conns[0].outstanding.len(),
            1,
            "producer's request still in flight"
        );
        assert_eq!(acc.conns[1].outstanding.len(), 0);
    }

    #[test]
    fn outstanding_map_is_bounded() {
        let mut acc = RequestAccounting::default();
        for id in 0..(MAX_OUTSTANDING as i32 + 10) {
            let l = format!("b:9092/1: Sent ProduceRequest (v10, 10 bytes @ 0, CorrId {id})");
            let rec = find_record(l.as_bytes()).unwrap();
            acc.add(&rec, None);
        }
        assert_eq!(acc.conns[0].outstanding.len(), MAX_OUTSTANDING);
        assert_eq!(acc.conns[0].forgotten, 10);
    }
}
