//! Each interval's rule answers, gathered per rule (and per broker) for the diagnoses.

use super::held::{BrokerHeld, Held};
use super::rules;
use super::thresholds::Thresholds;
use crate::stats::config::Resolved;
use crate::stats::interval::{batches_per_request, ms, BrokerFig, Interval};
use crate::stats::stat::Stat;

#[derive(Debug, Clone, Default)]
pub(crate) struct Diagnoser {
    pub(super) ceiling: Vec<BrokerHeld>,
    pub(super) ceiling_batches: Stat,
    pub(super) inflight: Vec<BrokerHeld>,
    pub(super) backlog: Held,
    pub(super) backlog_share: Stat,
    pub(super) linger: Held,
    pub(super) linger_p50: Stat,
    pub(super) throttle: Vec<BrokerHeld>,
    pub(super) timeouts: Vec<BrokerHeld>,
    pub(super) unavailable: Vec<BrokerHeld>,
    pub(super) silent: Vec<BrokerHeld>,
    pub(super) fetch_full: Held,
    pub(super) starved: Held,
    /// Receive rates of the starved intervals (naps are the ones near zero).
    pub(super) starved_rx: Stat,
    /// Intervals where the fetcher napped with data waiting and room in the queues, and the
    /// share of those intervals it was busy.
    pub(super) fetcher_naps: Held,
    pub(super) fetcher_busy: Stat,
    /// Until when (interval clock, s) a throttle the broker asked for holds the fetcher.
    pub(super) throttled_until_s: f64,
    /// Intervals where the application took nothing with messages waiting for it, their
    /// seconds, the messages waiting and those fetched meanwhile.
    pub(super) app_stalled: Held,
    pub(super) app_stalled_s: f64,
    pub(super) app_waiting: Stat,
    pub(super) app_fetched_meanwhile: f64,
    /// The messages waiting for the application at the previous emit.
    pub(super) app_waiting_prev: Option<f64>,
    /// The first emit, where the application had taken a small share of what was fetched:
    /// (waiting, fetched, in the fetch queue).
    pub(super) app_behind_first: Option<(f64, f64, f64)>,
}

fn slot(v: &mut Vec<BrokerHeld>, i: usize) -> &mut BrokerHeld {
    if v.len() <= i {
        v.resize_with(i + 1, BrokerHeld::default);
    }
    &mut v[i]
}

fn opt(s: &mut Stat, t: f64, v: Option<f64>) {
    if let Some(v) = v {
        s.add(t, v);
    }
}

impl Diagnoser {
    pub fn observe(&mut self, iv: &Interval, c: &Resolved, t: &Thresholds) {
        let ts = iv.t_s;
        if iv.producer {
            let batches = batches_per_request(iv);
            for b in &iv.brokers {
                // The ceiling is per connection: the broker serves one connection's requests
                // one at a time. Batches per request come from the topics (client-wide).
                let mut one = iv.clone_for_broker(b);
                one.topics = iv.topics.clone();
                let r = rules::per_request_ceiling(&one, c, t);
                let h = slot(&mut self.ceiling, b.idx);
                h.held.observe(r, iv);
                if r == Some(true) {
                    opt(&mut h.a, ts, b.produce_per_s);
                    opt(&mut h.b, ts, b.bytes_per_produce);
                    opt(
                        &mut h.c,
                        ts,
                        b.int_latency
                            .filter(|w| w.count() > 0)
                            .and_then(|w| ms(w.p50)),
                    );
                    opt(&mut h.d, ts, iv.queue_share());
                    opt(&mut self.ceiling_batches, ts, batches);
                }
                let r = rules::inflight_queueing(b, t);
                let h = slot(&mut self.inflight, b.idx);
                h.held.observe(r, iv);
                if let (Some(w), Some(rtt)) = (b.waitresp_cnt, b.rtt.filter(|w| w.count() > 0)) {
                    if b.produce_per_s.unwrap_or(0.0) > 0.0 {
                        if let Some(p50) = ms(rtt.p50) {
                            h.corr.add(w, p50);
                        }
                    }
                }
                if r == Some(true) {
                    opt(&mut h.a, ts, b.waitresp_cnt);
                    let rtt = b.rtt.filter(|w| w.count() > 0);
                    opt(&mut h.b, ts, rtt.and_then(|w| ms(w.p50)));
                    opt(&mut h.c, ts, rtt.and_then(|w| ms(w.min)));
                    opt(&mut h.d, ts, b.bytes_per_produce);
                }
            }
            let r = rules::producer_backlog(iv, t);
            self.backlog.observe(r, iv);
            if r == Some(true) {
                opt(&mut self.backlog_share, ts, iv.queue_share());
            }
            let r = rules::linger_bound(iv, c, t);
            self.linger.observe(r, iv);
            if r == Some(true) {
                opt(
                    &mut self.linger_p50,
                    ts,
                    iv.total.int_latency.and_then(|w| ms(w.p50)),
                );
            }
        } else {
            let any_full = iv
                .partitions
                .iter()
                .filter_map(|p| rules::fetch_queue_full(p, c, t))
                .reduce(|a, b| a || b);
            self.fetch_full.observe(any_full, iv);
            // A throttled response holds the fetcher back for its throttle time, which can
            // span many intervals after the one that reports it.
            let throttle_ms = iv
                .brokers
                .iter()
                .filter_map(|b| b.throttle.filter(|w| w.count() > 0).and_then(|w| w.max))
                .max();
            if let Some(m) = throttle_ms {
                self.throttled_until_s = self.throttled_until_s.max(iv.t_s + m as f64 / 1000.0);
            }
            let throttled = iv.t_s - iv.dt_s < self.throttled_until_s;
            let r = rules::fetcher_napping(iv, c, throttled);
            self.fetcher_naps.observe(r, iv);
            if r == Some(true) {
                let rtt = iv.total.rtt.and_then(|w| ms(w.p50)).unwrap_or(0.0);
                opt(
                    &mut self.fetcher_busy,
                    ts,
                    iv.total.fetch_per_s.map(|f| f * rtt / 1000.0),
                );
            }
            let r = rules::starved(iv, c, t);
            self.starved.observe(r, iv);
            if r == Some(true) {
                opt(&mut self.starved_rx, ts, iv.rx_msgs_per_s);
            }
            self.observe_app(iv);
        }
        for b in &iv.brokers {
            let r = rules::throttled(b, t);
            let h = slot(&mut self.throttle, b.idx);
            h.held.observe(r, iv);
            if r == Some(true) {
                let w = b.throttle.unwrap_or_default();
                opt(&mut h.a, ts, w.max.map(|v| v as f64));
                opt(&mut h.b, ts, w.avg.map(|v| v as f64));
                h.c.add(ts, w.count() as f64);
            }
            let r = rules::timeouts_or_retries(b, t);
            let h = slot(&mut self.timeouts, b.idx);
            h.held.observe(r, iv);
            if r == Some(true) {
                opt(&mut h.a, ts, b.timeouts);
                opt(&mut h.b, ts, b.retries);
                opt(
                    &mut h.c,
                    ts,
                    b.rtt.filter(|w| w.count() > 0).and_then(|w| ms(w.max)),
                );
            }
            let r = rules::broker_silent(b);
            let h = slot(&mut self.silent, b.idx);
            h.held.observe(r, iv);
            if r == Some(true) {
                opt(&mut h.a, ts, b.waitresp_cnt);
                h.b.add(ts, iv.dt_s);
            }
            let r = rules::broker_unavailable(b);
            let h = slot(&mut self.unavailable, b.idx);
            h.held.observe(r, iv);
            if r == Some(true) {
                opt(&mut h.a, ts, b.disconnects);
                h.b.add(ts, if b.up == Some(false) { 1.0 } else { 0.0 });
            }
        }
    }
}

impl Diagnoser {
    /// Whether the application takes what was fetched (app-not-polling).
    fn observe_app(&mut self, iv: &Interval) {
        let waiting = iv.waiting_total();
        if iv.dt_s <= 0.0 {
            if rules::app_behind(iv) == Some(true) {
                let queued = iv.fetchq_total().unwrap_or(0.0);
                self.app_behind_first =
                    waiting.zip(iv.fetched_total()).map(|(w, f)| (w, f, queued));
            }
        } else {
            let r = rules::app_stalled(iv, self.app_waiting_prev);
            self.app_stalled.observe(r, iv);
            if r == Some(true) {
                self.app_stalled_s += iv.dt_s;
                opt(&mut self.app_waiting, iv.t_s, waiting);
                self.app_fetched_meanwhile += iv.rx_msgs_per_s.unwrap_or(0.0) * iv.dt_s;
            }
        }
        self.app_waiting_prev = waiting;
    }
}

impl Interval {
    /// This interval as seen by one connection: its figures in place of the aggregate.
    fn clone_for_broker(&self, b: &BrokerFig) -> Interval {
        Interval {
            line: self.line,
            prev_line: self.prev_line,
            t_s: self.t_s,
            dt_s: self.dt_s,
            producer: self.producer,
            msg_cnt: self.msg_cnt,
            msg_size: self.msg_size,
            msg_max: self.msg_max,
            msg_size_max: self.msg_size_max,
            total: b.clone(),
            ..Interval::default()
        }
    }
}
