//! The analyzers' own diagnoses, in the catalogue beside the post's findings: each with its
//! id, its level, the artifacts it may be read from, its rule in words and the thresholds it
//! judges by, named once here. The analyzers read and accumulate typed evidence and call the
//! functions of these files; a threshold changed here is changed in every tool.
//!
//! One file (or folder) per analyzer. Each holds its `pub const` thresholds, the functions
//! that turn the analyzer's evidence into diagnoses (through [`DiagnosisRule::emit`], so an
//! id cannot be made up elsewhere), and `RULES`, its entries of [`DIAGNOSES`]. The rule's
//! types are in `rule.rs`, which those files use (not this front door, which uses them).

pub mod fetch_log;
pub mod gc;
pub mod jfr;
pub mod protocol_log;
pub mod rule;
pub mod stats;
pub mod thread_cpu;

pub use rule::{DiagnosisRule, Level, Scope, Threshold};

/// Every analyzer's diagnoses, analyzer by analyzer.
pub const DIAGNOSES: &[&[DiagnosisRule]] = &[
    fetch_log::RULES,
    gc::RULES,
    jfr::RULES,
    protocol_log::RULES,
    stats::RULES,
    thread_cpu::RULES,
];

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
