//! gap-report's page (`gap-report DIR --html FILE`): each finding of the post that shows,
//! first, with how sure the report is and why, the post's figure beside what the files
//! show, the fix, and its evidence a click away (numbers, the window, example lines, the
//! charts of the files it came from); then what was looked for and not found, the other
//! diagnoses, and every file with what became of it. Built from the typed [`GapReport`].

use maud::{html, Markup};
use serde_json::Value;

use super::environment::Environment;
use super::page::{self, plural};
use super::sorting::SORTABLE;
use crate::findings::Strength;
use crate::gap_report::{window_text, Chart, Gap, GapReport, Signal};
use crate::vocab::host::Host;

/// The page of `r`, read on `host` (the machine gap-report runs on: its facts are the
/// reading's, the captures may come from another).
pub(crate) fn render(r: &GapReport, host: &Host) -> String {
    let title = format!(
        "gap-report: {}: {} gap{} found",
        r.dir,
        r.gaps.len(),
        plural(r.gaps.len())
    );
    // Charts sit with the gap whose evidence file they were drawn from.
    let charts_of = |g: &Gap| -> Vec<&Chart> {
        r.charts
            .iter()
            .filter(|c| g.signals.iter().any(|s| s.file == c.source))
            .collect()
    };
    let unused = r.files_seen - r.files_used;
    let body = html! {
        header {
            h1 { "gap-report: " code { (r.dir) } }
            p class="lead" {
                (r.files_seen) " files, " (r.files_used) " used, " (unused) " not used. "
                "Which of the post's findings do these captures show?"
            }
        }
        @if r.files_seen > 0 && r.files_used == 0 {
            p class="card cannot-tell" {
                "None of these files is something gap-report reads (librdkafka debug logs, \
                 statistics JSON, JVM GC logs, JFR recordings or exports, thread-CPU \
                 recordings, probe results): no gap can be looked for. Why each file was not \
                 used is listed below."
            }
        }
        h2 { "Gaps found: " (r.gaps.len()) }
        @if r.gaps.is_empty() && r.files_used > 0 {
            p { "None of the post's findings shows in these files." }
        }
        @for g in &r.gaps { (gap(g, &charts_of(g))) }
        h2 { "Looked for, not found: " (r.not_found.len()) }
        @if !r.not_found.is_empty() {
            div class="scroll" {
                table class=(SORTABLE) {
                    thead { tr { th { "finding" } th { "result" } th { "reproduce it instead" } } }
                    tbody {
                        @for n in &r.not_found {
                            tr {
                                td { (n.title) br; code { (n.finding) } }
                                td {
                                    (n.result)
                                    @for v in &n.probe_verdicts { br; "probe: " (v) }
                                }
                                td { code { (n.reproduce) } }
                            }
                        }
                    }
                }
            }
        }
        @if !r.other_diagnoses.is_empty() {
            h2 { "Other diagnoses (not findings of the post): " (r.other_diagnoses.len()) }
            @for s in &r.other_diagnoses {
                div class="card info" {
                    div class="head" { h3 { (s.title) } code { (s.id) } }
                    @if let Some(q) = &s.question { p { span class="label" { "Might be:" } (q) } }
                    (signal_body(s))
                }
            }
        }
        h2 { "Files" }
        div class="scroll" {
            table class=(SORTABLE) {
                thead { tr { th { "file" } th { "kind" } th { "used" } th { "what was read, or why not" } } }
                tbody {
                    @for f in &r.files {
                        tr {
                            td class="mono" { (f.path) }
                            td { (f.kind) @if f.gzip { " (gzip)" } }
                            td { @if f.used { "yes" } @else { "no" } }
                            td {
                                @if let Some(why) = &f.reason { (why) } @else { (f.summary) }
                                @if !f.diagnoses.is_empty() {
                                    br; small { "diagnoses: " (f.diagnoses.join(", ")) }
                                }
                            }
                        }
                    }
                }
            }
        }
        (environment(r, host).render())
        (page::footer("gap-report"))
    };
    page::document(&title, body)
}

/// One gap: the finding and how sure, the post beside the files, the fix, the evidence.
fn gap(g: &Gap, charts: &[&Chart]) -> Markup {
    let conf = g.confidence.as_str();
    html! {
        div class={"card " (conf)} id={"gap-" (g.finding)} {
            div class="head" {
                span class={"badge " (conf)} { "FOUND · confidence " (conf) }
                h3 { (g.title) }
                code { (g.finding) }
            }
            p { span class="label" { "Why this confidence:" } (g.confidence_why) }
            div class="side" {
                div { span class="label" { "The post:" } (g.post) }
                div {
                    span class="label" { "These files:" }
                    @if let Some(first) = g.signals.first() {
                        (first.title) " (" span class="mono" { (first.file) } ")"
                        @if g.signals.len() > 1 {
                            "; and " (g.signals.len() - 1) " more signal"
                            (plural(g.signals.len() - 1)) " in the evidence below"
                        }
                    }
                }
            }
            p { span class="label" { "Cause:" } (g.cause) }
            p { span class="label" { "Fix:" } (g.fix) }
            @for a in &g.against { p class="warn" { span class="label" { "Against:" } (a) } }
            details {
                summary {
                    "Evidence: " (g.signals.len()) " signal" (plural(g.signals.len()))
                    @if !charts.is_empty() { ", " (charts.len()) " chart" (plural(charts.len())) }
                }
                @for (i, s) in g.signals.iter().enumerate() {
                    h3 { span class="mono" { (s.file) } }
                    p {
                        (s.source) " " code { (s.id) } ", " (strength_words(s.strength)) ": "
                        (s.title)
                    }
                    (signal_body(s))
                    // A file's charts once, under its first signal.
                    @for c in charts.iter().filter(|c| {
                        c.source == s.file && !g.signals[..i].iter().any(|e| e.file == s.file)
                    }) {
                        // Its title names the file it was drawn from.
                        (page::chart(&c.file, &c.title, &c.svg))
                    }
                }
            }
            p { span class="label" { "Reproduce:" } code { (g.reproduce) } }
        }
    }
}

/// Where the files were read: this machine's facts (the captures may come from another),
/// the brokers of the folder's probe results, the folder.
fn environment(r: &GapReport, host: &Host) -> Environment {
    Environment {
        note: Some(
            "The machine is the one that read the files; the captures may come from another.",
        ),
        broker: (!r.brokers.is_empty()).then(|| r.brokers.join("; ")),
        kgap: Some(format!("{} (gap-report)", env!("CARGO_PKG_VERSION"))),
        more: vec![
            ("folder", r.dir.clone()),
            (
                "files",
                format!("{} seen, {} used", r.files_seen, r.files_used),
            ),
        ],
        ..Environment::default()
    }
    .on(host, "when gap-report read the files")
}

fn strength_words(s: Option<Strength>) -> &'static str {
    match s {
        Some(Strength::Direct) => "direct evidence",
        Some(Strength::Indirect) => "indirect evidence",
        None => "outside the catalogue",
    }
}

/// A signal's window, numbers and example lines.
fn signal_body(s: &Signal) -> Markup {
    let scalars: Vec<(&String, &Value)> = s
        .evidence
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(_, v)| !v.is_object() && !v.is_array() && !v.is_null())
        .collect();
    html! {
        @if let Some(w) = &s.window { p { span class="label" { "Window:" } (window_text(w)) } }
        @if !scalars.is_empty() {
            div class="scroll" {
                table {
                    @for (k, v) in &scalars {
                        tr {
                            th scope="row" class="mono" { (k) }
                            td class="num" {
                                @match v { Value::String(t) => { (t) }, other => { (other.to_string()) } }
                            }
                        }
                    }
                }
            }
        }
        @if !s.cause.is_empty() { p { span class="label" { "Cause:" } (s.cause) } }
        @if !s.fix.is_empty() { p { span class="label" { "Fix:" } (s.fix) } }
        @if !s.examples.is_empty() {
            p class="label" { "Lines that show it:" }
            pre {
                @for e in &s.examples { (e.line) ": " (e.text) "\n" }
            }
        }
    }
}
