//! Real pastes (fixtures/pastes/stats, SOURCES.tsv says where each comes from): statistics
//! cut by the paste, after a prefix that has braces of its own, escaped in another line.

use kgap_analyzers::stats::{analyze_stats, StatsOptions, StatsReport};

use super::common::{ids, root};

fn paste(name: &str) -> StatsReport {
    let f = std::fs::File::open(root().join("fixtures/pastes/stats").join(name)).unwrap();
    analyze_stats(f, &StatsOptions::default()).unwrap()
}

#[test]
fn a_cut_emit_is_read_to_its_last_whole_broker() {
    // Cut inside its second broker: the bootstrap broker is whole, the queue is full.
    let r = paste("013-dotnet81-producer-queue-full-pretty.json");
    assert!(r.is_usable());
    assert_eq!(r.input.cut_objects_read, 1);
    assert_eq!(r.input.truncated_objects, 0);
    assert_eq!(ids(&r), ["producer-backlog"]);
    assert_eq!(
        r.clients[0].brokers.len(),
        1,
        "the broker the cut reached is not read"
    );
    assert!(r
        .warnings
        .iter()
        .any(|w| w.contains("what the cut hid is not judged")));
    // A log prefix, then a consumer cut in its second broker: read, nothing to say.
    let r = paste("003-lua-sandbox192-consumer-log-prefix.log");
    assert_eq!(r.input.cut_objects_read, 1);
    assert!(ids(&r).is_empty(), "{:?}", ids(&r));
}

#[test]
fn a_cut_before_the_first_whole_broker_is_too_little() {
    for name in [
        "027-librdkafka3590-producer-bootstrap-init-txidle-max.json",
        "023-confluent-kafka-python831-consumer-backtick-elided-replyq.json",
        // Escaped in a Prometheus label: refused as cut statistics, not as "no statistics".
        "007-vector5874-prometheus-label-escaped-json.log",
    ] {
        let r = paste(name);
        assert!(!r.is_usable(), "{name}");
        assert_eq!(r.input.truncated_objects, 1, "{name}");
    }
}

#[test]
fn an_emit_after_a_prefix_with_braces_is_read_where_it_starts() {
    // `data = {offset : N||value : ip#{ "name": …`: the object starts at its first key.
    let r = paste("019-librdkafka361-stats-relayed-through-kafka-consumer-log.log");
    assert!(r.is_usable());
    assert_eq!(r.clients[0].name, "rdkafka#producer-0");
    assert!(ids(&r).is_empty(), "{:?}", ids(&r));
}

#[test]
fn an_escaped_emit_is_unescaped_once() {
    // Vector's Prometheus label holding the emit as an escaped string, here made whole (the
    // paste is cut inside its first broker: too little, see above).
    let line = std::fs::read_to_string(
        root().join("fixtures/pastes/stats/007-vector5874-prometheus-label-escaped-json.log"),
    )
    .unwrap();
    let cut = line.rfind(",\\\"outbuf_l").unwrap();
    let whole = format!("{}}}}}}}\"}} 1\n", &line[..cut]);
    let r = analyze_stats(whole.as_bytes(), &StatsOptions::default()).unwrap();
    assert!(r.is_usable(), "{:?}", r.input);
    assert_eq!(r.input.wrapped_objects, 1);
    assert_eq!(r.clients[0].name, "vector#consumer-1");
    assert!(ids(&r).is_empty());
    let r = analyze_stats(line.as_bytes(), &StatsOptions::default()).unwrap();
    assert!(!r.is_usable());
}

/// The probes' own statistics (fixtures/librdkafka/*/stats.jsonl) name the probe's finding.
#[test]
fn the_probes_statistics_name_their_findings() {
    let probe = |dir: &str| {
        let f = std::fs::File::open(
            root()
                .join("fixtures/librdkafka")
                .join(dir)
                .join("stats.jsonl"),
        )
        .unwrap();
        analyze_stats(f, &StatsOptions::default()).unwrap()
    };
    // probe-fetch-backoff at 1000 ms: 2 fetches in a second while ~170k messages waited.
    let r = probe("consumer-kafka431-backoff-1000ms");
    assert_eq!(ids(&r), ["fetch-queue-backoff"]);
    assert!(
        r.diagnoses[0].title.contains("fetcher was busy at most 2%"),
        "{}",
        r.diagnoses[0].title
    );
    // At 10 ms: one emit, no interval to judge, no claim.
    assert!(ids(&probe("consumer-kafka431-backoff-10ms")).is_empty());
    // probe-request-ceiling at 16 KB.
    assert!(ids(&probe("producer-kafka431-batch16k-6p-protocol")).contains(&"per-request-ceiling"));
}
