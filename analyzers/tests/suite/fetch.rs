//! analyze-fetch-log's numbers and diagnoses on constructed logs.

use kgap_analyzers::fetch_log::{analyze_fetch_log, FetchLogOptions, FetchLogReport};

use crate::common::*;

fn analyze(log: &str) -> FetchLogReport {
    analyze_fetch_log(log.as_bytes(), &FetchLogOptions::default()).unwrap()
}

#[test]
fn default_backoff_is_diagnosed_with_the_share_of_the_window() {
    let r = analyze(&raw(&fetch_backoff_log(6, 10, 1000)));
    assert_eq!(r.partitions.len(), 6);
    for p in &r.partitions {
        assert_eq!(p.queue_full_backoffs, 10);
        assert_eq!(p.queue_backoff_ms, Some(1000));
        assert_eq!(p.decide.queued_min_messages_exceeded, 10);
        assert_eq!(p.messages_enqueued, 1_000_000);
        // Each 1.05 s cycle sleeps 1 s after 30 ms of fetching.
        let f = p.backoff_fraction.unwrap();
        assert!((0.90..=0.97).contains(&f), "{f}");
    }
    let d = &r.diagnoses[0];
    assert_eq!(d.id, "fetch-queue-backoff");
    assert!(
        d.cause.contains("queued.min.messages (100000 messages)"),
        "{}",
        d.cause
    );
    assert!(d.cause.contains("1000 ms"), "{}", d.cause);
    assert!(d.fix.starts_with("lower fetch.queue.backoff.ms (10)"));
    assert_eq!(d.evidence["fetch_queue_backoff_ms"], 1000);
    // Two backoff lines and one fetch-decide line as evidence.
    assert_eq!(d.examples.len(), 3);
    assert!(d.examples[0]
        .text
        .contains("Fetch backoff for 1000ms: Local: Queue full"));
    assert!(d.examples[2].text.contains("queued.min.messages exceeded"));
    // The broker-level idle waits are not partition backoffs.
    assert_eq!(r.fetchers[0].idle_waits, 10);
}

#[test]
fn a_10ms_backoff_is_not_a_gap() {
    let r = analyze(&raw(&fetch_backoff_log(6, 50, 10)));
    assert!(r.partitions[0].backoff_fraction.unwrap() < 0.2);
    assert!(
        r.diagnoses.iter().all(|d| d.id != "fetch-queue-backoff") || {
            // 10 ms of 60 ms cycles is 17%: the diagnosis may appear but must then name 10 ms.
            r.diagnoses[0].evidence["fetch_queue_backoff_ms"] == 10
        }
    );
}

#[test]
fn fetch_errors_are_their_own_diagnosis() {
    let b = "kafka-1:9092/1";
    let c = "rdkafka#consumer-1";
    let recs = vec![
        broker_rec(
            T0,
            "BACKOFF",
            c,
            b,
            "Fetch backoff for 500ms: Broker: Not leader for partition",
        ),
        broker_rec(
            T0 + 1.0,
            "BACKOFF",
            c,
            b,
            "bench [2]: Fetch backoff for 500ms: Broker: Offset out of range",
        ),
    ];
    let r = analyze(&raw(&recs));
    let ids: Vec<_> = r.diagnoses.iter().map(|d| d.id.as_str()).collect();
    assert_eq!(ids, vec!["fetch-error-backoff"]);
    assert_eq!(
        r.fetchers[0].error_reasons[0].reason,
        "Broker: Not leader for partition"
    );
    assert_eq!(r.partitions[0].error_backoffs, 1);
}

#[test]
fn protocol_lines_in_a_fetch_log_give_fetch_rtt() {
    let b = "kafka-1:9092/1";
    let c = "rdkafka#consumer-1";
    let recs = vec![
        broker_rec(T0, "FETCH", c, b, "Fetch 1/1/1 toppar(s)"),
        broker_rec(
            T0,
            "SEND",
            c,
            b,
            "Sent FetchRequest (v11, 100 bytes @ 0, CorrId 3)",
        ),
        broker_rec(
            T0 + 0.5,
            "RECV",
            c,
            b,
            "Received FetchResponse (v11, 90 bytes, CorrId 3, rtt 500.40ms)",
        ),
        broker_rec(
            T0 + 0.5,
            "FETCH",
            c,
            b,
            r#"Topic t [0] MessageSet size 0, error "Success", MaxOffset 5, LSO 5, Ver 2/2"#,
        ),
    ];
    let r = analyze(&raw(&recs));
    let f = &r.fetchers[0];
    assert_eq!(
        (f.responses, f.empty_responses, f.empty_held_to_wait_max),
        (1, 1, 1)
    );
    assert!((f.rtt_ms_max.unwrap() - 500.4).abs() < 0.5);
    assert_eq!(r.requests[0].request, "Fetch");
}
