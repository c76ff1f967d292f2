//! The librdkafka message bodies the analyzers understand: one event per body, generic
//! over how it holds its strings. Their parsers are in [`super::body`].
//!
//! Each format comes from librdkafka's source (v2.12.1, with the older shapes that
//! still turn up in the wild): `rdkafka_broker.c` (protocol), `rdkafka_fetcher.c`
//! (fetch), `rdkafka_msgset_writer.c` and `rdkafka_request.c` (msg).

/// One librdkafka debug message, parsed, generic over how it holds its strings:
/// [`Event`] borrows them from the line; the analyzers' parallel reader sends
/// byte spans between threads instead.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum EventOf<S> {
    /// `Sent <Api>Request (v<V>, <bytes> bytes @ <offset>, CorrId <id>)`; `offset` > 0
    /// completes a request first sent in part. Old versions omit `v<V>, ` and `@ …`.
    Sent {
        api: S,
        version: Option<i32>,
        bytes: u64,
        offset: u64,
        corr_id: i32,
    },
    /// `Sent partial <Api>Request (v<V>, <done>+<chunk>/<total> bytes, CorrId <id>)`.
    SentPartial {
        api: S,
        version: Option<i32>,
        done: u64,
        chunk: u64,
        total: u64,
        corr_id: i32,
    },
    /// `Received <Api>Response (v<V>, <bytes> bytes, CorrId <id>, rtt <ms>ms)`.
    Received {
        api: S,
        version: Option<i32>,
        bytes: u64,
        corr_id: i32,
        rtt_ms: f64,
    },
    /// `Retrying <Api>Request (v<V>, <bytes> bytes, retry <n>/<max>, prev CorrId <id>) in <ms>ms`.
    Retrying {
        api: S,
        bytes: u64,
        retry: u32,
        max_retries: u32,
        prev_corr_id: Option<i32>,
        backoff_ms: Option<u64>,
    },
    /// REQTMOUT: `Timed out <Api>Request <where> (after <ms>ms, timeout #<n>)[: possibly
    /// held back by preceeding[ blocking] <Api>Request with timeout in <ms>ms]`.
    TimedOutRequest {
        api: S,
        queue: S,
        after_ms: u64,
        held_back_by: Option<S>,
        held_back_by_blocking: bool,
    },
    /// REQTMOUT summary: `Timed out <i> in-flight, <r> retry-queued, <o> out-queue,
    /// <p> partially-sent requests` (old: `Timed out <a>+<b>[+<c>] requests`).
    TimedOutSummary {
        in_flight: u64,
        retry_queued: u64,
        out_queue: u64,
        partially_sent: u64,
    },
    /// REQERR (debug=broker; older versions log it at INFO): `<Api>Request failed: Local:
    /// Timed out[ in queue| in transmit queue]: [explicit ]actions …` (rdkafka_request.c):
    /// a request timed out in flight, or in a queue before it was sent (`in_queue`). A
    /// hard-wrapped line can lose the api (`None`).
    RequestTimedOutError { api: Option<S>, in_queue: bool },
    /// FAIL at LOG_ERR, needing no debug: `<n> request(s) timed out: disconnect[ (…)]`
    /// (rd_kafka_broker_timeout_scan): the connection taken down after `n` timeouts since
    /// it last failed.
    TimedOutDisconnect { requests: u64 },
    /// FAIL at LOG_ERR: `Connect to <address> failed: <reason>` (rdkafka_transport.c).
    ConnectFailed { reason: S },
    /// msg: `<topic> [<p>]: Produce MessageSet with <n> message(s) (<bytes> bytes, …)`.
    ProduceMessageSet {
        topic: S,
        partition: i32,
        messages: u64,
        bytes: u64,
    },
    /// msg: `<topic> [<p>]: MessageSet with <n> message(s) (MsgId …) delivered`.
    MessageSetDelivered {
        topic: S,
        partition: i32,
        messages: u64,
    },
    /// msg: `<topic> [<p>]: MessageSet with <n> message(s) (…) encountered error: <err> …`.
    MessageSetError {
        topic: S,
        partition: i32,
        messages: u64,
        error: S,
    },
    /// fetch: `<topic> [<p>]: Fetch backoff for <ms>ms[: <reason>]` (facility BACKOFF).
    PartitionFetchBackoff {
        topic: S,
        partition: i32,
        backoff_ms: u64,
        reason: Option<S>,
    },
    /// fetch, broker-wide: `Fetch backoff for <ms>ms: <error>` (BACKOFF, after a failed
    /// Fetch) or `Fetch backoff for <ms>ms` (FETCH: the broker thread waits for the
    /// earliest partition backoff to end; `reason` is `None`).
    BrokerFetchBackoff { backoff_ms: u64, reason: Option<S> },
    /// fetch-decide: `Topic <t> [<p>] in state <s> at <pos> (<q>/<min> msgs, <kb>/<max> kb
    /// queued, opv <v>) is fetchable` / `is not fetchable: <reason>`.
    FetchDecide {
        topic: S,
        partition: i32,
        state: S,
        queued_msgs: u64,
        queued_min_msgs: u64,
        queued_kb: u64,
        queued_max_kb: u64,
        fetchable: bool,
        reason: S,
    },
    /// `Fetch topic <t> [<p>] at offset <o> …`: the partition goes into the next Fetch.
    FetchTopic { topic: S, partition: i32 },
    /// `Fetch <n>/<active>/<all> toppar(s)`: a FetchRequest is built for n partitions.
    FetchToppars {
        partitions: u64,
        active: u64,
        total: u64,
    },
    /// `Topic <t> [<p>] MessageSet size <n>, error "<e>", MaxOffset <h>, …`: one
    /// partition of a FetchResponse.
    FetchMessageSet {
        topic: S,
        partition: i32,
        size: i64,
        error: S,
    },
    /// CONSUME: `Enqueue <n> message(s) (<bytes> bytes, <ops> ops) on <t> [<p>] fetch queue (qlen <q>, …)`.
    Enqueue {
        topic: S,
        partition: i32,
        messages: u64,
        bytes: u64,
        queue_len: Option<u64>,
    },
}

/// A parsed message whose strings borrow from its line.
pub type Event<'a> = EventOf<&'a str>;

impl<S> EventOf<S> {
    /// A short name of the event kind (for counts and tests).
    pub fn kind(&self) -> &'static str {
        match self {
            EventOf::Sent { .. } => "sent",
            EventOf::SentPartial { .. } => "sent-partial",
            EventOf::Received { .. } => "received",
            EventOf::Retrying { .. } => "retrying",
            EventOf::TimedOutRequest { .. } => "timed-out-request",
            EventOf::TimedOutSummary { .. } => "timed-out-summary",
            EventOf::RequestTimedOutError { .. } => "request-timed-out-error",
            EventOf::TimedOutDisconnect { .. } => "timed-out-disconnect",
            EventOf::ConnectFailed { .. } => "connect-failed",
            EventOf::ProduceMessageSet { .. } => "produce-messageset",
            EventOf::MessageSetDelivered { .. } => "messageset-delivered",
            EventOf::MessageSetError { .. } => "messageset-error",
            EventOf::PartitionFetchBackoff { .. } => "partition-fetch-backoff",
            EventOf::BrokerFetchBackoff { .. } => "broker-fetch-backoff",
            EventOf::FetchDecide { .. } => "fetch-decide",
            EventOf::FetchTopic { .. } => "fetch-topic",
            EventOf::FetchToppars { .. } => "fetch-toppars",
            EventOf::FetchMessageSet { .. } => "fetch-messageset",
            EventOf::Enqueue { .. } => "enqueue",
        }
    }

    /// True for the events `debug=protocol` produces.
    pub fn is_protocol(&self) -> bool {
        matches!(
            self,
            EventOf::Sent { .. }
                | EventOf::SentPartial { .. }
                | EventOf::Received { .. }
                | EventOf::Retrying { .. }
                | EventOf::TimedOutRequest { .. }
                | EventOf::TimedOutSummary { .. }
        )
    }

    /// True for librdkafka's error lines about requests and connections (REQERR timeouts,
    /// a disconnect after timeouts, a failed connect): the analyzers read them without any
    /// `debug=`, apart from the request accounting.
    pub fn is_broker_error(&self) -> bool {
        matches!(
            self,
            EventOf::RequestTimedOutError { .. }
                | EventOf::TimedOutDisconnect { .. }
                | EventOf::ConnectFailed { .. }
        )
    }
}

impl<S> EventOf<S> {
    /// The same event with every string turned into `T` by `f`.
    pub fn map<T>(self, mut f: impl FnMut(S) -> T) -> EventOf<T> {
        use EventOf::*;
        match self {
            Sent {
                api,
                version,
                bytes,
                offset,
                corr_id,
            } => Sent {
                api: f(api),
                version,
                bytes,
                offset,
                corr_id,
            },
            SentPartial {
                api,
                version,
                done,
                chunk,
                total,
                corr_id,
            } => SentPartial {
                api: f(api),
                version,
                done,
                chunk,
                total,
                corr_id,
            },
            Received {
                api,
                version,
                bytes,
                corr_id,
                rtt_ms,
            } => Received {
                api: f(api),
                version,
                bytes,
                corr_id,
                rtt_ms,
            },
            Retrying {
                api,
                bytes,
                retry,
                max_retries,
                prev_corr_id,
                backoff_ms,
            } => Retrying {
                api: f(api),
                bytes,
                retry,
                max_retries,
                prev_corr_id,
                backoff_ms,
            },
            TimedOutRequest {
                api,
                queue,
                after_ms,
                held_back_by,
                held_back_by_blocking,
            } => TimedOutRequest {
                api: f(api),
                queue: f(queue),
                after_ms,
                held_back_by: held_back_by.map(&mut f),
                held_back_by_blocking,
            },
            TimedOutSummary {
                in_flight,
                retry_queued,
                out_queue,
                partially_sent,
            } => TimedOutSummary {
                in_flight,
                retry_queued,
                out_queue,
                partially_sent,
            },
            RequestTimedOutError { api, in_queue } => RequestTimedOutError {
                api: api.map(&mut f),
                in_queue,
            },
            TimedOutDisconnect { requests } => TimedOutDisconnect { requests },
            ConnectFailed { reason } => ConnectFailed { reason: f(reason) },
            ProduceMessageSet {
                topic,
                partition,
                messages,
                bytes,
            } => ProduceMessageSet {
                topic: f(topic),
                partition,
                messages,
                bytes,
            },
            MessageSetDelivered {
                topic,
                partition,
                messages,
            } => MessageSetDelivered {
                topic: f(topic),
                partition,
                messages,
            },
            MessageSetError {
                topic,
                partition,
                messages,
                error,
            } => MessageSetError {
                topic: f(topic),
                partition,
                messages,
                error: f(error),
            },
            PartitionFetchBackoff {
                topic,
                partition,
                backoff_ms,
                reason,
            } => PartitionFetchBackoff {
                topic: f(topic),
                partition,
                backoff_ms,
                reason: reason.map(&mut f),
            },
            BrokerFetchBackoff { backoff_ms, reason } => BrokerFetchBackoff {
                backoff_ms,
                reason: reason.map(&mut f),
            },
            FetchDecide {
                topic,
                partition,
                state,
                queued_msgs,
                queued_min_msgs,
                queued_kb,
                queued_max_kb,
                fetchable,
                reason,
            } => FetchDecide {
                topic: f(topic),
                partition,
                state: f(state),
                queued_msgs,
                queued_min_msgs,
                queued_kb,
                queued_max_kb,
                fetchable,
                reason: f(reason),
            },
            FetchTopic { topic, partition } => FetchTopic {
                topic: f(topic),
                partition,
            },
            FetchToppars {
                partitions,
                active,
                total,
            } => FetchToppars {
                partitions,
                active,
                total,
            },
            FetchMessageSet {
                topic,
                partition,
                size,
                error,
            } => FetchMessageSet {
                topic: f(topic),
                partition,
                size,
                error: f(error),
            },
            Enqueue {
                topic,
                partition,
                messages,
                bytes,
                queue_len,
            } => Enqueue {
                topic: f(topic),
                partition,
                messages,
                bytes,
                queue_len,
            },
        }
    }
}
