//! analyze-gc-log: the captured fixtures (fixtures/gc, real JVM runs of
//! fixtures/gc/capture/Backlog.java) against fixtures/gc/EXPECTED.tsv, bad input, the
//! CLI contract, and the public corpus when it is present (../shared/corpus/gc or
//! $KGAP_CORPUS/gc).

#[path = "common/gzip.rs"]
mod gzip;

use std::path::{Path, PathBuf};
use std::process::Command;

use kgap_analyzers::engine::input::Source;
use kgap_analyzers::gc::{analyze_gc_logs, GcInput, GcLogOptions, GcReport};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn fixture(name: &str) -> PathBuf {
    root().join("fixtures/gc").join(name)
}

fn analyze_bytes(parts: &[(&str, Vec<u8>)]) -> GcReport {
    let inputs = parts
        .iter()
        .map(|(n, b)| GcInput {
            name: n.to_string(),
            reader: Source::stream(std::io::Cursor::new(b.clone())),
        })
        .collect();
    analyze_gc_logs(inputs, &GcLogOptions::default(), None).expect("in-memory input reads")
}

fn analyze_file(name: &str) -> GcReport {
    let bytes = std::fs::read(fixture(name)).unwrap();
    analyze_bytes(&[(name, bytes)])
}

fn ids(r: &GcReport) -> Vec<&str> {
    r.diagnoses.iter().map(|d| d.id.as_str()).collect()
}

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_analyze-gc-log"))
}

#[test]
fn fixtures_match_expected_reports() {
    let table = std::fs::read_to_string(fixture("EXPECTED.tsv")).unwrap();
    let mut checked = 0;
    for line in table
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
    {
        let f: Vec<&str> = line.split('\t').collect();
        let [file, collector, format, jdk, full, evac, diags] = f[..] else {
            panic!("bad EXPECTED.tsv line: {line}")
        };
        let r = analyze_file(file);
        let ctx = format!("{file}: {}", r.render_text());
        assert!(r.is_usable(), "{ctx}");
        assert_eq!(r.collector.as_deref(), Some(collector), "{ctx}");
        assert_eq!(r.format, Some(format), "{ctx}");
        if jdk != "-" {
            assert!(r.jdk.as_deref().unwrap_or("").starts_with(jdk), "{ctx}");
        }
        assert_eq!(r.full_gcs, full.parse::<u64>().unwrap(), "{ctx}");
        assert!(
            r.evacuation_failures >= evac.parse::<u64>().unwrap(),
            "{ctx}"
        );
        let got = ids(&r);
        match diags.strip_prefix('=') {
            Some(exact) => assert_eq!(got, exact.split(',').collect::<Vec<_>>(), "{ctx}"),
            None => {
                for d in diags.split(',') {
                    assert!(got.contains(&d), "{file}: missing {d} in {got:?}\n{ctx}");
                }
            }
        }
        checked += 1;
    }
    assert!(checked >= 28, "EXPECTED.tsv lost rows: {checked}");
}

#[test]
fn collapse_evidence_is_the_posts_mechanism() {
    let r = analyze_file("g1-jdk17-unbounded.log");
    let d = r.diagnoses.iter().find(|d| d.id == "gc-collapse").unwrap();
    assert!(d.fix.contains("buffer.memory"));
    assert!(d.evidence["worst_window_gc_fraction"].as_f64().unwrap() >= 0.2);
    assert!(d.evidence["heap_after_gc_pct"].as_f64().unwrap() >= 80.0);
    let heap = r.heap_after_young.as_ref().unwrap();
    assert_eq!(heap.trend, "rising");
    assert!(heap.max_pct >= 95.0, "{heap:?}");
    assert_eq!(r.max_heap_mb, Some(256.0));
    // Pause statistics are consistent with each other.
    let p = &r.pauses;
    assert!(p.p50_ms <= p.p99_ms && p.p99_ms <= p.max_ms);
    let by_type: u64 = r.pauses_by_type.iter().map(|t| t.stats.count).sum();
    assert_eq!(by_type, p.count);
}

#[test]
fn bounded_backlog_keeps_the_heap_empty() {
    let r = analyze_file("g1-jdk17-bounded.log");
    assert!(r.heap_after_young.as_ref().unwrap().max_pct < 20.0);
    assert!(r.gc_fraction_max_window.unwrap() < 0.2);
}

#[test]
fn jdk25_marks_evacuation_failure_on_the_pause() {
    let text = std::fs::read_to_string(fixture("g1-jdk25-unbounded.log")).unwrap();
    assert!(text.contains("(Evacuation Failure: Allocation)"));
    assert!(!text.contains("To-space exhausted"));
    let r = analyze_file("g1-jdk25-unbounded.log");
    assert_eq!(
        r.evacuation_failures,
        text.lines()
            .filter(|l| l.contains("(Evacuation Failure"))
            .count() as u64
    );
}

#[test]
fn zgc_allocation_stalls_are_counted() {
    let text = std::fs::read_to_string(fixture("zgc-jdk17-unbounded.log")).unwrap();
    let stalls = text
        .lines()
        .filter(|l| l.contains("] Allocation Stall ("))
        .count() as u64;
    let r = analyze_file("zgc-jdk17-unbounded.log");
    assert_eq!(r.allocation_stalls.count, stalls);
    assert!(stalls > 0);
}

// ---- bad input (issue 6 §5) ----

#[test]
fn empty_input_is_unsupported() {
    let r = analyze_bytes(&[("empty", Vec::new())]);
    assert_eq!(r.unsupported.as_deref(), Some("empty input"));
}

#[test]
fn binary_input_names_the_offset_and_jfr() {
    let r = analyze_bytes(&[("x.jfr", b"FLR\0\x00\x02\x00\x01binary".to_vec())]);
    let why = r.unsupported.unwrap();
    assert!(why.contains("offset 3") && why.contains("JFR"), "{why}");
    let r = analyze_bytes(&[("x.bin", vec![0u8, 159, 146, 150, 255, 10, 1, 2])]);
    assert!(r.unsupported.unwrap().starts_with("binary input"));
}

#[test]
fn text_that_is_not_a_gc_log_is_unsupported() {
    let r = analyze_bytes(&[(
        "app.log",
        b"hello\nworld\n2024-01-01 INFO started\n".to_vec(),
    )]);
    assert!(r
        .unsupported
        .unwrap()
        .starts_with("no GC log lines in 3 lines"));
    let r = analyze_bytes(&[(
        "sp.log",
        b"[0.1s][info][safepoint] Safepoint \"Cleanup\", Time since last: 1 ns\n".to_vec(),
    )]);
    assert!(r.unsupported.unwrap().contains("-Xlog:gc"));
}

#[test]
fn truncated_log_is_analysed_and_says_so() {
    let mut bytes = std::fs::read(fixture("g1-jdk17-unbounded.log")).unwrap();
    let cut = bytes.len() / 2 + 17;
    bytes.truncate(cut);
    let r = analyze_bytes(&[("cut.log", bytes)]);
    assert!(r.is_usable());
    assert!(r.input.unterminated_last_line || r.input.bytes as usize == cut);
    assert!(r.pauses.count > 0);
}

#[test]
fn mixed_collectors_are_reported_as_mixed() {
    let g1 = std::fs::read(fixture("g1-jdk17-bounded.log")).unwrap();
    let par = std::fs::read(fixture("parallel-jdk17-unbounded.log")).unwrap();
    let mut both = g1.clone();
    both.extend_from_slice(&par);
    let r = analyze_bytes(&[("both.log", both)]);
    assert_eq!(r.collector.as_deref(), Some("mixed: G1, Parallel"));
    assert!(r.warnings.iter().any(|w| w.contains("several collectors")));
    assert!(r
        .warnings
        .iter()
        .any(|w| w.contains("clock went backwards")));
}

#[test]
fn log_starting_mid_stream_is_analysed() {
    let text = std::fs::read_to_string(fixture("g1-jdk17-unbounded.log")).unwrap();
    let from = text.find("GC(20)").unwrap();
    let line_start = text[..from].rfind('\n').map_or(0, |i| i + 1);
    let r = analyze_bytes(&[("mid.log", text.as_bytes()[line_start..].to_vec())]);
    assert_eq!(r.gc_id_first, Some(20));
    assert!(r
        .warnings
        .iter()
        .any(|w| w.contains("mid-stream at GC(20)")));
    assert!(ids(&r).contains(&"gc-collapse"));
}

#[test]
fn rotated_files_given_together_add_up_to_the_whole() {
    let text = std::fs::read_to_string(fixture("g1-jdk17-unbounded.log")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let third = lines.len() / 3;
    let part = |a: usize, b: usize| (lines[a..b].join("\n") + "\n").into_bytes();
    let whole = analyze_bytes(&[("whole", text.as_bytes().to_vec())]);
    let parts = analyze_bytes(&[
        ("gc.log.0", part(0, third)),
        ("gc.log.1", part(third, 2 * third)),
        ("gc.log", part(2 * third, lines.len())),
    ]);
    assert_eq!(parts.pauses.count, whole.pauses.count);
    assert_eq!(parts.full_gcs, whole.full_gcs);
    assert_eq!(parts.gc_fraction_max_window, whole.gc_fraction_max_window);
    assert_eq!(parts.files.len(), 3);
}

#[test]
fn rotated_files_are_put_in_order_by_their_first_timestamp() {
    let dir = std::env::temp_dir().join(format!("kgap-gc-rot-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let text = std::fs::read_to_string(fixture("g1-jdk17-unbounded.log")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let half = lines.len() / 2;
    // The JVM reuses names in a cycle: here gc.log.1 holds the older half.
    std::fs::write(dir.join("gc.log.0"), lines[half..].join("\n") + "\n").unwrap();
    std::fs::write(dir.join("gc.log.1"), lines[..half].join("\n") + "\n").unwrap();
    let out = bin()
        .args(["--json"])
        .arg(dir.join("gc.log.0"))
        .arg(dir.join("gc.log.1"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("reading oldest first"), "{stderr}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .all(|w| !w.as_str().unwrap().contains("backwards")));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn other_tags_and_application_lines_interleaved_change_nothing() {
    let text = std::fs::read_to_string(fixture("g1-jdk17-unbounded.log")).unwrap();
    let mut noisy = String::new();
    for (i, l) in text.lines().enumerate() {
        noisy.push_str(l);
        noisy.push('\n');
        if i % 3 == 0 {
            noisy.push_str(
                "[1.000s][info][safepoint] Safepoint \"G1CollectForAllocation\", Pause 1 ms\n",
            );
            noisy.push_str("2024-01-01 12:00:00 INFO app: Pause Young requested by user 1ms\n");
        }
    }
    let clean = analyze_bytes(&[("clean", text.into_bytes())]);
    let noisy = analyze_bytes(&[("noisy", noisy.into_bytes())]);
    assert_eq!(noisy.pauses.count, clean.pauses.count);
    assert_eq!(noisy.pauses.total_ms, clean.pauses.total_ms);
    assert_eq!(ids(&noisy), ids(&clean));
}

#[test]
fn gzip_input_gives_the_same_report() {
    let bytes = std::fs::read(fixture("parallel-jdk17-unbounded.log")).unwrap();
    let gz = gzip::gzip(&bytes);
    let a = analyze_bytes(&[("p", bytes)]);
    let b = analyze_bytes(&[("p.gz", gz)]);
    assert!(b.input.gzip);
    assert_eq!(a.pauses.count, b.pauses.count);
    assert_eq!(ids(&a), ids(&b));
}

#[test]
fn tiny_buffers_give_the_same_report() {
    // Lines straddle buffer refills at every size: the scan must not lose or split them.
    let bytes = std::fs::read(fixture("g1-jdk17-unbounded.log")).unwrap();
    let base = analyze_bytes(&[("b", bytes.clone())]);
    for buffer in [64, 100, 257, 4096] {
        let opts = GcLogOptions {
            buffer_bytes: buffer,
            ..GcLogOptions::default()
        };
        let r = analyze_gc_logs(
            vec![GcInput {
                name: "b".into(),
                reader: Source::stream(std::io::Cursor::new(bytes.clone())),
            }],
            &opts,
            None,
        )
        .unwrap();
        // Lines longer than a 64-byte buffer are cut, so only the counts that do not
        // depend on long lines are compared at the smallest sizes.
        assert_eq!(r.input.lines, base.input.lines, "buffer {buffer}");
        if buffer >= 257 {
            assert_eq!(r.pauses.count, base.pauses.count, "buffer {buffer}");
        }
    }
}

// ---- CLI ----

#[test]
fn cli_exit_codes_json_timeline_and_svg() {
    let dir = std::env::temp_dir().join(format!("kgap-gc-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let csv = dir.join("t.csv");
    let svg = dir.join("t.svg");
    let out = bin()
        .arg("--json")
        .arg("--timeline")
        .arg(&csv)
        .arg("--svg")
        .arg(&svg)
        .arg(fixture("g1-jdk17-unbounded.log"))
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for key in [
        "collector",
        "format",
        "jdk",
        "pauses",
        "full_gcs",
        "evacuation_failures",
        "gc_fraction_max_window",
        "diagnoses",
        "unsupported",
    ] {
        assert!(v.get(key).is_some(), "JSON contract lost {key}");
    }
    for key in ["count", "total_ms", "p50_ms", "p99_ms", "max_ms"] {
        assert!(v["pauses"].get(key).is_some(), "pauses lost {key}");
    }
    for key in ["id", "evidence", "cause", "fix"] {
        assert!(v["diagnoses"][0].get(key).is_some(), "diagnosis lost {key}");
    }
    let rows = std::fs::read_to_string(&csv).unwrap();
    assert!(rows.starts_with("window_start_s,gc_ms,gc_fraction,"));
    assert_eq!(
        rows.lines().count() as u64 - 1,
        v["timeline_rows"].as_u64().unwrap()
    );
    let svg = std::fs::read_to_string(&svg).unwrap();
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    assert!(svg.contains("<circle"));

    // Unsupported input: exit 2, the reason on stderr and in the JSON.
    let empty = dir.join("empty.log");
    std::fs::write(&empty, b"").unwrap();
    let out = bin().arg("--json").arg(&empty).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unsupported: empty input"));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["unsupported"], "empty input");

    let out = bin().arg(dir.join("missing.log")).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn help_teaches_and_ends_with_examples() {
    let out = bin().arg("--help").output().unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(help.contains("buffer.memory"));
    let tail = help.trim_end().rsplit("examples:").next().unwrap();
    assert!(
        tail.lines().filter(|l| l.contains("  # ")).count() >= 4,
        "{help}"
    );
}

// ---- the public corpus (not copied into the project) ----

fn corpus_dir() -> Option<PathBuf> {
    let dir = match std::env::var_os("KGAP_CORPUS") {
        Some(c) => PathBuf::from(c).join("gc"),
        None => root().join("../shared/corpus/gc"),
    };
    dir.is_dir().then_some(dir)
}

#[test]
fn every_corpus_log_gets_a_report_and_none_panics() {
    let Some(dir) = corpus_dir() else {
        eprintln!("corpus not found: skipped (set KGAP_CORPUS)");
        return;
    };
    let mut n = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().and_then(|x| x.to_str()) != Some("log") {
            continue;
        }
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        let bytes = std::fs::read(&p).unwrap();
        let r = analyze_bytes(&[(&name, bytes)]);
        assert!(r.is_usable(), "{name}: {:?}", r.unsupported);
        assert!(r.collector.is_some(), "{name}: no collector");
        assert!(!r.diagnoses.is_empty(), "{name}: no diagnosis");
        // The collector in the file's name is the one found.
        let want = if name.contains("zgc-generational") {
            "ZGC (generational)"
        } else if name.contains("zgc") {
            "ZGC"
        } else if name.contains("shenandoah") {
            "Shenandoah"
        } else if name.contains("parallel") {
            "Parallel"
        } else if name.contains("serial") {
            "Serial"
        } else {
            "G1"
        };
        assert_eq!(r.collector.as_deref(), Some(want), "{name}");
        let legacy = name.contains("legacy");
        assert_eq!(
            r.format,
            Some(if legacy { "legacy" } else { "unified" }),
            "{name}"
        );
        n += 1;
    }
    assert_eq!(n, 29, "corpus size changed");
}

#[test]
fn mutated_logs_never_panic() {
    // A deterministic stand-in for fuzz/fuzz_targets/gc_log.rs that runs on stable:
    // real logs with bytes flipped, lines cut, and brackets dropped.
    let mut seed = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        seed = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = seed;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    let mut sources = vec![
        std::fs::read(fixture("g1-jdk17-unbounded.log")).unwrap(),
        std::fs::read(fixture("shenandoah-jdk17-unbounded.log")).unwrap(),
    ];
    if let Some(dir) = corpus_dir() {
        for name in [
            "gc-26-g1-jdk8-legacy.log",
            "gc-28-g1-jdk8-legacy.log",
            "gc-18-zgc-generational-jdkunk.log",
        ] {
            if let Ok(b) = std::fs::read(dir.join(name)) {
                sources.push(b);
            }
        }
    }
    for src in &sources {
        for _ in 0..40 {
            let mut b = src.clone();
            for _ in 0..(next() % 64) {
                let i = (next() as usize) % b.len();
                b[i] = match next() % 6 {
                    0 => b'[',
                    1 => b']',
                    2 => b'\n',
                    3 => 0,
                    4 => b'(',
                    _ => next() as u8,
                };
            }
            let cut = (next() as usize) % b.len();
            b.truncate(cut.max(1));
            let r = analyze_bytes(&[("m", b)]);
            let _ = r.render_text();
            let _ = r.render_svg();
            serde_json::to_string(&r).unwrap();
        }
    }
}

#[test]
fn max_heap_mb_is_for_logs_that_do_not_state_it() {
    // 0 would silently drop the heap analysis and the collapse finding: a usage error.
    let out = bin()
        .args(["--max-heap-mb", "0"])
        .arg(fixture("g1-jdk17-unbounded.log"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("positive"));
    // A maximum the log states itself wins over the option, and the report says so.
    let out = bin()
        .args(["--json", "--max-heap-mb", "4096"])
        .arg(fixture("g1-jdk17-unbounded.log"))
        .output()
        .unwrap();
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["max_heap_source"], "log");
    assert_eq!(r["max_heap_mb"], 256.0);
    assert!(
        r["warnings"].to_string().contains("was not used"),
        "{}",
        r["warnings"]
    );
    let ids: Vec<&str> = r["diagnoses"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|d| d["id"].as_str())
        .collect();
    assert!(ids.contains(&"gc-collapse"), "{ids:?}");
    // A log that does not state it takes the option.
    let out = bin()
        .args(["--json", "--max-heap-mb", "256"])
        .arg(fixture("g1-jdk17-unbounded-xlog-gc.log"))
        .output()
        .unwrap();
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["max_heap_source"], "option");
}

// ---- the forms GC logs reach users in (issue 14 §5): fixtures/gc/forms, fixtures/gc/shipped ----

/// The JVM's line inside a shipper's record, found independently of the analyzer: the
/// text after the known prefix shapes, JSON unescaped the simple way.
fn jvm_text(line: &str) -> String {
    if let Some(i) = line.find("{\"log\":\"") {
        let body = &line[i + 8..];
        let end = body.find("\\n\",").unwrap_or(body.len());
        return body[..end]
            .replace("\\u003e", ">")
            .replace("\\u003c", "<")
            .replace("\\\"", "\"");
    }
    // Everything before the first JVM decoration is the shipper's.
    match line.find("[") {
        Some(i) => line[i..].to_string(),
        None => line.to_string(),
    }
}

/// (all, young, full, degenerated) pause summary lines: `… Pause <Kind> … <n>ms|s` at the
/// end, a decimal point or comma.
fn count_pauses(text: &str) -> (u64, u64, u64, u64) {
    let mut c = (0, 0, 0, 0);
    for line in text.lines() {
        let l = jvm_text(line);
        let Some(i) = l.find("Pause ") else { continue };
        let last = l.rsplit(' ').next().unwrap();
        let num = last.trim_end_matches("ms").trim_end_matches('s');
        if num == last
            || num.is_empty()
            || !num
                .chars()
                .all(|ch| ch.is_ascii_digit() || ch == '.' || ch == ',')
        {
            continue;
        }
        let kind = &l[i..];
        c.0 += 1;
        c.1 += u64::from(kind.starts_with("Pause Young"));
        c.2 += u64::from(kind.starts_with("Pause Full"));
        c.3 += u64::from(kind.starts_with("Pause Degenerated"));
    }
    c
}

fn forms_fixtures() -> Vec<String> {
    let mut v = Vec::new();
    for dir in ["forms", "shipped"] {
        for e in std::fs::read_dir(fixture(dir)).unwrap() {
            let p = e.unwrap().path();
            if p.extension().and_then(|x| x.to_str()) == Some("log") {
                v.push(format!(
                    "{dir}/{}",
                    p.file_name().unwrap().to_string_lossy()
                ));
            }
        }
    }
    v.sort();
    v
}

#[test]
fn every_form_counts_every_pause_of_the_right_kind() {
    let files = forms_fixtures();
    assert!(files.len() >= 13, "{files:?}");
    let mut commas = 0;
    for name in &files {
        let text = std::fs::read_to_string(fixture(name)).unwrap();
        let (all, young, full, degenerated) = count_pauses(&text);
        let r = analyze_file(name);
        let ctx = format!("{name}: {}", r.render_text());
        assert_eq!(r.pauses.count, all, "{ctx}");
        let typed = |p: &str| -> u64 {
            r.pauses_by_type
                .iter()
                .filter(|t| t.kind.starts_with(p))
                .map(|t| t.stats.count)
                .sum()
        };
        assert_eq!(typed("Pause Young"), young, "{ctx}");
        assert_eq!(r.full_gcs, full, "{ctx}");
        assert_eq!(typed("Pause Full"), full, "{ctx}");
        // Shenandoah's degenerated cycles are their own kind, never young collections.
        assert_eq!(r.degenerated_gcs, degenerated, "{ctx}");
        assert_eq!(typed("Pause Degenerated"), degenerated, "{ctx}");
        if name.contains("shenandoah") {
            assert!(degenerated > 0, "{ctx}");
            assert_eq!(young, 0, "{ctx}");
            assert!(r.heap_after_young.is_none(), "{ctx}");
        }
        // A time decoration was read through any prefix and locale.
        if !name.contains("level-tags") {
            assert_ne!(r.clock, "none", "{ctx}");
            assert!(r.duration_s.unwrap_or(0.0) > 1.0, "{ctx}");
        }
        if all > 0 {
            assert!(r.pauses.total_ms > 0.0, "{ctx}");
        }
        // The decimal comma is really in the captured German/French logs.
        if name.contains("-de") || name.contains("-fr") {
            assert!(
                text.contains("ms")
                    && text.lines().any(|l| {
                        let l = jvm_text(l);
                        l.ends_with("ms") && l.rsplit(' ').next().unwrap().contains(',')
                    }),
                "{name}: no decimal comma"
            );
            commas += 1;
        }
    }
    assert!(commas >= 6, "{commas}");
}

/// What a report says, without what depends on the bytes of the input.
fn gist(r: &GcReport) -> String {
    format!(
        "{:?} {:?} {:?} {} {:.3} {:?} {} {} {} {:?} {:?} {:?} {:?}",
        r.collector,
        r.format,
        r.clock,
        r.pauses.count,
        r.pauses.total_ms,
        r.pauses_by_type
            .iter()
            .map(|t| (&t.kind, t.stats.count))
            .collect::<Vec<_>>(),
        r.full_gcs,
        r.degenerated_gcs,
        r.evacuation_failures,
        r.heap_after_young.as_ref().map(|h| (h.count, h.max_pct)),
        r.gc_fraction_max_window,
        r.start_s,
        ids(r),
    )
}

/// A log's lines as five shippers pass them on (the shapes of fixtures/gc/shipped).
fn shipped_forms(text: &str) -> Vec<(&'static str, String)> {
    let each = |f: &dyn Fn(&str) -> String| text.lines().map(|l| f(l) + "\n").collect::<String>();
    vec![
        (
            "docker json-file",
            each(&|l| {
                let s = serde_json::to_string(&format!("{l}\n"))
                    .unwrap()
                    .replace('>', "\\u003e");
                format!("{{\"log\":{s},\"stream\":\"stdout\",\"time\":\"2026-12-01T11:07:54.933459022Z\"}}")
            }),
        ),
        (
            "CRI",
            each(&|l| format!("2026-12-01T11:08:11.426560506Z stdout F {l}")),
        ),
        (
            "kubectl --timestamps",
            each(&|l| format!("2026-12-01T11:08:59.996775255Z {l}")),
        ),
        (
            "journalctl -o short",
            each(&|l| format!("Dec 01 11:07:49 vm java[16629]: {l}")),
        ),
        (
            "journalctl -o short-iso",
            each(&|l| format!("2026-12-01T11:07:49+0000 vm java[16629]: {l}")),
        ),
    ]
}

#[test]
fn a_shippers_prefix_changes_nothing_on_any_fixture_or_corpus_log() {
    let mut logs: Vec<(String, Vec<u8>)> = [
        "g1-jdk17-unbounded.log",
        "serial-jdk17-unbounded.log",
        "shenandoah-jdk17-unbounded.log",
        "forms/serial-jdk17-de-xlog-gc.log",
        "forms/zgc-jdk17-de-xlog-gc.log",
    ]
    .iter()
    .map(|n| (n.to_string(), std::fs::read(fixture(n)).unwrap()))
    .collect();
    if let Some(dir) = corpus_dir() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.extension().and_then(|x| x.to_str()) == Some("log") {
                logs.push((
                    p.file_name().unwrap().to_string_lossy().into(),
                    std::fs::read(&p).unwrap(),
                ));
            }
        }
    }
    let mut legacy = 0;
    for (name, bytes) in &logs {
        let mut text = String::from_utf8_lossy(bytes).replace('\r', "");
        // Every shipper ends each line it ships: a file whose last line has no newline
        // (read as cut) is compared ended too.
        if !text.ends_with('\n') {
            text.push('\n');
        }
        let plain = analyze_bytes(&[(name, text.clone().into_bytes())]);
        legacy += u64::from(plain.format == Some("legacy"));
        for (shipper, shipped) in shipped_forms(&text) {
            let r = analyze_bytes(&[(name, shipped.into_bytes())]);
            assert_eq!(gist(&r), gist(&plain), "{name} through {shipper}");
        }
    }
    if corpus_dir().is_some() {
        assert!(legacy >= 4, "the corpus' JDK 8 logs were read: {legacy}");
    }
}

#[test]
fn jdk8_records_in_a_decimal_comma_locale_read_the_same() {
    // No JDK 8 runs here: the corpus' real JDK 8 logs with each decimal point between
    // digits turned into a comma, as a JDK 8 under LC_ALL=de_DE writes them
    // (`0,0123456 secs`, `1,234: [GC`; ISO dates keep their point, as HotSpot's do).
    let Some(dir) = corpus_dir() else {
        eprintln!("corpus not found: skipped (set KGAP_CORPUS)");
        return;
    };
    let mut n = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        if !name.contains("legacy") {
            continue;
        }
        let text = std::fs::read_to_string(&p).unwrap().replace('\r', "");
        let mut comma = String::with_capacity(text.len());
        let b = text.as_bytes();
        for (i, &c) in b.iter().enumerate() {
            let between_digits =
                i > 0 && i + 1 < b.len() && b[i - 1].is_ascii_digit() && b[i + 1].is_ascii_digit();
            // An ISO date's seconds (`09.668+0000`) are not locale-formatted.
            let iso = i >= 3 && b[i - 3] == b':';
            comma.push(if c == b'.' && between_digits && !iso {
                ','
            } else {
                c as char
            });
        }
        assert_ne!(comma, text);
        let plain = analyze_bytes(&[(&name, text.into_bytes())]);
        let r = analyze_bytes(&[(&name, comma.into_bytes())]);
        assert!(plain.pauses.count > 0, "{name}");
        assert_eq!(r.pauses.count, plain.pauses.count, "{name}");
        assert_eq!(r.pauses.total_ms, plain.pauses.total_ms, "{name}");
        assert_eq!(r.full_gcs, plain.full_gcs, "{name}");
        assert_eq!(r.start_s, plain.start_s, "{name}");
        assert_eq!(ids(&r), ids(&plain), "{name}");
        n += 1;
    }
    assert!(n >= 4, "{n}");
}

// ---- the fast path against the reference path (issue 19) ----

/// The report as JSON without what only the reference path changes (lines parsed).
fn report_json(bytes: &[u8], name: &str, every_line: bool) -> serde_json::Value {
    let opts = GcLogOptions {
        every_line,
        // The reference reads line by line on one thread; the fast scan as users run it.
        threads: if every_line {
            None
        } else {
            GcLogOptions::default().threads
        },
        ..GcLogOptions::default()
    };
    let r = analyze_gc_logs(
        vec![GcInput {
            name: name.into(),
            reader: Source::stream(std::io::Cursor::new(bytes.to_vec())),
        }],
        &opts,
        None,
    )
    .unwrap();
    let mut v = serde_json::to_value(&r).unwrap();
    v["input"]["lines_parsed"] = serde_json::Value::Null;
    v
}

#[test]
fn the_fast_scan_reports_what_parsing_every_line_reports() {
    let mut files: Vec<PathBuf> = Vec::new();
    for dir in [
        fixture(""),
        fixture("companion"),
        fixture("forms"),
        fixture("shipped"),
    ] {
        for e in std::fs::read_dir(dir).unwrap() {
            files.push(e.unwrap().path());
        }
    }
    if let Some(dir) = corpus_dir() {
        for e in std::fs::read_dir(dir).unwrap() {
            files.push(e.unwrap().path());
        }
    }
    files.retain(|p| p.extension().and_then(|x| x.to_str()) == Some("log"));
    // 28 fixtures, and the corpus when it is here.
    assert!(
        files.len() >= 28 + if corpus_dir().is_some() { 29 } else { 0 },
        "{}",
        files.len()
    );
    for p in &files {
        let bytes = std::fs::read(p).unwrap();
        let name = p.file_name().unwrap().to_string_lossy();
        let fast = report_json(&bytes, &name, false);
        let reference = report_json(&bytes, &name, true);
        assert_eq!(
            fast,
            reference,
            "{}: the fast scan and the every-line reference differ",
            p.display()
        );
    }
}

/// The report (JSON, lines parsed included) and the timeline of `parts` read together.
fn report_with(parts: &[(&str, &[u8])], threads: Option<usize>, buffer: usize) -> String {
    let inputs = parts
        .iter()
        .map(|(n, b)| GcInput {
            name: n.to_string(),
            reader: Source::stream(std::io::Cursor::new(b.to_vec())),
        })
        .collect();
    report_of(inputs, threads, buffer)
}

/// [`report_with`] with each part written to a plain file and read as one: in chunks, by
/// every thread.
fn report_from_files(parts: &[(&str, &[u8])], threads: usize, buffer: usize) -> String {
    static DIRS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = DIRS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("kgap-gc-files-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let inputs = parts
        .iter()
        .enumerate()
        .map(|(i, (name, bytes))| {
            let path = dir.join(i.to_string());
            std::fs::write(&path, bytes).unwrap();
            GcInput {
                name: name.to_string(),
                reader: Source::file(std::fs::File::open(&path).unwrap()),
            }
        })
        .collect();
    let report = report_of(inputs, Some(threads), buffer);
    std::fs::remove_dir_all(&dir).unwrap();
    report
}

fn report_of(inputs: Vec<GcInput<'_>>, threads: Option<usize>, buffer: usize) -> String {
    let opts = GcLogOptions {
        threads,
        buffer_bytes: buffer,
        ..GcLogOptions::default()
    };
    let mut timeline = Vec::new();
    let r = analyze_gc_logs(inputs, &opts, Some(Box::new(&mut timeline))).unwrap();
    format!(
        "{}\n{}\n{}",
        serde_json::to_string_pretty(&r).unwrap(),
        r.render_text(),
        String::from_utf8_lossy(&timeline)
    )
}

/// The block front end (blocks parsed on 0, 1 or 3 threads; a plain file read in chunks
/// on 1, 2 or 3) against the line scan.
fn assert_blocks_match_line_scan(parts: &[(&str, &[u8])], buffers: &[usize], what: &str) {
    for &buffer in buffers {
        let reference = report_with(parts, None, buffer);
        for threads in [0, 1, 3] {
            let got = report_with(parts, Some(threads), buffer);
            assert!(
                got == reference,
                "{what}: {threads} threads, buffer {buffer}: the block front end differs\n{}",
                first_difference(&reference, &got)
            );
        }
        for threads in [1, 2, 3] {
            let got = report_from_files(parts, threads, buffer);
            assert!(
                got == reference,
                "{what}: a file in chunks, {threads} threads, buffer {buffer}: differs\n{}",
                first_difference(&reference, &got)
            );
        }
    }
}

fn first_difference(a: &str, b: &str) -> String {
    for (i, (x, y)) in a.lines().zip(b.lines()).enumerate() {
        if x != y {
            return format!("line {}: {x:?}\n  vs {y:?}", i + 1);
        }
    }
    format!("lengths {} and {}", a.len(), b.len())
}

fn gc_logs() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = Vec::new();
    for dir in [
        fixture(""),
        fixture("companion"),
        fixture("forms"),
        fixture("shipped"),
    ] {
        for e in std::fs::read_dir(dir).unwrap() {
            files.push(e.unwrap().path());
        }
    }
    if let Some(dir) = corpus_dir() {
        for e in std::fs::read_dir(dir).unwrap() {
            files.push(e.unwrap().path());
        }
    }
    files.retain(|p| p.extension().and_then(|x| x.to_str()) == Some("log"));
    files.sort();
    files
}

#[test]
fn the_block_front_end_reports_what_the_line_scan_reports() {
    let files = gc_logs();
    assert!(files.len() >= 28, "{}", files.len());
    for p in &files {
        let bytes = std::fs::read(p).unwrap();
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        // The default buffer, and buffers that cut the log into many blocks and cut its
        // longer lines.
        assert_blocks_match_line_scan(&[(&name, &bytes)], &[1 << 20, 4096, 150], &name);
    }
}

#[test]
fn the_block_front_end_matches_the_line_scan_on_edges_and_mixed_logs() {
    let read = |p: &str| std::fs::read(fixture(p)).unwrap();
    let unified = read("g1-jdk17-unbounded.log");
    let xlog_gc = read("g1-jdk17-unbounded-xlog-gc.log");
    let docker = read("shipped/g1-jdk17-docker-json.log");
    let cri = read("shipped/shenandoah-jdk17-de-cri.log");
    let german = read("forms/g1-jdk17-de.log");
    let legacy: Vec<u8> = corpus_dir()
        .and_then(|d| std::fs::read(d.join("gc-26-g1-jdk8-legacy.log")).ok())
        .unwrap_or_else(|| {
            b"2026-01-01T00:00:00.000+0000: 0.100: [GC pause (G1 Evacuation Pause) (young), 0.0050000 secs]\n   [Eden: 10.0M(10.0M)->0.0B(9.0M) Survivors: 0.0B->1024.0K Heap: 10.0M(256.0M)->2.0M(256.0M)]\n [Times: user=0.01 sys=0.00, real=0.01 secs]\n".to_vec()
        });
    let head = |b: &[u8], n: usize| b[..b.len().min(n)].to_vec();
    let pause = b"[1.000s][info][gc] GC(1) Pause Young (Normal) (G1 Evacuation Pause) 24M->3M(256M) 2.345ms";
    let mut crlf = Vec::new();
    for l in xlog_gc.split(|&c| c == b'\n').take(400) {
        crlf.extend_from_slice(l);
        crlf.extend_from_slice(b"\r\n");
    }
    let mut long_line = head(&xlog_gc, 20_000);
    long_line.extend_from_slice(&[b'x'; 5000]);
    long_line.extend_from_slice(b" Pause Young 1.0ms\n");
    long_line.extend_from_slice(&head(&xlog_gc, 20_000));
    let mut nul = head(&unified, 30_000);
    nul.extend_from_slice(b"\0\0binary\n");
    nul.extend_from_slice(&head(&unified, 30_000));
    let mut legacy_then_unified = head(&legacy, 60_000);
    legacy_then_unified.extend_from_slice(&head(&unified, 60_000));
    let mut unified_then_legacy = head(&unified, 60_000);
    unified_then_legacy.extend_from_slice(&head(&legacy, 60_000));
    let mut clocks = Vec::new();
    // Wall clock first (no uptime), then lines that have both: the clock stays wall.
    clocks.extend_from_slice(b"[2026-01-01T00:00:01.000+0000][info][gc] Using G1\n");
    clocks.extend_from_slice(b"[2026-01-01T00:00:02.000+0000][info][gc] GC(0) Pause Young (Normal) (G1 Evacuation Pause) 24M->3M(256M) 2.345ms\n");
    clocks.extend_from_slice(b"[2026-01-01T00:00:03.000+0000][5.000s][info][gc] GC(1) Pause Young (Normal) (G1 Evacuation Pause) 24M->3M(256M) 2.345ms\n");
    clocks.extend_from_slice(
        b"[1796021927326ms][2475ms] GC(2) Pause Full (System.gc()) 24M->3M(256M) 30.5ms\n",
    );
    clocks.extend_from_slice(b"[4.000s][safepoint] Pause Young is not ours 1.0ms\n");
    clocks.extend_from_slice(b"[4.500s][info][gc] GC(3) Pause Young (Normal) (G1 Evacuation Pause) 24M->3M(256M) 2,345ms\n");
    clocks.extend_from_slice(
        b"[4.600s][info][gc] GC(4) Pause Young (Normal) (G1 Evacuation Pause) 24M->3M(256M)\n",
    );
    clocks.extend_from_slice(b"[4.700s][info][gc] GC(5) Pause Young (Normal) (G1 Evacuation Pause) 24M(30M)->3M(256M) 1ms\n");
    clocks.extend_from_slice(
        b"[4.800s][info][gc] GC(6) Pause Young (Normal) (G1 Evacuation Pause) 24M->3M 1ms\n",
    );
    clocks.extend_from_slice(
        b"[4.900s][info][gc] GC(7) Pause Young (Normal) (G1 Humongous Allocation) \xc3\xa9 1ms\n",
    );
    clocks.extend_from_slice(b"[5.000s][info][gc] GC(8) Pause Young (Normal) (G1 Evacuation Pause) (Evacuation Failure: Pinned) 24M->24M(256M) 9ms\n");
    clocks.extend_from_slice(b"[5.100s][info][gc] GC(x) Pause Young (Normal) 24M->24M(256M) 9ms\n");
    clocks.extend_from_slice(b"[5.200s] [info][gc] GC(9) Pause Remark 24M->24M(256M) 0.9ms\n");
    clocks.extend_from_slice(b"[5.300s][info][gc] GC(10) Pause Young (Normal) (G1 Evacuation Pause) 24M->3M(256M) 2.345ms   \n");
    clocks.extend_from_slice(b"[5.400s][info][gc] GC(11) Pause Young (Normal) (G1 Evacuation Pause) 24M->3M(256M) 0.002s\n");
    clocks.extend_from_slice(
        b"[123456789012345678ns][info][gc] GC(12) Pause Cleanup 24M->3M(256M) 0.2ms\n",
    );
    clocks.extend_from_slice(pause);
    // More anchored lines in a block than a worker pre-parses: the rest of the block is
    // read on the analyzer's thread; near the end a JDK 8 record turns every-line mode on.
    let mut short_lines = head(&unified, 5000);
    for i in 0..40_000 {
        short_lines.extend_from_slice(
            format!("[{}.0s] GC({i}) Pause Full {}ms\n", i / 100, i % 7).as_bytes(),
        );
        if i == 35_000 {
            short_lines
                .extend_from_slice(b"noise\n[GC (Allocation Failure) 1K->1K(2K), 0.001 secs]\n");
        }
    }
    // More pause kinds than the analyzer keeps resolved: eight the workers' pause reader
    // reads (and names by a head token), and between their rounds one it declines (no
    // heap capacity), which takes the slot of one of the eight.
    let mut kinds = Vec::new();
    for round in 0..60 {
        for k in 0..8 {
            kinds.extend_from_slice(
                format!(
                    "[{round}.{k}s][info][gc] GC({}) Pause Young (Normal) (Cause {k}) 24M->3M(256M) 1.{k}ms\n",
                    round * 9 + k
                )
                .as_bytes(),
            );
        }
        kinds.extend_from_slice(
            format!(
                "[{round}.9s][info][gc] GC({}) Pause Young (Normal) (Other {}) 24M->3M 2ms\n",
                round * 9 + 8,
                round % 3
            )
            .as_bytes(),
        );
    }
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("empty", Vec::new()),
        ("more pause kinds than are kept", kinds),
        ("many short anchored lines", short_lines),
        ("newlines", b"\n\n\n".to_vec()),
        ("one pause, no newline", pause.to_vec()),
        ("one pause", [&pause[..], b"\n"].concat()),
        ("a tiny head", head(&unified, 3000)),
        ("cut mid-line", head(&xlog_gc, 12_345)),
        ("crlf", crlf),
        ("a line longer than the buffer", long_line),
        ("nul", nul),
        ("jdk 8", legacy.clone()),
        ("jdk 8 then unified", legacy_then_unified),
        ("unified then jdk 8", unified_then_legacy),
        ("docker json", docker.clone()),
        ("cri", cri),
        ("a german locale", german),
        ("clocks and odd pause lines", clocks),
    ];
    for (what, bytes) in &cases {
        assert_blocks_match_line_scan(&[("gc.log", bytes)], &[1 << 20, 4096, 64, 97], what);
    }
    // Several files read together: the analyzer's state goes on from one to the next.
    let sets: Vec<Vec<(&str, &[u8])>> = vec![
        vec![("a.log", &legacy[..]), ("b.log", &unified[..])],
        vec![("a.log", &unified[..]), ("b.log", &legacy[..])],
        vec![
            ("a.log", &xlog_gc[..]),
            ("b.log", &docker[..]),
            ("c.log", &unified[..]),
        ],
    ];
    for set in &sets {
        assert_blocks_match_line_scan(set, &[1 << 20, 4096], "files read together");
    }
    // Dense and sparse stretches in one file: the parser threads in use change with the
    // blocks' density (a dense block takes a parser off), and the blocks dealt to fewer
    // parsers and then to all of them again still reach the analyzer in input order.
    let mut stretches = Vec::new();
    for _ in 0..3 {
        stretches.extend_from_slice(&unified);
        for _ in 0..20 {
            stretches.extend_from_slice(&xlog_gc);
        }
    }
    let reference = report_with(&[("gc.log", &stretches)], None, 4096);
    for threads in [2, 3] {
        let got = report_with(&[("gc.log", &stretches)], Some(threads), 4096);
        assert!(
            got == reference,
            "dense and sparse stretches, {threads} threads: the block front end differs\n{}",
            first_difference(&reference, &got)
        );
        let got = report_from_files(&[("gc.log", &stretches)], threads, 4096);
        assert!(
            got == reference,
            "dense and sparse stretches, a file in chunks, {threads} threads: differs\n{}",
            first_difference(&reference, &got)
        );
    }
}

#[test]
fn the_heap_chart_draws_degenerated_cycles_as_their_own_kind_with_labelled_ticks() {
    // Shenandoah's degenerated cycles stop the world: once drawn as "young" pauses.
    let r = analyze_file("forms/shenandoah-jdk25-de-xlog-gc.log");
    assert!(r.degenerated_gcs > 0, "the fixture has degenerated cycles");
    let svg = r.render_svg();
    let degenerated = "#ff7f0e";
    let drawn = svg
        .lines()
        .filter(|l| (l.starts_with("<line") || l.starts_with("<circle")) && l.contains(degenerated))
        .count();
    assert!(drawn > 0, "no point in the degenerated colour:\n{svg}");
    assert!(svg.contains("■ degenerated"), "the legend names the kind");
    // The heap panel's ticks: 0, 25, 50, 75 and 100 % are labelled, not only 0 and the max.
    for tick in [">25<", ">50<", ">75<"] {
        assert!(svg.contains(tick), "no {tick} tick:\n{svg}");
    }
}

/// "No GC problem" is said only of what was read: a log cut mid-line says it was cut, and a
/// few lines under one window say they are too short to tell.
#[test]
fn no_gc_problem_is_never_said_of_what_was_not_read() {
    let whole = std::fs::read_to_string(fixture("g1-jdk17-bounded.log")).unwrap();
    let r = analyze_bytes(&[("whole", whole.clone().into_bytes())]);
    assert_eq!(ids(&r), ["no-gc-problem"], "the fixture is healthy");
    // The same log cut in the middle of a line.
    let lines: Vec<&str> = whole.lines().collect();
    let mut cut = lines[..lines.len() - 1].join("\n");
    cut.push('\n');
    cut.push_str(&lines[lines.len() - 1][..10]);
    let r = analyze_bytes(&[("cut", cut.into_bytes())]);
    assert_eq!(ids(&r), ["gc-log-cut"]);
    // Its first pause alone: less than a window.
    let first = lines
        .iter()
        .position(|l| l.contains("Pause Young"))
        .expect("a pause");
    let short = format!("{}\n", lines[..=first].join("\n"));
    let r = analyze_bytes(&[("short", short.into_bytes())]);
    assert_eq!(ids(&r), ["gc-log-too-short"]);
}

fn paste(name: &str) -> GcReport {
    let bytes = std::fs::read(root().join("fixtures/pastes/gc").join(name)).unwrap();
    analyze_bytes(&[(name, bytes)])
}

/// Real pastes: a prefix of any kind before every line (`name|`, swarm's `service | `, a
/// Markdown fence glued to the first line) reads as the lines without it.
#[test]
fn lines_behind_any_prefix_read_as_the_jvm_wrote_them() {
    for (name, prefix_end) in [
        ("004-ev3dev-serial-unified-prefixed.log", "|"),
        ("028-trino-zgc-allocation-stall-swarm-prefix.log", "| "),
        ("047-hazelcast-g1-humongous-full-gc-fence-glued.log", "```"),
    ] {
        let text = std::fs::read_to_string(root().join("fixtures/pastes/gc").join(name)).unwrap();
        let bare: String = text
            .split_inclusive('\n')
            .map(|l| l.find(prefix_end).map_or(l, |i| &l[i + prefix_end.len()..]))
            .collect();
        let got = paste(name);
        let want = analyze_bytes(&[(name, bare.into_bytes())]);
        assert!(got.is_usable(), "{name}: {:?}", got.unsupported);
        assert_eq!(ids(&got), ids(&want), "{name}");
        assert_eq!(got.pauses.count, want.pauses.count, "{name}");
    }
}

/// A G1 log cut inside a pause (its `gc,start` line, not its end) is read and says so.
#[test]
fn a_log_cut_inside_a_pause_is_read_and_says_so() {
    let r = paste("027-trino-coordinator-g1-unified-time-pid.log");
    assert_eq!(r.collector.as_deref(), Some("G1"));
    assert_eq!(ids(&r), ["gc-log-too-short"]);
    assert!(
        r.warnings
            .iter()
            .any(|w| w.contains("ends inside GC(62) Pause Young")),
        "{:?}",
        r.warnings
    );
    // A whole log does not say it.
    let r = analyze_file("g1-jdk17-bounded.log");
    assert!(!r.warnings.iter().any(|w| w.contains("ends inside")));
}

/// Back-to-back Parallel full GCs that leave the old generation 99.8% full collapse even
/// though the heap is 71% full after them (the young generation is emptied).
#[test]
fn the_old_generation_full_after_full_gcs_is_a_collapse() {
    let r = paste("005-gcviewer-parallel-back-to-back-full-gc.log");
    assert!(ids(&r).contains(&"gc-collapse"), "{:?}", ids(&r));
    let d = r.diagnoses.iter().find(|d| d.id == "gc-collapse").unwrap();
    assert!(d.title.contains("old generation"), "{}", d.title);
    // CMS's old generation a third full after its stop-the-world collection: no collapse.
    let r = paste("046-so-copy-cms-parnew-promotion-failed.log");
    assert!(!ids(&r).contains(&"gc-collapse"), "{:?}", ids(&r));
    assert!(ids(&r).contains(&"concurrent-gc-behind"), "{:?}", ids(&r));
}

/// A log shorter than half a window has no window to measure, yet 282 ms of pauses in its
/// 0.43 s with the heap 87-98% full after every young GC is a collapse (measured against
/// half a window, an underestimate of its share); its first pause alone is not.
#[test]
fn a_collapse_shorter_than_a_window_is_named() {
    let name = "024-dragonwell8-g1-humongous-full-gc-test-output.log";
    let r = paste(name);
    assert!(ids(&r).contains(&"gc-collapse"), "{:?}", ids(&r));
    assert_eq!(r.gc_fraction_max_window, None);
    let text = std::fs::read_to_string(root().join("fixtures/pastes/gc").join(name)).unwrap();
    let first = text.find("secs]\n").expect("a pause") + "secs]\n".len();
    let r = analyze_bytes(&[("first", text[..first].as_bytes().to_vec())]);
    assert_eq!(r.pauses.count, 1);
    assert!(!ids(&r).contains(&"gc-collapse"), "{:?}", ids(&r));
    // The same test's other paste: `(young)-- 492M->492M(504M)` is PrintGC's mark of a
    // failed evacuation (to-space exhausted).
    let r = paste("030-dragonwell8-g1-printgc-to-space-marker.log");
    assert_eq!(r.evacuation_failures, 1);
}

#[test]
fn an_out_of_memory_line_is_a_diagnosis() {
    let r = paste("055-dragonwell-zgc-out-of-memory-line.log");
    assert!(ids(&r).contains(&"out-of-memory"), "{:?}", ids(&r));
    assert!(!ids(&r).contains(&"gc-collapse"));
}

/// Shenandoah's control-thread lines without decorations: a degenerated cycle is the
/// collector falling behind; a normal one is not.
#[test]
fn an_undecorated_degenerated_shenandoah_cycle_is_a_collector_behind() {
    let r = paste("050-genshen-completed-gc-undecorated.log");
    assert_eq!(r.collector.as_deref(), Some("Shenandoah"));
    assert_eq!(ids(&r), ["concurrent-gc-behind"]);
    let text = std::fs::read_to_string(
        root().join("fixtures/pastes/gc/050-genshen-completed-gc-undecorated.log"),
    )
    .unwrap();
    let normal: String = text
        .lines()
        .filter(|l| !l.contains("(degenerated)"))
        .map(|l| format!("{l}\n"))
        .collect();
    let r = analyze_bytes(&[("normal", normal.into_bytes())]);
    assert!(!ids(&r).contains(&"concurrent-gc-behind"), "{:?}", ids(&r));
}
