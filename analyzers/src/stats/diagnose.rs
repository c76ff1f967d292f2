//! From the rules' per-interval answers to diagnoses: where each held (intervals, episodes,
//! brokers, partitions), the evidence in figures with their units, the cause in the post's
//! terms, the fix, and what statistics cannot tell apart.

use serde_json::{json, Value};

use super::config::Resolved;
use super::interval::{ms, Interval};
use super::report::{Episode, StatsDiagnosis};
use super::rules;
use super::stat::{round_sig, Stat};
use super::summary::SeriesAcc;
use super::thresholds::Thresholds;
use super::track::Track;

/// Episodes kept per diagnosis.
const MAX_EPISODES: usize = 10;

/// Where one rule held over a series.
#[derive(Debug, Clone, Default)]
pub(crate) struct Held {
    pub considered: u64,
    pub held: u64,
    episodes: Vec<Episode>,
    open: Option<Episode>,
}

impl Held {
    pub fn observe(&mut self, r: Option<bool>, iv: &Interval) {
        match r {
            Some(true) => {
                self.considered += 1;
                self.held += 1;
                match &mut self.open {
                    Some(e) => {
                        e.to_line = iv.line;
                        e.to_t_s = round_sig(iv.t_s);
                        e.intervals += 1;
                    }
                    None => {
                        self.open = Some(Episode {
                            from_line: iv.prev_line,
                            to_line: iv.line,
                            from_t_s: round_sig(iv.t_s - iv.dt_s),
                            to_t_s: round_sig(iv.t_s),
                            intervals: 1,
                        })
                    }
                }
            }
            Some(false) => {
                self.considered += 1;
                self.close();
            }
            None => self.close(),
        }
    }

    fn close(&mut self) {
        if let Some(e) = self.open.take() {
            if self.episodes.len() < MAX_EPISODES {
                self.episodes.push(e);
            }
        }
    }

    pub fn share(&self) -> f64 {
        if self.considered == 0 {
            0.0
        } else {
            self.held as f64 / self.considered as f64
        }
    }

    fn episodes(&self) -> Vec<Episode> {
        let mut e = self.episodes.clone();
        if e.len() < MAX_EPISODES {
            e.extend(self.open.clone());
        }
        e
    }

    /// Fires for a share rule: held in enough of the intervals it applied to.
    fn by_share(&self, t: &Thresholds) -> bool {
        self.held > 0 && self.share() >= t.min_share_of_intervals
    }
}

/// Pearson correlation, streamed.
#[derive(Debug, Clone, Default)]
struct Corr {
    n: f64,
    sx: f64,
    sy: f64,
    sxy: f64,
    sxx: f64,
    syy: f64,
}

impl Corr {
    fn add(&mut self, x: f64, y: f64) {
        self.n += 1.0;
        self.sx += x;
        self.sy += y;
        self.sxy += x * y;
        self.sxx += x * x;
        self.syy += y * y;
    }

    fn r(&self) -> Option<f64> {
        if self.n < 3.0 {
            return None;
        }
        let cov = self.n * self.sxy - self.sx * self.sy;
        let vx = self.n * self.sxx - self.sx * self.sx;
        let vy = self.n * self.syy - self.sy * self.sy;
        (vx > 0.0 && vy > 0.0).then(|| cov / (vx * vy).sqrt())
    }
}

/// Figures seen while a per-broker rule held.
#[derive(Debug, Clone, Default)]
struct BrokerHeld {
    held: Held,
    a: Stat,
    b: Stat,
    c: Stat,
    d: Stat,
    corr: Corr,
}

#[derive(Debug, Clone, Default)]
pub(crate) struct Diagnoser {
    ceiling: Vec<BrokerHeld>,
    ceiling_batches: Stat,
    inflight: Vec<BrokerHeld>,
    backlog: Held,
    backlog_share: Stat,
    linger: Held,
    linger_p50: Stat,
    throttle: Vec<BrokerHeld>,
    timeouts: Vec<BrokerHeld>,
    unavailable: Vec<BrokerHeld>,
    silent: Vec<BrokerHeld>,
    fetch_full: Held,
    starved: Held,
    /// Receive rates of the starved intervals (naps are the ones near zero).
    starved_rx: Stat,
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
            let batches = rules::batches_per_request(iv);
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
            let r = rules::starved(iv, c, t);
            self.starved.observe(r, iv);
            if r == Some(true) {
                opt(&mut self.starved_rx, ts, iv.rx_msgs_per_s);
            }
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

impl Interval {
    /// This interval as seen by one connection: its figures in place of the aggregate.
    fn clone_for_broker(&self, b: &super::interval::BrokerFig) -> Interval {
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

fn summ(s: &Stat) -> Value {
    match s.summary(1.0) {
        Some(x) => json!({"p50": x.p50, "min": x.min, "max": x.max}),
        None => Value::Null,
    }
}

fn med(s: &Stat) -> Value {
    s.median().map(round_sig).map_or(Value::Null, Value::from)
}

/// Everything a diagnosis needs from its series.
/// Seconds (summed over its silent intervals) a connection must be silent: one slow
/// interval on a loaded machine is a long round trip, not a stopped broker.
const SILENT_MIN_S: f64 = 2.0;

/// The analyzer name the catalogue knows these diagnoses by.
pub const SOURCE: &str = "analyze-stats";

pub(crate) struct Context<'a> {
    pub track: &'a Track,
    pub acc: &'a SeriesAcc,
    pub config: &'a Resolved,
    pub t: &'a Thresholds,
}

impl Context<'_> {
    fn base(&self, id: &'static str, title: String, held: &Held) -> StatsDiagnosis {
        // Which finding it speaks for, and how strongly, is the catalogue's to say.
        let (finding, strength) = crate::findings::evidence_from(id, Some(SOURCE), None)
            .map_or((None, None), |(f, s)| (Some(f.id), Some(s)));
        StatsDiagnosis {
            id,
            title,
            finding,
            strength,
            client: self.track.name.clone(),
            series: self.track.number,
            brokers: Vec::new(),
            partitions: Vec::new(),
            intervals_held: held.held,
            intervals_considered: held.considered,
            episodes: held.episodes(),
            evidence: Value::Null,
            cause: String::new(),
            fix: String::new(),
            cannot_tell: None,
        }
    }

    fn broker(&self, i: usize) -> &str {
        self.track.brokers.get(i).map_or("?", |b| b.name.as_str())
    }

    fn setting(&self, v: super::config::Setting) -> Value {
        json!({"value": v.value, "source": v.source})
    }
}

/// Per-broker rule results: the brokers where it fired, and the combined where-it-held.
fn fired(
    v: &[BrokerHeld],
    pass: impl Fn(&BrokerHeld) -> bool,
) -> (Vec<(usize, &BrokerHeld)>, Held) {
    let hits: Vec<(usize, &BrokerHeld)> = v.iter().enumerate().filter(|(_, h)| pass(h)).collect();
    let mut all = Held::default();
    for (_, h) in &hits {
        all.considered = all.considered.max(h.held.considered);
        all.held = all.held.max(h.held.held);
        for e in h.held.episodes() {
            if all.episodes.len() < MAX_EPISODES && !all.episodes.contains(&e) {
                all.episodes.push(e);
            }
        }
    }
    all.episodes
        .sort_by(|a, b| a.from_t_s.total_cmp(&b.from_t_s));
    (hits, all)
}

impl Diagnoser {
    pub fn finish(&self, cx: &Context<'_>) -> Vec<StatsDiagnosis> {
        let t = cx.t;
        let mut out = Vec::new();
        let acc = cx.acc;

        // --- per-request ceiling ---------------------------------------------------------
        let (hits, held) = fired(&self.ceiling, |h| h.held.by_share(t));
        if !hits.is_empty() {
            let per_broker: Vec<Value> = hits
                .iter()
                .map(|(i, h)| {
                    json!({
                        "broker": cx.broker(*i),
                        "intervals_held": h.held.held,
                        "intervals_considered": h.held.considered,
                        "produce_requests_per_s": summ(&h.a),
                        "bytes_per_produce_request": summ(&h.b),
                        "int_latency_p50_ms": summ(&h.c),
                    })
                })
                .collect();
            // One connection's rate: the broker serves each connection one request at a
            // time, so the sum over brokers is not anyone's cost per request.
            let (bi, busiest) = hits
                .iter()
                .max_by(|a, b| {
                    a.1.a
                        .median()
                        .unwrap_or(0.0)
                        .total_cmp(&b.1.a.median().unwrap_or(0.0))
                })
                .map(|(i, h)| (*i, *h))
                .expect("hits is not empty");
            let rate = busiest.a.median().unwrap_or(0.0);
            let all_rate = hits
                .iter()
                .map(|(_, h)| h.a.median().unwrap_or(0.0))
                .sum::<f64>();
            let bytes = busiest.b.median().unwrap_or(0.0);
            let rate_cv = acc.total_produce_cv();
            let on = if hits.len() > 1 {
                format!(
                    " on {} (the busiest of {} connections at the ceiling, {:.0}/s together)",
                    cx.broker(bi),
                    hits.len(),
                    all_rate
                )
            } else {
                // One connection: the rate is its own (and the title as it always was).
                String::new()
            };
            let mut d = cx.base(
                "per-request-ceiling",
                format!(
                    "bound by the broker's cost per request: {:.0} ProduceRequests/s of {:.0} B{on} \
                     while messages wait",
                    rate, bytes
                ),
                &held,
            );
            d.brokers = hits
                .iter()
                .map(|(i, _)| cx.broker(*i).to_string())
                .collect();
            let batch = acc.batch_bytes_p50();
            d.evidence = json!({
                "produce_requests_per_s_p50": round_sig(rate),
                "bytes_per_produce_request_p50": round_sig(bytes),
                "us_per_request_at_this_rate": if rate > 0.0 { round_sig(1e6 / rate) } else { 0.0 },
                "batches_per_produce_request_p50": med(&self.ceiling_batches),
                "batch_bytes_p50": batch.map(round_sig),
                "batch_size": cx.setting(cx.config.batch_size),
                "batch_fill_of_batch_size": batch.map(|b| round_sig(b / cx.config.batch_size.value)),
                "produce_request_rate_cv": rate_cv.map(round_sig),
                "int_latency_p50_ms_trend_per_s": acc.int_latency_trend().map(round_sig),
                "queue_share_p50": med(&hits[0].1.d),
                "per_broker": per_broker,
            });
            if hits.len() > 1 {
                if let Some(o) = d.evidence.as_object_mut() {
                    o.insert("busiest_broker".into(), cx.broker(bi).into());
                    o.insert(
                        "produce_requests_per_s_all_brokers".into(),
                        round_sig(all_rate).into(),
                    );
                }
            }
            let full = batch.is_some_and(|b| b >= t.full_batch_share * cx.config.batch_size.value);
            d.cause = format!(
                "Each ProduceRequest carries one partition's batch ({} per request here) and \
                 the broker serves a connection's requests one at a time, so at this request \
                 rate its fixed cost per request is the ceiling; messages queue in the client \
                 meanwhile (int_latency). {} The post: ~15,400 requests/s of 15.6 KB, ~65 µs \
                 each, ~240k msg/s whatever the partitions or linger.",
                med(&self.ceiling_batches),
                if full {
                    "The batches are full: batch.size closes them."
                } else {
                    "The batches are far below batch.size: they close before filling."
                }
            );
            d.fix = "Raise batch.size (librdkafka's default is 1000000; the post's producer \
                     went from 233k to 991k msg/s between 16 KB and 1 MB) and give linger.ms \
                     room to fill the batches, so each request carries more bytes."
                .into();
            d.cannot_tell = Some(
                "Statistics cannot tell the broker's per-request cost from librdkafka's own \
                 broker thread running out of CPU to build requests: per-thread CPU \
                 (analyze-thread-cpu: rdk:broker below one core) tells; a debug=protocol log \
                 (analyze-protocol-log) shows every request's size and rtt."
                    .into(),
            );
            out.push(d);
        }

        // --- in-flight queueing ----------------------------------------------------------
        let (hits, held) = fired(&self.inflight, |h| h.held.by_share(t));
        if !hits.is_empty() {
            let per_broker: Vec<Value> = hits
                .iter()
                .map(|(i, h)| {
                    json!({
                        "broker": cx.broker(*i),
                        "intervals_held": h.held.held,
                        "intervals_considered": h.held.considered,
                        "waitresp_cnt": summ(&h.a),
                        "rtt_p50_ms": summ(&h.b),
                        "rtt_min_ms": summ(&h.c),
                        "bytes_per_produce_request": summ(&h.d),
                        "waitresp_rtt_correlation": h.corr.r().map(round_sig),
                    })
                })
                .collect();
            // The connection where most requests wait: the one that queues.
            let (qi, h) = hits
                .iter()
                .max_by(|a, b| {
                    a.1.a
                        .median()
                        .unwrap_or(0.0)
                        .total_cmp(&b.1.a.median().unwrap_or(0.0))
                })
                .map(|(i, h)| (*i, *h))
                .expect("hits is not empty");
            let mut d = cx.base(
                "inflight-queueing",
                format!(
                    "requests queue in flight{}: {:.0} waiting for a response, rtt p50 \
                     {:.2} ms against {:.2} ms for the fastest",
                    if hits.len() > 1 {
                        format!(" on {} (of {} connections)", cx.broker(qi), hits.len())
                    } else {
                        String::new()
                    },
                    h.a.median().unwrap_or(0.0),
                    h.b.median().unwrap_or(0.0),
                    h.c.median().unwrap_or(0.0)
                ),
                &held,
            );
            d.brokers = hits
                .iter()
                .map(|(i, _)| cx.broker(*i).to_string())
                .collect();
            d.evidence = json!({
                "waitresp_cnt_p50": med(&h.a),
                "rtt_p50_ms_p50": med(&h.b),
                "rtt_min_ms_p50": med(&h.c),
                "bytes_per_produce_request_p50": med(&h.d),
                "max_in_flight": cx.setting(cx.config.max_in_flight),
                "linger_ms": cx.setting(cx.config.linger_ms),
                "per_broker": per_broker,
            });
            d.cause = "Many small ProduceRequests are in flight on one connection at once \
                       (waitresp_cnt well above 5) and the broker serves them one at a time, so \
                       each waits behind the others: the round trip grows with the depth while \
                       the fastest request stays fast. librdkafka's default window is 1000000 \
                       requests; with linger.ms=0 a request leaves as soon as a message or two \
                       is ready. The post: p50/p99 14.1/26.4 ms against 0.47/1.28 ms at \
                       max.in.flight=5, same throughput."
                .into();
            d.fix = "Set max.in.flight.requests.per.connection=5 (Java's default): messages \
                     then wait for a free slot and coalesce into fewer, larger requests; it does \
                     not conflict with a large batch.size."
                .into();
            d.cannot_tell = Some(
                "waitresp_cnt is sampled once per interval; a debug=protocol log \
                 (analyze-protocol-log) pairs each request with its response and shows rtt \
                 against the depth it was sent at."
                    .into(),
            );
            out.push(d);
        }

        // --- producer backlog ------------------------------------------------------------
        // Rising: int_latency high (and not just the linger) and growing while the queue fills
        // past half its limit; near the limit in any interval is enough by itself.
        let high = t
            .backlog_int_latency_ms
            .max(2.0 * cx.config.linger_ms.value);
        let rising = acc.int_latency_trend().is_some_and(|s| s > 0.0)
            && acc.int_latency_p50_median().is_some_and(|p| p >= high)
            && acc.queue_trend().is_some_and(|s| s > 0.0)
            && acc
                .queue_share_max()
                .is_some_and(|q| q >= 0.5 * t.backlog_queue_share);
        if self.backlog.held > 0 || rising {
            let share = self.backlog_share.max().or(acc.queue_share_max());
            let mut d = cx.base(
                "producer-backlog",
                format!(
                    "the producer queue is {}full{}: produce() is about to fail with QueueFull",
                    share.map_or(String::new(), |s| format!("{:.0}% ", s * 100.0)),
                    if rising { " and int_latency rises" } else { "" }
                ),
                &self.backlog,
            );
            d.evidence = json!({
                "queue_share_max": share.map(round_sig),
                "queue_max_messages": acc.queue_max_messages(),
                "queue_max_bytes": acc.queue_max_bytes(),
                "int_latency_p50_ms_p50": acc.int_latency_p50_median().map(round_sig),
                "int_latency_max_ms_max": acc.int_latency_max().map(round_sig),
                "int_latency_p50_ms_trend_per_s": acc.int_latency_trend().map(round_sig),
                "int_latency_outofrange": acc.int_latency_outofrange(),
            });
            d.cause = "The application produces faster than the client sends: messages \
                       accumulate in the producer queue (msg_cnt/msg_size against \
                       queue.buffering.max.messages/kbytes) and wait longer and longer \
                       (int_latency). At the limit produce() returns QueueFull. The send side \
                       is the limit: see per-request-ceiling, inflight-queueing, \
                       broker-throttle or request-timeouts when they are present."
                .into();
            d.fix = "Remove what limits the send side (usually batch.size, see \
                     per-request-ceiling); until then, bound the application's rate or handle \
                     QueueFull by polling and retrying. A larger queue only delays it and \
                     raises latency."
                .into();
            d.cannot_tell = Some(
                "Statistics show the queue, not why the send side is slow when no other \
                 diagnosis names it: a debug=protocol log (analyze-protocol-log) and per-thread \
                 CPU (analyze-thread-cpu) tell the broker from the client."
                    .into(),
            );
            if acc.int_latency_outofrange() > 0.0 {
                d.cannot_tell = Some(format!(
                    "{} int_latency's percentiles read low: {} values fell beyond its histogram \
                     (max is exact).",
                    d.cannot_tell.unwrap_or_default(),
                    acc.int_latency_outofrange()
                ));
            }
            out.push(d);
        }

        // --- linger-bound latency ------------------------------------------------------------
        if self.linger.by_share(t) {
            let linger = cx.config.linger_ms.value;
            let mut d = cx.base(
                "linger-bound-latency",
                format!(
                    "messages wait about linger.ms ({} ms): int_latency p50 {:.2} ms at a low rate",
                    linger,
                    self.linger_p50.median().unwrap_or(0.0)
                ),
                &self.linger,
            );
            let parts = acc.partition_rates();
            let per_partition_per_linger: Vec<f64> = parts
                .iter()
                .map(|r| round_sig(r * linger / 1000.0))
                .collect();
            d.evidence = json!({
                "int_latency_p50_ms": summ(&self.linger_p50),
                "linger_ms": cx.setting(cx.config.linger_ms),
                "messages_per_s_p50": acc.tx_rate_median().map(round_sig),
                "messages_per_partition_per_linger": per_partition_per_linger,
                "batch_bytes_p50": acc.batch_bytes_p50().map(round_sig),
                "batch_messages_p50": acc.batch_msgs_p50().map(round_sig),
            });
            d.cause = "librdkafka holds each partition's batch for linger.ms after its first \
                       message; at this rate a partition sees fewer messages than that in a \
                       linger, so nearly every message waits the whole linger (Java lingers per \
                       broker connection and drains every partition at once: the post's p50 at \
                       1k msg/s over 6 partitions was 5.1 ms here, 2.8 ms in Java)."
                .into();
            d.fix = "Nothing is broken: expect p50 ≈ linger.ms at low rates. Lower linger.ms \
                     if that latency matters (0 sends at once, in more and smaller requests; \
                     pair it with max.in.flight=5)."
                .into();
            out.push(d);
        }

        // --- broker throttling ------------------------------------------------------------------
        let (hits, held) = fired(&self.throttle, |h| h.held.held > 0);
        if !hits.is_empty() {
            let per_broker: Vec<Value> = hits
                .iter()
                .map(|(i, h)| {
                    json!({
                        "broker": cx.broker(*i),
                        "intervals_throttled": h.held.held,
                        "throttle_max_ms": summ(&h.a),
                        "throttle_avg_ms": summ(&h.b),
                        "throttled_responses": h.c.mean().map(|m| round_sig(m * h.c.count() as f64)),
                    })
                })
                .collect();
            let worst = hits
                .iter()
                .filter_map(|(_, h)| h.a.max())
                .fold(0.0, f64::max);
            let mut d = cx.base(
                "broker-throttle",
                format!("the broker throttles this client: up to {worst:.0} ms per response"),
                &held,
            );
            d.brokers = hits
                .iter()
                .map(|(i, _)| cx.broker(*i).to_string())
                .collect();
            d.evidence = json!({"throttle_max_ms": worst, "per_broker": per_broker});
            d.cause = "The broker delays its responses to keep the client within a quota \
                       (producer_byte_rate, consumer_byte_rate or request_percentage for its \
                       client.id or user): throughput is capped by configuration, not by the \
                       client."
                .into();
            d.fix = "Raise or remove the quota for this client (kafka-configs --entity-type \
                     clients|users --alter --add-config ...), or spread the load over \
                     client.ids the quota allows."
                .into();
            out.push(d);
        }

        // --- timeouts and retries -------------------------------------------------------------
        let (hits, held) = fired(&self.timeouts, |h| h.held.held > 0);
        if !hits.is_empty() {
            let per_broker: Vec<Value> = hits
                .iter()
                .map(|(i, h)| {
                    json!({
                        "broker": cx.broker(*i),
                        "intervals_held": h.held.held,
                        "timeouts": h.a.mean().map(|m| m * h.a.count() as f64),
                        "retries": h.b.mean().map(|m| m * h.b.count() as f64),
                        "rtt_max_ms": h.c.max().map(round_sig),
                    })
                })
                .collect();
            let timeouts: f64 = hits
                .iter()
                .map(|(i, _)| acc.brokers.get(*i).map_or(0.0, |b| b.timeouts_total()))
                .sum();
            let retries: f64 = hits
                .iter()
                .map(|(i, _)| acc.brokers.get(*i).map_or(0.0, |b| b.retries_total()))
                .sum();
            let rtt_max = hits
                .iter()
                .filter_map(|(_, h)| h.c.max())
                .fold(0.0, f64::max);
            let title = if timeouts + retries > 0.0 {
                format!(
                    "requests time out or are retried: {timeouts:.0} timeouts, {retries:.0} \
                     retries, rtt up to {rtt_max:.0} ms"
                )
            } else {
                format!("round trips took seconds: rtt up to {rtt_max:.0} ms (no timeouts yet)")
            };
            let mut d = cx.base("request-timeouts", title, &held);
            d.brokers = hits
                .iter()
                .map(|(i, _)| cx.broker(*i).to_string())
                .collect();
            d.evidence = json!({
                "timeouts": timeouts,
                "retries": retries,
                "rtt_max_ms": round_sig(rtt_max),
                "per_broker": per_broker,
            });
            d.cause = "Responses took seconds (and past request.timeout.ms the requests time \
                       out and are retried): the broker or the network stalled. A slow or \
                       timed-out request blocks the partitions behind it (head-of-line), and \
                       retries re-send whole batches."
                .into();
            d.fix = "Find the stall on the broker side (GC, disk, a partition leader moving, \
                     quotas); raise request.timeout.ms only if the broker is known to be slow \
                     but healthy."
                .into();
            d.cannot_tell = Some(
                "Statistics count timeouts per broker, not which requests: a debug=protocol log \
                 (analyze-protocol-log) names them and the partitions they blocked."
                    .into(),
            );
            out.push(d);
        }

        // --- a broker silent while the others answer --------------------------------------
        let silent_s = |h: &BrokerHeld| h.b.mean().unwrap_or(0.0) * h.b.count() as f64;
        // Learned brokers only (a coordinator's logical connection waits on joins by
        // design), for long enough, and not throttled: a throttled response is late on
        // purpose, and broker-throttle says so.
        let silent: Vec<BrokerHeld> = self
            .silent
            .iter()
            .enumerate()
            .map(|(i, h)| {
                let learned = cx
                    .track
                    .brokers
                    .get(i)
                    .is_some_and(|b| b.nodeid.is_some_and(|n| n >= 0));
                let throttled = self.throttle.get(i).is_some_and(|t| t.held.held > 0);
                if learned && !throttled && silent_s(h) >= SILENT_MIN_S {
                    h.clone()
                } else {
                    BrokerHeld::default()
                }
            })
            .collect();
        let (hits, held) = fired(&silent, |h| h.held.held > 0);
        if !hits.is_empty() {
            let answered: Vec<String> = (0..cx.track.brokers.len())
                .filter(|i| !hits.iter().any(|(j, _)| j == i))
                .filter(|i| {
                    cx.track.brokers[*i].nodeid.is_some_and(|n| n >= 0)
                        && acc.brokers.get(*i).is_some_and(|b| b.carried_requests())
                })
                .map(|i| cx.broker(i).to_string())
                .collect();
            let per_broker: Vec<Value> = hits
                .iter()
                .map(|(i, h)| {
                    json!({
                        "broker": cx.broker(*i),
                        "intervals_silent": h.held.held,
                        "seconds_silent": round_sig(silent_s(h)),
                        "waitresp_cnt": summ(&h.a),
                    })
                })
                .collect();
            let names: Vec<String> = hits
                .iter()
                .map(|(i, h)| format!("{} ({:.1} s)", cx.broker(*i), silent_s(h)))
                .collect();
            let mut d = cx.base(
                "broker-silent",
                format!(
                    "a broker stopped answering: {} with requests waiting{}",
                    names.join(", "),
                    if answered.is_empty() {
                        String::new()
                    } else {
                        format!("; {} answered", answered.join(", "))
                    }
                ),
                &held,
            );
            d.brokers = hits
                .iter()
                .map(|(i, _)| cx.broker(*i).to_string())
                .collect();
            d.evidence = json!({"per_broker": per_broker, "answered": answered});
            d.cause = "Requests were sent on the connection and awaited a response \
                       (waitresp_cnt > 0), the connection stayed UP, and not one response \
                       came back for a whole interval: the broker process stopped or stalled \
                       (a pause, a GC or disk stall, SIGSTOP) or the network dropped packets \
                       without closing the connection. The partitions it leads wait; the other \
                       connections are not held up."
                .into();
            d.fix = "Look at that broker (its log, GC log, the host); librdkafka times the \
                     requests out after request.timeout.ms and retries them."
                .into();
            d.cannot_tell = Some(
                "Statistics sample once per interval: a silence shorter than an interval, or \
                 a broker that answers only some requests, does not show; debug=protocol \
                 (analyze-protocol-log) times every request."
                    .into(),
            );
            out.push(d);
        }

        // --- broker down, flapping -------------------------------------------------------------
        let (hits, held) = fired(&self.unavailable, |h| h.held.held > 0);
        if !hits.is_empty() {
            let mut flapping = Vec::new();
            let per_broker: Vec<Value> = hits
                .iter()
                .map(|(i, h)| {
                    let track = cx.track.brokers.get(*i);
                    let disconnects = acc.brokers.get(*i).map_or(0.0, |b| b.disconnects());
                    let changes = track.map_or(0, |b| b.state_changes_total);
                    let episodes = track.map_or(0, |b| b.down_episodes);
                    if rules::flapping(disconnects, episodes, t) {
                        flapping.push(cx.broker(*i).to_string());
                    }
                    json!({
                        "broker": cx.broker(*i),
                        "intervals_affected": h.held.held,
                        "intervals_not_up": h.b.mean().map(|m| (m * h.b.count() as f64).round()),
                        "disconnects": disconnects,
                        "state_changes": changes,
                        "down_episodes": episodes,
                        "states": track.map(|b| b.states.clone()).unwrap_or_default(),
                    })
                })
                .collect();
            let id = if flapping.is_empty() {
                "broker-down"
            } else {
                "broker-flapping"
            };
            let mut d = cx.base(
                id,
                if flapping.is_empty() {
                    format!(
                        "a broker the client needs went down: {}",
                        cx.broker(hits[0].0)
                    )
                } else {
                    format!("broker connection flapping: {}", flapping.join(", "))
                },
                &held,
            );
            d.brokers = hits
                .iter()
                .map(|(i, _)| cx.broker(*i).to_string())
                .collect();
            d.evidence = json!({"flapping": flapping, "per_broker": per_broker});
            d.cause = if id == "broker-flapping" {
                "The connection to the broker was lost again and again (disconnects, state \
                 changes between UP and DOWN/CONNECT): requests to its partitions wait for each \
                 reconnect and in-flight ones are retried."
            } else {
                "A broker that leads partitions the client uses was not UP (or its connection \
                 dropped): produce and fetch to its partitions stop until it is back or \
                 leadership moves."
            }
            .into();
            d.fix = "Check the broker (process, network, listeners, idle-connection killers \
                     such as load balancers: connections.max.idle.ms); librdkafka reconnects by \
                     itself (reconnect.backoff.ms)."
                .into();
            d.cannot_tell = Some(
                "Statistics sample the state once per interval; the client's log (its \
                 connection errors, debug=broker) says why each connection closed."
                    .into(),
            );
            out.push(d);
        }

        // --- consumer: naps, fetcher-bound, application-bound ---------------------------------
        let idle = acc.idle_intervals(t.burst_idle_share);
        let cv = acc.rx_msgs_per_s.cv();
        let rx_mean = acc.rx_msgs_per_s.mean().unwrap_or(0.0);
        // Naps: starved intervals that received (almost) nothing.
        let naps = if rx_mean > 0.0 {
            self.starved_rx.count_below(t.burst_idle_share * rx_mean)
        } else {
            0
        };
        let lag_first = acc.lag_total.first().unwrap_or(0.0);
        let lag_last = acc.lag_total.last().unwrap_or(0.0);
        let lag_grows = rules::lag_growing(lag_first, lag_last, acc.lag_total.slope_per_s(), t);
        let lag_field = cx.track.lag_field.unwrap_or("none");
        if self.fetch_full.held > 0 && naps > 0 {
            let parts = acc.full_partitions(cx.track);
            let mut d = cx.base(
                "fetch-queue-backoff",
                format!(
                    "the consumer naps: fetch queues reach queued.min.messages ({}), then stay \
                     empty with messages waiting ({} of {} intervals received almost nothing)",
                    cx.config.queued_min_messages.value,
                    naps,
                    acc.rx_msgs_per_s.count()
                ),
                &self.fetch_full,
            );
            d.partitions = parts;
            d.evidence = json!({
                "queued_min_messages": cx.setting(cx.config.queued_min_messages),
                "queued_max_messages_kbytes": cx.setting(cx.config.queued_max_messages_kbytes),
                "fetch_queue_backoff_ms": cx.setting(cx.config.fetch_queue_backoff_ms),
                "intervals_with_a_full_queue": self.fetch_full.held,
                "intervals_starved": self.starved.held,
                "nap_intervals": naps,
                "idle_intervals": idle,
                "receive_rate_cv": cv.map(round_sig),
                "messages_per_s_mean": round_sig(rx_mean),
                "messages_per_s_max": acc.rx_msgs_per_s.max().map(round_sig),
                "lag_messages_p50": acc.lag_total.median().map(round_sig),
                "lag_field": lag_field,
            });
            d.cause = "When a partition's local fetch queue reaches queued.min.messages (or \
                       queued.max.messages.kbytes), librdkafka stops fetching it for \
                       fetch.queue.backoff.ms (1000 ms by default) while the application \
                       drains the queue in milliseconds: the consumer then naps with an empty \
                       queue and messages waiting on the broker, and the receive rate comes in \
                       bursts. The post: 389k msg/s at the default, 1.48M at 10 ms."
                .into();
            d.fix = "fetch.queue.backoff.ms=10 (librdkafka 2.2+; 0 spins the broker thread), \
                     or a larger queued.min.messages."
                .into();
            d.cannot_tell = Some(
                "Statistics sample the queues once per interval, so they show the signature, \
                 not the naps themselves: a debug=fetch log (analyze-fetch-log: 'Fetch backoff \
                 for 1000ms: Local: Queue full') shows each one."
                    .into(),
            );
            out.push(d);
        }
        if self.starved.by_share(t) && lag_grows {
            let mut d = cx.base(
                "fetch-queue-empty-lag-growing",
                format!(
                    "the fetch queues are empty while the lag grows ({} → {}): the fetcher, not \
                     the application, is the limit",
                    lag_first, lag_last
                ),
                &self.starved,
            );
            d.evidence = json!({
                "intervals_starved": self.starved.held,
                "messages_per_s_in_starved_intervals": summ(&self.starved_rx),
                "fetch_queue_messages_max": acc.fetchq_total_max().map(round_sig),
                "lag_messages_first": round_sig(lag_first),
                "lag_messages_last": round_sig(lag_last),
                "lag_field": lag_field,
                "fetch_requests_per_s_p50": acc.fetch_rate_median().map(round_sig),
            });
            d.cause = "The application takes messages as fast as they arrive (nothing waits \
                       in the fetch queues) yet falls behind: fetching is the limit. \
                       librdkafka's broker thread builds one queue entry per fetched message \
                       (the post saturated it at ~2.1M msg/s), or the fetches are small, slow \
                       or throttled (fetch.max.bytes, fetch.wait.max.ms, a quota, a distant \
                       broker)."
                .into();
            d.fix = "If the rdk:broker thread is at one core, add consumer instances (or \
                     partitions); if the broker throttles (broker-throttle), raise the quota; \
                     otherwise raise fetch.max.bytes / max.partition.fetch.bytes and look at \
                     the broker's fetch latency."
                .into();
            d.cannot_tell = Some(
                "Statistics cannot tell a saturated broker thread from slow fetches: per-thread \
                 CPU (analyze-thread-cpu, rdk:broker near one core) or a debug=fetch log \
                 (analyze-fetch-log) tells."
                    .into(),
            );
            out.push(d);
        }
        if self.fetch_full.by_share(t) && lag_grows && naps == 0 {
            let mut d = cx.base(
                "fetch-queue-full-lag-growing",
                format!(
                    "the fetch queues stay full while the lag grows ({} → {}): the application, \
                     not the fetcher, is the limit",
                    lag_first, lag_last
                ),
                &self.fetch_full,
            );
            d.partitions = acc.full_partitions(cx.track);
            d.evidence = json!({
                "intervals_with_a_full_queue": self.fetch_full.held,
                "queued_min_messages": cx.setting(cx.config.queued_min_messages),
                "fetch_queue_messages_p50": acc.fetchq_total_median().map(round_sig),
                "messages_per_s_mean": round_sig(rx_mean),
                "lag_messages_first": round_sig(lag_first),
                "lag_messages_last": round_sig(lag_last),
                "lag_field": lag_field,
            });
            d.cause = "Messages are fetched and wait in the local queues: the application \
                       takes them slower than they arrive. With rust-rdkafka's poll() one \
                       message costs one call on the application thread (the post: 389k msg/s \
                       on that thread before the batch API)."
                .into();
            d.fix = "Consume in batches (rd_kafka_consume_batch_queue, ~500 per call) or do \
                     less per message; past one application thread, more consumers."
                .into();
            d.cannot_tell = Some(
                "Statistics cannot tell librdkafka's per-message poll cost from the \
                 application's own work: per-thread CPU (analyze-thread-cpu) shows which thread \
                 is at one core."
                    .into(),
            );
            out.push(d);
        }

        // --- consumer lag growing ---------------------------------------------------------------
        let growing = acc.growing_partitions(cx.track, t);
        if !growing.is_empty() {
            let first = lag_first;
            let last = lag_last;
            let held = Held {
                considered: acc.lag_total.count(),
                held: acc.lag_total.count(),
                ..Held::default()
            };
            let mut d = cx.base(
                "consumer-lag-growing",
                format!(
                    "consumer lag grows: {:.0} → {:.0} messages in {} partition(s)",
                    first,
                    last,
                    growing.len()
                ),
                &held,
            );
            d.partitions = growing.iter().map(|g| g.0.clone()).collect();
            d.evidence = json!({
                "lag_messages_first": round_sig(first),
                "lag_messages_last": round_sig(last),
                "lag_trend_per_s": acc.lag_total.slope_per_s().map(round_sig),
                "lag_field": lag_field,
                "per_partition": growing.iter().map(|g| json!({
                    "partition": g.0, "first": g.1, "last": g.2, "trend_per_s": g.3,
                })).collect::<Vec<_>>(),
                "messages_per_s_mean": round_sig(rx_mean),
            });
            d.cause = "The consumer falls behind what is written to these partitions. Why: see \
                       fetch-queue-backoff (it naps), fetch-queue-empty-lag-growing (fetching is \
                       the limit) or fetch-queue-full-lag-growing (the application is the \
                       limit)."
                .into();
            d.fix = "Remove the limit the other diagnoses name; otherwise more consumers (up \
                     to the partition count) or a faster application loop."
                .into();
            d.cannot_tell = Some(
                match lag_field {
                    "consumer_lag" => {
                        "consumer_lag follows the committed offset (before 1.8, the larger of the \
                         committed and the application's): a lag that grows only between \
                         commits is not a slow consumer."
                    }
                    _ => {
                        "Lag follows the high watermark: a producer that writes in bursts makes \
                         it jump without the consumer being slow; the trend over a long capture \
                         tells."
                    }
                }
                .into(),
            );
            out.push(d);
        }

        // --- rebalances, fatal ---------------------------------------------------------------
        let rebalances = acc.rebalances();
        if rebalances >= t.rebalances_min {
            let held = Held::default();
            let mut d = cx.base(
                "consumer-rebalances",
                format!("{rebalances:.0} rebalances during the capture"),
                &held,
            );
            d.evidence = json!({
                "rebalances": rebalances,
                "last_reason": cx.track.rebalance_reason,
            });
            d.cause = "The group rebalanced again and again: every rebalance stops consumption \
                       of the moved partitions (and, with the eager protocol, of all)."
                .into();
            d.fix = "Look at the reasons (members joining or leaving, max.poll.interval.ms \
                     exceeded, session timeouts); partition.assignment.strategy=cooperative-sticky \
                     limits what each rebalance stops."
                .into();
            out.push(d);
        }
        if let Some(f) = &cx.track.fatal {
            let held = Held::default();
            let mut d = cx.base("fatal-error", format!("fatal error: {f}"), &held);
            d.evidence = json!({ "fatal": f });
            d.cause = "The client raised a fatal error (idempotent or transactional producer): \
                       it can no longer produce."
                .into();
            d.fix = "Recreate the client; find the cause in its log (the error names it).".into();
            out.push(d);
        }
        out
    }
}
