//! Shared helpers: fixture paths, analysing bytes or files with settings.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use kgap_analyzers::stats::{analyze_stats, ClientConfig, StatsOptions, StatsReport};

pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

pub fn fixture(name: &str) -> PathBuf {
    root().join("fixtures/stats").join(name)
}

/// A real two-emit producer capture (probe-request-ceiling, Apache Kafka 4.3.1), committed
/// with the protocol-log fixtures: the base of the bad-input cases.
pub fn two_emits() -> Vec<u8> {
    std::fs::read(
        root().join("fixtures/librdkafka/producer-kafka431-batch16k-6p-protocol/stats.jsonl"),
    )
    .unwrap()
}

pub fn options(settings: &[&str]) -> StatsOptions {
    let mut config = ClientConfig::default();
    for kv in settings {
        config.set(kv).unwrap();
    }
    StatsOptions {
        config,
        ..StatsOptions::default()
    }
}

pub fn analyze(bytes: &[u8]) -> StatsReport {
    analyze_stats(bytes, &StatsOptions::default()).expect("in-memory input reads")
}

pub fn analyze_file(name: &str, settings: &[&str]) -> StatsReport {
    let f = std::fs::File::open(fixture(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
    analyze_stats(f, &options(settings)).unwrap()
}

pub fn ids(r: &StatsReport) -> Vec<&'static str> {
    r.diagnoses.iter().map(|d| d.id).collect()
}
