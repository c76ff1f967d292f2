//! The exports of a sweep's one typed result: JSON (`result.json`, `--json`), CSV (one row
//! per run), text (`report.txt`, the default stdout), SVG charts and the HTML page
//! (`report.html`, `--html`: the analyzers' [`kgap_analyzers::html`] over the same result). Each is an [`Export`]
//! over the same [`Report`]; the text layout around a probe's own tables (header, verdicts,
//! warnings, what was not measured) is written here once.

use crate::kit::probe::{Probe, Sweep};
use kgap_analyzers::findings::probe_result::{ProbeResult, SCHEMA};
use kgap_analyzers::vocab::host::Host;
use kgap_analyzers::vocab::report::wrap_into;
use kgap_analyzers::vocab::svg::LineChart;
use serde_json::Value;

/// Everything an export needs: the result as a document, the probe's text body and charts.
pub struct Report {
    pub result: ProbeResult<Value>,
    /// The probe's part of the text report.
    pub body: String,
    /// What one run is (`2000000 × 100 B messages per run`).
    pub headline: String,
    pub charts: Vec<(String, LineChart)>,
    /// The command line that ran it, secrets redacted.
    pub command: Option<String>,
    /// The machine that ran it, read when the report is made right after the runs.
    pub host: Option<Host>,
}

impl Report {
    /// The report of a sweep this process ran: its command line, this machine.
    pub fn of<P: Probe>(probe: &P, sweep: &Sweep<P>) -> Report {
        Report::made(
            probe,
            sweep,
            Some(kgap_analyzers::vocab::redact::command_line(std::env::args())),
            Some(Host::read()),
        )
    }

    /// The report of a sweep, with the command that ran it and the machine it ran on when
    /// they are known (a stored result re-made elsewhere knows neither for sure).
    pub fn made<P: Probe>(
        probe: &P,
        sweep: &Sweep<P>,
        command: Option<String>,
        host: Option<Host>,
    ) -> Report {
        Report {
            result: generic(&sweep.result),
            body: probe.render(sweep),
            headline: probe.headline(sweep),
            charts: probe.charts(sweep),
            command,
            host,
        }
    }

    /// The document alone, for the rewrite after every run (no body, no charts).
    pub fn document_only<P: Probe>(sweep: &Sweep<P>) -> Report {
        Report {
            result: generic(&sweep.result),
            body: String::new(),
            headline: String::new(),
            charts: Vec::new(),
            command: None,
            host: None,
        }
    }
}

fn generic<F: serde::Serialize>(r: &ProbeResult<F>) -> ProbeResult<Value> {
    serde_json::from_value(serde_json::to_value(r).expect("result serializes"))
        .expect("a result reads back as a generic one")
}

/// One export of a report: the files it writes (name in the out dir, bytes).
pub trait Export {
    fn files(&self, report: &Report) -> Vec<(String, Vec<u8>)>;
}

pub struct Json;
pub struct Csv;
pub struct Text;
pub struct Svg;
pub struct Html;

impl Export for Json {
    fn files(&self, r: &Report) -> Vec<(String, Vec<u8>)> {
        debug_assert_eq!(r.result.schema, SCHEMA);
        let mut bytes = kgap_analyzers::vocab::json_doc::to_vec_pretty_rounded(&r.result);
        bytes.push(b'\n');
        vec![("result.json".into(), bytes)]
    }
}

impl Export for Csv {
    fn files(&self, r: &Report) -> Vec<(String, Vec<u8>)> {
        vec![("runs.csv".into(), runs_csv(&r.result))]
    }
}

impl Export for Text {
    fn files(&self, r: &Report) -> Vec<(String, Vec<u8>)> {
        vec![("report.txt".into(), text(r).into_bytes())]
    }
}

impl Export for Svg {
    fn files(&self, r: &Report) -> Vec<(String, Vec<u8>)> {
        r.charts
            .iter()
            .map(|(name, chart)| (name.clone(), chart.render().into_bytes()))
            .collect()
    }
}

impl Export for Html {
    fn files(&self, r: &Report) -> Vec<(String, Vec<u8>)> {
        vec![("report.html".into(), html(r).into_bytes())]
    }
}

/// The HTML page: the typed result, the probe's charts and tables, what the kit measured
/// around the runs.
pub fn html(rep: &Report) -> String {
    let r = &rep.result;
    let mut environment = Vec::new();
    if let Some(p) = &r.preflight {
        environment.push(("preflight", super::preflight::line(p)));
        if let Some(w) = &p.wakeup {
            environment.push(("wakeup", super::wakeup::line(w)));
        }
    }
    if let Some(n) = super::noise::summary(&r.noise) {
        environment.push(("beside the runs", n));
    }
    kgap_analyzers::html::probe(&kgap_analyzers::html::ProbePage {
        result: r,
        headline: &rep.headline,
        charts: &rep.charts,
        tables: &rep.body,
        command: rep.command.as_deref(),
        environment,
        host: rep.host.as_ref(),
    })
}

/// One CSV row per run: probe, broker, client, point, rep, the point's params, then every
/// scalar figure of the run.
pub fn runs_csv(r: &ProbeResult<Value>) -> Vec<u8> {
    let mut params: Vec<String> = Vec::new();
    let mut figures: Vec<String> = Vec::new();
    for p in &r.points {
        for k in p.params.keys() {
            if !params.contains(k) {
                params.push(k.clone());
            }
        }
        for run in &p.runs {
            for (k, v) in run.as_object().into_iter().flatten() {
                if (v.is_number() || v.is_string() || v.is_boolean()) && !figures.contains(k) {
                    figures.push(k.clone());
                }
            }
        }
    }
    let mut w = csv::Writer::from_writer(Vec::new());
    let mut header: Vec<String> = ["probe", "broker", "client", "point"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    header.extend(params.iter().cloned());
    header.push("rep".into());
    header.extend(figures.iter().cloned());
    let _ = w.write_record(&header);
    let kind = serde_json::to_value(r.broker.kind)
        .ok()
        .and_then(|v| v.as_str().map(String::from))
        .unwrap_or_default();
    for p in &r.points {
        for (i, run) in p.runs.iter().enumerate() {
            let mut row = vec![
                r.probe.clone(),
                kind.clone(),
                p.client.name().to_string(),
                p.label.clone(),
            ];
            row.extend(
                params
                    .iter()
                    .map(|k| p.params.get(k).map(scalar).unwrap_or_default()),
            );
            row.push((i + 1).to_string());
            row.extend(
                figures
                    .iter()
                    .map(|k| run.get(k).map(scalar).unwrap_or_default()),
            );
            let _ = w.write_record(&row);
        }
    }
    w.into_inner().unwrap_or_default()
}

fn scalar(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        // Figures without float noise (182.82, not 182.82000000000002).
        Value::Number(n) if n.is_f64() => n
            .as_f64()
            .map(|f| Value::from(kgap_analyzers::vocab::json_doc::round_figure(f)).to_string())
            .unwrap_or_default(),
        other => other.to_string(),
    }
}

/// Which broker, with the mock's caveat.
pub fn broker_line(r: &ProbeResult<Value>) -> String {
    match &r.broker.note {
        Some(note) => format!("{} — {}", r.broker.bootstrap, note),
        None => format!("{} (external Kafka cluster)", r.broker.bootstrap),
    }
}

/// The text report: what ran where, the probe's tables, then notes, verdicts, warnings and
/// what was not measured.
pub fn text(rep: &Report) -> String {
    let r = &rep.result;
    let mut s = String::new();
    let points = r.points.len();
    wrap_into(
        &mut s,
        "",
        &format!(
            "{}: {}, {points} point{} × {} rep{}, librdkafka {}",
            r.probe,
            rep.headline,
            if points == 1 { "" } else { "s" },
            r.reps,
            if r.reps == 1 { "" } else { "s" },
            r.librdkafka_version
        ),
    );
    wrap_into(&mut s, "broker: ", &broker_line(r));
    if let Some(p) = &r.preflight {
        wrap_into(&mut s, "preflight: ", &super::preflight::line(p));
        if let Some(w) = &p.wakeup {
            wrap_into(&mut s, "wakeup: ", &super::wakeup::line(w));
        }
    }
    if let Some(p) = &r.payload {
        s.push_str(&format!(
            "payload pool: {} × {} B {} (the seed benchmark's bytes)\n              sha256 {}\n",
            p.pool_count, p.size_bytes, p.kind, p.sha256
        ));
    }
    wrap_into(&mut s, "cores: ", &r.placement.note);
    wrap_into(
        &mut s,
        "run order: ",
        &format!(
            "reps outermost, points shuffled from seed {} (--seed {} replays it)",
            r.order.seed, r.order.seed
        ),
    );
    s.push('\n');
    s.push_str(&rep.body);
    if !rep.body.ends_with('\n') {
        s.push('\n');
    }
    for n in &r.notes {
        wrap_into(&mut s, "note: ", n);
    }
    let stats = super::self_diagnosis::lines(&r.diagnoses);
    if !stats.is_empty() {
        s.push_str("\nanalyze-stats on the probe's own statistics (first rep of each point):\n");
        for l in stats {
            wrap_into(&mut s, "  ", &l);
        }
    }
    for v in &r.verdicts {
        s.push('\n');
        s.push_str(&v.render());
    }
    if !r.warnings.is_empty() {
        s.push('\n');
    }
    for w in &r.warnings {
        wrap_into(&mut s, "warning: ", w);
    }
    if r.interrupted {
        s.push_str("\ninterrupted: the tables show the runs completed before the signal\n");
    }
    if !r.not_measured.is_empty() {
        s.push('\n');
        wrap_into(&mut s, "not measured: ", &r.not_measured.join("; "));
    }
    s
}
