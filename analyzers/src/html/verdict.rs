//! One verdict of the catalogue as a card, the same on a probe's page and on reproduce's:
//! the outcome and the finding first, why, every check of the mechanism with its numbers,
//! the post's figure beside this run's, the fix, the warnings, and how it was decided.

use maud::{html, Markup};

use crate::findings::{self, CheckState, Outcome, Verdict};

/// The class an outcome's card and badge take.
pub(crate) fn outcome_class(o: Outcome) -> &'static str {
    match o {
        Outcome::Holds => "holds",
        Outcome::DoesNotHold => "does-not-hold",
        Outcome::CannotTell => "cannot-tell",
    }
}

fn state_class(s: CheckState) -> &'static str {
    match s {
        CheckState::Passed => "passed",
        CheckState::Failed => "failed",
        CheckState::Undecided => "undecided",
    }
}

/// How a verdict is reached, in one sentence (the rule of [`crate::findings::verdict`]).
const HOW_DECIDED: &str = "HOLDS when every check of the finding's mechanism \
    passed on measured evidence; DOES NOT HOLD when one failed; CANNOT TELL when none failed \
    but one could not be decided (not measured, too few reps, ranges that overlap).";

/// One verdict as a card: the outcome and the finding first, why, then every check with
/// its numbers, the post's figure beside this run's, the fix, the warnings.
pub(crate) fn card(v: &Verdict) -> Markup {
    let f = findings::get(&v.finding);
    let title = f.map_or(v.finding.as_str(), |f| f.title);
    html! {
        div class={"card " (outcome_class(v.outcome))} id={"verdict-" (v.finding)} {
            div class="head" {
                span class="badge" { (v.outcome.label()) }
                h3 { (title) }
                code { (v.finding) }
            }
            p { span class="label" { "Why:" } (v.reason) }
            @if !v.checks.is_empty() {
                ul class="checks" {
                    @for c in &v.checks {
                        li class=(state_class(c.state)) {
                            span class="mark" { (c.mark()) }
                            strong { (c.condition) } ": " (c.detail)
                        }
                    }
                }
            }
            div class="side" {
                div { span class="label" { "The post:" } (v.post) }
                div { span class="label" { "This run:" } (this_run(v)) }
            }
            @if !v.fix.is_empty() {
                p {
                    span class="label" {
                        @if v.holds() { "Fix:" } @else { "The post's fix:" }
                    }
                    (v.fix)
                }
            }
            @for w in &v.warnings {
                p class="warn" { span class="label" { "Warning:" } (w) }
            }
            @if let Some(f) = f {
                details {
                    summary { "How it was decided" }
                    p { (HOW_DECIDED) }
                    p { span class="label" { "The rule:" } (f.rule) }
                    p { span class="label" { "Reproduce:" } code { (f.reproduce.command) } }
                }
            }
        }
    }
}

/// This run's side of the comparison: what each check measured, its numbers (the reason
/// alone when the rule had no checks).
fn this_run(v: &Verdict) -> String {
    if v.checks.is_empty() {
        return v.reason.clone();
    }
    v.checks
        .iter()
        .map(|c| c.detail.as_str())
        .collect::<Vec<_>>()
        .join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::findings::Check;

    #[test]
    fn a_verdicts_words_are_text_and_its_outcome_leads() {
        let f = findings::get("fetch-backoff").unwrap();
        let v = Verdict::from_checks(
            f,
            vec![Check::passed("<script>alert(1)</script>", "a & b")],
            &(),
            || "<img src=x onerror=alert(2)>".into(),
        );
        let card = card(&v).into_string();
        assert!(
            !card.contains("<script>") && !card.contains("<img"),
            "{card}"
        );
        assert!(card.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
        assert!(card.contains("a &amp; b"));
        let badge = card.find(">HOLDS<").expect("the outcome");
        assert!(badge < card.find("Why:").unwrap(), "the outcome first");
    }
}
