//! The parsers of librdkafka's message bodies into [`Event`]s.
//!
//! Each format comes from librdkafka's source (v2.12.1, with the older shapes that
//! still turn up in the wild): `rdkafka_broker.c` (protocol), `rdkafka_fetcher.c`
//! (fetch), `rdkafka_msgset_writer.c` and `rdkafka_request.c` (msg). A parser starts
//! at its anchor word (`Sent `, `Received `, …) and must match the printf shape to
//! the end of its numbers, so an English sentence that happens to contain the
//! anchor is not taken for a record.

use super::event::{Event, EventOf};
use super::scan::{ascii, is_api_byte, is_topic_byte, Cur};

/// A parsed body: the event, where its text starts (before the anchor when a
/// `<topic> [<p>]: ` prefix belongs to it) and where the parse stopped.
pub(crate) struct Parsed<'a> {
    pub event: Event<'a>,
    pub start: usize,
    pub end: usize,
}

/// The anchors, in the order [`parse_at`] takes the pattern index.
pub(crate) const ANCHORS: &[&str] = &[
    "Sent ",
    "Received ",
    "Retrying ",
    "Timed out ",
    "Fetch ",
    "Topic ",
    "MessageSet with ",
    "Enqueue ",
    "request(s) timed out: disconnect",
    "Connect to ",
];

/// Parse the body whose anchor `ANCHORS[pattern]` starts at `at` in `line`.
pub(crate) fn parse_at(line: &[u8], pattern: usize, at: usize) -> Option<Parsed<'_>> {
    parse_at_known(line, pattern, at, None)
}

/// A `<topic> [<partition>]: ` prefix already parsed forward, ending where the
/// anchor starts: (topic, partition, where the topic starts). What
/// [`topic_partition_before`] would find there, so it need not scan the topic again.
type KnownPrefix<'a> = Option<(&'a str, i32, usize)>;

fn parse_at_known<'a>(
    line: &'a [u8],
    pattern: usize,
    at: usize,
    known: KnownPrefix<'a>,
) -> Option<Parsed<'a>> {
    let mut c = Cur::new(line, at + ANCHORS[pattern].len());
    let mut start = at;
    let event = match pattern {
        0 => parse_sent(&mut c)?,
        1 => parse_received(&mut c)?,
        2 => parse_retrying(&mut c)?,
        3 => match parse_timed_out(&mut c) {
            Some(ev) => ev,
            None => {
                let (ev, api_start, end) = timed_out_in_queue_after(line, at)?;
                c.i = end;
                start = api_start;
                ev
            }
        },
        4 => {
            let (ev, prefix_start) = parse_fetch(&mut c, line, at, known)?;
            start = prefix_start;
            ev
        }
        5 => parse_topic(&mut c)?,
        6 => {
            let (ev, prefix_start) = parse_messageset(&mut c, line, at, known)?;
            start = prefix_start;
            ev
        }
        7 => parse_enqueue(&mut c)?,
        8 => {
            let (requests, count_start) = count_before(line, at)?;
            after_prefix(line, count_start)?;
            start = count_start;
            word_ends(&c)?;
            reason_text(&mut c);
            Event::TimedOutDisconnect { requests }
        }
        9 => {
            after_prefix(line, at)?;
            parse_connect(&mut c)?
        }
        _ => return None,
    };
    Some(Parsed {
        event,
        start,
        end: c.i,
    })
}

/// Parse the body that starts exactly at `at` (the raw format's fast path, where
/// the message's start is known): an anchor word, or a `<topic> [<p>]: ` prefix
/// followed by one.
pub(crate) fn parse_body(line: &[u8], at: usize) -> Option<Parsed<'_>> {
    let body = &line[at..];
    // Dispatch on the first letter: most lines are Sent/Received.
    let candidates: &[usize] = match body.first() {
        Some(b'S') => &[0],
        Some(b'R') => &[1, 2],
        Some(b'T') => &[3, 5],
        Some(b'F') => &[4],
        Some(b'M') => &[6],
        Some(b'E') => &[7],
        _ => &[],
    };
    for &i in candidates {
        // Inline: the anchor is picked at run time, and `starts_with` was a `memcmp` call.
        if crate::engine::bytes_eq::starts_with_bytes(body, ANCHORS[i].as_bytes()) {
            return parse_at(line, i, at);
        }
    }
    // `<topic> [<p>]: ` then `Fetch backoff for`, `Produce MessageSet with` or
    // `MessageSet with`.
    let mut c = Cur::new(line, at);
    let Some((topic, partition)) = topic_partition(&mut c) else {
        return parse_error_body(line, at);
    };
    let digits_end = c.i - 1; // before the `]`
    c.lit(b": ")?;
    // The prefix as `topic_partition_before` reads it backward from the anchor: the
    // same topic when no topic byte precedes it, the same partition when it has at
    // most 10 digits (the backward reader's limit; longer ones are left to it).
    let digits = line[..digits_end]
        .iter()
        .rev()
        .take_while(|b| b.is_ascii_digit())
        .count();
    let alone = at == 0 || !is_topic_byte(line[at - 1]);
    let known = (alone && digits <= 10).then_some((topic, partition, at));
    let rest = c.rest();
    if rest.starts_with(b"Fetch ") {
        parse_at_known(line, 4, c.i, known)
    } else if rest.starts_with(b"Produce MessageSet with ") {
        parse_at_known(line, 6, c.i + b"Produce ".len(), known)
    } else if rest.starts_with(b"MessageSet with ") {
        parse_at_known(line, 6, c.i, known)
    } else {
        None
    }
}

/// The error bodies at a known start (the raw format's): `<n> request(s) timed out:
/// disconnect`, `Connect to <address> failed: <reason>`, `<Api>Request failed: Local:
/// Timed out[ in queue| in transmit queue]`. Tried only after the usual bodies.
#[cold]
fn parse_error_body(line: &[u8], at: usize) -> Option<Parsed<'_>> {
    let mut c = Cur::new(line, at);
    let event = match c.peek()? {
        b'0'..=b'9' => {
            let requests = c.uint()?;
            c.lit(b" ")?;
            c.lit(ANCHORS[8].as_bytes())?;
            word_ends(&c)?;
            reason_text(&mut c);
            Event::TimedOutDisconnect { requests }
        }
        b'C' => {
            c.lit(ANCHORS[9].as_bytes())?;
            parse_connect(&mut c)?
        }
        _ => {
            let api = api_name(&mut c, b"Request")?;
            c.lit(b" failed: Local: Timed out")?;
            let in_queue = c.opt(b" in queue") || c.opt(b" in transmit queue");
            Event::RequestTimedOutError {
                api: Some(api),
                in_queue,
            }
        }
    };
    Some(Parsed {
        event,
        start: at,
        end: c.i,
    })
}

/// The cursor is at a word's end: not inside a longer word (`disconnect`, not
/// `disconnected`).
fn word_ends(c: &Cur<'_>) -> Option<()> {
    (!c.peek().is_some_and(|b| b.is_ascii_alphanumeric())).then_some(())
}

/// The body at `start` follows `: `, as librdkafka's `<broker>: ` prefix ends: not a log
/// line quoted in prose (a ticket's description, a table of them).
fn after_prefix(line: &[u8], start: usize) -> Option<()> {
    (start >= 2 && &line[start - 2..start] == b": ").then_some(())
}

/// `<n> ` just before `at`, at a word's start: the number and where it starts.
fn count_before(line: &[u8], at: usize) -> Option<(u64, usize)> {
    let end = at.checked_sub(1).filter(|&e| line[e] == b' ')?;
    let digits = line[..end]
        .iter()
        .rev()
        .take_while(|b| b.is_ascii_digit())
        .count();
    let start = end - digits;
    if digits == 0 || digits > 9 || (start > 0 && line[start - 1].is_ascii_alphanumeric()) {
        return None;
    }
    Some((ascii(&line[start..end]).parse().ok()?, start))
}

/// `Connect to <address> failed: <reason>`, after its anchor.
fn parse_connect<'a>(c: &mut Cur<'a>) -> Option<Event<'a>> {
    c.until(b" failed: ", 300)?;
    let reason = reason_text(c);
    // librdkafka appends ` (after <n>ms in state <s>)`; the reason is what precedes it.
    let reason = reason.split(" (after ").next().unwrap_or(reason);
    (!reason.is_empty()).then_some(Event::ConnectFailed { reason })
}

/// REQERR's `Timed out in queue` / `Timed out in transmit queue` after `failed: Local: `,
/// the `Timed out ` anchor at `at`: the event, where its api word starts and where the
/// parse stopped. The api is the word before ` failed` when it is `<Api>Request`; a line
/// hard-wrapped inside that word leaves it unknown.
fn timed_out_in_queue_after(line: &[u8], at: usize) -> Option<(Event<'_>, usize, usize)> {
    const FAILED: &[u8] = b" failed: Local: ";
    let failed = at.checked_sub(FAILED.len())?;
    if &line[failed..at] != FAILED {
        return None;
    }
    let mut c = Cur::new(line, at + ANCHORS[3].len());
    if !(c.opt(b"in queue") || c.opt(b"in transmit queue")) || c.peek() != Some(b':') {
        return None;
    }
    let word = line[..failed]
        .iter()
        .rev()
        .take_while(|&&b| is_api_byte(b))
        .count();
    let word_start = failed - word;
    let mut w = Cur::new(line, word_start);
    let api = api_name(&mut w, b"Request").filter(|_| w.i == failed);
    // After librdkafka's `<broker>: `, or at a hard-wrapped line's start.
    let wrapped = line[..word_start].iter().all(|b| b.is_ascii_whitespace());
    if !wrapped {
        after_prefix(line, word_start)?;
    }
    let event = Event::RequestTimedOutError {
        api,
        in_queue: true,
    };
    Some((event, if word > 0 { word_start } else { failed + 1 }, c.i))
}

/// `<Api>Request` / `<Api>Response`: the api name without its suffix. (Always inlined:
/// the suffix is then a constant, and its comparison a few loads, not a `memcmp` call.)
#[inline(always)]
fn api_name<'a>(c: &mut Cur<'a>, suffix: &[u8]) -> Option<&'a str> {
    let save = c.i;
    let word = c.take_while(is_api_byte);
    if word.len() > suffix.len() && word.ends_with(suffix) {
        Some(ascii(&word[..word.len() - suffix.len()]))
    } else {
        c.i = save;
        None
    }
}

/// `v<N>, ` as librdkafka ≥ 0.9 prints before the sizes; absent in older versions.
fn version(c: &mut Cur<'_>) -> Option<i32> {
    let save = c.i;
    if c.lit(b"v").is_some() {
        if let Some(v) = c.int() {
            if c.lit(b", ").is_some() {
                return i32::try_from(v).ok();
            }
        }
    }
    c.i = save;
    None
}

/// How a `Sent`/`Received` body ends after its `CorrId `: the only part of such a line
/// that differs from the line before (the block front end remembers the rest; see
/// [`corr_id_tail_at`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum CorrIdTail {
    /// `<id>)`: `Sent …Request` and `Sent partial …Request`.
    Sent,
    /// `<id>, rtt <ms>ms)`: `Received …Response` (`rtt_ms` 0 for `Sent`).
    Received,
}

/// The body's end from its CorrId's digits on: the CorrId and the round trip.
#[inline]
fn corr_id_tail(c: &mut Cur<'_>, tail: CorrIdTail) -> Option<(i32, f64)> {
    let corr_id = c.i32()?;
    match tail {
        CorrIdTail::Sent => {
            c.lit(b")")?;
            Some((corr_id, 0.0))
        }
        CorrIdTail::Received => {
            c.lit(b", rtt ")?;
            let rtt_ms = c.float()?;
            c.lit(b"ms)")?;
            Some((corr_id, rtt_ms))
        }
    }
}

/// [`corr_id_tail`] at `at` in `line`: the CorrId, the round trip and where the body
/// ends; `None` where the parse of the whole body would fail there.
pub(crate) fn corr_id_tail_at(
    line: &[u8],
    at: usize,
    tail: CorrIdTail,
) -> Option<(i32, f64, usize)> {
    let mut c = Cur::new(line, at);
    let (id, rtt) = corr_id_tail(&mut c, tail)?;
    Some((id, rtt, c.i))
}

fn parse_sent<'a>(c: &mut Cur<'a>) -> Option<Event<'a>> {
    if c.opt(b"partial ") {
        let api = api_name(c, b"Request")?;
        c.lit(b" (")?;
        let version = version(c);
        let done = c.uint()?;
        c.lit(b"+")?;
        let chunk = c.uint()?;
        c.lit(b"/")?;
        let total = c.uint()?;
        c.lit(b" bytes, CorrId ")?;
        let (corr_id, _) = corr_id_tail(c, CorrIdTail::Sent)?;
        return Some(Event::SentPartial {
            api,
            version,
            done,
            chunk,
            total,
            corr_id,
        });
    }
    let api = api_name(c, b"Request")?;
    c.lit(b" (")?;
    let version = version(c);
    let bytes = c.uint()?;
    c.lit(b" bytes")?;
    let offset = if c.opt(b" @ ") { c.uint()? } else { 0 };
    c.lit(b", CorrId ")?;
    let (corr_id, _) = corr_id_tail(c, CorrIdTail::Sent)?;
    Some(Event::Sent {
        api,
        version,
        bytes,
        offset,
        corr_id,
    })
}

fn parse_received<'a>(c: &mut Cur<'a>) -> Option<Event<'a>> {
    let api = api_name(c, b"Response")?;
    c.lit(b" (")?;
    let version = version(c);
    let bytes = c.uint()?;
    c.lit(b" bytes, CorrId ")?;
    let (corr_id, rtt_ms) = corr_id_tail(c, CorrIdTail::Received)?;
    Some(Event::Received {
        api,
        version,
        bytes,
        corr_id,
        rtt_ms,
    })
}

fn parse_retrying<'a>(c: &mut Cur<'a>) -> Option<Event<'a>> {
    let api = api_name(c, b"Request")?;
    c.lit(b" (")?;
    version(c);
    let bytes = c.uint()?;
    c.lit(b" bytes, retry ")?;
    let retry = c.u32()?;
    c.lit(b"/")?;
    let max_retries = c.u32()?;
    let prev_corr_id = if c.opt(b", prev CorrId ") {
        Some(c.i32()?)
    } else {
        None
    };
    c.lit(b")")?;
    let backoff_ms = if c.opt(b" in ") {
        let ms = c.uint()?;
        c.lit(b"ms")?;
        Some(ms)
    } else {
        None
    };
    Some(Event::Retrying {
        api,
        bytes,
        retry,
        max_retries,
        prev_corr_id,
        backoff_ms,
    })
}

fn parse_timed_out<'a>(c: &mut Cur<'a>) -> Option<Event<'a>> {
    if c.peek().is_some_and(|b| b.is_ascii_digit()) {
        // Summary line, in its 1.x+ shape or the older `a+b[+c] requests` ones.
        let first = c.uint()?;
        if c.opt(b" in-flight, ") {
            let retry_queued = c.uint()?;
            c.lit(b" retry-queued, ")?;
            let out_queue = c.uint()?;
            c.lit(b" out-queue, ")?;
            let partially_sent = c.uint()?;
            c.lit(b" partially-sent requests")?;
            return Some(Event::TimedOutSummary {
                in_flight: first,
                retry_queued,
                out_queue,
                partially_sent,
            });
        }
        let mut others = [0u64; 2];
        let mut n = 0;
        while n < 2 && c.opt(b"+") {
            others[n] = c.uint()?;
            n += 1;
        }
        c.lit(b" requests")?;
        // 0.9: waiting+queued; 0.11: waiting+retry+queued.
        let (retry_queued, out_queue) = match n {
            2 => (others[0], others[1]),
            1 => (0, others[0]),
            _ => (0, 0),
        };
        return Some(Event::TimedOutSummary {
            in_flight: first,
            retry_queued,
            out_queue,
            partially_sent: 0,
        });
    }
    let api = api_name(c, b"Request")?;
    c.lit(b" ")?;
    let queue = ascii(c.until(b" (after ", 64)?);
    let after_ms = c.uint()?;
    c.lit(b"ms, timeout #")?;
    c.uint()?;
    c.lit(b")")?;
    let mut held_back_by = None;
    let mut held_back_by_blocking = false;
    if c.opt(b": possibly held back by preceeding") {
        held_back_by_blocking = c.opt(b" blocking");
        c.lit(b" ")?;
        held_back_by = Some(api_name(c, b"Request")?);
        c.opt(b" with timeout in ");
        if c.int().is_some() {
            c.opt(b"ms");
        }
    }
    Some(Event::TimedOutRequest {
        api,
        queue: if queue.is_ascii() { queue } else { "" },
        after_ms,
        held_back_by,
        held_back_by_blocking,
    })
}

/// `<topic> [<partition>]` forward from the cursor.
fn topic_partition<'a>(c: &mut Cur<'a>) -> Option<(&'a str, i32)> {
    let save = c.i;
    let topic = c.take_topic();
    if topic.is_empty() || c.lit(b" [").is_none() {
        c.i = save;
        return None;
    }
    let Some(p) = c.i32() else {
        c.i = save;
        return None;
    };
    if c.lit(b"]").is_none() {
        c.i = save;
        return None;
    }
    Some((ascii(topic), p))
}

/// `<topic> [<partition>]: ` ending right before `at`; returns it and where it starts.
fn topic_partition_before(line: &[u8], at: usize) -> Option<(&str, i32, usize)> {
    let head = &line[..at];
    let head = head.strip_suffix(b"]: ")?;
    let mut digits = 0;
    while digits < head.len() && head[head.len() - 1 - digits].is_ascii_digit() {
        digits += 1;
    }
    if digits == 0 || digits > 10 {
        return None;
    }
    let num_start = head.len() - digits;
    let mut p_start = num_start;
    if p_start > 0 && head[p_start - 1] == b'-' {
        p_start -= 1;
    }
    let head2 = head[..p_start].strip_suffix(b" [")?;
    let mut tlen = 0;
    while tlen < head2.len() && is_topic_byte(head2[head2.len() - 1 - tlen]) {
        tlen += 1;
    }
    if tlen == 0 {
        return None;
    }
    let topic_start = head2.len() - tlen;
    let partition: i32 = ascii(&head[p_start..]).parse().ok()?;
    Some((ascii(&head2[topic_start..]), partition, topic_start))
}

/// A free-text reason at the end of a message, up to the end of the line or to what
/// a wrapper put after the message (a closing quote of a JSON string).
fn reason_text<'a>(c: &mut Cur<'a>) -> &'a str {
    let rest = c.rest();
    // The first 200 bytes are all it keeps: the search need not go further.
    let head = &rest[..rest.len().min(200)];
    let n = crate::engine::bytes_eq::find_either(head, b'"', b'\\').unwrap_or(head.len());
    let text = &rest[..n];
    let text = match std::str::from_utf8(text) {
        Ok(s) => s,
        Err(e) => std::str::from_utf8(&text[..e.valid_up_to()]).unwrap_or(""),
    };
    c.i += text.len();
    text.trim_end()
}

fn parse_fetch<'a>(
    c: &mut Cur<'a>,
    line: &'a [u8],
    at: usize,
    known: KnownPrefix<'a>,
) -> Option<(Event<'a>, usize)> {
    if c.opt(b"backoff for ") {
        let backoff_ms = c.uint()?;
        c.lit(b"ms")?;
        let reason = if c.opt(b": ") {
            Some(reason_text(c))
        } else {
            None
        };
        if let Some((topic, partition, start)) = known.or_else(|| topic_partition_before(line, at))
        {
            return Some((
                EventOf::PartitionFetchBackoff {
                    topic,
                    partition,
                    backoff_ms,
                    reason: reason.filter(|r| !r.is_empty()),
                },
                start,
            ));
        }
        return Some((
            EventOf::BrokerFetchBackoff {
                backoff_ms,
                reason: reason.filter(|r| !r.is_empty()),
            },
            at,
        ));
    }
    if c.opt(b"topic ") {
        let (topic, partition) = topic_partition(c)?;
        c.lit(b" at offset ")?;
        return Some((Event::FetchTopic { topic, partition }, at));
    }
    let partitions = c.uint()?;
    c.lit(b"/")?;
    let active = c.uint()?;
    c.lit(b"/")?;
    let total = c.uint()?;
    c.lit(b" toppar(s)")?;
    Some((
        Event::FetchToppars {
            partitions,
            active,
            total,
        },
        at,
    ))
}

fn parse_topic<'a>(c: &mut Cur<'a>) -> Option<Event<'a>> {
    let (topic, partition) = topic_partition(c)?;
    if c.opt(b" MessageSet size ") {
        let size = c.int()?;
        c.lit(b", error ")?;
        c.opt(b"\\");
        c.lit(b"\"")?;
        let rest = c.rest();
        let n = rest
            .iter()
            .take(200)
            .position(|&b| b == b'"' || b == b'\\')?;
        let error = std::str::from_utf8(&rest[..n]).ok()?;
        c.i += n;
        return Some(Event::FetchMessageSet {
            topic,
            partition,
            size,
            error,
        });
    }
    c.lit(b" in state ")?;
    let state = ascii(c.take_while(|b| b.is_ascii_alphanumeric() || b == b'-'));
    c.lit(b" at ")?;
    // The position may hold parentheses ("offset 5 (leader epoch 3)"), so find the
    // queue figures by their own words.
    let msgs_at =
        crate::engine::bytes_eq::find_bytes(&c.rest()[..c.rest().len().min(160)], b" msgs, ")?;
    let head = &c.rest()[..msgs_at];
    let open = crate::engine::bytes_eq::rfind_byte(head, b'(')?;
    let mut q = Cur::new(head, open + 1);
    let queued_msgs = q.uint()?;
    q.lit(b"/")?;
    let queued_min_msgs = q.uint()?;
    if q.i != head.len() {
        return None;
    }
    c.i += msgs_at + b" msgs, ".len();
    let queued_kb = c.uint()?;
    c.lit(b"/")?;
    let queued_max_kb = c.uint()?;
    c.lit(b" kb queued, opv ")?;
    c.int()?;
    c.lit(b") is ")?;
    let (fetchable, reason) = if c.opt(b"fetchable") {
        (true, "")
    } else {
        c.lit(b"not fetchable: ")?;
        (false, reason_text(c))
    };
    Some(Event::FetchDecide {
        topic,
        partition,
        state,
        queued_msgs,
        queued_min_msgs,
        queued_kb,
        queued_max_kb,
        fetchable,
        reason,
    })
}

fn parse_messageset<'a>(
    c: &mut Cur<'a>,
    line: &'a [u8],
    at: usize,
    known: KnownPrefix<'a>,
) -> Option<(Event<'a>, usize)> {
    let produce = line[..at].ends_with(b"Produce ");
    let tp_end = if produce { at - b"Produce ".len() } else { at };
    let (topic, partition, start) = match known {
        Some(k) => k,
        None => topic_partition_before(line, tp_end)?,
    };
    let messages = c.uint()?;
    c.lit(b" message(s) (")?;
    if produce {
        let bytes = c.uint()?;
        c.lit(b" bytes")?;
        return Some((
            EventOf::ProduceMessageSet {
                topic,
                partition,
                messages,
                bytes,
            },
            start,
        ));
    }
    c.until(b")", 64)?;
    if c.opt(b" delivered") {
        return Some((
            EventOf::MessageSetDelivered {
                topic,
                partition,
                messages,
            },
            start,
        ));
    }
    c.lit(b" encountered error: ")?;
    let error = reason_text(c);
    let error = error.split(" (actions").next().unwrap_or(error);
    Some((
        Event::MessageSetError {
            topic,
            partition,
            messages,
            error,
        },
        start,
    ))
}

fn parse_enqueue<'a>(c: &mut Cur<'a>) -> Option<Event<'a>> {
    let messages = c.uint()?;
    c.lit(b" message(s) (")?;
    let bytes = c.uint()?;
    c.lit(b" bytes, ")?;
    c.uint()?;
    c.lit(b" ops) on ")?;
    let (topic, partition) = topic_partition(c)?;
    c.lit(b" fetch queue")?;
    let queue_len = if c.opt(b" (qlen ") { c.uint() } else { None };
    Some(Event::Enqueue {
        topic,
        partition,
        messages,
        bytes,
        queue_len,
    })
}
