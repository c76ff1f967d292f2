//! The result document every probe writes (`--json`, `result.json`) and gap-report reads.
//!
//! One typed struct, defined here so both crates reach it: the probes fill it with their own
//! typed run figures (`ProbeResult<Figures>`), gap-report reads any probe's document back as
//! `ProbeResult<serde_json::Value>`: everything but the figures is typed for both, and the
//! verdicts are the catalogue's own [`Verdict`]s. Field names are snake_case with units in
//! the name (`_ms`, `_bytes`, `_per_s`).

use crate::findings::verdict::Verdict;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The schema's name, in every document.
pub const SCHEMA: &str = "kgap.probe-result";
/// Version 2: typed verdicts (`verdicts[]` with outcome and checks), points per client, the
/// run order and its seed, core placement.
pub const SCHEMA_VERSION: u32 = 2;

/// Which Kafka client ran a point.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Client {
    /// librdkafka through rust-rdkafka, in the probe's process.
    Librdkafka,
    /// kafka-clients in the Java companion's JVM.
    Java,
}

impl Client {
    pub fn name(self) -> &'static str {
        match self {
            Client::Librdkafka => "librdkafka",
            Client::Java => "java",
        }
    }
}

/// Which broker the probe ran against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BrokerKind {
    /// librdkafka's in-process mock cluster: its per-request costs are not Apache Kafka's.
    EmbeddedMock,
    /// A real cluster named by `--brokers`.
    External,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BrokerInfo {
    pub kind: BrokerKind,
    pub bootstrap: String,
    /// For the mock: why its numbers are not Apache Kafka's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl BrokerInfo {
    pub fn is_mock(&self) -> bool {
        self.kind == BrokerKind::EmbeddedMock
    }

    /// Which broker, in words, with the embedded mock's caveat.
    pub fn describe(&self) -> String {
        match &self.note {
            Some(n) => format!("{}: {n}", self.bootstrap),
            None => format!("{} (external Kafka cluster)", self.bootstrap),
        }
    }
}

/// The payloads every run sent (the seed benchmark's generator).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PayloadInfo {
    pub size_bytes: usize,
    /// `random` or `text`.
    pub kind: String,
    pub pool_count: usize,
    /// SHA-256 of the concatenated pool: both clients sent these bytes.
    pub sha256: String,
}

/// One run in the order the sweep ran it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunSlot {
    /// Index into [`ProbeResult::points`].
    pub point: usize,
    /// 1-based.
    pub rep: u32,
}

/// The order runs took: shuffled per rep from `seed`, the client that goes first at a
/// point alternating, so drift over a sweep favours no setting and no client.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunOrder {
    pub seed: u64,
    pub runs: Vec<RunSlot>,
}

/// Which cores the client and the broker ran on.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Placement {
    /// Cores of the machine.
    pub machine_cores: usize,
    /// The probe's CPU affinity (all cores when not pinned).
    pub client_cpus: Vec<usize>,
    /// The broker's, where it could be read (a broker process on this machine, or the
    /// embedded mock, which is a thread of the probe).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub broker_cpus: Option<Vec<usize>>,
    /// True when the client and the broker can run on the same core; None when the broker's
    /// cores are unknown (a remote cluster).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shares_cores_with_broker: Option<bool>,
    /// A cpu of `client_cpus` the client's limiting threads ran on alone (`--own-core`),
    /// the rest of the client on the others.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub own_core: Option<usize>,
    /// The sentence every report prints about it.
    pub note: String,
}

/// One point of the sweep for one client: its parameters, every rep's figures, and the
/// median, min and max of every numeric figure over the reps.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Point<F = Value> {
    /// Folder and progress name of the point (`backoff-1000ms`, `java-p6-batch16384`).
    pub label: String,
    pub client: Client,
    pub params: Map<String, Value>,
    pub runs: Vec<F>,
    pub median: Map<String, Value>,
    pub min: Map<String, Value>,
    pub max: Map<String, Value>,
}

impl<F: Serialize> Point<F> {
    pub fn new(label: String, client: Client, params: Map<String, Value>) -> Point<F> {
        Point {
            label,
            client,
            params,
            runs: Vec::new(),
            median: Map::new(),
            min: Map::new(),
            max: Map::new(),
        }
    }

    /// Adds a run and recomputes the summaries.
    pub fn push(&mut self, run: F) {
        self.runs.push(run);
        let values: Vec<Value> = self
            .runs
            .iter()
            .map(|r| serde_json::to_value(r).unwrap_or(Value::Null))
            .collect();
        let (median, min, max) = summarize(&values);
        self.median = median;
        self.min = min;
        self.max = max;
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProbeResult<F = Value> {
    pub schema: String,
    pub schema_version: u32,
    pub probe: String,
    pub kgap_version: String,
    pub librdkafka_version: String,
    pub broker: BrokerInfo,
    /// The topics this probe created (and deleted).
    pub topics: Vec<String>,
    /// How a prefilled topic was filled before the runs (not measured).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefill: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payload: Option<PayloadInfo>,
    pub reps: u32,
    pub order: RunOrder,
    pub placement: Placement,
    pub points: Vec<Point<F>>,
    /// The catalogue's verdicts on this sweep, one per finding the probe decides.
    pub verdicts: Vec<Verdict>,
    /// What an analyzer read from the probe's own captures (`{"tool", "diagnoses", …}`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub diagnoses: Vec<Value>,
    /// What this probe did not measure, said plainly.
    pub not_measured: Vec<String>,
    /// Settings that differ from the defaults besides the swept knob, and why.
    pub notes: Vec<String>,
    /// Things that weaken the figures: outliers, shared cores, short windows.
    pub warnings: Vec<String>,
    /// Runs set aside, with why (the broker stalled during them): they are in no point's
    /// runs and no verdict.
    #[serde(default = "Vec::new", skip_serializing_if = "Vec::is_empty")]
    pub discarded: Vec<DiscardedRun<F>>,
    pub interrupted: bool,
    /// Why the sweep ended before its last run, when it failed (the broker gone): what it
    /// measured until then is all here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed: Option<String>,
    /// The broker's idle round trip, measured before the first run (and before every later
    /// rep): a proxy or tunnel in the path shows here before it caps the figures. Absent in
    /// documents of a kgap that did not measure it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preflight: Option<Preflight>,
    /// What else ran beside each kept run: the machine's CPU less the probe's and the local
    /// broker's, and the hypervisor's steal (/proc/stat). Empty in documents of a kgap that
    /// did not measure it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub noise: Vec<RepNoise>,
}

/// The CPU beside one run, in cores over its length (/proc/stat and /proc/<pid>/stat).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RepNoise {
    /// Index into [`ProbeResult::points`].
    pub point: usize,
    pub rep: u32,
    /// Every core's busy time (steal apart), in cores.
    pub machine_busy_cores: f64,
    /// The probe's own cores, its children's (the Java companion) and their children's
    /// included, whether still running or already ended.
    pub own_cores: f64,
    /// The local broker's cores (absent for a remote broker or the embedded mock).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub broker_cores: Option<f64>,
    /// What the rest of the machine took: busy less the probe's and the broker's.
    pub others_cores: f64,
    /// Time the hypervisor gave to other guests while this one wanted the CPU, in cores.
    pub steal_cores: f64,
    /// The other processes that took the most, busiest first (at most 3, each ≥ 0.05
    /// cores): who competed, so that a noisy run can be told what to stop.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub others_top: Vec<OtherProcess>,
}

/// A process beside a run, not the probe's and not the broker's, with what it took.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OtherProcess {
    pub pid: i32,
    /// Its name in /proc (`comm`, at most 15 characters): never its command line, which can
    /// hold secrets.
    pub comm: String,
    /// Its CPU and its ended children's over the run, in cores.
    pub cores: f64,
}

/// The RTT preflight: brokers-only Metadata requests on an idle client of its own, timed
/// one by one, before the probe measures anything.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Preflight {
    /// What was timed (`30 brokers-only Metadata requests, one at a time, on an idle client`).
    pub method: String,
    /// The address the client was given (the first bootstrap entry).
    pub address: String,
    /// `loopback`, `link-local`, `other` (the address promises nothing) or `embedded-mock`
    /// (in-process: not a network path).
    pub address_kind: String,
    /// The most the floor may be for such an address; None where the address promises
    /// nothing (only the jump between reps is judged there).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_max_ms: Option<f64>,
    /// One entry per measurement: before rep 1, then before each later rep.
    pub reps: Vec<PreflightRep>,
    /// Set when the round trip is well above what the address suggests: it names the trap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
    /// The machine's cross-cpu thread wakeup, timed once before rep 1: about what each hop
    /// of a message to a thread asleep on another core takes. Absent in documents of a kgap
    /// that did not measure it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wakeup: Option<Wakeup>,
}

/// One-way wakeup times of a thread blocked in a read on `to_cpu`, woken by a write from a
/// thread on `from_cpu`, `gap_ms` apart (the woken cpu idle between), in µs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Wakeup {
    pub from_cpu: usize,
    pub to_cpu: usize,
    pub samples: usize,
    pub gap_ms: f64,
    pub us_p50: f64,
    pub us_p99: f64,
    pub us_max: f64,
}

/// One preflight measurement: the round trip's floor (min: load only adds to it, a relay
/// raises it), median and max.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PreflightRep {
    /// The rep it ran before (1 = before anything).
    pub rep: u32,
    pub samples: usize,
    pub rtt_ms_min: f64,
    pub rtt_ms_median: f64,
    pub rtt_ms_max: f64,
}

/// A run the kit set aside.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DiscardedRun<F = Value> {
    /// Index into [`ProbeResult::points`].
    pub point: usize,
    pub rep: u32,
    pub reason: String,
    /// Its figures, when it finished (absent when it failed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub figures: Option<F>,
}

impl<F> ProbeResult<F> {
    /// The verdict on this finding, if the probe decided it.
    pub fn verdict(&self, finding: &str) -> Option<&Verdict> {
        self.verdicts.iter().find(|v| v.finding == finding)
    }
}

/// Median, min and max of every numeric field over runs; `threads` ([{name, cores}]) by
/// thread name (a thread absent from a run counts 0 cores there). Arrays such as
/// `timeline` stay per run. Integers stay integers where the value is whole.
pub fn summarize(runs: &[Value]) -> (Map<String, Value>, Map<String, Value>, Map<String, Value>) {
    let (mut med, mut lo, mut hi) = (Map::new(), Map::new(), Map::new());
    let Some(Value::Object(first)) = runs.first() else {
        return (med, lo, hi);
    };
    for (key, v) in first {
        if !v.is_number() {
            continue;
        }
        let xs: Vec<f64> = runs
            .iter()
            .filter_map(|r| r.get(key).and_then(Value::as_f64))
            .collect();
        if xs.len() != runs.len() {
            continue;
        }
        let all_int = runs.iter().all(|r| r[key].is_u64() || r[key].is_i64());
        let reps = crate::findings::reps::Reps::new(xs);
        let (Some(m), Some(mn), Some(mx)) = (reps.median(), reps.min(), reps.max()) else {
            continue;
        };
        med.insert(key.clone(), num(m, all_int && m.fract() == 0.0));
        lo.insert(key.clone(), num(mn, all_int));
        hi.insert(key.clone(), num(mx, all_int));
    }
    let mut names: Vec<String> = Vec::new();
    for t in runs.iter().flat_map(|r| threads_of(r)) {
        if let Some(n) = t.get("name").and_then(Value::as_str) {
            if !names.iter().any(|x| x == n) {
                names.push(n.to_string());
            }
        }
    }
    if !names.is_empty() {
        let mut threads: Vec<(String, f64)> = names
            .into_iter()
            .map(|n| {
                let cores = crate::findings::reps::Reps::new(runs.iter().map(|r| {
                    threads_of(r)
                        .find(|t| t.get("name").and_then(Value::as_str) == Some(&n))
                        .and_then(|t| t.get("cores").and_then(Value::as_f64))
                        .unwrap_or(0.0)
                }));
                (n, cores.median().unwrap_or(0.0))
            })
            .collect();
        threads.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        med.insert(
            "threads".into(),
            Value::Array(
                threads
                    .into_iter()
                    .map(|(n, c)| serde_json::json!({"name": n, "cores": round3(c)}))
                    .collect(),
            ),
        );
    }
    (med, lo, hi)
}

fn threads_of(run: &Value) -> impl Iterator<Item = &Value> {
    run.get("threads")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

fn num(x: f64, int: bool) -> Value {
    if int && x >= 0.0 {
        Value::from(x as u64)
    } else {
        serde_json::Number::from_f64(round3(x))
            .map(Value::Number)
            .unwrap_or(Value::Null)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn summaries_are_median_min_max_per_numeric_field() {
        let runs = vec![
            json!({"msgs_per_s": 300.0, "backoffs": 7, "timeline": [1, 2], "threads": [{"name": "app", "cores": 0.5}]}),
            json!({"msgs_per_s": 100.0, "backoffs": 5, "timeline": [3], "threads": [{"name": "app", "cores": 0.7}, {"name": "rdk:broker1", "cores": 0.2}]}),
            json!({"msgs_per_s": 200.0, "backoffs": 6, "timeline": [], "threads": [{"name": "app", "cores": 0.6}]}),
        ];
        let (med, lo, hi) = summarize(&runs);
        assert_eq!(med["msgs_per_s"], json!(200.0));
        assert_eq!(lo["msgs_per_s"], json!(100.0));
        assert_eq!(hi["msgs_per_s"], json!(300.0));
        assert_eq!(med["backoffs"], json!(6));
        assert!(!med.contains_key("timeline"));
        assert_eq!(
            med["threads"],
            json!([{"name": "app", "cores": 0.6}, {"name": "rdk:broker1", "cores": 0.0}])
        );
        let (med, _, _) = summarize(&[json!({"n": 1}), json!({"n": 2})]);
        assert_eq!(med["n"], json!(1.5));
    }

    #[test]
    fn a_typed_result_reads_back_as_a_generic_one() {
        #[derive(Serialize, Clone)]
        struct Figures {
            msgs_per_s: f64,
        }
        let mut p = Point::new("a".into(), Client::Librdkafka, Map::new());
        p.push(Figures { msgs_per_s: 2.0 });
        p.push(Figures { msgs_per_s: 4.0 });
        let r = ProbeResult {
            schema: SCHEMA.into(),
            schema_version: SCHEMA_VERSION,
            probe: "probe-x".into(),
            kgap_version: "0".into(),
            librdkafka_version: "2.12.1".into(),
            broker: BrokerInfo {
                kind: BrokerKind::External,
                bootstrap: "127.0.0.1:9092".into(),
                note: None,
            },
            topics: vec![],
            prefill: None,
            payload: None,
            reps: 2,
            order: RunOrder::default(),
            placement: Placement::default(),
            points: vec![p],
            verdicts: vec![],
            diagnoses: vec![],
            not_measured: vec![],
            notes: vec![],
            warnings: vec![],
            discarded: vec![],
            interrupted: false,
            failed: None,
            preflight: None,
            noise: vec![],
        };
        let text = serde_json::to_string(&r).unwrap();
        let back: ProbeResult = serde_json::from_str(&text).unwrap();
        assert_eq!(back.points[0].median["msgs_per_s"], json!(3.0));
        assert_eq!(back.points[0].runs[1]["msgs_per_s"], json!(4.0));
        assert_eq!(back.broker.kind, BrokerKind::External);
        // A document of a kgap before the preflight reads as one that did not measure it.
        assert!(!text.contains("preflight"));
        assert_eq!(back.preflight, None);
        let mut with = back.clone();
        with.preflight = Some(Preflight {
            method: "30 brokers-only Metadata requests".into(),
            address: "127.0.0.1:9092".into(),
            address_kind: "loopback".into(),
            expected_max_ms: Some(1.0),
            reps: vec![PreflightRep {
                rep: 1,
                samples: 30,
                rtt_ms_min: 0.2,
                rtt_ms_median: 0.3,
                rtt_ms_max: 0.9,
            }],
            warning: None,
            wakeup: Some(Wakeup {
                from_cpu: 1,
                to_cpu: 0,
                samples: 500,
                gap_ms: 1.0,
                us_p50: 42.1,
                us_p99: 202.4,
                us_max: 806.7,
            }),
        });
        let again: ProbeResult =
            serde_json::from_str(&serde_json::to_string(&with).unwrap()).unwrap();
        assert_eq!(again.preflight, with.preflight);
    }
}
