//! analyze-thread-cpu end to end: a spinning child found as the busiest thread, the
//! --save/--from round trip, the command's exit status, a process that exits mid-run, and
//! bad input (exit 2, never a panic).

#[path = "common/gzip.rs"]
mod gzip;

use std::path::PathBuf;
use std::process::{Command, Output};

use serde_json::Value;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_analyze-thread-cpu"))
}

/// A fresh directory per test.
fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("kgap-tcpu-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn run(cmd: &mut Command) -> (i32, String, String) {
    let Output {
        status,
        stdout,
        stderr,
    } = cmd.output().expect("the binary runs");
    (
        status.code().unwrap_or(-1),
        String::from_utf8_lossy(&stdout).into_owned(),
        String::from_utf8_lossy(&stderr).into_owned(),
    )
}

fn json(stdout: &str) -> Value {
    serde_json::from_str(stdout).unwrap_or_else(|e| panic!("not JSON ({e}):\n{stdout}"))
}

/// The analysis part of a report: what --from must reproduce from a recording.
fn analysis(v: &Value) -> Value {
    serde_json::json!({
        "threads": v["threads"], "groups": v["groups"], "saturated": v["saturated"],
        "diagnoses": v["diagnoses"], "duration_s": v["duration_s"],
        "intervals": v["intervals"], "process_cores_mean": v["process_cores_mean"],
        "interval_ms": v["interval_ms"],
    })
}

#[test]
fn spinning_child_is_the_busiest_thread_and_the_recording_replays_exactly() {
    let d = tmp("spin");
    let rec = d.join("rec.jsonl");
    let timeline = d.join("timeline.csv");
    let svg = d.join("chart.svg");
    let (code, out, err) = run(bin()
        .args(["--interval", "0.5", "--duration", "4", "--json", "--save"])
        .arg(&rec)
        .arg("--timeline")
        .arg(&timeline)
        .arg("--svg")
        .arg(&svg)
        .args(["--", "sh", "-c", "while :; do :; done"]));
    assert_eq!(code, 0, "{err}");
    let live = json(&out);
    let threads = live["threads"].as_array().unwrap();
    // The spinner is sh's only thread: the busiest, and clearly busy even on a loaded
    // 2-core machine.
    assert_eq!(threads[0]["name"], "sh", "{out}");
    let mean = threads[0]["cores_mean"].as_f64().unwrap();
    assert!(mean > 0.2 && mean <= 1.05, "{out}");
    assert!(live["duration_s"].as_f64().unwrap() >= 3.5, "{out}");
    assert_eq!(live["command"]["killed_at_duration"], true, "{out}");
    assert_eq!(live["ended"], "--duration reached");
    // Saturated exactly when its longest run reached the threshold (a loaded machine may
    // steal the core), and the diagnoses say so.
    let longest = threads[0]["longest_saturated_s"].as_f64().unwrap();
    let saturated = !live["saturated"].as_array().unwrap().is_empty();
    assert_eq!(saturated, longest >= 3.0 - 1e-6, "{out}");
    let ids: Vec<&str> = live["diagnoses"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        if saturated {
            ["saturated-thread"]
        } else {
            ["no-saturated-thread"]
        }
    );

    // The recording: a header plus one line per sample, replayed to the same analysis.
    let lines = std::fs::read_to_string(&rec).unwrap().lines().count() as u64;
    assert_eq!(lines, 1 + live["intervals"].as_u64().unwrap() + 1);
    let (code, out2, err) = run(bin().arg("--from").arg(&rec).arg("--json"));
    assert_eq!(code, 0, "{err}");
    let replay = json(&out2);
    assert_eq!(analysis(&replay), analysis(&live));
    assert_eq!(replay["ended"], "end of recording");

    // A lower threshold finds it saturated from the same recording, whatever the load.
    let (code, out3, err) = run(bin().arg("--from").arg(&rec).args([
        "--json",
        "--saturated-cores",
        "0.05",
        "--saturated-seconds",
        "1",
    ]));
    assert_eq!(code, 0, "{err}");
    let low = json(&out3);
    assert_eq!(low["saturated"][0]["name"], "sh", "{out3}");
    assert_eq!(low["diagnoses"][0]["id"], "saturated-thread");

    // The timeline CSV has a row per busy interval of the spinner; the SVG names it.
    let csv = std::fs::read_to_string(&timeline).unwrap();
    assert!(csv.starts_with("start_s,end_s,tid,thread,group,role,cores"));
    let sh_rows = csv.lines().filter(|l| l.contains(",sh,sh,app,")).count();
    assert!(sh_rows >= 4, "{csv}");
    let chart = std::fs::read_to_string(&svg).unwrap();
    assert!(chart.contains("<svg") && chart.contains("sh ("), "{chart}");

    // The text report: the same threads, in 80 columns.
    let (code, text, _) = run(bin().arg("--from").arg(&rec));
    assert_eq!(code, 0);
    assert!(text.contains("top threads"), "{text}");
    assert!(text.contains("by role"), "{text}");
    for l in text.lines().filter(|l| !l.contains(rec.to_str().unwrap())) {
        assert!(l.chars().count() <= 80, "wider than 80 columns: {l:?}");
    }
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn command_exit_status_is_reported_not_returned() {
    let (code, out, err) = run(bin().args([
        "--interval",
        "0.2",
        "--json",
        "--",
        "sh",
        "-c",
        "sleep 1; exit 3",
    ]));
    assert_eq!(code, 0, "{err}");
    let v = json(&out);
    assert_eq!(v["command"]["exit_code"], 3, "{out}");
    assert_eq!(v["command"]["killed_at_duration"], false);
    assert_eq!(v["ended"], "the command exited");
    assert!(v["intervals"].as_u64().unwrap() >= 3, "{out}");
}

#[test]
fn a_pid_that_exits_mid_run_reports_what_was_sampled() {
    let mut child = Command::new("sleep").arg("1.2").spawn().unwrap();
    let pid = child.id().to_string();
    // The child is reaped by this test only after the tool is done, so its /proc entry
    // turns into a zombie (no threads left) when it exits.
    let (code, out, err) = run(bin().args(["--interval", "0.2", "--json", "--pid", &pid]));
    let _ = child.wait();
    assert_eq!(code, 0, "{err}");
    let v = json(&out);
    assert!(v["intervals"].as_u64().unwrap() >= 2, "{out}");
    assert_eq!(v["source"]["pid"].as_i64().unwrap().to_string(), pid);
    assert_eq!(v["threads"][0]["name"], "sleep", "{out}");
}

#[test]
fn bad_input_exits_2_with_a_reason() {
    let d = tmp("bad");
    let empty = d.join("empty.jsonl");
    std::fs::write(&empty, "").unwrap();
    let garbage = d.join("garbage.jsonl");
    std::fs::write(&garbage, "this is not a recording\n").unwrap();
    let binary = d.join("binary.jsonl");
    std::fs::write(&binary, [0u8, 159, 146, 150, 0xff, b'\n', 1, 2]).unwrap();
    let one = d.join("one.jsonl");
    std::fs::write(
        &one,
        "{\"at_s\":0.0,\"process_ticks\":5,\"threads\":[{\"tid\":1,\"name\":\"a b (c)\",\
         \"user_ticks\":5,\"system_ticks\":0}]}\n",
    )
    .unwrap();
    let cases: Vec<(Vec<String>, &str)> = vec![
        (vec!["--pid".into(), "2147483000".into()], "no such process"),
        (
            vec!["--".into(), "/nonexistent/kgap-no-such-command".into()],
            "cannot run",
        ),
        (vec!["--from".into(), empty.display().to_string()], "empty"),
        (
            vec!["--from".into(), garbage.display().to_string()],
            "line 1",
        ),
        (
            vec!["--from".into(), binary.display().to_string()],
            "line 1",
        ),
        (
            vec!["--from".into(), one.display().to_string()],
            "at least two",
        ),
        (
            vec!["--from".into(), d.join("missing").display().to_string()],
            "missing",
        ),
        (vec![], "give --pid"),
        (
            vec!["--interval".into(), "0".into(), "--pid".into(), "1".into()],
            "positive",
        ),
    ];
    for (args, want) in cases {
        let (code, out, err) = run(bin().args(&args));
        assert_eq!(code, 2, "{args:?}: stdout {out} stderr {err}");
        assert!(
            err.contains(want),
            "{args:?}: stderr should say {want:?}: {err}"
        );
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn help_ends_with_examples() {
    let (code, out, _) = run(bin().arg("--help"));
    assert_eq!(code, 0);
    let tail = out.trim_end().lines().last().unwrap();
    assert!(out.contains("examples:"), "{out}");
    assert!(tail.contains("analyze-thread-cpu"), "{tail}");
}

// ---------------------------------------------------------------------------------------
// Thread snapshots: the fixtures capture.sh took from real processes, each with the report
// the regen script wrote for it, and figures checked against the fixture's own text.

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fixtures/threads")
}

fn fixture(name: &str) -> PathBuf {
    fixtures().join(name)
}

/// The fixtures SOURCES.tsv lists (every file capture.sh wrote).
fn captured() -> Vec<String> {
    let tsv = std::fs::read_to_string(fixture("SOURCES.tsv")).unwrap();
    tsv.lines()
        .skip(1)
        .map(|l| l.split('\t').next().unwrap().to_string())
        .collect()
}

/// `--from FILE --json` with extra args: exit status, the JSON (when 0) and stderr.
fn snap(path: &std::path::Path, extra: &[&str]) -> (i32, Value, String) {
    let (code, out, err) = run(bin().arg("--from").arg(path).arg("--json").args(extra));
    let v = if code == 0 { json(&out) } else { Value::Null };
    (code, v, err)
}

fn thread<'a>(v: &'a Value, name: &str) -> &'a Value {
    v["threads"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("no thread {name:?} in {v}"))
}

fn ids(v: &Value) -> Vec<String> {
    v["diagnoses"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["id"].as_str().unwrap().to_string())
        .collect()
}

/// A decimal the way the fixture prints it (a comma in German).
fn num(s: &str) -> f64 {
    s.replace(',', ".").parse().unwrap()
}

#[test]
fn every_fixture_reads_to_its_expected_report() {
    let list = captured();
    assert!(list.len() >= 20, "{list:?}");
    for f in &list {
        let input = std::fs::read(fixture(f)).unwrap();
        let mut child = bin()
            .args(["--from", "-"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write as _;
        child.stdin.take().unwrap().write_all(&input).unwrap();
        let o = child.wait_with_output().unwrap();
        let mut got = String::from_utf8_lossy(&o.stdout).into_owned();
        for l in String::from_utf8_lossy(&o.stderr).lines() {
            got.push_str(&format!("stderr: {l}\n"));
        }
        got.push_str(&format!("exit status: {}\n", o.status.code().unwrap()));
        let want = std::fs::read_to_string(fixtures().join("expected").join(format!("{f}.report")))
            .unwrap_or_else(|e| {
                panic!("{f}: no expected report ({e}): scripts/regen-doc-analyze-thread-cpu")
            });
        assert_eq!(
            got, want,
            "{f}: the report changed: scripts/regen-doc-analyze-thread-cpu"
        );
        assert!(!got.contains("panicked"), "{f}: {got}");
        for l in got.lines().filter(|l| !l.starts_with("stderr: ")) {
            assert!(
                l.chars().count() <= 100,
                "{f}: wider than 100 columns: {l:?}"
            );
        }
    }
}

#[test]
fn top_batch_cores_are_the_mean_of_the_frames_and_the_main_row_is_the_process() {
    let path = fixture("spin-top-batch.txt");
    let text = std::fs::read_to_string(&path).unwrap();
    // The fixture's own %CPU column (the 9th) of the spinner's rows.
    let cpu: Vec<f64> = text
        .lines()
        .filter(|l| l.ends_with(" spinner"))
        .map(|l| num(l.split_whitespace().nth(8).unwrap()) / 100.0)
        .collect();
    assert_eq!(cpu.len(), 3);
    let (code, v, err) = snap(&path, &[]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(v["kind"], "snapshot");
    assert_eq!(v["sections"][0]["format"], "top");
    assert_eq!(v["sections"][0]["parts"], 3);
    let s = thread(&v, "spinner");
    let mean = cpu.iter().sum::<f64>() / 3.0;
    assert!(
        (s["cores_mean"].as_f64().unwrap() - mean).abs() < 0.001,
        "{s}"
    );
    assert_eq!(s["figure"], "interval");
    assert_eq!(s["iterations"], 3);
    assert_eq!(s["per_iteration"].as_array().unwrap().len(), 3);
    assert_eq!(s["state"], "R");
    // kgap-spin's main thread sleeps; procps shows it with the process's CPU.
    let main = thread(&v, "kgap-spin");
    assert!(main["cores_mean"].is_null(), "{main}");
    assert!(
        v["warnings"][0].as_str().unwrap().contains("whole process"),
        "{v}"
    );
    let first = &v["iterations"][0];
    assert!(
        (first["process_cores"].as_f64().unwrap() - cpu[0]).abs() < 0.001,
        "{first}"
    );
    assert!(first["over_s"].is_null());
    assert_eq!(v["iterations"][1]["over_s"], 1.0);
    // A lower threshold: the rule for a saturated thread of an ordinary process.
    let (_, low, _) = snap(&path, &["--saturated-cores", "0.5"]);
    assert_eq!(ids(&low), ["saturated-thread"]);
    let ex = low["diagnoses"][0]["examples"].as_array().unwrap();
    assert_eq!(ex.len(), 3, "{low}");
    assert!(ex
        .iter()
        .all(|e| e["text"].as_str().unwrap().ends_with("spinner")));
}

#[test]
fn german_top_and_pidstat_read_decimal_commas_and_translated_headers() {
    let path = fixture("spin-top-de.txt");
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        text.contains("ZEIT+") && text.contains("BEFEHL"),
        "not a German top"
    );
    let cpu: Vec<f64> = text
        .lines()
        .filter(|l| l.ends_with(" spinner"))
        .map(|l| num(l.split_whitespace().nth(8).unwrap()) / 100.0)
        .collect();
    let (code, v, err) = snap(&path, &[]);
    assert_eq!(code, 0, "{err}");
    let s = thread(&v, "spinner");
    let mean = cpu.iter().sum::<f64>() / cpu.len() as f64;
    assert!(
        (s["cores_mean"].as_f64().unwrap() - mean).abs() < 0.001,
        "{s}"
    );
    // top's TIME+ in German: 0:01,38 is 1.38 s.
    let time = text.lines().rfind(|l| l.ends_with(" spinner")).unwrap();
    let t = time.split_whitespace().nth(10).unwrap().replace(',', ".");
    let (m, sec) = t.split_once(':').unwrap();
    let want = m.parse::<f64>().unwrap() * 60.0 + sec.parse::<f64>().unwrap();
    assert!((s["cpu_s"].as_f64().unwrap() - want).abs() < 0.001, "{s}");

    let path = fixture("spin-pidstat-de.txt");
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("Durchschn.:"), "not a German pidstat");
    let cpu: Vec<f64> = text
        .lines()
        .filter(|l| l.ends_with("|__spinner") && !l.starts_with("Durchschn"))
        .map(|l| num(l.split_whitespace().nth(8).unwrap()) / 100.0)
        .collect();
    let (code, v, err) = snap(&path, &[]);
    assert_eq!(code, 0, "{err}");
    let s = thread(&v, "spinner");
    assert_eq!(s["iterations"].as_u64().unwrap() as usize, cpu.len());
    let mean = cpu.iter().sum::<f64>() / cpu.len() as f64;
    assert!(
        (s["cores_mean"].as_f64().unwrap() - mean).abs() < 0.001,
        "{s}"
    );
    assert_eq!(s["pid"], thread(&v, "kgap-spin")["tid"]);
}

#[test]
fn interactive_top_through_script_is_read_past_its_escapes() {
    let path = fixture("spin-top-interactive.txt");
    assert!(std::fs::read_to_string(&path).unwrap().contains('\u{1b}'));
    let (code, v, err) = snap(&path, &[]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(thread(&v, "spinner")["figure"], "interval");
    assert!(
        v["lines_skipped"].as_u64().unwrap() >= 1,
        "Script started … is prose"
    );
}

#[test]
fn two_ps_outputs_give_the_rate_between_them() {
    let path = fixture("probe-ps-two.txt");
    let text = std::fs::read_to_string(&path).unwrap();
    // TID %CPU STAT TIME ELAPSED COMMAND: kgap-app's TIME and ELAPSED in both outputs.
    let rows: Vec<Vec<&str>> = text
        .lines()
        .filter(|l| l.ends_with(" kgap-app"))
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(rows.len(), 2);
    let secs = |s: &str| -> f64 {
        s.split(':')
            .fold(0.0, |acc, p| acc * 60.0 + p.parse::<f64>().unwrap())
    };
    let want = (secs(rows[1][3]) - secs(rows[0][3])) / (secs(rows[1][4]) - secs(rows[0][4]));
    let (code, v, err) = snap(&path, &[]);
    assert_eq!(code, 0, "{err}");
    let t = thread(&v, "kgap-app");
    assert_eq!(t["figure"], "between-snapshots");
    assert!(
        (t["cores_mean"].as_f64().unwrap() - want).abs() < 0.001,
        "{t} want {want}"
    );
    assert!((t["lifetime_cores"].as_f64().unwrap() - num(rows[1][1]) / 100.0).abs() < 0.001);
    assert_eq!(v["sections"][0]["parts"], 2);
}

#[test]
fn ps_f_has_no_thread_names_and_pidstat_without_interval_no_rate() {
    let (code, v, err) = snap(&fixture("probe-ps-f.txt"), &[]);
    assert_eq!(code, 0, "{err}");
    let t = &v["threads"][0];
    assert!(t["name"].as_str().unwrap().starts_with("tid "), "{t}");
    assert!(
        t["command"]
            .as_str()
            .unwrap()
            .contains("probe-fetch-backoff"),
        "{t}"
    );
    assert_eq!(t["figure"], "lifetime");

    let (code, v, err) = snap(&fixture("spin-pidstat-no-interval.txt"), &[]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(thread(&v, "spinner")["figure"], "since-boot");
    assert_eq!(ids(&v), ["no-thread-cpu-figures"]);
    assert!(v["warnings"].to_string().contains("since boot"), "{v}");
}

#[test]
fn pidstat_reports_are_split_by_time_and_give_the_app_thread_rule() {
    let path = fixture("probe-pidstat.txt");
    let text = std::fs::read_to_string(&path).unwrap();
    let times: std::collections::BTreeSet<&str> = text
        .lines()
        .filter(|l| l.contains("|__kgap-app"))
        .map(|l| l.split_whitespace().next().unwrap())
        .filter(|t| t.contains(':') && !t.ends_with(':'))
        .collect();
    let (code, v, err) = snap(&path, &["--saturated-cores", "0.5"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        v["sections"][0]["parts"].as_u64().unwrap() as usize,
        times.len()
    );
    assert_eq!(v["process_kind"], "librdkafka");
    assert_eq!(thread(&v, "rdk:broker1")["role"], "rdk-broker");
    assert_eq!(ids(&v), ["app-thread-saturated"]);
    assert_eq!(v["diagnoses"][0]["evidence"]["thread"], "kgap-app");
}

#[test]
fn gdb_backtraces_join_top_rows_and_name_librdkafka_threads_by_their_stacks() {
    let (code, v, err) = snap(&fixture("spin-gdb.txt"), &[]);
    assert_eq!(code, 0, "{err}");
    let s = thread(&v, "spinner");
    assert_eq!(s["backtrace"]["frames"][0], "burn");
    assert_eq!(s["backtrace"]["waiting"], 0);
    assert_eq!(thread(&v, "sleeper")["backtrace"]["waiting"], 1);
    assert_eq!(ids(&v), ["no-thread-cpu-figures"]);

    let path = fixture("probe-top-then-gdb.txt");
    let text = std::fs::read_to_string(&path).unwrap();
    let (code, v, err) = snap(&path, &["--saturated-cores", "0.3"]);
    assert_eq!(code, 0, "{err}");
    let formats: Vec<&str> = v["sections"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["format"].as_str().unwrap())
        .collect();
    assert_eq!(formats, ["top", "gdb"]);
    // Every thread whose backtrace starts in rd_kafka_broker_thread_main is a broker thread.
    for t in v["threads"].as_array().unwrap() {
        let tid = t["tid"].as_i64().unwrap();
        let block: String = text
            .split("\nThread ")
            .find(|b| b.contains(&format!("(LWP {tid})")))
            .unwrap_or("")
            .to_string();
        if block.contains("rd_kafka_broker_thread_main") {
            assert_eq!(t["role"], "rdk-broker", "{t}");
        }
        // Joined: top's row and gdb's backtrace are one thread.
        if t["cores_mean"].is_number() && !block.is_empty() {
            assert_eq!(t["sources"], serde_json::json!(["top", "gdb"]), "{t}");
        }
    }
    let b = thread(&v, "rdk:broker1");
    assert_eq!(
        b["name_cut"], false,
        "gdb's whole comm replaces top's rdk:broke+"
    );
    assert!(ids(&v).contains(&"rdk-broker-saturated".to_string()), "{v}");
}

#[test]
fn jvm_dumps_join_top_by_nid_and_two_dumps_give_rates() {
    let path = fixture("java-producer-top-then-jstack.txt");
    let text = std::fs::read_to_string(&path).unwrap();
    let header = text
        .lines()
        .find(|l| l.starts_with("\"kafka-producer-network-thread"))
        .unwrap();
    let nid = header
        .split("nid=0x")
        .nth(1)
        .unwrap()
        .split(' ')
        .next()
        .unwrap();
    let nid = i64::from_str_radix(nid, 16).unwrap();
    let (code, v, err) = snap(&path, &["--saturated-cores", "0.15"]);
    assert_eq!(code, 0, "{err}");
    let t = v["threads"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["tid"] == nid)
        .unwrap();
    assert!(t["name"]
        .as_str()
        .unwrap()
        .starts_with("kafka-producer-network-thread | "));
    assert_eq!(t["role"], "java-producer-network");
    assert_eq!(t["sources"], serde_json::json!(["top", "jvm-dump"]));
    assert_eq!(t["figure"], "interval");
    assert!(t["lifetime_cores"].is_number());
    assert!(
        ids(&v).contains(&"java-producer-network-saturated".to_string()),
        "{v}"
    );

    let path = fixture("java-producer-jstack-two.txt");
    let text = std::fs::read_to_string(&path).unwrap();
    let heads: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("\"kafka-producer-network-thread"))
        .collect();
    assert_eq!(heads.len(), 2);
    let field = |l: &str, k: &str, unit: &str| -> f64 {
        num(l.split(k).nth(1).unwrap().split(unit).next().unwrap())
    };
    let want = (field(heads[1], "cpu=", "ms") - field(heads[0], "cpu=", "ms"))
        / 1000.0
        / (field(heads[1], "elapsed=", "s") - field(heads[0], "elapsed=", "s"));
    let (code, v, err) = snap(&path, &[]);
    assert_eq!(code, 0, "{err}");
    let t = v["threads"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["role"] == "java-producer-network")
        .unwrap();
    assert_eq!(t["figure"], "between-snapshots");
    assert!(
        (t["cores_mean"].as_f64().unwrap() - want).abs() < 0.001,
        "{t} want {want}"
    );
}

#[test]
fn jdk25_dump_in_german_and_kill3_in_a_log() {
    let path = fixture("java-consumer-top-then-jcmd.txt");
    let text = std::fs::read_to_string(&path).unwrap();
    let header = text.lines().find(|l| l.starts_with("\"main\"")).unwrap();
    assert!(
        header.contains("cpu=") && header.contains(','),
        "not a German JDK 25 dump"
    );
    let nid: i64 = header
        .split("nid=")
        .nth(1)
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let (code, v, err) = snap(&path, &["--saturated-cores", "0.3"]);
    assert_eq!(code, 0, "{err}");
    let main = thread(&v, "main");
    assert_eq!(main["tid"], nid);
    assert_eq!(main["role"], "java-consumer-poll");
    assert_eq!(main["sources"], serde_json::json!(["top", "jvm-dump"]));
    let cpu = num(header
        .split("cpu=")
        .nth(1)
        .unwrap()
        .split("ms")
        .next()
        .unwrap())
        / 1000.0;
    assert!(
        (main["cpu_s"].as_f64().unwrap() - cpu).abs() < 0.001,
        "{main}"
    );
    assert_eq!(
        v["pids"][0].as_i64().unwrap().to_string(),
        text.lines().nth(29).unwrap().trim_end_matches(':')
    );
    assert!(
        ids(&v).contains(&"java-consumer-thread-saturated".to_string()),
        "{v}"
    );

    let (code, v, err) = snap(&fixture("java-consumer-kill3-stdout.log"), &[]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(v["sections"][0]["format"], "jvm-dump");
    assert_eq!(thread(&v, "main")["role"], "java-consumer-poll");
    assert!(
        v["lines_skipped"].as_u64().unwrap() >= 1,
        "the RESULT line is prose"
    );
}

#[test]
fn heartbeat_waiting_for_the_poll_threads_lock_names_the_holder() {
    let path = fixture("java-group-heartbeat-waits.txt");
    let (code, v, err) = snap(&path, &[]);
    assert_eq!(code, 0, "{err}");
    let d = v["diagnoses"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["id"] == "java-heartbeat-waits-for-poll-thread")
        .unwrap_or_else(|| panic!("{v}"));
    assert_eq!(d["evidence"]["holder"], "main");
    assert_eq!(d["evidence"]["holder_inferred"], false);
    let lock = d["evidence"]["lock"].as_str().unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let addr = &lock[1..lock.find('>').unwrap()];
    assert_eq!(text.matches(addr).count(), 2, "held once, waited for once");
    assert_eq!(d["examples"].as_array().unwrap().len(), 4, "{d}");
    // Without -l the owner is not printed: the thread inside ConsumerNetworkClient.poll.
    let no_l: String = text
        .lines()
        .filter(|l| !l.contains("Locked ownable synchronizers"))
        .filter(|l| !(l.trim_start().starts_with("- <") || l.trim() == "- None"))
        .map(|l| format!("{l}\n"))
        .collect();
    let d2 = tmp("no-l");
    let f = d2.join("dump.txt");
    std::fs::write(&f, no_l).unwrap();
    let (code, v, err) = snap(&f, &[]);
    assert_eq!(code, 0, "{err}");
    let d = v["diagnoses"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["id"] == "java-heartbeat-waits-for-poll-thread")
        .unwrap();
    assert_eq!(d["evidence"]["holder"], "main");
    assert_eq!(d["evidence"]["holder_inferred"], true);
    let _ = std::fs::remove_dir_all(&d2);
}

/// A paste made from a fixture (cut, or wrapped in prose), written to a fresh file.
fn derived(dir: &std::path::Path, name: &str, text: &str) -> PathBuf {
    let f = dir.join(name);
    std::fs::write(&f, text).unwrap();
    f
}

fn lines_of(name: &str, from: usize, to: usize) -> String {
    std::fs::read_to_string(fixture(name))
        .unwrap()
        .lines()
        .skip(from - 1)
        .take(to + 1 - from)
        .map(|l| format!("{l}\n"))
        .collect()
}

#[test]
fn bad_and_partial_pastes_get_a_clear_outcome() {
    let d = tmp("bad-pastes");
    // Headers with no rows: exit 2, the line and what is missing.
    for (name, text, line) in [
        ("top", lines_of("spin-top-batch.txt", 1, 7), 7),
        ("ps", lines_of("probe-ps-two.txt", 1, 1), 1),
        ("pidstat", lines_of("spin-pidstat.txt", 1, 3), 3),
    ] {
        let f = derived(&d, &format!("{name}-header.txt"), &text);
        let (code, _, err) = snap(&f, &[]);
        assert_eq!(code, 2, "{name}: {err}");
        assert!(
            err.contains(&format!(
                "line {line}: {name} column header, but no thread row"
            )),
            "{name}: {err}"
        );
    }
    // A cut row: skipped with a warning, the rows before it read.
    let wide = std::fs::read_to_string(fixture("probe-top-wide.txt")).unwrap();
    let cut_at = wide.rfind('\n').unwrap_or(wide.len()).min(wide.len());
    let last_start = wide[..cut_at].rfind('\n').unwrap() + 1;
    let cut = format!(
        "{}{}",
        &wide[..last_start],
        &wide[last_start..last_start + 30]
    );
    let f = derived(&d, "cut.txt", &cut);
    let (code, v, err) = snap(&f, &[]);
    assert_eq!(code, 0, "{err}");
    assert!(v["warnings"].to_string().contains("a cut top row"), "{v}");
    let (_, whole, _) = snap(&fixture("probe-top-wide.txt"), &[]);
    assert_eq!(
        v["threads"].as_array().unwrap().len() + 1,
        whole["threads"].as_array().unwrap().len()
    );
    // Prose around the table (an issue's markdown): the same threads and figures.
    let prose = format!(
        "Our consumer is slow, here is top:\n\n```\n{}```\nAny idea? (we run 4.2)\n",
        std::fs::read_to_string(fixture("spin-top-batch.txt")).unwrap()
    );
    let f = derived(&d, "prose.txt", &prose);
    let (code, v, err) = snap(&f, &[]);
    assert_eq!(code, 0, "{err}");
    let (_, bare, _) = snap(&fixture("spin-top-batch.txt"), &[]);
    let figures = |v: &Value| -> Vec<(Value, Value, Value)> {
        v["threads"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                (
                    t["tid"].clone(),
                    t["cores_mean"].clone(),
                    t["figure"].clone(),
                )
            })
            .collect()
    };
    assert_eq!(
        figures(&v),
        figures(&bare),
        "same threads whatever the prose"
    );
    assert_eq!(v["lines_skipped"], 4, "{v}");
    // A dump cut in the middle: the threads so far, and a warning that it is cut.
    let f = derived(
        &d,
        "jcmd-cut.txt",
        &lines_of("java-producer-jcmd.txt", 1, 40),
    );
    let (code, v, err) = snap(&f, &[]);
    assert_eq!(code, 0, "{err}");
    assert!(!v["threads"].as_array().unwrap().is_empty());
    assert!(
        v["warnings"].to_string().contains("no `JNI global refs`"),
        "{v}"
    );
    // A thread header cut before nid=: counted, not joined.
    let jcmd = lines_of("java-producer-jcmd.txt", 1, 60);
    let cut_header = jcmd
        .lines()
        .map(|l| {
            if l.starts_with("\"main\"") {
                l.split(" tid=").next().unwrap()
            } else {
                l
            }
        })
        .map(|l| format!("{l}\n"))
        .collect::<String>();
    let f = derived(&d, "jcmd-no-nid.txt", &cut_header);
    let (code, v, err) = snap(&f, &[]);
    assert_eq!(code, 0, "{err}");
    assert!(v["warnings"].to_string().contains("have no nid="), "{v}");
    // top without -H, ps without -L: processes, said so.
    let (code, _, err) = snap(&fixture("spin-top-processes.txt"), &[]);
    assert_eq!(code, 2);
    assert!(err.contains("top without -H lists processes"), "{err}");
    let f = derived(
        &d,
        "ps-aux.txt",
        "  PID %CPU COMMAND\n 6419 99.0 kgap-spin\n",
    );
    let (code, _, err) = snap(&f, &[]);
    assert_eq!(code, 2);
    assert!(err.contains("ps without -L or -T lists processes"), "{err}");
    // Prose only, and nothing at all.
    let f = derived(
        &d,
        "prose-only.txt",
        "the consumer is slow since Monday\nplease help\n",
    );
    let (code, _, err) = snap(&f, &[]);
    assert_eq!(code, 2);
    assert!(
        err.contains("line 1: not a recording") && err.contains("2 line(s)"),
        "{err}"
    );
    assert!(
        err.contains("it starts: line 1: the consumer is slow"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn from_stdin_and_gzip_read_the_same_as_the_file() {
    use std::io::Write as _;
    let path = fixture("probe-top-then-gdb.txt");
    let bytes = std::fs::read(&path).unwrap();
    let (_, file, _) = snap(&path, &[]);
    let analysis = |v: &Value| serde_json::json!({"threads": v["threads"], "diagnoses": v["diagnoses"], "sections": v["sections"]});
    let gz = gzip::gzip(&bytes);
    for (what, input) in [("plain", bytes.clone()), ("gzip", gz.clone())] {
        let mut child = bin()
            .args(["--from", "-", "--json"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(&input).unwrap();
        let o = child.wait_with_output().unwrap();
        assert_eq!(
            o.status.code(),
            Some(0),
            "{what}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let v = json(&String::from_utf8_lossy(&o.stdout));
        assert_eq!(v["source"]["snapshot"], "<stdin>");
        assert_eq!(analysis(&v), analysis(&file), "{what}");
        assert_eq!(v["input"]["gzip"], what == "gzip");
    }
    // A gzip'd file, and a gzip'd recording (issue 14: every analyzer reads gzip).
    let d = tmp("gzip");
    let f = derived(&d, "paste.txt.gz", "");
    std::fs::write(&f, &gz).unwrap();
    let (code, v, err) = snap(&f, &[]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(analysis(&v), analysis(&file));
    let rec = d.join("rec.jsonl");
    let (code, _, err) = run(bin()
        .args(["--interval", "0.2", "--duration", "1", "--save"])
        .arg(&rec)
        .args(["--", "sh", "-c", "while :; do :; done"]));
    assert_eq!(code, 0, "{err}");
    let (_, plain, _) = run(bin().arg("--from").arg(&rec).arg("--json"));
    let recgz = d.join("rec.jsonl.gz");
    std::fs::write(&recgz, gzip::gzip(&std::fs::read(&rec).unwrap())).unwrap();
    let (code, zipped, err) = run(bin().arg("--from").arg(&recgz).arg("--json"));
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        analysis(&json(&zipped))["threads"],
        analysis(&json(&plain))["threads"]
    );
    let _ = std::fs::remove_dir_all(&d);
}

#[cfg(unix)]
#[test]
fn a_fifo_nobody_writes_to_is_named_after_10_s_then_read_when_written() {
    use std::io::{BufRead, Write as _};
    let d = tmp("fifo");
    let fifo = d.join("paste.fifo");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let mut child = bin()
        .arg("--from")
        .arg(&fifo)
        .arg("--json")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for l in std::io::BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
        {
            let _ = tx.send(l);
        }
    });
    // open() of a FIFO blocks until a writer comes: the tool is stuck there, and must say so.
    let start = std::time::Instant::now();
    let said = loop {
        match rx.recv_timeout(std::time::Duration::from_secs(20)) {
            Ok(l) if l.contains("for 10 s; waiting (Ctrl-C to stop)") => break l,
            Ok(_) => continue,
            Err(e) => panic!("no word after {:?}: {e}", start.elapsed()),
        }
    };
    let waited = start.elapsed().as_secs_f64();
    assert!(
        (9.5..15.0).contains(&waited),
        "told after {waited} s: {said}"
    );
    let mut w = std::fs::OpenOptions::new().write(true).open(&fifo).unwrap();
    w.write_all(&std::fs::read(fixture("spin-top-batch.txt")).unwrap())
        .unwrap();
    drop(w);
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(0));
    let v = json(&String::from_utf8_lossy(&o.stdout));
    assert_eq!(thread(&v, "spinner")["figure"], "interval");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_snapshot_has_no_timeline_and_says_so() {
    let d = tmp("no-timeline");
    let tl = d.join("t.csv");
    let (code, _, err) = run(bin()
        .arg("--from")
        .arg(fixture("spin-top-batch.txt"))
        .arg("--timeline")
        .arg(&tl));
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("a snapshot has no timeline"), "{err}");
    assert!(!tl.exists(), "no empty timeline left behind");
    let _ = std::fs::remove_dir_all(&d);
}

/// Real pastes of top -H rows without their header (fixtures/pastes/threads): read by top's
/// default columns, with a warning saying so, commas as decimal points.
#[test]
fn top_rows_pasted_without_their_header_are_read_by_the_default_columns() {
    let pastes =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/pastes/threads");
    let (code, out, err) = run(bin()
        .arg("--from")
        .arg(pastes.join("021-librdkafka-pr1451-top-H-decimal-comma-rdk-threads.txt"))
        .arg("--json"));
    assert_eq!(code, 0, "{err}");
    let v = json(&out);
    let threads = v["threads"].as_array().unwrap();
    let app = threads
        .iter()
        .find(|t| t["name"] == "rdkafka_perform")
        .unwrap();
    assert_eq!(app["cores_mean"], 0.8, "{app}");
    assert!(threads.iter().any(|t| t["name"] == "rdk:broker3"));
    assert!(
        v["warnings"].to_string().contains("without their header"),
        "{}",
        v["warnings"]
    );
    // Text that only looks like rows is not read as top.
    let d = tmp("not-top").join("numbers.txt");
    std::fs::write(&d, "1 2 3 4 5 6 7 8 9 10 11 12\nhello world\n").unwrap();
    let (code, _, _) = run(bin().arg("--from").arg(&d));
    assert_eq!(code, 2);
}

/// A real paste's diagnosis ids (exit 0) or its refusal (exit 2, the reason).
fn paste(name: &str) -> Result<(Vec<String>, Value), String> {
    let pastes =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/pastes/threads");
    let (code, out, err) = run(bin().arg("--from").arg(pastes.join(name)).arg("--json"));
    if code == 2 {
        return Err(err);
    }
    assert_eq!(code, 0, "{name}: {err}");
    let v = json(&out);
    let ids = v["diagnoses"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["id"].as_str().unwrap().to_string())
        .collect();
    Ok((ids, v))
}

/// Rows whose header a `grep` dropped are read by the columns the `ps` command in the paste
/// asked for (`-eLf`'s fixed ones, or an `-o` list, the thread's name from `fname`).
#[test]
fn ps_rows_under_their_command_are_read_by_the_columns_it_asked_for() {
    let (ids, v) = paste("007-librdkafka1553-ps-eLf-grep-php-fpm.txt").unwrap();
    assert_eq!(ids, ["no-saturated-thread"]);
    assert!(v["warnings"].to_string().contains("the command at line 1"));
    let (ids, v) = paste("031-flink-blog56-ps-H-eo-custom-columns.txt").unwrap();
    assert_eq!(ids, ["no-saturated-thread"]);
    let threads = v["threads"].as_array().unwrap();
    assert!(
        threads.iter().any(|t| t["name"] == "async wa"),
        "{threads:?}"
    );
    assert!(threads
        .iter()
        .any(|t| t["tid"] == 10885 && t["cores_mean"] == 0.22));
}

/// One ps thread row with neither header nor command (`PID LWP NLWP USER %CPU START TIME
/// CMD`): PID, LWP, %CPU and TIME read by their values, the rest of the line the command.
#[test]
fn a_ps_row_without_header_or_command_is_read_by_its_values() {
    let (ids, v) = paste("028-logstash4078-ps-lwp-long-cmdline.txt").unwrap();
    assert_eq!(ids, ["saturated-thread"]);
    let t = &v["threads"][0];
    assert_eq!(
        (t["tid"].as_i64(), t["cores_mean"].as_f64()),
        (Some(1733), Some(0.999)),
        "{t}"
    );
    assert!(v["warnings"].to_string().contains("without its header"));
    // A row whose second number is below the first is not a thread of that process.
    let d = tmp("ps-guess").join("rows.txt");
    std::fs::write(&d, "1733  1701   29 logstash 99.9 Nov18    16:10:48 java\n").unwrap();
    let (code, _, _) = run(bin().arg("--from").arg(&d));
    assert_eq!(code, 2);
}

/// pidstat in a zh locale (`14时05分26秒`), and `pidstat -h`'s `# Time` header: one report
/// of it is CPU time since boot, not a share now.
#[test]
fn pidstat_clocks_in_words_and_the_hash_time_header() {
    let (ids, _) = paste("017-sysstat344-pidstat-ut-zh-locale-pigz.txt").unwrap();
    assert_eq!(ids, ["saturated-thread"]);
    let (ids, v) = paste("018-rancher144-pidstat-drshut-kthreads.txt").unwrap();
    assert_eq!(ids, ["no-thread-cpu-figures"]);
    assert!(v["warnings"].to_string().contains("since boot"));
}

/// Thread rows above one core: the table's figures are not threads' shares, and nothing
/// else in the paste: a refusal that says why.
#[test]
fn a_table_of_impossible_thread_figures_is_refused_with_why() {
    let err = paste("019-toybox333-android-top-H-impossible-pct.txt").unwrap_err();
    assert!(err.contains("above one core"), "{err}");
    assert!(err.contains("RxSchedulerPurg"), "{err}");
}

/// top's `Tasks:` with rows that share one VIRT, RES and SHR (an older top's `H`, its
/// spaces collapsed by Markdown): one process's threads. Rows of different processes under
/// `Tasks:` stay refused.
#[test]
fn top_tasks_rows_of_one_memory_are_threads() {
    let (ids, v) = paste("027-logstash-input-kafka67-top-collapsed-spaces.txt").unwrap();
    assert_eq!(ids, ["no-saturated-thread"]);
    assert!(v["warnings"]
        .to_string()
        .contains("share one VIRT, RES and SHR"));
    let d = tmp("tasks-processes").join("top.txt");
    std::fs::write(
        &d,
        "top - 20:00:29 up 2:33, 1 user, load average: 8.08, 8.10, 8.09\n\
         Tasks: 235 total, 9 running, 226 sleeping, 0 stopped, 0 zombie\n\n\
         PID USER PR NI VIRT RES SHR S %CPU %MEM TIME+ COMMAND\n\
         29574 logstash 39 19 4614m 362m 15m R 99.2 4.6 42:10.56 java\n\
         29575 postgres 20 0 1214m 62m 11m R 98.9 0.6 12:11.28 postgres\n",
    )
    .unwrap();
    let (code, _, err) = run(bin().arg("--from").arg(&d));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("lists processes, not threads"), "{err}");
}

/// gdb's `info threads` (each thread and the frame it is in) and an abbreviated jstack
/// (`"name" #56`, `Class@hash` locks): read, and the heartbeat's wait named.
#[test]
fn info_threads_and_an_abbreviated_dump_are_read() {
    let (ids, v) = paste("010-librdkafka681-ps-ef-gdb-info-threads-consumer.txt").unwrap();
    assert_eq!(ids, ["no-thread-cpu-figures"]);
    // Rows 7 to 3; the paste cuts row 2.
    assert_eq!(v["threads"].as_array().unwrap().len(), 5);
    let (ids, v) = paste("013-spring-kafka999-heartbeat-blocked-abbrev-jstack.txt").unwrap();
    assert!(
        ids.contains(&"java-heartbeat-waits-for-poll-thread".to_string()),
        "{ids:?}"
    );
    let d = v["diagnoses"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["id"] == "java-heartbeat-waits-for-poll-thread")
        .unwrap();
    assert_eq!(
        d["evidence"]["lock"],
        "org.apache.kafka.clients.consumer.internals.ConsumerNetworkClient@39faacaf"
    );
}
