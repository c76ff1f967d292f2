//! The finder against lines built from documented wrapper patterns: each wrapper
//! template is filled with librdkafka messages formatted as its source prints them.

use super::*;

const BROKER: &str = "127.0.0.1:9092/1";
const SENT: &str = "Sent ProduceRequest (v10, 15621 bytes @ 0, CorrId 4)";
const THREAD_MSG: &str =
    "[thrd:127.0.0.1:9092/1]: 127.0.0.1:9092/1: Sent ProduceRequest (v10, 15621 bytes @ 0, CorrId 4)";

struct Expect {
    ts: Option<(TimestampSource, f64)>,
    facility: Option<&'static str>,
    client: Option<&'static str>,
    thread: bool,
}

fn check(style: &str, line: &str, want: Expect) {
    let rec =
        find_record(line.as_bytes()).unwrap_or_else(|| panic!("{style}: no record in {line}"));
    match rec.event {
        Event::Sent {
            api: "Produce",
            bytes: 15621,
            corr_id: 4,
            ..
        } => {}
        ref other => panic!("{style}: wrong event {other:?}"),
    }
    assert_eq!(
        rec.broker.map(|b| b.replace('\\', "")),
        Some(BROKER.to_string()),
        "{style}: broker"
    );
    match (want.ts, rec.timestamp) {
        (None, None) => {}
        (Some((src, secs)), Some(t)) => {
            assert_eq!(t.source, src, "{style}: timestamp source");
            assert!(
                (t.secs - secs).abs() < 1e-3,
                "{style}: time {} != {secs}",
                t.secs
            );
        }
        (w, g) => panic!("{style}: timestamp want {w:?} got {g:?}"),
    }
    assert_eq!(rec.facility, want.facility, "{style}: facility");
    assert_eq!(rec.client, want.client, "{style}: client");
    assert_eq!(rec.thread.is_some(), want.thread, "{style}: thread");
}

const RDK: Option<(TimestampSource, f64)> = Some((TimestampSource::Librdkafka, 1517292470.035));
/// 2018-03-07T13:06:54.197Z
const ISO: f64 = 1520428014.197;
const TIME_ONLY: f64 = 13.0 * 3600.0 + 6.0 * 60.0 + 54.197;

fn wrapper(t: f64) -> Option<(TimestampSource, f64)> {
    Some((TimestampSource::Wrapper, t))
}

#[test]
fn wrapper_styles() {
    let m = THREAD_MSG;
    let styles: Vec<(&str, String, Expect)> = vec![
        (
            "raw stderr (rd_kafka_log_print)",
            format!("%7|1517292470.035|SEND|rdkafka#producer-1| {m}"),
            Expect { ts: RDK, facility: Some("SEND"), client: Some("rdkafka#producer-1"), thread: true },
        ),
        (
            "raw, log.thread.name=false",
            format!("%7|1517292470.035|SEND|rdkafka#producer-1| {BROKER}: {SENT}"),
            Expect { ts: RDK, facility: Some("SEND"), client: Some("rdkafka#producer-1"), thread: false },
        ),
        (
            "raw with a client.id",
            format!("%7|1517292470.035|SEND|orders-svc#producer-3| {m}"),
            Expect { ts: RDK, facility: Some("SEND"), client: Some("orders-svc#producer-3"), thread: true },
        ),
        (
            "JSON object per line (node/python structured)",
            format!(r#"{{"severity":7,"fac":"SEND","name":"rdkafka#producer-1","message":"{m}"}}"#),
            Expect { ts: None, facility: Some("SEND"), client: Some("rdkafka#producer-1"), thread: true },
        ),
        (
            "JSON with a timestamp before it",
            format!(r#"2018-03-07T13:06:54.197Z {{"severity":7,"fac":"SEND","message":"{m}"}}"#),
            Expect { ts: wrapper(ISO), facility: Some("SEND"), client: None, thread: true },
        ),
        (
            "JSON array element",
            format!(r#"  {{"severity":7,"fac":"SEND","message":"{m}"}},"#),
            Expect { ts: None, facility: Some("SEND"), client: None, thread: true },
        ),
        (
            "JSON with escaped slashes and time after the message",
            format!(
                r#"{{"message":"{}","time":"2018-03-07T13:06:54.197Z"}}"#,
                m.replace('/', "\\/")
            ),
            Expect { ts: wrapper(ISO), facility: None, client: None, thread: true },
        ),
        (
            ".NET (Confluent.Kafka default log handler)",
            format!("7|2018-03-07 13:06:54.197|rdkafka#producer-1|SEND| {m}"),
            Expect { ts: wrapper(ISO), facility: Some("SEND"), client: Some("rdkafka#producer-1"), thread: true },
        ),
        (
            "rust-rdkafka through env_logger",
            format!("[2018-03-07T13:06:54.197Z DEBUG librdkafka] librdkafka: SEND {m}"),
            Expect { ts: wrapper(ISO), facility: Some("SEND"), client: None, thread: true },
        ),
        (
            "rust-rdkafka through a log4rs-style pattern",
            format!("2018-03-07 13:06:54.197 DEBUG librdkafka - librdkafka: SEND {m}"),
            Expect { ts: wrapper(ISO), facility: Some("SEND"), client: None, thread: true },
        ),
        (
            "librdkafka's syslog logger under syslog",
            format!("Mar  7 13:06:54 host rdkafka[4242]: SEND: rdkafka#producer-1: {m}"),
            Expect {
                ts: wrapper((31 + 29 + 6) as f64 * 86400.0 + TIME_ONLY - 0.197),
                facility: Some("SEND"),
                client: Some("rdkafka#producer-1"),
                thread: true,
            },
        ),
        (
            "journald short-iso around raw stderr",
            format!("2018-03-07T14:06:54+0100 host app[123]: %7|1517292470.035|SEND|rdkafka#producer-1| {m}"),
            Expect { ts: RDK, facility: Some("SEND"), client: Some("rdkafka#producer-1"), thread: true },
        ),
        (
            "docker logs --timestamps",
            format!("2018-03-07T13:06:54.197123456Z %7|1517292470.035|SEND|rdkafka#producer-1| {m}"),
            Expect { ts: RDK, facility: Some("SEND"), client: Some("rdkafka#producer-1"), thread: true },
        ),
        (
            "docker json-file",
            format!(
                r#"{{"log":"%7|1517292470.035|SEND|rdkafka#producer-1| {m}\n","stream":"stderr","time":"2018-03-07T13:06:54.197Z"}}"#
            ),
            Expect { ts: RDK, facility: Some("SEND"), client: Some("rdkafka#producer-1"), thread: true },
        ),
        (
            "kubernetes CRI",
            format!("2018-03-07T13:06:54.197123456Z stderr F 7|2018-03-07 13:06:54.197|rdkafka#producer-1|SEND| {m}"),
            Expect { ts: wrapper(ISO), facility: Some("SEND"), client: Some("rdkafka#producer-1"), thread: true },
        ),
        (
            "Python logging (confluent-kafka logger=)",
            format!("2018-03-07 13:06:54,197 DEBUG kafka.client: SEND [rdkafka#producer-1] {m}"),
            Expect { ts: wrapper(ISO), facility: Some("SEND"), client: Some("rdkafka#producer-1"), thread: true },
        ),
        (
            "Go (confluent-kafka-go LogEvent.String)",
            format!("[2018-03-07 14:06:54.197 +0100 CET][rdkafka#producer-1][SEND][7]{m}"),
            Expect { ts: wrapper(ISO), facility: Some("SEND"), client: Some("rdkafka#producer-1"), thread: true },
        ),
        (
            "Node util.inspect of a log event",
            format!("{{ severity: 7, fac: 'SEND', message: '{m}' }}"),
            Expect { ts: None, facility: Some("SEND"), client: None, thread: true },
        ),
        (
            "LOG-7-FETCH: style",
            format!("LOG-7-SEND: {m}"),
            Expect { ts: None, facility: Some("SEND"), client: None, thread: true },
        ),
        (
            "RDKAFKA-7-SEND: style",
            format!("RDKAFKA-7-SEND: rdkafka#producer-1: {m}"),
            Expect { ts: None, facility: Some("SEND"), client: Some("rdkafka#producer-1"), thread: true },
        ),
        (
            "strace -tt of the stderr write",
            format!(r#"4242  13:06:54.197123 write(2, "%7|1517292470.035|SEND|rdkafka#producer-1| {m}\n", 160) = 160"#),
            Expect { ts: RDK, facility: Some("SEND"), client: Some("rdkafka#producer-1"), thread: true },
        ),
        (
            "glog-style C++ application logger with source location",
            format!("I0307 13:06:54.197123 4242 kafka_client.cc:88] rdkafka#producer-1 SEND {m}"),
            Expect { ts: wrapper(TIME_ONLY), facility: Some("SEND"), client: Some("rdkafka#producer-1"), thread: true },
        ),
        (
            "logfmt",
            format!(r#"time=2018-03-07T13:06:54.197Z level=debug fac=SEND msg="{m}""#),
            Expect { ts: wrapper(ISO), facility: Some("SEND"), client: None, thread: true },
        ),
        (
            "PHP error_log with its own date",
            format!("[07-Mar-2018 13:06:54 UTC] rdkafka#producer-1 SEND {m}"),
            Expect { ts: wrapper(TIME_ONLY - 0.197), facility: Some("SEND"), client: Some("rdkafka#producer-1"), thread: true },
        ),
    ];
    assert!(styles.len() >= 15);
    for (style, line, want) in styles {
        check(style, &line, want);
    }
}

fn event_of(body: &str) -> Option<Event<'_>> {
    find_record(body.as_bytes()).map(|r| r.event)
}

#[test]
fn protocol_bodies() {
    assert_eq!(
        event_of("Sent partial ProduceRequest (v10, 0+65536/1048576 bytes, CorrId 9)"),
        Some(Event::SentPartial {
            api: "Produce",
            version: Some(10),
            done: 0,
            chunk: 65536,
            total: 1048576,
            corr_id: 9
        })
    );
    assert_eq!(
        event_of("Sent ProduceRequest (1142073 bytes, CorrId 6)"),
        Some(Event::Sent {
            api: "Produce",
            version: None,
            bytes: 1142073,
            offset: 0,
            corr_id: 6
        })
    );
    assert_eq!(
        event_of("b/1: Received FetchResponse (v11, 9876 bytes, CorrId 77, rtt 500.12ms)"),
        Some(Event::Received {
            api: "Fetch",
            version: Some(11),
            bytes: 9876,
            corr_id: 77,
            rtt_ms: 500.12
        })
    );
    assert_eq!(
        event_of(
            "Retrying AddOffsetsToTxnRequest (v0, 78 bytes, retry 1/3, prev CorrId 50) in 100ms"
        ),
        Some(Event::Retrying {
            api: "AddOffsetsToTxn",
            bytes: 78,
            retry: 1,
            max_retries: 3,
            prev_corr_id: Some(50),
            backoff_ms: Some(100)
        })
    );
    assert_eq!(
        event_of("Timed out ProduceRequest in flight (after 30012ms, timeout #0): possibly held back by preceeding blocking JoinGroupRequest with timeout in 280000ms"),
        Some(Event::TimedOutRequest {
            api: "Produce",
            queue: "in flight",
            after_ms: 30012,
            held_back_by: Some("JoinGroup"),
            held_back_by_blocking: true
        })
    );
    assert_eq!(
        event_of("Timed out 5 in-flight, 0 retry-queued, 2 out-queue, 1 partially-sent requests"),
        Some(Event::TimedOutSummary {
            in_flight: 5,
            retry_queued: 0,
            out_queue: 2,
            partially_sent: 1
        })
    );
    // An ApiKey name that itself ends in "Request" (librdkafka's table has a few).
    assert!(matches!(
        event_of("Sent ElectLeadersRequestRequest (v0, 10 bytes @ 0, CorrId 1)"),
        Some(Event::Sent {
            api: "ElectLeadersRequest",
            ..
        })
    ));
}

#[test]
fn fetch_and_msg_bodies() {
    let rec = find_record(b"%7|1700000000.000|BACKOFF|rdkafka#consumer-1| [thrd:k:9092/1]: k:9092/1: orders.v2 [3]: Fetch backoff for 1000ms: Local: Queue full").unwrap();
    assert_eq!(
        rec.event,
        Event::PartitionFetchBackoff {
            topic: "orders.v2",
            partition: 3,
            backoff_ms: 1000,
            reason: Some("Local: Queue full")
        }
    );
    assert_eq!(rec.broker, Some("k:9092/1"));
    assert_eq!(
        event_of("k:9092/1: Fetch backoff for 500ms: Broker: Not leader for partition"),
        Some(Event::BrokerFetchBackoff {
            backoff_ms: 500,
            reason: Some("Broker: Not leader for partition")
        })
    );
    assert_eq!(
        event_of("k:9092/1: Fetch backoff for 993ms"),
        Some(Event::BrokerFetchBackoff {
            backoff_ms: 993,
            reason: None
        })
    );
    assert_eq!(
        event_of("Topic t [0] in state active at offset 12 (leader epoch 0) (100000/100000 msgs, 9765/65536 kb queued, opv 2) is not fetchable: queued.min.messages exceeded"),
        Some(Event::FetchDecide {
            topic: "t",
            partition: 0,
            state: "active",
            queued_msgs: 100000,
            queued_min_msgs: 100000,
            queued_kb: 9765,
            queued_max_kb: 65536,
            fetchable: false,
            reason: "queued.min.messages exceeded"
        })
    );
    assert!(matches!(
        event_of("Topic demo [0] in state active at offset 0 (0/100000 msgs, 0/65536 kb queued, opv 2) is fetchable"),
        Some(Event::FetchDecide { fetchable: true, queued_msgs: 0, .. })
    ));
    assert_eq!(
        event_of(
            r#"Topic demo [0] MessageSet size 0, error "Success", MaxOffset 1, LSO 1, Ver 2/2"#
        ),
        Some(Event::FetchMessageSet {
            topic: "demo",
            partition: 0,
            size: 0,
            error: "Success"
        })
    );
    assert_eq!(
        event_of("Fetch 6/6/6 toppar(s)"),
        Some(Event::FetchToppars {
            partitions: 6,
            active: 6,
            total: 6
        })
    );
    assert_eq!(
        event_of("Enqueue 1 message(s) (3 bytes, 1 ops) on demo [0] fetch queue (qlen 1, v2, last_offset 0, 0 ctrl msgs, uncompressed)"),
        Some(Event::Enqueue {
            topic: "demo",
            partition: 0,
            messages: 1,
            bytes: 3,
            queue_len: Some(1)
        })
    );
    assert_eq!(
        event_of("k:9092/1: t [2]: Produce MessageSet with 15 message(s) (15480 bytes, ApiVersion 7, MsgVersion 2, MsgId 0, BaseSeq -1, PID{Invalid}, uncompressed)"),
        Some(Event::ProduceMessageSet {
            topic: "t",
            partition: 2,
            messages: 15,
            bytes: 15480
        })
    );
    assert_eq!(
        event_of("k:9092/1: t [2]: MessageSet with 15 message(s) (MsgId 0, BaseSeq -1) delivered"),
        Some(Event::MessageSetDelivered {
            topic: "t",
            partition: 2,
            messages: 15
        })
    );
}

#[test]
fn prose_that_contains_anchor_words_is_not_a_record() {
    for line in [
        "Sent 5 emails to the team",
        "Received ProduceResponse from somewhere",
        "Fetch backoff for the weekend",
        "Topic t [0] was deleted",
        "Timed out waiting for coffee",
        "Sent ProduceRequest (v10, 15621 bytes @ 0, CorrId ", // cut mid-line
    ] {
        assert!(find_record(line.as_bytes()).is_none(), "{line}");
    }
}

#[test]
fn several_records_on_one_line_are_all_found() {
    let line = format!(
        r#"[{{"message":"{THREAD_MSG}"}},{{"message":"[thrd:127.0.0.1:9092/1]: 127.0.0.1:9092/1: Received ProduceResponse (v10, 62 bytes, CorrId 4, rtt 0.39ms)"}}]"#
    );
    let finder = RecordFinder::new();
    let kinds: Vec<_> = finder
        .records(line.as_bytes())
        .map(|r| r.event.kind())
        .collect();
    assert_eq!(kinds, vec!["sent", "received"]);
}

#[test]
fn invalid_utf8_around_a_body_is_tolerated() {
    let mut line = b"\xff\xfe garbage %7|1517292470.035|SEND|rdkafka#producer-1| ".to_vec();
    line.extend_from_slice(THREAD_MSG.as_bytes());
    line.extend_from_slice(b" \xc3");
    let rec = find_record(&line).expect("record");
    assert_eq!(rec.event.kind(), "sent");
}

#[test]
fn json_slashes_are_unescaped() {
    let mut out = Vec::new();
    assert!(!unescape_json_slashes(b"Fetch 6/6/6 toppar(s)", &mut out));
    assert!(unescape_json_slashes(
        br"k:9092\/1: Fetch 6\/6\/6 toppar(s) \\n",
        &mut out
    ));
    assert_eq!(out, br"k:9092/1: Fetch 6/6/6 toppar(s) \\n".to_vec());
}

/// The raw path parses a `<topic> [<p>]: ` prefix forward and hands it to the body
/// parser ([`body::parse_body`]); the anchor path finds it backward from the anchor.
/// Both must give the same record, also for a partition of more than 10 digits (the
/// backward reader's limit, where the forward one defers to it).
#[test]
fn a_topic_prefix_parsed_forward_is_the_one_found_backward() {
    let bodies = [
        ("kgap.t-1 [4]: Produce MessageSet with 15 message(s) (15556 bytes, ApiVersion 10, MsgVersion 2, MsgId 0, BaseSeq -1, PID{Invalid}, uncompressed)", "MessageSet with "),
        ("kgap.t-1 [4]: MessageSet with 15 message(s) (MsgId 0, BaseSeq -1) delivered", "MessageSet with "),
        ("kgap.t-1 [5]: MessageSet with 3 message(s) (MsgId 0, BaseSeq -1) encountered error: Broker: Not leader (actions Refresh)", "MessageSet with "),
        ("t_x [-1]: Fetch backoff for 1000ms: fetch queue full", "Fetch "),
        ("t [2147483647]: Fetch backoff for 5ms", "Fetch "),
        ("t [00000000004]: Fetch backoff for 5ms", "Fetch "),
        ("t [00000000004]: MessageSet with 1 message(s) (MsgId 0, BaseSeq -1) delivered", "MessageSet with "),
    ];
    for (body, anchor) in bodies {
        for head in ["127.0.0.1:9092/1: ", ""] {
            let line = format!("{head}{body}");
            let at = head.len();
            let pattern = body::ANCHORS.iter().position(|a| *a == anchor).unwrap();
            let anchor_at = at + body.find(anchor).unwrap();
            let forward = body::parse_body(line.as_bytes(), at)
                .map(|p| format!("{:?} {} {}", p.event, p.start, p.end));
            let backward = body::parse_at(line.as_bytes(), pattern, anchor_at)
                .map(|p| format!("{:?} {} {}", p.event, p.start, p.end));
            assert_eq!(forward, backward, "{line}");
            // An 11-digit partition: no MessageSet record; a broker-level backoff.
            let long = body.contains("[000");
            assert_eq!(forward.is_none(), long && anchor != "Fetch ", "{line}");
            if long && anchor == "Fetch " {
                assert!(forward.unwrap().starts_with("BrokerFetchBackoff"), "{line}");
            }
        }
    }
}

#[test]
fn error_bodies_that_need_no_debug() {
    // librdkafka 0.9's raw line, without `[thrd:…]` (rd_kafka_broker_timeout_scan).
    let raw =
        "%3|1500000000.123|FAIL|app2#producer-1| queue4:9092/4: 3 request(s) timed out: disconnect";
    let rec = find_record(raw.as_bytes()).expect("a record");
    assert_eq!(rec.event, Event::TimedOutDisconnect { requests: 3 });
    assert_eq!(rec.broker, Some("queue4:9092/4"));
    assert_eq!(rec.facility, Some("FAIL"));
    // Wrapped, with the connection's rtt or time in state after it.
    assert_eq!(
        event_of("k:9092/0: 2 request(s) timed out: disconnect (after 1862053ms in state UP)"),
        Some(Event::TimedOutDisconnect { requests: 2 })
    );
    assert_eq!(event_of("12 request(s) timed out: disconnected"), None);
    // REQERR (rdkafka_request.c), raw and wrapped, in a queue and in flight.
    let raw = "%7|1500000000.123|REQERR|rdkafka#producer-1| [thrd:k:9092/7]: k:9092/7: ProduceRequest failed: Local: Timed out in queue: actions Retry";
    assert_eq!(
        find_record(raw.as_bytes()).map(|r| r.event),
        Some(Event::RequestTimedOutError {
            api: Some("Produce"),
            in_queue: true
        })
    );
    let raw = "%7|1500000000.123|REQERR|rdkafka#producer-1| [thrd:k:9092/7]: k:9092/7: MetadataRequest failed: Local: Timed out: actions Retry";
    assert_eq!(
        find_record(raw.as_bytes()).map(|r| r.event),
        Some(Event::RequestTimedOutError {
            api: Some("Metadata"),
            in_queue: false
        })
    );
    assert_eq!(
        event_of("2016/11/19 21:07:42 *INFO* rdkafka#producer-43:REQERR:k:9092/7: ProduceRequest failed: Local: Timed out in queue: explicit actions 0x0"),
        Some(Event::RequestTimedOutError {
            api: Some("Produce"),
            in_queue: true
        })
    );
    // A line hard-wrapped inside the api's name keeps the timeout, not the api.
    assert_eq!(
        event_of(
            "      est failed: Local: Timed out in queue: explicit actions Retry,MsgNotPersisted"
        ),
        Some(Event::RequestTimedOutError {
            api: None,
            in_queue: true
        })
    );
    assert_eq!(event_of("the job failed: Local: Timed out waiting"), None);
    // A failed connect (rdkafka_transport.c), its time in state left out.
    assert_eq!(
        event_of("1511418210.136 RDKAFKA-3-FAIL: rdkafka#producer-1: [thrd:localhost:9092/bootstrap]: localhost:9092/bootstrap: Connect to ipv4#127.0.0.1:9092 failed: Connection refused (after 0ms in state CONNECT)"),
        Some(Event::ConnectFailed {
            reason: "Connection refused"
        })
    );
    let raw = "%3|1597742901.053|FAIL|rdkafka#consumer-1| [thrd:kafka:9092/bootstrap]: kafka:9092/bootstrap: Connect to ipv4#172.19.0.10:9092 failed: Connection refused";
    assert_eq!(
        find_record(raw.as_bytes()).map(|r| r.event),
        Some(Event::ConnectFailed {
            reason: "Connection refused"
        })
    );
}
