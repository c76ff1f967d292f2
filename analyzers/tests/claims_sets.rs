//! scripts/check-claims grades a paste by the levels the catalogue gives its diagnoses: an
//! all-clear or a refusal meets an expected `none`, a refusal an expected `refuse`. Its two
//! sets are written in the script (python, no build); this test fails when they drift from
//! the catalogue's levels.

use kgap_analyzers::findings::diagnoses::{all, Level};
use std::collections::BTreeSet;

/// The ids of a `NAME = {"a", "b", …}` set in the script (it may span lines).
fn python_set(script: &str, name: &str) -> BTreeSet<String> {
    let start = script
        .find(&format!("\n{name} = {{"))
        .unwrap_or_else(|| panic!("{name} not in scripts/check-claims"));
    let body = &script[start..];
    let body = &body[body.find('{').unwrap() + 1..body.find('}').unwrap()];
    body.split(',')
        .map(|s| s.trim().trim_matches('"').to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

#[test]
fn check_claims_grades_by_the_catalogues_levels() {
    let script = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/check-claims"),
    )
    .unwrap();
    let all_clear = python_set(&script, "ALL_CLEAR");
    let too_little = python_set(&script, "TOO_LITTLE");
    for r in all() {
        match r.level {
            Level::AllClear => assert!(
                all_clear.contains(r.id),
                "{} ({}) is an all-clear in the catalogue: add it to check-claims' ALL_CLEAR",
                r.id,
                r.analyzer
            ),
            Level::Refusal => assert!(
                all_clear.contains(r.id) && too_little.contains(r.id),
                "{} ({}) is a refusal in the catalogue: add it to check-claims' ALL_CLEAR and \
                 TOO_LITTLE",
                r.id,
                r.analyzer
            ),
            Level::Problem | Level::Note => assert!(
                !all_clear.contains(r.id) && !too_little.contains(r.id),
                "{} ({}) says something in the catalogue: check-claims must count it as a claim",
                r.id,
                r.analyzer
            ),
        }
    }
}
