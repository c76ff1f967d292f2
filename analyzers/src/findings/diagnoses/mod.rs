//! The analyzers' own diagnoses, in the catalogue beside the post's findings: each with its
//! id, its level, the artifacts it may be read from, its rule in words and the thresholds it
//! judges by, named once here. The analyzers read and accumulate typed evidence and call the
//! functions of these files; a threshold changed here is changed in every tool.
//!
//! One file (or folder) per analyzer. Each holds its `pub const` thresholds, the functions
//! that turn the analyzer's evidence into [`Diagnosis`]es (through [`DiagnosisRule::emit`], so
//! an id cannot be made up elsewhere), and `RULES`, its entries of [`DIAGNOSES`].

use serde::Serialize;

pub use super::finding::Scope;
use crate::vocab::report::{Diagnosis, ExampleLine};

/// How much a diagnosis says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Level {
    /// A problem with a cause and a fix.
    Problem,
    /// Worth knowing, not a gap on its own (a warning, a hint, a figure out of the usual).
    Note,
    /// Looked, and found no problem in what was read (never from a cut or short input).
    AllClear,
    /// Too little read to decide: says what was read and what is missing.
    Refusal,
}

/// One threshold a rule judges by, with where its value comes from.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Threshold {
    /// The constant's name in its file (`QUEUE_BACKOFF_FRACTION`).
    pub name: &'static str,
    pub value: f64,
    /// Its unit in words (`share of the window`, `ms`, `cores`).
    pub unit: &'static str,
    /// The post's figure or the reasoned margin it comes from.
    pub source: &'static str,
}

/// One diagnosis an analyzer can make.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct DiagnosisRule {
    /// The id users script against (`fetch-queue-backoff`).
    pub id: &'static str,
    /// The analyzer that makes it (`analyze-fetch-log`).
    pub analyzer: &'static str,
    pub level: Level,
    /// The artifacts it is read from: a Kafka client's by nature, or any process's.
    pub scope: Scope,
    /// The rule in words, with its thresholds.
    pub rule: &'static str,
    pub thresholds: &'static [Threshold],
}

impl DiagnosisRule {
    /// The diagnosis of this rule, with what the evidence showed.
    pub fn emit(
        &self,
        title: String,
        evidence: serde_json::Value,
        cause: String,
        fix: String,
        examples: Vec<ExampleLine>,
    ) -> Diagnosis {
        Diagnosis {
            id: self.id.to_string(),
            title,
            evidence,
            cause,
            fix,
            examples,
        }
    }
}

/// Every analyzer's diagnoses, analyzer by analyzer.
pub const DIAGNOSES: &[&[DiagnosisRule]] = &[];

/// The rule of diagnosis `id` made by `analyzer`.
pub fn rule(id: &str, analyzer: &str) -> Option<&'static DiagnosisRule> {
    all().find(|r| r.id == id && r.analyzer == analyzer)
}

/// Every rule, in catalogue order.
pub fn all() -> impl Iterator<Item = &'static DiagnosisRule> {
    DIAGNOSES.iter().flat_map(|rules| rules.iter())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_analyzer_names_an_id_once_and_every_threshold_has_its_source() {
        let rules: Vec<_> = all().collect();
        for (i, r) in rules.iter().enumerate() {
            assert!(
                rules[i + 1..]
                    .iter()
                    .all(|s| !(s.id == r.id && s.analyzer == r.analyzer)),
                "{} {}",
                r.analyzer,
                r.id
            );
            assert!(r.analyzer.starts_with("analyze-"), "{}", r.analyzer);
            assert!(!r.rule.is_empty(), "{}", r.id);
            for t in r.thresholds {
                assert!(!t.source.is_empty() && !t.unit.is_empty(), "{}", t.name);
            }
        }
    }
}
