//! Unit tests of the recording path: roles, saturated runs, the bounded timeline, recordings.

use super::*;
use crate::thread_cpu::threads::{Snapshot, ThreadTicks};

/// Snapshots at 0, 1, … s from per-second tick increments (100 ticks/s).
fn run(threads: &[(i32, &str, &[u64])]) -> Vec<Snapshot> {
    let n = threads.iter().map(|t| t.2.len()).max().unwrap_or(0);
    let mut totals: Vec<u64> = vec![0; threads.len()];
    let mut out = Vec::new();
    for s in 0..=n {
        if s > 0 {
            for (i, t) in threads.iter().enumerate() {
                totals[i] += t.2.get(s - 1).copied().unwrap_or(0);
            }
        }
        out.push(Snapshot {
            at_s: s as f64,
            process_ticks: totals.iter().sum(),
            threads: threads
                .iter()
                .enumerate()
                .map(|(i, t)| ThreadTicks {
                    tid: t.0,
                    name: t.1.into(),
                    user_ticks: totals[i],
                    system_ticks: 0,
                })
                .collect(),
        });
    }
    out
}

fn analyze(snaps: Vec<Snapshot>, opts: Options) -> ThreadCpuReport {
    let mut iv = SnapshotIntervals::new(100);
    let mut a = Analyzer::new(opts);
    for s in snaps {
        if let Some(i) = iv.push(s) {
            a.add(&i).unwrap();
        }
    }
    a.finish(Source::Recording("test".into()), 100)
}

fn ids(r: &ThreadCpuReport) -> Vec<&str> {
    r.diagnoses.iter().map(|d| d.id.as_str()).collect()
}

#[test]
fn roles_from_kernel_names() {
    assert_eq!(classify("rdk:broker1"), Role::RdkBroker);
    assert_eq!(classify("rdk:broker-1"), Role::RdkBroker);
    assert_eq!(classify("rdk:main"), Role::RdkMain);
    assert_eq!(classify("rdk:mock"), Role::RdkMock);
    assert_eq!(classify("rdk:bg"), Role::RdkOther);
    assert_eq!(classify("kafka-producer-"), Role::JavaProducerNetwork);
    assert_eq!(classify("kafka-coordinat"), Role::JavaHeartbeat);
    assert_eq!(classify("GC Thread#3"), Role::JvmGc);
    assert_eq!(classify("G1 Conc#0"), Role::JvmGc);
    assert_eq!(classify("G1 Refine#0"), Role::JvmGc);
    assert_eq!(classify("C2 CompilerThre"), Role::JvmJit);
    assert_eq!(classify("VM Thread"), Role::JvmOther);
    assert_eq!(classify("java"), Role::App);
    assert_eq!(classify("my (odd) name"), Role::App);
}

#[test]
fn collapse_keeps_broker_ids_and_pool_numbers() {
    assert_eq!(collapse_name("pool-1-thread-7"), "pool-1-thread-*");
    assert_eq!(collapse_name("GC Thread#12"), "GC Thread#*");
    assert_eq!(collapse_name("rdk:broker1"), "rdk:broker1");
    assert_eq!(collapse_name("rdk:broker2"), "rdk:broker2");
    assert_eq!(collapse_name("C2 CompilerThre"), "C2 CompilerThre");
    assert_eq!(collapse_name("1234"), "1234");
    assert_eq!(collapse_name(""), "");
}

#[test]
fn broker_thread_saturated_after_the_app_thread_is_fixed() {
    let r = analyze(
        run(&[
            (10, "consumer", &[40, 45, 40, 42, 41]),
            (11, "rdk:broker1", &[95, 96, 94, 97, 95]),
            (12, "rdk:main", &[1, 1, 1, 1, 1]),
        ]),
        Options::default(),
    );
    assert_eq!(r.process_kind, ProcessKind::Librdkafka);
    assert_eq!(r.threads[0].name, "rdk:broker1");
    assert_eq!(r.saturated.len(), 1);
    assert_eq!(r.saturated[0].seconds, 5.0);
    assert!((r.saturated[0].cores_mean - 0.954).abs() < 1e-9);
    assert_eq!(ids(&r), ["rdk-broker-saturated"]);
}

#[test]
fn app_thread_of_a_librdkafka_client_means_the_batch_api() {
    let r = analyze(
        run(&[
            (10, "consumer", &[99, 99, 98, 99]),
            (11, "rdk:broker1", &[60, 60, 60, 60]),
        ]),
        Options::default(),
    );
    assert_eq!(ids(&r), ["app-thread-saturated"]);
    assert!(r.diagnoses[0].title.contains("batch API"));
    assert_eq!(r.diagnoses[0].evidence["thread"], "consumer");
}

#[test]
fn the_processing_threads_not_librdkafka_are_the_limit() {
    // probe-consumer-alloc's copying pipeline on 2 cores: four processing threads share
    // them, none at a full core, librdkafka's broker thread well below them together.
    let r = analyze(
        run(&[
            (10, "kgap-proc-0", &[40, 42, 41, 40]),
            (11, "kgap-proc-1", &[41, 40, 42, 41]),
            (12, "kgap-proc-2", &[39, 40, 40, 41]),
            (13, "kgap-writer", &[20, 21, 20, 20]),
            (14, "rdk:broker1", &[25, 24, 25, 26]),
            (15, "rdk:mock", &[30, 30, 30, 30]),
            (16, "rdk:main", &[1, 1, 1, 1]),
        ]),
        Options::default(),
    );
    assert_eq!(classify("kgap-proc-12"), Role::Pipeline);
    assert_eq!(ids(&r), ["processing-threads-limit"]);
    let d = &r.diagnoses[0];
    assert_eq!(
        d.title,
        "the processing threads, not librdkafka, are the limit"
    );
    assert_eq!(d.evidence["pipeline_threads"], 4);
    assert!(
        d.cause.contains("4 pipeline threads use 1.42 cores"),
        "{}",
        d.cause
    );
    // The borrowed pipeline: librdkafka's broker thread is as busy as the pipeline, so the
    // pipeline is not the limit and nothing is said of it.
    let r = analyze(
        run(&[
            (10, "kgap-proc-0", &[20, 21, 20, 20]),
            (11, "kgap-proc-1", &[20, 20, 21, 20]),
            (12, "kgap-writer", &[10, 10, 10, 10]),
            (14, "rdk:broker1", &[45, 46, 45, 44]),
        ]),
        Options::default(),
    );
    assert!(
        !ids(&r).contains(&"processing-threads-limit"),
        "{:?}",
        ids(&r)
    );
    // One processing thread at a full core is the limit whatever librdkafka does.
    let r = analyze(
        run(&[
            (10, "kgap-proc-0", &[99, 99, 98, 99]),
            (11, "rdk:broker1", &[80, 80, 80, 80]),
        ]),
        Options::default(),
    );
    assert_eq!(ids(&r), ["processing-threads-limit"]);
    assert!(
        r.diagnoses[0].cause.starts_with("kgap-proc-0 (10) is"),
        "{}",
        r.diagnoses[0].cause
    );
}

#[test]
fn saturation_needs_consecutive_seconds() {
    // 2 s busy, 1 s idle, 2 s busy: never 3 s in a row.
    let r = analyze(
        run(&[(5, "worker", &[100, 100, 10, 100, 100])]),
        Options::default(),
    );
    assert!(r.saturated.is_empty());
    assert_eq!(r.threads[0].longest_saturated_s, 2.0);
    assert_eq!(ids(&r), ["no-saturated-thread"]);
    // The same with a 2 s threshold: saturated.
    let r = analyze(
        run(&[(5, "worker", &[100, 100, 10, 100, 100])]),
        Options {
            saturated_seconds: 2.0,
            ..Options::default()
        },
    );
    assert_eq!(r.saturated.len(), 1);
    assert_eq!(ids(&r), ["saturated-thread"]);
}

#[test]
fn jvm_consumer_thread_and_gc_domination() {
    let r = analyze(
        run(&[
            (1, "java", &[0, 0, 0, 0]),
            (2, "main", &[97, 96, 98, 97]),
            (3, "GC Thread#0", &[80, 90, 85, 80]),
            (4, "GC Thread#1", &[80, 90, 85, 80]),
            (5, "C2 CompilerThre", &[5, 1, 0, 0]),
            (6, "kafka-coordinat", &[1, 0, 0, 1]),
        ]),
        Options::default(),
    );
    assert_eq!(r.process_kind, ProcessKind::Jvm);
    assert_eq!(
        ids(&r),
        ["java-consumer-thread-saturated", "gc-threads-dominate"]
    );
    let consumer = &r.diagnoses[0];
    assert_eq!(
        consumer.evidence["kafka_client"]["client"], "java-consumer",
        "{consumer:#?}"
    );
    let gc = r.groups.iter().find(|g| g.group == "GC Thread#*").unwrap();
    assert_eq!(gc.threads, 2);
    assert!((gc.cores_mean - 1.675).abs() < 1e-9, "{gc:?}");
}

#[test]
fn a_busy_thread_of_a_jvm_that_shows_no_kafka_client_is_only_a_busy_thread() {
    let r = analyze(
        run(&[
            (1, "java", &[0, 0, 0, 0]),
            (2, "main", &[97, 96, 98, 97]),
            (3, "GC Thread#0", &[1, 2, 1, 1]),
            (5, "C2 CompilerThre", &[5, 1, 0, 0]),
        ]),
        Options::default(),
    );
    assert_eq!(r.process_kind, ProcessKind::Jvm);
    assert_eq!(ids(&r), ["saturated-thread"]);
    assert!(r.diagnoses[0].evidence.get("kafka_client").is_none());
}

#[test]
fn threads_that_come_and_go() {
    let snaps = vec![
        Snapshot {
            at_s: 0.0,
            process_ticks: 0,
            threads: vec![ThreadTicks {
                tid: 1,
                name: "a".into(),
                user_ticks: 0,
                system_ticks: 0,
            }],
        },
        Snapshot {
            at_s: 1.0,
            process_ticks: 150,
            threads: vec![
                ThreadTicks {
                    tid: 1,
                    name: "a".into(),
                    user_ticks: 100,
                    system_ticks: 0,
                },
                ThreadTicks {
                    tid: 2,
                    name: "b".into(),
                    user_ticks: 50,
                    system_ticks: 0,
                },
            ],
        },
        // tid 1 exited (its ticks stay in the process total).
        Snapshot {
            at_s: 2.0,
            process_ticks: 260,
            threads: vec![ThreadTicks {
                tid: 2,
                name: "b".into(),
                user_ticks: 100,
                system_ticks: 0,
            }],
        },
    ];
    let r = analyze(snaps, Options::default());
    assert_eq!(r.threads.len(), 2);
    let a = r.threads.iter().find(|t| t.tid == 1).unwrap();
    assert_eq!(a.seconds, 1.0);
    assert_eq!(a.cores_mean, 1.0);
    assert_eq!(r.process_cores_mean, Some(1.3));
}

#[test]
fn timeline_stays_bounded_and_keeps_the_cpu() {
    let busy: Vec<u64> = (0..1000)
        .map(|i| if i % 2 == 0 { 100 } else { 50 })
        .collect();
    let r = analyze(
        run(&[(1, "w", &busy)]),
        Options {
            max_buckets: 16,
            ..Options::default()
        },
    );
    assert!(r.timeline.len() <= 16, "{}", r.timeline.len());
    let cpu: f64 = r
        .timeline
        .iter()
        .map(|b| b.cores[&1] * (b.end_s - b.start_s))
        .sum();
    assert!((cpu - 750.0).abs() < 1e-6, "{cpu}");
    assert_eq!(r.threads[0].cpu_s, 750.0);
}

#[test]
fn thousands_of_threads_with_odd_names_group_by_role() {
    let snap = |at_s: f64, ticks: u64| Snapshot {
        at_s,
        process_ticks: ticks * 3000,
        threads: (0..3000)
            .map(|i| ThreadTicks {
                tid: 100 + i,
                name: if i == 0 {
                    "a b) (c".into()
                } else {
                    format!("pool-1-thread-{i}")
                },
                user_ticks: ticks,
                system_ticks: 0,
            })
            .collect(),
    };
    let r = analyze(
        vec![snap(0.0, 0), snap(1.0, 1), snap(2.0, 3)],
        Options::default(),
    );
    assert_eq!(r.threads.len(), 3000);
    assert_eq!(r.threads[0].name, "a b) (c");
    let pool = r
        .groups
        .iter()
        .find(|g| g.group == "pool-1-thread-*")
        .unwrap();
    assert_eq!(pool.threads, 2999);
    assert!((pool.cores_mean - 2999.0 * 0.015).abs() < 1e-6, "{pool:?}");
    assert_eq!(r.process_cores_mean, Some(45.0));
    assert!(r.render_text().contains("pool-1-thread-*"));
}

#[test]
fn threads_csv_from_a_probe_reads_as_one_second_intervals() {
    let csv = "second,tid,thread,cores\n2,10,rdk:broker1,0.950\n2,11,\"app, (x)\",0.5\n\
               3,10,rdk:broker1,0.960\n4,10,rdk:broker1,0.940\n";
    let mut a = Analyzer::new(Options::default());
    let info = read_recording(csv.as_bytes(), &mut a, 100).unwrap();
    assert_eq!(info.samples, 3);
    let r = a.finish(Source::Recording("threads.csv".into()), 100);
    assert_eq!(r.duration_s, 3.0);
    assert_eq!(r.saturated[0].name, "rdk:broker1");
    assert!(r.process_cores_from_threads);
    assert!(r.threads.iter().any(|t| t.name == "app, (x)"));
}

#[test]
fn garbage_and_empty_recordings_are_errors_not_panics() {
    for bad in [
        "",
        "hello world\n",
        "{\"at_s\": 1}\n",
        "second,tid,thread,cores\n",
        "second,tid,thread,cores\nx,y\n",
    ] {
        let mut a = Analyzer::new(Options::default());
        assert!(
            read_recording(bad.as_bytes(), &mut a, 100).is_err(),
            "{bad:?}"
        );
    }
    let mut a = Analyzer::new(Options::default());
    let bin: &[u8] = &[0xff, 0xfe, 0x00, 0x01, b'\n'];
    assert!(read_recording(bin, &mut a, 100).is_err());
}

#[test]
fn a_cut_last_line_is_skipped_with_a_warning() {
    let mut buf = Vec::new();
    let header = RecordingHeader {
        recording: "kgap-thread-cpu".into(),
        version: 1,
        ticks_per_s: 100,
        interval_ms: 1000,
        pid: Some(1),
        command: None,
    };
    let mut w = RecordingWriter::new(&mut buf, &header).unwrap();
    for s in run(&[(1, "w", &[100, 100])]) {
        w.write(&s).unwrap();
    }
    buf.extend_from_slice(b"{\"at_s\":3.0,\"process_t");
    let mut a = Analyzer::new(Options::default());
    let info = read_recording(&buf[..], &mut a, 100).unwrap();
    assert_eq!(info.samples, 3);
    assert_eq!(info.warnings.len(), 1);
    assert_eq!(a.intervals(), 2);
}
