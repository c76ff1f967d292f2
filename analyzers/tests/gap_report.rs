//! gap-report: the project's fixtures (read in place, or linked into a temporary folder at
//! test time — nothing is copied into the project), empty and unrelated folders, hostile
//! folder shapes, the CLI contract, determinism, and the findings catalogue's rules both
//! ways with the post's own numbers.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};

use kgap_analyzers::findings;
use kgap_analyzers::findings::scope::JvmRole;
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
    // The project's own captures: every fixtures folder but pastes/ (real pastes of other
    // people's systems, held to their own expectations by scripts/check-claims).
    let own = TempDir::new("own");
    let mut names: Vec<String> = std::fs::read_dir(fixtures())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != "pastes")
        .collect();
    names.sort();
    for n in &names {
        own.link(n, n);
    }
    let r = report(&own.0);
    assert_eq!(
        gap_ids(&r),
        [
            "request-ceiling",
            "fetch-backoff",
            // From the statistics of a linger.ms=0 run with the default window (requests of
            // a message or two waiting); the protocol captures queue full 15-message
            // batches, the ceiling's signature, and do not count.
            "inflight-latency",
            // int_latency at linger.ms in a paced 1k msg/s capture's statistics (indirect).
            "per-partition-linger",
            // The companion's producer writes through kafka-producer-network-thread.
            "java-send-buffer",
        ]
    );
    // SocketBuffers.java's recordings show the same socket caps, from a program that is
    // not a Kafka client: not filed under java-send-buffer or java-receive-buffer.
    assert!(r
        .other_diagnoses
        .iter()
        .filter(|s| s.file.starts_with("jfr/socket-fixed-buffers"))
        .all(|s| s.id == "fixed-socket-buffer" && s.question.is_some()));
    // The GC logs show collapses, but nothing in them shows a Kafka producer (one is
    // Backlog.java's): generic diagnoses, the finding offered as a question.
    let collapse = r
        .other_diagnoses
        .iter()
        .find(|s| s.id == "gc-collapse")
        .expect("gc-collapse among the other diagnoses");
    assert!(
        collapse
            .question
            .as_deref()
            .is_some_and(|q| q.contains("--jvm-role producer")),
        "{collapse:#?}"
    );
    // Every file is listed, used or not; every unused one says why.
    assert_eq!(
        r.files_seen,
        files_under(&fixtures()) - files_under(&fixtures().join("pastes"))
    );
    assert!(r
        .files
        .iter()
        .all(|f| f.used == f.reason.is_none() && f.reason.as_deref() != Some("")));
    // The probe's verdict reproduces Gap 2: high; the log and statistics agree on Gap 1.
    assert_eq!(confidence(&r, "fetch-backoff"), Confidence::High);
    assert_eq!(confidence(&r, "request-ceiling"), Confidence::High);
    // Findings no capture here can show are said to be unchecked, with what would show them.
    let nf = |id: &str| r.not_found.iter().find(|n| n.finding == id).unwrap();
    // Statistics could show batch-consume's signature (fetch queues full, lag growing); these do not.
    assert!(
        nf("batch-consume").result.starts_with("not found in"),
        "{:?}",
        nf("batch-consume")
    );
    assert!(nf("batch-wrapper-latency")
        .result
        .starts_with("not checked"));
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
fn gc_logs_of_unknown_jvms_file_no_finding_of_the_post_unless_the_user_says_what_they_are() {
    // Backlog.java (a plain program with a growing queue) and a Kafka producer's JVM: their
    // GC logs alone do not say which is which.
    let d = TempDir::new("jvms");
    d.link("gc/g1-jdk17-unbounded.log", "backlog.log");
    d.link("gc/companion/k16-default-jdk17.log", "k16.log");
    let r = report(&d.0);
    assert!(gap_ids(&r).is_empty(), "{:#?}", r.gaps);
    assert!(r
        .other_diagnoses
        .iter()
        .filter(|s| s.id == "gc-collapse")
        .all(|s| s.strength.is_none() && s.question.is_some()));
    // Said by the user: filed, and the two GC logs are one kind of evidence (medium, not
    // "2 files agree").
    let opts = Options {
        jvm_role: Some(JvmRole::Producer),
        ..Options::default()
    };
    let r = gap_report(&d.0, &opts).unwrap();
    assert_eq!(gap_ids(&r), ["java-gc-collapse"]);
    let g = &r.gaps[0];
    assert_eq!(g.confidence, Confidence::Medium, "{}", g.confidence_why);
    assert!(
        g.confidence_why.contains("--jvm-role"),
        "{}",
        g.confidence_why
    );
    // --jvm-role other: nothing filed.
    let opts = Options {
        jvm_role: Some(JvmRole::Other),
        ..Options::default()
    };
    assert!(gap_ids(&gap_report(&d.0, &opts).unwrap()).is_empty());
    // The binary takes the flag.
    let out = bin()
        .args(["--jvm-role", "producer", "--json"])
        .arg(&d.0)
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["gaps"][0]["finding"], "java-gc-collapse");
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
    assert_eq!(backoff.checked_in, ["consumer.log", "stats.jsonl"]);
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
    assert_eq!(
        gap_ids(&r),
        ["librdkafka-broker-thread-limit"],
        "{:#?}",
        r.files
    );
    assert_eq!(
        confidence(&r, "librdkafka-broker-thread-limit"),
        Confidence::Low
    );
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
    assert!(r.other_diagnoses.iter().any(|s| s.id == "gc-collapse"));
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
        // The probe companion's producers: Kafka clients, which their GC logs cannot show.
        .args(["--jvm-role", "producer"])
        .arg(fixtures().join("gc/companion"))
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

#[test]
fn every_diagnosis_id_the_analyzers_emit_is_mapped_or_known_other() {
    // Grep'd from the analyzers and probes: each is a catalogue finding, an all-clear, or
    // one of the few diagnoses that are not findings of the post.
    let not_findings = [
        "request-timeouts",
        "fetch-error-backoff",
        "long-pauses",
        "gc-log-cut",
        "gc-log-too-short",
        "premature-promotion",
        "humongous-allocations",
        "saturated-thread",
        "producer-backlog",
        "fetch-queue-empty-lag-growing",
        "broker-throttle",
        "broker-down",
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
        "fetch-queue-full-lag-growing",
        "linger-bound-latency",
    ] {
        assert!(findings::for_diagnosis(id, None).is_some(), "{id}");
    }
    // The same id can speak differently by analyzer: the fetch log shows the backoff itself,
    // statistics only its signature.
    use findings::Strength::{Direct, Indirect};
    let strength = |id, source| findings::evidence_from(id, Some(source), None).map(|(_, s)| s);
    assert_eq!(
        strength("fetch-queue-backoff", "analyze-fetch-log"),
        Some(Direct)
    );
    assert_eq!(
        strength("fetch-queue-backoff", "analyze-stats"),
        Some(Indirect)
    );
    assert_eq!(
        strength("per-request-ceiling", "analyze-stats"),
        Some(Direct)
    );
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

/// A probe result as a probe writes it, with verdicts from the catalogue's own rules.
fn probe_document(verdicts: Vec<findings::Verdict>, mock: bool) -> Vec<u8> {
    use kgap_analyzers::findings::probe_result::*;
    let r: ProbeResult = ProbeResult {
        schema: SCHEMA.into(),
        schema_version: SCHEMA_VERSION,
        probe: "probe-fetch-backoff".into(),
        kgap_version: "test".into(),
        librdkafka_version: "2.12.1".into(),
        broker: BrokerInfo {
            kind: if mock {
                BrokerKind::EmbeddedMock
            } else {
                BrokerKind::External
            },
            bootstrap: "127.0.0.1:9092".into(),
            note: None,
        },
        topics: vec![],
        prefill: None,
        payload: None,
        reps: 3,
        order: RunOrder::default(),
        placement: Placement::default(),
        points: vec![],
        verdicts,
        diagnoses: vec![],
        not_measured: vec![],
        notes: vec![],
        warnings: vec![],
        discarded: vec![],
        interrupted: false,
        failed: None,
        preflight: None,
        noise: Vec::new(),
    };
    serde_json::to_vec_pretty(&r).unwrap()
}

/// Gap 2's evidence: the post's figures, with or without the naps.
fn fetch_backoff_evidence(naps: f64) -> findings::fetch_backoff::Evidence {
    use findings::Reps;
    findings::fetch_backoff::Evidence {
        slow_backoff_ms: 1000,
        fast_backoff_ms: 10,
        slow_msgs_per_s: Reps::new([380e3, 389e3, 400e3]),
        fast_msgs_per_s: Reps::new([1.45e6, 1.48e6, 1.5e6]),
        slow_queue_full_backoffs: Reps::new([naps; 3]),
        slow_idle_s: Reps::new([naps / 5.0; 3]),
        slow_window_s: Reps::new([5.0; 3]),
        ..Default::default()
    }
}

#[test]
fn a_probe_verdict_that_did_not_hold_is_said_against_the_finding() {
    // The backoff ran, yet nothing napped and 10 ms read no faster: against the finding.
    // (A queue that never filled is a CANNOT TELL, not this.)
    let evidence = findings::fetch_backoff::Evidence {
        slow_idle_s: findings::Reps::new([0.0; 3]),
        fast_msgs_per_s: findings::Reps::new([380e3, 389e3, 400e3]),
        ..fetch_backoff_evidence(12.0)
    };
    let verdict = findings::fetch_backoff::decide(&evidence);
    assert_eq!(verdict.outcome, findings::Outcome::DoesNotHold);
    let d = TempDir::new("notheld");
    d.write("result.json", &probe_document(vec![verdict], true));
    let r = report(&d.0);
    assert!(r.gaps.is_empty());
    let nf = r
        .not_found
        .iter()
        .find(|n| n.finding == "fetch-backoff")
        .unwrap();
    assert_eq!(nf.checked_in, ["result.json"]);
    assert!(
        nf.probe_verdicts[0].contains("DOES NOT HOLD") && nf.probe_verdicts[0].contains("naps"),
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

#[test]
fn a_slow_path_preflight_warning_is_said_beside_the_result_and_its_verdicts() {
    use kgap_analyzers::findings::probe_result::{Preflight, PreflightRep, ProbeResult};
    let v = findings::fetch_backoff::decide(&fetch_backoff_evidence(12.0));
    let mut r: ProbeResult = serde_json::from_slice(&probe_document(vec![v], false)).unwrap();
    let warning = "the broker's idle round trip is 10.4 ms at best (the floor of 30 Metadata \
                   requests before rep 1) to a loopback address, where it should be under 1.00 \
                   ms: a proxy or tunnel in the path caps every number: measure against the \
                   broker directly";
    r.preflight = Some(Preflight {
        method: "30 brokers-only Metadata requests".into(),
        address: "127.0.0.1:40123".into(),
        address_kind: "loopback".into(),
        expected_max_ms: Some(1.0),
        reps: vec![PreflightRep {
            rep: 1,
            samples: 30,
            rtt_ms_min: 10.4,
            rtt_ms_median: 10.9,
            rtt_ms_max: 12.3,
        }],
        warning: Some(warning.into()),
        wakeup: None,
    });
    let d = TempDir::new("slowpath");
    d.write("result.json", &serde_json::to_vec_pretty(&r).unwrap());
    let report = report(&d.0);
    let file = report
        .files
        .iter()
        .find(|f| f.path == "result.json")
        .unwrap();
    assert!(
        file.summary.contains("preflight warning") && file.summary.contains(warning),
        "{file:?}"
    );
    assert_eq!(gap_ids(&report), ["fetch-backoff"]);
    assert!(
        report.gaps[0].signals[0]
            .title
            .contains("through a slow path"),
        "{:?}",
        report.gaps[0]
    );
    // Without the warning (a direct path), neither.
    r.preflight.as_mut().unwrap().warning = None;
    d.write("result.json", &serde_json::to_vec_pretty(&r).unwrap());
    let report = self::report(&d.0);
    assert!(!report.gaps[0].signals[0].title.contains("slow path"));
}

#[test]
fn a_holding_probe_verdict_is_filed_under_its_finding_with_high_confidence() {
    // Every finding of the catalogue, as a probe that decided it would write it: a HOLDS
    // lands under that finding, high, and nowhere else.
    for f in findings::CATALOGUE {
        let mut v = findings::fetch_backoff::decide(&fetch_backoff_evidence(12.0));
        assert!(v.holds());
        v.finding = f.id.to_string();
        let d = TempDir::new("holds");
        d.write("result.json", &probe_document(vec![v], false));
        let r = report(&d.0);
        assert_eq!(gap_ids(&r), [f.id], "{}", f.id);
        assert_eq!(r.gaps[0].confidence, Confidence::High, "{}", f.id);
        assert!(r.other_diagnoses.is_empty(), "{}", f.id);
    }
}

#[test]
fn a_cannot_tell_is_said_with_its_reason_and_finds_nothing() {
    let mut e = fetch_backoff_evidence(12.0);
    e.slow_msgs_per_s = findings::Reps::new([389e3]);
    let v = findings::fetch_backoff::decide(&e);
    assert_eq!(v.outcome, findings::Outcome::CannotTell);
    let d = TempDir::new("cannottell");
    d.write("result.json", &probe_document(vec![v], false));
    let r = report(&d.0);
    assert!(r.gaps.is_empty());
    let nf = r
        .not_found
        .iter()
        .find(|n| n.finding == "fetch-backoff")
        .unwrap();
    assert!(nf.probe_verdicts[0].contains("CANNOT TELL"), "{nf:?}");
}

#[test]
fn an_old_probe_result_is_named_and_not_read() {
    // A result of the kgap before typed verdicts (captured then; its verdict was decided
    // outside the catalogue).
    let old =
        br#"{"probe": "probe-fetch-backoff", "payload_sha256": "00", "verdict": {"holds": true}}"#;
    let d = TempDir::new("old");
    d.write("result.json", old);
    let r = report(&d.0);
    assert!(r.gaps.is_empty());
    assert!(
        r.files[0].reason.as_deref().unwrap().contains("older kgap"),
        "{:?}",
        r.files[0]
    );
}

#[test]
fn a_cut_recording_says_that_not_finding_a_gap_there_means_nothing() {
    let whole = std::fs::read(root().join("fixtures/jfr/socket-fixed-buffers-jdk17.jfr")).unwrap();
    for share in [0.1, 0.5] {
        let d = TempDir::new("cutjfr");
        d.write("app.jfr", &whole[..(whole.len() as f64 * share) as usize]);
        let r = report(&d.0);
        for id in ["java-send-buffer", "java-receive-buffer"] {
            if r.gaps.iter().any(|g| g.finding == id) {
                continue; // the readable part showed it: a finding stands
            }
            let nf = r.not_found.iter().find(|n| n.finding == id).unwrap();
            assert!(
                nf.result.starts_with("cannot tell: app.jfr is cut at byte"),
                "{share}: {id}: {}",
                nf.result
            );
        }
        // analyze-jfr itself does not advise recording events that may be in the lost part.
        let out = Command::new(env!("CARGO_BIN_EXE_analyze-jfr"))
            .arg(d.0.join("app.jfr"))
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        if text.contains("No gap found") {
            assert!(text.contains("cut at byte"), "{text}");
            assert!(!text.contains("record with jdk.SocketRead"), "{text}");
        }
    }
}
