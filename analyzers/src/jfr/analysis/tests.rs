//! The diagnoses, from observations fed to the aggregator.

use std::rc::Rc;

use super::*;

#[test]
fn writes_at_a_ceiling_are_diagnosed_and_spread_writes_are_not() {
    let run = |sizes: &[u64]| {
        let mut a = Aggregator::default();
        let t: Rc<str> = Rc::from("net");
        a.span(0, 10_000_000_000);
        for (i, &b) in sizes.iter().enumerate() {
            a.socket(SocketOp::Write, &t, "10.0.0.1", 9092, b as i64, i as i64, 0);
        }
        a.finish(InputInfo::default(), &ReportOptions::default())
    };
    let capped: Vec<u64> = (0..200)
        .map(|i| if i % 10 == 0 { 90_000 } else { 300_000 })
        .collect();
    let r = run(&capped);
    assert_eq!(r.diagnoses.len(), 1);
    assert_eq!(r.diagnoses[0].id, "fixed-socket-buffer");
    // Autotuned: sizes spread up to MBs.
    let spread: Vec<u64> = (0..200).map(|i| 50_000 + i * 20_000).collect();
    assert!(run(&spread).diagnoses.is_empty());
    // Too few writes to believe a ceiling.
    assert!(run(&capped[..20]).diagnoses.is_empty());
}

fn ids(r: &JfrReport) -> Vec<&str> {
    r.diagnoses.iter().map(|d| d.id.as_str()).collect()
}

#[test]
fn a_reading_thread_at_one_core_is_a_single_core_consumer() {
    let run = |load: f64| {
        let mut a = Aggregator::default();
        a.hw_threads = Some(16);
        a.span(0, 10_000_000_000);
        let t: Rc<str> = Rc::from("main");
        // 1/16 of the machine is one core.
        a.thread_cpu(&t, load * 0.9 / 16.0, load * 0.1 / 16.0);
        for i in 0..500 {
            a.socket(SocketOp::Read, &t, "b1", 9092, 20_000 + i * 7_000, i, 0);
        }
        a.finish(InputInfo::default(), &ReportOptions::default())
    };
    assert_eq!(ids(&run(0.97)), ["single-core-consumer"]);
    assert!(ids(&run(0.5)).is_empty());
}

#[test]
fn gc_pauses_over_a_tenth_of_the_recording_are_gc_pressure() {
    let run = |pause_ms: i64| {
        let mut a = Aggregator::default();
        a.span(0, 10_000_000_000);
        for _ in 0..10 {
            a.gc(
                "G1Old",
                "G1 Evacuation Pause",
                pause_ms * 1_000_000,
                pause_ms * 1_000_000,
            );
            a.heap_after_gc(100 << 20, 2048 << 20);
        }
        a.finish(InputInfo::default(), &ReportOptions::default())
    };
    assert_eq!(ids(&run(110)), ["gc-pressure"]); // 1.1 s of 10 s
    assert!(ids(&run(2)).is_empty());
}

#[test]
fn a_thread_mostly_in_deflate_is_diagnosed() {
    let mut a = Aggregator::default();
    a.span(0, 1_000_000_000);
    let t: Rc<str> = Rc::from("kafka-producer-network-thread | p1");
    let deflate: Vec<Rc<str>> = vec![
        Rc::from("java.util.zip.Deflater.deflateBytesBytes"),
        Rc::from("org.apache.kafka.common.compress.GzipOutputStream.write"),
    ];
    let other: Vec<Rc<str>> = vec![Rc::from("sun.nio.ch.SocketChannelImpl.write")];
    a.samples(&t, &deflate, 96);
    a.samples(&t, &other, 4);
    let r = a.finish(InputInfo::default(), &ReportOptions::default());
    assert_eq!(ids(&r), ["deflate-dominates"]);
    assert_eq!(r.diagnoses[0].evidence["deflate_share"], 0.96);
    assert_eq!(
        r.hot_methods[0].frame,
        "java.util.zip.Deflater.deflateBytesBytes"
    );
    assert_eq!(r.hot_methods[0].self_samples, 96);
}

#[test]
fn gc_without_heap_summaries_says_the_heap_is_unknown_never_a_figure() {
    let mut a = Aggregator::default();
    a.span(0, 10_000_000_000);
    for _ in 0..10 {
        a.gc("G1Old", "G1 Evacuation Pause", 110_000_000, 110_000_000);
    }
    let r = a.finish(InputInfo::default(), &ReportOptions::default());
    let gc = r.gc.as_ref().expect("collections");
    assert_eq!(gc.heap_after_gc_p50_mb, None);
    assert_eq!(gc.heap_committed_max_mb, None);
    assert_eq!(ids(&r), ["gc-pressure"]);
    let cause = &r.diagnoses[0].cause;
    assert!(cause.contains("no heap summary"), "{cause}");
    assert!(!cause.contains("17592186044416"), "{cause}");
    assert!(r.render_text().contains("not recorded"));
}

#[test]
fn a_socket_cap_names_its_kafka_client_only_when_the_recording_shows_one() {
    let run = |thread: &str, frames: &[&str]| {
        let mut a = Aggregator::default();
        let t: Rc<str> = Rc::from(thread);
        a.span(0, 10_000_000_000);
        for i in 0..200i64 {
            let b: i64 = if i % 10 == 0 { 90_000 } else { 300_000 };
            a.socket(SocketOp::Write, &t, "10.0.0.1", 9092, b, i, 0);
        }
        let fs: Vec<Rc<str>> = frames.iter().map(|f| Rc::from(*f)).collect();
        if !fs.is_empty() {
            a.samples(&t, &fs, 10);
        }
        a.finish(InputInfo::default(), &ReportOptions::default())
    };
    // kafka-clients' network thread: the producer's requests, filed as such.
    let r = run("kafka-producer-network-thread | p1", &[]);
    let d = &r.diagnoses[0];
    assert_eq!(
        d.evidence["kafka_client"]["client"], "java-producer",
        "{d:#?}"
    );
    // A program writing through its own array: the same cap, no Kafka client, and it says so.
    let r = run("main", &["java.net.SocketOutputStream.write", "Main.main"]);
    let d = &r.diagnoses[0];
    assert!(d.evidence.get("kafka_client").is_none(), "{d:#?}");
    assert!(
        d.title.contains("nothing here shows a Kafka client"),
        "{}",
        d.title
    );
    // A consumer's frames elsewhere do not make a write a producer's.
    let r = run(
        "main",
        &["org.apache.kafka.clients.consumer.KafkaConsumer.poll"],
    );
    assert!(r.diagnoses[0].evidence.get("kafka_client").is_none());
}
