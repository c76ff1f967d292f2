//! The typed evidence the catalogue's rules take, gathered from the sweep: the in-flight
//! rule's pairs of windows at linger.ms=0, the linger rules' runs at linger.ms=L and 0.

use super::options::InflightLatency;
use super::point::Point;
use crate::kit::{Measured, Sweep};
use kgap_analyzers::findings::inflight_latency::DEFAULT_WINDOW;
use kgap_analyzers::findings::probe_result::Client;
use kgap_analyzers::findings::{inflight_latency as inflight, per_partition_linger as linger};

/// The point of `client` at these parameters, if measured.
fn find<'a>(
    sweep: &'a Sweep<InflightLatency>,
    client: Client,
    p: Point,
) -> Option<Measured<'a, InflightLatency>> {
    sweep.of(client).find(|m| *m.point == p)
}

fn window_reps(m: &Measured<'_, InflightLatency>) -> inflight::Window {
    inflight::Window {
        rate_achieved_per_s: m.reps(|f| f.rate_achieved_per_s),
        ack_ms_p50: m.reps(|f| f.ack_ms_p50),
        ack_ms_p99: m.reps(|f| f.ack_ms_p99),
        e2e_ms_p99: m.reps(|f| f.e2e_intended_ms_p99.unwrap_or(f.e2e_ms_p99)),
        produce_requests_per_s: m.reps_of(|f| f.produce_requests_per_s),
        msgs_per_request: m.reps_of(|f| f.msgs_per_batch_mean),
        waiting_requests: m.reps_of(|f| f.requests_in_flight_mean),
        connections: crate::kit::broker_figures::connections(
            &m.runs
                .iter()
                .map(|f| f.brokers.as_slice())
                .collect::<Vec<_>>(),
        ),
    }
}

/// The in-flight rule's evidence: every rate with both windows at linger.ms=0 (librdkafka).
pub fn inflight_evidence(sweep: &Sweep<InflightLatency>) -> inflight::Evidence {
    let mut rates: Vec<u64> = sweep
        .of(Client::Librdkafka)
        .map(|m| m.point.rate_per_s)
        .collect();
    rates.sort_unstable();
    rates.dedup();
    let pairs = rates
        .into_iter()
        .filter_map(|rate| {
            let at = |max_in_flight| Point {
                rate_per_s: rate,
                linger_ms: 0,
                max_in_flight,
            };
            let d = find(sweep, Client::Librdkafka, at(DEFAULT_WINDOW))?;
            let f = find(sweep, Client::Librdkafka, at(inflight::SMALL_WINDOW))?;
            Some(inflight::RatePair {
                rate_per_s: rate,
                default_window: window_reps(&d),
                window_5: window_reps(&f),
            })
        })
        .collect();
    inflight::Evidence { pairs }
}

/// The linger rules' evidence for one client: the smallest linger.ms above 0 against 0, at
/// the lowest rate both ran, with max.in.flight=5 when measured (else the default window).
pub fn linger_evidence(
    sweep: &Sweep<InflightLatency>,
    client: Client,
    partitions: u32,
) -> Option<linger::Evidence> {
    let mut lingers: Vec<u64> = sweep
        .of(client)
        .map(|m| m.point.linger_ms)
        .filter(|&l| l > 0)
        .collect();
    lingers.sort_unstable();
    let l = *lingers.first()?;
    let mut rates: Vec<u64> = sweep.of(client).map(|m| m.point.rate_per_s).collect();
    rates.sort_unstable();
    rates.dedup();
    for rate in rates {
        for window in [inflight::SMALL_WINDOW, DEFAULT_WINDOW] {
            let at = |linger_ms| Point {
                rate_per_s: rate,
                linger_ms,
                max_in_flight: window,
            };
            let (Some(on), Some(off)) = (find(sweep, client, at(l)), find(sweep, client, at(0)))
            else {
                continue;
            };
            return Some(linger::Evidence {
                linger_ms: l,
                rate_per_s: rate,
                partitions,
                max_in_flight: window,
                e2e_ms_p50_lingering: on.reps(|f| f.e2e_intended_ms_p50.unwrap_or(f.e2e_ms_p50)),
                e2e_ms_p50_baseline: off.reps(|f| f.e2e_intended_ms_p50.unwrap_or(f.e2e_ms_p50)),
                rate_achieved_lingering: on.reps(|f| f.rate_achieved_per_s),
                rate_achieved_baseline: off.reps(|f| f.rate_achieved_per_s),
                ack_ms_p50_lingering: on.reps(|f| f.ack_ms_p50),
                ack_ms_p50_baseline: off.reps(|f| f.ack_ms_p50),
            });
        }
    }
    None
}
