//! The RTT preflight: the broker's idle round trip, measured before a probe measures.
//!
//! The methodology chapter's trap: a broker reached through an SSH tunnel (a Colima or
//! OrbStack published port) roughly tripled request RTT and silently capped every number.
//! So before the first run, and again before every later rep, a client of the preflight's
//! own times [`SAMPLES`] Metadata requests that name no topic, one at a time. Why those: it
//! is the cheapest request an application can send through librdkafka (ApiVersions is
//! librdkafka's own, at connect), its answer lists the brokers only, so it does not grow
//! with the cluster's topics, and it crosses the same TLS/SASL path as the probe's clients.
//! The first request (which connects) is not counted: what is left is the network round
//! trip plus librdkafka's hand-off to its broker thread and back. TCP connect time would
//! not do: a local proxy or tunnel accepts the connection itself. The floor (the minimum)
//! is what is judged: load on the machine adds to some samples, a relay adds to every one.

use crate::kit::broker::{Broker, Producer};
use crate::kit::capture::Sink;
use kgap_analyzers::findings::probe_result::{Preflight as Document, PreflightRep, ProbeResult};
use kgap_analyzers::vocab::units;
use rdkafka::producer::Producer as _;
use rdkafka_sys as rdsys;
use std::net::{IpAddr, ToSocketAddrs};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Requests timed before rep 1.
pub const SAMPLES: usize = 30;
/// Requests timed before each later rep (the jump check needs a floor, not a distribution).
pub const REP_SAMPLES: usize = 10;
/// The most a loopback or link-local broker's floor may be: a broker on this machine or
/// the next hop answers a brokers-only Metadata in well under a millisecond.
pub const LOCAL_MAX_MS: f64 = 1.0;
/// A floor this many times another rep's is a path that changed under the sweep.
pub const JUMP_FACTOR: f64 = 3.0;
/// ... and by at least this much: below it a busy scheduler moves a sub-millisecond floor.
pub const JUMP_MIN_MS: f64 = 0.5;
/// What every warning says.
pub const TRAP: &str =
    "a proxy or tunnel in the path caps every number: measure against the broker directly";
/// One request's patience.
const ASK_TIMEOUT: Duration = Duration::from_secs(5);

/// What the address promises: loopback, link-local, or nothing.
pub fn address_kind(bootstrap: &str, mock: bool) -> (&'static str, Option<f64>) {
    if mock {
        return ("embedded-mock", None);
    }
    let first = bootstrap.split(',').next().unwrap_or("").trim();
    let ips: Vec<IpAddr> = first
        .to_socket_addrs()
        .map(|a| a.map(|s| s.ip()).collect())
        .unwrap_or_default();
    let local = |f: fn(&IpAddr) -> bool| !ips.is_empty() && ips.iter().all(f);
    if local(IpAddr::is_loopback) {
        ("loopback", Some(LOCAL_MAX_MS))
    } else if local(is_link_local) {
        ("link-local", Some(LOCAL_MAX_MS))
    } else {
        ("other", None)
    }
}

fn is_link_local(ip: &IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.is_link_local(),
        IpAddr::V6(v6) => (v6.segments()[0] & 0xffc0) == 0xfe80,
    }
}

/// Times `n` brokers-only Metadata requests on a fresh client (one more, untimed, connects).
pub fn measure(broker: &Broker, rep: u32, n: usize) -> Result<PreflightRep, String> {
    let client =
        Producer::new(broker, &[], Arc::new(Sink::default())).map_err(|e| e.to_string())?;
    let rk = client.producer.client().native_ptr();
    let ask = || -> Result<f64, String> {
        let mut md: *const rdsys::rd_kafka_metadata_t = std::ptr::null();
        let t = Instant::now();
        // all_topics = 0 and no topic: a fresh client knows no topics, so the request names
        // none and the broker answers with its brokers only (nothing is auto-created).
        let err = unsafe {
            rdsys::rd_kafka_metadata(
                rk,
                0,
                std::ptr::null_mut(),
                &mut md,
                ASK_TIMEOUT.as_millis() as i32,
            )
        };
        let ms = t.elapsed().as_secs_f64() * 1e3;
        if !md.is_null() {
            unsafe { rdsys::rd_kafka_metadata_destroy(md) };
        }
        if err != rdsys::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR_NO_ERROR {
            let why = unsafe { std::ffi::CStr::from_ptr(rdsys::rd_kafka_err2str(err)) };
            return Err(format!(
                "a Metadata request failed: {}",
                why.to_string_lossy()
            ));
        }
        Ok(ms)
    };
    ask()?;
    let mut ms = Vec::with_capacity(n);
    for _ in 0..n {
        ms.push(ask()?);
    }
    ms.sort_by(f64::total_cmp);
    let round = |x: f64| (x * 1000.0).round() / 1000.0;
    Ok(PreflightRep {
        rep,
        samples: n,
        rtt_ms_min: round(ms[0]),
        rtt_ms_median: round(if n % 2 == 1 {
            ms[n / 2]
        } else {
            (ms[n / 2 - 1] + ms[n / 2]) / 2.0
        }),
        rtt_ms_max: round(ms[n - 1]),
    })
}

/// The warning, if the floors say the path is not what the address suggests. Pure: the
/// thresholds are the consts above.
pub fn judge(kind: &str, expected_max_ms: Option<f64>, reps: &[PreflightRep]) -> Option<String> {
    if kind == "embedded-mock" || reps.is_empty() {
        return None;
    }
    let first = &reps[0];
    if let Some(max) = expected_max_ms {
        if let Some(slow) = reps.iter().find(|r| r.rtt_ms_min > max) {
            return Some(format!(
                "the broker's idle round trip is {} at best (the floor of {} Metadata requests \
                 before rep {}) to a {kind} address, where it should be under {}: {TRAP} \
                 (a broker on this machine starved of CPU looks the same: see its load)",
                units::ms(slow.rtt_ms_min),
                slow.samples,
                slow.rep,
                units::ms(max)
            ));
        }
    }
    let lo = reps
        .iter()
        .min_by(|a, b| a.rtt_ms_min.total_cmp(&b.rtt_ms_min))?;
    let hi = reps
        .iter()
        .max_by(|a, b| a.rtt_ms_min.total_cmp(&b.rtt_ms_min))?;
    let jumped = lo.rtt_ms_min > 0.0
        && hi.rtt_ms_min >= JUMP_FACTOR * lo.rtt_ms_min
        && hi.rtt_ms_min - lo.rtt_ms_min >= JUMP_MIN_MS;
    if jumped {
        return Some(format!(
            "the broker's idle round trip changed {} between reps ({} before rep {}, {} before \
             rep {}; first {}): the path changed under the sweep; {TRAP}",
            units::times(hi.rtt_ms_min / lo.rtt_ms_min),
            units::ms(lo.rtt_ms_min),
            lo.rep,
            units::ms(hi.rtt_ms_min),
            hi.rep,
            units::ms(first.rtt_ms_min)
        ));
    }
    None
}

/// The report's header line.
pub fn line(p: &Document) -> String {
    let Some(first) = p.reps.first() else {
        return format!("not measured ({})", p.method);
    };
    let what = if p.address_kind == "embedded-mock" {
        format!(
            "embedded mock at {} (in-process, not a network path: what librdkafka's request \
             hand-off to the mock thread costs)",
            p.address
        )
    } else {
        format!("{} ({})", p.address, p.address_kind)
    };
    let later: Vec<String> = p.reps[1..]
        .iter()
        .map(|r| format!("{} before rep {}", units::ms(r.rtt_ms_min), r.rep))
        .collect();
    format!(
        "idle round trip to {what}: floor {}, median {}, max {} over {} brokers-only Metadata \
         requests{}",
        units::ms(first.rtt_ms_min),
        units::ms(first.rtt_ms_median),
        units::ms(first.rtt_ms_max),
        first.samples,
        if later.is_empty() {
            String::new()
        } else {
            format!("; floors {}", later.join(", "))
        }
    )
}

/// The driver's hook: measures before rep 1 and before the first run of every later rep,
/// and keeps the result's `preflight` (and a warning, once) up to date.
pub struct Hook {
    measured_rep: u32,
}

impl Hook {
    pub fn new() -> Hook {
        Hook { measured_rep: 0 }
    }

    pub fn before<F>(
        &mut self,
        broker: &Broker,
        rep: u32,
        result: &mut ProbeResult<F>,
        progress: &dyn Fn(&str),
    ) {
        if rep <= self.measured_rep {
            return;
        }
        self.measured_rep = rep;
        let (kind, expected) = address_kind(broker.bootstrap(), broker.is_mock());
        let doc = result.preflight.get_or_insert_with(|| Document {
            method: format!(
                "{SAMPLES} brokers-only Metadata requests (then {REP_SAMPLES} before each later \
                 rep), one at a time on an idle client of the preflight's own"
            ),
            address: broker
                .bootstrap()
                .split(',')
                .next()
                .unwrap_or("")
                .to_string(),
            address_kind: kind.to_string(),
            expected_max_ms: expected,
            reps: Vec::new(),
            warning: None,
            wakeup: None,
        });
        if rep == 1 && doc.wakeup.is_none() {
            let pl = &result.placement;
            let rest: Vec<usize> = pl
                .client_cpus
                .iter()
                .copied()
                .filter(|&c| Some(c) != pl.own_core)
                .collect();
            let (from, to) =
                super::wakeup::cpus(&rest, pl.broker_cpus.as_deref(), pl.machine_cores);
            doc.wakeup = super::wakeup::measure(from, to);
            if let Some(w) = &doc.wakeup {
                progress(&format!("wakeup: {}", super::wakeup::line(w)));
            }
        }
        let n = if doc.reps.is_empty() {
            SAMPLES
        } else {
            REP_SAMPLES
        };
        match measure(broker, rep, n) {
            Ok(r) if doc.reps.is_empty() => {
                doc.reps.push(r);
                progress(&format!("preflight: {}", line(doc)));
            }
            Ok(r) => {
                progress(&format!(
                    "preflight before rep {rep}: floor {}, median {} over {n} requests",
                    units::ms(r.rtt_ms_min),
                    units::ms(r.rtt_ms_median)
                ));
                doc.reps.push(r);
            }
            Err(e) => {
                progress(&format!("preflight before rep {rep}: not measured: {e}"));
                return;
            }
        }
        if doc.warning.is_none() {
            if let Some(w) = judge(&doc.address_kind, doc.expected_max_ms, &doc.reps) {
                progress(&format!("warning: {w}"));
                doc.warning = Some(w.clone());
                result.warnings.push(w);
            }
        }
    }
}

impl Default for Hook {
    fn default() -> Self {
        Hook::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rep(rep: u32, min: f64) -> PreflightRep {
        PreflightRep {
            rep,
            samples: 30,
            rtt_ms_min: min,
            rtt_ms_median: min * 1.5,
            rtt_ms_max: min * 4.0,
        }
    }

    #[test]
    fn a_loopback_floor_above_a_millisecond_names_the_trap() {
        let w = judge("loopback", Some(LOCAL_MAX_MS), &[rep(1, 10.4)]).expect("a warning");
        assert!(w.contains(TRAP), "{w}");
        assert!(w.contains("10.4 ms"), "{w}");
        assert_eq!(judge("loopback", Some(LOCAL_MAX_MS), &[rep(1, 0.18)]), None);
        // A remote address promises nothing by itself.
        assert_eq!(judge("other", None, &[rep(1, 10.4)]), None);
        // The mock is no network path.
        assert_eq!(judge("embedded-mock", None, &[rep(1, 10.4)]), None);
    }

    #[test]
    fn a_threefold_jump_between_reps_names_the_trap_but_scheduler_noise_does_not() {
        let w = judge("other", None, &[rep(1, 2.0), rep(2, 2.1), rep(3, 6.5)]).expect("a jump");
        assert!(w.contains("3.25x") && w.contains(TRAP), "{w}");
        // 0.05 → 0.2 ms is 4x but a busy scheduler's, not a path's.
        assert_eq!(
            judge("loopback", Some(LOCAL_MAX_MS), &[rep(1, 0.05), rep(2, 0.2)]),
            None
        );
        assert_eq!(judge("other", None, &[rep(1, 2.0), rep(2, 5.9)]), None);
    }

    #[test]
    fn addresses_are_classified_by_what_they_resolve_to() {
        assert_eq!(address_kind("127.0.0.1:9092", false).0, "loopback");
        assert_eq!(address_kind("localhost:9092", false).0, "loopback");
        assert_eq!(address_kind("169.254.10.2:9092", false).0, "link-local");
        assert_eq!(address_kind("[fe80::1]:9092", false).0, "link-local");
        assert_eq!(address_kind("10.0.0.5:9092", false).0, "other");
        assert_eq!(address_kind("127.0.0.1:9092", true).0, "embedded-mock");
    }
}
