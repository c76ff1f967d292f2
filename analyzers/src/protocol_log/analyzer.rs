//! The streaming analyzer: every record of the log into the accounting, in order.

use serde::Serialize;

use super::message_sets::MessageSetTally;
use super::model::{
    bump, produce_shapes, MessagesPerRequest, NameCount, ProtocolLogReport, TimeoutSummary,
};
use super::options::ProtocolLogOptions;
use super::slowest::Slowest;
use crate::engine::input::InputSummary;
use crate::findings::diagnoses::protocol_log::{
    diagnose_ceiling, diagnose_inflight, diagnose_timeouts, diagnose_too_little, ReadEvidence,
};
use crate::librdkafka::pipeline::{self, LogAnalyzer, RecordSink, Tally, Timed};
use crate::librdkafka::requests::{Effect, RequestAccounting};
use crate::librdkafka::{Event, Record};
use crate::vocab::error::AnalyzeError;
use crate::vocab::report::{round3, Examples, Span, TimestampCounts};
use crate::vocab::timeline::{self, Collected, Timeline};

/// One row of `--timeline`.
#[derive(Debug, Default, Serialize)]
pub(crate) struct ProtocolRow {
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
    fn column(&self, name: &str) -> Option<f64> {
        match name {
            "produce_requests" => Some(self.produce_requests as f64),
            _ => None,
        }
    }
    fn finalize(&mut self) {
        if self.responses > 0 {
            self.rtt_ms_mean = Some(round3(self.rtt_ms_sum / self.responses as f64));
        }
    }
}

/// The streaming analyzer behind [`analyze_protocol_log`].
pub struct ProtocolLogAnalyzer<'w> {
    opts: ProtocolLogOptions,
    scratch: Vec<u8>,
    lines_read: u64,
    lines_skipped: u64,
    records: u64,
    protocol_records: u64,
    error_records: u64,
    outside: u64,
    ts: TimestampCounts,
    span: Span,
    requests: RequestAccounting,
    /// MessageSet records (also the parsing threads', merged in).
    sets: MessageSetTally,
    timeouts: TimeoutSummary,
    /// The last `N request(s) timed out: disconnect` line's broker, N and time: the
    /// error callback's echo of it is the same event.
    last_disconnect: Option<(Option<String>, u64, Option<u64>)>,
    connect_failures: Vec<NameCount>,
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
            scratch: Vec::new(),
            lines_read: 0,
            lines_skipped: 0,
            records: 0,
            protocol_records: 0,
            error_records: 0,
            outside: 0,
            ts: TimestampCounts::default(),
            span: Span::default(),
            requests: RequestAccounting::default(),
            sets: MessageSetTally::new(opts.window_start, opts.window_end),
            timeouts: TimeoutSummary::default(),
            last_disconnect: None,
            connect_failures: Vec::new(),
            ex_produce_sent: Examples::default(),
            ex_produce_recv: Examples::default(),
            ex_timeouts: Examples::default(),
            slowest_produce: Slowest::default(),
            timeline: Timeline::disabled(),
        }
    }

    fn record_impl(&mut self, line_no: u64, line: &[u8], rec: &Record<'_>) {
        if self.sets.take(&rec.event, rec.timestamp) {
            return;
        }
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
        if !rec.event.is_protocol() {
            if rec.event.is_broker_error() {
                self.broker_error(line_no, line, rec, t);
            }
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

    /// librdkafka's error lines about requests and connections.
    fn broker_error(&mut self, line_no: u64, line: &[u8], rec: &Record<'_>, t: Option<f64>) {
        self.error_records += 1;
        let to = &mut self.timeouts;
        match rec.event {
            Event::RequestTimedOutError { in_queue, .. } => {
                to.request_errors_timed_out += 1;
                to.request_errors_in_queue += in_queue as u64;
                self.ex_timeouts.offer(line_no, line);
            }
            Event::TimedOutDisconnect { requests } => {
                let key = (
                    rec.broker.map(str::to_string),
                    requests,
                    t.map(f64::to_bits),
                );
                if self.last_disconnect.as_ref() != Some(&key) {
                    to.disconnects += 1;
                    to.disconnect_requests += requests;
                    self.ex_timeouts.offer(line_no, line);
                    self.last_disconnect = Some(key);
                }
            }
            Event::ConnectFailed { reason } => bump(&mut self.connect_failures, reason),
            _ => {}
        }
    }

    /// Close the analysis and build the report.
    pub fn finish(self, input: InputSummary) -> Result<ProtocolLogReport, AnalyzeError> {
        self.finish_with_series(input).map(|(report, _)| report)
    }

    /// [`finish`](Self::finish), also giving the rows kept by
    /// [`with_series`](Self::with_series).
    pub(crate) fn finish_with_series(
        mut self,
        input: InputSummary,
    ) -> Result<(ProtocolLogReport, Option<Collected>), AnalyzeError> {
        let sets = std::mem::take(&mut self.sets);
        self.records += sets.records;
        self.outside += sets.outside;
        self.span.merge(&sets.span);
        self.ts.merge(&sets.ts);
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
        let msgs_per_set = &sets.msgs_per_set;
        let messages_per_request = (!msgs_per_set.is_empty()).then(|| MessagesPerRequest {
            messagesets: msgs_per_set.len(),
            p50: msgs_per_set.quantile(0.5),
            mean: round3(msgs_per_set.mean()),
            max: msgs_per_set.max(),
            delivered: sets.delivered,
            errors: sets.errors,
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
                crate::librdkafka::requests::MAX_OUTSTANDING
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
        let (_, late) = self.timeline.finish()?;
        let collected = self.timeline.collected.take();
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
        let read = ReadEvidence {
            lines_read: self.lines_read,
            records: self.protocol_records
                + self.error_records
                + messages_per_request.as_ref().map_or(0, |m| m.messagesets),
            requests: &requests,
            messages_per_request: messages_per_request.as_ref(),
            large_messagesets: sets.large_sets,
            connect_failures: self.connect_failures.iter().map(|n| n.count).sum(),
        };
        diagnose_too_little(&mut diagnoses, &read);
        let report = ProtocolLogReport {
            tool: "analyze-protocol-log",
            lines_read: self.lines_read,
            lines_skipped: self.lines_skipped,
            records_recognised: self.records,
            protocol_records: self.protocol_records,
            error_records: self.error_records,
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
            connect_failures: self.connect_failures,
            diagnoses,
            not_computed,
            warnings,
        };
        Ok((report, collected))
    }
}

impl LogAnalyzer for ProtocolLogAnalyzer<'_> {
    fn max_line_bytes(&self) -> usize {
        pipeline::max_line_or_default(self.opts.max_line_bytes)
    }
    fn scratch(&mut self) -> &mut Vec<u8> {
        &mut self.scratch
    }
}

impl<'w> Timed<'w> for ProtocolLogAnalyzer<'w> {
    type Row = ProtocolRow;
    fn timeline_mut(&mut self) -> &mut Timeline<'w, ProtocolRow> {
        &mut self.timeline
    }
}

impl RecordSink for ProtocolLogAnalyzer<'_> {
    type Tally = MessageSetTally;

    fn tally(&self) -> MessageSetTally {
        MessageSetTally::new(self.opts.window_start, self.opts.window_end)
    }

    fn merge(&mut self, tally: MessageSetTally) {
        self.sets.merge(&tally);
    }

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
