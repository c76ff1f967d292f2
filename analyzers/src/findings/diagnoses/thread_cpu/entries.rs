//! analyze-thread-cpu's diagnoses as the catalogue lists them (recordings and pasted
//! snapshots share their ids where the meaning is the same), and the thresholds they judge by.

use crate::findings::diagnoses::rule::{DiagnosisRule, Level, Scope, Threshold};
pub use crate::findings::saturation::SATURATED_CORES;

/// The analyzer these diagnoses belong to.
pub const ANALYZER: &str = "analyze-thread-cpu";

/// A recording's thread is saturated at SATURATED_CORES for at least this many consecutive
/// seconds (`--saturated-seconds`): a few seconds is a phase, not a moment (the post's
/// limiting threads stayed there for the whole run).
pub const SATURATED_SECONDS: f64 = 3.0;
/// The pipeline's threads must use this many times the CPU of librdkafka's client threads
/// (its mock's not counted) to be the limit when none of them is saturated alone: twice is
/// plainly more, not noise (a margin)…
pub const PIPELINE_OVER_RDK: f64 = 2.0;
/// … and at least this many cores together (an idle pipeline limits nothing; most of a core).
pub const PIPELINE_MIN_CORES: f64 = 0.8;
/// GC threads must use at least this many cores to "dominate" (an idle JVM's GC does not;
/// the post's collapsing JVM: 4.79 cores).
pub const GC_DOMINATES_MIN_CORES: f64 = 0.5;
/// A broker thread whose backtraces wait is spinning only at (nearly) a whole core, whatever
/// --saturated-cores says (the post's spin at fetch.queue.backoff.ms=0 held a full core).
pub const SPIN_MIN_CORES: f64 = SATURATED_CORES;
/// …and only when more than this share of its backtraces wait (most of them).
pub const SPIN_WAITING_SHARE: f64 = 0.5;

const fn t(name: &'static str, value: f64, unit: &'static str, source: &'static str) -> Threshold {
    Threshold {
        name,
        value,
        unit,
        source,
    }
}

const SATURATED: Threshold = t(
    "SATURATED_CORES",
    SATURATED_CORES,
    "cores",
    "the post's limiting threads ran at 0.95 to 0.98 cores; 0.9 for sampling loss",
);
const FOR_SECONDS: Threshold = t(
    "SATURATED_SECONDS",
    SATURATED_SECONDS,
    "s (recordings)",
    "a phase, not a moment",
);

const fn saturated(id: &'static str, scope: Scope, rule: &'static str) -> DiagnosisRule {
    DiagnosisRule {
        id,
        analyzer: ANALYZER,
        level: Level::Problem,
        scope,
        rule,
        thresholds: &[SATURATED, FOR_SECONDS],
    }
}

pub const RDK_BROKER_SATURATED: DiagnosisRule = saturated(
    "rdk-broker-saturated",
    Scope::KafkaClient,
    "an rdk:broker thread at ≥ 0.9 cores (recordings: for ≥ 3 s; snapshots: its backtraces, \
     if any, mostly not waiting)",
);
pub const APP_THREAD_SATURATED: DiagnosisRule = saturated(
    "app-thread-saturated",
    Scope::KafkaClient,
    "in a librdkafka process, an application thread at ≥ 0.9 cores (snapshots: its backtrace, \
     if any, in librdkafka)",
);
pub const JAVA_CONSUMER_THREAD_SATURATED: DiagnosisRule = saturated(
    "java-consumer-thread-saturated",
    Scope::KafkaClient,
    "in a JVM that shows a Kafka consumer, its poll (or background) thread at ≥ 0.9 cores",
);
pub const JAVA_PRODUCER_NETWORK_SATURATED: DiagnosisRule = saturated(
    "java-producer-network-saturated",
    Scope::KafkaClient,
    "in a JVM, kafka-producer-network-thread at ≥ 0.9 cores",
);
pub const SATURATED_THREAD: DiagnosisRule = saturated(
    "saturated-thread",
    Scope::AnyProcess,
    "any other thread at ≥ 0.9 cores, with what its role means",
);
pub const PROCESSING_THREADS_LIMIT: DiagnosisRule = DiagnosisRule {
    id: "processing-threads-limit",
    analyzer: ANALYZER,
    level: Level::Problem,
    scope: Scope::KafkaClient,
    rule: "in a librdkafka process, a pipeline thread saturated, or the pipeline threads \
           together at ≥ 0.8 cores and ≥ 2 × librdkafka's client threads",
    thresholds: &[
        SATURATED,
        FOR_SECONDS,
        t(
            "PIPELINE_MIN_CORES",
            PIPELINE_MIN_CORES,
            "cores",
            "an idle pipeline limits nothing",
        ),
        t(
            "PIPELINE_OVER_RDK",
            PIPELINE_OVER_RDK,
            "× librdkafka's cores",
            "plainly more, not noise",
        ),
    ],
};
pub const GC_THREADS_DOMINATE: DiagnosisRule = DiagnosisRule {
    id: "gc-threads-dominate",
    analyzer: ANALYZER,
    level: Level::Problem,
    scope: Scope::AnyProcess,
    rule: "the JVM's GC threads at ≥ 0.5 cores together and above every other role",
    thresholds: &[t(
        "GC_DOMINATES_MIN_CORES",
        GC_DOMINATES_MIN_CORES,
        "cores",
        "an idle JVM's GC does not dominate; the post's: 4.79 cores",
    )],
};
pub const RDK_BROKER_SPIN: DiagnosisRule = DiagnosisRule {
    id: "rdk-broker-spin",
    analyzer: ANALYZER,
    level: Level::Problem,
    scope: Scope::KafkaClient,
    rule: "(snapshots) an rdk:broker thread at ≥ 0.9 cores while more than half of its \
           backtraces wait",
    thresholds: &[
        t(
            "SPIN_MIN_CORES",
            SPIN_MIN_CORES,
            "cores",
            "the post's spin held a full core",
        ),
        t(
            "SPIN_WAITING_SHARE",
            SPIN_WAITING_SHARE,
            "share of its backtraces",
            "most of them",
        ),
    ],
};
pub const APP_THREAD_OWN_WORK: DiagnosisRule = DiagnosisRule {
    id: "app-thread-own-work",
    analyzer: ANALYZER,
    level: Level::Problem,
    scope: Scope::KafkaClient,
    rule: "(snapshots) in a librdkafka process, an application thread at ≥ 0.9 cores whose \
           backtrace has no librdkafka frame",
    thresholds: &[SATURATED],
};
pub const JAVA_HEARTBEAT_WAITS_FOR_POLL_THREAD: DiagnosisRule = DiagnosisRule {
    id: "java-heartbeat-waits-for-poll-thread",
    analyzer: ANALYZER,
    level: Level::Note,
    scope: Scope::KafkaClient,
    rule: "(snapshots) a JVM dump's kafka-coordinator-heartbeat-thread waiting to lock (or \
           parked on) a lock another thread holds, or the thread inside \
           ConsumerNetworkClient.poll when the dump does not name the owner",
    thresholds: &[],
};
pub const NO_SATURATED_THREAD: DiagnosisRule = DiagnosisRule {
    id: "no-saturated-thread",
    analyzer: ANALYZER,
    level: Level::AllClear,
    scope: Scope::AnyProcess,
    rule: "no thread saturated and no other diagnosis, with CPU figures per thread read",
    thresholds: &[SATURATED, FOR_SECONDS],
};
pub const NO_THREAD_CPU_FIGURES: DiagnosisRule = DiagnosisRule {
    id: "no-thread-cpu-figures",
    analyzer: ANALYZER,
    level: Level::Refusal,
    scope: Scope::AnyProcess,
    rule: "(snapshots) threads named but not one CPU figure per thread that is a share now",
    thresholds: &[],
};

pub const RULES: &[DiagnosisRule] = &[
    RDK_BROKER_SATURATED,
    APP_THREAD_SATURATED,
    JAVA_CONSUMER_THREAD_SATURATED,
    JAVA_PRODUCER_NETWORK_SATURATED,
    SATURATED_THREAD,
    PROCESSING_THREADS_LIMIT,
    GC_THREADS_DOMINATE,
    RDK_BROKER_SPIN,
    APP_THREAD_OWN_WORK,
    JAVA_HEARTBEAT_WAITS_FOR_POLL_THREAD,
    NO_SATURATED_THREAD,
    NO_THREAD_CPU_FIGURES,
];
