//! A verdict: what a finding's rule decided from typed evidence, and why.
//!
//! A rule states the finding's mechanism as a list of [`Check`]s, each a condition the
//! evidence must meet. The outcome follows from them and from nothing else:
//! - **HOLDS** when every check passed;
//! - **DOES NOT HOLD** when a check failed on measured evidence (the first failed check is
//!   the reason);
//! - **CANNOT TELL** when no check failed but one could not be decided: not measured, too
//!   few reps, ranges that overlap, a CPU-bound client (the first such check is the reason,
//!   and it names what would decide it).
//!
//! A wrong HOLDS is the worst bug kgap can have, so a check that is not measured never
//! passes.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt;

/// The three answers a rule can give.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    Holds,
    DoesNotHold,
    CannotTell,
}

impl Outcome {
    /// `HOLDS`, `DOES NOT HOLD`, `CANNOT TELL`: how every report prints it.
    pub fn label(self) -> &'static str {
        match self {
            Outcome::Holds => "HOLDS",
            Outcome::DoesNotHold => "DOES NOT HOLD",
            Outcome::CannotTell => "CANNOT TELL",
        }
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// The state of one condition of a rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CheckState {
    Passed,
    Failed,
    /// Not decidable from this evidence (not measured, too few reps, ranges overlap, …).
    Undecided,
}

/// One condition of a rule, with what the evidence showed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Check {
    /// The condition in the post's terms ("the fetcher backs off on a full local queue").
    pub condition: String,
    pub state: CheckState,
    /// What the evidence showed, with the numbers and their units.
    pub detail: String,
}

impl Check {
    pub fn passed(condition: impl Into<String>, detail: impl Into<String>) -> Check {
        Check::new(condition, CheckState::Passed, detail)
    }

    pub fn failed(condition: impl Into<String>, detail: impl Into<String>) -> Check {
        Check::new(condition, CheckState::Failed, detail)
    }

    pub fn undecided(condition: impl Into<String>, detail: impl Into<String>) -> Check {
        Check::new(condition, CheckState::Undecided, detail)
    }

    /// Passed or failed by `ok`.
    pub fn test(ok: bool, condition: impl Into<String>, detail: impl Into<String>) -> Check {
        let state = if ok {
            CheckState::Passed
        } else {
            CheckState::Failed
        };
        Check::new(condition, state, detail)
    }

    pub fn new(
        condition: impl Into<String>,
        state: CheckState,
        detail: impl Into<String>,
    ) -> Check {
        Check {
            condition: condition.into(),
            state,
            detail: detail.into(),
        }
    }

    /// `✓`, `✗` or `?`: the mark a text report puts before the check.
    pub fn mark(&self) -> &'static str {
        match self.state {
            CheckState::Passed => "✓",
            CheckState::Failed => "✗",
            CheckState::Undecided => "?",
        }
    }
}

/// What a finding's rule decided.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    /// The catalogue id of the finding ([`super::CATALOGUE`]).
    pub finding: String,
    pub outcome: Outcome,
    /// Why, in one or two sentences in the post's terms, with the numbers.
    pub reason: String,
    /// Every condition of the rule and what the evidence showed.
    pub checks: Vec<Check>,
    /// The post's own figure for this finding, to read beside ours.
    pub post: String,
    /// The fix the post found (shown when the finding holds).
    pub fix: String,
    /// The typed evidence the rule was given.
    pub evidence: Value,
    /// Things a reader should know: outliers, a shared core, a short window.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

impl Verdict {
    /// The verdict the checks give: see the module doc. `holds_reason` is the sentence a
    /// HOLDS carries (the mechanism, in the post's terms); the other outcomes take the
    /// first check that failed or could not be decided.
    pub fn from_checks(
        finding: &super::finding::Finding,
        checks: Vec<Check>,
        evidence: &impl Serialize,
        holds_reason: impl FnOnce() -> String,
    ) -> Verdict {
        let failed = checks.iter().find(|c| c.state == CheckState::Failed);
        let undecided = checks.iter().find(|c| c.state == CheckState::Undecided);
        let (outcome, reason) = match (failed, undecided) {
            (Some(c), _) => (
                Outcome::DoesNotHold,
                format!("{}: {}", c.condition, c.detail),
            ),
            (None, Some(c)) => (
                Outcome::CannotTell,
                format!("{}: {}", c.condition, c.detail),
            ),
            (None, None) if checks.is_empty() => (
                Outcome::CannotTell,
                "the rule was given no evidence".to_string(),
            ),
            (None, None) => (Outcome::Holds, holds_reason()),
        };
        Verdict {
            finding: finding.id.to_string(),
            outcome,
            reason,
            checks,
            post: finding.post.to_string(),
            fix: finding.fix.to_string(),
            evidence: serde_json::to_value(evidence).unwrap_or(Value::Null),
            warnings: Vec::new(),
        }
    }

    /// A verdict that cannot be reached at all (nothing was measured).
    pub fn cannot_tell(finding: &super::finding::Finding, reason: impl Into<String>) -> Verdict {
        Verdict {
            finding: finding.id.to_string(),
            outcome: Outcome::CannotTell,
            reason: reason.into(),
            checks: Vec::new(),
            post: finding.post.to_string(),
            fix: finding.fix.to_string(),
            evidence: Value::Null,
            warnings: Vec::new(),
        }
    }

    pub fn holds(&self) -> bool {
        self.outcome == Outcome::Holds
    }

    pub fn with_warnings(mut self, warnings: impl IntoIterator<Item = String>) -> Verdict {
        self.warnings.extend(warnings);
        self
    }

    /// The verdict as every text report prints it: the outcome and reason, each check with
    /// its mark, the post's figure, the fix when it holds, the warnings. Fits 80 columns.
    pub fn render(&self) -> String {
        use crate::vocab::report::wrap_into;
        let mut out = String::new();
        out.push_str(&format!(
            "verdict {}: {}\n",
            self.finding,
            self.outcome.label()
        ));
        // A HOLDS says its mechanism in a sentence; otherwise the failed or undecided
        // check below is the reason, and is not said twice.
        if self.holds() || self.checks.is_empty() {
            wrap_into(&mut out, "  ", &self.reason);
        }
        for c in &self.checks {
            wrap_into(
                &mut out,
                &format!("  {} ", c.mark()),
                &format!("{}: {}", c.condition, c.detail),
            );
        }
        wrap_into(&mut out, "  the post: ", &self.post);
        if self.holds() && !self.fix.is_empty() {
            wrap_into(&mut out, "  fix: ", &self.fix);
        }
        for w in &self.warnings {
            wrap_into(&mut out, "  warning: ", w);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finding() -> &'static super::super::Finding {
        super::super::get("fetch-backoff").unwrap()
    }

    #[test]
    fn every_check_passed_holds_with_the_mechanism_sentence() {
        let v = Verdict::from_checks(
            finding(),
            vec![Check::passed("a", "1"), Check::passed("b", "2")],
            &(),
            || "the mechanism".into(),
        );
        assert_eq!(v.outcome, Outcome::Holds);
        assert_eq!(v.reason, "the mechanism");
        assert!(!v.post.is_empty());
    }

    #[test]
    fn a_failed_check_outranks_an_undecided_one() {
        let v = Verdict::from_checks(
            finding(),
            vec![
                Check::undecided("ranges", "overlap"),
                Check::failed("naps", "0 backoffs"),
            ],
            &(),
            || unreachable!(),
        );
        assert_eq!(v.outcome, Outcome::DoesNotHold);
        assert_eq!(v.reason, "naps: 0 backoffs");
    }

    #[test]
    fn an_undecided_check_is_never_a_pass() {
        let v = Verdict::from_checks(
            finding(),
            vec![
                Check::passed("a", "1"),
                Check::undecided("b", "not measured"),
            ],
            &(),
            || unreachable!(),
        );
        assert_eq!(v.outcome, Outcome::CannotTell);
        assert_eq!(v.reason, "b: not measured");
        let empty = Verdict::from_checks(finding(), vec![], &(), || unreachable!());
        assert_eq!(empty.outcome, Outcome::CannotTell);
    }

    #[test]
    fn a_rendered_verdict_shows_every_check_within_80_columns() {
        let v = Verdict::from_checks(
            finding(),
            vec![
                Check::passed(
                    "the fetcher backs off on a full local queue",
                    "12 backoffs ".repeat(12),
                ),
                Check::undecided("10 ms reads faster", "ranges overlap"),
            ],
            &(),
            || unreachable!(),
        );
        let text = v.render();
        assert!(
            text.starts_with("verdict fetch-backoff: CANNOT TELL\n  ✓ the fetcher"),
            "{text}"
        );
        assert_eq!(text.matches("ranges overlap").count(), 1, "{text}");
        assert!(
            text.contains("  ✓ the fetcher") && text.contains("  ? 10 ms"),
            "{text}"
        );
        assert!(text.contains("the post: "));
        assert!(!text.contains("fix:"), "a fix is shown only when it holds");
        assert!(text.lines().all(|l| l.chars().count() <= 80), "{text}");
    }

    #[test]
    fn outcomes_serialize_in_kebab_case() {
        assert_eq!(
            serde_json::to_value(Outcome::DoesNotHold).unwrap(),
            "does-not-hold"
        );
        assert_eq!(Outcome::CannotTell.label(), "CANNOT TELL");
    }
}
