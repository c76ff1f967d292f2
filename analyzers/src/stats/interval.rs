//! The figures of one interval between two emits of a client: rates from the differences of
//! cumulative counters over the monotonic `ts`, gauges and windows as the later emit has
//! them (windows cover exactly the interval: librdkafka rolls them over at every emit).
//!
//! Figures are `None` when the emits lack the field; per broker and per partition they are
//! kept apart (indices into the series' tracks), with the aggregate over brokers beside.

use super::model::Window;

/// One interval of one series.
#[derive(Debug, Clone, Default)]
pub(crate) struct Interval {
    /// Input line of the later emit (and of the earlier one).
    pub line: u64,
    pub prev_line: u64,
    /// End of the interval, seconds since the series' first emit.
    pub t_s: f64,
    pub dt_s: f64,
    /// Wall clock of the later emit (epoch seconds).
    pub time: Option<i64>,
    pub producer: bool,
    pub msg_cnt: Option<f64>,
    pub msg_size: Option<f64>,
    pub msg_max: Option<f64>,
    pub msg_size_max: Option<f64>,
    pub tx_msgs_per_s: Option<f64>,
    pub tx_msg_bytes_per_s: Option<f64>,
    pub rx_msgs_per_s: Option<f64>,
    pub rx_msg_bytes_per_s: Option<f64>,
    /// All brokers together.
    pub total: BrokerFig,
    pub brokers: Vec<BrokerFig>,
    pub topics: Vec<TopicFig>,
    pub partitions: Vec<PartFig>,
    /// Rebalances within the interval.
    pub rebalances: Option<f64>,
    pub assignment_size: Option<f64>,
    /// The partitions' fetch queues are forwarded to the consumer's one queue (a group
    /// consumer, no legacy consume_start): each partition's fetchq_cnt is that queue's length
    /// (librdkafka's rd_kafka_q_len follows the forward), not its own share.
    pub shared_fetchq: bool,
}

#[derive(Debug, Clone, Default)]
pub(crate) struct BrokerFig {
    /// Index of the broker's track.
    pub idx: usize,
    /// State UP at the later emit.
    pub up: Option<bool>,
    /// The state changed within the interval (differs, or `stateage` shorter than it).
    pub state_changed: bool,
    /// Serves partitions (leader of some the client uses) or has requests queued.
    pub has_work: bool,
    pub requests_per_s: Option<f64>,
    pub tx_bytes_per_s: Option<f64>,
    pub responses_per_s: Option<f64>,
    pub rx_bytes_per_s: Option<f64>,
    pub produce_requests: Option<f64>,
    pub fetch_requests: Option<f64>,
    pub tx_bytes: Option<f64>,
    pub produce_per_s: Option<f64>,
    pub fetch_per_s: Option<f64>,
    /// All bytes sent over ProduceRequests sent (right when Produce dominates, as it does).
    pub bytes_per_produce: Option<f64>,
    pub waitresp_cnt: Option<f64>,
    pub outbuf_cnt: Option<f64>,
    pub waitresp_msg_cnt: Option<f64>,
    pub outbuf_msg_cnt: Option<f64>,
    pub rtt: Option<Window>,
    pub int_latency: Option<Window>,
    pub outbuf_latency: Option<Window>,
    pub throttle: Option<Window>,
    pub retries: Option<f64>,
    pub timeouts: Option<f64>,
    pub txerrs: Option<f64>,
    pub rxerrs: Option<f64>,
    pub corriderrs: Option<f64>,
    pub connects: Option<f64>,
    pub disconnects: Option<f64>,
}

#[derive(Debug, Clone, Default)]
pub(crate) struct TopicFig {
    pub idx: usize,
    pub batchsize: Option<Window>,
    pub batchcnt: Option<Window>,
}

#[derive(Debug, Clone, Default)]
pub(crate) struct PartFig {
    pub topic: usize,
    /// Index of the partition's track within its topic.
    pub idx: usize,
    pub msgq_cnt: Option<f64>,
    pub fetchq_cnt: Option<f64>,
    pub fetchq_size: Option<f64>,
    pub lag: Option<f64>,
    /// Lag change over the interval.
    pub lag_delta: Option<f64>,
    pub tx_msgs_per_s: Option<f64>,
    pub rx_msgs_per_s: Option<f64>,
    pub rx_bytes_per_s: Option<f64>,
    /// Advance of the high watermark per second: what producers write to the partition.
    pub hi_per_s: Option<f64>,
    /// Messages on the broker the fetcher has not fetched yet (hi_offset - next_offset).
    pub unfetched: Option<f64>,
    /// Messages fetched and not yet handed to the application (next_offset - app_offset; all
    /// of rxmsgs while the application has taken none of the partition's).
    pub waiting: Option<f64>,
    /// Messages fetched since the client started (cumulative rxmsgs).
    pub fetched: Option<f64>,
    /// Messages the application took in the interval (app_offset's advance; None where it
    /// is unknown at either end or went back, a seek or a reassignment).
    pub taken: Option<f64>,
}

/// Sum of two optional figures (absent only when both are).
pub(crate) fn add(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (None, None) => None,
        (x, y) => Some(x.unwrap_or(0.0) + y.unwrap_or(0.0)),
    }
}

/// Windows of several brokers as one: counts and sums add, extremes are the extremes, the
/// average is count-weighted and each percentile is the highest broker's (an upper bound:
/// separate histograms cannot be merged from their percentiles).
pub(crate) fn merge_windows(a: Option<Window>, b: Option<Window>) -> Option<Window> {
    let (a, b) = match (a, b) {
        (None, x) | (x, None) => return x,
        (Some(a), Some(b)) => (a, b),
    };
    if b.count() == 0 {
        return Some(Window {
            outofrange: add_i(a.outofrange, b.outofrange),
            ..a
        });
    }
    if a.count() == 0 {
        return Some(Window {
            outofrange: add_i(a.outofrange, b.outofrange),
            ..b
        });
    }
    let n = a.count() + b.count();
    let avg = match (a.avg, b.avg) {
        (Some(x), Some(y)) => Some((x * a.count() + y * b.count()) / n),
        (x, y) => x.or(y),
    };
    let hi = |x: Option<i64>, y: Option<i64>| match (x, y) {
        (Some(x), Some(y)) => Some(x.max(y)),
        (x, y) => x.or(y),
    };
    let lo = |x: Option<i64>, y: Option<i64>| match (x, y) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (x, y) => x.or(y),
    };
    Some(Window {
        min: lo(a.min, b.min),
        max: hi(a.max, b.max),
        avg,
        sum: add_i(a.sum, b.sum),
        p50: hi(a.p50, b.p50),
        p90: hi(a.p90, b.p90),
        p99: hi(a.p99, b.p99),
        p99_99: hi(a.p99_99, b.p99_99),
        outofrange: add_i(a.outofrange, b.outofrange),
        cnt: Some(n),
    })
}

fn add_i(a: Option<i64>, b: Option<i64>) -> Option<i64> {
    match (a, b) {
        (None, None) => None,
        (x, y) => Some(x.unwrap_or(0) + y.unwrap_or(0)),
    }
}

impl BrokerFig {
    /// Fold another broker into this aggregate.
    pub fn accumulate(&mut self, b: &BrokerFig) {
        self.up = match (self.up, b.up) {
            (None, x) => x,
            (x, None) => x,
            (Some(x), Some(y)) => Some(x && y),
        };
        self.state_changed |= b.state_changed;
        self.has_work |= b.has_work;
        self.requests_per_s = add(self.requests_per_s, b.requests_per_s);
        self.tx_bytes_per_s = add(self.tx_bytes_per_s, b.tx_bytes_per_s);
        self.responses_per_s = add(self.responses_per_s, b.responses_per_s);
        self.rx_bytes_per_s = add(self.rx_bytes_per_s, b.rx_bytes_per_s);
        self.produce_requests = add(self.produce_requests, b.produce_requests);
        self.fetch_requests = add(self.fetch_requests, b.fetch_requests);
        self.produce_per_s = add(self.produce_per_s, b.produce_per_s);
        self.fetch_per_s = add(self.fetch_per_s, b.fetch_per_s);
        // Bytes per request over brokers that produced: recomputed by the caller.
        if b.produce_requests.unwrap_or(0.0) > 0.0 {
            self.tx_bytes = add(self.tx_bytes, b.tx_bytes);
        }
        self.waitresp_cnt = add(self.waitresp_cnt, b.waitresp_cnt);
        self.outbuf_cnt = add(self.outbuf_cnt, b.outbuf_cnt);
        self.waitresp_msg_cnt = add(self.waitresp_msg_cnt, b.waitresp_msg_cnt);
        self.outbuf_msg_cnt = add(self.outbuf_msg_cnt, b.outbuf_msg_cnt);
        self.rtt = merge_windows(self.rtt, b.rtt);
        self.int_latency = merge_windows(self.int_latency, b.int_latency);
        self.outbuf_latency = merge_windows(self.outbuf_latency, b.outbuf_latency);
        self.throttle = merge_windows(self.throttle, b.throttle);
        self.retries = add(self.retries, b.retries);
        self.timeouts = add(self.timeouts, b.timeouts);
        self.txerrs = add(self.txerrs, b.txerrs);
        self.rxerrs = add(self.rxerrs, b.rxerrs);
        self.corriderrs = add(self.corriderrs, b.corriderrs);
        self.connects = add(self.connects, b.connects);
        self.disconnects = add(self.disconnects, b.disconnects);
    }

    /// After accumulating: bytes per ProduceRequest over the brokers that produced.
    pub fn close_aggregate(&mut self) {
        self.idx = usize::MAX;
        self.bytes_per_produce = match (self.tx_bytes, self.produce_requests) {
            (Some(b), Some(n)) if n > 0.0 => Some(b / n),
            _ => None,
        };
    }
}

impl Interval {
    /// Producer queue fill: the larger of messages and bytes against their limits.
    pub fn queue_share(&self) -> Option<f64> {
        let m = match (self.msg_cnt, self.msg_max) {
            (Some(c), Some(m)) if m > 0.0 => Some(c / m),
            _ => None,
        };
        let b = match (self.msg_size, self.msg_size_max) {
            (Some(c), Some(m)) if m > 0.0 => Some(c / m),
            _ => None,
        };
        match (m, b) {
            (Some(x), Some(y)) => Some(x.max(y)),
            (x, y) => x.or(y),
        }
    }

    /// Batches sent in the interval (all topics' `batchsize.cnt`).
    pub fn batches(&self) -> Option<f64> {
        self.topics
            .iter()
            .filter_map(|t| t.batchsize.map(|w| w.count() as f64))
            .reduce(|a, b| a + b)
    }

    /// Batches over all topics as one window.
    pub fn batch_bytes(&self) -> Option<Window> {
        self.topics
            .iter()
            .fold(None, |acc, t| merge_windows(acc, t.batchsize))
    }

    pub fn batch_messages(&self) -> Option<Window> {
        self.topics
            .iter()
            .fold(None, |acc, t| merge_windows(acc, t.batchcnt))
    }

    /// One figure summed over the partitions (absent when no partition has it).
    fn partitions_sum(&self, figure: impl Fn(&PartFig) -> Option<f64>) -> Option<f64> {
        self.partitions
            .iter()
            .fold(None, |acc, p| add(acc, figure(p)))
    }

    /// Messages in the client's fetch queues: the one queue the partitions forward to, once
    /// (its length is what each of them reports), or the sum of their own queues.
    pub fn fetchq_total(&self) -> Option<f64> {
        if self.shared_fetchq {
            return self.fetchq_max();
        }
        self.partitions_sum(|p| p.fetchq_cnt)
    }

    /// The fullest partition's fetch queue (the shared queue's length where they share one).
    pub fn fetchq_max(&self) -> Option<f64> {
        self.partitions
            .iter()
            .filter_map(|p| p.fetchq_cnt)
            .reduce(f64::max)
    }

    pub fn unfetched_total(&self) -> Option<f64> {
        self.partitions_sum(|p| p.unfetched)
    }

    pub fn lag_total(&self) -> Option<f64> {
        self.partitions_sum(|p| p.lag)
    }

    /// Messages fetched and not yet handed to the application, all partitions.
    pub fn waiting_total(&self) -> Option<f64> {
        self.partitions_sum(|p| p.waiting)
    }

    /// Messages fetched since the client started, all partitions.
    pub fn fetched_total(&self) -> Option<f64> {
        self.partitions_sum(|p| p.fetched)
    }
}

/// µs → ms.
pub(crate) fn ms(us: Option<i64>) -> Option<f64> {
    us.map(|v| v as f64 / 1000.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(cnt: i64, p50: i64, max: i64) -> Window {
        Window {
            cnt: Some(cnt),
            p50: Some(p50),
            max: Some(max),
            min: Some(1),
            avg: Some(p50),
            ..Window::default()
        }
    }

    #[test]
    fn a_shared_fetch_queue_is_counted_once() {
        // kafka431-consumer-slow-app-lag's emit at 2626599892: three partitions of a group
        // consumer, each reporting the consumer queue's 8941 messages (replyq 8941 too).
        let part = |q: f64| PartFig {
            fetchq_cnt: Some(q),
            ..PartFig::default()
        };
        let mut iv = Interval {
            partitions: vec![part(8941.0), part(8941.0), part(8941.0)],
            shared_fetchq: true,
            ..Interval::default()
        };
        assert_eq!(iv.fetchq_total(), Some(8941.0));
        // Queues of their own (the legacy consumer): each counts.
        iv.shared_fetchq = false;
        assert_eq!(iv.fetchq_total(), Some(3.0 * 8941.0));
    }

    #[test]
    fn merged_windows_bound_from_above_and_ignore_idle_ones() {
        let m = merge_windows(Some(w(10, 100, 500)), Some(w(30, 50, 900))).unwrap();
        assert_eq!(
            (m.cnt, m.p50, m.max, m.avg),
            (Some(40), Some(100), Some(900), Some(62))
        );
        let idle = merge_windows(Some(w(0, 0, 0)), Some(w(5, 7, 9))).unwrap();
        assert_eq!(idle.p50, Some(7));
        assert_eq!(merge_windows(None, None), None);
    }
}

/// Batches per ProduceRequest in the interval.
pub(crate) fn batches_per_request(iv: &Interval) -> Option<f64> {
    match (iv.batches(), iv.total.produce_requests) {
        (Some(b), Some(r)) if r > 0.0 => Some(b / r),
        _ => None,
    }
}
