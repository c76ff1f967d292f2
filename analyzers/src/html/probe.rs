//! A probe's page (`report.html` in its out dir, `--html FILE`): the verdicts first, the
//! charts beside the points' numbers (every figure's median with its min–max over the
//! reps), then what weakens them, what was not measured, how to reproduce it and where it
//! ran. Built from the run's [`ProbeResult`], never from its text report.

use maud::{html, Markup};
use serde_json::Value;

use super::environment::Environment;
use super::page::{self, plural};
use super::verdict;
use crate::findings::probe_result::{Point, ProbeResult};
use crate::vocab::host::Host;
use crate::vocab::svg::LineChart;

/// What the page is made of: the typed result, and what the probe's kit adds to it.
pub struct ProbePage<'a> {
    pub result: &'a ProbeResult<Value>,
    /// What one run is (`2000000 × 100 B messages per run`).
    pub headline: &'a str,
    /// The probe's charts, each with the file name it is also written as.
    pub charts: &'a [(String, LineChart)],
    /// The probe's own tables as its text report prints them (folded away).
    pub tables: &'a str,
    /// The command line that made it, secrets redacted.
    pub command: Option<&'a str>,
    /// Facts the kit measured around the runs (the preflight, the noise beside them).
    pub environment: Vec<(&'static str, String)>,
    /// The machine that ran the probe, when the page is made there, right after the runs
    /// (a page re-made later from a stored result has none: the result records only its
    /// cores).
    pub host: Option<&'a Host>,
}

pub(crate) fn render(p: &ProbePage) -> String {
    let r = p.result;
    let title = format!("{}: {}", r.probe, outcomes_line(r));
    let body = html! {
        header {
            h1 { (r.probe) }
            p class="lead" {
                (p.headline) ", " (r.points.len()) " point" (plural(r.points.len())) " × "
                (r.reps) " rep" (plural(r.reps as usize)) ", librdkafka " (r.librdkafka_version)
                " — " (r.broker.describe())
            }
        }
        @if r.interrupted {
            p class="card cannot-tell" { "Interrupted: what follows is the runs completed before the signal." }
        }
        @if let Some(f) = &r.failed {
            p class="card does-not-hold" { "The sweep ended early: " (f) }
        }
        h2 { "Verdicts" }
        @if r.verdicts.is_empty() {
            p { "This sweep decides no finding of the catalogue: its numbers are below." }
        }
        @for v in &r.verdicts { (verdict::card(v)) }
        h2 { "The points" }
        @for (name, chart) in p.charts {
            (page::chart(name, &chart.title, &chart.render()))
        }
        (points_table(&r.points))
        @if !p.tables.trim().is_empty() {
            details {
                summary { "The probe's tables, as its text report prints them" }
                pre { (p.tables) }
            }
        }
        (page::list("Warnings", &r.warnings, Some("warn")))
        @if !r.discarded.is_empty() {
            h2 { "Runs set aside" }
            ul { @for d in &r.discarded { li { (d.reason) } } }
        }
        (page::list("Notes", &r.notes, None))
        (diagnoses(&r.diagnoses))
        (page::list("Not measured", &r.not_measured, None))
        h2 { "Reproduce" }
        @if let Some(c) = p.command { pre { code { (c) } } }
        p {
            "Run order: reps outermost, points shuffled from seed " code { (r.order.seed) }
            " (" code { "--seed " (r.order.seed) } " replays it)."
        }
        (environment(p).render())
        (page::footer(&r.probe))
    };
    page::document(&title, body)
}

/// `fetch-backoff HOLDS, …` for the page's title.
pub(crate) fn outcomes_line<F>(r: &ProbeResult<F>) -> String {
    if r.verdicts.is_empty() {
        return "no verdict".into();
    }
    r.verdicts
        .iter()
        .map(|v| format!("{} {}", v.finding, v.outcome.label()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Where it ran: the broker, the cores and where the client ran on them, the versions,
/// this machine's facts when the page is made where it ran, then the kit's measurements
/// around the runs, the payload, the topics and the reps.
fn environment(p: &ProbePage) -> Environment {
    let r = p.result;
    let mut more = p.environment.clone();
    if let Some(pl) = &r.payload {
        more.push((
            "payload",
            format!(
                "{} × {} B {}, sha256 {}",
                pl.pool_count, pl.size_bytes, pl.kind, pl.sha256
            ),
        ));
    }
    if !r.topics.is_empty() {
        more.push(("topics (created and deleted)", r.topics.join(", ")));
    }
    more.push(("reps", r.reps.to_string()));
    let env = Environment {
        broker: Some(r.broker.describe()),
        cores: Some(format!(
            "{} on this machine; client on {:?}; {}",
            r.placement.machine_cores, r.placement.client_cpus, r.placement.note
        )),
        librdkafka: Some(r.librdkafka_version.clone()),
        kgap: Some(r.kgap_version.clone()),
        more,
        ..Environment::default()
    };
    match p.host {
        Some(h) => env.on(h, "when the page was written, after the runs"),
        None => env,
    }
}

/// Every numeric figure (rows) at every point (columns): the median, and the min–max over
/// the reps under it, as the verdicts read a difference. Not sortable: its rows are
/// different figures in different units, so no column orders them meaningfully.
fn points_table(points: &[Point<Value>]) -> Markup {
    let mut keys: Vec<&str> = Vec::new();
    for p in points {
        for (k, v) in &p.median {
            if v.is_number() && !keys.contains(&k.as_str()) {
                keys.push(k);
            }
        }
    }
    html! {
        div class="scroll" {
            table {
                thead {
                    tr {
                        th { "figure \\ point" }
                        @for p in points {
                            th {
                                (p.label) br;
                                span class="mono" { (p.client.name()) ", " (params(p)) }
                                br; (p.runs.len()) " run" (plural(p.runs.len()))
                            }
                        }
                    }
                }
                tbody {
                    @for k in &keys {
                        tr {
                            th scope="row" class="mono" { (k) }
                            @for p in points {
                                td class="num" {
                                    @if let Some(m) = p.median.get(*k) {
                                        (figure(m))
                                        @if p.runs.len() > 1 {
                                            br;
                                            small { (range(p.min.get(*k), p.max.get(*k))) }
                                        }
                                    } @else { "—" }
                                }
                            }
                        }
                    }
                }
            }
        }
        p class="lead" { small { "Each cell: the median over the point's reps, under it the min–max." } }
    }
}

fn params(p: &Point<Value>) -> String {
    p.params
        .iter()
        .map(|(k, v)| format!("{k}={}", scalar(v)))
        .collect::<Vec<_>>()
        .join(" ")
}

fn scalar(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A figure as the JSON rounds it (three decimals at most, integers whole).
fn figure(v: &Value) -> String {
    match v.as_f64() {
        Some(x) if v.is_f64() => {
            let r = crate::vocab::json_doc::round_figure(x);
            if r.abs() >= 1000.0 {
                format!("{r:.0}")
            } else {
                format!("{r}")
            }
        }
        _ => scalar(v),
    }
}

fn range(lo: Option<&Value>, hi: Option<&Value>) -> String {
    match (lo, hi) {
        (Some(a), Some(b)) => format!("{}–{}", figure(a), figure(b)),
        _ => String::new(),
    }
}

/// What an analyzer read from the probe's own captures.
fn diagnoses(ds: &[Value]) -> Markup {
    html! {
        @if !ds.is_empty() {
            h2 { "What the analyzers read from the probe's own captures" }
            @for d in ds {
                details {
                    summary {
                        (d.get("tool").and_then(Value::as_str).unwrap_or("analyzer"))
                        @if let Some(p) = d.get("point").and_then(Value::as_str) { " — " (p) }
                    }
                    ul {
                        @for x in d.get("diagnoses").and_then(Value::as_array).into_iter().flatten() {
                            li {
                                code { (x.get("id").and_then(Value::as_str).unwrap_or("?")) } " "
                                (x.get("title").and_then(Value::as_str).unwrap_or(""))
                            }
                        }
                    }
                }
            }
        }
    }
}
