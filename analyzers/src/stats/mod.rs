//! librdkafka statistics JSON (STATISTICS.md): `analyze-stats`, and the figures the probes
//! and gap-report read from it.
//!
//! A client with `statistics.interval.ms` set emits one JSON object per interval. Counters
//! (`tx`, `txbytes`, `req.Produce`, …) are cumulative since the client started; windows
//! (`rtt`, `int_latency`, `batchsize`, …) cover only the last interval and are reset at every
//! emit (an idle interval has `cnt` 0); `ts` is a monotonic microsecond clock. So rates come
//! from the difference of two samples, and percentiles from the windows one interval at a
//! time.
//!
//! [`analyze_stats`] reads statistics in any form users have them (one object a line,
//! several a line, pretty-printed, after a log prefix, inside a JSON logger's line, gzip),
//! keeps clients apart by name and restarts apart by what went back, and diagnoses each
//! series with pure rules ([`rules`](self)) and named [`Thresholds`]. Memory stays flat:
//! one object at a time, summaries in bounded accumulators.
//!
//! - [`frame`]: finding objects in the stream; [`model`]: the typed emit, per version;
//! - `track`: series per client, restarts, rates; `interval`: one interval's figures;
//! - `rules`, [`thresholds`], `diagnose`: the diagnoses; `summary`: figures over intervals;
//! - [`report`]: the JSON contract; `render_text`, [`timeline`], `render_svg`: outputs.
//!
//! The older one-emit API ([`parse`], [`Stats`], [`rates`]) stays for the probes.
//!
//! ```no_run
//! use kgap_analyzers::stats::{analyze_stats, StatsOptions};
//! let file = std::fs::File::open("stats.jsonl").unwrap();
//! let report = analyze_stats(file, &StatsOptions::default()).unwrap();
//! for d in &report.diagnoses {
//!     println!("{} {}: {}", d.client, d.id, d.title);
//! }
//! ```

mod chart;
pub mod config;
pub mod connections;
mod emit;
pub mod frame;
pub(crate) mod interval;
pub mod model;
mod render_svg;
mod render_text;
pub mod report;
mod salvage;
pub(crate) mod stat;
pub(crate) mod summary;
pub mod timeline;
pub(crate) mod track;

use std::collections::HashMap;
use std::io::{Read, Write};

pub use crate::findings::diagnoses::stats::thresholds::{self, Thresholds};
pub use config::ClientConfig;
pub use emit::{
    broker_rates, parse, rates, BrokerRates, BrokerStats, PartitionStats, Rates, Stats, TopicStats,
    Window,
};
pub use report::{ClientReport, StatsDiagnosis, StatsReport};

use crate::engine::input::Input;
use crate::findings::diagnoses::stats::{Context, Diagnoser};
use crate::vocab::error::AnalyzeError;
use chart::{ChartPoint, ClientChart};
use config::{Defaults, Resolved};
use frame::{Cut, Frame, Framer};
use report::{Problem, StatsInput};
use summary::SeriesAcc;
use timeline::Timeline;
use track::{Observed, Track};

/// Most client series reported in detail (hostile input cannot grow memory).
pub const MAX_SERIES: usize = 256;
/// Cut emits kept to be read when the input has no whole one (a paste holds one or two).
const MAX_CUT_KEPT: usize = 16;
/// Problems listed by line in the report (all are counted).
const MAX_PROBLEMS: usize = 20;
/// Why a cut emit is not read (salvage::repair_cut).
const CUT_BEFORE_A_BROKER: &str = "statistics cut before their first whole broker: the \
     client's figures without a connection's are too little to judge";

/// Options of one analysis.
#[derive(Debug, Clone)]
pub struct StatsOptions {
    /// Settings the statistics do not carry (batch.size, linger.ms, …).
    pub config: ClientConfig,
    pub thresholds: Thresholds,
    /// Objects longer than this are skipped and reported.
    pub max_object_bytes: usize,
    /// The input's name for the report.
    pub input_name: String,
}

impl Default for StatsOptions {
    fn default() -> Self {
        StatsOptions {
            config: ClientConfig::default(),
            thresholds: Thresholds::default(),
            max_object_bytes: frame::DEFAULT_MAX_OBJECT_BYTES,
            input_name: "<input>".into(),
        }
    }
}

/// One client series being read.
struct Client {
    track: Track,
    acc: SeriesAcc,
    diag: Diagnoser,
    chart: ClientChart,
    config: Resolved,
}

impl Client {
    fn new(track: Track, opts: &StatsOptions, before_1_5: bool) -> Self {
        let label = if track.number > 1 {
            format!("{}#{}", track.name, track.number)
        } else {
            track.name.clone()
        };
        let producer = track.is_producer();
        Client {
            track,
            acc: SeriesAcc::default(),
            diag: Diagnoser::default(),
            chart: ClientChart::new(label, producer),
            config: opts.config.resolve(Defaults { before_1_5 }),
        }
    }
}

/// The analysis in progress.
struct Analysis<'o, 'w> {
    opts: &'o StatsOptions,
    input: StatsInput,
    active: HashMap<String, usize>,
    clients: Vec<Client>,
    series_dropped: u64,
    timeline: Option<Timeline<'w>>,
    timeline_error: Option<std::io::Error>,
    /// Cut emits that can be read in part, with their line (see `cut`).
    cut_kept: Vec<(u64, Vec<u8>)>,
}

/// The client's name; wrappers that drop it still have client_id and type.
fn client_name(e: &model::Emit<'_>) -> String {
    match (&e.name, &e.client_id, &e.client_type) {
        (Some(n), _, _) => n.to_string(),
        (None, Some(id), Some(t)) => format!("{id} ({t})"),
        (None, Some(id), None) => id.to_string(),
        _ => "(unnamed client)".into(),
    }
}

/// Text that librdkafka statistics begin with or contain (the head of a cut object
/// included): a cut or invalid candidate with none of these is some other brace text.
fn looks_like_statistics(text: &[u8]) -> bool {
    const MARKS: [&[u8]; 4] = [
        b"\"brokers\"",
        b"\"client_id\"",
        b"\"msg_cnt\"",
        b"\"replyq\"",
    ];
    MARKS
        .iter()
        .any(|m| memchr::memmem::find(text, m).is_some())
}

/// An object that is not statistics itself but carries some: a nested object, or a string
/// holding one (a JSON logger's line).
fn looks_wrapped(text: &[u8]) -> bool {
    memchr::memmem::find(text, b"\"brokers\"").is_some()
        || memchr::memmem::find(text, b"\\\"brokers\\\"").is_some()
}

/// Statistics found inside a JSON value, as text to parse (depth-first, input order).
fn nested_statistics(v: &serde_json::Value, out: &mut Vec<Vec<u8>>, depth: u32) {
    if depth > 16 || out.len() > 64 {
        return;
    }
    match v {
        serde_json::Value::Object(m) => {
            if depth > 0
                && m.contains_key("ts")
                && (m.contains_key("name") || m.contains_key("brokers"))
            {
                if let Ok(t) = serde_json::to_vec(v) {
                    out.push(t);
                }
                return;
            }
            for x in m.values() {
                nested_statistics(x, out, depth + 1);
            }
        }
        serde_json::Value::Array(a) => {
            for x in a {
                nested_statistics(x, out, depth + 1);
            }
        }
        serde_json::Value::String(s) => {
            let t = s.trim_start();
            if t.starts_with('{') && t.contains("\"brokers\"") {
                out.push(t.as_bytes().to_vec());
            }
        }
        _ => {}
    }
}

impl<'o, 'w> Analysis<'o, 'w> {
    fn problem(&mut self, line: u64, reason: String) {
        if self.input.problems.len() < MAX_PROBLEMS {
            self.input.problems.push(Problem { line, reason });
        }
    }

    fn frame(&mut self, line: u64, text: &[u8]) {
        match model::parse(text) {
            Ok(e) if e.is_statistics() => self.emit(&e, line),
            Ok(_) if looks_wrapped(text) => {
                if !self.unwrap(line, text) {
                    self.input.other_objects += 1;
                }
            }
            Ok(_) if self.escaped(line, text) => {}
            Ok(_) => self.input.other_objects += 1,
            // A logger's line whose own fields do not fit the model ("time" as a string)
            // may still carry statistics.
            Err(_) if looks_wrapped(text) && self.unwrap(line, text) => {}
            Err(_) if self.escaped(line, text) || self.inner(line, text) => {}
            Err(err) => {
                if looks_like_statistics(text) {
                    self.input.invalid_objects += 1;
                    let at = line + err.line().saturating_sub(1) as u64;
                    self.problem(at, format!("invalid statistics JSON: {err}"));
                } else {
                    self.input.other_objects += 1;
                }
            }
        }
    }

    /// An emit that starts inside the object the framer found (`{offset : 1||value : ip#{ "name"…`),
    /// read from its own first brace; false when there is none.
    fn inner(&mut self, line: u64, text: &[u8]) -> bool {
        let Some(at) = salvage::json_start(text).filter(|&i| i > 0) else {
            return false;
        };
        match model::parse(&text[at..]) {
            Ok(e) if e.is_statistics() => {
                self.emit(&e, line);
                true
            }
            _ => self.cut(line, &text[at..], None),
        }
    }

    /// An emit written as an escaped string in the line (a Prometheus label, a quoting
    /// logger), unescaped once and read, whole or up to a cut; false when there is none.
    fn escaped(&mut self, line: u64, text: &[u8]) -> bool {
        let Some(inner) = salvage::unescape_once(text) else {
            return false;
        };
        match model::parse(&inner) {
            Ok(e) if e.is_statistics() => {
                self.input.wrapped_objects += 1;
                self.emit(&e, line);
                true
            }
            _ if self.cut(line, &inner, None) => true,
            // Statistics, cut too early to read: a refusal says so, not "no statistics".
            _ if looks_like_statistics(&inner) => {
                self.input.truncated_objects += 1;
                self.problem(line, CUT_BEFORE_A_BROKER.into());
                true
            }
            _ => false,
        }
    }

    /// A cut emit that can be read up to its last whole broker or topic (see [`salvage`]):
    /// kept aside, and read at the end only when the input held no whole emit (a paste),
    /// never between whole emits, where it would be an interval missing what the cut hid.
    /// False when too little came before the cut. `why` is the framer's reason.
    fn cut(&mut self, line: u64, head: &[u8], why: Option<String>) -> bool {
        let Some(fixed) = salvage::repair_cut(head) else {
            return false;
        };
        if !model::parse(&fixed).is_ok_and(|e| e.is_statistics()) {
            return false;
        }
        self.input.truncated_objects += 1;
        self.problem(line, why.unwrap_or_else(|| "truncated object".into()));
        if self.cut_kept.len() < MAX_CUT_KEPT {
            self.cut_kept.push((line, fixed));
        }
        true
    }

    /// The cut emits kept aside, read when nothing whole was.
    fn read_cut_kept(&mut self) {
        if self.input.statistics_objects > 0 {
            return;
        }
        for (line, fixed) in std::mem::take(&mut self.cut_kept) {
            let Ok(e) = model::parse(&fixed) else {
                continue;
            };
            self.input.truncated_objects -= 1;
            self.input.cut_objects_read += 1;
            let brokers = e.brokers.as_ref().map_or(0, |b| b.0.len());
            if let Some(p) = self.input.problems.iter_mut().find(|p| p.line == line) {
                p.reason = format!(
                    "{}: read up to its last whole broker or topic ({brokers} broker(s)); what \
                     the cut hid is not judged",
                    p.reason
                );
            }
            self.emit(&e, line);
        }
    }

    /// Statistics inside a valid JSON object; false when there are none.
    fn unwrap(&mut self, line: u64, text: &[u8]) -> bool {
        let Ok(v) = serde_json::from_slice::<serde_json::Value>(text) else {
            return false;
        };
        let mut found = Vec::new();
        nested_statistics(&v, &mut found, 0);
        if found.is_empty() {
            return false;
        }
        for t in found {
            match model::parse(&t) {
                Ok(e) if e.is_statistics() => {
                    self.input.wrapped_objects += 1;
                    self.emit(&e, line);
                }
                Ok(_) => self.input.other_objects += 1,
                Err(err) => {
                    self.input.invalid_objects += 1;
                    self.problem(
                        line,
                        format!("invalid statistics JSON inside a wrapper: {err}"),
                    );
                }
            }
        }
        true
    }

    fn emit(&mut self, e: &model::Emit<'_>, line: u64) {
        self.input.statistics_objects += 1;
        let name = client_name(e);
        let slot = match self.active.get(&name) {
            Some(&i) => match self.clients[i].track.breaks(e) {
                None => Some(i),
                Some(reason) => {
                    let number = self.clients[i].track.number + 1;
                    self.start(e, &name, number, Some(reason))
                }
            },
            None => self.start(e, &name, 1, None),
        };
        let Some(i) = slot else { return };
        let c = &mut self.clients[i];
        match c.track.observe(e, line) {
            Observed::Duplicate => self.input.duplicate_emits += 1,
            Observed::Emit(iv) => {
                let t = &self.opts.thresholds;
                c.acc.observe(&iv, &c.config, t);
                c.diag.observe(&iv, &c.config, t);
                c.chart.push(ChartPoint::of(&iv));
                if let Some(tl) = &mut self.timeline {
                    if self.timeline_error.is_none() {
                        if let Err(err) = tl.write(&c.track, &iv) {
                            self.timeline_error = Some(err);
                        }
                    }
                }
            }
        }
    }

    fn start(
        &mut self,
        e: &model::Emit<'_>,
        name: &str,
        number: u32,
        because: Option<&str>,
    ) -> Option<usize> {
        if self.clients.len() >= MAX_SERIES {
            self.series_dropped += 1;
            self.active.remove(name);
            return None;
        }
        let track = Track::new(e, name, number, because);
        self.clients
            .push(Client::new(track, self.opts, e.age.is_none()));
        let i = self.clients.len() - 1;
        self.active.insert(name.to_string(), i);
        Some(i)
    }

    fn finish(mut self) -> Result<StatsReport, AnalyzeError> {
        self.read_cut_kept();
        if let Some(e) = self.timeline_error.take() {
            return Err(AnalyzeError::Timeline(e));
        }
        if let Some(tl) = &mut self.timeline {
            tl.flush().map_err(AnalyzeError::Timeline)?;
        }
        let t = &self.opts.thresholds;
        let mut clients = Vec::new();
        let mut diagnoses = Vec::new();
        let mut charts = Vec::new();
        let mut warnings = Vec::new();
        for c in &self.clients {
            let cx = Context {
                track: &c.track,
                acc: &c.acc,
                config: &c.config,
                t,
            };
            diagnoses.extend(c.diag.finish(&cx));
            clients.push(c.acc.report(&c.track, t));
            charts.push(c.chart.clone());
            if c.track.emits == 1 {
                warnings.push(format!(
                    "{}: one emit only (line {}): rates need two",
                    c.track.name, c.track.first_line
                ));
            }
            if let Some(b) = &c.track.started_because {
                warnings.push(format!(
                    "{}: a new series from line {} ({b})",
                    c.track.name, c.track.first_line
                ));
            }
        }
        if self.series_dropped > 0 {
            warnings.push(format!(
                "more than {MAX_SERIES} client series: {} emits of further ones not analysed",
                self.series_dropped
            ));
        }
        let i = &self.input;
        if let Some(c) = &i.gzip_cut {
            warnings.push(crate::engine::input::gzip_cut_warning(c, i.bytes_read));
        }
        if i.cut_objects_read > 0 {
            warnings.push(format!(
                "{} cut statistics object(s) read up to their last whole broker or topic: what \
                 the cut hid is not judged",
                i.cut_objects_read
            ));
        }
        let bad = i.invalid_objects + i.truncated_objects + i.oversized_objects;
        if bad > 0 {
            warnings.push(format!(
                "{bad} statistics object(s) skipped: {} invalid, {} truncated, {} over the size \
                 cap (first lines under input.problems)",
                i.invalid_objects, i.truncated_objects, i.oversized_objects
            ));
        }
        let config = self
            .clients
            .first()
            .map(|c| c.config)
            .unwrap_or_else(|| self.opts.config.resolve(Defaults { before_1_5: false }));
        let mut report = StatsReport {
            tool: "analyze-stats",
            input_name: self.opts.input_name.clone(),
            headline: String::new(),
            input: self.input,
            config,
            thresholds: t.clone(),
            clients,
            diagnoses,
            warnings,
            charts,
        };
        report.headline = render_text::headline(&report);
        Ok(report)
    }
}

/// Analyse statistics from `input` (gzip detected).
pub fn analyze_stats<R: Read>(input: R, opts: &StatsOptions) -> Result<StatsReport, AnalyzeError> {
    analyze_stats_with_timeline(input, opts, None)
}

/// Analyse, writing one CSV row per interval and broker (and the aggregate) to `timeline`.
pub fn analyze_stats_with_timeline<R: Read>(
    input: R,
    opts: &StatsOptions,
    timeline: Option<&mut dyn Write>,
) -> Result<StatsReport, AnalyzeError> {
    let input = Input::detect(input).map_err(AnalyzeError::Read)?;
    let gzip = input.is_gzip();
    let cut = input.gzip_cut();
    let mut framer = Framer::new(input, opts.max_object_bytes);
    let cap = framer.max_object();
    let mut a = Analysis {
        opts,
        input: StatsInput {
            gzip,
            max_object_bytes: opts.max_object_bytes as u64,
            ..StatsInput::default()
        },
        active: HashMap::new(),
        clients: Vec::new(),
        series_dropped: 0,
        timeline: timeline.map(Timeline::new),
        timeline_error: None,
        cut_kept: Vec::new(),
    };
    loop {
        let frame = match framer.next_frame() {
            Ok(Some(f)) => f,
            Ok(None) => break,
            Err(source) if gzip => {
                return Err(AnalyzeError::Gzip {
                    bytes_read: framer.bytes_read(),
                    source,
                })
            }
            Err(e) => return Err(AnalyzeError::Read(e)),
        };
        match frame {
            Frame::Whole { line, text } => a.frame(line, text),
            Frame::Cut { line, cut, head } => {
                if cut == Cut::TooLong {
                    a.input.oversized_objects += 1;
                    a.problem(line, cut.reason(cap));
                } else if looks_like_statistics(head) {
                    if !a.cut(line, head, Some(cut.reason(cap))) {
                        a.input.truncated_objects += 1;
                        a.problem(line, cut.reason(cap));
                    }
                } else if !a.escaped(line, head) {
                    a.input.other_objects += 1;
                }
            }
        }
    }
    a.input.bytes_read = framer.bytes_read();
    a.input.lines = framer.lines();
    a.input.binary_at_offset = framer.first_nul();
    a.input.gzip_cut = cut.get();
    a.finish()
}

impl StatsReport {
    /// At least one statistics emit was read.
    pub fn is_usable(&self) -> bool {
        self.input.statistics_objects > 0
    }

    /// Why the input gave nothing to analyse, for the error message (None when usable).
    pub fn unusable_reason(&self) -> Option<String> {
        if self.is_usable() {
            return None;
        }
        let i = &self.input;
        Some(
            if let Some(c) = i.gzip_cut.as_ref().filter(|_| i.bytes_read == 0) {
                crate::engine::input::gzip_cut_warning(c, 0)
            } else if i.bytes_read == 0 {
                "the input is empty".into()
            } else if let Some(off) = i.binary_at_offset.filter(|_| i.invalid_objects == 0) {
                format!(
                "binary data, not statistics JSON (a NUL byte around offset {off}; {} bytes read)",
                i.bytes_read
            )
            } else if i.invalid_objects + i.truncated_objects + i.oversized_objects > 0 {
                format!(
                "no readable statistics object: {} invalid, {} truncated, {} over the {} MiB cap",
                i.invalid_objects,
                i.truncated_objects,
                i.oversized_objects,
                i.max_object_bytes / (1024 * 1024)
            )
            } else {
                format!(
                    "no librdkafka statistics JSON in {} lines ({} other JSON or brace objects): \
                 set statistics.interval.ms and write what the stats callback receives",
                    i.lines, i.other_objects
                )
            },
        )
    }

    pub fn render_text(&self) -> String {
        render_text::render(self)
    }

    /// The charts: (file name, SVG) per client and chart.
    pub fn render_svgs(&self) -> Vec<(String, String)> {
        render_svg::render(self)
    }
}
