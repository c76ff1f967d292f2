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
pub mod relay;
