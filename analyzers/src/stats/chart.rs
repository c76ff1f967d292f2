//! Points for the charts, per client, in bounded memory: when full, neighbouring points
//! merge (rates averaged, latencies and queue depths keep the larger value so a spike never
//! disappears) and later points are merged in groups of the same size.

use super::interval::{ms, Interval};
use crate::vocab::downsample::{Downsampled, Merge};

/// Most points kept per client.
const CAP: usize = 1024;

/// One interval's plotted figures (None: not in the emits).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ChartPoint {
    pub t_s: f64,
    pub tx_msgs_per_s: Option<f64>,
    pub rx_msgs_per_s: Option<f64>,
    pub int_latency_p50_ms: Option<f64>,
    pub int_latency_p99_ms: Option<f64>,
    pub rtt_p50_ms: Option<f64>,
    pub rtt_p99_ms: Option<f64>,
    pub msg_cnt: Option<f64>,
    pub waitresp_cnt: Option<f64>,
    pub outbuf_cnt: Option<f64>,
    pub fetchq_cnt: Option<f64>,
    pub lag: Option<f64>,
}

impl ChartPoint {
    pub(crate) fn of(iv: &Interval) -> Self {
        let w = |x: Option<super::model::Window>| x.filter(|w| w.count() > 0);
        ChartPoint {
            t_s: iv.t_s,
            tx_msgs_per_s: iv.tx_msgs_per_s,
            rx_msgs_per_s: iv.rx_msgs_per_s,
            int_latency_p50_ms: w(iv.total.int_latency).and_then(|w| ms(w.p50)),
            int_latency_p99_ms: w(iv.total.int_latency).and_then(|w| ms(w.p99)),
            rtt_p50_ms: w(iv.total.rtt).and_then(|w| ms(w.p50)),
            rtt_p99_ms: w(iv.total.rtt).and_then(|w| ms(w.p99)),
            msg_cnt: iv.msg_cnt,
            waitresp_cnt: iv.total.waitresp_cnt,
            outbuf_cnt: iv.total.outbuf_cnt,
            fetchq_cnt: iv.fetchq_total(),
            lag: iv.lag_total(),
        }
    }
}

fn avg(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(x), Some(y)) => Some((x + y) / 2.0),
        (x, y) => x.or(y),
    }
}

fn hi(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.max(y)),
        (x, y) => x.or(y),
    }
}

impl Merge for ChartPoint {
    fn merge(a: ChartPoint, b: ChartPoint) -> ChartPoint {
        ChartPoint {
            t_s: b.t_s,
            tx_msgs_per_s: avg(a.tx_msgs_per_s, b.tx_msgs_per_s),
            rx_msgs_per_s: avg(a.rx_msgs_per_s, b.rx_msgs_per_s),
            int_latency_p50_ms: hi(a.int_latency_p50_ms, b.int_latency_p50_ms),
            int_latency_p99_ms: hi(a.int_latency_p99_ms, b.int_latency_p99_ms),
            rtt_p50_ms: hi(a.rtt_p50_ms, b.rtt_p50_ms),
            rtt_p99_ms: hi(a.rtt_p99_ms, b.rtt_p99_ms),
            msg_cnt: hi(a.msg_cnt, b.msg_cnt),
            waitresp_cnt: hi(a.waitresp_cnt, b.waitresp_cnt),
            outbuf_cnt: hi(a.outbuf_cnt, b.outbuf_cnt),
            fetchq_cnt: hi(a.fetchq_cnt, b.fetchq_cnt),
            lag: hi(a.lag, b.lag),
        }
    }
}

/// One client's chart points.
#[derive(Debug, Clone, Default)]
pub struct ClientChart {
    /// `name` (and `#series` after a restart), for file names and titles.
    pub label: String,
    pub producer: bool,
    points: Downsampled<ChartPoint, CAP>,
}

impl ClientChart {
    pub fn new(label: String, producer: bool) -> Self {
        ClientChart {
            label,
            producer,
            ..ClientChart::default()
        }
    }

    pub fn push(&mut self, p: ChartPoint) {
        self.points.push(p);
    }

    pub fn points(&self) -> Vec<ChartPoint> {
        self.points.points()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounded_and_the_spike_survives() {
        let mut c = ClientChart::new("x".into(), true);
        for i in 0..50_000 {
            c.push(ChartPoint {
                t_s: i as f64,
                rtt_p99_ms: Some(if i == 31_337 { 900.0 } else { 1.0 }),
                tx_msgs_per_s: Some(10.0),
                ..ChartPoint::default()
            });
        }
        let p = c.points();
        assert!(p.len() <= CAP);
        assert!(p.iter().any(|p| p.rtt_p99_ms == Some(900.0)));
        assert!(p.iter().all(|p| p.tx_msgs_per_s == Some(10.0)));
    }
}
