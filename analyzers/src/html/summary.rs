//! `scripts/reproduce`'s page (`summary.html` beside summary.md and summary.json): one line
//! per finding with its verdict first, then each verdict's checks and the post's figure, the
//! command that reproduces it and a link to its run's own page, and where it all ran.
//! Built from each run's typed result and the catalogue.

use maud::{html, Markup};

use super::page;
use super::probe::outcomes_line;
use crate::findings::reproduce::{Reproduction, Row};
use crate::findings::{self, Outcome};

pub(crate) fn render(rep: &Reproduction) -> String {
    let s = &rep.summary;
    let held = rep
        .summary
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
                (held) " of " (s.findings.len()) " finding" (if s.findings.len() == 1 { "" } else { "s" })
                " hold on this machine. " (s.reps) " rep" (if s.reps == 1 { "" } else { "s" })
                " a point, the run order shuffled; all runs took " (s.seconds) " s."
            }
        }
        h2 { "Verdicts" }
        div class="scroll" {
            table {
                thead { tr { th { "finding" } th { "here" } th { "the post" } th { "seconds" } th { "run" } } }
                tbody {
                    @for r in &s.findings { (row(rep, r)) }
                }
            }
        }
        h2 { "Each finding" }
        @for r in &s.findings { (detail(rep, r)) }
        h2 { "Environment" }
        (page::facts(&environment(rep)))
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
            td {
                @match v {
                    Some(v) => span class={"badge " (page::outcome_class(v.outcome))} { (v.outcome.label()) },
                    None => span class="badge does-not-hold" { (no_verdict(r)) },
                }
            }
            td { @if let Some(v) = v { (v.post) } @else if let Some(f) = findings::get(&r.finding) { (f.post) } }
            td class="num" { @if let Some(secs) = r.seconds { (secs) } }
            td { a href={(r.run) "/report.html"} { (r.run) } }
        }
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
                Some(v) => (page::verdict(v)),
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
                a href={(r.run) "/report.html"} { (r.run) "/report.html" }
                @if let Some(res) = rep.results.get(&r.run) { " — " (res.probe) ": " (outcomes_line(res)) }
            }
            @if let Some(c) = &r.command { pre { code { (c) } } }
        }
    }
}

fn environment(rep: &Reproduction) -> Vec<(&'static str, String)> {
    let s = &rep.summary;
    let first = rep.results.values().next();
    let mut rows = vec![(
        "broker",
        match first.map(|r| &r.broker) {
            Some(b) => match &b.note {
                Some(n) => format!("{}: {n}", b.bootstrap),
                None => format!("Apache Kafka at {}", s.broker),
            },
            None => s.broker.clone(),
        },
    )];
    rows.push(("machine", format!("{} cores", s.machine_cores)));
    if let Some(r) = first {
        rows.push(("cores", r.placement.note.clone()));
    }
    rows.push(("load average at start", s.load_average_at_start.clone()));
    rows.push(("reps", s.reps.to_string()));
    if let Some(r) = first {
        rows.push(("librdkafka", r.librdkafka_version.clone()));
        rows.push(("kgap", r.kgap_version.clone()));
    }
    rows.push(("all runs", format!("{} s", s.seconds)));
    rows
}
