//! The Java companion and probe-java-producers, end to end.
//!
//! Needs a JDK 17+ and Maven (scripts/java-companion fetches kafka-clients from Maven Central
//! on first use), and for the broker tests the local Apache Kafka of `scripts/kafka up`
//! (`scripts/test` starts it; KGAP_TEST_BROKERS points elsewhere). They fail, never skip.

use kgap_probes::java::{self, Java};
use kgap_probes::payload::{PayloadKind, Pool};
use serde_json::Value;
use std::process::{Command, Output};
use std::sync::Mutex;

mod common;
use common::{brokers, json_of, needs_brokers, stderr};

/// JVMs measure throughput: one at a time even though tests are threads.
static SERIAL: Mutex<()> = Mutex::new(());

fn probe(args: &[&str]) -> Output {
    common::run(env!("CARGO_BIN_EXE_probe-java-producers"), args)
}

#[test]
fn java_pool_is_byte_identical_to_the_rust_pool() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let java = Java::locate().expect("the Java companion builds");
    // Odd sizes too: a payload that ends mid-word (random) or mid-word of text.
    for (size, kind) in [
        (100, PayloadKind::Random),
        (1024, PayloadKind::Random),
        (10240, PayloadKind::Random),
        (7, PayloadKind::Random),
        (1024, PayloadKind::Text),
        (13, PayloadKind::Text),
    ] {
        let rust = Pool::new(size, kind).sha256_hex();
        let jv = java::pool_sha256(&java, size, kind).expect("pool-sha runs");
        assert_eq!(jv, rust, "pool of {size} B {kind}: Java and Rust differ");
    }
}

#[test]
fn companion_refuses_bad_settings_with_exit_2() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let java = Java::locate().expect("the Java companion builds");
    for args in [
        vec!["kgap.mode=nope"],
        vec!["kgap.mode=pool-sha", "kgap.size=0"],
        vec!["kgap.mode=pool-sha", "kgap.kind=binary"],
        vec!["noequals"],
        vec!["kgap.mode=produce"],
    ] {
        let out = Command::new(&java.java)
            .args(["-cp", &java.classpath, "Companion"])
            .args(&args)
            .output()
            .expect("java runs");
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(
            stderr(&out).starts_with("ERROR "),
            "{args:?}: {}",
            stderr(&out)
        );
        assert!(out.stdout.is_empty(), "{args:?}: no RESULT on failure");
    }
}

#[test]
fn probe_without_brokers_says_what_it_needs() {
    needs_brokers(
        env!("CARGO_BIN_EXE_probe-java-producers"),
        &["--producers", "1", "--reps", "1"],
    );
    let out = probe(&["--brokers", &brokers(), "--buffer-memory", "2X"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let out = probe(&["--brokers", &brokers(), "--heap", "lots"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

#[test]
fn short_real_run_measures_and_keeps_the_gc_log() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().expect("tempdir");
    let out_dir = dir.path().join("jp");
    let out = probe(&[
        "--brokers",
        &brokers(),
        "--producers",
        "2",
        "--buffer-memory",
        "default,2M",
        "--reps",
        "1",
        "--duration",
        "1s",
        "--warmup-messages",
        "5000",
        "--heap",
        "256m",
        "--json",
        "-q",
        "--out",
        out_dir.to_str().expect("utf-8 path"),
    ]);
    assert!(out.status.success(), "probe failed: {}", stderr(&out));
    let r: Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    assert_eq!(r["probe"], "probe-java-producers");
    assert_eq!(r["broker"]["kind"], "external");
    assert_eq!(
        r["payload_sha256"],
        Pool::new(100, PayloadKind::Random).sha256_hex()
    );
    let settings = r["settings"].as_array().expect("settings");
    assert_eq!(settings.len(), 2);
    for s in settings {
        let run = &s["runs"][0];
        assert!(run["msgs_per_s"].as_f64().unwrap() > 1000.0, "{run}");
        assert!(run["messages"].as_u64().unwrap() > 0, "{run}");
        assert_eq!(run["delivery_errors"], 0, "{run}");
        assert!(run["send_to_ack_ms_p99"].as_f64().unwrap() > 0.0, "{run}");
        assert!(
            run["send_to_ack_ms_p99"].as_f64() >= run["send_to_ack_ms_p50"].as_f64(),
            "{run}"
        );
        assert!(run["process_cpu_s"].as_f64().unwrap() > 0.0, "{run}");
        assert!(run["rss_mb"].as_f64().unwrap() > 10.0, "{run}");
        // The warmup alone makes young GCs at 256m: the GC log was written and analysed.
        assert!(run["heap_after_young_mean_pct"].is_number(), "{run}");
        // The bound is a hard cap: two producers never hold more than 2 × 2 MiB of batches.
        if s["params"]["buffer.memory"] == 2097152 {
            let used = run["buffer_used_mb_end"].as_f64().unwrap();
            assert!(
                used <= 2.0 * 2.097152,
                "{used} MB in use under a 2 MiB bound: {run}"
            );
        }
    }
    assert!(r["verdict"]["summary"].as_str().unwrap().len() > 20);
    // Every run's files are kept: the GC log, the RESULT line, the command.
    for sub in ["bmdefault-k2-rep1", "bm2097152-k2-rep1"] {
        let d = out_dir.join(sub);
        let gc = std::fs::read_to_string(d.join("gc.log")).expect("gc.log kept");
        assert!(gc.contains("Using G1"), "{sub}: not a G1 unified log");
        let line = std::fs::read_to_string(d.join("result.line")).expect("result.line");
        assert!(line.starts_with("RESULT {"), "{line}");
        assert!(d.join("companion.cmd").is_file());
    }
    assert!(out_dir.join("result.json").is_file());
    assert!(out_dir.join("runs.csv").is_file());
}

#[test]
fn a_setting_kafka_clients_refuses_is_exit_2() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let out = probe(&[
        "--brokers",
        &brokers(),
        "--producers",
        "1",
        "--buffer-memory",
        "default",
        "--reps",
        "1",
        "-J",
        "acks=banana",
        "-q",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("acks"), "{}", stderr(&out));
}

/// The captured companion runs of fixtures/gc/companion (K=2, 16 and 32 producers, default and
/// 2 MB buffer.memory): the probe's own reading of a RESULT line and its GC log.
#[test]
fn captured_companion_runs_read_as_the_probe_reads_them() {
    use kgap_analyzers::gc::{analyze_gc_logs, GcInput, GcLogOptions};
    use kgap_probes::java_producers::{figures, verdict};
    use kgap_probes::result::SettingResult;
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/gc/companion");
    let read = |name: &str| {
        let line = std::fs::read_to_string(dir.join(format!("{name}-jdk17.result"))).unwrap();
        let (r, _) = java::parse_result(&line).expect("a RESULT line");
        let log = std::fs::File::open(dir.join(format!("{name}-jdk17.log"))).unwrap();
        let gc = analyze_gc_logs(
            vec![GcInput {
                name: name.into(),
                reader: Box::new(log),
            }],
            &GcLogOptions::default(),
            None,
        )
        .unwrap();
        assert_eq!(
            r.payload_sha256.as_deref(),
            Some(Pool::new(100, PayloadKind::Random).sha256_hex().as_str())
        );
        figures(&r, &gc)
    };
    let setting = |name: &str, k: u32, bm: Option<u64>| {
        let mut p = serde_json::Map::new();
        p.insert(
            "buffer.memory".into(),
            bm.map_or("default".into(), Value::from),
        );
        p.insert("producers".into(), k.into());
        let mut s = SettingResult::new(p);
        s.push_run(&read(name));
        s
    };
    let pair = |k: u32, default: &str, bounded: &str, heap: &str| {
        verdict(
            &[
                setting(default, k, None),
                setting(bounded, k, Some(2 << 20)),
            ],
            heap,
        )
    };
    // The probe's default point on a quiet 2-core machine: K=2, the scaled 256m heap.
    let k2 = read("k2-default-256m");
    assert_eq!(k2.collapsed, 1, "{k2:?}");
    let k2b = read("k2-bounded-2m-256m");
    assert_eq!(k2b.collapsed, 0, "{k2b:?}");
    assert!(
        k2b.msgs_per_s > k2.msgs_per_s,
        "the bound is also faster here"
    );
    let v = pair(2, "k2-default-256m", "k2-bounded-2m-256m", "256m");
    assert!(v.holds, "{}", v.summary);
    assert!(v.summary.contains("K=2"), "{}", v.summary);
    // Had this JVM thrown OutOfMemoryError, the probe would read only its GC log.
    let log = std::fs::File::open(dir.join("k2-default-256m-jdk17.log")).unwrap();
    let gc = analyze_gc_logs(
        vec![GcInput {
            name: "k2".into(),
            reader: Box::new(log),
        }],
        &GcLogOptions::default(),
        None,
    )
    .unwrap();
    let oom = kgap_probes::java_producers::figures_out_of_memory(&gc);
    assert_eq!(
        (oom.collapsed, oom.out_of_memory, oom.msgs_per_s),
        (1, 1, 0.0)
    );
    assert_eq!(oom.full_gcs, gc.full_gcs);
    assert!(oom.gc_fraction > 0.05 && oom.gc_fraction < 1.0, "{oom:?}");
    let k16 = read("k16-default");
    assert_eq!(k16.collapsed, 1, "{k16:?}");
    assert!(k16.gc_fraction >= 0.2 && k16.full_gcs >= 1, "{k16:?}");
    assert!(k16.log_diagnoses.iter().any(|d| d == "gc-collapse"));
    let k16b = read("k16-bounded-2m");
    assert_eq!(k16b.collapsed, 0, "{k16b:?}");
    assert!(
        k16b.buffer_wait_s.unwrap() > 0.0,
        "the 2 MB bound made send() wait"
    );
    let v = pair(16, "k16-default", "k16-bounded-2m", "512m");
    assert!(v.holds, "{}", v.summary);
    // K=32 on 2 cores: the bound did not save it (G1's concurrent cycle fell behind too).
    assert_eq!(read("k32-bounded-2m").collapsed, 1);
    let v = pair(32, "k32-default", "k32-bounded-2m", "512m");
    assert!(!v.holds);
    assert!(v.summary.contains("did not remove it"), "{}", v.summary);
}

/// The companion's window recording (fixtures/jfr/companion): kgap's native JFR reader sees
/// the same socket writes as the JDK's `jfr print --json` did at capture time.
#[test]
fn captured_companion_recording_reads_like_the_jdk_reads_it() {
    use kgap_analyzers::jfr::{analyze_jfr, ReportOptions, SocketOp};
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/jfr/companion");
    let name = "produce-1m-fixed-send-buffer-jdk17";
    let expected: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join(format!("{name}.expected.json"))).unwrap(),
    )
    .unwrap();
    let f = std::fs::File::open(dir.join(format!("{name}.jfr"))).unwrap();
    let report = analyze_jfr(f, name, &ReportOptions::default()).unwrap();
    let rows = expected["socket"].as_array().unwrap();
    assert!(!rows.is_empty());
    for e in rows {
        let op = if e["op"] == "write" {
            SocketOp::Write
        } else {
            SocketOp::Read
        };
        let got = report
            .socket
            .iter()
            .find(|s| s.op == op && s.thread.as_deref() == e["thread"].as_str())
            .unwrap_or_else(|| panic!("no {op:?} row for {}", e["thread"]));
        assert_eq!(got.count, e["count"].as_u64().unwrap(), "{e}");
        assert_eq!(got.bytes_total, e["bytes_total"].as_u64().unwrap(), "{e}");
        assert_eq!(got.bytes_p50, e["bytes_p50"].as_u64().unwrap(), "{e}");
        assert_eq!(got.bytes_max, e["bytes_max"].as_u64().unwrap(), "{e}");
    }
    // The probe's reading: writes capped near twice send.buffer.bytes (the kernel doubles
    // SO_SNDBUF), far below the 1 MB batches.
    let line = std::fs::read_to_string(dir.join(format!("{name}.result"))).unwrap();
    let (r, _) = java::parse_result(&line).unwrap();
    let fig = kgap_probes::java_socket_buffers::figures(&r, &report, true);
    assert!(fig
        .socket_thread
        .unwrap()
        .contains("kafka-producer-network-thread"));
    assert!(
        fig.bytes_per_call_p50 <= 2 * 131072,
        "{}",
        fig.bytes_per_call_p50
    );
    assert!(fig.socket_calls > 100);
}

#[test]
fn socket_buffers_short_real_run_counts_socket_calls() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().expect("tempdir");
    let out_dir = dir.path().join("sb");
    let out = Command::new(env!("CARGO_BIN_EXE_probe-java-socket-buffers"))
        .args([
            "--brokers",
            &brokers(),
            "--batch-size",
            "131072",
            "--consume-size",
            "1024",
            "--consume-bytes",
            "20000000",
            "--duration",
            "1s",
            "--reps",
            "1",
            "--json",
            "-q",
            "--out",
            out_dir.to_str().expect("utf-8 path"),
        ])
        .output()
        .expect("probe runs");
    assert!(out.status.success(), "probe failed: {}", stderr(&out));
    let r: Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    let settings = r["settings"].as_array().expect("settings");
    assert_eq!(settings.len(), 4);
    for s in settings {
        let run = &s["runs"][0];
        assert!(run["msgs_per_s"].as_f64().unwrap() > 100.0, "{run}");
        assert!(run["socket_calls"].as_u64().unwrap() > 0, "{run}");
        assert!(run["bytes_per_call_p50"].as_u64().unwrap() > 0, "{run}");
    }
    // The fixed default caps a write at about twice send.buffer.bytes.
    let fixed = &settings[0]["runs"][0];
    assert_eq!(
        settings[0]["params"]["send.buffer.bytes"],
        "default (131072)"
    );
    assert!(
        fixed["bytes_per_call_max"].as_u64().unwrap() <= 2 * 131072 + 1024,
        "{fixed}"
    );
    assert!(out_dir
        .join("produce-batch-131072-default-rep1/window.jfr")
        .is_file());
    assert!(out_dir
        .join("consume-size-1024-os-rep1/window.jfr")
        .is_file());
}

#[test]
fn socket_buffers_without_brokers_is_exit_2() {
    needs_brokers(
        env!("CARGO_BIN_EXE_probe-java-socket-buffers"),
        &["--reps", "1"],
    );
}

#[test]
fn request_ceiling_runs_the_java_client_at_the_same_points() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let exe = env!("CARGO_BIN_EXE_probe-request-ceiling");
    needs_brokers(exe, &["--client", "both", "--reps", "1"]);
    let r = json_of(&common::run(
        exe,
        &[
            "--brokers",
            &brokers(),
            "--client",
            "java",
            "--batch-size",
            "16384",
            "--partitions",
            "2",
            "--reps",
            "1",
            "--duration",
            "1s",
            "--warmup-messages",
            "5000",
            "--no-diagnose",
            "--json",
            "-q",
        ],
    ));
    let settings = r["settings"].as_array().expect("settings");
    assert_eq!(settings.len(), 1, "java only: no librdkafka settings");
    assert_eq!(settings[0]["params"]["client"], "java");
    assert!(settings[0]["median"]["msgs_per_s"].as_f64().unwrap() > 100.0);
    // The Rust-only verdict has nothing to judge.
    assert_eq!(r["verdict"]["holds"], false);
}

#[test]
fn gzip_batch_measures_a_java_batchs_input_beside_librdkafkas() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let exe = env!("CARGO_BIN_EXE_probe-gzip-batch");
    needs_brokers(exe, &["--client", "java", "--reps", "1"]);
    let batch = 16384.0;
    let r = json_of(&common::run(
        exe,
        &[
            "--brokers",
            &brokers(),
            "--client",
            "both",
            "--batch-size",
            "16384",
            "--level",
            "-1",
            // One partition: a Java batch fills towards 16 KB *compressed* (≈ 80 KB of text)
            // unless linger.ms 5 closes it first, which takes under ~3k msg/s.
            "--partitions",
            "1",
            "--reps",
            "1",
            "--duration",
            "2s",
            "--warmup-messages",
            "5000",
            "--json",
            "-q",
        ],
    ));
    let settings = r["settings"].as_array().expect("settings");
    assert_eq!(settings.len(), 2, "librdkafka's point, then Java's");
    let (rdk, jv) = (&settings[0]["median"], &settings[1]["median"]);
    assert_eq!(settings[1]["params"]["client"], "java");
    assert_eq!(settings[1]["params"]["batch.size"], 16384);
    let f = |m: &Value, k: &str| m[k].as_f64().unwrap_or_else(|| panic!("{k} in {m}"));
    // librdkafka: batch.size limits the input (plus at most one message).
    assert!(f(rdk, "input_bytes_per_batch") <= batch + 1024.0, "{rdk}");
    // Java: a batch closes on its compressed size, so it holds more input than batch.size.
    assert!(f(jv, "input_bytes_per_batch") > 1.2 * batch, "{jv}");
    assert!(f(jv, "input_over_batch_size") > 1.2, "{jv}");
    assert!(f(jv, "wire_bytes_per_batch") <= batch * 1.05, "{jv}");
    let ratio = f(jv, "compression_ratio");
    assert!(
        (2.0..10.0).contains(&ratio),
        "word-list text under gzip: {jv}"
    );
    assert!(f(jv, "compressing_thread_cores") > 0.0, "{jv}");
    // The verdict carries the comparison, measured.
    let java_points = &r["verdict"]["evidence"]["java"]["points"];
    assert_eq!(
        java_points.as_array().map(Vec::len),
        Some(1),
        "{}",
        r["verdict"]
    );
    assert!(r["verdict"]["summary"]
        .as_str()
        .unwrap()
        .contains("Measured here"));
}

#[test]
fn companion_e2e_mode_paces_and_times_every_message_end_to_end() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let java = Java::locate().expect("the Java companion builds");
    let broker = kgap_probes::broker::Broker::start(Some(&brokers()), &[]).expect("broker");
    let topic = broker.create_topic("kgap-test-java-e2e", 2).expect("topic");
    let dir = tempfile::tempdir().expect("tempdir");
    let run = java::run(
        &java,
        dir.path(),
        &java::Jvm::heap("256m"),
        &[
            ("mode", "e2e".into()),
            ("topic", topic.name.clone()),
            ("partitions", "2".into()),
            ("size", "1024".into()),
            ("rate", "2000".into()),
            ("seconds", "2".into()),
            ("warmup-seconds", "0.5".into()),
        ],
        &[
            ("bootstrap.servers".into(), brokers()),
            ("acks".into(), "1".into()),
            ("linger.ms".into(), "5".into()),
        ],
        std::time::Duration::from_secs(120),
    )
    .expect("e2e runs");
    let r = &run.result;
    assert_eq!(r.mode, "e2e");
    assert_eq!(r.rate_target_per_s, Some(2000.0));
    // Paced: about 2000/s for 2 s, never a burst above the rate.
    let achieved = r.rate_achieved_per_s.unwrap();
    assert!((1000.0..=2100.0).contains(&achieved), "{r:?}");
    assert!((2000..=4200).contains(&r.messages), "{r:?}");
    // Every window message reached the consumer and was timed once.
    assert_eq!(r.e2e_missing, Some(0), "{r:?}");
    assert_eq!(r.e2e_samples, Some(r.messages), "{r:?}");
    let (p50, p99, max) = (
        r.e2e_ms_p50.unwrap(),
        r.e2e_ms_p99.unwrap(),
        r.e2e_ms_max.unwrap(),
    );
    // linger.ms 5 is a floor only for a lone message; the consumer's fetch adds its own wait.
    assert!(p50 > 0.0 && p50 <= p99 && p99 <= max, "{r:?}");
    assert!(p50 < 500.0, "a paced 2000 msg/s on a local broker: {r:?}");
    assert!(r.send_to_ack_ms_p50.unwrap() > 0.0, "{r:?}");
    assert_eq!(r.delivery_errors, Some(0), "{r:?}");
    assert_eq!(
        r.payload_sha256.as_deref(),
        Some(Pool::new(1024, PayloadKind::Random).sha256_hex().as_str())
    );
    // A payload too short for the stamp is bad usage, exit 2.
    let err = java::run(
        &java,
        dir.path(),
        &java::Jvm::heap("256m"),
        &[
            ("mode", "e2e".into()),
            ("topic", topic.name.clone()),
            ("size", "4".into()),
        ],
        &[("bootstrap.servers".into(), brokers())],
        std::time::Duration::from_secs(60),
    )
    .expect_err("size 4 cannot carry the stamp");
    assert!(
        matches!(err, kgap_probes::error::ProbeError::Usage(ref m) if m.contains("at least 8")),
        "{err:?}"
    );
}

#[test]
fn inflight_latency_runs_the_java_e2e_mode_at_the_same_points() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let r = json_of(&common::run(
        env!("CARGO_BIN_EXE_probe-inflight-latency"),
        &[
            "--brokers",
            &brokers(),
            "--client",
            "java",
            "--rates",
            "2000",
            "--linger-ms",
            "5",
            "--max-in-flight",
            "5",
            "--reps",
            "1",
            "--warmup",
            "500ms",
            "--duration",
            "1s",
            "--json",
            "-q",
        ],
    ));
    let points = r["points"].as_array().expect("points");
    assert_eq!(points.len(), 1, "java only: no librdkafka points");
    assert_eq!(points[0]["client"], "java");
    assert_eq!(points[0]["params"]["linger.ms"], 5);
    let run = &points[0]["runs"][0];
    let n = |k: &str| run[k].as_f64().unwrap_or_else(|| panic!("{k} in {run}"));
    assert_eq!(run["rate_target_per_s"], 2000);
    assert!(n("e2e_count") >= 1000.0, "{run}");
    assert_eq!(n("e2e_missing"), 0.0, "{run}");
    assert!(
        n("e2e_ms_p50") > 0.0 && n("e2e_ms_p99") >= n("e2e_ms_p50"),
        "{run}"
    );
    assert!(n("ack_ms_p50") > 0.0, "{run}");
    // librdkafka's rules have nothing to judge: the Java rows are not their evidence. Java's
    // own linger claim is judged (here: no linger.ms=0 baseline, so it cannot tell).
    let v = r["verdicts"].as_array().expect("verdicts");
    let of = |id: &str| {
        v.iter()
            .find(|v| v["finding"] == id)
            .unwrap_or_else(|| panic!("{id}"))
    };
    assert_eq!(of("inflight-latency")["outcome"], "cannot-tell");
    assert!(of("inflight-latency")["reason"]
        .as_str()
        .unwrap()
        .contains("no rate was measured"));
    assert_eq!(of("per-partition-linger")["outcome"], "cannot-tell");
    let j = of("java-per-broker-linger");
    assert_eq!(j["outcome"], "cannot-tell");
    assert!(j["reason"].as_str().unwrap().contains("Java client"), "{j}");
}
