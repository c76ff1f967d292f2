//! The snapshot diagnoses' rules on the cases the captured fixtures cannot show (no thread
//! on the shared 2-core machine got a whole core): tables, backtraces and dumps built as the
//! readers hand them to the collector.

use super::backtrace::is_waiting;
use super::collect::Collector;
use super::stacks::{Backtrace, Dump, JvmThread};
use super::table::{Row, Table};
use super::*;
use crate::thread_cpu::Role;

fn top(rows: &[(i32, &str, f64)]) -> Table {
    let mut t = Table::new(Format::Top, 1, Figure::Interval);
    t.rows = rows
        .iter()
        .enumerate()
        .map(|(i, (tid, name, cores))| Row {
            tid: *tid,
            name: Some(name.to_string()),
            cores: Some(*cores),
            line: 2 + i as u64,
            text: format!("{tid} {name}"),
            ..Row::default()
        })
        .collect();
    t
}

fn bt(tid: i32, frames: &[&str]) -> Backtrace {
    let frames: Vec<String> = frames.iter().map(|f| f.to_string()).collect();
    Backtrace {
        tid,
        name: None,
        waiting: is_waiting(&frames),
        frames,
        line: 100 + tid as u64,
        last_line: 100 + tid as u64,
        text: format!("Thread (LWP {tid})"),
        top_lines: Vec::new(),
    }
}

fn report(threshold: f64, feed: impl FnOnce(&mut Collector)) -> SnapshotReport {
    let mut c = Collector::new(PasteOptions {
        saturated_cores: threshold,
        top: 10,
    });
    feed(&mut c);
    c.finish("test", Default::default()).unwrap()
}

fn ids(r: &SnapshotReport) -> Vec<&str> {
    r.diagnoses.iter().map(|d| d.id.as_str()).collect()
}

const BROKER_POLL: &[&str] = &[
    "__GI___poll",
    "rd_kafka_transport_poll",
    "rd_kafka_transport_io_serve",
    "rd_kafka_broker_serve",
    "rd_kafka_broker_thread_main",
    "start_thread",
];
const BROKER_WORK: &[&str] = &[
    "rd_kafka_msgset_reader_msg_v2",
    "rd_kafka_msgset_reader_run",
    "rd_kafka_fetch_reply_handle",
    "rd_kafka_broker_thread_main",
];

#[test]
fn a_broker_thread_at_a_full_core_waiting_in_poll_spins() {
    let rows = [
        (10, "app", 0.3),
        (11, "rdk:broker1", 0.97),
        (12, "rdk:main", 0.0),
    ];
    let r = report(0.9, |c| {
        c.table(top(&rows));
        c.backtrace(bt(11, BROKER_POLL));
    });
    assert_eq!(ids(&r), ["rdk-broker-spin"]);
    assert!(
        r.diagnoses[0].examples.iter().any(|e| e.line == 111),
        "{:?}",
        r.diagnoses[0]
    );
    let r = report(0.9, |c| {
        c.table(top(&rows));
        c.backtrace(bt(11, BROKER_WORK));
    });
    assert_eq!(ids(&r), ["rdk-broker-saturated"]);
    assert_eq!(
        r.diagnoses[0].evidence["backtrace_top"],
        "rd_kafka_msgset_reader_msg_v2"
    );
    // At 0.6 cores a thread waits 40% of the time anyway: not a spin, whatever the threshold.
    let rows = [(10, "app", 0.3), (11, "rdk:broker1", 0.6)];
    let r = report(0.5, |c| {
        c.table(top(&rows));
        c.backtrace(bt(11, BROKER_POLL));
    });
    assert_eq!(ids(&r), ["rdk-broker-saturated"]);
    // No backtrace: saturated, and the cause says a backtrace would tell.
    let r = report(0.9, |c| {
        c.table(top(&[(10, "app", 0.3), (11, "rdk:broker1", 0.95)]))
    });
    assert_eq!(ids(&r), ["rdk-broker-saturated"]);
    assert!(r.diagnoses[0]
        .cause
        .contains("tells per-message work from a spin"));
}

#[test]
fn a_thread_is_a_broker_thread_by_its_stack_whatever_its_name() {
    let r = report(0.9, |c| {
        c.table(top(&[
            (10, "app", 0.1),
            (11, "worker-3", 0.96),
            (12, "rdk:main", 0.0),
        ]));
        c.backtrace(bt(11, BROKER_WORK));
    });
    let t = r.threads.iter().find(|t| t.tid == 11).unwrap();
    assert_eq!(t.role, Role::RdkBroker);
    assert_eq!(ids(&r), ["rdk-broker-saturated"]);
}

#[test]
fn the_app_thread_in_its_own_code_or_in_poll() {
    let rows = [(10, "consumer", 0.97), (11, "rdk:broker1", 0.2)];
    let r = report(0.9, |c| {
        c.table(top(&rows));
        c.backtrace(bt(10, &["serde_json::de::parse", "my_app::handle", "main"]));
    });
    assert_eq!(ids(&r), ["app-thread-own-work"]);
    assert_eq!(
        r.diagnoses[0].evidence["backtrace_top"],
        "serde_json::de::parse"
    );
    assert!(r.diagnoses[0]
        .cause
        .contains("busiest rdk:broker thread is at 0.20"));
    let r = report(0.9, |c| {
        c.table(top(&rows));
        c.backtrace(bt(
            10,
            &[
                "cnd_timedwait",
                "rd_kafka_q_pop",
                "rdkafka::consumer::base_consumer::BaseConsumer::poll",
            ],
        ));
    });
    assert_eq!(ids(&r), ["app-thread-saturated"]);
    assert_eq!(r.diagnoses[0].evidence["broker_cores_max"], 0.2);
}

fn jvm(name: &str, nid: i32, cpu_ms: f64, frames: &[&str]) -> JvmThread {
    JvmThread {
        name: name.into(),
        nid: Some(nid),
        cpu_ms: Some(cpu_ms),
        elapsed_s: Some(10.0),
        os_state: "runnable".into(),
        state: Some("RUNNABLE".into()),
        frames: frames.iter().map(|f| f.to_string()).collect(),
        held: Vec::new(),
        waiting: None,
        line: nid as u64,
        text: format!("\"{name}\" nid={nid}"),
    }
}

fn dump(threads: Vec<JvmThread>) -> Dump {
    Dump {
        first_line: 1,
        last_line: 99,
        threads,
        ..Dump::default()
    }
}

#[test]
fn jvm_threads_by_their_stacks_and_gc_above_the_rest() {
    // cpu= over elapsed= of 10 s: main 9.6 s of CPU is 0.96 cores over its life.
    let poll = [
        "sun.nio.ch.EPoll.wait",
        "org.apache.kafka.clients.consumer.KafkaConsumer.poll",
    ];
    let r = report(0.9, |c| {
        c.dump(dump(vec![
            jvm("main", 5, 9600.0, &poll),
            jvm("GC Thread#0", 6, 100.0, &[]),
        ]))
    });
    assert_eq!(r.threads[0].role, Role::JavaConsumerPoll);
    assert_eq!(r.threads[0].figure, Some(Figure::Lifetime));
    assert_eq!(ids(&r), ["java-consumer-thread-saturated"]);
    assert!(r.diagnoses[0].cause.contains("over its whole life of 10 s"));
    let own = ["com.example.Parser.parse", "com.example.Main.main"];
    let r = report(0.9, |c| c.dump(dump(vec![jvm("main", 5, 9600.0, &own)])));
    assert_eq!(ids(&r), ["saturated-thread"]);
    assert!(r.diagnoses[0]
        .cause
        .contains("outside KafkaConsumer.poll()"));
    let r = report(0.9, |c| {
        c.dump(dump(vec![
            jvm("main", 5, 3000.0, &own),
            jvm("GC Thread#0", 6, 4000.0, &[]),
            jvm("GC Thread#1", 7, 3500.0, &[]),
        ]))
    });
    assert_eq!(ids(&r), ["gc-threads-dominate"]);
    assert_eq!(r.diagnoses[0].evidence["gc_threads"], 2);
}

#[test]
fn a_paste_is_told_from_a_log() {
    let fixture = |f: &str| {
        std::fs::read(format!(
            "{}/../fixtures/threads/{f}",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap()
    };
    for f in [
        "spin-top-batch.txt",
        "probe-ps-two.txt",
        "spin-pidstat.txt",
        "spin-gdb.txt",
    ] {
        assert!(
            looks_like_paste(&fixture(f)[..2000.min(fixture(f).len())]),
            "{f}"
        );
    }
    let some_log = format!(
        "{}/../fixtures/librdkafka/consumer-kafka431-backoff-10ms/debug.log",
        env!("CARGO_MANIFEST_DIR")
    );
    let head = std::fs::read(&some_log).unwrap();
    assert!(
        !looks_like_paste(&head[..head.len().min(4000)]),
        "{some_log:?}"
    );
}

/// Every fixture cut after every line, and cut mid-line at a few bytes, and with bytes
/// flipped: a report or an error, never a panic.
#[test]
fn every_cut_of_every_fixture_is_an_outcome_not_a_panic() {
    let dir = format!("{}/../fixtures/threads", env!("CARGO_MANIFEST_DIR"));
    let tsv = std::fs::read_to_string(format!("{dir}/SOURCES.tsv")).unwrap();
    for f in tsv.lines().skip(1).map(|l| l.split('\t').next().unwrap()) {
        let bytes = std::fs::read(format!("{dir}/{f}")).unwrap();
        let ends: Vec<usize> = bytes
            .iter()
            .enumerate()
            .filter(|(_, b)| **b == b'\n')
            .map(|(i, _)| i + 1)
            .collect();
        for &end in &ends {
            let _ = read_paste(&bytes[..end], f, &PasteOptions::default());
        }
        for end in (0..bytes.len()).step_by(bytes.len() / 37 + 1) {
            let _ = read_paste(&bytes[..end], f, &PasteOptions::default());
        }
        let mut flipped = bytes.clone();
        for i in (0..flipped.len()).step_by(97) {
            flipped[i] ^= 0x5a;
        }
        let _ = read_paste(&flipped[..], f, &PasteOptions::default());
    }
}

#[test]
fn a_top_table_without_its_summary_block_is_still_top() {
    let path = format!(
        "{}/../fixtures/threads/spin-top-batch.txt",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(path).unwrap();
    // The column header and the rows of the first frame only (a paste of just the table).
    let table: String = text
        .lines()
        .skip(6)
        .take(4)
        .map(|l| format!("{l}\n"))
        .collect();
    assert!(table.starts_with("  PID USER"), "{table}");
    let r = read_paste(table.as_bytes(), "t", &PasteOptions::default()).unwrap();
    assert_eq!(r.sections[0].format, Format::Top);
    assert!(r
        .threads
        .iter()
        .any(|t| t.name == "spinner" && t.figure == Some(Figure::Interval)));
}

#[test]
fn a_paste_that_alternates_tools_keeps_one_section_per_tool() {
    let path = format!(
        "{}/../fixtures/threads/probe-top-then-gdb.txt",
        env!("CARGO_MANIFEST_DIR")
    );
    let one = std::fs::read(path).unwrap();
    let many: Vec<u8> = one.iter().copied().cycle().take(one.len() * 50).collect();
    let r = read_paste(&many[..], "t", &PasteOptions::default()).unwrap();
    assert_eq!(r.sections.len(), 2, "{:?}", r.sections);
    assert_eq!(r.sections[0].parts, 50);
    assert_eq!(r.iterations.len(), 50);
}

#[test]
fn a_table_of_several_processes_diagnoses_each_by_its_own_kind() {
    // ps -eLf of a whole machine: a librdkafka client (pid 100) and another program (300).
    let mut t = Table::new(Format::Ps, 1, Figure::Lifetime);
    for (i, (pid, tid, name, cores)) in [
        (100, 100, "consumer", 0.96),
        (100, 101, "rdk:broker1", 0.3),
        (300, 300, "worker", 0.97),
    ]
    .into_iter()
    .enumerate()
    {
        t.rows.push(Row {
            tid,
            pid: Some(pid),
            name: Some(name.into()),
            cores: Some(cores),
            line: 2 + i as u64,
            text: format!("{pid} {tid} {name}"),
            ..Row::default()
        });
    }
    let r = report(0.9, |c| c.table(t));
    assert_eq!(r.pids, [100, 300]);
    assert_eq!(ids(&r), ["app-thread-saturated", "saturated-thread"]);
    assert_eq!(r.diagnoses[0].evidence["pid"], 100);
    assert_eq!(r.diagnoses[1].evidence["thread"], "worker");
}
