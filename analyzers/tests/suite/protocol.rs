//! analyze-protocol-log's numbers and diagnoses on constructed logs.

use kgap_analyzers::protocol_log::{analyze_protocol_log, ProtocolLogOptions, ProtocolLogReport};

use crate::common::*;

fn analyze(log: &str) -> ProtocolLogReport {
    analyze_protocol_log(log.as_bytes(), &ProtocolLogOptions::default()).unwrap()
}

fn ids(r: &ProtocolLogReport) -> Vec<&str> {
    r.diagnoses.iter().map(|d| d.id.as_str()).collect()
}

#[test]
fn per_request_ceiling_is_found_with_the_posts_numbers() {
    // The post: 15.6 KB requests at ~15.4k req/s ≈ 65 µs per request.
    let r = analyze(&raw(&ceiling_log(5, 15_400, 15_621)));
    let p = r.requests.iter().find(|q| q.request == "Produce").unwrap();
    assert_eq!(p.count, 5 * 15_400);
    assert_eq!(p.responses, p.count);
    assert_eq!(p.unknown_corr_ids, 0);
    let bytes_p50 = p.bytes_p50.unwrap();
    assert!((15_610..=15_630).contains(&bytes_p50), "{bytes_p50}");
    // Millisecond stamps move a few requests at each second's edge into the next.
    let rate = p.rate.as_ref().unwrap();
    assert!((rate.per_s_mean - 15_400.0).abs() < 10.0, "{rate:?}");
    assert_eq!(ids(&r), vec!["per-request-ceiling"]);
    let d = &r.diagnoses[0];
    assert!(d.cause.contains("15400 req/s of"), "{}", d.cause);
    assert!(d.cause.contains("≈ 65 µs per request"), "{}", d.cause);
    assert!(d.fix.contains("batch.size"));
    assert_eq!(d.examples.len(), 3);
    assert_eq!(d.evidence["messages_per_request_p50"], 15);
    let mpr = r.messages_per_request.as_ref().unwrap();
    assert_eq!(mpr.p50, 15);
}

#[test]
fn big_batches_are_not_a_per_request_ceiling() {
    // 1 MB requests: librdkafka's default, the fix for the ceiling.
    let r = analyze(&raw(&ceiling_log(5, 300, 1_000_000)));
    assert!(ids(&r).is_empty(), "{:?}", ids(&r));
}

#[test]
fn a_slow_steady_producer_is_not_a_per_request_ceiling() {
    // Small full requests but only 200/s: the application, not the broker, sets the pace.
    let r = analyze(&raw(&ceiling_log(5, 200, 15_621)));
    assert!(!ids(&r).contains(&"per-request-ceiling"));
}

#[test]
fn inflight_queueing_is_found_with_an_unbounded_window() {
    let r = analyze(&raw(&inflight_log(3, 0)));
    assert!(ids(&r).contains(&"inflight-queueing"), "{:?}", ids(&r));
    let shape = &r.produce[0];
    assert!(shape.inflight_at_send_mean.unwrap() > 5.0);
    assert!(shape.rtt_depth_correlation.unwrap() > 0.9);
    let d = r
        .diagnoses
        .iter()
        .find(|d| d.id == "inflight-queueing")
        .unwrap();
    assert!(d.fix.contains("max.in.flight.requests.per.connection"));
    // The evidence lines are the slowest responses.
    assert!(d.examples[0].text.contains("Received ProduceResponse"));
}

#[test]
fn a_window_of_five_is_not_inflight_queueing() {
    let r = analyze(&raw(&inflight_log(3, 5)));
    assert!(!ids(&r).contains(&"inflight-queueing"), "{:?}", ids(&r));
    assert!(r.connections[0].inflight_max <= 5);
}

#[test]
fn timeouts_name_the_request_that_held_the_line() {
    let r = analyze(&raw(&timeout_log()));
    assert_eq!(ids(&r), vec!["request-timeouts"]);
    assert_eq!(r.timeouts.requests_timed_out, 1);
    assert_eq!(r.timeouts.held_back_by[0].name, "JoinGroup");
    assert_eq!(r.timeouts.after_ms_max, Some(60000));
    let d = &r.diagnoses[0];
    assert!(
        d.cause
            .contains("held back by a preceding JoinGroupRequest"),
        "{}",
        d.cause
    );
    // The timed-out request left the in-flight set; the JoinGroup is still there.
    let oc = r
        .requests
        .iter()
        .find(|q| q.request == "OffsetCommit")
        .unwrap();
    assert_eq!(oc.timeouts, 1);
}

#[test]
fn partial_sends_are_one_request() {
    let b = "kafka-1:9092/1";
    let c = "rdkafka#producer-1";
    let recs = vec![
        broker_rec(
            T0,
            "SEND",
            c,
            b,
            "Sent partial ProduceRequest (v10, 0+212992/1048600 bytes, CorrId 5)",
        ),
        broker_rec(
            T0,
            "SEND",
            c,
            b,
            "Sent partial ProduceRequest (v10, 212992+524288/1048600 bytes, CorrId 5)",
        ),
        broker_rec(
            T0 + 0.001,
            "SEND",
            c,
            b,
            "Sent ProduceRequest (v10, 1048600 bytes @ 737280, CorrId 5)",
        ),
        broker_rec(
            T0 + 0.004,
            "RECV",
            c,
            b,
            "Received ProduceResponse (v10, 62 bytes, CorrId 5, rtt 3.10ms)",
        ),
    ];
    let r = analyze(&raw(&recs));
    let p = &r.requests[0];
    assert_eq!(
        (p.count, p.partial_chunks, p.bytes_total),
        (1, 2, 1_048_600)
    );
}

#[test]
fn old_librdkafka_lines_without_version_are_read() {
    let log = "\
%7|1517292470.035|SEND|rdkafka#producer-1| 10.0.0.1:9092/0: Sent ProduceRequest (1142073 bytes, CorrId 6)
%7|1517292470.045|RECV|rdkafka#producer-1| 10.0.0.1:9092/0: Received ProduceResponse (48 bytes, CorrId 6, rtt 10.12ms)
%7|1517292470.046|RETRY|rdkafka#producer-1| 10.0.0.1:9092/0: Retrying MetadataRequest (v0, 40 bytes, retry 1/2)
";
    let r = analyze(log);
    let p = &r.requests[0];
    assert_eq!(
        (p.broker.as_str(), p.count, p.bytes_total),
        ("10.0.0.1:9092/0", 1, 1_142_073)
    );
    assert_eq!(p.rtt_ms_max.map(|v| (v * 100.0).round()), Some(1012.0));
    assert_eq!(r.requests[1].retries, 1);
}

#[test]
fn interleaved_clients_and_brokers_are_kept_apart() {
    // Two producers on two brokers, lines interleaved as concurrent threads write them.
    let mut a = ceiling_log(1, 50, 1000);
    let mut b = ceiling_log(1, 50, 1000);
    for r in &mut b {
        r.client = "rdkafka#producer-2".into();
        r.msg = r.msg.replace("kafka-1:9092/1", "kafka-2:9092/2");
    }
    a.extend(b);
    a.sort_by(|x, y| x.t.total_cmp(&y.t));
    let r = analyze(&raw(&a));
    let produce: Vec<_> = r
        .requests
        .iter()
        .filter(|q| q.request == "Produce")
        .collect();
    assert_eq!(produce.len(), 2);
    for p in produce {
        assert_eq!((p.count, p.responses, p.unknown_corr_ids), (50, 50, 0));
    }
}

#[test]
fn timeline_has_one_row_per_second() {
    let mut csv = Vec::new();
    let report = kgap_analyzers::protocol_log::analyze_protocol_log_with_timeline(
        raw(&ceiling_log(3, 100, 15_621)).as_bytes(),
        &ProtocolLogOptions::default(),
        &mut csv,
    )
    .unwrap();
    assert!(report.is_usable());
    let text = String::from_utf8(csv).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[0].starts_with("second,requests,request_bytes,produce_requests"),
        "{}",
        lines[0]
    );
    assert_eq!(lines.len(), 1 + 3);
    let row: Vec<&str> = lines[1].split(',').collect();
    assert_eq!(row[0], format!("{}", T0 as i64));
    assert_eq!(row[3], "100");
}
