//! A finding of the post and what it is made of: which client it is about, how a probe
//! reproduces it, and the analyzer diagnoses and probe verdicts that are evidence for it.

use serde::Serialize;

/// Which client a finding is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Side {
    Librdkafka,
    Java,
    /// A difference between the two clients, not a fault of either.
    Both,
    /// The benchmark's own code (a harness bug).
    Harness,
}

/// How a probe reproduces a finding.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Reproduce {
    /// The probe binary.
    pub probe: &'static str,
    /// False for probes that are planned but not in the project yet.
    pub exists: bool,
    /// The command line.
    pub command: &'static str,
}

/// How strongly an analyzer's diagnosis speaks for a finding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Strength {
    /// The analyzer's rule is the finding's mechanism (e.g. `Fetch backoff … Queue full`).
    Direct,
    /// Consistent with the finding, but other causes give the same sign (a saturated
    /// thread, small requests in statistics).
    Indirect,
}

/// Which artifacts a catalogue source's diagnosis is read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Scope {
    /// A Kafka client's by nature (librdkafka's log lines and statistics, a probe's
    /// result, a thread named by librdkafka or kafka-clients).
    KafkaClient,
    /// Any JVM's or process's (GC logs, JFR, the CPU of threads with generic names).
    AnyProcess,
}

/// An analyzer diagnosis (or probe verdict) id that is evidence for a finding.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Source {
    /// The diagnosis id as the analyzer emits it, or a probe's verdict `finding`.
    pub id: &'static str,
    /// Who emits it (`analyze-fetch-log`, `analyze-stats`, `probe-fetch-backoff`, …): the
    /// same id can be direct from one analyzer and indirect from another.
    pub source: &'static str,
    /// For ids used with several meanings (analyze-jfr's `fixed-socket-buffer`), the
    /// evidence field `op` it must carry.
    pub op: Option<&'static str>,
    pub strength: Strength,
    /// Which artifacts it is read from: a Kafka client's by nature, or any process's (then
    /// filed under the finding only with Kafka evidence: `scope::filing`).
    pub scope: Scope,
}

/// One finding of the post.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Finding {
    /// Stable id (kebab-case); probes use the same ids in their verdicts where they exist.
    pub id: &'static str,
    pub title: &'static str,
    pub side: Side,
    /// The post's headline figure in one line (beside every verdict and in summaries).
    pub post: &'static str,
    /// What the post claims, with its figures quoted.
    pub claim: &'static str,
    /// The cause, in the post's terms.
    pub cause: &'static str,
    /// The fix the post found.
    pub fix: &'static str,
    pub reproduce: Reproduce,
    /// What a reproduction should show.
    pub expected_shape: &'static str,
    /// The rule (see [`rules`]) in words.
    pub rule: &'static str,
    /// The name of the function in [`rules`] that decides it.
    pub rule_fn: &'static str,
    /// Analyzer diagnoses and probe verdicts that are evidence for it.
    pub sources: &'static [Source],
}

pub(crate) const fn direct(id: &'static str, source: &'static str) -> Source {
    Source {
        id,
        source,
        op: None,
        strength: Strength::Direct,
        scope: Scope::KafkaClient,
    }
}

pub(crate) const fn indirect(id: &'static str, source: &'static str) -> Source {
    Source {
        id,
        source,
        op: None,
        strength: Strength::Indirect,
        scope: Scope::KafkaClient,
    }
}

impl Source {
    /// Read from artifacts any JVM or process leaves (a GC log, a JFR recording, the CPU of
    /// threads with generic names).
    pub(crate) const fn any_process(self) -> Source {
        Source {
            scope: Scope::AnyProcess,
            ..self
        }
    }
}
