//! The -X overrides as every mode's notes list them.

/// The -X overrides, as every mode's notes list them.
pub fn override_notes(overrides: &[(String, String)]) -> Vec<String> {
    overrides
        .iter()
        .map(|(k, v)| format!("-X {k}={v} (applied last to every client)"))
        .collect()
}
