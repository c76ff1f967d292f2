//! Integration tests of probe-gzip-batch, end to end, as a user runs it.
//!
//! The broker test needs the local Apache Kafka of `scripts/kafka up` (KGAP_TEST_BROKERS points
//! elsewhere); it fails, never skips, when the broker is not there. Runs are small: other
//! engineers share the broker and the machine.

use rdkafka::config::ClientConfig;
use rdkafka::producer::{BaseProducer, Producer};
use serde_json::Value;
use std::process::{Command, Output};
use std::sync::Mutex;
use std::time::Duration;

mod common;
use common::{brokers, json_of};

/// The probe measures throughput: one run at a time even though tests are threads.
static SERIAL: Mutex<()> = Mutex::new(());

const PREFIX: &str = "kgap.probe-gzip-batch.";

fn probe(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_probe-gzip-batch"))
        .args(args)
        .output()
        .expect("probe runs")
}

/// This process's topics with the probe's prefix, or a clear failure without a broker.
fn gzip_topics() -> Vec<String> {
    let p: BaseProducer = ClientConfig::new()
        .set("bootstrap.servers", brokers())
        .create()
        .expect("producer");
    let md = p
        .client()
        .fetch_metadata(None, Duration::from_secs(10))
        .unwrap_or_else(|e| {
            panic!(
                "no Kafka broker at {} ({e}): run scripts/test, or scripts/kafka up first",
                brokers()
            )
        });
    let mut v: Vec<String> = md
        .topics()
        .iter()
        .map(|t| t.name().to_string())
        .filter(|n| n.starts_with(PREFIX))
        .collect();
    v.sort();
    v
}

fn setting<'a>(doc: &'a Value, level: i64, batch: u64) -> &'a Value {
    doc["settings"]
        .as_array()
        .expect("settings")
        .iter()
        .find(|s| s["params"]["compression.level"] == level && s["params"]["batch.size"] == batch)
        .unwrap_or_else(|| panic!("no setting level {level} batch.size {batch}"))
}

#[test]
fn librdkafkas_gzip_input_per_batch_tracks_batch_size_on_the_real_broker() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let before = gzip_topics();
    let size = 1024u64;
    let out = probe(&[
        "--brokers",
        &brokers(),
        "--batch-size",
        "4096,32768",
        "--level",
        "-1",
        "--partitions",
        "1",
        "--reps",
        "1",
        "--duration",
        "1s",
        "--warmup-messages",
        "3000",
        "--java-equivalent",
        "4096",
        "--json",
        "--quiet",
    ]);
    let doc = json_of(&out);
    assert_eq!(doc["broker"]["kind"], "external");
    let v = &doc["verdict"];
    assert_eq!(v["finding"], "gzip-batch-semantics");
    let mut inputs = Vec::new();
    for batch in [4096u64, 32768] {
        let s = setting(&doc, -1, batch);
        assert_eq!(s["params"]["compression.type"], "gzip");
        let run = &s["runs"][0];
        for key in [
            "input_bytes_per_batch",
            "wire_bytes_per_batch",
            "compression_ratio",
        ] {
            assert!(run[key].is_number(), "run lacks {key}: {run}");
            assert!(s["median"][key].is_number(), "median lacks {key}");
        }
        assert!(run["delivery_errors"] == 0, "{run}");
        let input = run["input_bytes_per_batch"].as_f64().unwrap();
        let wire = run["wire_bytes_per_batch"].as_f64().unwrap();
        let ratio = run["compression_ratio"].as_f64().unwrap();
        // batch.size limits the uncompressed input (one message of slack, as librdkafka
        // lets a batch overshoot by one record).
        assert!(
            input <= (batch + size) as f64,
            "batch.size {batch}: {input} B of input per batch"
        );
        assert!(input >= size as f64, "batch.size {batch}: {input} B");
        // Word-list text compresses: fewer bytes on the wire than payload bytes.
        assert!(
            ratio > 1.5 && wire < input,
            "batch.size {batch}: ratio {ratio}"
        );
        assert!(run["compressing_thread_cores"].as_f64().unwrap() > 0.0);
        inputs.push(input);
    }
    // 8x the batch.size: several times the input per batch.
    assert!(
        inputs[1] >= 3.0 * inputs[0],
        "input per batch did not track batch.size: {inputs:?}"
    );
    let eq = &v["evidence"]["java_equivalent"];
    assert_eq!(eq["java_batch_size"], 4096);
    assert!(eq["librdkafka_batch_size"].as_u64().unwrap() > 4096, "{eq}");
    // Every topic of the run is gone.
    let after = gzip_topics();
    let left: Vec<&String> = after.iter().filter(|t| !before.contains(t)).collect();
    assert!(left.is_empty(), "topics left behind: {left:?}");
    assert!(!after.contains(&doc["topic"].as_str().unwrap().to_string()));
}

#[test]
fn embedded_mock_run_says_so_and_prints_verdict_and_java_equivalent() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let out = probe(&[
        "--batch-size",
        "4096,16384",
        "--level",
        "1",
        "--partitions",
        "1",
        "--reps",
        "1",
        "--duration",
        "1s",
        "--warmup-messages",
        "2000",
        "--java-equivalent",
        "3000",
        "--quiet",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("mock"), "{text}");
    assert!(text.contains("verdict (gzip-batch-semantics)"), "{text}");
    assert!(
        text.contains("java equivalent: a Java batch.size of 3000 B"),
        "{text}"
    );
    assert!(text.contains("not measured:"), "{text}");
}

#[test]
fn bad_input_is_exit_2_with_a_reason() {
    for args in [
        &["--batch-size", "0"][..],
        &["--batch-size", ""][..],
        &["--batch-size", "2000000"][..],
        &["--codec", "brotli"][..],
        &["--level", "13"][..],
        &["--level", "x"][..],
    ] {
        let out = probe(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(!out.stderr.is_empty(), "{args:?}");
    }
    // A codec this build lacks: exit 2 naming builtin.features, before any broker is touched.
    let features = ClientConfig::new()
        .create_native_config()
        .unwrap()
        .get("builtin.features")
        .unwrap();
    if !features.split(',').any(|f| f == "zstd") {
        let out = probe(&["--codec", "zstd", "--brokers", "127.0.0.1:1"]);
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("no zstd codec") && err.contains("builtin.features"),
            "{err}"
        );
    }
}

#[test]
fn help_teaches_and_ends_with_examples() {
    let out = probe(&["--help"]);
    assert!(out.status.success());
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(help.contains("uncompressed"));
    assert!(help.contains("--java-equivalent"));
    assert!(help.contains("examples:"));
    assert!(help.trim_end().lines().last().unwrap().contains('#'));
}
