//! The reason's sentences: the rates a window could not hold, the connections where requests
//! queued, messages per request.

use super::checks::sustained;
use super::evidence::{RatePair, Window};
use super::thresholds::MIN_WAITING_REQUESTS;
use crate::findings::connection::Connection;
use crate::vocab::units;

pub(super) fn achieved(w: &Window) -> String {
    w.rate_achieved_per_s.show(units::msgs_per_s)
}

/// The sentence about rates above the judged one that a window could not hold.
pub(super) fn unsustained_sentence(pairs: &[&RatePair]) -> Option<String> {
    let parts: Vec<String> = pairs
        .iter()
        .map(|p| {
            let (d, f) = (
                sustained(&p.default_window, p.rate_per_s),
                sustained(&p.window_5, p.rate_per_s),
            );
            let waiting = p
                .default_window
                .waiting_requests
                .median()
                .map(|n| format!(", {} requests waiting", units::count(n)))
                .unwrap_or_default();
            match (d, f) {
                (false, true) => format!(
                    "at {} the default window could not sustain the rate ({}{waiting}) while \
                     max.in.flight=5 did ({}): on this machine the unlimited window costs the \
                     rate before it shows as latency",
                    units::msgs_per_s(p.rate_per_s as f64),
                    achieved(&p.default_window),
                    achieved(&p.window_5)
                ),
                (true, false) => format!(
                    "at {} max.in.flight=5 could not sustain the rate ({}; the default window {})",
                    units::msgs_per_s(p.rate_per_s as f64),
                    achieved(&p.window_5),
                    achieved(&p.default_window)
                ),
                _ => format!(
                    "at {} neither window sustained the rate (default {}{waiting}; 5: {})",
                    units::msgs_per_s(p.rate_per_s as f64),
                    achieved(&p.default_window),
                    achieved(&p.window_5)
                ),
            }
        })
        .collect();
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// The connections where requests queued (the reason names them), by median wait.
pub(super) fn queued_on(d: &Window) -> Option<String> {
    let mut v: Vec<&Connection> = d
        .connections
        .iter()
        .filter(|c| {
            c.waiting_requests.n() > 0
                && c.waiting_requests
                    .values()
                    .iter()
                    .all(|&n| n > MIN_WAITING_REQUESTS)
        })
        .collect();
    v.sort_by(|a, b| {
        b.waiting_requests
            .median()
            .unwrap_or(0.0)
            .total_cmp(&a.waiting_requests.median().unwrap_or(0.0))
    });
    (!v.is_empty()).then(|| {
        v.iter()
            .map(|c| {
                format!(
                    "{} ({} waiting)",
                    c.broker,
                    units::count(c.waiting_requests.median().unwrap_or(0.0))
                )
            })
            .collect::<Vec<_>>()
            .join(", ")
    })
}

pub(super) fn fmt_msgs(x: f64) -> String {
    format!("{x:.1}")
}
