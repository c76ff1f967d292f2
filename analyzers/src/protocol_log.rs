//! `analyze-protocol-log`: what a librdkafka client's requests looked like on the
//! wire, and what bounded them.
//!
//! With `debug=protocol`, librdkafka logs every request it sends and every response
//! it receives, with sizes, CorrIds and round trips. From that alone this module
//! finds the post's Gap 1 (one small ProduceRequest per partition batch at a flat
//! rate: the broker's per-request cost is the ceiling), the in-flight queueing behind
//! the latency gap at `linger.ms=0`, and timeouts with head-of-line blocking.
//!
//! ```
//! use kgap_analyzers::protocol_log::{analyze_protocol_log, ProtocolLogOptions};
//!
//! let log = "\
//! %7|1700000000.000|SEND|rdkafka#producer-1| [thrd:k:9092/1]: k:9092/1: Sent ProduceRequest (v10, 15621 bytes @ 0, CorrId 4)
//! %7|1700000000.001|RECV|rdkafka#producer-1| [thrd:k:9092/1]: k:9092/1: Received ProduceResponse (v10, 62 bytes, CorrId 4, rtt 0.39ms)
//! ";
//! let report = analyze_protocol_log(log.as_bytes(), &ProtocolLogOptions::default()).unwrap();
//! let r = &report.requests[0];
//! assert_eq!((r.request.as_str(), r.count, r.bytes_total), ("Produce", 1, 15621));
//! assert_eq!(r.rtt_ms_max, Some(0.39));
//! ```

use std::fmt;
use std::io::{Read, Write};

use serde::Serialize;
use serde_json::json;

use crate::error::AnalyzeError;
use crate::fetch_log::shared_finder;
use crate::input::{for_each_line, InputSummary, DEFAULT_MAX_LINE_BYTES};
use crate::librdkafka::{raw_stderr_record, unescape_json_slashes, Event, Record, RecordFinder};
use crate::pipeline::{self, RecordSink};
use crate::report::{
    human_bytes, render_diagnosis, round3, us_to_ms, wrap_into, Diagnosis, Dist, ExampleLine,
    Examples, Span, TimestampCounts, Window, EXAMPLE_CHARS,
};
use crate::requests::{ConnectionStats, Effect, RequestAccounting, RequestStats, DEPTH_BUCKETS};
use crate::timeline::{self, Timeline};

/// librdkafka's default `batch.size` (1,000,000 bytes).
pub const LIBRDKAFKA_DEFAULT_BATCH_SIZE: u64 = 1_000_000;
/// Fewest ProduceRequests on a connection before its shape is diagnosed.
pub const MIN_REQUESTS_FOR_DIAGNOSIS: u64 = 100;
/// In-flight queueing is a window of *small* requests queueing behind each other: at most
/// this many messages per ProduceRequest (the post: "a message or two").
pub const INFLIGHT_MAX_MESSAGES_PER_REQUEST: u64 = 4;
/// Without debug=msg lines (messages per request unknown), requests count as small at
/// most this size and when they are not full batches (p50 below 0.8 × p99).
pub const INFLIGHT_MAX_REQUEST_BYTES: u64 = 4096;

/// How to read the log. `Default` reads everything.
#[derive(Debug, Clone, Default)]
pub struct ProtocolLogOptions {
    /// Ignore records timed before this (epoch seconds, or the log's own clock for
    /// time-only wrapper stamps). Records without a time are kept.
    pub window_start: Option<f64>,
    /// Ignore records timed after this.
    pub window_end: Option<f64>,
    /// Longest line analysed whole (default 1 MiB); longer lines are cut.
    pub max_line_bytes: Option<usize>,
}

/// The report of `analyze-protocol-log` (its `--json` output).
#[derive(Debug, Clone, Serialize)]
pub struct ProtocolLogReport {
    /// `"analyze-protocol-log"`.
    pub tool: &'static str,
    /// Lines read.
    pub lines_read: u64,
    /// Lines with no librdkafka record the analyzers know (skipped).
    pub lines_skipped: u64,
    /// Records recognised (a line can hold several).
    pub records_recognised: u64,
    /// … of which protocol records (Sent, Received, Retrying, Timed out).
    pub protocol_records: u64,
    /// Records dropped by `window_start` / `window_end`.
    pub records_outside_window: u64,
    /// Where record times came from: "librdkafka", "wrapper" or "none".
    pub timestamps: String,
    /// Records per timestamp source.
    pub timestamp_sources: TimestampCounts,
    /// The time span analysed (`null` without timestamps).
    pub window: Option<Window>,
    /// What the reader saw of the input.
    pub input: InputSummary,
    /// Per connection (client, broker) and request type.
    pub requests: Vec<RequestStats>,
    /// In-flight depth per connection.
    pub connections: Vec<ConnectionStats>,
    /// ProduceRequests in detail, per connection that sent any.
    pub produce: Vec<ProduceShape>,
    /// debug=msg: messages per ProduceRequest (2.x sends one partition per request).
    pub messages_per_request: Option<MessagesPerRequest>,
    /// REQTMOUT lines.
    pub timeouts: TimeoutSummary,
    /// Gaps found.
    pub diagnoses: Vec<Diagnosis>,
    /// Figures this log cannot give, and why.
    pub not_computed: Vec<String>,
    /// Anything that makes the numbers less trustworthy.
    pub warnings: Vec<String>,
}

/// ProduceRequests on one connection.
#[derive(Debug, Clone, Serialize)]
pub struct ProduceShape {
    /// Client instance.
    pub client: Option<String>,
    /// Broker name.
    pub broker: String,
    /// Requests.
    pub requests: u64,
    /// Request sizes, power-of-two buckets.
    pub bytes_histogram: Vec<Bucket>,
    /// Mean in-flight depth (this request included) when a ProduceRequest was sent.
    pub inflight_at_send_mean: Option<f64>,
    /// rtt by in-flight depth at send.
    pub rtt_by_inflight: Vec<DepthRtt>,
    /// Pearson correlation of depth at send and rtt (near 1: rtt grows with depth).
    pub rtt_depth_correlation: Option<f64>,
}

/// One histogram bucket: `low <= value <= high`.
#[derive(Debug, Clone, Serialize)]
pub struct Bucket {
    /// Lowest value of the bucket.
    pub low: u64,
    /// Highest value of the bucket.
    pub high: u64,
    /// Values in it.
    pub count: u64,
}

/// rtt of requests sent at one in-flight depth range.
#[derive(Debug, Clone, Serialize)]
pub struct DepthRtt {
    /// Depth range (`1`, `2-5`, `6-20`, `>20`).
    pub inflight: &'static str,
    /// Responses.
    pub count: u64,
    /// Median rtt.
    pub rtt_ms_p50: Option<f64>,
    /// 99th percentile rtt.
    pub rtt_ms_p99: Option<f64>,
}

/// Messages per Produce MessageSet (debug=msg lines).
#[derive(Debug, Clone, Serialize)]
pub struct MessagesPerRequest {
    /// MessageSets built.
    pub messagesets: u64,
    /// Median messages per MessageSet.
    pub p50: u64,
    /// Mean.
    pub mean: f64,
    /// Largest.
    pub max: u64,
    /// MessageSets reported delivered.
    pub delivered: u64,
    /// MessageSets that met an error.
    pub errors: u64,
}

/// REQTMOUT lines.
#[derive(Debug, Clone, Default, Serialize)]
pub struct TimeoutSummary {
    /// `Timed out <Api>Request …` lines.
    pub requests_timed_out: u64,
    /// … per request type.
    pub by_request: Vec<NameCount>,
    /// Longest wait before the timeout.
    pub after_ms_max: Option<u64>,
    /// Lines saying the request was possibly held back by a preceding one.
    pub held_back: u64,
    /// … by which request type.
    pub held_back_by: Vec<NameCount>,
    /// `Timed out N in-flight, …` summary lines: in-flight total.
    pub summary_in_flight: u64,
    /// … out-queue total.
    pub summary_out_queue: u64,
    /// … retry-queued total.
    pub summary_retry_queued: u64,
}

/// A name and a count.
#[derive(Debug, Clone, Serialize)]
pub struct NameCount {
    /// The name.
    pub name: String,
    /// How often.
    pub count: u64,
}

fn bump(list: &mut Vec<NameCount>, name: &str) {
    if let Some(n) = list.iter_mut().find(|n| n.name == name) {
        n.count += 1;
    } else if list.len() < 64 {
        list.push(NameCount {
            name: name.to_string(),
            count: 1,
        });
    }
}

/// Analyse a librdkafka debug log (any wrapper, gzip or plain) for its requests.
pub fn analyze_protocol_log<R: Read>(
    input: R,
    opts: &ProtocolLogOptions,
) -> Result<ProtocolLogReport, AnalyzeError> {
    let mut a = ProtocolLogAnalyzer::new(opts);
    let summary = a.read(input)?;
    a.finish(summary)
}

/// [`analyze_protocol_log`], also writing a per-second CSV timeline to `timeline`.
pub fn analyze_protocol_log_with_timeline<R: Read, W: Write>(
    input: R,
    opts: &ProtocolLogOptions,
    timeline: W,
) -> Result<ProtocolLogReport, AnalyzeError> {
    let mut a = ProtocolLogAnalyzer::new(opts).with_timeline(timeline);
    let summary = a.read(input)?;
    a.finish(summary)
}

/// [`analyze_protocol_log`] on several cores (what the binary runs): the input must be `Send`.
/// `timeline` receives the per-second CSV when given. `workers`: parser threads
/// beside the reader and this thread; `None` = one per core but one; `Some(0)` =
/// read on this thread only.
pub fn analyze_protocol_log_parallel<R: Read + Send>(
    input: R,
    opts: &ProtocolLogOptions,
    timeline: Option<&mut dyn Write>,
    workers: Option<usize>,
) -> Result<ProtocolLogReport, AnalyzeError> {
    let mut a = ProtocolLogAnalyzer::new(opts);
    if let Some(w) = timeline {
        a = a.with_timeline(w);
    }
    let summary = match workers.unwrap_or_else(pipeline::default_workers) {
        0 => a.read(input)?,
        n => a.read_parallel(input, n)?,
    };
    a.finish(summary)
}

/// One row of `--timeline`.
#[derive(Debug, Default, Serialize)]
struct ProtocolRow {
    second: i64,
    requests: u64,
    request_bytes: u64,
    produce_requests: u64,
    produce_bytes: u64,
    fetch_requests: u64,
    responses: u64,
    rtt_ms_mean: Option<f64>,
    rtt_ms_max: Option<f64>,
    inflight_max: u64,
    retries: u64,
    timeouts: u64,
    #[serde(skip)]
    rtt_ms_sum: f64,
}

impl timeline::Row for ProtocolRow {
    fn set_second(&mut self, second: i64) {
        self.second = second;
    }
    fn finalize(&mut self) {
        if self.responses > 0 {
            self.rtt_ms_mean = Some(round3(self.rtt_ms_sum / self.responses as f64));
        }
    }
}

/// The slowest few lines of a kind (for evidence of queueing).
#[derive(Debug, Default)]
struct Slowest {
    lines: Vec<(f64, ExampleLine)>,
}

impl Slowest {
    fn offer(&mut self, key: f64, line_no: u64, line: &[u8]) {
        if self.lines.len() < 3 || self.lines.iter().any(|(k, _)| *k < key) {
            let ex = ExampleLine {
                line: line_no,
                text: String::from_utf8_lossy(line)
                    .chars()
                    .take(EXAMPLE_CHARS)
                    .collect(),
            };
            if self.lines.len() >= 3 {
                let (i, _) = self
                    .lines
                    .iter()
                    .enumerate()
                    .min_by(|a, b| a.1 .0.total_cmp(&b.1 .0))
                    .expect("non-empty");
                self.lines.remove(i);
            }
            self.lines.push((key, ex));
        }
    }

    /// The kept lines, slowest first.
    fn take(&self) -> Vec<ExampleLine> {
        let mut v = self.lines.clone();
        v.sort_by(|a, b| b.0.total_cmp(&a.0));
        v.into_iter().map(|(_, e)| e).collect()
    }
}

/// The streaming analyzer behind [`analyze_protocol_log`].
pub struct ProtocolLogAnalyzer<'w> {
    opts: ProtocolLogOptions,
    finder: &'static RecordFinder,
    scratch: Vec<u8>,
    lines_read: u64,
    lines_skipped: u64,
    records: u64,
    protocol_records: u64,
    outside: u64,
    ts: TimestampCounts,
    span: Span,
    requests: RequestAccounting,
    msgs_per_set: Dist,
    delivered: u64,
    msgset_errors: u64,
    timeouts: TimeoutSummary,
    ex_produce_sent: Examples,
    ex_produce_recv: Examples,
    ex_timeouts: Examples,
    slowest_produce: Slowest,
    timeline: Timeline<'w, ProtocolRow>,
}

impl<'w> ProtocolLogAnalyzer<'w> {
    /// A fresh analyzer.
    pub fn new(opts: &ProtocolLogOptions) -> Self {
        ProtocolLogAnalyzer {
            opts: opts.clone(),
            finder: shared_finder(),
            scratch: Vec::new(),
            lines_read: 0,
            lines_skipped: 0,
            records: 0,
            protocol_records: 0,
            outside: 0,
            ts: TimestampCounts::default(),
            span: Span::default(),
            requests: RequestAccounting::default(),
            msgs_per_set: Dist::default(),
            delivered: 0,
            msgset_errors: 0,
            timeouts: TimeoutSummary::default(),
            ex_produce_sent: Examples::default(),
            ex_produce_recv: Examples::default(),
            ex_timeouts: Examples::default(),
            slowest_produce: Slowest::default(),
            timeline: Timeline::disabled(),
        }
    }

    /// Also write a per-second CSV timeline.
    pub fn with_timeline(mut self, w: impl Write + 'w) -> Self {
        self.timeline = Timeline::to_writer(w);
        self
    }

    /// Read a whole input (gzip detected) into the analyzer.
    pub fn read<R: Read>(&mut self, input: R) -> Result<InputSummary, AnalyzeError> {
        let max = self.opts.max_line_bytes.unwrap_or(DEFAULT_MAX_LINE_BYTES);
        for_each_line(input, max, |line| self.push_line(line.number, line.bytes))
    }

    /// [`read`](Self::read) on several cores: a reader thread and `workers` parser
    /// threads; the analysis itself stays on this thread, in input order, so the
    /// report is the same as [`read`](Self::read)'s.
    pub fn read_parallel<R: Read + Send>(
        &mut self,
        input: R,
        workers: usize,
    ) -> Result<InputSummary, AnalyzeError> {
        let max = self.opts.max_line_bytes.unwrap_or(DEFAULT_MAX_LINE_BYTES);
        pipeline::drive(input, max, workers, self)
    }

    /// Analyse one line (without its newline).
    pub fn push_line(&mut self, line_no: u64, line: &[u8]) {
        // librdkafka's own stderr format first: one message at a known place, and
        // never JSON-escaped.
        if let Some(found) = raw_stderr_record(line) {
            let any = found.is_some();
            if let Some(rec) = found {
                self.record_impl(line_no, line, &rec);
            }
            self.line_done(any);
            return;
        }
        let mut scratch = std::mem::take(&mut self.scratch);
        let text: &[u8] = if unescape_json_slashes(line, &mut scratch) {
            &scratch
        } else {
            line
        };
        let finder = self.finder;
        let mut any = false;
        for rec in finder.records(text) {
            any = true;
            self.record_impl(line_no, text, &rec);
        }
        self.line_done(any);
        self.scratch = scratch;
    }

    fn record_impl(&mut self, line_no: u64, line: &[u8], rec: &Record<'_>) {
        self.records += 1;
        let t = rec.timestamp.map(|t| t.secs);
        if let Some(t) = t {
            let before = self.opts.window_start.is_some_and(|s| t < s);
            let after = self.opts.window_end.is_some_and(|e| t > e);
            if before || after {
                self.outside += 1;
                return;
            }
            self.span.add(t);
        }
        self.ts.add(rec.timestamp.map(|t| t.source));
        match rec.event {
            Event::ProduceMessageSet { messages, .. } => {
                self.msgs_per_set.record(messages);
                return;
            }
            Event::MessageSetDelivered { .. } => {
                self.delivered += 1;
                return;
            }
            Event::MessageSetError { .. } => {
                self.msgset_errors += 1;
                return;
            }
            _ => {}
        }
        if !rec.event.is_protocol() {
            return;
        }
        self.protocol_records += 1;
        let effect = self.requests.add(rec, t);
        let mut row = t.and_then(|t| self.timeline.row(t));
        match (&rec.event, effect) {
            (Event::Sent { api, bytes, .. }, Effect::Sent { depth, .. }) => {
                if *api == "Produce" {
                    self.ex_produce_sent.offer(line_no, line);
                }
                if let Some(r) = row.as_deref_mut() {
                    r.requests += 1;
                    r.request_bytes += bytes;
                    r.inflight_max = r.inflight_max.max(depth as u64);
                    match *api {
                        "Produce" => {
                            r.produce_requests += 1;
                            r.produce_bytes += bytes;
                        }
                        "Fetch" => r.fetch_requests += 1,
                        _ => {}
                    }
                }
            }
            (Event::Received { api, .. }, Effect::Received { rtt_ms, .. }) => {
                if *api == "Produce" {
                    self.ex_produce_recv.offer(line_no, line);
                    self.slowest_produce.offer(rtt_ms, line_no, line);
                }
                if let Some(r) = row.as_deref_mut() {
                    r.responses += 1;
                    r.rtt_ms_sum += rtt_ms;
                    r.rtt_ms_max = Some(r.rtt_ms_max.map_or(rtt_ms, |m| m.max(rtt_ms)));
                }
            }
            (Event::Retrying { .. }, _) => {
                if let Some(r) = row.as_deref_mut() {
                    r.retries += 1;
                }
            }
            (
                Event::TimedOutRequest {
                    api,
                    after_ms,
                    held_back_by,
                    ..
                },
                _,
            ) => {
                self.ex_timeouts.offer(line_no, line);
                let to = &mut self.timeouts;
                to.requests_timed_out += 1;
                bump(&mut to.by_request, api);
                to.after_ms_max = Some(to.after_ms_max.unwrap_or(0).max(*after_ms));
                if let Some(h) = held_back_by {
                    to.held_back += 1;
                    bump(&mut to.held_back_by, h);
                }
                if let Some(r) = row {
                    r.timeouts += 1;
                }
            }
            (
                Event::TimedOutSummary {
                    in_flight,
                    retry_queued,
                    out_queue,
                    ..
                },
                _,
            ) => {
                self.ex_timeouts.offer(line_no, line);
                let to = &mut self.timeouts;
                to.summary_in_flight += in_flight;
                to.summary_out_queue += out_queue;
                to.summary_retry_queued += retry_queued;
            }
            _ => {}
        }
    }

    /// Close the analysis and build the report.
    pub fn finish(self, input: InputSummary) -> Result<ProtocolLogReport, AnalyzeError> {
        let window = self
            .span
            .window(self.opts.window_start, self.opts.window_end);
        let timed = self.ts.label() != "none";
        let mut not_computed = Vec::new();
        let mut warnings = Vec::new();
        if !timed {
            not_computed.push(
                "requests per second, the timeline and the per-request ceiling's µs per \
                 request: the log's lines carry no timestamp"
                    .to_string(),
            );
        } else if self.ts.wrapper > self.ts.librdkafka {
            warnings.push(
                "times come from the wrapper's logger, which may stamp lines when the \
                 application polls them (rust-rdkafka does): rates are approximate, rtt \
                 figures are librdkafka's own and exact"
                    .to_string(),
            );
        }
        let produce = produce_shapes(&self.requests);
        let messages_per_request = (!self.msgs_per_set.is_empty()).then(|| MessagesPerRequest {
            messagesets: self.msgs_per_set.len(),
            p50: self.msgs_per_set.quantile(0.5),
            mean: round3(self.msgs_per_set.mean()),
            max: self.msgs_per_set.max(),
            delivered: self.delivered,
            errors: self.msgset_errors,
        });
        if messages_per_request.is_none() && !produce.is_empty() {
            not_computed.push(
                "messages per ProduceRequest: add `msg` to debug= (debug=protocol,msg)".to_string(),
            );
        }
        let unknown: u64 = self
            .requests
            .conns
            .iter()
            .flat_map(|c| c.apis.iter())
            .map(|a| a.unknown_corr_ids)
            .sum();
        if unknown > 0 {
            warnings.push(format!(
                "{unknown} responses had a CorrId never seen sent (the log starts mid-flight \
                 or lost lines); their rtt is counted, their in-flight depth is not"
            ));
        }
        let forgotten: u64 = self.requests.conns.iter().map(|c| c.forgotten).sum();
        if forgotten > 0 {
            warnings.push(format!(
                "{forgotten} requests were forgotten while awaiting a response (more than {} \
                 in flight on one connection)",
                crate::requests::MAX_OUTSTANDING
            ));
        }
        if input.lines_truncated > 0 {
            warnings.push(format!(
                "{} lines longer than the line cap were analysed by their head only",
                input.lines_truncated
            ));
        }
        let (_, late) = self.timeline.finish()?;
        if late > 0 {
            warnings.push(format!(
                "{late} records were timed earlier than lines before them (a wrapper \
                 reordered the log); the timeline counts them in the later second"
            ));
        }
        let requests = self.requests.request_stats();
        let mut diagnoses = Vec::new();
        diagnose_ceiling(
            &mut diagnoses,
            &requests,
            &produce,
            messages_per_request.as_ref(),
            &self.ex_produce_sent,
            &self.ex_produce_recv,
        );
        diagnose_inflight(
            &mut diagnoses,
            &requests,
            &produce,
            messages_per_request.as_ref(),
            &self.slowest_produce,
        );
        diagnose_timeouts(&mut diagnoses, &self.timeouts, &self.ex_timeouts);
        Ok(ProtocolLogReport {
            tool: "analyze-protocol-log",
            lines_read: self.lines_read,
            lines_skipped: self.lines_skipped,
            records_recognised: self.records,
            protocol_records: self.protocol_records,
            records_outside_window: self.outside,
            timestamps: self.ts.label().to_string(),
            timestamp_sources: self.ts.clone(),
            window,
            input,
            connections: self.requests.connection_stats(),
            requests,
            produce,
            messages_per_request,
            timeouts: self.timeouts,
            diagnoses,
            not_computed,
            warnings,
        })
    }
}

impl ProtocolLogReport {
    /// The report has something to say: at least one protocol record was found.
    pub fn is_usable(&self) -> bool {
        self.protocol_records > 0
    }

    /// The human report.
    pub fn render_text(&self) -> String {
        self.to_string()
    }
}

fn log2_buckets(d: &Dist) -> Vec<Bucket> {
    let mut out: Vec<Bucket> = Vec::new();
    for v in d.histogram().iter_recorded() {
        let value = v.value_iterated_to();
        let exp = 63 - value.max(1).leading_zeros();
        let low = 1u64 << exp;
        let high = low.saturating_mul(2) - 1;
        match out.last_mut() {
            Some(b) if b.low == low => b.count += v.count_at_value(),
            _ => out.push(Bucket {
                low,
                high,
                count: v.count_at_value(),
            }),
        }
    }
    out
}

fn produce_shapes(acc: &RequestAccounting) -> Vec<ProduceShape> {
    let mut out = Vec::new();
    for c in &acc.conns {
        let Some(a) = c.apis.iter().find(|a| a.name == "Produce") else {
            continue;
        };
        if a.count == 0 {
            continue;
        }
        out.push(ProduceShape {
            client: c.client.clone(),
            broker: c.broker.clone(),
            requests: a.count,
            bytes_histogram: log2_buckets(&a.bytes),
            inflight_at_send_mean: (a.depth_n > 0)
                .then(|| round3(a.depth_sum as f64 / a.depth_n as f64)),
            rtt_by_inflight: a
                .rtt_by_depth
                .iter()
                .zip(DEPTH_BUCKETS)
                .map(|(h, label)| DepthRtt {
                    inflight: label,
                    count: h.len(),
                    rtt_ms_p50: (!h.is_empty()).then(|| us_to_ms(h.quantile(0.5))),
                    rtt_ms_p99: (!h.is_empty()).then(|| us_to_ms(h.quantile(0.99))),
                })
                .collect(),
            rtt_depth_correlation: a.corr.r().map(round3),
        });
    }
    out
}

fn produce_stats<'a>(
    requests: &'a [RequestStats],
    shape: &ProduceShape,
) -> Option<&'a RequestStats> {
    requests
        .iter()
        .find(|r| r.request == "Produce" && r.broker == shape.broker && r.client == shape.client)
}

fn diagnose_ceiling(
    out: &mut Vec<Diagnosis>,
    requests: &[RequestStats],
    produce: &[ProduceShape],
    mpr: Option<&MessagesPerRequest>,
    ex_sent: &Examples,
    ex_recv: &Examples,
) {
    for shape in produce {
        let Some(r) = produce_stats(requests, shape) else {
            continue;
        };
        let (Some(p50), Some(p99)) = (r.bytes_p50, r.bytes_p99) else {
            continue;
        };
        if r.count < MIN_REQUESTS_FOR_DIAGNOSIS || p50 > LIBRDKAFKA_DEFAULT_BATCH_SIZE / 4 {
            continue;
        }
        // Requests of nearly one size were closed by batch.size, not by linger.ms:
        // the producer had more data than one request could carry.
        let full = p50 as f64 >= 0.8 * p99 as f64;
        if !full {
            continue;
        }
        // A rate over fewer than 3 complete seconds says little about flatness; then
        // (as without timestamps) only a large number of full requests counts.
        let rate = r.rate.as_ref();
        let measured = rate.filter(|s| s.seconds >= 3);
        match measured {
            Some(s) => {
                let flat = s.cv.is_some_and(|cv| cv <= 0.25);
                if !flat || s.per_s_mean < 1000.0 {
                    continue;
                }
            }
            None if r.count < 1000 => continue,
            None => {}
        }
        let who = format!(
            "{}{}",
            r.broker,
            r.client
                .as_deref()
                .map(|c| format!(" ({c})"))
                .unwrap_or_default()
        );
        let (headline, us) = match rate {
            Some(s) => {
                let us = 1e6 / s.per_s_mean;
                let short = if measured.is_none() {
                    let plural = if s.seconds == 1 { "" } else { "s" };
                    format!(" (over only {} complete second{plural})", s.seconds)
                } else {
                    String::new()
                };
                (
                    format!(
                        "{:.0} req/s of {} bytes ≈ {:.0} µs per request{short}",
                        s.per_s_mean, p50, us
                    ),
                    Some(round3(us)),
                )
            }
            None => (
                format!(
                    "{} requests of {} bytes (no timestamps: the rate and µs per request \
                     are unknown)",
                    r.count, p50
                ),
                None,
            ),
        };
        let mut examples = ex_sent.take(2);
        examples.extend(ex_recv.take(1));
        out.push(Diagnosis {
            id: "per-request-ceiling".into(),
            title: format!("per-request ceiling on {who}: {headline}"),
            evidence: json!({
                "client": r.client,
                "broker": r.broker,
                "produce_requests": r.count,
                "bytes_p50": p50,
                "bytes_p99": p99,
                "requests_per_s_mean": rate.map(|s| s.per_s_mean),
                "requests_per_s_cv": rate.and_then(|s| s.cv),
                "seconds_measured": rate.map(|s| s.seconds),
                "us_per_request": us,
                "rtt_ms_p50": r.rtt_ms_p50,
                "messages_per_request_p50": mpr.map(|m| m.p50),
                "librdkafka_default_batch_size": LIBRDKAFKA_DEFAULT_BATCH_SIZE,
            }),
            cause: format!(
                "bound by the broker's per-request cost: {headline}. librdkafka sends one \
                 partition's batch per ProduceRequest, the batches are full (p50 {p50} B ≈ \
                 p99 {p99} B, far below librdkafka's default batch.size of 1 MB) and the \
                 broker handles a connection's requests one at a time, so the request rate \
                 is the ceiling"
            ),
            fix: "raise batch.size (librdkafka's default is 1000000) and linger.ms so each \
                  request carries more bytes"
                .into(),
            examples,
        });
    }
}

/// Whether a connection's ProduceRequests are small: a message or a few each (from the
/// debug=msg MessageSet lines), or, without them, small and not full batches. Full batches
/// queueing are the per-request ceiling's signature, not the in-flight window's.
fn small_requests(r: &RequestStats, mpr: Option<&MessagesPerRequest>) -> bool {
    match (mpr, r.bytes_p50, r.bytes_p99) {
        (Some(m), _, _) => m.p50 <= INFLIGHT_MAX_MESSAGES_PER_REQUEST,
        (None, Some(p50), Some(p99)) => {
            p50 <= INFLIGHT_MAX_REQUEST_BYTES && (p50 as f64) < 0.8 * p99 as f64
        }
        _ => false,
    }
}

fn diagnose_inflight(
    out: &mut Vec<Diagnosis>,
    requests: &[RequestStats],
    produce: &[ProduceShape],
    mpr: Option<&MessagesPerRequest>,
    slowest: &Slowest,
) {
    for shape in produce {
        let Some(r) = produce_stats(requests, shape) else {
            continue;
        };
        let (Some(p50), Some(depth)) = (r.bytes_p50, shape.inflight_at_send_mean) else {
            continue;
        };
        if r.count < MIN_REQUESTS_FOR_DIAGNOSIS || depth <= 5.0 || !small_requests(r, mpr) {
            continue;
        }
        if r.rate.as_ref().is_some_and(|s| s.per_s_mean < 500.0) {
            continue;
        }
        let shallow = shape.rtt_by_inflight[..2]
            .iter()
            .filter(|b| b.count >= 20)
            .filter_map(|b| b.rtt_ms_p50)
            .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.min(v))));
        let deep = shape.rtt_by_inflight[2..]
            .iter()
            .filter(|b| b.count >= 20)
            .filter_map(|b| b.rtt_ms_p50)
            .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))));
        let ratio = match (shallow, deep) {
            (Some(s), Some(d)) if s > 0.0 => Some(d / s),
            _ => None,
        };
        let corr = shape.rtt_depth_correlation;
        let growing = corr.is_some_and(|c| c >= 0.3) || ratio.is_some_and(|q| q >= 2.0);
        if !growing {
            continue;
        }
        let rate = r
            .rate
            .as_ref()
            .map(|s| format!("{:.0} req/s", s.per_s_mean))
            .unwrap_or_else(|| format!("{} requests", r.count));
        let growth = match (shallow, deep) {
            (Some(s), Some(d)) => format!("rtt p50 {s:.2} ms at ≤5 in flight vs {d:.2} ms above"),
            _ => format!("rtt/depth correlation {:.2}", corr.unwrap_or(0.0)),
        };
        out.push(Diagnosis {
            id: "inflight-queueing".into(),
            title: format!(
                "in-flight queueing on {}: {depth:.1} requests in flight on average",
                r.broker
            ),
            evidence: json!({
                "client": r.client,
                "broker": r.broker,
                "produce_requests": r.count,
                "bytes_p50": p50,
                "requests_per_s_mean": r.rate.as_ref().map(|s| s.per_s_mean),
                "inflight_at_send_mean": depth,
                "rtt_ms_p50_shallow": shallow,
                "rtt_ms_p50_deep": deep,
                "rtt_depth_correlation": corr,
                "rtt_ms_p50": r.rtt_ms_p50,
                "rtt_ms_p99": r.rtt_ms_p99,
                "rtt_by_inflight": shape.rtt_by_inflight,
                "messages_per_request_p50": mpr.map(|m| m.p50),
            }),
            cause: format!(
                "tiny requests ({p50} B p50) at {rate} with {depth:.1} in flight on average \
                 and {growth}: with librdkafka's default window (1000000) a request goes out \
                 as soon as a message or two is ready, and the broker serves a connection's \
                 requests one at a time, so they queue behind each other"
            ),
            fix: "set max.in.flight.requests.per.connection ≈ 5: messages then wait for a \
                  free slot and coalesce into fewer, larger requests (throughput unchanged, \
                  latency down)"
                .into(),
            examples: slowest.take(),
        });
    }
}

fn diagnose_timeouts(out: &mut Vec<Diagnosis>, to: &TimeoutSummary, ex: &Examples) {
    let total = to
        .requests_timed_out
        .max(to.summary_in_flight + to.summary_out_queue);
    if total == 0 {
        return;
    }
    let held = if to.held_back > 0 {
        let by: Vec<String> = to
            .held_back_by
            .iter()
            .map(|n| format!("{}Request ×{}", n.name, n.count))
            .collect();
        format!(
            "; {} were possibly held back by a preceding {} on the same connection \
             (head-of-line blocking)",
            to.held_back,
            by.join(", ")
        )
    } else {
        String::new()
    };
    let by: Vec<String> = to
        .by_request
        .iter()
        .map(|n| format!("{} ×{}", n.name, n.count))
        .collect();
    out.push(Diagnosis {
        id: "request-timeouts".into(),
        title: format!("{total} requests timed out"),
        evidence: json!({
            "requests_timed_out": to.requests_timed_out,
            "by_request": to.by_request,
            "after_ms_max": to.after_ms_max,
            "held_back": to.held_back,
            "held_back_by": to.held_back_by,
            "summary_in_flight": to.summary_in_flight,
            "summary_out_queue": to.summary_out_queue,
        }),
        cause: format!(
            "{total} requests got no response within their timeout{}{}{held}",
            if by.is_empty() {
                String::new()
            } else {
                format!(" ({})", by.join(", "))
            },
            to.after_ms_max
                .map(|ms| format!(", the longest after {ms} ms"))
                .unwrap_or_default()
        ),
        fix: if to.held_back > 0 {
            "a long-blocking request occupies the connection ahead of the others: find why \
             it blocks (group rebalance, an overloaded broker); if many small requests \
             queue behind a deep in-flight window, set \
             max.in.flight.requests.per.connection ≈ 5"
                .into()
        } else {
            "the broker or the network did not answer in time: check the broker's request \
             latency and the connection; if requests queue behind a deep in-flight window, \
             set max.in.flight.requests.per.connection ≈ 5; raise request.timeout.ms only \
             for a broker known to be slow"
                .into()
        },
        examples: ex.take(3),
    });
}

impl fmt::Display for ProtocolLogReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use std::fmt::Write as _;
        let mut out = String::new();
        let _ = writeln!(
            out,
            "read {} lines: {} librdkafka records ({} protocol), {} lines skipped",
            self.lines_read, self.records_recognised, self.protocol_records, self.lines_skipped
        );
        match self.window {
            Some(w) if self.timestamps != "none" => {
                let _ = writeln!(
                    out,
                    "window: {:.3} s (timestamps: {})",
                    w.duration_s, self.timestamps
                );
            }
            _ => {
                let _ = writeln!(out, "window: unknown (timestamps: none)");
            }
        }
        let mut last_conn: Option<(&Option<String>, &str)> = None;
        for r in &self.requests {
            if last_conn != Some((&r.client, r.broker.as_str())) {
                let _ = writeln!(
                    out,
                    "\n{}{}",
                    r.broker,
                    r.client
                        .as_deref()
                        .map(|c| format!(" ({c})"))
                        .unwrap_or_default()
                );
                let _ = writeln!(
                    out,
                    "  {:<18} {:>8} {:>10} {:>10} {:>9} {:>9} {:>8}",
                    "request", "count", "bytes p50", "bytes p99", "rtt p50", "rtt p99", "req/s"
                );
                last_conn = Some((&r.client, r.broker.as_str()));
            }
            let ms = |v: Option<f64>| v.map(|v| format!("{v:.2}ms")).unwrap_or_else(|| "-".into());
            let b = |v: Option<u64>| v.map(|v| v.to_string()).unwrap_or_else(|| "-".into());
            let name: String = r.request.chars().take(18).collect();
            let _ = writeln!(
                out,
                "  {:<18} {:>8} {:>10} {:>10} {:>9} {:>9} {:>8}",
                name,
                r.count,
                b(r.bytes_p50),
                b(r.bytes_p99),
                ms(r.rtt_ms_p50),
                ms(r.rtt_ms_p99),
                r.rate
                    .as_ref()
                    .map(|s| format!("{:.0}", s.per_s_mean))
                    .unwrap_or_else(|| "-".into())
            );
        }
        for c in &self.connections {
            if c.inflight_max > 1 {
                let _ = writeln!(
                    out,
                    "\nin flight on {}: max {}, mean at send {}",
                    c.broker,
                    c.inflight_max,
                    c.inflight_at_send_mean
                        .map(|m| format!("{m:.1}"))
                        .unwrap_or_else(|| "-".into())
                );
            }
        }
        for p in &self.produce {
            let _ = writeln!(
                out,
                "\nProduceRequest bytes on {} ({} requests):",
                p.broker, p.requests
            );
            let max = p.bytes_histogram.iter().map(|b| b.count).max().unwrap_or(1);
            for b in &p.bytes_histogram {
                let stars = ((b.count as f64 / max as f64) * 30.0).ceil() as usize;
                let _ = writeln!(
                    out,
                    "  {:>9} -> {:<9} : {:<8} |{:<30}|",
                    human_bytes(b.low as f64),
                    human_bytes(b.high as f64),
                    b.count,
                    "*".repeat(stars.min(30))
                );
            }
        }
        if let Some(m) = &self.messages_per_request {
            let _ = writeln!(
                out,
                "\nmessages per ProduceRequest: p50 {}, mean {:.1}, max {} ({} MessageSets)",
                m.p50, m.mean, m.max, m.messagesets
            );
        }
        if self.diagnoses.is_empty() {
            let _ = writeln!(
                out,
                "\nno protocol gap found{}",
                if self.protocol_records == 0 {
                    ": the log has no protocol records (is debug=protocol set, and does \
                     the client log at debug level?)"
                } else {
                    ""
                }
            );
        } else {
            let _ = writeln!(out, "\ndiagnoses:");
            for d in &self.diagnoses {
                render_diagnosis(&mut out, d);
            }
        }
        for n in &self.not_computed {
            wrap_into(&mut out, "not computed: ", n);
        }
        for w in &self.warnings {
            wrap_into(&mut out, "warning: ", w);
        }
        f.write_str(&out)
    }
}

impl RecordSink for ProtocolLogAnalyzer<'_> {
    fn line_done(&mut self, recognised: bool) {
        self.lines_read += 1;
        self.lines_skipped += !recognised as u64;
    }

    fn record(&mut self, line_no: u64, line: &[u8], rec: &Record<'_>) {
        self.record_impl(line_no, line, rec);
    }
}
