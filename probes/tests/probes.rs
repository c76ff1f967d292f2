//! Integration tests of the probes, end to end, as a user runs them.
//!
//! The broker tests need the local Apache Kafka of `scripts/kafka up` (`scripts/test` starts
//! it; KGAP_TEST_BROKERS points elsewhere). They fail, never skip, when it is not there.

use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::message::Message;
use rdkafka::producer::{BaseProducer, BaseRecord, Producer};
use rdkafka::{Offset, TopicPartitionList};
use serde_json::Value;
use std::process::{Command, Output};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Probes measure throughput: run them one at a time even though tests are threads.
mod common;
use common::{brokers, json_of};

static SERIAL: Mutex<()> = Mutex::new(());

fn probe(name: &str, args: &[&str]) -> (Output, Duration) {
    let exe = match name {
        "probe-fetch-backoff" => env!("CARGO_BIN_EXE_probe-fetch-backoff"),
        "probe-request-ceiling" => env!("CARGO_BIN_EXE_probe-request-ceiling"),
        "probe-inflight-latency" => env!("CARGO_BIN_EXE_probe-inflight-latency"),
        "probe-batch-consume" => env!("CARGO_BIN_EXE_probe-batch-consume"),
        other => panic!("unknown probe {other}"),
    };
    let t = Instant::now();
    let out = Command::new(exe).args(args).output().expect("probe runs");
    (out, t.elapsed())
}

fn config() -> ClientConfig {
    let mut c = ClientConfig::new();
    c.set("bootstrap.servers", brokers());
    c
}

fn admin() -> AdminClient<DefaultClientContext> {
    config().create().expect("admin client")
}

fn require_broker() {
    let p: BaseProducer = config().create().expect("producer");
    if let Err(e) = p.client().fetch_metadata(None, Duration::from_secs(10)) {
        panic!(
            "no Kafka broker at {} ({e}): run scripts/test, or scripts/kafka up first",
            brokers()
        );
    }
}

fn topic_exists(name: &str) -> bool {
    let p: BaseProducer = config().create().expect("producer");
    let md = p
        .client()
        .fetch_metadata(None, Duration::from_secs(10))
        .expect("metadata");
    md.topics().iter().any(|t| t.name() == name)
}

/// End offsets and every payload of a topic, read with a consumer of our own.
fn snapshot_topic(name: &str, partitions: i32) -> (Vec<i64>, Vec<Vec<u8>>) {
    let c: BaseConsumer = config()
        .set(
            "group.id",
            format!("kgap-test-reader-{}", std::process::id()),
        )
        .set("enable.auto.commit", "false")
        .create()
        .expect("consumer");
    let mut ends = Vec::new();
    let mut tpl = TopicPartitionList::new();
    for p in 0..partitions {
        let (_, hi) = c
            .fetch_watermarks(name, p, Duration::from_secs(10))
            .expect("watermarks");
        ends.push(hi);
        tpl.add_partition_offset(name, p, Offset::Beginning)
            .unwrap();
    }
    c.assign(&tpl).unwrap();
    let total: i64 = ends.iter().sum();
    let mut payloads = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    while (payloads.len() as i64) < total && Instant::now() < deadline {
        if let Some(Ok(m)) = c.poll(Duration::from_millis(200)) {
            payloads.push(m.payload().unwrap_or_default().to_vec());
        }
    }
    payloads.sort();
    (ends, payloads)
}

#[test]
fn fetch_backoff_on_the_real_broker_naps_at_1000ms_not_at_10ms_and_touches_nothing_else() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    require_broker();

    // A topic that is not the probe's: it must come out exactly as it went in.
    let other = format!("kgap-test-preexisting-{}", std::process::id());
    let admin = admin();
    let opts = AdminOptions::new().operation_timeout(Some(Duration::from_secs(10)));
    futures_executor::block_on(admin.create_topics(
        [&NewTopic::new(&other, 2, TopicReplication::Fixed(1))],
        &opts,
    ))
    .expect("create the other topic")
    .into_iter()
    .for_each(|r| {
        r.expect("other topic created");
    });
    std::thread::sleep(Duration::from_millis(500));
    let p: BaseProducer = config().create().unwrap();
    for i in 0..500u32 {
        let payload = format!("precious record {i}");
        p.send(
            BaseRecord::<(), _>::to(&other)
                .partition((i % 2) as i32)
                .payload(&payload),
        )
        .unwrap();
        p.poll(Duration::ZERO);
    }
    p.flush(Duration::from_secs(10)).unwrap();
    let before = snapshot_topic(&other, 2);
    assert_eq!(before.1.len(), 500);

    let out_dir = tempfile::tempdir().unwrap();
    let b = brokers();
    // Whether the fetcher outruns the application (and so fills queued.min.messages) is a
    // race on a 2-core machine shared with the broker. A threshold below one fetch response
    // (~9k × 100 B per partition) takes the race out: every fetch fills the queue, so the
    // default backoff must nap — the same mechanism, deterministic. 50k per partition ≈ 6 naps.
    let (out, _) = probe(
        "probe-fetch-backoff",
        &[
            "--brokers",
            &b,
            "--backoff-ms",
            "10",
            "--messages",
            "60000",
            "--partitions",
            "2",
            "--reps",
            "3",
            "--seed",
            "5",
            "-X",
            "queued.min.messages=5000",
            "--json",
            "--out",
            out_dir.path().to_str().unwrap(),
        ],
    );
    let r = json_of(&out);
    assert_eq!(r["probe"], "probe-fetch-backoff");
    assert_eq!(r["broker"]["kind"], "external");
    assert_eq!(r["schema"], "kgap.probe-result");
    assert_eq!(r["payload"]["sha256"].as_str().unwrap().len(), 64);
    assert_eq!(r["order"]["seed"], 5);
    assert_eq!(r["order"]["runs"].as_array().unwrap().len(), 6);
    let settings = r["points"].as_array().unwrap();
    assert_eq!(settings.len(), 2);
    let slow = &settings[0];
    let fast = &settings[1];
    assert_eq!(slow["params"]["fetch.queue.backoff.ms"], 1000);
    assert_eq!(fast["params"]["fetch.queue.backoff.ms"], 10);
    let slow_run = &slow["runs"][0];
    let fast_run = &fast["runs"][0];
    let n = |v: &Value, k: &str| {
        v[k].as_f64()
            .unwrap_or_else(|| panic!("{k} missing in {v}"))
    };
    // Backoff lines counted from the probe's own debug=fetch log.
    assert!(n(slow_run, "queue_full_backoffs") >= 1.0, "{slow_run}");
    assert!(n(slow_run, "backoff_ms_total") >= 1000.0, "{slow_run}");
    // Naps at 1000 ms: whole seconds stalled, or at least half a second without a message.
    assert!(
        n(slow_run, "stall_seconds") >= 1.0 || n(slow_run, "longest_idle_s") >= 0.5,
        "no nap at 1000 ms: {slow_run}"
    );
    // None at 10 ms, by the mechanism rather than the clock: every queue-full backoff the
    // fast run's fetcher took was the configured 10 ms (a stall or idle slot there can only be
    // this machine's load, which the figures report and the test does not judge: a loaded
    // 2-core machine can hold a consumer off the CPU for half a second).
    let fast_log = std::fs::read_to_string(out_dir.path().join("backoff-10ms-rep1/debug.log"))
        .expect("the fast run's debug log");
    let fast_backoffs: Vec<&str> = fast_log
        .lines()
        .filter(|l| l.contains("Fetch backoff for") && l.contains("Queue full"))
        .collect();
    assert!(
        fast_backoffs
            .iter()
            .all(|l| l.contains("Fetch backoff for 10ms")),
        "{fast_backoffs:?}"
    );
    assert!(
        n(fast_run, "backoff_ms_total") <= 10.0 * n(fast_run, "queue_full_backoffs") + 0.5,
        "{fast_run}"
    );
    println!(
        "fast run: {} stall seconds, longest idle {} s (reported, not judged)",
        n(fast_run, "stall_seconds"),
        n(fast_run, "longest_idle_s")
    );
    // Both rates measured; which is faster is the rule's check below (at least 1.3x, from
    // ~6 s of 1000 ms naps against none), with the cause named in its evidence.
    assert!(n(fast_run, "msgs_per_s") > 0.0 && n(slow_run, "msgs_per_s") > 0.0);
    let v = &r["verdicts"][0];
    assert_eq!(v["finding"], "fetch-backoff");
    assert_eq!(v["outcome"], "holds", "{v}");
    // The mechanism, not only the number: every check passed, the naps in every rep.
    assert!(v["checks"].as_array().unwrap().len() >= 3, "{v}");
    assert!(
        v["checks"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["state"] == "passed"),
        "{v}"
    );
    assert_eq!(v["evidence"]["slow_queue_full_backoffs"]["n"], 3, "{v}");
    let reason = v["reason"].as_str().unwrap();
    assert!(
        reason.contains("backed off") && reason.contains("queued.min.messages"),
        "{v}"
    );
    // The consume loop runs on its own thread (consume_once), named so its CPU is the app's.
    assert!(slow_run["threads"]
        .as_array()
        .unwrap()
        .iter()
        .any(|t| t["name"] == "kgap-app"));

    // Artifacts.
    let root = out_dir.path();
    assert!(root.join("result.json").is_file());
    assert!(std::fs::read_to_string(root.join("report.txt"))
        .unwrap()
        .contains("verdict fetch-backoff: HOLDS"));
    let csv = std::fs::read_to_string(root.join("runs.csv")).unwrap();
    assert_eq!(csv.lines().count(), 7, "{csv}");
    let log = std::fs::read_to_string(root.join("backoff-1000ms-rep1/debug.log")).unwrap();
    assert!(log.starts_with("%7|"), "librdkafka's stderr format");
    assert!(log.contains("Fetch backoff for 1000ms: Local: Queue full"));
    assert!(root.join("backoff-10ms-rep1/stats.jsonl").is_file());

    // The probe's topic is gone; the other one untouched.
    let topic = r["topics"][0].as_str().expect("topic in the result");
    assert!(topic.starts_with("kgap.probe-fetch-backoff."));
    assert!(!topic_exists(topic), "{topic} still exists");
    let after = snapshot_topic(&other, 2);
    assert_eq!(before, after, "the pre-existing topic changed");
    futures_executor::block_on(admin.delete_topics(&[&other], &opts)).unwrap();
}

#[test]
fn embedded_broker_is_named_in_every_output() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let args = [
        "--messages",
        "60000",
        "--partitions",
        "1",
        "--reps",
        "1",
        "--backoff-ms",
        "10",
        "-X",
        "queued.min.messages=5000",
    ];
    let (out, _) = probe("probe-fetch-backoff", &[&args[..], &["--json"]].concat());
    let r = json_of(&out);
    assert_eq!(r["broker"]["kind"], "embedded-mock");
    assert!(r["broker"]["note"]
        .as_str()
        .unwrap()
        .contains("not Apache Kafka"));
    assert!(r["not_measured"].to_string().contains("mock"));
    let (out, _) = probe("probe-fetch-backoff", &args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("mock cluster"), "{text}");
    assert!(text.contains("verdict fetch-backoff: "), "{text}");
    // One rep decides nothing: the rule says so instead of a HOLDS from one sample.
    assert!(
        text.contains("verdict fetch-backoff: CANNOT TELL"),
        "{text}"
    );
    assert!(text.contains("--reps 3"), "{text}");
}

#[test]
fn unreachable_broker_is_a_clear_error_within_10_seconds() {
    let (out, took) = probe(
        "probe-fetch-backoff",
        &[
            "--brokers",
            "127.0.0.1:1",
            "--reps",
            "1",
            "--messages",
            "1000",
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("127.0.0.1:1 unreachable"), "{err}");
    assert!(took < Duration::from_secs(10), "took {took:?}");
}

#[test]
fn unknown_librdkafka_property_is_exit_2_with_librdkafkas_message() {
    let (out, _) = probe(
        "probe-fetch-backoff",
        &[
            "-X",
            "no.such.property=1",
            "--reps",
            "1",
            "--messages",
            "1000",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("No such configuration property"), "{err}");
    assert!(err.contains("no.such.property"), "{err}");
}

#[test]
fn bad_usage_is_exit_2() {
    for args in [
        &["--backoff-ms", "ten"][..],
        &["--reps", "0"][..],
        &["-X", "novalue"][..],
    ] {
        let (out, _) = probe("probe-fetch-backoff", args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(!out.stderr.is_empty());
    }
}

#[test]
fn help_teaches_and_ends_with_examples() {
    let (out, _) = probe("probe-fetch-backoff", &["--help"]);
    assert!(out.status.success());
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(help.contains("queued.min.messages"));
    assert!(help.trim_end().lines().last().unwrap().contains('#'));
    assert!(help.contains("examples:"));
}

#[test]
fn ctrl_c_prints_what_was_measured_and_deletes_the_topic() {
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    require_broker();
    let b = brokers();
    let mut child = Command::new(env!("CARGO_BIN_EXE_probe-fetch-backoff"))
        .args([
            "--brokers",
            &b,
            "--messages",
            "200000",
            "--partitions",
            "2",
            "--reps",
            "20",
            "-X",
            "queued.min.messages=5000",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("probe starts");
    let stderr = BufReader::new(child.stderr.take().unwrap());
    let mut topic = None;
    let mut lines = stderr.lines();
    // Wait for the first completed run, then press Ctrl-C.
    for line in lines.by_ref() {
        let line = line.unwrap();
        if let Some(rest) = line.split("topic ").nth(1) {
            if topic.is_none() && rest.starts_with("kgap.") {
                topic = rest.split_whitespace().next().map(str::to_string);
            }
        }
        if line.contains(" rep 1/20:") {
            break;
        }
    }
    let topic = topic.expect("the probe names its topic on stderr");
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(130),
        "stderr after Ctrl-C: {rest:?}"
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("interrupted"), "{text}");
    assert!(text.contains("msg/s"), "{text}");
    assert!(!topic_exists(&topic), "{topic} left behind");
}

fn topics_with_prefix(prefix: &str) -> Vec<String> {
    let p: BaseProducer = config().create().expect("producer");
    let md = p
        .client()
        .fetch_metadata(None, Duration::from_secs(10))
        .expect("metadata");
    let mut v: Vec<String> = md
        .topics()
        .iter()
        .map(|t| t.name().to_string())
        .filter(|n| n.starts_with(prefix))
        .collect();
    v.sort();
    v
}

#[test]
fn request_ceiling_on_the_real_broker_reads_requests_from_statistics() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    require_broker();
    let before = topics_with_prefix("kgap.probe-request-ceiling.");
    let out_dir = tempfile::tempdir().unwrap();
    let b = brokers();
    let (out, _) = probe(
        "probe-request-ceiling",
        &[
            "--brokers",
            &b,
            "--batch-size",
            "16384,262144",
            "--partitions",
            "1,2",
            "--reps",
            "1",
            "--duration",
            "2s",
            "--warmup-messages",
            "20000",
            "--json",
            "--out",
            out_dir.path().to_str().unwrap(),
        ],
    );
    let r = json_of(&out);
    assert_eq!(r["probe"], "probe-request-ceiling");
    assert_eq!(r["broker"]["kind"], "external");
    assert_eq!(r["payload"]["sha256"].as_str().unwrap().len(), 64);
    let points = r["points"].as_array().unwrap();
    assert_eq!(points.len(), 4);
    for p in points {
        assert_eq!(p["client"], "librdkafka");
        let run = &p["runs"][0];
        let batch = p["params"]["batch.size"].as_f64().unwrap();
        assert!(p["params"]["partitions"].as_i64().unwrap() >= 1);
        // Measured, and the rate is the window's messages over the window: how fast this
        // machine produced is the finding's to judge, not the test's.
        common::assert_rate_of_window(run);
        assert!(
            run["produce_requests_per_s"].as_f64().unwrap() > 0.0,
            "{run}"
        );
        assert!(run["stats_emits"].as_u64().unwrap() >= 2, "{run}");
        assert_eq!(run["delivery_errors"], 0);
        // One partition's batch per ProduceRequest, measured: batches built over requests
        // sent. Requests are at most a batch (plus the request's own framing) and, at 16 KB
        // under full load, close to one.
        let per_req = run["batches_per_request"].as_f64().unwrap();
        assert!(
            (0.9..=1.1).contains(&per_req),
            "{per_req} batches per request"
        );
        let bpr = run["bytes_per_request"].as_f64().unwrap();
        assert!(
            bpr <= batch * 1.05 + 512.0,
            "{bpr} B per request at batch.size {batch}"
        );
        if batch == 16384.0 {
            assert!(bpr >= 8192.0, "{bpr} B per request at batch.size {batch}");
        }
        assert!(run["app_cores"].as_f64().unwrap() > 0.0, "{run}");
        assert!(run["busiest_broker_thread"]
            .as_str()
            .unwrap()
            .starts_with("rdk:broker"));
        assert!(run["topic"]
            .as_str()
            .unwrap()
            .starts_with("kgap.probe-request-ceiling."));
    }
    // The catalogue's verdict: one rep decides nothing, and it says so; every check of the
    // mechanism is there with what was measured.
    let v = &r["verdicts"][0];
    assert_eq!(v["finding"], "request-ceiling");
    assert_eq!(v["outcome"], "cannot-tell", "{v}");
    assert!(v["reason"].as_str().unwrap().contains("--reps 3"), "{v}");
    let checks = v["checks"].as_array().unwrap();
    // Rate flat across partitions, full batches, one batch per request, the batch gain, no
    // client thread saturated, and the connection kept busy (judged per connection).
    assert_eq!(checks.len(), 6, "{v}");
    assert!(
        checks.iter().any(|c| c["condition"]
            .as_str()
            .unwrap()
            .contains("a connection is kept busy")),
        "{v}"
    );
    assert!(
        checks
            .iter()
            .any(|c| c["detail"].as_str().unwrap().contains("statistics: 1.00")),
        "{v}"
    );
    assert_eq!(v["evidence"]["points"].as_array().unwrap().len(), 4);
    // The probe analyzed its own debug=protocol capture: one MessageSet per request there too.
    let d = &r["diagnoses"][0];
    assert_eq!(d["tool"], "analyze-protocol-log");
    let per_req = d["batches_per_request"].as_f64().unwrap();
    assert!((0.9..=1.1).contains(&per_req), "{d}");
    // Every run's topic (and the pass's) is listed, and was deleted.
    let topics = r["topics"].as_array().unwrap();
    assert_eq!(topics.len(), 5, "{topics:?}");
    assert_eq!(topics_with_prefix("kgap.probe-request-ceiling."), before);
    let root = out_dir.path();
    let svg = std::fs::read_to_string(root.join("request-ceiling.svg")).unwrap();
    assert_eq!(
        svg.matches("<polyline").count(),
        2,
        "one line per partition count"
    );
    let log = std::fs::read_to_string(root.join("diagnose-p2-batch16384-rep1/debug.log")).unwrap();
    assert!(
        log.contains("Sent ProduceRequest (v"),
        "debug=protocol captured"
    );
    assert!(root.join("runs.csv").is_file() && root.join("report.txt").is_file());
}

#[test]
fn request_ceiling_with_one_partition_count_cannot_tell_on_the_mock() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let (out, _) = probe(
        "probe-request-ceiling",
        &[
            "--batch-size",
            "16384,262144",
            "--partitions",
            "2",
            "--reps",
            "1",
            "--duration",
            "1s",
            "--warmup-messages",
            "5000",
            "--no-diagnose",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Words as the report wraps them, joined again.
    let text = String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    // "Flat across partitions" with one partition count is true by construction.
    assert!(
        text.contains("verdict request-ceiling: CANNOT TELL"),
        "{text}"
    );
    assert!(text.contains("by construction"), "{text}");
    // The mock's caveat is part of the verdict.
    assert!(
        text.contains("warning: this ran on librdkafka's embedded mock"),
        "{text}"
    );
}

/// The runs of a probe-inflight-latency document, with their point's params and client.
fn inflight_runs(r: &Value) -> Vec<(Value, String, Value)> {
    r["points"]
        .as_array()
        .expect("points")
        .iter()
        .flat_map(|p| {
            p["runs"].as_array().unwrap().iter().map(move |run| {
                (
                    p["params"].clone(),
                    p["client"].as_str().unwrap().to_string(),
                    run.clone(),
                )
            })
        })
        .collect()
}

/// Messages a latency run sent in its window: the rate achieved over the window, as the probe
/// computed it (both rounded to 3 decimals).
fn window_sent(run: &Value) -> f64 {
    (num(run, "rate_achieved_per_s") * num(run, "window_s")).round()
}

fn num(v: &Value, k: &str) -> f64 {
    v[k].as_f64()
        .unwrap_or_else(|| panic!("{k} missing in {v}"))
}

/// Send-to-ack is the client's own clock: the ack comes back no later than the consumer
/// sees the message, give or take the race between the two: the broker answers the
/// ProduceRequest and completes the waiting FetchRequest for the same append, and each
/// answer then crosses its own broker thread and queue (seen: ack p50 0.416 ms against an
/// end-to-end p50 of 0.413 ms; with builds beside it, 0.359 against 0.294 ms). With the
/// probe's own wait for delivery reports in it, the old clock gave a p50 of 4 ms on the mock
/// and 12–19 ms on Kafka against an end-to-end p50 of 0.45 ms: ten times and more, 3.5 ms
/// and more above it, which a margin of 1.5x plus 0.5 ms (under 1.2 ms there) still catches.
fn check_ack_clock(r: &Value) {
    let mut n = 0;
    for (params, client, run) in inflight_runs(r) {
        assert_eq!(client, "librdkafka");
        if params["linger.ms"] != 0 {
            continue;
        }
        n += 1;
        // Every ack counted is a window message's: some, and no more than the window sent
        // (rate achieved x window, as the probe computed both; how many this machine sent at
        // its load is reported, not judged: 724 of 1000 msg/s seen at a load average of 19).
        let sent = window_sent(&run);
        assert!(num(&run, "ack_count") > 0.0, "{run}");
        assert!(num(&run, "ack_count") <= sent + 1.0, "{sent} sent: {run}");
        assert!(num(&run, "ack_ms_p50") > 0.0, "{run}");
        assert!(
            num(&run, "ack_ms_p50") <= 1.5 * num(&run, "e2e_ms_p50") + 0.5,
            "send-to-ack p50 above 1.5x the end-to-end p50 + 0.5 ms at {params}: {run}"
        );
        // The serving loop measured its own promptness: a report's wait to be served is part
        // of its send-to-ack, so no wait is longer than the longest ack (histogram rounding
        // aside). A pacer that sleeps instead of serving shows in the ack clock's bound above;
        // a wake-up's latency in ms is this machine's load, not the mechanism.
        assert!(num(&run, "delivery_serve_ms_p50") > 0.0, "{run}");
        assert!(
            num(&run, "delivery_serve_ms_p50") <= num(&run, "delivery_serve_ms_max"),
            "{run}"
        );
        assert!(
            num(&run, "delivery_serve_ms_max") <= 1.01 * num(&run, "ack_ms_max") + 0.01,
            "{run}"
        );
    }
    assert!(n > 0, "no linger.ms=0 run");
}

#[test]
fn inflight_send_to_ack_is_at_most_end_to_end_on_the_mock_and_linger_adds_the_linger() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let (out, _) = probe(
        "probe-inflight-latency",
        &[
            "--rates",
            "1000",
            "--linger-ms",
            "0,5",
            "--max-in-flight",
            "5",
            "--reps",
            "1",
            "--warmup",
            "500ms",
            "--duration",
            "2s",
            "--json",
        ],
    );
    let r = json_of(&out);
    assert_eq!(r["broker"]["kind"], "embedded-mock");
    check_ack_clock(&r);
    // librdkafka lingers per partition: at 1k msg/s over 6 partitions (a message per
    // partition every 6 ms) a message at linger.ms=5 waits its linger out alone, so about
    // 5 ms more (seen: 3.5-6.5 ms more end to end on a quiet machine). The wait is in both
    // clocks of the lingering run, librdkafka's own send-to-ack and the end-to-end; load only
    // lengthens them, so the lower bound is the mechanism's (a linger not applied, or
    // applied per request rather than per partition queue, is under it). How much more than
    // the linger a loaded machine adds is reported, not judged.
    let run_at = |linger: u64| {
        inflight_runs(&r)
            .into_iter()
            .find(|(p, _, _)| p["linger.ms"] == linger)
            .map(|(_, _, run)| run)
            .unwrap()
    };
    let (at0, at5) = (run_at(0), run_at(5));
    for k in ["ack_ms_p50", "e2e_ms_p50"] {
        assert!(num(&at5, k) >= 0.8 * 5.0, "linger.ms=5 {k}: {at5}");
    }
    assert!(
        num(&at5, "ack_ms_p50") <= num(&at5, "ack_ms_max") && num(&at5, "e2e_count") > 0.0,
        "{at5}"
    );
    println!(
        "linger.ms=5 added {:.3} ms to the end-to-end p50 (reported, not judged)",
        num(&at5, "e2e_ms_p50") - num(&at0, "e2e_ms_p50")
    );
    let v = r["verdicts"].as_array().unwrap();
    let ids: Vec<&str> = v.iter().map(|v| v["finding"].as_str().unwrap()).collect();
    assert_eq!(
        ids,
        ["inflight-latency", "per-partition-linger"],
        "no Java verdict"
    );
    // One rep decides nothing.
    assert!(v.iter().all(|v| v["outcome"] == "cannot-tell"), "{v:?}");
}

#[test]
fn inflight_send_to_ack_is_at_most_end_to_end_on_kafka() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    require_broker();
    let b = brokers();
    let (out, _) = probe(
        "probe-inflight-latency",
        &[
            "--brokers",
            &b,
            "--rates",
            "1000",
            "--linger-ms",
            "0",
            "--max-in-flight",
            "5,1000000",
            "--reps",
            "1",
            "--warmup",
            "500ms",
            "--duration",
            "2s",
            "--json",
        ],
    );
    let r = json_of(&out);
    assert_eq!(r["broker"]["kind"], "external");
    check_ack_clock(&r);
}

#[test]
fn inflight_default_window_queues_requests_that_five_does_not_at_linger_0() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    require_broker();
    let before = topics_with_prefix("kgap.probe-inflight-latency.");
    let b = brokers();
    let (out, _) = probe(
        "probe-inflight-latency",
        &[
            "--brokers",
            &b,
            "--rates",
            "20000",
            "--linger-ms",
            "0",
            "--max-in-flight",
            "1000000,5",
            "--reps",
            "3",
            "--warmup",
            "500ms",
            "--duration",
            "2s",
            "--json",
        ],
    );
    let r = json_of(&out);
    let runs = inflight_runs(&r);
    assert_eq!(runs.len(), 6, "2 windows × 3 reps");
    let median = |window: u64, k: &str| {
        let mut v: Vec<f64> = runs
            .iter()
            .filter(|(p, _, _)| p["max.in.flight.requests.per.connection"] == window)
            .map(|(_, _, run)| num(run, k))
            .collect();
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    for (_, _, run) in &runs {
        assert_eq!(run["rate_target_per_s"], 20000);
        // Every window message is timed end to end or counted missing: the two add up to
        // what the window sent (rate achieved x window, as the probe computed them). How
        // much of 20k/s this machine sent is the verdict's to say (it does, below).
        assert!(num(run, "e2e_count") > 0.0, "{run}");
        let accounted = num(run, "e2e_count") + num(run, "e2e_missing");
        assert!(
            (accounted - window_sent(run)).abs() <= 1e-3 * window_sent(run) + 1.0,
            "{accounted} timed or missing, {} sent: {run}",
            window_sent(run)
        );
        assert!(num(run, "ack_ms_p99") >= num(run, "ack_ms_p50"), "{run}");
    }
    // max.in.flight=5 caps the requests awaiting a response (one more for a Metadata request
    // in passing); the default window lets them pile up, or sends more, smaller requests.
    let (wd, wf) = (
        median(1_000_000, "requests_in_flight_mean"),
        median(5, "requests_in_flight_mean"),
    );
    assert!(wf <= 6.0, "five: {wf} waiting");
    let (rd, rf) = (
        median(1_000_000, "produce_requests_per_s"),
        median(5, "produce_requests_per_s"),
    );
    assert!(
        wd > 5.0 || rd > 1.2 * rf,
        "default {wd} waiting, {rd} req/s; five {rf} req/s"
    );
    // The catalogue's verdict: never DOES NOT HOLD for this shape (the machine may not hold
    // 20k msg/s with the default window, which the verdict then says).
    let v = &r["verdicts"][0];
    assert_eq!(v["finding"], "inflight-latency");
    assert_ne!(v["outcome"], "does-not-hold", "{v}");
    // CANNOT TELL only with a measured reason: the rate not sustained, or the mechanism's
    // reps disagreeing (CI on 2d2856e: waitresp_cnt 893, 0 and 420 in three reps of the
    // default window, every stats emit of the second at 0 while its p99 was 265 ms).
    if v["outcome"] == "cannot-tell" {
        let reason = v["reason"].as_str().unwrap();
        assert!(
            reason.contains("sustain")
                || reason.contains("the reps disagree")
                || reason.contains("the ranges overlap"),
            "{v}"
        );
    }
    // Every run's topic is listed and gone.
    assert_eq!(r["topics"].as_array().unwrap().len(), 6);
    assert_eq!(topics_with_prefix("kgap.probe-inflight-latency."), before);
}

#[test]
fn batch_consume_on_the_real_broker_takes_every_message_and_names_the_threads() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    require_broker();
    let before = topics_with_prefix("kgap.probe-batch-consume.");
    let b = brokers();
    let (out, _) = probe(
        "probe-batch-consume",
        &[
            "--brokers",
            &b,
            "--api",
            "poll,fixed",
            "--backoff-ms",
            "10",
            "--messages",
            "200000",
            "--reps",
            "1",
            "--duration",
            "60s",
            "--json",
        ],
    );
    let r = json_of(&out);
    assert_eq!(r["probe"], "probe-batch-consume");
    assert_eq!(r["schema"], "kgap.probe-result");
    assert_eq!(r["prefill"]["messages"], 200000);
    assert_eq!(r["payload"]["sha256"].as_str().unwrap().len(), 64);
    let points = r["points"].as_array().unwrap();
    assert_eq!(points.len(), 2);
    for p in points {
        assert_eq!(p["client"], "librdkafka");
        assert_eq!(p["params"]["fetch.queue.backoff.ms"], 10);
        let run = &p["runs"][0];
        // Exact accounting: the window holds every message after the 10% warmup, once.
        assert_eq!(run["messages"], 180000, "{}: {run}", p["params"]["api"]);
        let names: Vec<&str> = run["threads"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|t| t["name"].as_str())
            .collect();
        assert!(names.contains(&"kgap-app"), "{names:?}");
        assert!(
            run["broker_thread"]
                .as_str()
                .unwrap()
                .starts_with("rdk:broker"),
            "{run}"
        );
        assert!(run["app_cores"].as_f64().unwrap() > 0.0, "{run}");
    }
    assert_eq!(points[0]["params"]["api"], "poll");
    assert_eq!(points[1]["params"]["api"], "batch-fixed");
    assert_eq!(points[1]["params"]["batch"], 500);
    // Both findings, decided by the catalogue; one rep decides nothing.
    let verdicts = r["verdicts"].as_array().unwrap();
    let ids: Vec<&str> = verdicts
        .iter()
        .filter_map(|v| v["finding"].as_str())
        .collect();
    assert_eq!(ids, ["batch-consume", "librdkafka-broker-thread-limit"]);
    for v in verdicts {
        assert_eq!(v["outcome"], "cannot-tell", "{v}");
        assert!(v["reason"].as_str().unwrap().contains("--reps 3"), "{v}");
        assert!(v["checks"].as_array().unwrap().len() >= 2, "{v}");
    }
    let topic = r["topics"][0].as_str().unwrap();
    assert!(topic.starts_with("kgap.probe-batch-consume."), "{topic}");
    assert!(!topic_exists(topic), "{topic} still exists");
    assert_eq!(topics_with_prefix("kgap.probe-batch-consume."), before);
}

#[test]
fn batch_consume_on_the_mock_says_so_and_refuses_bad_usage() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let (out, _) = probe(
        "probe-batch-consume",
        &[
            "--api",
            "poll,fixed",
            "--backoff-ms",
            "10",
            "--messages",
            "40000",
            "--partitions",
            "2",
            "--reps",
            "1",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("mock cluster"), "{text}");
    assert!(
        text.contains("verdict batch-consume: CANNOT TELL"),
        "{text}"
    );
    assert!(
        text.contains("verdict librdkafka-broker-thread-limit: CANNOT TELL"),
        "{text}"
    );
    // The probe's own lines within 100 columns (the kit's payload line carries a 64-digit hash).
    assert!(
        text.lines()
            .filter(|l| !l.starts_with("payload pool:"))
            .all(|l| l.chars().count() <= 100),
        "{text}"
    );
    for args in [
        &["--api", "poll,bogus"][..],
        &["--api", "poll,,fixed"][..],
        &["--rate", "0"][..],
        &["--rate", "1000", "--rdkafka-performance", "/bin/true"][..],
        &["--rdkafka-performance", "/no/such/rdkafka_performance"][..],
        &["--rate", "1000", "--size", "4"][..],
    ] {
        let (out, _) = probe("probe-batch-consume", args);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(!out.stderr.is_empty());
    }
    let (out, _) = probe("probe-batch-consume", &["--help"]);
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(help.contains("librdkafka-broker-thread-limit"), "{help}");
    let examples = help.split("examples:").nth(1).unwrap();
    assert!(
        examples
            .lines()
            .filter(|l| !l.trim().is_empty())
            .all(|l| l.chars().count() <= 80 && l.contains('#')),
        "{examples}"
    );
}

#[test]
fn batch_consume_naive_wrapper_waits_as_the_arithmetic_says_and_fixed_does_not() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    require_broker();
    let before = topics_with_prefix("kgap.probe-batch-consume.");
    let b = brokers();
    let (out, _) = probe(
        "probe-batch-consume",
        &[
            "--brokers",
            &b,
            "--rate",
            "1000",
            "--api",
            "fixed,naive",
            "--warmup",
            "500ms",
            "--window",
            "2s",
            "--reps",
            "1",
            "--json",
        ],
    );
    let r = json_of(&out);
    let at = |api: &str| {
        r["points"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["params"]["api"] == api)
            .map(|p| p["runs"][0].clone())
            .unwrap()
    };
    let (naive, fixed) = (at("batch-naive"), at("batch-fixed"));
    // 500 messages at 1000/s take 500 ms > the 100 ms timeout: each call returns at the
    // timeout, so a message waits 0–100 ms: p50 ≈ 50, p99 ≈ 99 (plus transport).
    assert_eq!(naive["expected_wait_ms_p50"], 50.0);
    let p50 = naive["e2e_ms_p50"].as_f64().unwrap();
    let p99 = naive["e2e_ms_p99"].as_f64().unwrap();
    // Lower bounds: the wrapper's own wait, which load only lengthens (a wrapper that does
    // not wait for its batch is under them).
    assert!(p50 >= 30.0, "naive p50 {p50} ms");
    assert!(p99 >= 80.0, "naive p99 {p99} ms");
    // The fixed wrapper returns what is there: the same transport without the naive one's
    // wait, so at least half the expected wait apart (seen: ~50 against under 20 ms on a
    // quiet machine). Load adds to both runs' transport; a fixed wrapper that also waits
    // for a full batch is level with the naive one and fails this.
    let fixed_p50 = fixed["e2e_ms_p50"].as_f64().unwrap();
    assert!(
        p50 - fixed_p50 >= 25.0,
        "naive p50 {p50} ms, fixed p50 {fixed_p50} ms"
    );
    // Every message timed was one the window sent; how many this machine sent is reported.
    for run in [&naive, &fixed] {
        let timed = num(run, "e2e_count");
        assert!(timed > 0.0 && timed <= num(run, "window_sent"), "{run}");
        assert!(
            (num(run, "window_sent") - window_sent(run)).abs()
                <= 1e-3 * num(run, "window_sent") + 1.0,
            "{run}"
        );
    }
    let v = &r["verdicts"][0];
    assert_eq!(v["finding"], "batch-wrapper-latency");
    assert_eq!(v["outcome"], "cannot-tell", "one rep decides nothing: {v}");
    assert_eq!(topics_with_prefix("kgap.probe-batch-consume."), before);
}
