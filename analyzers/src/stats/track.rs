//! One client's series of emits: who it is, when it restarted, and the previous counters
//! every interval's rates are differences from.
//!
//! Clients are told apart by `name` (librdkafka's `rdkafka#producer-1`, unique within a
//! process). A process that restarts gets the same name again, and its monotonic `ts` keeps
//! counting from the same boot, so a restart is seen in what went back: `ts` (another host or
//! a reboot), `age` (1.5+), or, before 1.5, the cumulative counters (`tx`, `txmsgs`, `rxmsgs`)
//! falling to less than half. (The top-level totals are sums over the brokers and topics of
//! the moment: they dip a little when the bootstrap broker is dropped, which is no restart.)
//! Then a new series starts and the report says why.

use std::collections::HashMap;

use super::interval::{BrokerFig, Interval, PartFig, TopicFig};
use super::model::{Dating, Emit};

/// Most brokers and partitions followed per client (hostile input cannot grow memory).
pub const MAX_BROKERS: usize = 1024;
pub const MAX_PARTITIONS: usize = 16384;
/// State changes and distinct states kept per broker.
const MAX_STATE_CHANGES: usize = 50;

/// The top-level counters a restart is judged on.
#[derive(Debug, Clone, Copy, Default)]
struct Top {
    ts: i64,
    age: Option<i64>,
    tx: Option<i64>,
    txmsgs: Option<i64>,
    rxmsgs: Option<i64>,
    txmsg_bytes: Option<i64>,
    rxmsg_bytes: Option<i64>,
    rebalance_cnt: Option<i64>,
}

/// Why a new emit cannot continue the series (pure: the previous and the new counters).
fn restart_reason(prev: &Top, cur: &Top) -> Option<&'static str> {
    let back = |a: Option<i64>, b: Option<i64>| matches!((a, b), (Some(a), Some(b)) if b < a);
    // A reset, not a dip: the counter restarted from (near) zero.
    let reset = |a: Option<i64>, b: Option<i64>| matches!((a, b), (Some(a), Some(b)) if b < a / 2);
    if cur.ts < prev.ts {
        Some("ts went backwards (another host, or the machine rebooted)")
    } else if back(prev.age, cur.age) {
        Some("age went back: the client was created again")
    } else if cur.age.is_none()
        && (reset(prev.tx, cur.tx)
            || reset(prev.txmsgs, cur.txmsgs)
            || reset(prev.rxmsgs, cur.rxmsgs))
    {
        Some("cumulative counters went back: the client was created again")
    } else {
        None
    }
}

/// A state change of one broker seen between two emits.
#[derive(Debug, Clone, serde::Serialize)]
pub struct StateChange {
    /// Line of the emit that shows the new state.
    pub line: u64,
    pub t_s: f64,
    pub from: String,
    pub to: String,
}

#[derive(Debug, Clone, Default)]
struct BrokerPrev {
    tx: Option<i64>,
    txbytes: Option<i64>,
    rx: Option<i64>,
    rxbytes: Option<i64>,
    produce: Option<i64>,
    fetch: Option<i64>,
    retries: Option<i64>,
    timeouts: Option<i64>,
    txerrs: Option<i64>,
    rxerrs: Option<i64>,
    corrid: Option<i64>,
    connects: Option<i64>,
    disconnects: Option<i64>,
}

#[derive(Debug, Clone, Default)]
pub(crate) struct BrokerTrack {
    pub name: String,
    pub nodeid: Option<i64>,
    pub source: Option<String>,
    pub last_state: Option<String>,
    /// Distinct states seen, in order of first sight.
    pub states: Vec<String>,
    pub state_changes: Vec<StateChange>,
    pub state_changes_total: u64,
    /// Times the state went from UP to anything else between two emits.
    pub down_episodes: u64,
    prev: Option<BrokerPrev>,
}

#[derive(Debug, Clone, Default)]
struct PartPrev {
    txmsgs: Option<i64>,
    rxmsgs: Option<i64>,
    rxbytes: Option<i64>,
    hi: Option<i64>,
    lag: Option<i64>,
    app: Option<i64>,
}

#[derive(Debug, Clone, Default)]
pub(crate) struct PartTrack {
    pub partition: i64,
    pub leader: Option<i64>,
    pub fetch_states: Vec<String>,
    prev: Option<PartPrev>,
}

#[derive(Debug, Clone, Default)]
pub(crate) struct TopicTrack {
    pub name: String,
    pub partitions: Vec<PartTrack>,
    index: HashMap<i64, usize>,
}

/// What one emit did to its series.
pub(crate) enum Observed {
    /// The same `ts` as the previous emit (a duplicate line): ignored.
    Duplicate,
    /// The emit's figures. The first of a series has its gauges and windows (the windows
    /// cover the time before it) but no rates: there is nothing to difference yet.
    Emit(Box<Interval>),
}

#[derive(Debug, Clone, Default)]
pub(crate) struct Track {
    pub name: String,
    pub client_id: Option<String>,
    pub client_type: Option<String>,
    /// 1-based: the n-th series of this name in the input.
    pub number: u32,
    /// Why this series started (for number > 1).
    pub started_because: Option<String>,
    pub first_ts: i64,
    pub last_ts: i64,
    pub first_time: Option<i64>,
    pub last_time: Option<i64>,
    pub first_line: u64,
    pub last_line: u64,
    pub emits: u64,
    pub intervals: u64,
    pub duplicates: u64,
    pub dating: Dating,
    pub brokers: Vec<BrokerTrack>,
    pub topics: Vec<TopicTrack>,
    /// Brokers or partitions beyond the caps, not followed.
    pub dropped: u64,
    pub fatal: Option<String>,
    pub rebalance_reason: Option<String>,
    pub cgrp_state: Option<String>,
    /// Where the consumer lag comes from (the first field the emits carry).
    pub lag_field: Option<&'static str>,
    broker_index: HashMap<String, usize>,
    topic_index: HashMap<String, usize>,
    prev: Option<Top>,
    prev_line: u64,
}

fn top_of(e: &Emit<'_>) -> Top {
    Top {
        ts: e.ts.unwrap_or(0),
        age: e.age,
        tx: e.tx,
        txmsgs: e.txmsgs,
        rxmsgs: e.rxmsgs,
        txmsg_bytes: e.txmsg_bytes,
        rxmsg_bytes: e.rxmsg_bytes,
        rebalance_cnt: e.cgrp.as_ref().and_then(|c| c.rebalance_cnt),
    }
}

/// A counter's increase, or None when either side lacks it or it went back (reset).
fn delta(prev: Option<i64>, cur: Option<i64>) -> Option<f64> {
    match (prev, cur) {
        (Some(p), Some(c)) if c >= p => Some((c - p) as f64),
        _ => None,
    }
}

fn per_s(d: Option<f64>, dt: f64) -> Option<f64> {
    d.map(|v| v / dt)
}

fn f(v: Option<i64>) -> Option<f64> {
    v.map(|v| v as f64)
}

/// UP (or UPDATE, a metadata refresh on an UP connection).
fn is_up(state: &str) -> bool {
    state == "UP" || state == "UPDATE"
}

/// The `req` counter of one API.
fn req(b: &super::model::Broker<'_>, api: &str) -> Option<i64> {
    b.req
        .as_ref()
        .and_then(|r| r.0.iter().find(|(k, _)| k == api).map(|(_, c)| c.0))
}

impl Track {
    pub fn new(e: &Emit<'_>, name: &str, number: u32, because: Option<&str>) -> Self {
        Track {
            name: name.to_string(),
            client_id: e.client_id.as_deref().map(str::to_string),
            client_type: e.client_type.as_deref().map(str::to_string),
            number,
            started_because: because.map(str::to_string),
            first_ts: e.ts.unwrap_or(0),
            first_time: e.time,
            ..Track::default()
        }
    }

    /// Whether `e` continues this series; `Some(reason)` when it starts a new one.
    pub fn breaks(&self, e: &Emit<'_>) -> Option<&'static str> {
        self.prev
            .as_ref()
            .and_then(|p| restart_reason(p, &top_of(e)))
    }

    pub fn is_producer(&self) -> bool {
        self.client_type.as_deref() == Some("producer")
    }

    pub fn is_consumer(&self) -> bool {
        self.client_type.as_deref() == Some("consumer")
    }

    fn broker_slot(&mut self, name: &str) -> Option<usize> {
        if let Some(&i) = self.broker_index.get(name) {
            return Some(i);
        }
        if self.brokers.len() >= MAX_BROKERS {
            self.dropped += 1;
            return None;
        }
        let i = self.brokers.len();
        self.brokers.push(BrokerTrack {
            name: name.to_string(),
            ..BrokerTrack::default()
        });
        self.broker_index.insert(name.to_string(), i);
        Some(i)
    }

    fn partitions_followed(&self) -> usize {
        self.topics.iter().map(|t| t.partitions.len()).sum()
    }

    fn topic_slot(&mut self, name: &str) -> usize {
        if let Some(&i) = self.topic_index.get(name) {
            return i;
        }
        let i = self.topics.len();
        self.topics.push(TopicTrack {
            name: name.to_string(),
            ..TopicTrack::default()
        });
        self.topic_index.insert(name.to_string(), i);
        i
    }

    /// Take one emit (known to continue this series).
    pub fn observe(&mut self, e: &Emit<'_>, line: u64) -> Observed {
        let top = top_of(e);
        self.emits += 1;
        self.note_dating(e);
        if let Some(f) = &e.fatal {
            self.fatal = Some(format!(
                "{}: {}",
                f.error.as_deref().unwrap_or("?"),
                f.reason.as_deref().unwrap_or("")
            ));
        }
        if let Some(c) = &e.cgrp {
            if let Some(r) = c.rebalance_reason.as_deref().filter(|r| !r.is_empty()) {
                self.rebalance_reason = Some(r.to_string());
            }
            self.cgrp_state = Some(format!(
                "{}/{}",
                c.state.as_deref().unwrap_or("?"),
                c.join_state.as_deref().unwrap_or("?")
            ));
        }
        let prev = self.prev;
        let first = prev.is_none();
        if let Some(p) = prev {
            if top.ts == p.ts {
                self.duplicates += 1;
                self.emits -= 1;
                return Observed::Duplicate;
            }
        }
        let dt = prev.map(|p| (top.ts - p.ts) as f64 / 1e6).unwrap_or(0.0);
        let t_s = (top.ts - self.first_ts) as f64 / 1e6;
        let mut iv = Interval {
            line,
            prev_line: if first { line } else { self.prev_line },
            t_s,
            dt_s: dt,
            time: e.time,
            producer: self.is_producer(),
            msg_cnt: f(e.msg_cnt),
            msg_size: f(e.msg_size),
            msg_max: f(e.msg_max),
            msg_size_max: f(e.msg_size_max),
            ..Interval::default()
        };
        if let Some(p) = prev {
            iv.tx_msgs_per_s = per_s(delta(p.txmsgs, top.txmsgs), dt);
            iv.tx_msg_bytes_per_s = per_s(delta(p.txmsg_bytes, top.txmsg_bytes), dt);
            iv.rx_msgs_per_s = per_s(delta(p.rxmsgs, top.rxmsgs), dt);
            iv.rx_msg_bytes_per_s = per_s(delta(p.rxmsg_bytes, top.rxmsg_bytes), dt);
            iv.rebalances = delta(p.rebalance_cnt, top.rebalance_cnt);
        }
        iv.assignment_size = e.cgrp.as_ref().and_then(|c| f(c.assignment_size));
        // A group consumer forwards every partition's fetch queue to its own queue; the
        // legacy API (simple_cnt > 0) keeps one queue a partition.
        iv.shared_fetchq = e.cgrp.is_some() && e.simple_cnt.unwrap_or(0) <= 0;
        self.observe_brokers(e, &mut iv, line, first);
        self.observe_topics(e, &mut iv);
        self.prev = Some(top);
        self.prev_line = line;
        self.last_ts = top.ts;
        self.last_time = e.time.or(self.last_time);
        if self.emits == 1 {
            self.first_line = line;
        }
        self.last_line = line;
        if !first {
            self.intervals += 1;
        }
        Observed::Emit(Box::new(iv))
    }

    fn note_dating(&mut self, e: &Emit<'_>) {
        let d = &mut self.dating;
        d.age |= e.age.is_some();
        if let Some(b) = &e.brokers {
            for (_, b) in &b.0 {
                d.connects |= b.connects.is_some();
                d.txidle |= b.txidle.is_some();
                d.percentiles |= b.rtt.is_some_and(|w| w.p50.is_some());
            }
        }
        if let Some(t) = &e.topics {
            for (_, t) in &t.0 {
                if let Some(p) = &t.partitions {
                    if let Some((_, p)) = p.0.first() {
                        d.consumer_lag_stored |=
                            p.consumer_lag_stored.is_some() || p.stored_leader_epoch.is_some();
                        d.leader_epoch |= p.stored_leader_epoch.is_some();
                    }
                }
            }
        }
    }

    fn observe_brokers(&mut self, e: &Emit<'_>, iv: &mut Interval, line: u64, first: bool) {
        let Some(brokers) = &e.brokers else { return };
        let dt = iv.dt_s;
        let mut seen = Vec::with_capacity(brokers.0.len());
        for (key, b) in &brokers.0 {
            let name = b.name.as_deref().unwrap_or(key);
            let Some(idx) = self.broker_slot(name) else {
                continue;
            };
            seen.push(idx);
            let t = &mut self.brokers[idx];
            t.nodeid = b.nodeid.or(t.nodeid);
            if t.source.is_none() {
                t.source = b.source.as_deref().map(str::to_string);
            }
            let state = b.state.as_deref();
            let mut changed = false;
            if let Some(s) = state {
                if !t.states.iter().any(|x| x == s) && t.states.len() < MAX_STATE_CHANGES {
                    t.states.push(s.to_string());
                }
                match &t.last_state {
                    Some(last) if last != s => {
                        changed = true;
                        t.state_changes_total += 1;
                        if is_up(last) && !is_up(s) {
                            t.down_episodes += 1;
                        }
                        if t.state_changes.len() < MAX_STATE_CHANGES {
                            t.state_changes.push(super::track::StateChange {
                                line,
                                t_s: iv.t_s,
                                from: last.clone(),
                                to: s.to_string(),
                            });
                        }
                    }
                    _ => {}
                }
                t.last_state = Some(s.to_string());
            }
            // A change and back within one interval shows only in stateage.
            if !first && b.stateage.is_some_and(|a| (a as f64) < dt * 1e6) && !changed {
                changed = true;
            }
            let cur = BrokerPrev {
                tx: b.tx,
                txbytes: b.txbytes,
                rx: b.rx,
                rxbytes: b.rxbytes,
                produce: req(b, "Produce"),
                fetch: req(b, "Fetch"),
                retries: b.txretries,
                timeouts: b.req_timeouts,
                txerrs: b.txerrs,
                rxerrs: b.rxerrs,
                corrid: b.rxcorriderrs,
                connects: b.connects,
                disconnects: b.disconnects,
            };
            let prev = t.prev.replace(cur.clone());
            let mut fig = BrokerFig {
                idx,
                up: state.map(is_up),
                state_changed: changed,
                waitresp_cnt: f(b.waitresp_cnt),
                outbuf_cnt: f(b.outbuf_cnt),
                waitresp_msg_cnt: f(b.waitresp_msg_cnt),
                outbuf_msg_cnt: f(b.outbuf_msg_cnt),
                rtt: b.rtt,
                int_latency: b.int_latency,
                outbuf_latency: b.outbuf_latency,
                throttle: b.throttle,
                ..BrokerFig::default()
            };
            fig.has_work = b.toppars.is_some_and(|t| t.0 > 0)
                || b.outbuf_cnt.unwrap_or(0) > 0
                || b.waitresp_cnt.unwrap_or(0) > 0;
            if let Some(p) = prev {
                fig.requests_per_s = per_s(delta(p.tx, cur.tx), dt);
                fig.tx_bytes = delta(p.txbytes, cur.txbytes);
                fig.tx_bytes_per_s = per_s(fig.tx_bytes, dt);
                fig.responses_per_s = per_s(delta(p.rx, cur.rx), dt);
                fig.rx_bytes_per_s = per_s(delta(p.rxbytes, cur.rxbytes), dt);
                fig.produce_requests = delta(p.produce, cur.produce);
                fig.fetch_requests = delta(p.fetch, cur.fetch);
                fig.produce_per_s = per_s(fig.produce_requests, dt);
                fig.fetch_per_s = per_s(fig.fetch_requests, dt);
                fig.bytes_per_produce = match (fig.tx_bytes, fig.produce_requests) {
                    (Some(b), Some(n)) if n > 0.0 => Some(b / n),
                    _ => None,
                };
                fig.retries = delta(p.retries, cur.retries);
                fig.timeouts = delta(p.timeouts, cur.timeouts);
                fig.txerrs = delta(p.txerrs, cur.txerrs);
                fig.rxerrs = delta(p.rxerrs, cur.rxerrs);
                fig.corriderrs = delta(p.corrid, cur.corrid);
                fig.connects = delta(p.connects, cur.connects);
                fig.disconnects = delta(p.disconnects, cur.disconnects);
            }
            iv.total.accumulate(&fig);
            iv.brokers.push(fig);
        }
        // A broker missing from this emit starts over when it comes back.
        for (i, t) in self.brokers.iter_mut().enumerate() {
            if !seen.contains(&i) {
                t.prev = None;
            }
        }
        iv.total.close_aggregate();
    }

    fn observe_topics(&mut self, e: &Emit<'_>, iv: &mut Interval) {
        let Some(topics) = &e.topics else { return };
        let dt = iv.dt_s;
        for (key, t) in &topics.0 {
            let name = t.topic.as_deref().unwrap_or(key);
            let ti = self.topic_slot(name);
            iv.topics.push(TopicFig {
                idx: ti,
                batchsize: t.batchsize,
                batchcnt: t.batchcnt,
            });
            let Some(parts) = &t.partitions else { continue };
            for (pkey, p) in &parts.0 {
                let Some(pid) = p.partition.or_else(|| pkey.parse().ok()) else {
                    continue;
                };
                // The internal UA partition holds messages waiting for metadata only.
                if pid < 0 {
                    continue;
                }
                let followed = self.partitions_followed();
                let topic = &mut self.topics[ti];
                let pi = match topic.index.get(&pid) {
                    Some(&i) => i,
                    None => {
                        if followed >= MAX_PARTITIONS {
                            self.dropped += 1;
                            continue;
                        }
                        topic.partitions.push(PartTrack {
                            partition: pid,
                            ..PartTrack::default()
                        });
                        topic.index.insert(pid, topic.partitions.len() - 1);
                        topic.partitions.len() - 1
                    }
                };
                let pt = &mut topic.partitions[pi];
                pt.leader = p.leader.filter(|&l| l >= 0).or(pt.leader);
                if let Some(s) = p.fetch_state.as_deref() {
                    if !pt.fetch_states.iter().any(|x| x == s) && pt.fetch_states.len() < 16 {
                        pt.fetch_states.push(s.to_string());
                    }
                }
                // consumer_lag_stored (1.8+) follows the application; consumer_lag the
                // commits (and, before 1.8, max(app, committed) offset). Without either (no
                // offsets stored, e.g. assign() without commits) the high watermark against
                // the application's position is the same thing.
                let position = match (p.hi_offset, p.app_offset) {
                    (Some(hi), Some(app)) if hi >= app => Some(hi - app),
                    _ => None,
                };
                let stored = p.consumer_lag_stored.and_then(|s| s.0);
                let (lag, source) = match (stored, p.consumer_lag, position) {
                    (Some(l), _, _) => (Some(l), "consumer_lag_stored"),
                    (None, Some(l), _) => (Some(l), "consumer_lag"),
                    (None, None, Some(l)) => (Some(l), "hi_offset - app_offset"),
                    _ => (None, ""),
                };
                if lag.is_some() && self.lag_field.is_none() {
                    self.lag_field = Some(source);
                }
                let cur = PartPrev {
                    txmsgs: p.txmsgs,
                    rxmsgs: p.rxmsgs,
                    rxbytes: p.rxbytes,
                    hi: p.hi_offset,
                    lag,
                    app: p.app_offset,
                };
                let prev = pt.prev.replace(cur.clone());
                let mut fig = PartFig {
                    topic: ti,
                    idx: pi,
                    msgq_cnt: f(p.msgq_cnt),
                    fetchq_cnt: f(p.fetchq_cnt),
                    fetchq_size: f(p.fetchq_size),
                    lag: f(lag),
                    unfetched: f(match (p.hi_offset, p.next_offset) {
                        (Some(hi), Some(next)) if hi >= next => Some(hi - next),
                        _ => None,
                    }),
                    waiting: f(waiting(p)),
                    fetched: f(p.rxmsgs),
                    ..PartFig::default()
                };
                if let Some(pp) = prev {
                    fig.tx_msgs_per_s = per_s(delta(pp.txmsgs, cur.txmsgs), dt);
                    fig.rx_msgs_per_s = per_s(delta(pp.rxmsgs, cur.rxmsgs), dt);
                    fig.rx_bytes_per_s = per_s(delta(pp.rxbytes, cur.rxbytes), dt);
                    fig.hi_per_s = per_s(delta(pp.hi, cur.hi), dt);
                    fig.lag_delta = match (pp.lag, cur.lag) {
                        (Some(a), Some(b)) => Some((b - a) as f64),
                        _ => None,
                    };
                    fig.taken = match (pp.app, cur.app) {
                        (Some(a), Some(b)) if b >= a => Some((b - a) as f64),
                        // Still unset: the application took none of this partition's.
                        (None, None) if p.rxmsgs.is_some() => Some(0.0),
                        _ => None,
                    };
                }
                iv.partitions.push(fig);
            }
        }
    }
}

/// Messages of a partition fetched and not yet handed to the application: from the
/// application's position to the fetcher's, or every message fetched while the application
/// has taken none (app_offset unset).
fn waiting(p: &super::model::Partition<'_>) -> Option<i64> {
    match (p.app_offset, p.next_offset, p.rxmsgs) {
        (Some(app), Some(next), _) if next >= app => Some(next - app),
        (None, Some(_), Some(rx)) => Some(rx),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn top(ts: i64, age: Option<i64>, tx: Option<i64>) -> Top {
        Top {
            ts,
            age,
            tx,
            ..Top::default()
        }
    }

    #[test]
    fn restarts_are_told_by_what_went_back() {
        let a = top(1_000, Some(500), Some(10));
        assert_eq!(restart_reason(&a, &top(2_000, Some(1_500), Some(12))), None);
        assert!(restart_reason(&a, &top(900, Some(1_500), Some(12)))
            .unwrap()
            .starts_with("ts went backwards"));
        assert!(restart_reason(&a, &top(2_000, Some(100), Some(12)))
            .unwrap()
            .starts_with("age"));
        // Without age (before 1.5) the counters tell, when they fell to less than half.
        assert!(
            restart_reason(&top(1_000, None, Some(10)), &top(2_000, None, Some(3)))
                .unwrap()
                .starts_with("cumulative")
        );
        assert_eq!(
            restart_reason(&top(1_000, None, Some(668)), &top(2_000, None, Some(667))),
            None
        );
        // With age, a dip of the totals (a dropped bootstrap broker) is no restart.
        assert_eq!(
            restart_reason(
                &top(1_000, Some(500), Some(668)),
                &top(2_000, Some(900), Some(1))
            ),
            None
        );
        assert_eq!(
            restart_reason(&top(1_000, None, None), &top(2_000, None, None)),
            None
        );
    }

    #[test]
    fn deltas_need_both_sides_and_never_go_negative() {
        assert_eq!(delta(Some(3), Some(5)), Some(2.0));
        assert_eq!(delta(Some(5), Some(3)), None);
        assert_eq!(delta(None, Some(3)), None);
    }
}
