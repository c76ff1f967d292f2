//! `analyze-fetch-log`: where a librdkafka consumer's fetcher slept, and why.
//!
//! With `debug=fetch`, librdkafka logs each partition's fetch decisions and
//! backoffs. The post's Gap 2 in one line: `Fetch backoff for 1000ms: Local: Queue
//! full` — a partition's local queue reached `queued.min.messages`, so librdkafka
//! stopped fetching it for `fetch.queue.backoff.ms`, while the application drained
//! the queue in milliseconds. This module measures, per partition, how much of the
//! window the fetcher spent backed off, and names the knob.
//!
//! ```
//! use kgap_analyzers::fetch_log::{analyze_fetch_log, FetchLogOptions};
//!
//! let log = "\
//! %7|1700000000.000|FETCH|rdkafka#consumer-1| [thrd:k:9092/1]: k:9092/1: Fetch topic t [0] at offset 0 (v2)
//! %7|1700000000.100|BACKOFF|rdkafka#consumer-1| [thrd:k:9092/1]: k:9092/1: t [0]: Fetch backoff for 1000ms: Local: Queue full
//! %7|1700000001.100|FETCH|rdkafka#consumer-1| [thrd:k:9092/1]: k:9092/1: Fetch topic t [0] at offset 100000 (v2)
//! %7|1700000001.200|BACKOFF|rdkafka#consumer-1| [thrd:k:9092/1]: k:9092/1: t [0]: Fetch backoff for 1000ms: Local: Queue full
//! %7|1700000002.200|FETCH|rdkafka#consumer-1| [thrd:k:9092/1]: k:9092/1: Fetch topic t [0] at offset 200000 (v2)
//! ";
//! let report = analyze_fetch_log(log.as_bytes(), &FetchLogOptions::default()).unwrap();
//! let p = &report.partitions[0];
//! assert_eq!((p.topic.as_str(), p.partition, p.queue_full_backoffs), ("t", 0, 2));
//! assert!(p.backoff_fraction.unwrap() > 0.9);
//! assert_eq!(report.diagnoses[0].id, "fetch-queue-backoff");
//! ```

use std::collections::HashMap;
use std::fmt;
use std::io::{Read, Write};

use serde::Serialize;
use serde_json::json;

use crate::error::AnalyzeError;
use crate::input::{for_each_line, InputSummary, DEFAULT_MAX_LINE_BYTES};
use crate::librdkafka::{raw_stderr_record, unescape_json_slashes, Event, Record, RecordFinder};
use crate::pipeline::{self, RecordSink};
use crate::report::{
    render_diagnosis, round3, us_to_ms, wrap_into, Diagnosis, Dist, Examples, Span,
    TimestampCounts, Window,
};
use crate::requests::{ConnectionStats, Effect, RequestAccounting, RequestStats};
use crate::timeline::{self, Timeline};

/// Most partitions tracked; hostile input with endless topic names is pooled
/// into the last one (and said so in `warnings`).
pub const MAX_PARTITIONS: usize = 100_000;

/// librdkafka's default `fetch.wait.max.ms`.
pub const DEFAULT_FETCH_WAIT_MAX_MS: u64 = 500;

/// Share of the window a partition must spend backed off on a full queue before
/// `fetch-queue-backoff` is reported.
pub const QUEUE_BACKOFF_FRACTION_THRESHOLD: f64 = 0.05;

/// How to read the log. `Default` reads everything with librdkafka's defaults.
#[derive(Debug, Clone, Default)]
pub struct FetchLogOptions {
    /// Ignore records timed before this (epoch seconds, or the log's own clock for
    /// time-only wrapper stamps). Records without a time are kept.
    pub window_start: Option<f64>,
    /// Ignore records timed after this.
    pub window_end: Option<f64>,
    /// The consumer's `fetch.wait.max.ms` (default 500): an empty fetch that took at
    /// least 90% of it was held by the broker waiting for data.
    pub fetch_wait_max_ms: Option<u64>,
    /// Longest line analysed whole (default 1 MiB); longer lines are cut.
    pub max_line_bytes: Option<usize>,
}

/// Per partition: how the fetcher treated it.
#[derive(Debug, Clone, Default, Serialize)]
pub struct PartitionFetch {
    /// Client instance (`rdkafka#consumer-1`), when the wrapper kept it.
    pub client: Option<String>,
    /// Topic.
    pub topic: String,
    /// Partition.
    pub partition: i32,
    /// `Fetch backoff for …` lines for this partition.
    pub backoffs: u64,
    /// … of which `Local: Queue full` (the local queue hit queued.min.messages or
    /// queued.max.messages.kbytes; the pause is fetch.queue.backoff.ms).
    pub queue_full_backoffs: u64,
    /// … of which for a fetch error (the pause is fetch.error.backoff.ms).
    pub error_backoffs: u64,
    /// Sum of the backoff durations librdkafka announced.
    pub backoff_ms_announced: u64,
    /// Time spent backed off inside the window: each backoff from its line to its
    /// end, cut short when the partition was fetched again earlier, overlaps
    /// counted once. Without timestamps, the announced sum.
    pub backoff_ms_total: f64,
    /// `backoff_ms_total` over the window; `null` without timestamps.
    pub backoff_fraction: Option<f64>,
    /// The most frequent queue-full backoff duration: fetch.queue.backoff.ms.
    pub queue_backoff_ms: Option<u64>,
    /// Fetch-decide transitions, by outcome.
    pub decide: DecideCounts,
    /// Largest local queue seen in fetch-decide lines (messages).
    pub queued_msgs_max: Option<u64>,
    /// queued.min.messages as the fetch-decide lines print it.
    pub queued_min_messages: Option<u64>,
    /// queued.max.messages.kbytes as the fetch-decide lines print it.
    pub queued_max_kbytes: Option<u64>,
    /// `Fetch topic … at offset` lines: times the partition went into a FetchRequest.
    pub fetches: u64,
    /// Partition answers in FetchResponses (`MessageSet size` lines).
    pub messagesets: u64,
    /// … of which empty.
    pub empty_messagesets: u64,
    /// Messages put on the local queue (`Enqueue` lines, debug=consumer/fetch).
    pub messages_enqueued: u64,
    /// Bytes put on the local queue.
    pub bytes_enqueued: u64,
}

/// Fetch-decide transitions (`Topic … is fetchable` / `is not fetchable: <reason>`).
#[derive(Debug, Clone, Default, Serialize)]
pub struct DecideCounts {
    /// Became fetchable.
    pub fetchable: u64,
    /// Not fetchable: the local queue reached queued.min.messages.
    pub queued_min_messages_exceeded: u64,
    /// Not fetchable: the local queue reached queued.max.messages.kbytes.
    pub queued_max_kbytes_exceeded: u64,
    /// Not fetchable: a backoff is running.
    pub fetch_backed_off: u64,
    /// Not fetchable: paused by the application.
    pub paused: u64,
    /// Not fetchable, other reasons.
    pub other: u64,
}

/// Per (client, broker): FetchRequests and what came back.
#[derive(Debug, Clone, Serialize)]
pub struct FetcherStats {
    /// Client instance.
    pub client: Option<String>,
    /// Broker name.
    pub broker: String,
    /// `Fetch <n>/<a>/<t> toppar(s)` lines: FetchRequests built.
    pub fetch_requests: u64,
    /// Fetch responses seen (a `Received FetchResponse`, `MessageSet size` lines
    /// (debug=msg), or `Enqueue` lines after the request).
    pub responses: u64,
    /// Responses with no data for any partition (needs `MessageSet size` lines or
    /// debug=protocol: with debug=fetch alone an empty answer leaves no line).
    pub empty_responses: u64,
    /// Empty responses that took ≥ 90% of fetch.wait.max.ms: the broker held the
    /// fetch waiting for data (the consumer had caught up).
    pub empty_held_to_wait_max: u64,
    /// Fetch round trip: the FetchResponse rtt where debug=protocol is on, else the
    /// time from the request's build to its first partition answer.
    pub rtt_ms_p50: Option<f64>,
    /// 99th percentile fetch round trip.
    pub rtt_ms_p99: Option<f64>,
    /// Slowest fetch round trip.
    pub rtt_ms_max: Option<f64>,
    /// Broker-wide `Fetch backoff for Nms` without reason: the broker thread waiting
    /// for the earliest partition backoff to end.
    pub idle_waits: u64,
    /// Broker-wide fetch backoffs after an error (fetch.error.backoff.ms).
    pub error_backoffs: u64,
    /// The errors, with counts.
    pub error_reasons: Vec<ReasonCount>,
}

/// A reason text and how often it was seen.
#[derive(Debug, Clone, Serialize)]
pub struct ReasonCount {
    /// As librdkafka printed it.
    pub reason: String,
    /// Occurrences.
    pub count: u64,
}

/// The report of `analyze-fetch-log` (its `--json` output).
#[derive(Debug, Clone, Serialize)]
pub struct FetchLogReport {
    /// `"analyze-fetch-log"`.
    pub tool: &'static str,
    /// Lines read.
    pub lines_read: u64,
    /// Lines with no librdkafka record the analyzers know (skipped).
    pub lines_skipped: u64,
    /// Records recognised (a line can hold several).
    pub records_recognised: u64,
    /// … of which fetch records (backoffs, fetch-decide, fetches, responses).
    pub fetch_records: u64,
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
    /// Requests per connection and type (needs debug=protocol).
    pub requests: Vec<RequestStats>,
    /// In-flight per connection (needs debug=protocol).
    pub connections: Vec<ConnectionStats>,
    /// Fetches per connection.
    pub fetchers: Vec<FetcherStats>,
    /// Per partition.
    pub partitions: Vec<PartitionFetch>,
    /// Gaps found.
    pub diagnoses: Vec<Diagnosis>,
    /// Figures this log cannot give, and why.
    pub not_computed: Vec<String>,
    /// Anything that makes the numbers less trustworthy.
    pub warnings: Vec<String>,
}

impl FetchLogReport {
    /// The report has something to say: at least one fetch record was found.
    pub fn is_usable(&self) -> bool {
        self.fetch_records > 0
    }

    /// The human report.
    pub fn render_text(&self) -> String {
        self.to_string()
    }
}

/// Analyse a librdkafka debug log (any wrapper, gzip or plain) for fetch backoffs.
pub fn analyze_fetch_log<R: Read>(
    input: R,
    opts: &FetchLogOptions,
) -> Result<FetchLogReport, AnalyzeError> {
    let mut a = FetchLogAnalyzer::new(opts);
    let summary = a.read(input)?;
    a.finish(summary)
}

/// [`analyze_fetch_log`], also writing a per-second CSV timeline to `timeline`.
pub fn analyze_fetch_log_with_timeline<R: Read, W: Write>(
    input: R,
    opts: &FetchLogOptions,
    timeline: W,
) -> Result<FetchLogReport, AnalyzeError> {
    let mut a = FetchLogAnalyzer::new(opts).with_timeline(timeline);
    let summary = a.read(input)?;
    a.finish(summary)
}

/// [`analyze_fetch_log`] on several cores (what the binary runs): the input must be `Send`.
/// `timeline` receives the per-second CSV when given. `workers`: parser threads
/// beside the reader and this thread; `None` = one per core but one; `Some(0)` =
/// read on this thread only.
pub fn analyze_fetch_log_parallel<R: Read + Send>(
    input: R,
    opts: &FetchLogOptions,
    timeline: Option<&mut dyn Write>,
    workers: Option<usize>,
) -> Result<FetchLogReport, AnalyzeError> {
    let mut a = FetchLogAnalyzer::new(opts);
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
struct FetchRow {
    second: i64,
    fetch_requests: u64,
    fetch_responses: u64,
    empty_responses: u64,
    messagesets: u64,
    messages_enqueued: u64,
    bytes_enqueued: u64,
    backoffs: u64,
    queue_full_backoffs: u64,
    backoff_ms_announced: u64,
}

impl timeline::Row for FetchRow {
    fn set_second(&mut self, second: i64) {
        self.second = second;
    }
}

#[derive(Debug, Default)]
struct PartAcc {
    out: PartitionFetch,
    /// The running backoff: (start, planned end).
    open: Option<(f64, f64)>,
    asleep_s: f64,
    queue_backoff_durations: Vec<(u64, u64)>,
}

impl PartAcc {
    fn close(&mut self, at: f64) {
        if let Some((s, e)) = self.open.take() {
            self.asleep_s += (e.min(at) - s).max(0.0);
        }
    }
}

#[derive(Debug, Default)]
struct Round {
    started: Option<f64>,
    rtt_ms: Option<f64>,
    first_answer_at: Option<f64>,
    answers: u64,
    with_data: u64,
    responded: bool,
}

#[derive(Debug, Default)]
struct FetcherAcc {
    fetch_requests: u64,
    responses: u64,
    empty: u64,
    held: u64,
    rtt_us: Dist,
    idle_waits: u64,
    error_backoffs: u64,
    error_reasons: Vec<ReasonCount>,
    round: Option<Round>,
}

fn count_reason(list: &mut Vec<ReasonCount>, reason: &str) {
    if let Some(r) = list.iter_mut().find(|r| r.reason == reason) {
        r.count += 1;
    } else if list.len() < 32 {
        list.push(ReasonCount {
            reason: reason.to_string(),
            count: 1,
        });
    }
}

/// The streaming analyzer behind [`analyze_fetch_log`]: feed it lines with
/// [`push_line`](Self::push_line), then [`finish`](Self::finish). Useful when the
/// log arrives in pieces (a probe capturing its own client's stderr).
pub struct FetchLogAnalyzer<'w> {
    opts: FetchLogOptions,
    finder: &'static RecordFinder,
    scratch: Vec<u8>,
    lines_read: u64,
    lines_skipped: u64,
    records: u64,
    fetch_records: u64,
    outside: u64,
    ts: TimestampCounts,
    span: Span,
    requests: RequestAccounting,
    fetchers: Vec<FetcherAcc>,
    parts: Vec<PartAcc>,
    part_index: HashMap<Box<[u8]>, usize>,
    key_buf: Vec<u8>,
    pooled_partitions: bool,
    last_part: Option<usize>,
    ex_queue_full: Examples,
    ex_decide_full: Examples,
    ex_error: Examples,
    timeline: Timeline<'w, FetchRow>,
}

pub(crate) fn shared_finder() -> &'static RecordFinder {
    static FINDER: std::sync::OnceLock<RecordFinder> = std::sync::OnceLock::new();
    FINDER.get_or_init(RecordFinder::new)
}

impl<'w> FetchLogAnalyzer<'w> {
    /// A fresh analyzer.
    pub fn new(opts: &FetchLogOptions) -> Self {
        FetchLogAnalyzer {
            opts: opts.clone(),
            finder: shared_finder(),
            scratch: Vec::new(),
            lines_read: 0,
            lines_skipped: 0,
            records: 0,
            fetch_records: 0,
            outside: 0,
            ts: TimestampCounts::default(),
            span: Span::default(),
            requests: RequestAccounting::default(),
            fetchers: Vec::new(),
            parts: Vec::new(),
            part_index: HashMap::new(),
            key_buf: Vec::new(),
            pooled_partitions: false,
            last_part: None,
            ex_queue_full: Examples::default(),
            ex_decide_full: Examples::default(),
            ex_error: Examples::default(),
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

    fn in_window(&self, t: Option<f64>) -> bool {
        match t {
            Some(t) => {
                self.opts.window_start.is_none_or_le(t) && self.opts.window_end.is_none_or_ge(t)
            }
            None => true,
        }
    }

    fn record_impl(&mut self, line_no: u64, line: &[u8], rec: &Record<'_>) {
        self.records += 1;
        let t = rec.timestamp.map(|t| t.secs);
        if !self.in_window(t) {
            self.outside += 1;
            return;
        }
        self.ts.add(rec.timestamp.map(|t| t.source));
        if let Some(t) = t {
            self.span.add(t);
        }
        if rec.event.is_protocol() {
            if let Effect::Received { conn, api, rtt_ms } = self.requests.add(rec, t) {
                if self.requests.conns[conn].apis[api].name == "Fetch" {
                    let f = self.fetcher(conn);
                    let r = f.round.get_or_insert_with(Round::default);
                    r.rtt_ms = Some(rtt_ms);
                    r.responded = true;
                }
            }
            return;
        }
        let wait_max_ms = self
            .opts
            .fetch_wait_max_ms
            .unwrap_or(DEFAULT_FETCH_WAIT_MAX_MS) as f64;
        match rec.event {
            Event::PartitionFetchBackoff {
                topic,
                partition,
                backoff_ms,
                reason,
            } => {
                self.fetch_records += 1;
                let queue_full = reason.is_some_and(|r| r.contains("Queue full"));
                if queue_full {
                    self.ex_queue_full.offer(line_no, line);
                } else {
                    self.ex_error.offer(line_no, line);
                }
                if let Some(row) = t.and_then(|t| self.timeline.row(t)) {
                    row.backoffs += 1;
                    row.queue_full_backoffs += queue_full as u64;
                    row.backoff_ms_announced += backoff_ms;
                }
                let p = self.part(rec.client, topic, partition);
                p.out.backoffs += 1;
                p.out.backoff_ms_announced += backoff_ms;
                if queue_full {
                    p.out.queue_full_backoffs += 1;
                    let durations = &mut p.queue_backoff_durations;
                    if let Some((_, n)) = durations.iter_mut().find(|(d, _)| *d == backoff_ms) {
                        *n += 1;
                    } else if durations.len() < 16 {
                        durations.push((backoff_ms, 1));
                    }
                } else {
                    p.out.error_backoffs += 1;
                }
                if let Some(t) = t {
                    p.close(t);
                    p.open = Some((t, t + backoff_ms as f64 / 1000.0));
                }
            }
            Event::BrokerFetchBackoff { reason, .. } => {
                self.fetch_records += 1;
                let ci = self.requests.conn(rec.client, rec.broker);
                let f = self.fetcher(ci);
                match reason {
                    None => f.idle_waits += 1,
                    Some(r) => {
                        f.error_backoffs += 1;
                        count_reason(&mut f.error_reasons, r);
                        self.ex_error.offer(line_no, line);
                    }
                }
            }
            Event::FetchDecide {
                topic,
                partition,
                queued_msgs,
                queued_min_msgs,
                queued_max_kb,
                fetchable,
                reason,
                ..
            } => {
                self.fetch_records += 1;
                let queue_reason = reason.starts_with("queued.");
                if queue_reason {
                    self.ex_decide_full.offer(line_no, line);
                }
                let p = self.part(rec.client, topic, partition);
                p.out.queued_msgs_max = Some(p.out.queued_msgs_max.unwrap_or(0).max(queued_msgs));
                p.out.queued_min_messages = Some(queued_min_msgs);
                p.out.queued_max_kbytes = Some(queued_max_kb);
                let d = &mut p.out.decide;
                if fetchable {
                    d.fetchable += 1;
                    if let Some(t) = t {
                        p.close(t);
                    }
                } else if reason.starts_with("queued.min.messages") {
                    d.queued_min_messages_exceeded += 1;
                } else if reason.starts_with("queued.max.messages.kbytes") {
                    d.queued_max_kbytes_exceeded += 1;
                } else if reason.starts_with("fetch backed off") {
                    d.fetch_backed_off += 1;
                } else if reason.starts_with("paused") {
                    d.paused += 1;
                } else {
                    d.other += 1;
                }
            }
            Event::FetchTopic { topic, partition } => {
                self.fetch_records += 1;
                let p = self.part(rec.client, topic, partition);
                p.out.fetches += 1;
                if let Some(t) = t {
                    p.close(t);
                }
            }
            Event::FetchToppars { .. } => {
                self.fetch_records += 1;
                let ci = self.requests.conn(rec.client, rec.broker);
                let f = self.fetcher(ci);
                let closed = close_round(f, wait_max_ms);
                f.fetch_requests += 1;
                f.round = Some(Round {
                    started: t,
                    ..Round::default()
                });
                if let Some(row) = t.and_then(|t| self.timeline.row(t)) {
                    row.fetch_requests += 1;
                    if let Some(empty) = closed {
                        row.fetch_responses += 1;
                        row.empty_responses += empty as u64;
                    }
                }
            }
            Event::FetchMessageSet {
                topic,
                partition,
                size,
                ..
            } => {
                self.fetch_records += 1;
                let ci = self.requests.conn(rec.client, rec.broker);
                let f = self.fetcher(ci);
                let r = f.round.get_or_insert_with(Round::default);
                r.answers += 1;
                r.with_data += (size > 0) as u64;
                if r.first_answer_at.is_none() {
                    r.first_answer_at = t;
                }
                if let Some(row) = t.and_then(|t| self.timeline.row(t)) {
                    row.messagesets += 1;
                }
                let p = self.part(rec.client, topic, partition);
                p.out.messagesets += 1;
                p.out.empty_messagesets += (size <= 0) as u64;
            }
            Event::Enqueue {
                topic,
                partition,
                messages,
                bytes,
                ..
            } => {
                self.fetch_records += 1;
                // With debug=fetch alone (no `MessageSet size` lines, which are
                // debug=msg), an Enqueue is how a FetchResponse's data shows.
                let ci = self.requests.conn(rec.client, rec.broker);
                if let Some(r) = self.fetcher(ci).round.as_mut() {
                    r.answers += 1;
                    r.with_data += 1;
                    if r.first_answer_at.is_none() {
                        r.first_answer_at = t;
                    }
                }
                if let Some(row) = t.and_then(|t| self.timeline.row(t)) {
                    row.messages_enqueued += messages;
                    row.bytes_enqueued += bytes;
                }
                let p = self.part(rec.client, topic, partition);
                p.out.messages_enqueued += messages;
                p.out.bytes_enqueued += bytes;
            }
            _ => {}
        }
    }

    fn fetcher(&mut self, conn: usize) -> &mut FetcherAcc {
        if self.fetchers.len() <= conn {
            self.fetchers.resize_with(conn + 1, FetcherAcc::default);
        }
        &mut self.fetchers[conn]
    }

    fn part(&mut self, client: Option<&str>, topic: &str, partition: i32) -> &mut PartAcc {
        // A partition's lines come in runs: check the last one before hashing.
        if let Some(i) = self.last_part {
            let o = &self.parts[i].out;
            if o.partition == partition && o.topic == topic && o.client.as_deref() == client {
                return &mut self.parts[i];
            }
        }
        self.key_buf.clear();
        self.key_buf
            .extend_from_slice(client.unwrap_or("").as_bytes());
        self.key_buf.push(0);
        self.key_buf.extend_from_slice(topic.as_bytes());
        self.key_buf.extend_from_slice(&partition.to_le_bytes());
        let i = match self.part_index.get(&self.key_buf[..]) {
            Some(&i) => i,
            None if self.parts.len() >= MAX_PARTITIONS => {
                self.pooled_partitions = true;
                self.parts.len() - 1
            }
            None => {
                self.parts.push(PartAcc {
                    out: PartitionFetch {
                        client: client.map(str::to_string),
                        topic: topic.to_string(),
                        partition,
                        ..PartitionFetch::default()
                    },
                    ..PartAcc::default()
                });
                let i = self.parts.len() - 1;
                self.part_index
                    .insert(self.key_buf.clone().into_boxed_slice(), i);
                i
            }
        };
        self.last_part = Some(i);
        &mut self.parts[i]
    }

    /// Close the analysis and build the report.
    pub fn finish(mut self, input: InputSummary) -> Result<FetchLogReport, AnalyzeError> {
        let wait_max_ms = self
            .opts
            .fetch_wait_max_ms
            .unwrap_or(DEFAULT_FETCH_WAIT_MAX_MS) as f64;
        for f in &mut self.fetchers {
            close_round(f, wait_max_ms);
        }
        let window = self
            .span
            .window(self.opts.window_start, self.opts.window_end);
        let mut not_computed = Vec::new();
        let mut warnings = Vec::new();
        let timed = self.ts.label() != "none";
        if !timed {
            not_computed.push(
                "backoff_fraction and the timeline: the log's lines carry no timestamp \
                 (backoff_ms_total is then the sum of announced backoffs)"
                    .to_string(),
            );
        }
        let mut partitions = Vec::with_capacity(self.parts.len());
        for mut p in std::mem::take(&mut self.parts) {
            if let (Some(w), true) = (window, timed) {
                p.close(w.end_s);
                p.out.backoff_ms_total = round3(p.asleep_s * 1000.0);
                p.out.backoff_fraction =
                    (w.duration_s > 0.0).then(|| round3((p.asleep_s / w.duration_s).min(1.0)));
            } else {
                p.out.backoff_ms_total = p.out.backoff_ms_announced as f64;
            }
            p.out.queue_backoff_ms = p
                .queue_backoff_durations
                .iter()
                .max_by_key(|(_, n)| *n)
                .map(|(d, _)| *d);
            partitions.push(p.out);
        }
        if self.pooled_partitions {
            warnings.push(format!(
                "more than {MAX_PARTITIONS} partitions: the rest were pooled into the last one"
            ));
        }
        let fetchers = self
            .fetchers
            .iter()
            .enumerate()
            .filter(|(_, f)| f.fetch_requests + f.responses + f.idle_waits + f.error_backoffs > 0)
            .map(|(i, f)| {
                let c = &self.requests.conns[i];
                let has = !f.rtt_us.is_empty();
                FetcherStats {
                    client: c.client.clone(),
                    broker: c.broker.clone(),
                    fetch_requests: f.fetch_requests,
                    responses: f.responses,
                    empty_responses: f.empty,
                    empty_held_to_wait_max: f.held,
                    rtt_ms_p50: has.then(|| us_to_ms(f.rtt_us.quantile(0.5))),
                    rtt_ms_p99: has.then(|| us_to_ms(f.rtt_us.quantile(0.99))),
                    rtt_ms_max: has.then(|| us_to_ms(f.rtt_us.max())),
                    idle_waits: f.idle_waits,
                    error_backoffs: f.error_backoffs,
                    error_reasons: f.error_reasons.clone(),
                }
            })
            .collect::<Vec<_>>();
        let (_, late) = self.timeline.finish()?;
        if late > 0 {
            warnings.push(format!(
                "{late} records were timed earlier than lines before them (a wrapper \
                 reordered the log); the timeline counts them in the later second"
            ));
        }
        if input.lines_truncated > 0 {
            warnings.push(format!(
                "{} lines longer than the line cap were analysed by their head only",
                input.lines_truncated
            ));
        }
        let mut diagnoses = Vec::new();
        diagnose_queue_backoff(
            &mut diagnoses,
            &partitions,
            window,
            timed,
            &self.ex_queue_full,
            &self.ex_decide_full,
        );
        diagnose_error_backoff(&mut diagnoses, &partitions, &fetchers, &self.ex_error);
        Ok(FetchLogReport {
            tool: "analyze-fetch-log",
            lines_read: self.lines_read,
            lines_skipped: self.lines_skipped,
            records_recognised: self.records,
            fetch_records: self.fetch_records,
            records_outside_window: self.outside,
            timestamps: self.ts.label().to_string(),
            timestamp_sources: self.ts.clone(),
            window,
            input,
            requests: self.requests.request_stats(),
            connections: self.requests.connection_stats(),
            fetchers,
            partitions,
            diagnoses,
            not_computed,
            warnings,
        })
    }
}

/// Close the running fetch round; `Some(empty)` when it had an answer.
fn close_round(f: &mut FetcherAcc, wait_max_ms: f64) -> Option<bool> {
    let r = f.round.take()?;
    if !r.responded && r.answers == 0 {
        return None;
    }
    f.responses += 1;
    let rtt = r.rtt_ms.or(match (r.started, r.first_answer_at) {
        (Some(s), Some(a)) if a >= s => Some((a - s) * 1000.0),
        _ => None,
    });
    if let Some(ms) = rtt {
        f.rtt_us.record((ms * 1000.0).round() as u64);
    }
    let empty = r.with_data == 0;
    if empty {
        f.empty += 1;
        if rtt.is_some_and(|ms| ms >= 0.9 * wait_max_ms) {
            f.held += 1;
        }
    }
    Some(empty)
}

fn diagnose_queue_backoff(
    out: &mut Vec<Diagnosis>,
    partitions: &[PartitionFetch],
    window: Option<Window>,
    timed: bool,
    ex_backoff: &Examples,
    ex_decide: &Examples,
) {
    let hit: Vec<&PartitionFetch> = partitions
        .iter()
        .filter(|p| p.queue_full_backoffs > 0)
        .collect();
    if hit.is_empty() {
        return;
    }
    let fractions: Vec<f64> = hit.iter().filter_map(|p| p.backoff_fraction).collect();
    let mean =
        (!fractions.is_empty()).then(|| fractions.iter().sum::<f64>() / fractions.len() as f64);
    let max = fractions
        .iter()
        .cloned()
        .fold(None, |m: Option<f64>, f| Some(m.map_or(f, |m| m.max(f))));
    if timed && mean.is_some_and(|m| m < QUEUE_BACKOFF_FRACTION_THRESHOLD) {
        return;
    }
    let backoffs: u64 = hit.iter().map(|p| p.queue_full_backoffs).sum();
    let min_hits: u64 = hit
        .iter()
        .map(|p| p.decide.queued_min_messages_exceeded)
        .sum();
    let kb_hits: u64 = hit
        .iter()
        .map(|p| p.decide.queued_max_kbytes_exceeded)
        .sum();
    let backoff_ms = hit.iter().filter_map(|p| p.queue_backoff_ms).max();
    let queued_min = hit.iter().filter_map(|p| p.queued_min_messages).max();
    let queued_max_kb = hit.iter().filter_map(|p| p.queued_max_kbytes).max();
    let (limit, raise) = if kb_hits > min_hits {
        (
            format!(
                "queued.max.messages.kbytes{}",
                queued_max_kb
                    .map(|k| format!(" ({k} KiB)"))
                    .unwrap_or_default()
            ),
            "queued.max.messages.kbytes",
        )
    } else if min_hits > 0 {
        (
            format!(
                "queued.min.messages{}",
                queued_min
                    .map(|m| format!(" ({m} messages)"))
                    .unwrap_or_default()
            ),
            "queued.min.messages",
        )
    } else {
        (
            "queued.min.messages or queued.max.messages.kbytes".to_string(),
            "queued.min.messages",
        )
    };
    let asleep = match mean {
        Some(m) => format!("{:.0}% of the window", m * 100.0),
        None => format!("{backoffs} times (no timestamps: the share of the window is unknown)"),
    };
    let pause = backoff_ms
        .map(|ms| format!("{ms} ms"))
        .unwrap_or_else(|| "fetch.queue.backoff.ms".to_string());
    let mut per_partition: Vec<serde_json::Value> = hit
        .iter()
        .map(|p| {
            json!({"topic": p.topic, "partition": p.partition, "queue_full_backoffs": p.queue_full_backoffs,
                   "backoff_fraction": p.backoff_fraction, "queued_msgs_max": p.queued_msgs_max})
        })
        .collect();
    per_partition.truncate(20);
    let mut examples = ex_backoff.take(2);
    examples.extend(ex_decide.take(1));
    out.push(Diagnosis {
        id: "fetch-queue-backoff".into(),
        title: format!("fetcher asleep {asleep}: local queue full"),
        evidence: json!({
            "partitions_backed_off": hit.len(),
            "queue_full_backoffs": backoffs,
            "fetch_queue_backoff_ms": backoff_ms,
            "backoff_fraction_mean": mean.map(round3),
            "backoff_fraction_max": max,
            "window_s": window.map(|w| round3(w.duration_s)),
            "decide_queued_min_messages_exceeded": min_hits,
            "decide_queued_max_kbytes_exceeded": kb_hits,
            "queued_min_messages": queued_min,
            "queued_max_kbytes": queued_max_kb,
            "per_partition": per_partition,
        }),
        cause: format!(
            "the fetcher was asleep {asleep} because the local queue reached {limit}: \
             each time, librdkafka stopped fetching the partition for {pause} \
             (fetch.queue.backoff.ms) while the application drained the queue far sooner"
        ),
        fix: format!(
            "lower fetch.queue.backoff.ms (10) or raise {raise}; if the application \
             thread is the limit after that, consume in batches"
        ),
        examples,
    });
}

fn diagnose_error_backoff(
    out: &mut Vec<Diagnosis>,
    partitions: &[PartitionFetch],
    fetchers: &[FetcherStats],
    ex: &Examples,
) {
    let part_errors: u64 = partitions.iter().map(|p| p.error_backoffs).sum();
    let broker_errors: u64 = fetchers.iter().map(|f| f.error_backoffs).sum();
    if part_errors + broker_errors == 0 {
        return;
    }
    let mut reasons: Vec<ReasonCount> = Vec::new();
    for f in fetchers {
        for r in &f.error_reasons {
            for _ in 0..r.count.min(1_000_000) {
                count_reason(&mut reasons, &r.reason);
            }
        }
    }
    out.push(Diagnosis {
        id: "fetch-error-backoff".into(),
        title: format!(
            "{} fetch backoffs after errors",
            part_errors + broker_errors
        ),
        evidence: json!({
            "partition_error_backoffs": part_errors,
            "broker_error_backoffs": broker_errors,
            "broker_error_reasons": reasons,
        }),
        cause: "fetches failed and librdkafka paused them for fetch.error.backoff.ms \
                (500 ms by default) each time; the example lines name the error"
            .into(),
        fix: "fix the error the lines name (leadership changes, authorization, an \
              unavailable broker); lowering fetch.error.backoff.ms only retries sooner"
            .into(),
        examples: ex.take(3),
    });
}

trait OptBound {
    fn is_none_or_le(&self, t: f64) -> bool;
    fn is_none_or_ge(&self, t: f64) -> bool;
}

impl OptBound for Option<f64> {
    fn is_none_or_le(&self, t: f64) -> bool {
        self.map_or(true, |b| b <= t)
    }
    fn is_none_or_ge(&self, t: f64) -> bool {
        self.map_or(true, |b| b >= t)
    }
}

impl fmt::Display for FetchLogReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = String::new();
        use std::fmt::Write as _;
        let _ = writeln!(
            out,
            "read {} lines: {} librdkafka records ({} fetch), {} lines skipped",
            self.lines_read, self.records_recognised, self.fetch_records, self.lines_skipped
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
        if !self.partitions.is_empty() {
            let _ = writeln!(
                out,
                "\n{:<28} {:>8} {:>10} {:>11} {:>8} {:>10}",
                "partition", "backoffs", "queue-full", "backed-off", "fetches", "max-queued"
            );
            let mut rows: Vec<&PartitionFetch> = self.partitions.iter().collect();
            rows.sort_by(|a, b| {
                b.backoff_ms_total
                    .partial_cmp(&a.backoff_ms_total)
                    .unwrap_or(std::cmp::Ordering::Equal)
            });
            for p in rows.iter().take(30) {
                let name = format!("{} [{}]", p.topic, p.partition);
                let name: String = if name.chars().count() > 28 {
                    let tail: String = name.chars().rev().take(27).collect();
                    format!("…{}", tail.chars().rev().collect::<String>())
                } else {
                    name
                };
                let share = match p.backoff_fraction {
                    Some(fr) => format!("{:.1}%", fr * 100.0),
                    None => format!("{:.0} ms", p.backoff_ms_total),
                };
                let _ = writeln!(
                    out,
                    "{:<28} {:>8} {:>10} {:>11} {:>8} {:>10}",
                    name,
                    p.backoffs,
                    p.queue_full_backoffs,
                    share,
                    p.fetches,
                    p.queued_msgs_max
                        .map(|q| q.to_string())
                        .unwrap_or_else(|| "-".into())
                );
            }
            if rows.len() > 30 {
                let _ = writeln!(
                    out,
                    "… and {} more partitions (see --json)",
                    rows.len() - 30
                );
            }
        }
        for fe in &self.fetchers {
            let _ = writeln!(
                out,
                "\nfetcher {}{}:",
                fe.broker,
                fe.client
                    .as_deref()
                    .map(|c| format!(" ({c})"))
                    .unwrap_or_default()
            );
            let _ = writeln!(
                out,
                "  {} FetchRequests, {} responses: {} empty, {} held to fetch.wait.max.ms",
                fe.fetch_requests, fe.responses, fe.empty_responses, fe.empty_held_to_wait_max
            );
            if let (Some(p50), Some(p99), Some(max)) = (fe.rtt_ms_p50, fe.rtt_ms_p99, fe.rtt_ms_max)
            {
                let _ = writeln!(
                    out,
                    "  fetch rtt p50 {p50:.2} ms, p99 {p99:.2} ms, max {max:.2} ms"
                );
            }
        }
        if self.diagnoses.is_empty() {
            let _ = writeln!(
                out,
                "\nno fetch gap found{}",
                if self.fetch_records == 0 {
                    ": the log has no fetch records (is debug=fetch set, and does the \
                     client log at debug level?)"
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

impl RecordSink for FetchLogAnalyzer<'_> {
    fn line_done(&mut self, recognised: bool) {
        self.lines_read += 1;
        self.lines_skipped += !recognised as u64;
    }

    fn record(&mut self, line_no: u64, line: &[u8], rec: &Record<'_>) {
        self.record_impl(line_no, line, rec);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(t: f64, fac: &str, msg: &str) -> String {
        format!("%7|{t:.3}|{fac}|rdkafka#consumer-1| [thrd:k:9092/1]: k:9092/1: {msg}\n")
    }

    #[test]
    fn backoff_cut_short_by_a_fetch_counts_until_the_fetch() {
        let mut log = String::new();
        let t0 = 1_700_000_000.0;
        log += &line(t0, "FETCH", "Fetch topic t [0] at offset 0 (v2)");
        log += &line(
            t0 + 1.0,
            "BACKOFF",
            "t [0]: Fetch backoff for 1000ms: Local: Queue full",
        );
        log += &line(t0 + 1.25, "FETCH", "Fetch topic t [0] at offset 10 (v2)");
        log += &line(t0 + 10.0, "FETCH", "Fetch topic t [0] at offset 20 (v2)");
        let r = analyze_fetch_log(log.as_bytes(), &FetchLogOptions::default()).unwrap();
        let p = &r.partitions[0];
        assert_eq!(p.backoff_ms_total, 250.0);
        assert_eq!(p.backoff_fraction, Some(0.025));
        // 2.5% is under the threshold: a short nap is not a diagnosis.
        assert!(r.diagnoses.is_empty());
    }

    #[test]
    fn overlapping_backoffs_are_counted_once_and_clipped_at_window_end() {
        let mut log = String::new();
        log += &line(0.0 + 1e9, "FETCH", "Fetch topic t [1] at offset 0 (v2)");
        log += &line(
            1.0 + 1e9,
            "BACKOFF",
            "t [1]: Fetch backoff for 1000ms: Local: Queue full",
        );
        log += &line(
            1.5 + 1e9,
            "BACKOFF",
            "t [1]: Fetch backoff for 1000ms: Local: Queue full",
        );
        log += &line(2.0 + 1e9, "FETCH", "Fetch 1/1/1 toppar(s)");
        let r = analyze_fetch_log(log.as_bytes(), &FetchLogOptions::default()).unwrap();
        let p = &r.partitions[0];
        // [1.0,1.5) then [1.5, 2.0] clipped at the last line: 1000 ms of 2 s.
        assert_eq!(p.backoff_ms_total, 1000.0);
        assert_eq!(p.backoff_fraction, Some(0.5));
        assert_eq!(p.backoff_ms_announced, 2000);
        assert_eq!(r.diagnoses[0].id, "fetch-queue-backoff");
        assert!(
            r.diagnoses[0].cause.contains("50% of the window"),
            "{}",
            r.diagnoses[0].cause
        );
    }

    #[test]
    fn decide_reason_names_the_limit_that_was_hit() {
        let mut log = String::new();
        log += &line(1e9, "FETCH", "Topic t [0] in state active at offset 5 (leader epoch 0) (12/100000 msgs, 65600/65536 kb queued, opv 2) is not fetchable: queued.max.messages.kbytes exceeded");
        log += &line(
            1e9,
            "BACKOFF",
            "t [0]: Fetch backoff for 1000ms: Local: Queue full",
        );
        log += &line(1e9 + 2.0, "FETCH", "Topic t [0] in state active at offset 5 (leader epoch 0) (0/100000 msgs, 0/65536 kb queued, opv 2) is fetchable");
        let r = analyze_fetch_log(log.as_bytes(), &FetchLogOptions::default()).unwrap();
        let d = &r.diagnoses[0];
        assert!(
            d.cause.contains("queued.max.messages.kbytes (65536 KiB)"),
            "{}",
            d.cause
        );
        assert!(d.fix.contains("raise queued.max.messages.kbytes"));
        assert_eq!(r.partitions[0].decide.queued_max_kbytes_exceeded, 1);
        assert_eq!(r.partitions[0].decide.fetchable, 1);
    }

    #[test]
    fn without_timestamps_the_fraction_is_null_and_the_diagnosis_says_so() {
        let log = "LOG-7-BACKOFF: [thrd:k:9092/1]: k:9092/1: t [0]: Fetch backoff for 1000ms: Local: Queue full\n";
        let r = analyze_fetch_log(log.as_bytes(), &FetchLogOptions::default()).unwrap();
        assert_eq!(r.timestamps, "none");
        assert_eq!(r.partitions[0].backoff_fraction, None);
        assert_eq!(r.partitions[0].backoff_ms_total, 1000.0);
        assert!(r.diagnoses[0].cause.contains("unknown"));
        assert!(!r.not_computed.is_empty());
    }

    #[test]
    fn empty_fetch_held_to_wait_max_is_counted() {
        let mut log = String::new();
        log += &line(1e9, "FETCH", "Fetch 1/1/1 toppar(s)");
        log += &line(
            1e9 + 0.502,
            "FETCH",
            r#"Topic t [0] MessageSet size 0, error "Success", MaxOffset 1, LSO 1, Ver 2/2"#,
        );
        log += &line(1e9 + 0.503, "FETCH", "Fetch 1/1/1 toppar(s)");
        log += &line(
            1e9 + 0.513,
            "FETCH",
            r#"Topic t [0] MessageSet size 71, error "Success", MaxOffset 2, LSO 2, Ver 2/2"#,
        );
        let r = analyze_fetch_log(log.as_bytes(), &FetchLogOptions::default()).unwrap();
        let f = &r.fetchers[0];
        assert_eq!(
            (
                f.fetch_requests,
                f.responses,
                f.empty_responses,
                f.empty_held_to_wait_max
            ),
            (2, 2, 1, 1)
        );
        // Histograms keep 3 significant digits.
        let max = f.rtt_ms_max.unwrap();
        assert!((max - 502.0).abs() < 0.6, "{max}");
    }

    #[test]
    fn window_options_drop_records_outside() {
        let mut log = String::new();
        log += &line(
            1e9,
            "BACKOFF",
            "t [0]: Fetch backoff for 1000ms: Local: Queue full",
        );
        log += &line(
            1e9 + 5.0,
            "BACKOFF",
            "t [0]: Fetch backoff for 1000ms: Local: Queue full",
        );
        let opts = FetchLogOptions {
            window_start: Some(1e9 + 1.0),
            ..FetchLogOptions::default()
        };
        let r = analyze_fetch_log(log.as_bytes(), &opts).unwrap();
        assert_eq!(r.records_outside_window, 1);
        assert_eq!(r.partitions[0].backoffs, 1);
    }
}
