//! Which broker connection does what, when a client talks to several: the busiest (most
//! requests), the slowest (highest round trip) and the one where requests queue (most
//! awaiting a response). librdkafka keeps one connection per broker and a broker serves each
//! connection's requests one at a time, so a cluster's figures summed over brokers hide the
//! one that limits the client.

use super::report::{BrokerReport, Connections, Standout};
use super::stat::round_sig;

fn p50(s: &Option<super::stat::Summary>) -> Option<f64> {
    s.as_ref().map(|s| s.p50)
}

fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// The connection with the highest `f` among `loaded`, against the others' median.
fn standout(
    loaded: &[&BrokerReport],
    f: impl Fn(&BrokerReport) -> Option<f64>,
) -> Option<Standout> {
    let vals: Vec<(&BrokerReport, f64)> = loaded.iter().filter_map(|b| Some((*b, f(b)?))).collect();
    if vals.len() < 2 {
        return None;
    }
    let (top, v) = vals.iter().max_by(|a, b| a.1.total_cmp(&b.1))?;
    let others = median(
        vals.iter()
            .filter(|(b, _)| b.name != top.name)
            .map(|(_, x)| *x)
            .collect(),
    );
    Some(Standout {
        broker: top.name.clone(),
        value: round_sig(*v),
        others_median: round_sig(others),
        share: None,
    })
}

/// Compares the learned brokers' connections that carried requests; None with fewer than two.
pub fn compare(brokers: &[BrokerReport]) -> Option<Connections> {
    let loaded: Vec<&BrokerReport> = brokers
        .iter()
        .filter(|b| b.nodeid.is_some_and(|n| n >= 0))
        .filter(|b| p50(&b.requests_per_s).is_some_and(|r| r > 0.0))
        .collect();
    if loaded.len() < 2 {
        return None;
    }
    let total: f64 = loaded.iter().filter_map(|b| p50(&b.requests_per_s)).sum();
    let mut busiest = standout(&loaded, |b| p50(&b.requests_per_s));
    if let Some(b) = &mut busiest {
        b.share = (total > 0.0).then(|| round_sig(b.value / total));
    }
    Some(Connections {
        carrying_requests: loaded.len() as u64,
        busiest,
        slowest: standout(&loaded, |b| b.rtt_p50_ms.map(|s| s.summary.p50)),
        most_waiting: standout(&loaded, |b| b.waitresp_cnt.map(|s| s.summary.p50)),
    })
}

/// The text line: `connections (3 carrying requests): busiest …; slowest …; most waiting …`.
pub fn line(c: &Connections) -> String {
    let mut parts = Vec::new();
    if let Some(b) = &c.busiest {
        parts.push(format!(
            "busiest {} ({} requests/s, {:.0}% of all; the others {})",
            b.broker,
            si(b.value),
            b.share.unwrap_or(0.0) * 100.0,
            si(b.others_median)
        ));
    }
    if let Some(s) = &c.slowest {
        parts.push(format!(
            "slowest {} (rtt p50 {}; the others {})",
            s.broker,
            crate::vocab::units::ms(s.value),
            crate::vocab::units::ms(s.others_median)
        ));
    }
    if let Some(w) = &c.most_waiting {
        parts.push(format!(
            "most waiting {} ({} requests awaiting a response; the others {})",
            w.broker,
            si(w.value),
            si(w.others_median)
        ));
    }
    format!(
        "connections ({} carrying requests): {}",
        c.carrying_requests,
        parts.join("; ")
    )
}

fn si(v: f64) -> String {
    crate::vocab::units::si(v)
}
