//! probe-consumer-alloc end to end: the allocation counts per variant (deterministic enough
//! to assert), the result's structure, usage errors.

mod common;

use common::{brokers, json_of, run, stderr};
use serde_json::Value;

const EXE: &str = env!("CARGO_BIN_EXE_probe-consumer-alloc");

fn runs_of<'a>(r: &'a Value, variant: &str, allocator: &str) -> &'a Vec<Value> {
    let p = r["points"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["params"]["variant"] == variant && p["params"]["allocator"] == allocator)
        .unwrap_or_else(|| panic!("no point {variant}-{allocator}"));
    assert_eq!(p["client"], "librdkafka");
    p["runs"].as_array().unwrap()
}

fn num(f: &Value, k: &str) -> f64 {
    f[k].as_f64()
        .unwrap_or_else(|| panic!("{k} is not a number: {f}"))
}

/// Every run's allocation counts are the variant's: copying ≥ 4 per record, borrowed and
/// ring ≤ 1, on either allocator; the other figures are there and sane.
fn check_counts(r: &Value, allocators: &[&str]) {
    for a in allocators {
        for (variant, lo, hi) in [
            ("copying", 4.0, 100.0),
            ("borrowed", 0.0, 1.0),
            ("ring", 0.0, 1.0),
        ] {
            for f in runs_of(r, variant, a) {
                assert_eq!(f["allocations_counted"], true, "{f}");
                let per = num(f, "allocations_per_record");
                assert!(
                    per >= lo && per <= hi,
                    "{variant}-{a}: {per} allocations/record"
                );
                assert!(
                    num(f, "records") > 1000.0 && num(f, "msgs_per_s") > 0.0,
                    "{f}"
                );
                assert!(num(f, "processing_p50_us") > 0.0, "{f}");
                assert!(
                    num(f, "processing_p99_us") >= num(f, "processing_p50_us"),
                    "{f}"
                );
                assert!(f["rss"]["samples"].as_u64().unwrap() >= 1, "{f}");
                assert_eq!(f["bad_records"], 0);
                assert_eq!(f["stray_messages"], 0);
            }
        }
    }
    // The copying pipeline asks for far more bytes per record than the ring.
    let bytes = |v: &str| {
        num(
            &runs_of(r, v, allocators[0])[0],
            "bytes_allocated_per_record",
        )
    };
    assert!(bytes("copying") > 4.0 * 256.0, "{}", bytes("copying"));
    assert!(bytes("ring") < 16.0, "{}", bytes("ring"));
}

#[test]
fn on_the_mock_copying_allocates_per_record_and_borrowed_and_ring_do_not() {
    let out = run(
        EXE,
        &[
            "--reps",
            "1",
            "--partitions",
            "2",
            "--messages",
            "60000",
            "--no-perf",
            "--json",
            "-q",
        ],
    );
    let r = json_of(&out);
    assert_eq!(r["probe"], "probe-consumer-alloc");
    assert_eq!(r["broker"]["kind"], "embedded-mock");
    assert_eq!(
        r["points"].as_array().unwrap().len(),
        6,
        "3 variants × 2 allocators"
    );
    assert_eq!(r["payload"]["kind"], "json");
    assert_eq!(r["payload"]["sha256"].as_str().unwrap().len(), 64);
    assert!(r["topics"][0]
        .as_str()
        .unwrap()
        .starts_with("kgap.probe-consumer-alloc."));
    check_counts(&r, &["system", "mimalloc"]);
    // One rep decides nothing: both verdicts are there and say why.
    let v = r["verdicts"].as_array().unwrap();
    let ids: Vec<&str> = v.iter().map(|v| v["finding"].as_str().unwrap()).collect();
    assert_eq!(
        ids,
        ["consumer-allocation-pattern", "allocator-eases-not-fixes"]
    );
    for v in v {
        assert_eq!(v["outcome"], "cannot-tell", "{v}");
        assert!(v["checks"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["detail"].as_str().unwrap().contains("--reps 3")));
    }
}

#[test]
fn on_kafka_the_counts_hold_and_the_topic_is_deleted() {
    let b = brokers();
    let out = run(
        EXE,
        &[
            "--brokers",
            &b,
            "--reps",
            "1",
            "--allocators",
            "system",
            "--partitions",
            "2",
            "--messages",
            "60000",
            "--duration",
            "3s",
            "--json",
            "-q",
        ],
    );
    let r = json_of(&out);
    check_counts(&r, &["system"]);
    let f = &runs_of(&r, "copying", "system")[0];
    // perf measured, or says why not.
    assert!(
        f["perf"].is_object() || f["perf_not_measured"].is_string(),
        "{f}"
    );
    assert!(num(f, "pipeline_cpu_s_per_million") > 0.0, "{f}");
    let topic = r["topics"][0].as_str().unwrap();
    assert!(topic.starts_with("kgap.probe-consumer-alloc."));
    assert!(
        !topic_exists(&b, topic),
        "the probe left its topic {topic} behind"
    );
}

fn topic_exists(brokers: &str, name: &str) -> bool {
    use rdkafka::consumer::{BaseConsumer, Consumer};
    let c: BaseConsumer = rdkafka::ClientConfig::new()
        .set("bootstrap.servers", brokers)
        .create()
        .expect("a metadata client");
    let md = c
        .fetch_metadata(None, std::time::Duration::from_secs(10))
        .expect("metadata");
    md.topics().iter().any(|t| t.name() == name)
}

#[test]
fn bad_usage_is_exit_2_and_help_ends_with_examples() {
    for args in [
        &["--variants", "zero-copy"][..],
        &["--allocators", "jemalloc"],
        &["--size", "50"],
        &["--variants", "copying,,ring"],
        &["--partitions", "0"],
    ] {
        let out = run(EXE, args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
    }
    let help = run(EXE, &["--help"]);
    let text = String::from_utf8_lossy(&help.stdout);
    assert!(
        text.trim_end()
            .lines()
            .last()
            .unwrap()
            .contains("jq .verdicts"),
        "{text}"
    );
    assert!(text.contains("examples:") && text.contains("exit status"));
}

#[test]
fn paced_runs_keep_the_input_rate() {
    let out = run(
        EXE,
        &[
            "--rate",
            "20000",
            "--variants",
            "copying",
            "--allocators",
            "system",
            "--reps",
            "1",
            "--partitions",
            "2",
            "--messages",
            "30000",
            "--no-perf",
            "--json",
            "-q",
        ],
    );
    let r = json_of(&out);
    let f = &runs_of(&r, "copying", "system")[0];
    assert_eq!(f["rate_per_s"], 20000);
    let rate = num(f, "msgs_per_s");
    // An absolute schedule: the rate on average, bursts after a stall included.
    assert!(
        (14_000.0..=30_000.0).contains(&rate),
        "{rate} msg/s at --rate 20000"
    );
    assert!(num(f, "allocations_per_record") >= 4.0, "{f}");
}
