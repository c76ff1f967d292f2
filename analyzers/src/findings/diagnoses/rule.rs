//! What the catalogue says of one diagnosis: its level, its thresholds with their sources,
//! and the rule that makes it. Apart from `mod.rs` so that each analyzer's file can name
//! these types without importing the folder's front door, which imports it.

use serde::Serialize;

pub use crate::findings::finding::Scope;
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
