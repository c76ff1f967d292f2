//! `--csv`: one row per interval for the client (broker `*`, all brokers together) and one
//! per broker, written as the intervals are read (nothing is held). Empty cells are figures
//! the emits did not carry. Columns carry their units.

use std::io::{self, Write};

use super::interval::batches_per_request;
use super::interval::{ms, BrokerFig, Interval};
use super::model::Window;
use super::track::Track;

/// The header, in order.
pub const COLUMNS: &[&str] = &[
    "client",
    "series",
    "line",
    "t_s",
    "epoch_s",
    "dt_s",
    "broker",
    "state",
    "tx_msgs_per_s",
    "tx_msg_bytes_per_s",
    "rx_msgs_per_s",
    "rx_msg_bytes_per_s",
    "requests_per_s",
    "produce_requests_per_s",
    "fetch_requests_per_s",
    "bytes_per_produce_request",
    "batches_per_produce_request",
    "batch_bytes_p50",
    "waitresp_cnt",
    "outbuf_cnt",
    "rtt_p50_ms",
    "rtt_p99_ms",
    "rtt_max_ms",
    "int_latency_p50_ms",
    "int_latency_p99_ms",
    "int_latency_max_ms",
    "outbuf_latency_p50_ms",
    "throttle_max_ms",
    "retries",
    "timeouts",
    "disconnects",
    "msg_cnt",
    "msg_size_bytes",
    "queue_share",
    "fetchq_cnt",
    "lag_messages",
];

pub(crate) struct Timeline<'w> {
    w: csv::Writer<&'w mut dyn Write>,
    header: bool,
}

fn num(v: Option<f64>) -> String {
    match v {
        Some(x) if x.is_finite() => {
            let r = super::stat::round_sig(x);
            if r.fract() == 0.0 {
                format!("{r:.0}")
            } else {
                format!("{r}")
            }
        }
        _ => String::new(),
    }
}

fn win(w: Option<Window>, f: impl Fn(&Window) -> Option<i64>) -> Option<f64> {
    w.filter(|w| w.count() > 0).and_then(|w| ms(f(&w)))
}

fn csv_err(e: csv::Error) -> io::Error {
    io::Error::other(e)
}

impl<'w> Timeline<'w> {
    pub(crate) fn new(w: &'w mut dyn Write) -> Self {
        Timeline {
            w: csv::Writer::from_writer(w),
            header: false,
        }
    }

    fn broker_cells(b: &BrokerFig) -> [String; 19] {
        [
            num(b.requests_per_s),
            num(b.produce_per_s),
            num(b.fetch_per_s),
            num(b.bytes_per_produce),
            String::new(),
            String::new(),
            num(b.waitresp_cnt),
            num(b.outbuf_cnt),
            num(win(b.rtt, |w| w.p50)),
            num(win(b.rtt, |w| w.p99)),
            num(win(b.rtt, |w| w.max)),
            num(win(b.int_latency, |w| w.p50)),
            num(win(b.int_latency, |w| w.p99)),
            num(win(b.int_latency, |w| w.max)),
            num(win(b.outbuf_latency, |w| w.p50)),
            // Throttle windows are milliseconds already.
            num(b
                .throttle
                .filter(|w| w.count() > 0)
                .and_then(|w| w.max)
                .map(|v| v as f64)),
            num(b.retries),
            num(b.timeouts),
            num(b.disconnects),
        ]
    }

    pub(crate) fn write(&mut self, track: &Track, iv: &Interval) -> io::Result<()> {
        if !self.header {
            self.w.write_record(COLUMNS).map_err(csv_err)?;
            self.header = true;
        }
        let lead = |broker: &str, state: &str| -> Vec<String> {
            vec![
                track.name.clone(),
                track.number.to_string(),
                iv.line.to_string(),
                num(Some(iv.t_s)),
                iv.time.map(|t| t.to_string()).unwrap_or_default(),
                num(Some(iv.dt_s)),
                broker.to_string(),
                state.to_string(),
            ]
        };
        let mut row = lead("*", "");
        row.extend([
            num(iv.tx_msgs_per_s),
            num(iv.tx_msg_bytes_per_s),
            num(iv.rx_msgs_per_s),
            num(iv.rx_msg_bytes_per_s),
        ]);
        let mut cells = Self::broker_cells(&iv.total);
        cells[4] = num(batches_per_request(iv));
        cells[5] = num(iv
            .batch_bytes()
            .filter(|w| w.count() > 0)
            .and_then(|w| w.p50)
            .map(|v| v as f64));
        row.extend(cells);
        row.extend([
            num(iv.msg_cnt),
            num(iv.msg_size),
            num(iv.queue_share()),
            num(iv.fetchq_total()),
            num(iv.lag_total()),
        ]);
        self.w.write_record(&row).map_err(csv_err)?;
        for b in &iv.brokers {
            let t = &track.brokers[b.idx];
            let mut row = lead(&t.name, t.last_state.as_deref().unwrap_or(""));
            row.extend([String::new(), String::new(), String::new(), String::new()]);
            row.extend(Self::broker_cells(b));
            row.extend(std::iter::repeat_n(String::new(), 5));
            self.w.write_record(&row).map_err(csv_err)?;
        }
        Ok(())
    }

    pub(crate) fn flush(&mut self) -> io::Result<()> {
        self.w.flush()
    }
}
