//! The streaming analyzer: every record of the log into per-partition and per-fetcher
//! accounting, in order.

use serde::Serialize;

use super::model::{FetchLogReport, FetcherStats, PartitionFetch, ReasonCount};
use super::options::FetchLogOptions;
use super::reasons::{count_reason, is_end_of_partition};
use crate::engine::bytes_eq::{same_bytes, same_opt_bytes};
use crate::engine::fast_hash::FastMap;
use crate::engine::input::InputSummary;
use crate::findings::diagnoses::fetch_log::{diagnose_error_backoff, diagnose_queue_backoff};
use crate::librdkafka::pipeline::{self, LogAnalyzer, NoTally, RecordSink, Timed};
use crate::librdkafka::requests::{Effect, RequestAccounting};
use crate::librdkafka::{Event, Record};
use crate::vocab::error::AnalyzeError;
use crate::vocab::report::{round3, us_to_ms, Dist, Examples, Span, TimestampCounts};
use crate::vocab::timeline::{self, Collected, Timeline};

/// Most partitions tracked; hostile input with endless topic names is pooled
/// into the last one (and said so in `warnings`).
pub const MAX_PARTITIONS: usize = 100_000;

/// librdkafka's default `fetch.wait.max.ms`: an empty fetch answered after 90% of it was
/// held by the broker waiting for data (`empty_held_to_wait_max`).
pub const DEFAULT_FETCH_WAIT_MAX_MS: u64 = 500;

/// One row of `--timeline`.
#[derive(Debug, Default, Serialize)]
pub(crate) struct FetchRow {
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
    fn column(&self, name: &str) -> Option<f64> {
        match name {
            "messages_enqueued" => Some(self.messages_enqueued as f64),
            "queue_full_backoffs" => Some(self.queue_full_backoffs as f64),
            _ => None,
        }
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
    end_of_partition_backoffs: u64,
    error_reasons: Vec<ReasonCount>,
    round: Option<Round>,
}

/// Slots of the partition cache checked before the hash lookup (a power of two): a
/// partition's slot is found from its number and its topic's length and last byte, so
/// the few partitions a fetcher cycles through each keep one (the fixtures' six all hit).
const RECENT_PARTS: usize = 32;

/// A partition's slot in the cache of recent ones: its number, its topic's length and
/// last byte, mixed.
#[inline]
fn recent_slot(topic: &[u8], partition: i32) -> usize {
    let last = topic.last().copied().unwrap_or(0) as u32;
    let x = (partition as u32) ^ (topic.len() as u32).wrapping_mul(7) ^ last.wrapping_mul(13);
    x as usize & (RECENT_PARTS - 1)
}

/// The streaming analyzer behind [`analyze_fetch_log`]: feed it lines with
/// [`push_line`](Self::push_line), then [`finish`](Self::finish). Useful when the
/// log arrives in pieces (a probe capturing its own client's stderr).
pub struct FetchLogAnalyzer<'w> {
    opts: FetchLogOptions,
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
    part_index: FastMap<Box<[u8]>, usize>,
    key_buf: Vec<u8>,
    pooled_partitions: bool,
    /// The partition last looked up in each slot (index + 1; 0: none).
    recent_parts: [u32; RECENT_PARTS],
    ex_queue_full: Examples,
    ex_decide_full: Examples,
    ex_error: Examples,
    timeline: Timeline<'w, FetchRow>,
}

impl<'w> FetchLogAnalyzer<'w> {
    /// A fresh analyzer.
    pub fn new(opts: &FetchLogOptions) -> Self {
        FetchLogAnalyzer {
            opts: opts.clone(),
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
            part_index: FastMap::default(),
            key_buf: Vec::new(),
            pooled_partitions: false,
            recent_parts: [0; RECENT_PARTS],
            ex_queue_full: Examples::default(),
            ex_decide_full: Examples::default(),
            ex_error: Examples::default(),
            timeline: Timeline::disabled(),
        }
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
                let at_end = reason.is_some_and(is_end_of_partition);
                if queue_full {
                    self.ex_queue_full.offer(line_no, line);
                } else if !at_end {
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
                } else if at_end {
                    p.out.end_of_partition_backoffs += 1;
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
                    Some(r) if is_end_of_partition(r) => f.end_of_partition_backoffs += 1,
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
        // A fetcher cycles through a few partitions: check the one last seen in this
        // partition's slot before building the key and hashing it (a scan of the last
        // eight was ~140 instructions a record).
        let slot = recent_slot(topic.as_bytes(), partition);
        if let Some(i) = self.recent_parts[slot].checked_sub(1) {
            let i = i as usize;
            let o = &self.parts[i].out;
            // Inline compares: `==` on these strings was a libc `memcmp` call each.
            if o.partition == partition
                && same_bytes(o.topic.as_bytes(), topic.as_bytes())
                && same_opt_bytes(
                    o.client.as_deref().map(str::as_bytes),
                    client.map(str::as_bytes),
                )
            {
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
        // At most MAX_PARTITIONS (far under u32::MAX) partitions are kept.
        self.recent_parts[slot] = i as u32 + 1;
        &mut self.parts[i]
    }

    /// Close the analysis and build the report.
    pub fn finish(self, input: InputSummary) -> Result<FetchLogReport, AnalyzeError> {
        self.finish_with_series(input).map(|(report, _)| report)
    }

    /// [`finish`](Self::finish), also giving the rows kept by
    /// [`with_series`](Self::with_series).
    pub(crate) fn finish_with_series(
        mut self,
        input: InputSummary,
    ) -> Result<(FetchLogReport, Option<Collected>), AnalyzeError> {
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
            .filter(|(_, f)| {
                f.fetch_requests
                    + f.responses
                    + f.idle_waits
                    + f.error_backoffs
                    + f.end_of_partition_backoffs
                    > 0
            })
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
                    end_of_partition_backoffs: f.end_of_partition_backoffs,
                    error_reasons: f.error_reasons.clone(),
                }
            })
            .collect::<Vec<_>>();
        let (_, late) = self.timeline.finish()?;
        let collected = self.timeline.collected.take();
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
        if let Some(c) = &input.gzip_cut {
            warnings.push(crate::engine::input::gzip_cut_warning(c, input.bytes_read));
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
        let report = FetchLogReport {
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
        };
        Ok((report, collected))
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

impl LogAnalyzer for FetchLogAnalyzer<'_> {
    fn max_line_bytes(&self) -> usize {
        pipeline::max_line_or_default(self.opts.max_line_bytes)
    }
    fn scratch(&mut self) -> &mut Vec<u8> {
        &mut self.scratch
    }
}

impl<'w> Timed<'w> for FetchLogAnalyzer<'w> {
    type Row = FetchRow;
    fn timeline_mut(&mut self) -> &mut Timeline<'w, FetchRow> {
        &mut self.timeline
    }
}

impl RecordSink for FetchLogAnalyzer<'_> {
    // Every fetch record is keyed by its partition and ordered in time: none is order-free.
    type Tally = NoTally;

    fn tally(&self) -> NoTally {
        NoTally
    }

    fn merge(&mut self, _: NoTally) {}

    fn line_done(&mut self, recognised: bool) {
        self.lines_read += 1;
        self.lines_skipped += !recognised as u64;
    }

    fn lines_skipped(&mut self, n: u64) {
        self.lines_read += n;
        self.lines_skipped += n;
    }

    fn record(&mut self, line_no: u64, line: &[u8], rec: &Record<'_>) {
        self.record_impl(line_no, line, rec);
    }
}
