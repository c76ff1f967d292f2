//! Figures of a series summarised over its intervals, per client, per broker (with the
//! aggregate beside) and per topic and partition, in bounded memory ([`Stat`]).

use super::config::Resolved;
use super::interval::{ms, BrokerFig, Interval};
use super::report::{
    BrokerReport, CgrpReport, ClientReport, ConsumerReport, PartitionReport, ProducerReport,
    TopicReport,
};
use super::stat::Stat;
use super::track::{BrokerTrack, Track};
use crate::findings::diagnoses::stats::rules;
use crate::findings::diagnoses::stats::thresholds::Thresholds;

#[derive(Debug, Clone, Default)]
pub(crate) struct BrokerAcc {
    intervals: u64,
    not_up: u64,
    requests_per_s: Stat,
    produce_per_s: Stat,
    fetch_per_s: Stat,
    tx_bytes_per_s: Stat,
    rx_bytes_per_s: Stat,
    bytes_per_produce: Stat,
    waitresp: Stat,
    outbuf: Stat,
    rtt_p50: Stat,
    rtt_p99: Stat,
    rtt_max: Stat,
    int_latency_p50: Stat,
    outbuf_latency_p50: Stat,
    throttle_max: Stat,
    throttled: u64,
    retries: f64,
    timeouts: f64,
    txerrs: f64,
    rxerrs: f64,
    corrid: f64,
    connects: f64,
    disconnects: f64,
}

fn add_opt(s: &mut Stat, t: f64, v: Option<f64>) {
    if let Some(v) = v {
        s.add(t, v);
    }
}

impl BrokerAcc {
    fn observe(&mut self, t: f64, b: &BrokerFig, th: &Thresholds) {
        self.intervals += 1;
        if b.up == Some(false) {
            self.not_up += 1;
        }
        add_opt(&mut self.requests_per_s, t, b.requests_per_s);
        add_opt(&mut self.produce_per_s, t, b.produce_per_s);
        add_opt(&mut self.fetch_per_s, t, b.fetch_per_s);
        add_opt(&mut self.tx_bytes_per_s, t, b.tx_bytes_per_s);
        add_opt(&mut self.rx_bytes_per_s, t, b.rx_bytes_per_s);
        add_opt(&mut self.bytes_per_produce, t, b.bytes_per_produce);
        add_opt(&mut self.waitresp, t, b.waitresp_cnt);
        add_opt(&mut self.outbuf, t, b.outbuf_cnt);
        if let Some(w) = b.rtt.filter(|w| w.count() > 0) {
            add_opt(&mut self.rtt_p50, t, ms(w.p50));
            add_opt(&mut self.rtt_p99, t, ms(w.p99));
            add_opt(&mut self.rtt_max, t, ms(w.max));
        }
        if let Some(w) = b.int_latency.filter(|w| w.count() > 0) {
            add_opt(&mut self.int_latency_p50, t, ms(w.p50));
        }
        if let Some(w) = b.outbuf_latency.filter(|w| w.count() > 0) {
            add_opt(&mut self.outbuf_latency_p50, t, ms(w.p50));
        }
        if let Some(w) = b.throttle {
            // Throttle windows are in milliseconds already.
            add_opt(&mut self.throttle_max, t, w.max.map(|v| v as f64));
        }
        if rules::throttled(b, th) == Some(true) {
            self.throttled += 1;
        }
        self.retries += b.retries.unwrap_or(0.0);
        self.timeouts += b.timeouts.unwrap_or(0.0);
        self.txerrs += b.txerrs.unwrap_or(0.0);
        self.rxerrs += b.rxerrs.unwrap_or(0.0);
        self.corrid += b.corriderrs.unwrap_or(0.0);
        self.connects += b.connects.unwrap_or(0.0);
        self.disconnects += b.disconnects.unwrap_or(0.0);
    }

    pub fn disconnects(&self) -> f64 {
        self.disconnects
    }

    /// Some interval had requests on this connection.
    pub fn carried_requests(&self) -> bool {
        self.requests_per_s.max().is_some_and(|m| m > 0.0)
    }

    pub fn timeouts_total(&self) -> f64 {
        self.timeouts
    }

    pub fn retries_total(&self) -> f64 {
        self.retries
    }

    fn report(&self, track: Option<&BrokerTrack>) -> BrokerReport {
        BrokerReport {
            name: track.map_or("*".into(), |t| t.name.clone()),
            nodeid: track.and_then(|t| t.nodeid),
            source: track.and_then(|t| t.source.clone()),
            states: track.map(|t| t.states.clone()).unwrap_or_default(),
            intervals: self.intervals,
            intervals_not_up: self.not_up,
            state_changes: track.map_or(0, |t| t.state_changes_total),
            state_change_list: track.map(|t| t.state_changes.clone()).unwrap_or_default(),
            requests_per_s: self.requests_per_s.summary(1.0),
            produce_requests_per_s: self.produce_per_s.summary(1.0),
            fetch_requests_per_s: self.fetch_per_s.summary(1.0),
            tx_bytes_per_s: self.tx_bytes_per_s.summary(1.0),
            rx_bytes_per_s: self.rx_bytes_per_s.summary(1.0),
            bytes_per_produce_request: self.bytes_per_produce.summary(1.0),
            waitresp_cnt: self.waitresp.trend_summary(1.0),
            outbuf_cnt: self.outbuf.summary(1.0),
            rtt_p50_ms: self.rtt_p50.trend_summary(1.0),
            rtt_p99_ms: self.rtt_p99.summary(1.0),
            rtt_max_ms: self.rtt_max.summary(1.0),
            int_latency_p50_ms: self.int_latency_p50.summary(1.0),
            outbuf_latency_p50_ms: self.outbuf_latency_p50.summary(1.0),
            throttle_max_ms: self.throttle_max.summary(1.0),
            throttled_intervals: self.throttled,
            retries: self.retries,
            timeouts: self.timeouts,
            tx_errors: self.txerrs,
            rx_errors: self.rxerrs,
            corrid_errors: self.corrid,
            connects: self.connects,
            disconnects: self.disconnects,
        }
    }
}

#[derive(Debug, Clone, Default)]
struct PartAcc {
    tx_msgs_per_s: Stat,
    msgq: Stat,
    rx_msgs_per_s: Stat,
    fetchq: Stat,
    fetchq_bytes: Stat,
    lag: Stat,
    hi_per_s: Stat,
    full: u64,
}

#[derive(Debug, Clone, Default)]
struct TopicAcc {
    batch_bytes: Stat,
    batch_msgs: Stat,
    partitions: Vec<PartAcc>,
}

/// Everything summarised for one series.
#[derive(Debug, Clone, Default)]
pub(crate) struct SeriesAcc {
    interval_s: Stat,
    pub total: BrokerAcc,
    pub brokers: Vec<BrokerAcc>,
    topics: Vec<TopicAcc>,
    tx_msgs_per_s: Stat,
    tx_bytes_per_s: Stat,
    msgs_per_request: Stat,
    batches_per_request: Stat,
    batch_bytes_p50: Stat,
    batch_msgs_p50: Stat,
    int_latency_p50: Stat,
    int_latency_p99: Stat,
    int_latency_max: Stat,
    int_latency_oor: f64,
    msg_cnt: Stat,
    msg_size: Stat,
    msg_max: Option<f64>,
    msg_size_max: Option<f64>,
    queue_share: Stat,
    msgq_total: Stat,
    pub rx_msgs_per_s: Stat,
    rx_bytes_per_s: Stat,
    fetch_per_s: Stat,
    fetchq_total: Stat,
    pub lag_total: Stat,
    rebalances: f64,
    assignment: Option<f64>,
    /// librdkafka's rebalance_cnt counts every assign and every revoke: a consumer's first
    /// assignment (its join) and a revoke that leaves it with nothing at the end (its
    /// leave) are membership, not the group rebalancing again and again.
    first_join: f64,
    final_leave: f64,
}

fn grow<T: Default>(v: &mut Vec<T>, i: usize) -> &mut T {
    if v.len() <= i {
        v.resize_with(i + 1, T::default);
    }
    &mut v[i]
}

impl SeriesAcc {
    pub fn observe(&mut self, iv: &Interval, c: &Resolved, th: &Thresholds) {
        let t = iv.t_s;
        if iv.dt_s > 0.0 {
            self.interval_s.add(t, iv.dt_s);
        }
        self.total.observe(t, &iv.total, th);
        for b in &iv.brokers {
            grow(&mut self.brokers, b.idx).observe(t, b, th);
        }
        for tf in &iv.topics {
            let ta = grow(&mut self.topics, tf.idx);
            if let Some(w) = tf.batchsize.filter(|w| w.count() > 0) {
                add_opt(&mut ta.batch_bytes, t, w.p50.map(|v| v as f64));
            }
            if let Some(w) = tf.batchcnt.filter(|w| w.count() > 0) {
                add_opt(&mut ta.batch_msgs, t, w.p50.map(|v| v as f64));
            }
        }
        let mut msgq_total = None;
        for p in &iv.partitions {
            let pa = grow(&mut grow(&mut self.topics, p.topic).partitions, p.idx);
            add_opt(&mut pa.tx_msgs_per_s, t, p.tx_msgs_per_s);
            add_opt(&mut pa.msgq, t, p.msgq_cnt);
            add_opt(&mut pa.rx_msgs_per_s, t, p.rx_msgs_per_s);
            add_opt(&mut pa.fetchq, t, p.fetchq_cnt);
            add_opt(&mut pa.fetchq_bytes, t, p.fetchq_size);
            add_opt(&mut pa.lag, t, p.lag);
            add_opt(&mut pa.hi_per_s, t, p.hi_per_s);
            if !iv.producer && rules::fetch_queue_full(p, c, th) == Some(true) {
                pa.full += 1;
            }
            msgq_total = super::interval::add(msgq_total, p.msgq_cnt);
        }
        if iv.producer {
            add_opt(&mut self.tx_msgs_per_s, t, iv.tx_msgs_per_s);
            add_opt(&mut self.tx_bytes_per_s, t, iv.tx_msg_bytes_per_s);
            if let (Some(r), Some(m)) = (iv.total.produce_requests, iv.tx_msgs_per_s) {
                if r > 0.0 {
                    self.msgs_per_request.add(t, m * iv.dt_s / r);
                }
            }
            add_opt(
                &mut self.batches_per_request,
                t,
                super::interval::batches_per_request(iv),
            );
            if let Some(w) = iv.batch_bytes().filter(|w| w.count() > 0) {
                add_opt(&mut self.batch_bytes_p50, t, w.p50.map(|v| v as f64));
            }
            if let Some(w) = iv.batch_messages().filter(|w| w.count() > 0) {
                add_opt(&mut self.batch_msgs_p50, t, w.p50.map(|v| v as f64));
            }
            if let Some(w) = iv.total.int_latency {
                self.int_latency_oor += w.outofrange.unwrap_or(0) as f64;
                if w.count() > 0 {
                    add_opt(&mut self.int_latency_p50, t, ms(w.p50));
                    add_opt(&mut self.int_latency_p99, t, ms(w.p99));
                    add_opt(&mut self.int_latency_max, t, ms(w.max));
                }
            }
            add_opt(&mut self.msg_cnt, t, iv.msg_cnt);
            add_opt(&mut self.msg_size, t, iv.msg_size);
            self.msg_max = iv.msg_max.or(self.msg_max);
            self.msg_size_max = iv.msg_size_max.or(self.msg_size_max);
            add_opt(&mut self.queue_share, t, iv.queue_share());
            add_opt(&mut self.msgq_total, t, msgq_total);
        } else {
            add_opt(&mut self.rx_msgs_per_s, t, iv.rx_msgs_per_s);
            add_opt(&mut self.rx_bytes_per_s, t, iv.rx_msg_bytes_per_s);
            add_opt(&mut self.fetch_per_s, t, iv.total.fetch_per_s);
            add_opt(&mut self.fetchq_total, t, iv.fetchq_total());
            add_opt(&mut self.lag_total, t, iv.lag_total());
        }
        let rebalanced = iv.rebalances.unwrap_or(0.0);
        self.rebalances += rebalanced;
        let was = self.assignment.unwrap_or(0.0);
        let is = iv.assignment_size.unwrap_or(was);
        if rebalanced > 0.0 {
            if self.first_join == 0.0 && was <= 0.0 && is > 0.0 {
                self.first_join = 1.0;
            }
            // Pending until another rebalance follows: only the last one is the leave.
            self.final_leave = if was > 0.0 && is <= 0.0 { 1.0 } else { 0.0 };
        }
        self.assignment = iv.assignment_size.or(self.assignment);
    }

    pub fn total_produce_cv(&self) -> Option<f64> {
        self.total.produce_per_s.cv()
    }

    pub fn batch_bytes_p50(&self) -> Option<f64> {
        self.batch_bytes_p50.median()
    }

    pub fn batch_msgs_p50(&self) -> Option<f64> {
        self.batch_msgs_p50.median()
    }

    pub fn int_latency_trend(&self) -> Option<f64> {
        self.int_latency_p50.slope_per_s()
    }

    pub fn int_latency_p50_median(&self) -> Option<f64> {
        self.int_latency_p50.median()
    }

    pub fn int_latency_max(&self) -> Option<f64> {
        self.int_latency_max.max()
    }

    pub fn int_latency_outofrange(&self) -> f64 {
        self.int_latency_oor
    }

    /// Trend of the producer queue (messages per second).
    pub fn queue_trend(&self) -> Option<f64> {
        self.msg_cnt.slope_per_s()
    }

    pub fn queue_share_max(&self) -> Option<f64> {
        self.queue_share.max()
    }

    pub fn queue_max_messages(&self) -> Option<f64> {
        self.msg_max
    }

    pub fn queue_max_bytes(&self) -> Option<f64> {
        self.msg_size_max
    }

    pub fn tx_rate_median(&self) -> Option<f64> {
        self.tx_msgs_per_s.median()
    }

    pub fn fetch_rate_median(&self) -> Option<f64> {
        self.fetch_per_s.median()
    }

    pub fn fetchq_total_median(&self) -> Option<f64> {
        self.fetchq_total.median()
    }

    pub fn fetchq_total_max(&self) -> Option<f64> {
        self.fetchq_total.max()
    }

    /// Rebalances (assigns and revokes, as librdkafka counts them) during the capture.
    pub fn rebalances(&self) -> f64 {
        self.rebalances
    }

    /// [`Self::rebalances`] without the consumer's own first join and final leave.
    pub fn rebalances_beyond_membership(&self) -> f64 {
        (self.rebalances - self.first_join - self.final_leave).max(0.0)
    }

    /// Median messages/s produced to each partition that saw any.
    pub fn partition_rates(&self) -> Vec<f64> {
        self.topics
            .iter()
            .flat_map(|t| t.partitions.iter())
            .filter_map(|p| p.tx_msgs_per_s.median())
            .filter(|&r| r > 0.0)
            .collect()
    }

    /// `topic [partition]` of partitions whose fetch queue was at the backoff threshold.
    pub fn full_partitions(&self, track: &Track) -> Vec<String> {
        let mut out = Vec::new();
        for (ti, ta) in self.topics.iter().enumerate() {
            for (pi, pa) in ta.partitions.iter().enumerate() {
                if pa.full > 0 {
                    out.push(part_label(track, ti, pi));
                }
            }
        }
        out
    }

    /// Partitions whose lag grows: label, first, last, trend per second.
    pub fn growing_partitions(
        &self,
        track: &Track,
        th: &Thresholds,
    ) -> Vec<(String, f64, f64, Option<f64>)> {
        let mut out = Vec::new();
        for (ti, ta) in self.topics.iter().enumerate() {
            for (pi, pa) in ta.partitions.iter().enumerate() {
                let (Some(first), Some(last)) = (pa.lag.first(), pa.lag.last()) else {
                    continue;
                };
                let trend = pa.lag.slope_per_s();
                if rules::lag_growing(first, last, trend, th) {
                    out.push((
                        part_label(track, ti, pi),
                        first,
                        last,
                        trend.map(super::stat::round_sig),
                    ));
                }
            }
        }
        out
    }

    /// Intervals whose receive rate is below `share` of the mean (the mean, not the median:
    /// a consumer that naps half the time has a median near zero).
    pub fn idle_intervals(&self, share: f64) -> u64 {
        let Some(mean) = self.rx_msgs_per_s.mean().filter(|&m| m > 0.0) else {
            return 0;
        };
        self.rx_msgs_per_s.count_below(share * mean)
    }

    pub fn report(&self, track: &Track, th: &Thresholds) -> ClientReport {
        let producer = track.is_producer().then(|| ProducerReport {
            messages_per_s: self.tx_msgs_per_s.summary(1.0),
            bytes_per_s: self.tx_bytes_per_s.summary(1.0),
            produce_requests_per_s: self.total.produce_per_s.summary(1.0),
            bytes_per_produce_request: self.total.bytes_per_produce.summary(1.0),
            messages_per_produce_request: self.msgs_per_request.summary(1.0),
            batches_per_produce_request: self.batches_per_request.summary(1.0),
            batch_bytes_p50: self.batch_bytes_p50.summary(1.0),
            batch_messages_p50: self.batch_msgs_p50.summary(1.0),
            int_latency_p50_ms: self.int_latency_p50.trend_summary(1.0),
            int_latency_p99_ms: self.int_latency_p99.summary(1.0),
            int_latency_max_ms: self.int_latency_max.summary(1.0),
            int_latency_outofrange: self.int_latency_oor,
            queue_messages: self.msg_cnt.trend_summary(1.0),
            queue_bytes: self.msg_size.summary(1.0),
            queue_max_messages: self.msg_max,
            queue_max_bytes: self.msg_size_max,
            queue_share: self.queue_share.summary(1.0),
            partition_queue_messages: self.msgq_total.summary(1.0),
        });
        let consumer = track.is_consumer().then(|| ConsumerReport {
            messages_per_s: self.rx_msgs_per_s.summary(1.0),
            bytes_per_s: self.rx_bytes_per_s.summary(1.0),
            fetch_requests_per_s: self.fetch_per_s.summary(1.0),
            idle_intervals: self.idle_intervals(th.burst_idle_share),
            receive_rate_cv: self.rx_msgs_per_s.cv().map(super::stat::round_sig),
            fetch_queue_messages: self.fetchq_total.trend_summary(1.0),
            lag_messages: self.lag_total.trend_summary(1.0),
            lag_field: track.lag_field.unwrap_or("none"),
            rebalances: self.rebalances,
        });
        let empty = BrokerAcc::default();
        let brokers: Vec<super::report::BrokerReport> = track
            .brokers
            .iter()
            .enumerate()
            .map(|(i, t)| self.brokers.get(i).unwrap_or(&empty).report(Some(t)))
            .collect();
        let empty_topic = TopicAcc::default();
        let empty_part = PartAcc::default();
        let topics = track
            .topics
            .iter()
            .enumerate()
            .map(|(i, tt)| {
                let ta = self.topics.get(i).unwrap_or(&empty_topic);
                TopicReport {
                    topic: tt.name.clone(),
                    batch_bytes_p50: ta.batch_bytes.summary(1.0),
                    batch_messages_p50: ta.batch_msgs.summary(1.0),
                    partitions: tt
                        .partitions
                        .iter()
                        .enumerate()
                        .map(|(j, pt)| {
                            let pa = ta.partitions.get(j).unwrap_or(&empty_part);
                            PartitionReport {
                                partition: pt.partition,
                                leader: pt.leader,
                                fetch_states: pt.fetch_states.clone(),
                                produced_messages_per_s: pa.tx_msgs_per_s.summary(1.0),
                                queue_messages: pa.msgq.summary(1.0),
                                received_messages_per_s: pa.rx_msgs_per_s.summary(1.0),
                                fetch_queue_messages: pa.fetchq.summary(1.0),
                                fetch_queue_bytes: pa.fetchq_bytes.summary(1.0),
                                lag_messages: pa.lag.trend_summary(1.0),
                                high_watermark_per_s: pa.hi_per_s.summary(1.0),
                                fetch_queue_full_intervals: pa.full,
                            }
                        })
                        .collect(),
                }
            })
            .collect();
        ClientReport {
            name: track.name.clone(),
            client_id: track.client_id.clone(),
            client_type: track.client_type.clone(),
            series: track.number,
            started_because: track.started_because.clone(),
            version_hint: track.dating.hint(),
            emits: track.emits,
            intervals: track.intervals,
            first_line: track.first_line,
            last_line: track.last_line,
            start_epoch_s: track.first_time,
            end_epoch_s: track.last_time,
            duration_s: super::stat::round_sig((track.last_ts - track.first_ts) as f64 / 1e6),
            interval_s: self.interval_s.summary(1.0),
            producer,
            consumer,
            total: self.total.report(None),
            connections: super::connections::compare(&brokers),
            brokers,
            topics,
            cgrp: track.cgrp_state.as_ref().map(|s| CgrpReport {
                state: Some(s.clone()),
                rebalances: self.rebalances,
                last_rebalance_reason: track.rebalance_reason.clone(),
                assignment_size: self.assignment,
            }),
            fatal: track.fatal.clone(),
            not_followed: track.dropped,
        }
    }
}

/// `topic [partition]`.
pub(crate) fn part_label(track: &Track, topic: usize, part: usize) -> String {
    let t = &track.topics[topic];
    format!("{} [{}]", t.name, t.partitions[part].partition)
}
