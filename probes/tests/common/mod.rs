//! Helpers the probes' integration tests share.
#![allow(dead_code)] // each test file uses its own subset

use serde_json::Value;
use std::process::{Command, Output};

/// The local Apache Kafka of `scripts/kafka up`, or KGAP_TEST_BROKERS.
pub fn brokers() -> String {
    std::env::var("KGAP_TEST_BROKERS").unwrap_or_else(|_| "127.0.0.1:9092".into())
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Runs a binary with `args` to completion.
pub fn run(exe: &str, args: &[&str]) -> Output {
    Command::new(exe).args(args).output().expect("probe runs")
}

/// A successful run's JSON on stdout.
pub fn json_of(out: &Output) -> Value {
    assert!(
        out.status.success(),
        "probe failed: {:?}\nstderr:\n{}",
        out.status,
        stderr(out)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}):\n{}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

/// A Java-side run without --brokers is exit 2 and says it needs them.
pub fn needs_brokers(exe: &str, args: &[&str]) {
    let out = run(exe, args);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("--brokers"), "{}", stderr(&out));
}

/// A run measured something, and its msgs/s is its messages over its window (both rounded
/// to 3 decimals): a rate from another span or no messages fails it. How fast this machine
/// ran is the probe's to report and its verdict's to judge, not a test's.
pub fn assert_rate_of_window(run: &Value) {
    let messages = run["messages"].as_f64().unwrap_or_else(|| panic!("{run}"));
    let window_s = run["window_s"].as_f64().unwrap_or_else(|| panic!("{run}"));
    let rate = run["msgs_per_s"]
        .as_f64()
        .unwrap_or_else(|| panic!("{run}"));
    assert!(messages > 0.0 && window_s > 0.0, "{run}");
    // Compared in messages: the window is rounded to the ms (0.6 % of a 0.082 s window).
    assert!(
        (rate * window_s - messages).abs() <= rate * 0.0005 + 1e-3 * messages + 1.0,
        "{rate} msg/s against {messages} in {window_s} s: {run}"
    );
}

pub mod relay;
