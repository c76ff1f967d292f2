//! A client of a 3-broker cluster (fixtures/stats/kafka431-3brokers-*: probe-request-ceiling
//! on `scripts/kafka up --nodes 3`, 6 partitions spread two per broker; capture.sh cluster):
//! the report compares its connections, and a broker stopped mid-run (SIGSTOP for 4 s) is
//! named while the other two answer. Figures are recomputed from the raw JSON here.

use serde_json::Value;

use crate::common::*;

/// Produce requests per learned broker between the first and the last emit, from the raw
/// lines (no analyzer code).
fn produce_requests(file: &str) -> Vec<(String, f64)> {
    let text = std::fs::read_to_string(fixture(file)).unwrap();
    let emits: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let (a, z) = (&emits[0], emits.last().unwrap());
    let mut out = Vec::new();
    for (k, b) in z["brokers"].as_object().unwrap() {
        if b["nodeid"].as_i64().unwrap() < 0 {
            continue;
        }
        let n = |e: &Value| e["brokers"][k]["req"]["Produce"].as_f64().unwrap_or(0.0);
        out.push((b["name"].as_str().unwrap().to_string(), n(z) - n(a)));
    }
    out
}

#[test]
fn three_connections_are_reported_and_compared() {
    let file = "kafka431-3brokers-producer-ceiling-16k.jsonl";
    let r = analyze_file(file, &["batch.size=16384"]);
    let c = &r.clients[0];
    let raw = produce_requests(file);
    assert_eq!(raw.len(), 3, "{raw:?}");
    for (name, n) in &raw {
        assert!(*n > 0.0, "{name} carried no ProduceRequest");
        assert!(
            c.brokers.iter().any(|b| &b.name == name),
            "{name} not reported"
        );
    }
    let k = c
        .connections
        .as_ref()
        .expect("three connections carried requests");
    assert_eq!(k.carrying_requests, 3);
    let busiest = k.busiest.as_ref().unwrap();
    assert!(raw.iter().any(|(n, _)| n == &busiest.broker));
    // The busiest's share is a third or more of all requests, never the whole.
    let share = busiest.share.unwrap();
    assert!((0.33..1.0).contains(&share), "{share}");
    let text = r.render_text();
    assert!(
        text.contains("connections (3 carrying requests): busiest "),
        "{text}"
    );
    // The aggregate row stays beside the brokers: its req/s is their sum.
    let total = c.total.produce_requests_per_s.as_ref().unwrap().p50;
    let sum: f64 = c
        .brokers
        .iter()
        .filter_map(|b| b.produce_requests_per_s.as_ref().map(|s| s.p50))
        .sum();
    assert!((total - sum).abs() <= 0.1 * total, "{total} against {sum}");
    assert!(!ids(&r).contains(&"broker-silent"), "{:?}", ids(&r));
}

#[test]
fn a_broker_stopped_mid_run_is_named_and_the_others_answered() {
    let r = analyze_file(
        "kafka431-3brokers-producer-node2-stopped.jsonl",
        &["batch.size=16384"],
    );
    let d = r
        .diagnoses
        .iter()
        .find(|d| d.id == "broker-silent")
        .unwrap_or_else(|| panic!("no broker-silent in {:?}", ids(&r)));
    assert_eq!(d.brokers, ["127.0.0.1:9410/2"], "{d:#?}");
    assert!(d.title.contains("127.0.0.1:9410/2 ("), "{}", d.title);
    assert!(
        d.title
            .contains("127.0.0.1:9400/1, 127.0.0.1:9420/3 answered")
            || d.title
                .contains("127.0.0.1:9420/3, 127.0.0.1:9400/1 answered"),
        "{}",
        d.title
    );
    // Stopped for 4 s with 1 s emits: two to four whole intervals without a response.
    assert!((2..=4).contains(&d.intervals_held), "{}", d.intervals_held);
}
