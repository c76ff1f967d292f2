//! The contract every probe keeps: its verdicts are the catalogue's, by catalogue id, and
//! nothing it can say at all (an empty sweep, a sweep with both clients) names a finding the
//! catalogue does not have. A probe that built a Verdict of its own with a made-up id would
//! fail here; so would one whose verdicts gap-report could not file under a finding.

use clap::Parser;
use kgap_analyzers::findings::probe_result::*;
use kgap_analyzers::findings::{self, Outcome};
use kgap_probes::kit::{Probe, Sweep};
use kgap_probes::{batch_consume, consumer_clients, fetch_backoff, gzip_batch, inflight_latency};
use kgap_probes::{java_producers, java_socket_buffers, request_ceiling};

fn empty_result<F>() -> ProbeResult<F> {
    ProbeResult {
        schema: SCHEMA.into(),
        schema_version: SCHEMA_VERSION,
        probe: "probe-under-test".into(),
        kgap_version: "test".into(),
        librdkafka_version: "2.12.1".into(),
        broker: BrokerInfo {
            kind: BrokerKind::External,
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
        verdicts: vec![],
        diagnoses: vec![],
        not_measured: vec![],
        notes: vec![],
        warnings: vec![],
        discarded: vec![],
        interrupted: false,
        failed: None,
        preflight: None,
        noise: Vec::new(),
    }
}

/// The verdicts of a sweep that measured nothing: every one must be a catalogue finding,
/// and none may hold.
fn check<P: Probe>(name: &str, probe: P) -> Vec<String> {
    let sweep = Sweep::<P> {
        result: empty_result(),
        params: vec![],
    };
    let verdicts = probe.verdicts(&sweep);
    assert!(!verdicts.is_empty(), "{name} decides nothing");
    for v in &verdicts {
        assert!(
            findings::get(&v.finding).is_some(),
            "{name}: verdict id {:?} is not in the catalogue",
            v.finding
        );
        assert_ne!(
            v.outcome,
            Outcome::Holds,
            "{name}: {} holds with nothing measured",
            v.finding
        );
    }
    verdicts.into_iter().map(|v| v.finding).collect()
}

fn args<O: Parser>(argv: &[&str]) -> O {
    O::try_parse_from(argv).unwrap_or_else(|e| panic!("{argv:?}: {e}"))
}

#[test]
fn every_probe_decides_catalogue_findings_only() {
    let mut decided: Vec<String> = Vec::new();
    decided.extend(check(
        "probe-fetch-backoff",
        fetch_backoff::FetchBackoff::new(args(&["p"])),
    ));
    for client in ["rust", "both"] {
        decided.extend(check(
            "probe-request-ceiling",
            request_ceiling::RequestCeiling::new(args(&["p", "--client", client])),
        ));
        decided.extend(check(
            "probe-inflight-latency",
            inflight_latency::InflightLatency::new(args(&["p", "--client", client])),
        ));
        decided.extend(check(
            "probe-gzip-batch",
            gzip_batch::GzipBatch::new(args(&["p", "--client", client])),
        ));
        decided.extend(check(
            "probe-consumer-clients",
            consumer_clients::ConsumerClients::new(args(&["p", "--client", client])),
        ));
    }
    decided.extend(check(
        "probe-request-ceiling --controls --java-fixes",
        request_ceiling::RequestCeiling::new(args(&[
            "p",
            "--client",
            "both",
            "--controls",
            "--java-fixes",
        ])),
    ));
    decided.extend(check(
        "probe-batch-consume",
        batch_consume::throughput::Throughput::new(args(&["p"])),
    ));
    decided.extend(check(
        "probe-batch-consume --rate",
        batch_consume::latency::Latency::new(args(&["p", "--rate", "1000"])),
    ));
    decided.extend(check(
        "probe-java-producers",
        java_producers::JavaProducers::new(args(&["p", "--brokers", "127.0.0.1:9092"])),
    ));
    decided.extend(check(
        "probe-java-socket-buffers",
        java_socket_buffers::JavaSocketBuffers::new(args(&["p", "--brokers", "127.0.0.1:9092"])),
    ));
    decided.extend(check(
        "probe-consumer-alloc",
        kgap_probes::consumer_alloc::ConsumerAlloc::new(args(&["p"])),
    ));
    // Every finding of the catalogue has a probe that decides it.
    for f in findings::CATALOGUE {
        assert!(
            decided.iter().any(|d| d == f.id),
            "no probe decides {} (its catalogue entry names {})",
            f.id,
            f.reproduce.probe
        );
    }
}
