//! probe-consumer-clients end to end: librdkafka's consumers (and K instances of one) on the
//! embedded mock, and both clients side by side on a real broker (KGAP_TEST_BROKERS, the
//! local Apache Kafka of `scripts/kafka up`; it fails, never skips). Short windows: these
//! check the document and the thread roles, not the post's numbers.

use serde_json::Value;

mod common;
use common::{brokers, json_of, needs_brokers};

const EXE: &str = env!("CARGO_BIN_EXE_probe-consumer-clients");

fn verdict<'a>(r: &'a Value, id: &str) -> &'a Value {
    r["verdicts"]
        .as_array()
        .expect("verdicts")
        .iter()
        .find(|v| v["finding"] == id)
        .unwrap_or_else(|| panic!("no verdict {id}: {r}"))
}

fn role_cores<'a>(run: &'a Value, role: &str) -> Vec<f64> {
    run["threads"]
        .as_array()
        .expect("threads")
        .iter()
        .find(|t| t["role"] == role)
        .map(|t| {
            t["cores"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c.as_f64().unwrap())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn librdkafkas_consumers_and_two_instances_on_the_mock() {
    let r = json_of(&common::run(
        EXE,
        &[
            "--sizes",
            "100",
            "--instances",
            "1,2",
            "--reps",
            "1",
            "--prefill-mb",
            "20",
            "--duration",
            "2s",
            "--json",
            "-q",
        ],
    ));
    assert_eq!(r["broker"]["kind"], "embedded-mock", "{}", r["broker"]);
    let points = r["points"].as_array().expect("points");
    // poll and tuned at K=1 and K=2: librdkafka only, no Java point.
    assert_eq!(points.len(), 4, "{points:?}");
    assert!(points.iter().all(|p| p["client"] == "librdkafka"));
    for p in points {
        let k = p["params"]["instances"].as_u64().unwrap() as usize;
        assert_eq!(p["params"]["size_bytes"], 100);
        let run = &p["runs"][0];
        common::assert_rate_of_window(run);
        let per = run["per_instance"].as_array().expect("per_instance");
        assert_eq!(per.len(), k, "one figure per instance: {run}");
        // The aggregate is the instances' sum over the one window.
        let sum: u64 = per.iter().map(|i| i["messages"].as_u64().unwrap()).sum();
        assert_eq!(sum, run["messages"].as_u64().unwrap(), "{run}");
        // Each instance has its own application thread and broker connection.
        assert_eq!(role_cores(run, "app").len(), k, "{run}");
        assert!(role_cores(run, "rdk:broker").len() >= k, "{run}");
    }
    let labels: Vec<&str> = points
        .iter()
        .map(|p| p["label"].as_str().unwrap())
        .collect();
    assert!(labels.contains(&"tuned-100B-x2"), "{labels:?}");
    // Without Java beside it the broker-thread finding is never claimed, and one rep on a
    // 2-core mock run decides nothing.
    for id in [
        "java-consumer-one-core",
        "librdkafka-broker-thread-limit",
        "instances-scale-past-broker-thread",
    ] {
        assert_eq!(
            verdict(&r, id)["outcome"],
            "cannot-tell",
            "{}",
            verdict(&r, id)
        );
    }
    let broker = verdict(&r, "librdkafka-broker-thread-limit");
    assert!(
        broker["reason"].as_str().unwrap().contains("rdk:broker"),
        "{broker}"
    );
    assert!(
        broker.to_string().contains("Java was not measured"),
        "{broker}"
    );
}

/// The cpu `--own-core` can take here: the last, when another is left for the rest.
fn own_core() -> Option<String> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    (cores >= 2).then(|| (cores - 1).to_string())
}

#[test]
fn own_core_needs_a_cpu_left_and_one_instance() {
    for (args, says) in [
        (&["--own-core", "0", "--cpus", "0"][..], "no cpu is left"),
        (&["--own-core", "9999"][..], "does not exist"),
        (
            &["--own-core", "0", "--instances", "1,2"][..],
            "would share it",
        ),
    ] {
        let out = common::run(EXE, args);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            common::stderr(&out)
        );
        assert!(
            common::stderr(&out).contains(says),
            "{args:?}: {}",
            common::stderr(&out)
        );
    }
}

#[test]
fn both_clients_read_the_same_topic_on_a_real_broker() {
    needs_brokers(EXE, &["--client", "both", "--reps", "1"]);
    // Each client's limiting thread alone on the last cpu: the run fails if none was pinned.
    let own = own_core();
    let mut own_args = vec![];
    if let Some(cpu) = &own {
        own_args = vec!["--own-core", cpu.as_str()];
    }
    let r = json_of(&common::run(
        EXE,
        &[
            &own_args[..],
            &[
                "--brokers",
                &brokers(),
                "--client",
                "both",
                "--sizes",
                "1024",
                "--api",
                "tuned",
                "--reps",
                "1",
                // librdkafka reads 1.3-1.9 GB/s here and its window opens after a tenth of the
                // topic: 200 MB made 0.10-0.13 s windows, at the 0.1 s (10 /proc ticks) below
                // which machine_busy_cores is not given (CI saw it null). 600 MB: 0.28-0.34 s.
                "--prefill-mb",
                "600",
                "--duration",
                "2s",
                "--json",
                "-q",
            ][..],
        ]
        .concat(),
    ));
    if let Some(cpu) = &own {
        let placement = &r["placement"];
        assert_eq!(placement["own_core"].to_string(), *cpu, "{placement}");
        assert!(
            placement["note"].as_str().unwrap().contains("(--own-core)"),
            "{placement}"
        );
    }
    let points = r["points"].as_array().expect("points");
    let by = |label: &str| {
        points
            .iter()
            .find(|p| p["label"] == label)
            .unwrap_or_else(|| panic!("no point {label}: {points:?}"))
    };
    assert_eq!(points.len(), 3, "tuned, classic, consumer: {points:?}");
    let classic = &by("java-classic-1024B")["runs"][0];
    let consumer = &by("java-consumer-1024B")["runs"][0];
    let tuned = &by("tuned-1024B")["runs"][0];
    assert_eq!(by("java-consumer-1024B")["client"], "java");
    for run in [classic, consumer, tuned] {
        common::assert_rate_of_window(run);
    }
    // Java's poll() thread measured by role in both protocols; the background thread only
    // with group.protocol=consumer, where it does the network I/O.
    assert_eq!(role_cores(classic, "poll").len(), 1, "{classic}");
    assert!(role_cores(consumer, "poll")[0] > 0.0, "{consumer}");
    assert!(role_cores(consumer, "background")[0] > 0.0, "{consumer}");
    assert!(role_cores(classic, "background").is_empty(), "{classic}");
    assert!(
        tuned["machine_busy_cores"].as_f64().unwrap() > 0.0,
        "{tuned}"
    );
    // One rep decides nothing, whatever the machine did.
    for v in r["verdicts"].as_array().unwrap() {
        assert_ne!(v["outcome"], "holds", "{v}");
    }
    let java = verdict(&r, "java-consumer-one-core");
    assert!(
        java.to_string().contains("10 KB was not measured"),
        "{java}"
    );
    assert!(
        r["topics"].as_array().unwrap().len() == 1,
        "{}",
        r["topics"]
    );
}
