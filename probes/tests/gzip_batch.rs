//! Integration tests of probe-gzip-batch, end to end, as a user runs it.
//!
//! The broker test needs the local Apache Kafka of `scripts/kafka up` (KGAP_TEST_BROKERS points
//! elsewhere); it fails, never skips, when the broker is not there. Runs are small: other
//! engineers share the broker and the machine. The Java side is tested in tests/java.rs.

use rdkafka::config::ClientConfig;
use rdkafka::producer::{BaseProducer, Producer};
use serde_json::Value;
use std::process::Output;
use std::sync::Mutex;
use std::time::Duration;

mod common;
use common::{brokers, json_of, stderr};

/// The probe measures throughput: one run at a time even though tests are threads.
static SERIAL: Mutex<()> = Mutex::new(());

const PREFIX: &str = "kgap.probe-gzip-batch.";

fn probe(args: &[&str]) -> Output {
    common::run(env!("CARGO_BIN_EXE_probe-gzip-batch"), args)
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

fn point<'a>(doc: &'a Value, client: &str, level: i64, batch: u64) -> &'a Value {
    doc["points"]
        .as_array()
        .expect("points")
        .iter()
        .find(|p| {
            p["client"] == client
                && p["params"]["compression.level"] == level
                && p["params"]["batch.size"] == batch
        })
        .unwrap_or_else(|| panic!("no {client} point level {level} batch.size {batch}"))
}

fn verdict<'a>(doc: &'a Value, id: &str) -> &'a Value {
    doc["verdicts"]
        .as_array()
        .expect("verdicts")
        .iter()
        .find(|v| v["finding"] == id)
        .unwrap_or_else(|| panic!("no verdict {id} in {}", doc["verdicts"]))
}

#[test]
fn librdkafkas_gzip_input_per_batch_tracks_batch_size_on_the_real_broker() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let before = gzip_topics();
    let size = 1024u64;
    // Three reps of two points, short windows: the input half is deterministic, so its
    // checks must pass whatever the machine's load; the rates may or may not be apart.
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
        "3",
        "--duration",
        "2s",
        "--warmup-messages",
        "3000",
        "--java-equivalent",
        "4096",
        "--json",
        "--quiet",
    ]);
    let doc = json_of(&out);
    assert_eq!(doc["schema"], "kgap.probe-result");
    assert_eq!(doc["broker"]["kind"], "external");
    assert_eq!(doc["order"]["runs"].as_array().map(Vec::len), Some(6));
    let mut inputs = Vec::new();
    for batch in [4096u64, 32768] {
        let p = point(&doc, "librdkafka", -1, batch);
        assert_eq!(p["params"]["compression.type"], "gzip");
        assert_eq!(p["runs"].as_array().map(Vec::len), Some(3));
        for run in p["runs"].as_array().unwrap() {
            for key in [
                "input_bytes_per_batch",
                "wire_bytes_per_batch",
                "compression_ratio",
            ] {
                assert!(run[key].is_number(), "run lacks {key}: {run}");
            }
            assert_eq!(run["delivery_errors"], 0, "{run}");
            let input = run["input_bytes_per_batch"].as_f64().unwrap();
            let wire = run["wire_bytes_per_batch"].as_f64().unwrap();
            let ratio = run["compression_ratio"].as_f64().unwrap();
            // batch.size limits the uncompressed input (one message of slack: librdkafka
            // always takes a batch's first message).
            assert!(
                input <= (batch + size) as f64,
                "batch.size {batch}: {input} B in a batch"
            );
            assert!(input >= size as f64, "batch.size {batch}: {input} B");
            // Word-list text compresses: fewer bytes on the wire than payload bytes.
            assert!(
                ratio > 1.5 && wire < input,
                "batch.size {batch}: ratio {ratio}"
            );
            assert!(
                run["compressing_thread_cores"].as_f64().unwrap() > 0.0,
                "{run}"
            );
            assert!(run["topic"].as_str().unwrap().starts_with(PREFIX), "{run}");
        }
        inputs.push(p["median"]["input_bytes_per_batch"].as_f64().unwrap());
    }
    // 8x the batch.size: several times the input per batch.
    assert!(
        inputs[1] >= 3.0 * inputs[0],
        "input per batch did not track batch.size: {inputs:?}"
    );
    // The catalogue decides, check by check: the input half passed in every rep.
    let v = verdict(&doc, "gzip-batch-semantics");
    assert!(
        ["holds", "does-not-hold", "cannot-tell"].contains(&v["outcome"].as_str().unwrap()),
        "{v}"
    );
    let checks = v["checks"].as_array().expect("checks");
    // Five with the compressing thread at a core at both sizes; four where it was short of
    // one, the last decided by its CPU per input byte instead of the rates.
    let by_cost = checks.len() == 4
        && checks[3]["detail"]
            .as_str()
            .unwrap()
            .starts_with("decided by cost per input byte");
    assert!(checks.len() == 5 || by_cost, "{v}");
    for c in &checks[..2] {
        assert_eq!(c["state"], "passed", "{c}");
    }
    let eq = &v["evidence"]["java_equivalent"];
    assert_eq!(eq["java_batch_size"], 4096);
    assert_eq!(eq["measured"], false);
    assert!(eq["librdkafka_batch_size"].as_u64().unwrap() > 4096, "{eq}");
    // Java did not run: its half is not judged, and never holds.
    let j = verdict(&doc, "java-gzip-batch-closing");
    assert_eq!(j["outcome"], "cannot-tell", "{j}");
    assert!(
        j["reason"].as_str().unwrap().contains("--client both"),
        "{j}"
    );
    // Every run's topic is listed, and every one is gone.
    let topics: Vec<String> = doc["topics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap().to_string())
        .collect();
    assert_eq!(topics.len(), 6, "one fresh topic per run: {topics:?}");
    let after = gzip_topics();
    let left: Vec<&String> = after.iter().filter(|t| !before.contains(t)).collect();
    assert!(left.is_empty(), "topics left behind: {left:?}");
    assert!(topics.iter().all(|t| !after.contains(t)));
}

#[test]
fn embedded_mock_run_says_so_and_prints_both_verdicts_and_java_equivalent() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("gz");
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
        "2s",
        "--warmup-messages",
        "2000",
        "--java-equivalent",
        "3000",
        "--quiet",
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("mock"), "{text}");
    assert!(
        text.contains("verdict gzip-batch-semantics: CANNOT TELL"),
        "one rep: {text}"
    );
    assert!(
        text.contains("verdict java-gzip-batch-closing: CANNOT TELL"),
        "{text}"
    );
    assert!(
        text.contains("java equivalent: a Java batch.size of 3000 B"),
        "{text}"
    );
    assert!(text.contains("not measured:"), "{text}");
    // The kit's payload line carries a 64-digit SHA-256: the probe's own lines fit.
    let wide: Vec<&str> = text
        .lines()
        .filter(|l| l.chars().count() > 100 && !l.starts_with("payload pool:"))
        .collect();
    assert!(wide.is_empty(), "lines over 100 columns: {wide:#?}");
    // The kit's exports, and the two charts with a line each.
    for f in ["result.json", "runs.csv", "report.txt"] {
        assert!(out_dir.join(f).is_file(), "{f}");
    }
    for f in ["gzip-batch-rate.svg", "gzip-batch-ratio.svg"] {
        let svg = std::fs::read_to_string(out_dir.join(f)).unwrap();
        assert!(
            svg.starts_with("<svg") && svg.contains("level 1"),
            "{f}: {svg}"
        );
    }
    let csv = std::fs::read_to_string(out_dir.join("runs.csv")).unwrap();
    assert_eq!(
        csv.lines().count(),
        3,
        "a header and one row per run: {csv}"
    );
    assert!(
        csv.lines()
            .next()
            .unwrap()
            .contains("input_bytes_per_batch"),
        "{csv}"
    );
}

#[test]
fn bad_input_is_exit_2_with_a_reason() {
    for args in [
        &["--batch-size", "0"][..],
        &["--batch-size", ""][..],
        &["--batch-size", "16384,,32768"][..],
        &["--batch-size", "2000000"][..],
        &["--codec", "brotli"][..],
        &["--level", "13"][..],
        &["--level", "x"][..],
        &["--client", "both"][..],
    ] {
        let out = probe(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(!out.stderr.is_empty(), "{args:?}");
    }
    // A codec this build lacks: exit 2 naming builtin.features, before any broker is touched.
    let features = ClientConfig::new()
        .create_native_config()
        .unwrap()
        .get("builtin.features")
        .unwrap();
    for codec in ["zstd", "lz4", "snappy"] {
        if features.split(',').any(|f| f == codec) {
            continue;
        }
        let out = probe(&["--codec", codec, "--brokers", "127.0.0.1:1"]);
        assert_eq!(out.status.code(), Some(2), "{codec}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(
            err.contains(&format!("no {codec} codec")) && err.contains("builtin.features"),
            "{err}"
        );
        assert!(
            !err.contains("127.0.0.1:1"),
            "refused before the broker: {err}"
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
    assert!(help.contains("java-gzip-batch-closing"));
    let examples = help.split("examples:").nth(1).expect("examples:");
    for l in examples.lines().filter(|l| !l.trim().is_empty()) {
        assert!(l.chars().count() <= 80, "example over 80 columns: {l}");
    }
    assert!(help.trim_end().lines().last().unwrap().contains('#'));
}
