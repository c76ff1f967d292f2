//! `jfr print --json` exports, streamed: the `recording.events` array is walked one
//! event at a time (serde visitors), so memory holds one event, not the export
//! (which is ~100x the recording: 105 MB for a 0.8 MB recording).

use std::fmt;
use std::io::Read;
use std::rc::Rc;

use serde::de::{DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use super::analysis::{frame_name, Aggregator, Jvm, SocketOp};

/// Stream the export into `agg`; returns the number of events read, or the
/// parser's complaint (with what was read before it still in `agg`).
pub(crate) fn feed_json<R: Read>(input: R, agg: &mut Aggregator) -> Result<u64, String> {
    let mut de = serde_json::Deserializer::from_reader(input);
    let mut n = 0u64;
    let mut sink = |ev: Value| {
        n += 1;
        feed_event(&ev, agg);
    };
    let r = Top(&mut sink)
        .deserialize(&mut de)
        .map_err(|e| e.to_string());
    r.map(|_| n).map_err(|e| format!("{e} (after {n} events)"))
}

struct Top<'a, F>(&'a mut F);
struct Recording<'a, F>(&'a mut F);
struct Events<'a, F>(&'a mut F);

impl<'de, F: FnMut(Value)> DeserializeSeed<'de> for Top<'_, F> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de, F: FnMut(Value)> Visitor<'de> for Top<'_, F> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a jfr print --json export: {\"recording\": {\"events\": [...]}}")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(k) = map.next_key::<String>()? {
            if k == "recording" {
                map.next_value_seed(Recording(&mut *self.0))?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(())
    }
}

impl<'de, F: FnMut(Value)> DeserializeSeed<'de> for Recording<'_, F> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de, F: FnMut(Value)> Visitor<'de> for Recording<'_, F> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("the recording object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(k) = map.next_key::<String>()? {
            if k == "events" {
                map.next_value_seed(Events(&mut *self.0))?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(())
    }
}

impl<'de, F: FnMut(Value)> DeserializeSeed<'de> for Events<'_, F> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de, F: FnMut(Value)> Visitor<'de> for Events<'_, F> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("the events array")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(ev) = seq.next_element::<Value>()? {
            (self.0)(ev);
        }
        Ok(())
    }
}

fn s<'a>(v: &'a Value, k: &str) -> &'a str {
    v.get(k).and_then(Value::as_str).unwrap_or("")
}

fn i(v: &Value, k: &str) -> i64 {
    v.get(k)
        .and_then(|x| x.as_i64().or_else(|| x.as_f64().map(|f| f as i64)))
        .unwrap_or(0)
}

fn f(v: &Value, k: &str) -> f64 {
    v.get(k).and_then(Value::as_f64).unwrap_or(0.0)
}

fn thread(v: &Value, k: &str) -> Rc<str> {
    let t = &v[k];
    let name = Some(s(t, "javaName"))
        .filter(|n| !n.is_empty())
        .unwrap_or(s(t, "osName"));
    Rc::from(if name.is_empty() { "?" } else { name })
}

fn class_name(v: &Value) -> Option<String> {
    v.get("name")
        .and_then(Value::as_str)
        .map(|n| n.replace('/', "."))
}

fn feed_event(ev: &Value, agg: &mut Aggregator) {
    let ty = s(ev, "type");
    agg.count(ty, 1, 0);
    let v = &ev["values"];
    let start = v
        .get("startTime")
        .and_then(Value::as_str)
        .and_then(parse_instant);
    let dur = v
        .get("duration")
        .and_then(Value::as_str)
        .and_then(parse_duration)
        .unwrap_or(0);
    if let Some(t) = start {
        agg.span(t, t.saturating_add(dur));
    }
    match ty {
        "jdk.ThreadCPULoad" => {
            agg.thread_cpu(&thread(v, "eventThread"), f(v, "user"), f(v, "system"))
        }
        "jdk.SocketRead" | "jdk.SocketWrite" => {
            let (op, field) = if ty == "jdk.SocketRead" {
                (SocketOp::Read, "bytesRead")
            } else {
                (SocketOp::Write, "bytesWritten")
            };
            let addr = Some(s(v, "address"))
                .filter(|a| !a.is_empty())
                .unwrap_or(s(v, "host"));
            agg.socket(
                op,
                &thread(v, "eventThread"),
                addr,
                i(v, "port"),
                i(v, field),
                start.unwrap_or(0),
                dur,
            );
        }
        "jdk.ExecutionSample" => {
            let frames: Vec<Rc<str>> = v["stackTrace"]["frames"]
                .as_array()
                .map(|fs| {
                    fs.iter()
                        .map(|fr| {
                            let m = &fr["method"];
                            frame_name(class_name(&m["type"]).as_deref(), s(m, "name"))
                        })
                        .collect()
                })
                .unwrap_or_default();
            agg.samples(&thread(v, "sampledThread"), &frames, 1);
        }
        "jdk.GarbageCollection" => {
            let d = |k: &str| {
                v.get(k)
                    .and_then(Value::as_str)
                    .and_then(parse_duration)
                    .unwrap_or(0)
            };
            agg.gc(
                s(v, "name"),
                s(v, "cause"),
                d("sumOfPauses"),
                d("longestPause"),
            );
        }
        "jdk.GCHeapSummary" => {
            let when = v["when"].as_str().or_else(|| v["when"]["when"].as_str());
            if when == Some("After GC") {
                agg.heap_after_gc(i(v, "heapUsed"), i(&v["heapSpace"], "committedSize"));
            }
        }
        "jdk.ObjectAllocationSample"
        | "jdk.ObjectAllocationInNewTLAB"
        | "jdk.ObjectAllocationOutsideTLAB" => {
            let class: Rc<str> =
                Rc::from(class_name(&v["objectClass"]).unwrap_or_else(|| "?".into()));
            let (source, weight) = match ty {
                "jdk.ObjectAllocationSample" => ("jdk.ObjectAllocationSample", i(v, "weight")),
                "jdk.ObjectAllocationInNewTLAB" => {
                    ("jdk.ObjectAllocationInNewTLAB", i(v, "tlabSize"))
                }
                _ => ("jdk.ObjectAllocationOutsideTLAB", i(v, "allocationSize")),
            };
            agg.alloc(source, &class, weight);
        }
        "jdk.JavaMonitorEnter" => {
            let class: Rc<str> =
                Rc::from(class_name(&v["monitorClass"]).unwrap_or_else(|| "?".into()));
            agg.monitor_enter(&class, dur);
        }
        "jdk.JVMInformation" => {
            agg.jvm = Some(Jvm {
                name: s(v, "jvmName").into(),
                version: s(v, "jvmVersion").into(),
                arguments: s(v, "jvmArguments").into(),
                java_arguments: s(v, "javaArguments").into(),
            })
        }
        "jdk.CPUInformation" => {
            let n = i(v, "hwThreads");
            if n > 0 {
                agg.hw_threads = Some(n as u64);
            }
        }
        _ => {}
    }
}

/// `2026-11-30T06:53:55.330150862Z` (or with a `+hh:mm` offset) → epoch ns.
pub(crate) fn parse_instant(t: &str) -> Option<i64> {
    let b = t.as_bytes();
    if b.len() < 19 || b[4] != b'-' || b[10] != b'T' {
        return None;
    }
    let num = |r: std::ops::Range<usize>| t.get(r)?.parse::<i64>().ok();
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, sec) = (num(11..13)?, num(14..16)?, num(17..19)?);
    let mut rest = &t[19..];
    let mut nanos = 0i64;
    if let Some(frac) = rest.strip_prefix('.') {
        let digits = frac.bytes().take_while(u8::is_ascii_digit).count();
        let mut scale = 100_000_000i64;
        for c in frac[..digits].bytes().take(9) {
            nanos += (c - b'0') as i64 * scale;
            scale /= 10;
        }
        rest = &frac[digits..];
    }
    let offset_s = match rest.as_bytes().first() {
        None | Some(b'Z') => 0,
        Some(&sign @ (b'+' | b'-')) => {
            let oh: i64 = rest.get(1..3)?.parse().ok()?;
            let om: i64 = rest.get(4..6).and_then(|m| m.parse().ok()).unwrap_or(0);
            let o = oh * 3600 + om * 60;
            if sign == b'+' {
                o
            } else {
                -o
            }
        }
        _ => return None,
    };
    // Howard Hinnant's days_from_civil.
    let y2 = if mo <= 2 { y - 1 } else { y };
    let era = y2.div_euclid(400);
    let yoe = y2 - era * 400;
    let mp = (mo + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let secs = days * 86400 + h * 3600 + mi * 60 + sec - offset_s;
    secs.checked_mul(1_000_000_000)?.checked_add(nanos)
}

/// ISO 8601 durations as `jfr print --json` writes them (`PT0.018065368S`,
/// `PT1M2.5S`, `PT2H`) → ns.
pub(crate) fn parse_duration(d: &str) -> Option<i64> {
    let body = d.strip_prefix("PT")?;
    let mut total = 0f64;
    let mut num = String::new();
    for c in body.chars() {
        match c {
            '0'..='9' | '.' | '-' => num.push(c),
            'H' | 'M' | 'S' => {
                let v: f64 = num.parse().ok()?;
                total += v * match c {
                    'H' => 3600.0,
                    'M' => 60.0,
                    _ => 1.0,
                };
                num.clear();
            }
            _ => return None,
        }
    }
    Some((total * 1e9).round() as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instants_and_durations_as_jfr_prints_them() {
        assert_eq!(parse_instant("1970-01-01T00:00:01.5Z"), Some(1_500_000_000));
        assert_eq!(
            parse_instant("2024-09-06T12:09:59.500000000Z"),
            Some(1_725_624_599_500_000_000)
        );
        assert_eq!(parse_instant("1970-01-01T01:00:00+01:00"), Some(0));
        assert_eq!(parse_instant("yesterday"), None);
        assert_eq!(parse_duration("PT0.018065368S"), Some(18_065_368));
        assert_eq!(parse_duration("PT1M2.5S"), Some(62_500_000_000));
        assert_eq!(parse_duration("2 s"), None);
    }

    #[test]
    fn an_export_cut_short_keeps_the_events_before_the_cut() {
        let text = r#"{"recording": {"events": [
            {"type": "jdk.SocketWrite", "values": {"startTime": "2026-01-01T00:00:00Z",
             "duration": "PT0.001S", "eventThread": {"javaName": "net"},
             "address": "127.0.0.1", "port": 9092, "bytesWritten": 1000}},
            {"type": "jdk.SocketWrite", "values": {"#;
        let mut agg = Aggregator::default();
        let r = feed_json(text.as_bytes(), &mut agg);
        assert!(r.is_err());
        assert_eq!(agg.counts["jdk.SocketWrite"].count, 1);
    }
}
