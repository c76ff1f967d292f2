//! gap-report: the project's fixtures (read in place, or linked into a temporary folder at
//! test time — nothing is copied into the project), empty and unrelated folders, hostile
//! folder shapes, the CLI contract, determinism, and the findings catalogue's rules both
//! ways with the post's own numbers.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};

use kgap_analyzers::findings::{self, rules};
use kgap_analyzers::gap_report::{gap_report, Confidence, GapReport, Options};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn fixtures() -> PathBuf {
    root().join("fixtures")
}

/// A fresh temporary folder, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        static N: AtomicU32 = AtomicU32::new(0);
        let p = std::env::temp_dir().join(format!(
            "kgap-gap-report-{tag}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::SeqCst)
        ));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }

    /// Link a fixture (relative to fixtures/) into the folder under `name`.
    fn link(&self, fixture: &str, name: &str) -> &Self {
        let dst = self.0.join(name);
        if let Some(parent) = dst.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::os::unix::fs::symlink(fixtures().join(fixture), dst).unwrap();
        self
    }

    fn write(&self, name: &str, bytes: &[u8]) -> &Self {
        std::fs::write(self.0.join(name), bytes).unwrap();
        self
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn report(dir: &Path) -> GapReport {
    gap_report(dir, &Options::default()).expect("the folder is readable")
}

fn gap_ids(r: &GapReport) -> Vec<&'static str> {
    r.gaps.iter().map(|g| g.finding).collect()
}

fn confidence(r: &GapReport, id: &str) -> Confidence {
    r.gaps.iter().find(|g| g.finding == id).unwrap().confidence
}

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_gap-report"))
}

fn files_under(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let p = e.unwrap().path();
            if p.is_dir() {
                files_under(&p)
            } else {
                1
            }
        })
        .sum()
}

#[test]
fn fixtures_show_the_expected_gaps_and_only_those() {
    let r = report(&fixtures());
    assert_eq!(
        gap_ids(&r),
        [
            "request-ceiling",
            "fetch-backoff",
            "inflight-latency",
            "java-send-buffer",
            "java-receive-buffer",
            "java-gc-collapse"
        ]
    );
    // Every file is listed, used or not; every unused one says why.
    assert_eq!(r.files_seen, files_under(&fixtures()));
    assert!(r
        .files
        .iter()
        .all(|f| f.used == f.reason.is_none() && f.reason.as_deref() != Some("")));
    // The probe's verdict reproduces Gap 2: high; the log and statistics agree on Gap 1.
    assert_eq!(confidence(&r, "fetch-backoff"), Confidence::High);
    assert_eq!(confidence(&r, "request-ceiling"), Confidence::High);
    // Findings no capture here can show are said to be unchecked, with what would show them.
    let nf = |id: &str| r.not_found.iter().find(|n| n.finding == id).unwrap();
    assert!(nf("batch-consume").result.starts_with("not checked: needs"));
    assert!(nf("gzip-batch-semantics")
        .result
        .starts_with("not found in"));
    // The documents that quote a log line are not captures.
    let readme = r
        .files
        .iter()
        .find(|f| f.path == "librdkafka/README.md")
        .unwrap();
    assert!(!readme.used, "{readme:?}");
}

#[test]
fn a_healthy_consumer_gc_log_and_jfr_show_no_gap() {
    let d = TempDir::new("healthy");
    d.link(
        "librdkafka/consumer-kafka431-backoff-10ms/debug.log",
        "consumer.log",
    )
    .link(
        "librdkafka/consumer-kafka431-backoff-10ms/stats.jsonl",
        "stats.jsonl",
    )
    .link("gc/g1-jdk17-bounded.log", "gc.log")
    .link("jfr/socket-os-buffers-jdk17.jfr", "app.jfr");
    let r = report(&d.0);
    assert_eq!(gap_ids(&r), Vec::<&str>::new(), "{:#?}", r.gaps);
    assert_eq!(r.files_used, 4);
    let backoff = r
        .not_found
        .iter()
        .find(|n| n.finding == "fetch-backoff")
        .unwrap();
    assert_eq!(backoff.checked_in, ["consumer.log"]);
    let text = r.render_text();
    assert!(
        text.contains("none of the post's findings shows in these files"),
        "{text}"
    );
}

#[test]
fn one_fetch_log_is_medium_and_names_its_lines() {
    let d = TempDir::new("fetch");
    d.link(
        "librdkafka/consumer-kafka431-backoff-1000ms/debug.log",
        "a/debug.log",
    );
    let r = report(&d.0);
    assert_eq!(gap_ids(&r), ["fetch-backoff"]);
    let g = &r.gaps[0];
    assert_eq!(g.confidence, Confidence::Medium);
    let s = &g.signals[0];
    assert_eq!(
        (s.file.as_str(), s.id.as_str()),
        ("a/debug.log", "fetch-queue-backoff")
    );
    assert!(s.examples[0]
        .text
        .contains("Fetch backoff for 1000ms: Local: Queue full"));
    assert!(s.window.as_ref().unwrap().duration_s.unwrap() > 1.0);
}

#[test]
fn a_wrapped_log_is_sniffed_by_content_not_name() {
    // The same capture as JSON lines with `/` escaped, under a name that says nothing.
    let raw = std::fs::read_to_string(
        fixtures().join("librdkafka/consumer-kafka431-backoff-1000ms/debug.log"),
    )
    .unwrap();
    let mut wrapped = String::new();
    for line in raw.lines() {
        let msg = serde_json::to_string(line).unwrap().replace('/', "\\/");
        wrapped.push_str(&format!("{{\"level\":\"debug\",\"msg\":{msg}}}\n"));
    }
    let d = TempDir::new("wrapped");
    d.write("output.txt", wrapped.as_bytes());
    let r = report(&d.0);
    assert_eq!(gap_ids(&r), ["fetch-backoff"], "{:#?}", r.files);
}

#[test]
fn a_saturated_broker_thread_is_a_low_confidence_sign() {
    let mut csv = String::from("second,tid,thread,cores\n");
    for s in 0..8 {
        csv.push_str(&format!("{s},101,rdk:broker1,0.97\n{s},100,app,0.40\n"));
    }
    let d = TempDir::new("threads");
    d.write("threads.csv", csv.as_bytes());
    let r = report(&d.0);
    assert_eq!(gap_ids(&r), ["batch-consume"], "{:#?}", r.files);
    assert_eq!(confidence(&r, "batch-consume"), Confidence::Low);
}

#[test]
fn empty_folder_says_so_and_exits_2() {
    let d = TempDir::new("empty");
    let r = report(&d.0);
    assert_eq!((r.files_seen, r.files_used), (0, 0));
    assert!(r.render_text().contains("The folder is empty"));
    let out = bin().arg(&d.0).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nothing to analyse"));
}

#[test]
fn unrelated_folder_lists_every_file_with_its_reason_and_exits_2() {
    let d = TempDir::new("unrelated");
    d.write("notes.txt", b"shopping list\nmilk\n")
        .write("blob.bin", b"\x7fELF\x02\x01\x01\0\0\0")
        .write("data.json", b"{\"a\": 1}\n")
        .write("empty.log", b"")
        .write("broken.gz", b"\x1f\x8b\x08\0garbage");
    let out = bin().arg(&d.0).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("None of these files is something gap-report reads"),
        "{text}"
    );
    let r = report(&d.0);
    assert_eq!((r.files_seen, r.files_used), (5, 0));
    let reason = |p: &str| {
        r.files
            .iter()
            .find(|f| f.path == p)
            .and_then(|f| f.reason.clone())
            .unwrap()
    };
    assert!(reason("blob.bin").starts_with("binary"));
    assert_eq!(reason("empty.log"), "empty file");
    assert!(reason("data.json").starts_with("JSON, but"));
    assert!(
        reason("broken.gz").contains("gzip"),
        "{}",
        reason("broken.gz")
    );
}

#[test]
fn missing_dir_is_a_clear_error() {
    let out = bin().arg("/nonexistent/kgap/dir").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("gap-report: /nonexistent/kgap/dir: "),
        "{err}"
    );
    assert!(!err.contains("panicked"));
}

#[test]
fn symlink_loops_and_fifos_neither_hang_nor_crash() {
    let d = TempDir::new("hostile");
    std::os::unix::fs::symlink(&d.0, d.0.join("loop")).unwrap();
    let fifo = d.0.join("pipe");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    d.link("gc/g1-jdk17-unbounded.log", "gc.log");
    let r = report(&d.0);
    assert_eq!(gap_ids(&r), ["java-gc-collapse"]);
    let reason = |p: &str| r.files.iter().find(|f| f.path == p).unwrap().reason.clone();
    assert!(reason("loop").unwrap().contains("already read"));
    assert!(reason("pipe").unwrap().contains("not a regular file"));
}

#[test]
fn two_runs_give_the_same_report() {
    let run = |args: &[&str]| {
        let out = bin().args(args).arg(fixtures()).output().unwrap();
        assert_eq!(out.status.code(), Some(0));
        out.stdout
    };
    assert_eq!(run(&["--json"]), run(&["--json"]));
    assert_eq!(run(&[]), run(&[]));
    // --json is the documented contract: valid JSON with the gaps in catalogue order.
    let v: serde_json::Value = serde_json::from_slice(&run(&["--json"])).unwrap();
    assert_eq!(v["tool"], "gap-report");
    assert_eq!(v["gaps"][0]["finding"], "request-ceiling");
}

#[test]
fn markdown_links_the_charts_it_writes() {
    let d = TempDir::new("md");
    let md = d.0.join("out/report.md");
    std::fs::create_dir_all(md.parent().unwrap()).unwrap();
    let svg = d.0.join("out/charts");
    let status = bin()
        .arg("--md")
        .arg(&md)
        .arg("--svg-dir")
        .arg(&svg)
        .arg(fixtures().join("gc"))
        .output()
        .unwrap()
        .status;
    assert_eq!(status.code(), Some(0));
    let text = std::fs::read_to_string(&md).unwrap();
    assert!(text.starts_with("# Gap report"));
    let links: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("![").and_then(|l| l.split_once("](")))
        .map(|(_, rest)| rest.trim_end_matches(')'))
        .collect();
    assert!(!links.is_empty());
    let unique: BTreeSet<&&str> = links.iter().collect();
    assert_eq!(unique.len(), links.len(), "each chart once");
    for l in links {
        assert!(l.starts_with("charts/"), "{l}");
        let body = std::fs::read_to_string(md.parent().unwrap().join(l)).unwrap();
        assert!(body.starts_with("<svg"), "{l}");
    }
}

#[test]
fn help_teaches_with_examples() {
    let out = bin().arg("--help").output().unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(
        help.contains("examples:") && help.contains("Exit status"),
        "{help}"
    );
}

// The catalogue's rules, both ways, with the post's numbers.

#[test]
fn rule_request_ceiling() {
    // 6 partitions ≈ 1 partition at 16 KB (~240k), 15.6 KB requests, 233k → 991k at 1 MB.
    assert!(rules::request_ceiling(
        1.0,
        15_621.0 / 16_384.0,
        991.0 / 233.0
    ));
    // Java at 16 KB: 570k → 653k with 12 partitions is still flat, but half-empty
    // requests or no batch.size gain break it.
    assert!(!rules::request_ceiling(2.3, 0.95, 4.2));
    assert!(!rules::request_ceiling(1.0, 0.2, 4.2));
    assert!(!rules::request_ceiling(1.0, 0.95, 1.1));
}

#[test]
fn rule_batch_consume() {
    assert!(rules::batch_consume(1_480_000.0, 2_022_000.0, 0.94));
    assert!(!rules::batch_consume(1_480_000.0, 1_500_000.0, 0.94));
    assert!(!rules::batch_consume(1_480_000.0, 2_022_000.0, 0.5));
}

#[test]
fn rule_batch_wrapper_latency() {
    // 500 per call, 100 ms timeout: 1k/s waits the whole 100 ms, 10k/s 50 ms.
    assert_eq!(rules::batch_wait_ms(1000.0, 500.0, 100.0), 100.0);
    assert_eq!(rules::batch_wait_ms(10_000.0, 500.0, 100.0), 50.0);
    assert!(rules::batch_wrapper_latency(1000.0, 500.0, 100.0, 99.0));
    assert!(rules::batch_wrapper_latency(10_000.0, 500.0, 100.0, 50.0));
    // The fixed wrapper: p99 0.21 ms.
    assert!(!rules::batch_wrapper_latency(1000.0, 500.0, 100.0, 0.21));
    // A high rate fills the batch in under 10 ms: nothing to see.
    assert!(!rules::batch_wrapper_latency(100_000.0, 500.0, 100.0, 5.0));
}

#[test]
fn rule_gzip_batch() {
    // librdkafka 16 KB → 88 KB: 46.4k → 27.5k msg/s, ratio 4.70 → 5.71.
    assert!(rules::gzip_batch(
        16_384.0, 88_000.0, 4.70, 5.71, 46_400.0, 27_500.0
    ));
    // Input per batch that does not follow batch.size, or no slowdown.
    assert!(!rules::gzip_batch(
        43_000.0, 44_000.0, 5.39, 5.40, 33_900.0, 33_000.0
    ));
    assert!(!rules::gzip_batch(
        16_384.0, 88_000.0, 4.70, 5.71, 46_400.0, 46_000.0
    ));
}

#[test]
fn rule_java_send_buffer() {
    // 6.29 MB at ~298 KB per write: 22 writes copying 69.6 MB (11x).
    let (writes, copied) = rules::tail_copy(6.29e6, 298e3);
    assert_eq!(writes, 22);
    assert!((copied / 1e6 - 69.6).abs() < 0.2, "{copied}");
    assert!(rules::java_send_buffer(6.29e6, 298e3, 131_072.0));
    // Autotuned: ~692 KB writes against a 4 MB buffer.
    assert!(!rules::java_send_buffer(6.29e6, 692e3, 4_194_304.0));
    // A 128 KB request needs one write.
    assert!(!rules::java_send_buffer(131_072.0, 298e3, 131_072.0));
}

#[test]
fn rule_java_receive_buffer() {
    assert!(rules::java_receive_buffer(56_000.0, 65_536.0, 0.97));
    assert!(!rules::java_receive_buffer(112_000.0, 65_536.0, 0.97));
    assert!(!rules::java_receive_buffer(56_000.0, 65_536.0, 0.4));
}

#[test]
fn rule_java_gc_collapse() {
    assert!(rules::java_gc_collapse(0.37, 1846.0 / 2048.0));
    // K=8: 1% in GC, 214 of 2048 MB after a young collection.
    assert!(!rules::java_gc_collapse(0.01, 214.0 / 2048.0));
    assert!(!rules::java_gc_collapse(0.37, 0.5));
}

#[test]
fn every_diagnosis_id_the_analyzers_emit_is_mapped_or_known_other() {
    // Grep'd from the analyzers and probes: each is a catalogue finding, an all-clear, or
    // one of the few diagnoses that are not findings of the post.
    let not_findings = [
        "request-timeouts",
        "fetch-error-backoff",
        "long-pauses",
        "premature-promotion",
        "humongous-allocations",
        "saturated-thread",
    ];
    for id in [
        "per-request-ceiling",
        "inflight-queueing",
        "fetch-queue-backoff",
        "gc-collapse",
        "concurrent-gc-behind",
        "evacuation-failures",
        "gc-pressure",
        "single-core-consumer",
        "deflate-dominates",
        "rdk-broker-saturated",
        "app-thread-saturated",
        "java-consumer-thread-saturated",
        "java-producer-network-saturated",
        "gc-threads-dominate",
        "request-ceiling",
        "fetch-backoff",
        "inflight-latency",
        "gzip-batch-semantics",
        findings::STATS_SMALL_PRODUCE_REQUESTS,
    ] {
        assert!(findings::for_diagnosis(id, None).is_some(), "{id}");
    }
    for id in not_findings.iter().chain(findings::ALL_CLEAR_IDS) {
        assert!(findings::for_diagnosis(id, None).is_none(), "{id}");
    }
}

#[test]
fn docs_findings_md_covers_the_catalogue() {
    let doc = std::fs::read_to_string(root().join("docs/findings.md")).unwrap();
    for f in findings::CATALOGUE {
        assert!(
            doc.contains(&format!("## `{}`", f.id)),
            "{} has no section",
            f.id
        );
        assert!(
            doc.contains(f.rule_fn),
            "{} not in docs/findings.md",
            f.rule_fn
        );
        assert!(doc.contains(f.reproduce.probe), "{}", f.reproduce.probe);
        if !f.reproduce.exists {
            assert!(doc.contains(&format!("`{}", f.reproduce.probe)));
        }
    }
}

#[test]
fn a_probe_verdict_that_did_not_hold_is_said_against_the_finding() {
    let result = br#"{
  "probe": "probe-fetch-backoff",
  "payload_sha256": "00",
  "broker": {"kind": "mock"},
  "settings": [],
  "verdict": {"finding": "fetch-backoff", "holds": false,
              "summary": "no Queue-full backoffs at fetch.queue.backoff.ms=1000", "evidence": {}},
  "interrupted": false
}"#;
    let d = TempDir::new("notheld");
    d.write("result.json", result);
    let r = report(&d.0);
    assert!(r.gaps.is_empty());
    let nf = r
        .not_found
        .iter()
        .find(|n| n.finding == "fetch-backoff")
        .unwrap();
    assert_eq!(nf.checked_in, ["result.json"]);
    assert!(
        nf.probe_verdicts[0].contains("no Queue-full backoffs"),
        "{nf:?}"
    );
    // With a log that shows it, the gap stands, with the verdict against it.
    d.link(
        "librdkafka/consumer-kafka431-backoff-1000ms/debug.log",
        "debug.log",
    );
    let r = report(&d.0);
    assert_eq!(gap_ids(&r), ["fetch-backoff"]);
    assert_eq!(r.gaps[0].confidence, Confidence::Medium);
    assert_eq!(r.gaps[0].against.len(), 1);
}
