//! Every fixture against its expectation (EXPECTED.tsv: counts from jq at capture time,
//! diagnoses from what the capture was made to show), and figures recomputed here from the
//! raw JSON, a path that shares no code with the analyzer.

use serde_json::Value;

use crate::common::*;
use kgap_analyzers::stats::StatsReport;

#[test]
fn fixtures_match_expected_reports() {
    let table = std::fs::read_to_string(fixture("EXPECTED.tsv")).unwrap();
    let mut checked = 0;
    for line in table
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
    {
        let f: Vec<&str> = line.split('\t').collect();
        let [file, settings, series, emits, all_of, none_of] = f[..] else {
            panic!("bad EXPECTED.tsv line: {line}")
        };
        let settings: Vec<&str> = match settings {
            "-" | "" => vec![],
            s => s.split(',').collect(),
        };
        let r = analyze_file(file, &settings);
        let text = r.render_text();
        let ctx = format!("{file}:\n{text}");
        assert_eq!(
            r.input.statistics_objects,
            emits.parse::<u64>().unwrap(),
            "{ctx}"
        );
        assert_eq!(r.clients.len(), series.parse::<usize>().unwrap(), "{ctx}");
        assert_eq!(
            r.input.invalid_objects + r.input.truncated_objects + r.input.oversized_objects,
            0,
            "{ctx}"
        );
        let got = ids(&r);
        for want in all_of.split(',').filter(|s| !s.is_empty()) {
            assert!(
                got.contains(&want),
                "{file}: {want} missing from {got:?}\n{text}"
            );
        }
        for not in none_of.split(',').filter(|s| !s.is_empty()) {
            assert!(
                !got.contains(&not),
                "{file}: {not} present in {got:?}\n{text}"
            );
        }
        for l in text.lines() {
            assert!(
                l.chars().count() <= 100,
                "{file}: line over 100 columns: {l}"
            );
        }
        assert!(text.starts_with(&r.headline), "{ctx}");
        checked += 1;
    }
    assert!(checked >= 20, "EXPECTED.tsv lost rows: {checked}");
}

/// The objects of a plain capture, by serde_json alone.
fn raw(name: &str) -> Vec<Value> {
    std::fs::read_to_string(fixture(name))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The median as the report defines it: the value at rank round((n - 1) / 2).
fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[((v.len() - 1) as f64 / 2.0).round() as usize]
}

fn broker<'a>(e: &'a Value, name: &str) -> &'a Value {
    &e["brokers"][name]
}

#[test]
fn rates_and_request_sizes_agree_with_a_recomputation_from_the_raw_json() {
    let name = "kafka431-producer-ceiling-16k.jsonl";
    let emits = raw(name);
    let b = "127.0.0.1:9092/1";
    let mut rates = Vec::new();
    let mut sizes = Vec::new();
    for w in emits.windows(2) {
        let dt = (w[1]["ts"].as_i64().unwrap() - w[0]["ts"].as_i64().unwrap()) as f64 / 1e6;
        let req = |e: &Value| broker(e, b)["req"]["Produce"].as_f64().unwrap();
        let tx = |e: &Value| broker(e, b)["txbytes"].as_f64().unwrap();
        let n = req(&w[1]) - req(&w[0]);
        rates.push(n / dt);
        if n > 0.0 {
            sizes.push((tx(&w[1]) - tx(&w[0])) / n);
        }
    }
    let r = analyze_file(name, &["batch.size=16384"]);
    let c = &r.clients[0];
    let br = c.brokers.iter().find(|x| x.name == b).unwrap();
    let got = br.produce_requests_per_s.unwrap();
    assert_eq!(got.n as usize, rates.len());
    let want = median(rates.clone());
    assert!(
        (got.p50 - want).abs() <= want * 0.001 + 1.0,
        "{got:?} vs {want}"
    );
    let max = rates.iter().cloned().fold(0.0, f64::max);
    assert!((got.max - max).abs() <= max * 0.001 + 1.0);
    let bytes = br.bytes_per_produce_request.unwrap();
    let want = median(sizes);
    assert!(
        (bytes.p50 - want).abs() <= want * 0.001 + 1.0,
        "{bytes:?} vs {want}"
    );
    // One broker: the aggregate is that broker.
    assert_eq!(c.total.produce_requests_per_s.unwrap().p50, got.p50);
    // The ceiling's evidence names the connection.
    let d = r
        .diagnoses
        .iter()
        .find(|d| d.id == "per-request-ceiling")
        .unwrap();
    assert_eq!(d.brokers, vec![b.to_string()]);
    assert_eq!(d.finding, Some("request-ceiling"));
}

#[test]
fn lag_and_fetch_queues_agree_with_a_recomputation() {
    let name = "kafka431-consumer-slow-app-lag.jsonl";
    let emits = raw(name);
    let consumer: Vec<&Value> = emits.iter().filter(|e| e["type"] == "consumer").collect();
    let lag = |e: &Value| -> f64 {
        partitions(e)
            .filter_map(|p| p["consumer_lag_stored"].as_i64().filter(|&l| l >= 0))
            .sum::<i64>() as f64
    };
    let r = analyze_file(name, &["queued.min.messages=2000"]);
    let c = r
        .clients
        .iter()
        .find(|c| c.client_type.as_deref() == Some("consumer"))
        .unwrap();
    let k = c.consumer.as_ref().unwrap();
    assert_eq!(k.lag_field, "consumer_lag_stored");
    let l = k.lag_messages.unwrap();
    assert_eq!(l.summary.last, lag(consumer.last().unwrap()));
    assert_eq!(l.summary.n as usize, consumer.len());
    assert!(l.trend_per_s.unwrap() > 0.0);
    let d = r
        .diagnoses
        .iter()
        .find(|d| d.id == "consumer-lag-growing")
        .unwrap();
    assert!(!d.partitions.is_empty());
    // Every partition of a group consumer reports the one queue they all forward to
    // (librdkafka's rd_kafka_q_len follows the forward; replyq is that queue too): the
    // client's fetch queue is that queue once, not once a partition (3 × 16094 at the end).
    let queue = |e: &Value| -> f64 {
        partitions(e)
            .filter_map(|p| p["fetchq_cnt"].as_f64())
            .fold(0.0, f64::max)
    };
    let q = k.fetch_queue_messages.unwrap();
    assert_eq!(q.summary.last, queue(consumer.last().unwrap()));
    assert_eq!(q.summary.last, 16094.0);
    assert_eq!(
        q.summary.max,
        consumer.iter().map(|e| queue(e)).fold(0.0, f64::max)
    );
}

/// A consumer emit's partitions (not the internal -1).
fn partitions(e: &Value) -> impl Iterator<Item = &Value> {
    e["topics"]
        .as_object()
        .unwrap()
        .values()
        .flat_map(|t| t["partitions"].as_object().unwrap().values())
        .filter(|p| p["partition"].as_i64().unwrap() >= 0)
}

#[test]
fn an_application_that_stops_polling_is_named_and_a_polling_one_never() {
    // The throttled capture's consumer was not polled while the producer flushed at the end
    // (capture.py flushes before it closes the consumer): fetched messages sat in the queue
    // and app_offset stood still. The intervals recomputed from the raw JSON: ≥ 1000
    // messages between app_offset and next_offset at both ends, app_offset unchanged.
    let name = "kafka431-consumer-throttled-lag.jsonl";
    let emits = raw(name);
    let consumer: Vec<&Value> = emits.iter().filter(|e| e["type"] == "consumer").collect();
    let offsets = |e: &Value| -> (i64, Vec<i64>) {
        let (mut waiting, mut apps) = (0, vec![]);
        for p in partitions(e) {
            let (app, next) = (
                p["app_offset"].as_i64().unwrap(),
                p["next_offset"].as_i64().unwrap(),
            );
            if app >= 0 {
                waiting += next - app;
            }
            apps.push(app);
        }
        (waiting, apps)
    };
    let stalled = consumer
        .windows(2)
        .filter(|w| {
            let ((a, apps_a), (b, apps_b)) = (offsets(w[0]), offsets(w[1]));
            a >= 1000 && b >= 1000 && apps_a == apps_b
        })
        .count();
    assert_eq!(stalled, 6);
    let r = analyze_file(name, &[]);
    let d = r
        .diagnoses
        .iter()
        .find(|d| d.id == "app-not-polling")
        .expect("app-not-polling");
    assert_eq!(d.intervals_held as usize, stalled, "{}", d.title);
    assert_eq!(d.evidence["messages_waiting"]["max"], 4830.0);
    // Consumers that poll, fast or slowly (the slow application takes 0.5 ms a message).
    for (file, settings) in [
        ("kafka431-consumer-backoff-1000ms.jsonl", vec![]),
        (
            "kafka431-consumer-backoff-10ms.jsonl",
            vec!["fetch.queue.backoff.ms=10"],
        ),
        (
            "librdkafka-1.9.2-consumer.jsonl",
            vec!["queued.min.messages=1000000"],
        ),
        (
            "kafka431-consumer-slow-app-lag.jsonl",
            vec!["queued.min.messages=2000"],
        ),
    ] {
        let got = ids(&analyze_file(file, &settings));
        assert!(!got.contains(&"app-not-polling"), "{file}: {got:?}");
    }
    // librdkafka's own witness: the group rebalanced for "max.poll.interval.ms exceeded"
    // (rdkafka_cgrp.c's reason) in the 1.9.2 capture's group, whose reason was otherwise
    // "Metadata for subscribed topic(s) has changed".
    let text = std::fs::read_to_string(fixture("librdkafka-1.9.2-consumer.jsonl")).unwrap();
    let reason = "\"rebalance_reason\": \"Metadata for subscribed topic(s) has changed\"";
    assert!(text.contains(reason));
    let r = analyze(
        text.replace(
            reason,
            "\"rebalance_reason\": \"max.poll.interval.ms exceeded\"",
        )
        .as_bytes(),
    );
    let d = r.diagnoses.iter().find(|d| d.id == "app-not-polling");
    assert!(
        d.is_some_and(|d| d.title.contains("max.poll.interval.ms")),
        "{:?}",
        ids(&r)
    );
    // One emit of the stall alone: the application had taken 4793 of the 9623 messages
    // fetched, half; one emit cannot tell an application that stopped from a slow one.
    let text = std::fs::read_to_string(fixture(name)).unwrap();
    let line = text.lines().nth(96).unwrap();
    assert!(!ids(&analyze(line.as_bytes())).contains(&"app-not-polling"));
}

#[test]
fn a_restart_starts_a_new_series_and_says_why() {
    let r = analyze_file("two-clients-restart.jsonl", &[]);
    let mut names: Vec<&str> = r.clients.iter().map(|c| c.name.as_str()).collect();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), 2, "{names:?}");
    let second: Vec<_> = r.clients.iter().filter(|c| c.series == 2).collect();
    assert_eq!(second.len(), 2);
    for c in second {
        let why = c.started_because.as_deref().unwrap();
        assert!(why.contains("age") || why.contains("counters"), "{why}");
        assert!(r
            .warnings
            .iter()
            .any(|w| w.contains(&c.name) && w.contains("new series")));
    }
}

#[test]
fn older_librdkafka_versions_read_with_what_they_have() {
    let r = analyze_file("librdkafka-1.4.4-producer.jsonl", &[]);
    let c = &r.clients[0];
    assert!(
        c.version_hint.starts_with("1.0 to 1.4"),
        "{}",
        c.version_hint
    );
    // No `age` before 1.5: the defaults of that era apply (linger.ms 0.5).
    assert_eq!(r.config.linger_ms.value, 0.5);
    assert!(c.producer.as_ref().unwrap().messages_per_s.is_some());
    let r = analyze_file("librdkafka-1.9.2-producer.jsonl", &[]);
    assert!(r.clients[0].version_hint.starts_with("1.8 to 2.0"));
    assert_eq!(r.config.linger_ms.value, 5.0);
    let r = analyze_file("librdkafka-1.9.2-consumer.jsonl", &[]);
    let k = r.clients[0].consumer.as_ref().unwrap();
    assert!(k.messages_per_s.is_some());
    assert_ne!(k.lag_field, "none");
}

#[test]
fn per_connection_figures_sit_beside_the_aggregate() {
    let r = analyze_file("kafka431-consumer-backoff-1000ms.jsonl", &[]);
    let c = &r.clients[0];
    assert_eq!(c.total.name, "*");
    // The learned broker and the group coordinator's own connection.
    assert!(c
        .brokers
        .iter()
        .any(|b| b.source.as_deref() == Some("learned")));
    assert!(c.brokers.iter().any(|b| b.name == "GroupCoordinator"));
    let fetch: f64 = c
        .brokers
        .iter()
        .filter_map(|b| b.fetch_requests_per_s.map(|s| s.mean * s.n as f64))
        .sum();
    let total = c.total.fetch_requests_per_s.unwrap();
    assert!((total.mean * total.n as f64 - fetch).abs() < 1.0);
}

#[test]
fn the_shared_diagnosis_form_carries_the_evidence() {
    let r = analyze_file(
        "kafka431-producer-linger0-window-default.jsonl",
        &["linger.ms=0"],
    );
    let d = r
        .diagnoses
        .iter()
        .find(|d| d.id == "inflight-queueing")
        .unwrap();
    let shared = d.to_diagnosis();
    assert_eq!(shared.id, "inflight-queueing");
    assert!(shared.evidence["waitresp_cnt_p50"].as_f64().unwrap() >= 10.0);
    assert_eq!(shared.evidence["client"], d.client.as_str());
    assert!(!shared.examples.is_empty());
}

/// A consumer's own first join and final leave are not the group rebalancing: librdkafka's
/// rebalance_cnt counts each assign and revoke. From a real capture (a group consumer whose
/// first emits show the join, rebalance_cnt 0 → 1 with its assignment 0 → 3), with the
/// leave and then two rebalances mid-run added here to its counters.
#[test]
fn a_consumers_join_and_leave_are_not_rebalances_but_two_more_are() {
    let emits: Vec<Value> = raw("kafka431-consumer-throttled-lag.jsonl")
        .into_iter()
        .filter(|e| e["type"] == "consumer")
        .collect();
    assert!(emits.len() > 10);
    let to_bytes = |v: &[Value]| -> Vec<u8> {
        v.iter()
            .map(|e| format!("{e}\n"))
            .collect::<String>()
            .into_bytes()
    };
    let rebalancing = |r: &StatsReport| ids(r).contains(&"consumer-rebalances");
    assert!(!rebalancing(&analyze(&to_bytes(&emits))), "the join alone");
    // The leave at the end: one more revoke, nothing assigned.
    let mut left = emits.clone();
    let mut last = left.last().unwrap().clone();
    last["ts"] = Value::from(last["ts"].as_i64().unwrap() + 1_000_000);
    last["time"] = Value::from(last["time"].as_i64().unwrap() + 1);
    last["cgrp"]["rebalance_cnt"] =
        Value::from(last["cgrp"]["rebalance_cnt"].as_i64().unwrap() + 1);
    last["cgrp"]["assignment_size"] = Value::from(0);
    left.push(last);
    assert!(!rebalancing(&analyze(&to_bytes(&left))), "join and leave");
    // A revoke and an assign mid-run, twice: the group rebalanced while it consumed.
    let mut churn = emits.clone();
    let half = churn.len() / 2;
    for (i, e) in churn.iter_mut().enumerate().skip(half) {
        let bump = if i < half + 3 { 2 } else { 4 };
        e["cgrp"]["rebalance_cnt"] =
            Value::from(e["cgrp"]["rebalance_cnt"].as_i64().unwrap() + bump);
    }
    let r = analyze(&to_bytes(&churn));
    assert!(rebalancing(&r), "{:?}", ids(&r));
}

/// An episode shorter than half the capture is named, not dropped. The default window's real
/// capture (requests queueing in flight in most intervals), with every connection's
/// waitresp_cnt set to 0 here from its fourth emit on, as if the queue had drained:
/// inflight-queueing no longer holds in half the intervals, and short-episode names the
/// intervals where it did, with their figures; it files no finding.
#[test]
fn an_episode_shorter_than_half_the_capture_is_named() {
    let name = "kafka431-producer-linger0-window-default.jsonl";
    let whole = analyze_file(name, &["linger.ms=0"]);
    assert!(
        ids(&whole).contains(&"inflight-queueing"),
        "{:?}",
        ids(&whole)
    );
    assert!(!ids(&whole).contains(&"short-episode"), "{:?}", ids(&whole));
    let mut emits = raw(name);
    assert!(emits.len() >= 8, "{}", emits.len());
    for e in emits.iter_mut().skip(3) {
        for b in e["brokers"].as_object_mut().unwrap().values_mut() {
            b["waitresp_cnt"] = Value::from(0);
        }
    }
    let bytes: Vec<u8> = emits
        .iter()
        .flat_map(|e| format!("{e}\n").into_bytes())
        .collect();
    let r = kgap_analyzers::stats::analyze_stats(&bytes[..], &options(&["linger.ms=0"])).unwrap();
    assert!(!ids(&r).contains(&"inflight-queueing"), "{:?}", ids(&r));
    let d = r
        .diagnoses
        .iter()
        .find(|d| d.id == "short-episode")
        .unwrap_or_else(|| panic!("no short-episode: {:?}", ids(&r)));
    assert_eq!(d.evidence["rule"], "inflight-queueing");
    assert!(d.intervals_held >= 1 && 2 * d.intervals_held < d.intervals_considered);
    assert!(d.title.contains("requests waiting"), "{}", d.title);
    assert!(d.finding.is_none());
}
