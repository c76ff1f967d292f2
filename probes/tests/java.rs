//! The Java companion, probe-java-producers and probe-java-socket-buffers, end to end.
//!
//! Needs a JDK 17+ and Maven (scripts/java-companion fetches kafka-clients from Maven Central
//! on first use), and for the broker tests the local Apache Kafka of `scripts/kafka up`
//! (`scripts/test` starts it; KGAP_TEST_BROKERS points elsewhere). They fail, never skip.

use kgap_probes::kit::java::{self, Java};
use kgap_probes::kit::payload::{PayloadKind, Pool};
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
        r["payload"]["sha256"],
        Pool::new(100, PayloadKind::Random).sha256_hex()
    );
    let points = r["points"].as_array().expect("points");
    assert_eq!(points.len(), 2);
    for p in points {
        assert_eq!(p["client"], "java", "{p}");
        let run = &p["runs"][0];
        common::assert_rate_of_window(run);
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
        assert!(run["heap_after_young_share"].is_number(), "{run}");
        assert!(run["heap_after_young_mean_share"].is_number(), "{run}");
        assert!(run["gc_share_window"].as_f64().unwrap() >= 0.0, "{run}");
        assert!(
            run["topic"]
                .as_str()
                .unwrap()
                .contains("probe-java-producers"),
            "{run}"
        );
        // The bound is a hard cap: two producers never hold more than 2 × 2 MiB of batches.
        if p["params"]["buffer.memory"] == 2097152 {
            let used = run["buffer_used_mb_end"].as_f64().unwrap();
            assert!(
                used <= 2.0 * 2.097152,
                "{used} MB in use under a 2 MiB bound: {run}"
            );
        } else {
            assert_eq!(p["params"]["buffer.memory"], "default");
        }
    }
    // One rep decides nothing, whatever the runs showed: the catalogue's rule says so.
    let verdicts = r["verdicts"].as_array().expect("verdicts");
    assert_eq!(verdicts.len(), 1);
    assert_eq!(verdicts[0]["finding"], "java-gc-collapse");
    assert_eq!(verdicts[0]["outcome"], "cannot-tell", "{}", verdicts[0]);
    assert_eq!(verdicts[0]["checks"].as_array().map(Vec::len), Some(2));
    assert_eq!(
        r["topics"].as_array().map(Vec::len),
        Some(2),
        "{}",
        r["topics"]
    );
    // Every run's files are kept: the GC log, the RESULT line, the command.
    for sub in ["bmdefault-k2-rep1", "bm2097152-k2-rep1"] {
        let d = out_dir.join(sub);
        let gc = std::fs::read_to_string(d.join("gc.log")).expect("gc.log kept");
        assert!(gc.contains("Using G1"), "{sub}: not a G1 unified log");
        let line = std::fs::read_to_string(d.join("result.line")).expect("result.line");
        assert!(line.starts_with("RESULT {"), "{line}");
        assert!(d.join("companion.cmd").is_file());
    }
    for f in ["result.json", "runs.csv", "report.txt"] {
        assert!(out_dir.join(f).is_file(), "{f}");
    }
    let text = std::fs::read_to_string(out_dir.join("report.txt")).unwrap();
    assert!(
        text.contains("verdict java-gc-collapse: CANNOT TELL"),
        "{text}"
    );
    // Within 100 columns, but for the kit's payload line (a 64-digit digest).
    let wide: Vec<&str> = text
        .lines()
        .filter(|l| l.chars().count() > 100 && !l.starts_with("payload pool:"))
        .collect();
    assert!(wide.is_empty(), "{wide:?}");
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
/// 2 MB buffer.memory): the probe's own reading of a RESULT line and its GC log, and the
/// catalogue's verdict on them.
#[test]
fn captured_companion_runs_read_as_the_probe_reads_them() {
    use kgap_analyzers::findings::{java_gc_collapse as rule, Outcome};
    use kgap_probes::java_producers::{
        figures, figures_out_of_memory, point_evidence, read_gc_log, Figures, Point,
    };
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/gc/companion");
    let read = |name: &str| {
        let line = std::fs::read_to_string(dir.join(format!("{name}-jdk17.result"))).unwrap();
        let (r, _) = java::parse_result(&line).expect("a RESULT line");
        assert_eq!(
            r.payload_sha256.as_deref(),
            Some(Pool::new(100, PayloadKind::Random).sha256_hex().as_str())
        );
        let gc = read_gc_log(&dir.join(format!("{name}-jdk17.log"))).unwrap();
        figures(&r, &gc, None)
    };
    // Each fixture is one run; three reps of it stand for a point whose reps agree.
    let verdict = |k: u32, default: &Figures, bounded: &Figures| {
        let at = |bm: Option<u64>, f: &Figures| {
            let p = Point {
                buffer_memory: bm,
                producers: k,
            };
            point_evidence(&p, &[f.clone(), f.clone(), f.clone()])
        };
        rule::decide(&rule::Evidence {
            cores: 2,
            heap_mb: 256.0,
            points: vec![at(None, default), at(Some(2 << 20), bounded)],
        })
    };
    // The probe's default point on a quiet 2-core machine: K=2, the scaled 256m heap.
    let k2 = read("k2-default-256m");
    assert_eq!(k2.collapsed, Some(true), "{k2:?}");
    assert!(k2.gc.heap_after_young_share.unwrap() >= 0.8, "{k2:?}");
    assert!(
        k2.gc.full_gcs >= 1 && k2.gc.evacuation_failures >= 1,
        "{k2:?}"
    );
    let k2b = read("k2-bounded-2m-256m");
    assert_eq!(k2b.collapsed, Some(false), "{k2b:?}");
    assert!(
        k2b.msgs_per_s > k2.msgs_per_s,
        "the bound is also faster here"
    );
    let v = verdict(2, &k2, &k2b);
    assert_eq!(v.outcome, Outcome::Holds, "{}", v.render());
    assert!(v.reason.contains("K=2 on 2 cores"), "{}", v.reason);
    // Had this JVM thrown OutOfMemoryError, the probe would read only its GC log.
    let gc = read_gc_log(&dir.join("k2-default-256m-jdk17.log")).unwrap();
    let oom = figures_out_of_memory(&gc);
    assert_eq!(
        (oom.collapsed, oom.gc.out_of_memory, oom.msgs_per_s),
        (Some(true), true, 0.0)
    );
    assert_eq!(oom.gc.full_gcs, gc.full_gcs);
    assert!(
        oom.gc.gc_share_window > 0.05 && oom.gc.gc_share_window < 1.0,
        "{oom:?}"
    );
    let k16 = read("k16-default");
    assert_eq!(k16.collapsed, Some(true), "{k16:?}");
    assert!(
        k16.gc.gc_share_window >= 0.2 && k16.gc.full_gcs >= 1,
        "{k16:?}"
    );
    assert!(k16.gc_log_diagnoses.iter().any(|d| d == "gc-collapse"));
    let k16b = read("k16-bounded-2m");
    assert_eq!(k16b.collapsed, Some(false), "{k16b:?}");
    assert!(
        k16b.buffer_wait_s.unwrap() > 0.0,
        "the 2 MB bound made send() wait"
    );
    assert_eq!(verdict(16, &k16, &k16b).outcome, Outcome::Holds);
    // K=32 on 2 cores: the bound did not save it (G1's concurrent cycle fell behind too).
    let k32b = read("k32-bounded-2m");
    assert_eq!(k32b.collapsed, Some(true));
    let v = verdict(32, &read("k32-default"), &k32b);
    assert_eq!(v.outcome, Outcome::DoesNotHold, "{}", v.render());
    assert!(v.reason.contains("keeps every rep clean"), "{}", v.reason);
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
    use kgap_analyzers::findings::java_send_buffer as send;
    use kgap_probes::java_socket_buffers::{figures, Side};
    let fig = figures(&r, Some(&report), Side::Produce, None);
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
    // The catalogue's cap: the median write inside its band of send.buffer.bytes, far below
    // the 1 MB batches (the buffer, not the data, ended each write).
    let buf = send::DEFAULT_SEND_BUFFER_BYTES as f64;
    let p50 = fig.bytes_per_call_p50 as f64;
    assert!(p50 >= send::CAPPED_WRITE_LO * buf && p50 <= send::CAPPED_WRITE_HI * buf);
    assert_eq!(
        fig.bytes_per_call_max, fig.bytes_per_call_p50,
        "the cap is exact"
    );
    // This capture's companion predates kafka-clients' per-request metrics in its RESULT
    // line: the request size is not measured, so the rule cannot count writes per request.
    assert_eq!((fig.request_bytes, fig.writes_per_request), (None, None));
    assert_eq!(fig.poll_thread_cores, None, "a producer has no poll thread");
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
    let points = r["points"].as_array().expect("points");
    assert_eq!(points.len(), 4);
    for p in points {
        assert_eq!(p["client"], "java");
        let run = &p["runs"][0];
        common::assert_rate_of_window(run);
        assert!(run["socket_calls"].as_u64().unwrap() > 0, "{run}");
        assert!(run["bytes_per_call_p50"].as_u64().unwrap() > 0, "{run}");
        // Each side's own thread is measured: the network thread writes, the poll thread reads.
        if p["params"]["side"] == "produce" {
            assert!(run["network_thread_cores"].as_f64().unwrap() > 0.0, "{run}");
            assert!(run["request_bytes"].as_f64().unwrap() > 1024.0, "{run}");
            assert!(run["writes_per_request"].as_u64().unwrap() >= 1, "{run}");
            assert!(run["poll_thread_cores"].is_null(), "{run}");
        } else {
            let cores = run["poll_thread_cores"].as_f64().unwrap();
            assert!(cores > 0.0 && cores <= 1.05, "{run}");
            assert!(run["network_thread_cores"].is_null(), "{run}");
        }
    }
    // The fixed default caps a write at about twice send.buffer.bytes.
    let fixed = &points[0]["runs"][0];
    assert_eq!(points[0]["params"]["send.buffer.bytes"], 131072);
    assert_eq!(points[1]["params"]["send.buffer.bytes"], -1);
    assert_eq!(points[2]["params"]["receive.buffer.bytes"], 65536);
    assert!(
        fixed["bytes_per_call_max"].as_u64().unwrap() <= 2 * 131072 + 1024,
        "{fixed}"
    );
    // Two verdicts, each from its own side; one rep decides neither.
    let v = r["verdicts"].as_array().expect("verdicts");
    let ids: Vec<&str> = v.iter().map(|v| v["finding"].as_str().unwrap()).collect();
    assert_eq!(ids, ["java-send-buffer", "java-receive-buffer"]);
    for v in v {
        assert_eq!(v["outcome"], "cannot-tell", "{v}");
        assert!(v["checks"].as_array().unwrap().len() >= 4, "{v}");
    }
    let send = &v[0]["evidence"]["pairs"][0];
    assert_eq!(send["batch_size_bytes"], 131072);
    let receive = &v[1]["evidence"]["pairs"][0];
    assert_eq!(receive["record_bytes"], 1024);
    assert!(!v[1].to_string().contains("write_bytes"), "{}", v[1]);
    // The consumer's prefilled topic and the producers' own.
    assert_eq!(
        r["topics"].as_array().map(Vec::len),
        Some(3),
        "{}",
        r["topics"]
    );
    assert!(out_dir
        .join("produce-batch-131072-default-rep1/window.jfr")
        .is_file());
    assert!(out_dir
        .join("consume-size-1024-os-rep1/window.jfr")
        .is_file());
    let text = std::fs::read_to_string(out_dir.join("report.txt")).unwrap();
    assert!(
        text.contains("verdict java-receive-buffer: CANNOT TELL"),
        "{text}"
    );
    // Within 100 columns, but for the kit's payload line (a 64-digit digest).
    let wide: Vec<&str> = text
        .lines()
        .filter(|l| l.chars().count() > 100 && !l.starts_with("payload pool:"))
        .collect();
    assert!(wide.is_empty(), "{wide:?}");
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
    let points = r["points"].as_array().expect("points");
    assert_eq!(points.len(), 1, "java only: no librdkafka points");
    assert_eq!(points[0]["client"], "java");
    assert_eq!(points[0]["params"]["batch.size"], 16384);
    common::assert_rate_of_window(&points[0]["runs"][0]);
    // librdkafka's rule has nothing to judge: Java's rows never enter it.
    let v = &r["verdicts"][0];
    assert_eq!(v["finding"], "request-ceiling");
    assert_eq!(v["outcome"], "cannot-tell");
    assert!(
        v["reason"]
            .as_str()
            .unwrap()
            .contains("librdkafka did not run"),
        "{v}"
    );
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
    let points = r["points"].as_array().expect("points");
    assert_eq!(points.len(), 2, "librdkafka's point, then Java's");
    assert_eq!(points[0]["client"], "librdkafka");
    assert_eq!(points[1]["client"], "java");
    assert_eq!(points[1]["params"]["batch.size"], 16384);
    assert_eq!(points[1]["label"], "java-default-batch16384");
    let (rdk, jv) = (&points[0]["median"], &points[1]["median"]);
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
    // Both runs' topics are in the document (the companion's is its own fresh topic).
    assert_eq!(
        r["topics"].as_array().map(Vec::len),
        Some(2),
        "{}",
        r["topics"]
    );
    // Java's half is its own verdict, judged on Java's runs: one batch.size says nothing
    // about what closed them, and the verdict says what would.
    let v = r["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["finding"] == "java-gzip-batch-closing")
        .expect("Java's verdict");
    assert_eq!(v["outcome"], "cannot-tell", "{v}");
    assert!(
        v["reason"]
            .as_str()
            .unwrap()
            .contains("batch.size 16K only"),
        "{v}"
    );
    assert_eq!(
        v["evidence"]["points"].as_array().map(Vec::len),
        Some(1),
        "{v}"
    );
}

#[test]
fn companion_e2e_mode_paces_and_times_every_message_end_to_end() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let java = Java::locate().expect("the Java companion builds");
    let broker = kgap_probes::kit::broker::Broker::start(Some(&brokers()), &[]).expect("broker");
    let topic = broker.create_topic("kgap-test-java-e2e", 2).expect("topic");
    let dir = tempfile::tempdir().expect("tempdir");
    let started = std::time::Instant::now();
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
    // Nothing the companion timed can have taken longer than the companion ran.
    let ran_ms = started.elapsed().as_secs_f64() * 1e3;
    let r = &run.result;
    assert_eq!(r.mode, "e2e");
    assert_eq!(r.rate_target_per_s, Some(2000.0));
    // The pacer catches up when behind (dropping no slot), so what it reaches is the rate
    // less the backlog at the window's end: ≥ 90% even beside a busy build (the probes'
    // verdicts ask 97% and say when a rep missed it). It must never burst above the rate:
    // at most 2000/s over the window, plus the message due as it opened (2 % for rounding).
    let achieved = r.rate_achieved_per_s.unwrap();
    eprintln!(
        "java e2e: {achieved} of 2000 msg/s over {} s ({} messages, {} late sends, worst lag \
         {} ms), e2e p50 {:?} ms, from the intended send time {:?} ms",
        r.seconds,
        r.messages,
        r.late_sends.unwrap_or(0),
        r.worst_lag_ms.unwrap_or(0.0),
        r.e2e_ms_p50,
        r.e2e_intended_ms_p50
    );
    assert!(r.seconds > 0.0 && r.messages > 0, "{r:?}");
    assert!(
        r.messages as f64 <= 2000.0 * r.seconds * 1.02 + 1.0,
        "a burst above the rate: {r:?}"
    );
    assert!(achieved >= 0.9 * 2000.0, "the pacer fell behind: {r:?}");
    // From the intended send time a message waited at least as long as from its send.
    let (sent, intended) = (r.e2e_ms_p99.unwrap(), r.e2e_intended_ms_p99.unwrap());
    assert!(
        intended + 0.01 >= sent,
        "intended p99 {intended} < sent p99 {sent}: {r:?}"
    );
    // The achieved rate is the window's count over the window's length (both reported).
    let expected = r.messages as f64 / r.seconds;
    assert!(
        (achieved - expected).abs() <= 0.01 * expected + 1.0,
        "rate_achieved_per_s {achieved} is not messages / seconds = {expected}: {r:?}"
    );
    // Every window message reached the consumer and was timed once, end to end ...
    assert_eq!(r.e2e_missing, Some(0), "{r:?}");
    assert_eq!(r.e2e_samples, Some(r.messages), "{r:?}");
    // ... and send to ack: each timed, or counted as skipped (its timer still in use).
    assert_eq!(r.latency_sample_every, Some(1), "{r:?}");
    assert_eq!(
        r.latency_samples.unwrap() + r.latency_samples_skipped.unwrap(),
        r.messages,
        "{r:?}"
    );
    let (p50, p90, p99, p999, max) = (
        r.e2e_ms_p50.unwrap(),
        r.e2e_ms_p90.unwrap(),
        r.e2e_ms_p99.unwrap(),
        r.e2e_ms_p999.unwrap(),
        r.e2e_ms_max.unwrap(),
    );
    // linger.ms 5 is a floor only for a lone message; the consumer's fetch adds its own
    // wait. The percentiles are ordered, positive, and in milliseconds: none longer than
    // the companion's whole run (as a µs or ns figure read as ms would be).
    assert!(
        p50 > 0.0 && p50 <= p90 && p90 <= p99 && p99 <= p999 && p999 <= max,
        "{r:?}"
    );
    assert!(
        max < ran_ms,
        "an e2e latency of {max} ms in a {ran_ms:.0} ms run: {r:?}"
    );
    let (a50, a99, amax) = (
        r.send_to_ack_ms_p50.unwrap(),
        r.send_to_ack_ms_p99.unwrap(),
        r.send_to_ack_ms_max.unwrap(),
    );
    assert!(
        a50 > 0.0 && a50 <= a99 && a99 <= amax && amax < ran_ms,
        "{r:?}"
    );
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
        matches!(err, kgap_probes::kit::error::ProbeError::Usage(ref m) if m.contains("at least 8")),
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
    // Every window message timed end to end, however many this machine paced (the rate is
    // the machine's figure; above the target it must never be).
    assert!(n("e2e_count") > 0.0, "{run}");
    assert_eq!(n("e2e_missing"), 0.0, "{run}");
    assert!(n("rate_achieved_per_s") <= 2000.0 * 1.02 + 1.0, "{run}");
    let expected = n("rate_achieved_per_s") * n("window_s");
    assert!(
        (n("e2e_count") - expected).abs() <= 0.01 * expected + 2.0,
        "e2e_count is the window's messages ({expected:.0}): {run}"
    );
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
