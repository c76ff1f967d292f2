//! `scripts/reproduce`'s page (`summary.html` beside summary.md and summary.json): one line
//! per finding with its verdict first, then each verdict's checks and the post's figure, the
//! command that reproduces it and a link to its run's own page, and where it all ran.
//! Built from each run's typed result and the catalogue.

use maud::{html, Markup};

use super::environment::Environment;
use super::page::{self, plural};
use super::probe::outcomes_line;
use super::sorting::SORTABLE;
use super::verdict;
use crate::findings::reproduce::{Reproduction, Row};
use crate::findings::{self, Outcome};

pub(crate) fn render(rep: &Reproduction) -> String {
    let s = &rep.summary;
    let held = s
        .findings
        .iter()
        .filter(|r| rep.verdict(r).is_some_and(|v| v.outcome == Outcome::Holds))
        .count();
    let title = format!(
        "kgap reproduce {}: {held} of {} hold",
        rep.name,
        s.findings.len()
    );
    let body = html! {
        header {
            h1 { "kgap reproduce: " (rep.name) }
            p class="lead" {
                (held) " of " (s.findings.len()) " finding" (plural(s.findings.len()))
                " hold on this machine. " (s.reps) " rep" (plural(s.reps as usize))
                " a point, the run order shuffled; all runs took " (s.seconds) " s."
            }
        }
        h2 { "Verdicts" }
        div class="scroll" {
            table class=(SORTABLE) {
                thead { tr { th { "finding" } th { "here" } th { "the post" } th { "seconds" } th { "run" } } }
                tbody {
                    @for r in &s.findings { (row(rep, r)) }
                }
            }
        }
        h2 { "Each finding" }
        @for r in &s.findings { (detail(rep, r)) }
        (environment(rep).render())
        (page::footer("scripts/reproduce"))
    };
    page::document(&title, body)
}

fn title_of(r: &Row) -> &str {
    findings::get(&r.finding).map_or(r.finding.as_str(), |f| f.title)
}

fn row(rep: &Reproduction, r: &Row) -> Markup {
    let v = rep.verdict(r);
    html! {
        tr {
            td { a href={"#finding-" (r.finding)} { (title_of(r)) } br; code { (r.finding) } }
            td data-sort=(outcome_rank(v.map(|v| v.outcome))) {
                @match v {
                    Some(v) => span class={"badge " (verdict::outcome_class(v.outcome))} { (v.outcome.label()) },
                    None => span class="badge does-not-hold" { (no_verdict(r)) },
                }
            }
            td { @if let Some(v) = v { (v.post) } @else if let Some(f) = findings::get(&r.finding) { (f.post) } }
            td class="num" data-sort=[r.seconds] { @if let Some(secs) = r.seconds { (secs) } }
            td { @match run_page(r) { Some(href) => a href=(href) { (r.run) }, None => (r.run) } }
        }
    }
}

/// The run's own page, `RUN/report.html`, beside the summary; no link when the run's name
/// (read from summary.json) is not a plain folder below it: a `javascript:` or absolute URL
/// is never made a link.
fn run_page(r: &Row) -> Option<String> {
    let plain = !r.run.is_empty()
        && !r.run.starts_with('/')
        && r.run
            .chars()
            .all(|c| c.is_alphanumeric() || "-_./".contains(c))
        && !r.run.split('/').any(|part| part == "..");
    plain.then(|| format!("{}/report.html", r.run))
}

/// A verdict's place when the table is sorted by it: held first, no verdict last.
fn outcome_rank(o: Option<Outcome>) -> u8 {
    match o {
        Some(Outcome::Holds) => 0,
        Some(Outcome::CannotTell) => 1,
        Some(Outcome::DoesNotHold) => 2,
        None => 3,
    }
}

fn no_verdict(r: &Row) -> &'static str {
    match r.exit {
        Some(0) | Some(130) => "NO VERDICT",
        _ => "FAILED",
    }
}

fn detail(rep: &Reproduction, r: &Row) -> Markup {
    html! {
        section id={"finding-" (r.finding)} {
            @match rep.verdict(r) {
                Some(v) => (verdict::card(v)),
                None => div class="card does-not-hold" {
                    div class="head" {
                        span class="badge" { (no_verdict(r)) }
                        h3 { (title_of(r)) }
                        code { (r.finding) }
                    }
                    p {
                        @if let Some(e) = rep.unreadable.get(&r.run) { (e) }
                        @if let Some(code) = r.exit { " (the probe exited " (code) "; its stderr is in " code { (r.run) "/probe.stderr" } ")" }
                    }
                },
            }
            p {
                span class="label" { "Run:" }
                @match run_page(r) {
                    Some(href) => a href=(href) { (href) },
                    None => (r.run),
                }
                @if let Some(res) = rep.results.get(&r.run) { " — " (res.probe) ": " (outcomes_line(res)) }
            }
            @if let Some(c) = &r.command { pre { code { (c) } } }
        }
    }
}

/// Where the runs were made, as scripts/reproduce recorded it (its summary.json and the
/// runs' results): the machine showing the page may be another.
fn environment(rep: &Reproduction) -> Environment {
    let s = &rep.summary;
    let first = rep.results.values().next();
    Environment {
        broker: Some(match first {
            Some(r) => r.broker.describe(),
            None => s.broker.clone(),
        }),
        cores: Some(match first {
            Some(r) => format!("{} on this machine; {}", s.machine_cores, r.placement.note),
            None => format!("{} on this machine", s.machine_cores),
        }),
        load_average: Some(format!(
            "{} (1, 5, 15 min; at the start of the runs)",
            s.load_average_at_start
        )),
        librdkafka: first.map(|r| r.librdkafka_version.clone()),
        kgap: first.map(|r| r.kgap_version.clone()),
        more: vec![
            ("reps", s.reps.to_string()),
            ("all runs", format!("{} s", s.seconds)),
        ],
        ..Environment::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_is_linked_only_as_a_folder_beside_the_summary() {
        let row = |run: &str| -> Row {
            serde_json::from_value(serde_json::json!({"finding": "fetch-backoff", "run": run}))
                .unwrap()
        };
        assert_eq!(
            run_page(&row("fetch-backoff")).as_deref(),
            Some("fetch-backoff/report.html")
        );
        for bad in ["javascript:alert(1)//", "/etc", "../elsewhere", "a b", ""] {
            assert_eq!(run_page(&row(bad)), None, "{bad}");
        }
    }
}
