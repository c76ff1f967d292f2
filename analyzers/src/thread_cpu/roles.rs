//! What a thread does, from its name: librdkafka's `rdk:*` threads, the Java client's
//! network, heartbeat and consumer threads, the JVM's GC, JIT and housekeeping threads, and
//! the application's own.

use serde::Serialize;

/// What a thread does, from its kernel name (`comm`, at most 15 bytes: the JVM's and
/// librdkafka's names are cut there, e.g. `kafka-producer-`, `C2 CompilerThre`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Role {
    /// librdkafka `rdk:broker<id>`: socket I/O and per-message fetch parsing.
    RdkBroker,
    /// librdkafka `rdk:main`: timers, metadata, the consumer group.
    RdkMain,
    /// librdkafka `rdk:mock*`: the built-in mock cluster.
    RdkMock,
    /// Other librdkafka threads (`rdk:bg`, …).
    RdkOther,
    /// Java `kafka-producer-network-thread | <client.id>`: the producer's sender.
    JavaProducerNetwork,
    /// Java `kafka-coordinator-heartbeat-thread | <group>`.
    JavaHeartbeat,
    /// The application thread a JVM dump shows inside `KafkaConsumer.poll()` (the consumer's
    /// poll thread; known from a thread dump only, never from a name).
    JavaConsumerPoll,
    /// Java's new consumer (group.protocol=consumer) background thread.
    JavaConsumerBackground,
    /// JVM garbage collector threads (`GC Thread#*`, `G1 Conc#*`, `G1 Refine#*`, …).
    JvmGc,
    /// JVM JIT compiler threads (`C1 CompilerThre`, `C2 CompilerThre`).
    JvmJit,
    /// Other JVM housekeeping threads (`VM Thread`, `Reference Handl`, …).
    JvmOther,
    /// The application's own threads (the one that calls poll() is one of them).
    App,
    /// A record-processing pipeline's threads: probe-consumer-alloc's one processing thread
    /// per partition (`kgap-proc-<n>`) and its writer (`kgap-writer`).
    Pipeline,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::RdkBroker => "rdk-broker",
            Role::RdkMain => "rdk-main",
            Role::RdkMock => "rdk-mock",
            Role::RdkOther => "rdk-other",
            Role::JavaProducerNetwork => "java-producer-network",
            Role::JavaHeartbeat => "java-heartbeat",
            Role::JavaConsumerPoll => "java-consumer-poll",
            Role::JavaConsumerBackground => "java-consumer-background",
            Role::JvmGc => "jvm-gc",
            Role::JvmJit => "jvm-jit",
            Role::JvmOther => "jvm-other",
            Role::App => "app",
            Role::Pipeline => "pipeline",
        }
    }

    pub(crate) fn is_jvm_internal(self) -> bool {
        matches!(self, Role::JvmGc | Role::JvmJit | Role::JvmOther)
    }

    pub(crate) fn is_rdk(self) -> bool {
        matches!(
            self,
            Role::RdkBroker | Role::RdkMain | Role::RdkMock | Role::RdkOther
        )
    }
}

const JVM_OTHER: &[&str] = &[
    "VM Thread",
    "VM Periodic Tas",
    "Reference Handl",
    "Finalizer",
    "Signal Dispatch",
    "Service Thread",
    "Monitor Deflati",
    "Common-Cleaner",
    "Notification Th",
    "Attach Listener",
    "Sweeper thread",
    "JFR Recorder Th",
    "JFR Periodic Ta",
];

/// The role of a thread from its name.
pub fn classify(name: &str) -> Role {
    if let Some(rest) = name.strip_prefix("rdk:") {
        return if rest.starts_with("broker") {
            Role::RdkBroker
        } else if rest == "main" {
            Role::RdkMain
        } else if rest.starts_with("mock") {
            Role::RdkMock
        } else {
            Role::RdkOther
        };
    }
    if name.starts_with("kafka-producer-") {
        return Role::JavaProducerNetwork;
    }
    if name.starts_with("kafka-coordinat") {
        return Role::JavaHeartbeat;
    }
    if name.starts_with("consumer_backgr") || name.starts_with("consumer_background") {
        return Role::JavaConsumerBackground;
    }
    if name.starts_with("GC Thread")
        || name.starts_with("G1 ")
        || name.starts_with("ZWorker")
        || name.starts_with("ZDriver")
        || name.starts_with("ZDirector")
        || name.starts_with("Shenandoah")
        || name.starts_with("ParGC")
        || name.starts_with("VM Thread GC")
    {
        return Role::JvmGc;
    }
    if name.starts_with("C1 CompilerThre") || name.starts_with("C2 CompilerThre") {
        return Role::JvmJit;
    }
    if JVM_OTHER.iter().any(|p| name.starts_with(p)) {
        return Role::JvmOther;
    }
    if name.starts_with("kgap-proc-") || name == "kgap-writer" {
        return Role::Pipeline;
    }
    Role::App
}

/// The role of a thread whose name the tool cut (top's `kafka-pro+`, `rdk:broke+`): the
/// known name that the head begins, or that begins with the head.
pub fn classify_cut(head: &str) -> Role {
    let whole = classify(head);
    if whole != Role::App && whole != Role::RdkOther {
        return whole;
    }
    const KNOWN: &[(&str, Role)] = &[
        ("rdk:broker", Role::RdkBroker),
        ("rdk:main", Role::RdkMain),
        ("rdk:mock", Role::RdkMock),
        ("kafka-producer-", Role::JavaProducerNetwork),
        ("kafka-coordinat", Role::JavaHeartbeat),
        ("consumer_backgr", Role::JavaConsumerBackground),
        ("GC Thread", Role::JvmGc),
        ("C1 CompilerThre", Role::JvmJit),
        ("C2 CompilerThre", Role::JvmJit),
    ];
    if head.chars().count() >= 4 {
        for (name, role) in KNOWN {
            if name.starts_with(head) {
                return *role;
            }
        }
        for name in JVM_OTHER {
            if name.starts_with(head) {
                return Role::JvmOther;
            }
        }
    }
    whole
}

/// The role a native backtrace shows, whatever the thread is called: the start function of
/// each of librdkafka's threads (rdkafka_broker.c, rdkafka.c, rdkafka_mock.c,
/// rdkafka_background.c).
pub fn classify_frames(frames: &[String]) -> Option<Role> {
    frames.iter().find_map(|f| match f.as_str() {
        "rd_kafka_broker_thread_main" => Some(Role::RdkBroker),
        "rd_kafka_thread_main" => Some(Role::RdkMain),
        "rd_kafka_mock_cluster_thread_main" => Some(Role::RdkMock),
        "rd_kafka_background_thread_main" => Some(Role::RdkOther),
        _ => None,
    })
}

/// The name with its trailing number collapsed to `*`, for the "by role" view:
/// `pool-1-thread-7` → `pool-1-thread-*`, `GC Thread#3` → `GC Thread#*`. librdkafka's names
/// stay whole (`rdk:broker1` and `rdk:broker2` are different brokers), and so does a name
/// that is only a number.
pub fn collapse_name(name: &str) -> String {
    if name.starts_with("rdk:") {
        return name.to_string();
    }
    let head = name.trim_end_matches(|c: char| c.is_ascii_digit());
    if head.len() == name.len() || head.is_empty() {
        name.to_string()
    } else {
        format!("{head}*")
    }
}

/// What kind of client the process is, from its thread names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProcessKind {
    /// Has `rdk:*` threads.
    Librdkafka,
    /// Has JVM threads (GC, JIT, VM Thread).
    Jvm,
    /// Neither.
    Other,
}
