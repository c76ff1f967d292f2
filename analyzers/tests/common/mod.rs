//! Test support: librdkafka logs built record by record with the exact printf
//! shapes of librdkafka 2.12.1, and the wrapper styles users' loggers put around them.
#![allow(dead_code)]

use std::fmt::Write as _;

/// One librdkafka log call: time, facility, client instance, message (with its
/// `[thrd:…]: ` and broker prefixes, as `rd_kafka_log0` formats it).
#[derive(Clone, Debug)]
pub struct Rec {
    pub t: f64,
    pub fac: &'static str,
    pub client: String,
    pub msg: String,
}

/// 2018-03-07T13:06:54Z: every synthetic log starts here.
pub const T0: f64 = 1_520_428_014.0;

pub fn broker_rec(t: f64, fac: &'static str, client: &str, broker: &str, body: &str) -> Rec {
    Rec {
        t,
        fac,
        client: client.to_string(),
        msg: format!("[thrd:{broker}]: {broker}: {body}"),
    }
}

/// A producer bound by the broker's per-request cost (the post's Gap 1): one full
/// `bytes`-sized ProduceRequest per partition batch, `per_s` of them every second,
/// rtt ≈ 0.4 ms, with the debug=msg line before each request.
pub fn ceiling_log(seconds: u32, per_s: u32, bytes: u64) -> Vec<Rec> {
    let b = "kafka-1:9092/1";
    let c = "rdkafka#producer-1";
    let mut out = Vec::new();
    let mut corr = 1;
    for s in 0..seconds {
        for i in 0..per_s {
            let t = T0 + s as f64 + i as f64 / per_s as f64;
            let part = corr % 6;
            let size = bytes - (corr as u64 % 7);
            out.push(broker_rec(t, "PRODUCE", c, b, &format!(
                "bench [{part}]: Produce MessageSet with 15 message(s) ({} bytes, ApiVersion 10, MsgVersion 2, MsgId {}, BaseSeq -1, PID{{Invalid}}, uncompressed)",
                size - 120, corr * 15
            )));
            out.push(broker_rec(
                t,
                "SEND",
                c,
                b,
                &format!("Sent ProduceRequest (v10, {size} bytes @ 0, CorrId {corr})"),
            ));
            let rtt = 0.35 + (corr % 10) as f64 * 0.01;
            out.push(broker_rec(
                t + rtt / 1000.0,
                "RECV",
                c,
                b,
                &format!("Received ProduceResponse (v10, 62 bytes, CorrId {corr}, rtt {rtt:.2}ms)"),
            ));
            corr += 1;
        }
    }
    out
}

/// linger.ms=0 at a high rate with librdkafka's default in-flight window: tiny
/// requests sent in bursts faster than the broker serves them one at a time, so
/// they queue and rtt grows with the depth (`window` = max.in.flight; 0 = unlimited).
pub fn inflight_log(seconds: u32, window: usize) -> Vec<Rec> {
    let b = "kafka-1:9092/1";
    let c = "rdkafka#producer-1";
    let service = 0.000_2; // broker time per request
    let mut events: Vec<(f64, Rec)> = Vec::new();
    let mut corr = 1;
    for s in 0..seconds {
        for cycle in 0..100 {
            let start = T0 + s as f64 + cycle as f64 * 0.01;
            let mut broker_free = start;
            let mut pending: std::collections::VecDeque<f64> = Default::default();
            for i in 0..40 {
                let mut t = start + i as f64 * 0.000_05;
                // A bounded window holds the request until a response frees a slot.
                if window > 0 && pending.len() >= window {
                    let freed = pending.pop_front().unwrap();
                    t = t.max(freed);
                }
                let size = 1024 + (corr % 3) * 1024;
                let done = broker_free.max(t) + service;
                broker_free = done;
                let rtt_ms = (done - t) * 1000.0;
                events.push((
                    t,
                    broker_rec(
                        t,
                        "SEND",
                        c,
                        b,
                        &format!("Sent ProduceRequest (v10, {size} bytes @ 0, CorrId {corr})"),
                    ),
                ));
                events.push((
                    done,
                    broker_rec(
                        done,
                        "RECV",
                        c,
                        b,
                        &format!(
                    "Received ProduceResponse (v10, 62 bytes, CorrId {corr}, rtt {rtt_ms:.2}ms)"
                ),
                    ),
                ));
                pending.push_back(done);
                corr += 1;
            }
        }
    }
    events.sort_by(|a, b| a.0.total_cmp(&b.0));
    events.into_iter().map(|(_, r)| r).collect()
}

/// A consumer whose partitions keep hitting queued.min.messages (the post's Gap 2):
/// per partition and cycle, a fetch, the queue full, a backoff of `backoff_ms`, then
/// fetchable again after the backoff plus `drain_ms`.
pub fn fetch_backoff_log(partitions: i32, cycles: u32, backoff_ms: u64) -> Vec<Rec> {
    let b = "kafka-1:9092/1";
    let c = "rdkafka#consumer-1";
    let mut events: Vec<Rec> = Vec::new();
    let cycle_s = backoff_ms as f64 / 1000.0 + 0.05;
    for k in 0..cycles {
        let base = T0 + k as f64 * cycle_s;
        events.push(broker_rec(
            base,
            "FETCH",
            c,
            b,
            &format!("Fetch {partitions}/{partitions}/{partitions} toppar(s)"),
        ));
        for p in 0..partitions {
            let t = base + 0.001 * p as f64;
            let off = k as u64 * 100_000;
            events.push(broker_rec(t, "FETCH", c, b, &format!(
                "Topic bench [{p}] in state active at offset {off} (leader epoch 0) (0/100000 msgs, 0/65536 kb queued, opv 2) is fetchable"
            )));
            events.push(broker_rec(t, "FETCH", c, b, &format!(
                "Fetch topic bench [{p}] at offset {off} (leader epoch 0, current leader epoch 0, v2)"
            )));
            events.push(broker_rec(t + 0.02, "FETCH", c, b, &format!(
                r#"Topic bench [{p}] MessageSet size 1048576, error "Success", MaxOffset {}, LSO {}, Ver 2/2"#,
                off + 100_000, off + 100_000
            )));
            events.push(broker_rec(t + 0.02, "CONSUME", c, b, &format!(
                "Enqueue 100000 message(s) (10400000 bytes, 100000 ops) on bench [{p}] fetch queue (qlen 100000, v2, last_offset {}, 0 ctrl msgs, uncompressed)",
                off + 99_999
            )));
            events.push(broker_rec(t + 0.03, "FETCH", c, b, &format!(
                "Topic bench [{p}] in state active at offset {} (leader epoch 0) (100000/100000 msgs, 10156/65536 kb queued, opv 2) is not fetchable: queued.min.messages exceeded",
                off + 100_000
            )));
            events.push(broker_rec(
                t + 0.03,
                "BACKOFF",
                c,
                b,
                &format!("bench [{p}]: Fetch backoff for {backoff_ms}ms: Local: Queue full"),
            ));
        }
        events.push(broker_rec(
            base + 0.04,
            "FETCH",
            c,
            b,
            &format!("Fetch backoff for {}ms", backoff_ms - 10),
        ));
    }
    events.sort_by(|a, b| a.t.total_cmp(&b.t));
    events
}

/// Requests that time out behind a blocking JoinGroup (REQTMOUT lines are logged
/// at LOG_NOTICE/WARNING, not debug, and always appear).
pub fn timeout_log() -> Vec<Rec> {
    let b = "kafka-1:9092/1";
    let c = "rdkafka#consumer-1";
    vec![
        broker_rec(T0, "SEND", c, b, "Sent JoinGroupRequest (v5, 300 bytes @ 0, CorrId 10)"),
        broker_rec(T0 + 0.1, "SEND", c, b, "Sent OffsetCommitRequest (v7, 120 bytes @ 0, CorrId 11)"),
        broker_rec(T0 + 60.1, "REQTMOUT", c, b, "Timed out OffsetCommitRequest in flight (after 60000ms, timeout #0): possibly held back by preceeding blocking JoinGroupRequest with timeout in 240000ms"),
        broker_rec(T0 + 60.1, "REQTMOUT", c, b, "Timed out 1 in-flight, 0 retry-queued, 0 out-queue, 0 partially-sent requests"),
    ]
}

/// Civil date of epoch seconds (UTC): (year, month, day, hour, min, sec, millis, micros).
pub fn civil(t: f64) -> (i64, u32, u32, u32, u32, u32, u32, u32) {
    let secs = t.floor() as i64;
    let micros = ((t - secs as f64) * 1e6).round().min(999_999.0) as u32;
    let days = secs.div_euclid(86400);
    let sod = secs.rem_euclid(86400) as u32;
    // Howard Hinnant's civil_from_days.
    let z = days + 719468;
    let era = z.div_euclid(146097);
    let doe = z.rem_euclid(146097);
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = if m <= 2 { y + 1 } else { y };
    (
        y,
        m,
        d,
        sod / 3600,
        sod / 60 % 60,
        sod % 60,
        micros / 1000,
        micros,
    )
}

pub fn iso(t: f64) -> String {
    let (y, mo, d, h, mi, s, ms, _) = civil(t);
    format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}.{ms:03}Z")
}

fn date_space(t: f64, frac_sep: char) -> String {
    let (y, mo, d, h, mi, s, ms, _) = civil(t);
    format!("{y:04}-{mo:02}-{d:02} {h:02}:{mi:02}:{s:02}{frac_sep}{ms:03}")
}

fn rdk_stamp(t: f64) -> String {
    let ms = (t * 1000.0).round() as i64;
    format!("{}.{:03}", ms / 1000, ms % 1000)
}

fn json_escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

fn strip_thread(msg: &str) -> &str {
    match msg.find("]: ") {
        Some(i) if msg.starts_with("[thrd:") => &msg[i + 3..],
        _ => msg,
    }
}

/// What timestamp a wrapper style leaves the analyzers.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Stamp {
    Librdkafka,
    Wrapper,
    None,
}

impl Stamp {
    pub fn label(self) -> &'static str {
        match self {
            Stamp::Librdkafka => "librdkafka",
            Stamp::Wrapper => "wrapper",
            Stamp::None => "none",
        }
    }
}

pub struct Style {
    pub name: &'static str,
    pub stamp: Stamp,
    pub line: fn(&Rec) -> String,
}

/// Wrapper styles seen in the wild, built from their documented formats.
pub fn styles() -> Vec<Style> {
    vec![
        Style {
            name: "raw stderr",
            stamp: Stamp::Librdkafka,
            line: |r| format!("%7|{}|{}|{}| {}", rdk_stamp(r.t), r.fac, r.client, r.msg),
        },
        Style {
            name: "raw, log.thread.name=false",
            stamp: Stamp::Librdkafka,
            line: |r| {
                format!(
                    "%7|{}|{}|{}| {}",
                    rdk_stamp(r.t),
                    r.fac,
                    r.client,
                    strip_thread(&r.msg)
                )
            },
        },
        Style {
            name: "JSON per line, no time",
            stamp: Stamp::None,
            line: |r| {
                format!(
                    r#"{{"severity":7,"fac":"{}","name":"{}","message":"{}"}}"#,
                    r.fac,
                    r.client,
                    json_escape(&r.msg)
                )
            },
        },
        Style {
            name: "time then JSON",
            stamp: Stamp::Wrapper,
            line: |r| {
                format!(
                    r#"{} {{"severity":7,"fac":"{}","message":"{}"}}"#,
                    iso(r.t),
                    r.fac,
                    json_escape(&r.msg)
                )
            },
        },
        Style {
            name: "JSON array element, escaped slashes, time last",
            stamp: Stamp::Wrapper,
            line: |r| {
                format!(
                    r#"  {{"fac":"{}","message":"{}","time":"{}"}},"#,
                    r.fac,
                    json_escape(&r.msg).replace('/', "\\/"),
                    iso(r.t)
                )
            },
        },
        Style {
            name: ".NET",
            stamp: Stamp::Wrapper,
            line: |r| {
                format!(
                    "7|{}|{}|{}| {}",
                    date_space(r.t, '.'),
                    r.client,
                    r.fac,
                    r.msg
                )
            },
        },
        Style {
            name: "rust-rdkafka via env_logger",
            stamp: Stamp::Wrapper,
            line: |r| {
                format!(
                    "[{} DEBUG librdkafka] librdkafka: {} {}",
                    iso(r.t),
                    r.fac,
                    r.msg
                )
            },
        },
        Style {
            name: "syslog RFC 5424 (librdkafka's syslog logger)",
            stamp: Stamp::Wrapper,
            line: |r| {
                format!(
                    "<135>1 {} host rdkafka 4242 - - {}: {}: {}",
                    iso(r.t),
                    r.fac,
                    r.client,
                    r.msg
                )
            },
        },
        Style {
            name: "journalctl -o short-precise around raw",
            stamp: Stamp::Librdkafka,
            line: |r| {
                let (_, _, d, h, mi, s, _, us) = civil(r.t);
                format!(
                    "Mar {d:02} {h:02}:{mi:02}:{s:02}.{us:06} host app[99]: %7|{}|{}|{}| {}",
                    rdk_stamp(r.t),
                    r.fac,
                    r.client,
                    r.msg
                )
            },
        },
        Style {
            name: "docker logs --timestamps",
            stamp: Stamp::Librdkafka,
            line: |r| {
                format!(
                    "{} %7|{}|{}|{}| {}",
                    iso(r.t),
                    rdk_stamp(r.t),
                    r.fac,
                    r.client,
                    r.msg
                )
            },
        },
        Style {
            name: "docker json-file",
            stamp: Stamp::Librdkafka,
            line: |r| {
                format!(
                    r#"{{"log":"%7|{}|{}|{}| {}\n","stream":"stderr","time":"{}"}}"#,
                    rdk_stamp(r.t),
                    r.fac,
                    r.client,
                    json_escape(&r.msg),
                    iso(r.t)
                )
            },
        },
        Style {
            name: "kubernetes CRI around .NET",
            stamp: Stamp::Wrapper,
            line: |r| {
                format!(
                    "{} stderr F 7|{}|{}|{}| {}",
                    iso(r.t),
                    date_space(r.t, '.'),
                    r.client,
                    r.fac,
                    r.msg
                )
            },
        },
        Style {
            name: "Python logging",
            stamp: Stamp::Wrapper,
            line: |r| {
                format!(
                    "{} DEBUG kafka.client: {} [{}] {}",
                    date_space(r.t, ','),
                    r.fac,
                    r.client,
                    r.msg
                )
            },
        },
        Style {
            name: "Go LogEvent.String",
            stamp: Stamp::Wrapper,
            line: |r| {
                format!(
                    "[{} +0000 UTC][{}][{}][7]{}",
                    date_space(r.t, '.'),
                    r.client,
                    r.fac,
                    r.msg
                )
            },
        },
        Style {
            name: "Node util.inspect",
            stamp: Stamp::None,
            line: |r| format!("{{ severity: 7, fac: '{}', message: '{}' }}", r.fac, r.msg),
        },
        Style {
            name: "LOG-7-FAC:",
            stamp: Stamp::None,
            line: |r| format!("LOG-7-{}: {}", r.fac, r.msg),
        },
        Style {
            name: "RDKAFKA-7-FAC: client:",
            stamp: Stamp::None,
            line: |r| format!("RDKAFKA-7-{}: {}: {}", r.fac, r.client, r.msg),
        },
        Style {
            name: "strace -ttt of the stderr write",
            stamp: Stamp::Librdkafka,
            line: |r| {
                let raw = format!("%7|{}|{}|{}| {}", rdk_stamp(r.t), r.fac, r.client, r.msg);
                format!(
                    r#"4242  {:.6} write(2, "{}\n", {}) = {}"#,
                    r.t,
                    json_escape(&raw),
                    raw.len() + 1,
                    raw.len() + 1
                )
            },
        },
        Style {
            name: "glog C++ app logger",
            stamp: Stamp::Wrapper,
            line: |r| {
                let (_, mo, d, h, mi, s, _, us) = civil(r.t);
                format!("I{mo:02}{d:02} {h:02}:{mi:02}:{s:02}.{us:06} 4242 kafka_client.cc:88] {} {} {}", r.client, r.fac, r.msg)
            },
        },
        Style {
            name: "logfmt",
            stamp: Stamp::Wrapper,
            line: |r| {
                format!(
                    r#"time={} level=debug fac={} msg="{}""#,
                    iso(r.t),
                    r.fac,
                    json_escape(&r.msg)
                )
            },
        },
        Style {
            name: "Java-style app logger, time only",
            stamp: Stamp::Wrapper,
            line: |r| {
                let (_, _, _, h, mi, s, ms, _) = civil(r.t);
                format!(
                    "{h:02}:{mi:02}:{s:02}.{ms:03} [kafka-poll] DEBUG c.e.KafkaBridge - {} {}",
                    r.fac, r.msg
                )
            },
        },
    ]
}

/// Render records in a style, one line each, newline-terminated.
pub fn render(recs: &[Rec], style: &Style) -> String {
    let mut s = String::new();
    for r in recs {
        let _ = writeln!(s, "{}", (style.line)(r));
    }
    s
}

pub fn raw(recs: &[Rec]) -> String {
    render(recs, &styles()[0])
}
