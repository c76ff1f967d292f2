//! analyze-thread-cpu end to end: a spinning child found as the busiest thread, the
//! --save/--from round trip, the command's exit status, a process that exits mid-run, and
//! bad input (exit 2, never a panic).

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
