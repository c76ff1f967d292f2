//! The consumer's diagnoses: naps on the fetch queue backoff, the fetcher or the
//! application as the limit, lag growing, and the group's rebalances.

use serde_json::json;

use super::context::{summ, Context};
use super::entries::{
    CONSUMER_LAG_GROWING, CONSUMER_REBALANCES, FETCH_QUEUE_BACKOFF, FETCH_QUEUE_EMPTY_LAG_GROWING,
    FETCH_QUEUE_FULL_LAG_GROWING,
};
use super::held::Held;
use super::observe::Diagnoser;
use super::rules;
use super::thresholds::FETCHER_BUSY_MAX;
use crate::stats::report::StatsDiagnosis;
use crate::stats::stat::round_sig;

/// What the consumer's diagnoses share (see [`Diagnoser::consumer_signs`]).
#[derive(Clone, Copy)]
pub(super) struct ConsumerSigns {
    idle: u64,
    cv: Option<f64>,
    rx_mean: f64,
    /// Starved intervals that received (almost) nothing.
    naps: u64,
    lag_first: f64,
    lag_last: f64,
    lag_grows: bool,
    lag_field: &'static str,
}

impl Diagnoser {
    /// What the consumer's diagnoses read of the series: idle and nap intervals, the
    /// receive rate, and the lag (first, last, growing, and which field it is).
    pub(super) fn consumer_signs(&self, cx: &Context<'_>) -> ConsumerSigns {
        let t = cx.t;
        let acc = cx.acc;
        let idle = acc.idle_intervals(t.burst_idle_share);
        let cv = acc.rx_msgs_per_s.cv();
        let rx_mean = acc.rx_msgs_per_s.mean().unwrap_or(0.0);
        // Naps: starved intervals that received (almost) nothing.
        let naps = if rx_mean > 0.0 {
            self.starved_rx.count_below(t.burst_idle_share * rx_mean)
        } else {
            0
        };
        let lag_first = acc.lag_total.first().unwrap_or(0.0);
        let lag_last = acc.lag_total.last().unwrap_or(0.0);
        let lag_grows = rules::lag_growing(lag_first, lag_last, acc.lag_total.slope_per_s(), t);
        let lag_field = cx.track.lag_field.unwrap_or("none");
        ConsumerSigns {
            idle,
            cv,
            rx_mean,
            naps,
            lag_first,
            lag_last,
            lag_grows,
            lag_field,
        }
    }

    /// fetch-queue-backoff: fetch queues reaching queued.min.messages, then naps.
    pub(super) fn fetch_queue_backoff(
        &self,
        cx: &Context<'_>,
        signs: &ConsumerSigns,
        out: &mut Vec<StatsDiagnosis>,
    ) {
        let acc = cx.acc;
        let ConsumerSigns {
            idle,
            cv,
            rx_mean,
            naps,
            lag_field,
            ..
        } = *signs;
        // The queues seen full and then naps is the direct signature; a fetcher that barely
        // fetches with data waiting and room in the queues is the same backoff caught between
        // two samples of the queue.
        if !(self.fetch_full.held > 0 && naps > 0) && self.fetcher_naps.held > 0 {
            return self.fetcher_backoff(cx, signs, out);
        }
        if self.fetch_full.held > 0 && naps > 0 {
            let parts = acc.full_partitions(cx.track);
            let mut d = cx.base(
                &FETCH_QUEUE_BACKOFF,
                format!(
                    "the consumer naps: fetch queues reach queued.min.messages ({}), then stay \
                     empty with messages waiting ({} of {} intervals received almost nothing)",
                    cx.config.queued_min_messages.value,
                    naps,
                    acc.rx_msgs_per_s.count()
                ),
                &self.fetch_full,
            );
            d.partitions = parts;
            d.evidence = json!({
                "queued_min_messages": cx.setting(cx.config.queued_min_messages),
                "queued_max_messages_kbytes": cx.setting(cx.config.queued_max_messages_kbytes),
                "fetch_queue_backoff_ms": cx.setting(cx.config.fetch_queue_backoff_ms),
                "intervals_with_a_full_queue": self.fetch_full.held,
                "intervals_starved": self.starved.held,
                "nap_intervals": naps,
                "idle_intervals": idle,
                "receive_rate_cv": cv.map(round_sig),
                "messages_per_s_mean": round_sig(rx_mean),
                "messages_per_s_max": acc.rx_msgs_per_s.max().map(round_sig),
                "lag_messages_p50": acc.lag_total.median().map(round_sig),
                "lag_field": lag_field,
            });
            d.cause = "When a partition's local fetch queue reaches queued.min.messages (or \
                       queued.max.messages.kbytes), librdkafka stops fetching it for \
                       fetch.queue.backoff.ms (1000 ms by default) while the application \
                       drains the queue in milliseconds: the consumer then naps with an empty \
                       queue and messages waiting on the broker, and the receive rate comes in \
                       bursts. The post: 389k msg/s at the default, 1.48M at 10 ms."
                .into();
            d.fix = "fetch.queue.backoff.ms=10 (librdkafka 2.2+; 0 spins the broker thread), \
                     or a larger queued.min.messages."
                .into();
            d.cannot_tell = Some(
                "Statistics sample the queues once per interval, so they show the signature, \
                 not the naps themselves: a debug=fetch log (analyze-fetch-log: 'Fetch backoff \
                 for 1000ms: Local: Queue full') shows each one."
                    .into(),
            );
            out.push(d);
        }
    }

    /// fetch-queue-backoff, seen in the fetcher itself: it fetched for at most a fifth of an
    /// interval while messages waited on the broker and the queues had room.
    fn fetcher_backoff(
        &self,
        cx: &Context<'_>,
        signs: &ConsumerSigns,
        out: &mut Vec<StatsDiagnosis>,
    ) {
        let acc = cx.acc;
        let naps = &self.fetcher_naps;
        let busy = self.fetcher_busy.max().unwrap_or(0.0);
        let mut d = cx.base(
            &FETCH_QUEUE_BACKOFF,
            format!(
                "the consumer naps: its fetcher was busy at most {:.0}% of {} of {} interval(s) \
                 while messages waited on the broker and the fetch queue had room \
                 (queued.min.messages {})",
                busy * 100.0,
                naps.held,
                naps.considered,
                cx.config.queued_min_messages.value
            ),
            naps,
        );
        d.evidence = json!({
            "queued_min_messages": cx.setting(cx.config.queued_min_messages),
            "fetch_queue_backoff_ms": cx.setting(cx.config.fetch_queue_backoff_ms),
            "intervals_fetcher_napping": naps.held,
            "fetcher_busy_share_max": round_sig(busy),
            "fetcher_busy_share_rule": FETCHER_BUSY_MAX,
            "fetch_requests_per_s_p50": acc.fetch_rate_median().map(round_sig),
            "messages_per_s_mean": round_sig(signs.rx_mean),
            "lag_messages_p50": acc.lag_total.median().map(round_sig),
            "lag_field": signs.lag_field,
        });
        d.cause = "With messages waiting on the broker and room in the fetch queue, the fetcher \
                   sent almost no fetches: it was backing off. When a partition's fetch queue \
                   reaches queued.min.messages (or queued.max.messages.kbytes), librdkafka stops \
                   fetching it for fetch.queue.backoff.ms (1000 ms by default) while the \
                   application drains the queue in milliseconds: the consumer then naps. The \
                   post: 389k msg/s at the default, 1.48M at 10 ms."
            .into();
        d.fix = "fetch.queue.backoff.ms=10 (librdkafka 2.2+; 0 spins the broker thread), or a \
                 larger queued.min.messages."
            .into();
        d.cannot_tell = Some(
            "Statistics count the fetches per interval, not why the fetcher waited: a \
             fetch.error.backoff.ms after fetch errors naps too; a debug=fetch log \
             (analyze-fetch-log: 'Fetch backoff for 1000ms: Local: Queue full') names each one."
                .into(),
        );
        out.push(d);
    }

    /// fetch-queue-empty-lag-growing: the fetcher is the limit.
    pub(super) fn fetch_queue_empty_lag_growing(
        &self,
        cx: &Context<'_>,
        signs: &ConsumerSigns,
        out: &mut Vec<StatsDiagnosis>,
    ) {
        let t = cx.t;
        let acc = cx.acc;
        let ConsumerSigns {
            lag_first,
            lag_last,
            lag_grows,
            lag_field,
            ..
        } = *signs;
        if self.starved.by_share(t) && lag_grows {
            let mut d = cx.base(
                &FETCH_QUEUE_EMPTY_LAG_GROWING,
                format!(
                    "the fetch queues are empty while the lag grows ({} → {}): the fetcher, not \
                     the application, is the limit",
                    lag_first, lag_last
                ),
                &self.starved,
            );
            d.evidence = json!({
                "intervals_starved": self.starved.held,
                "messages_per_s_in_starved_intervals": summ(&self.starved_rx),
                "fetch_queue_messages_max": acc.fetchq_total_max().map(round_sig),
                "lag_messages_first": round_sig(lag_first),
                "lag_messages_last": round_sig(lag_last),
                "lag_field": lag_field,
                "fetch_requests_per_s_p50": acc.fetch_rate_median().map(round_sig),
            });
            d.cause = "The application takes messages as fast as they arrive (nothing waits \
                       in the fetch queues) yet falls behind: fetching is the limit. \
                       librdkafka's broker thread builds one queue entry per fetched message \
                       (the post saturated it at ~2.1M msg/s), or the fetches are small, slow \
                       or throttled (fetch.max.bytes, fetch.wait.max.ms, a quota, a distant \
                       broker)."
                .into();
            d.fix = "If the rdk:broker thread is at one core, add consumer instances (or \
                     partitions); if the broker throttles (broker-throttle), raise the quota; \
                     otherwise raise fetch.max.bytes / max.partition.fetch.bytes and look at \
                     the broker's fetch latency."
                .into();
            d.cannot_tell = Some(
                "Statistics cannot tell a saturated broker thread from slow fetches: per-thread \
                 CPU (analyze-thread-cpu, rdk:broker near one core) or a debug=fetch log \
                 (analyze-fetch-log) tells."
                    .into(),
            );
            out.push(d);
        }
    }

    /// fetch-queue-full-lag-growing: the application is the limit.
    pub(super) fn fetch_queue_full_lag_growing(
        &self,
        cx: &Context<'_>,
        signs: &ConsumerSigns,
        out: &mut Vec<StatsDiagnosis>,
    ) {
        let t = cx.t;
        let acc = cx.acc;
        let ConsumerSigns {
            rx_mean,
            naps,
            lag_first,
            lag_last,
            lag_grows,
            lag_field,
            ..
        } = *signs;
        if self.fetch_full.by_share(t) && lag_grows && naps == 0 {
            let mut d = cx.base(
                &FETCH_QUEUE_FULL_LAG_GROWING,
                format!(
                    "the fetch queues stay full while the lag grows ({} → {}): the application, \
                     not the fetcher, is the limit",
                    lag_first, lag_last
                ),
                &self.fetch_full,
            );
            d.partitions = acc.full_partitions(cx.track);
            d.evidence = json!({
                "intervals_with_a_full_queue": self.fetch_full.held,
                "queued_min_messages": cx.setting(cx.config.queued_min_messages),
                "fetch_queue_messages_p50": acc.fetchq_total_median().map(round_sig),
                "messages_per_s_mean": round_sig(rx_mean),
                "lag_messages_first": round_sig(lag_first),
                "lag_messages_last": round_sig(lag_last),
                "lag_field": lag_field,
            });
            d.cause = "Messages are fetched and wait in the local queues: the application \
                       takes them slower than they arrive. With rust-rdkafka's poll() one \
                       message costs one call on the application thread (the post: 389k msg/s \
                       on that thread before the batch API)."
                .into();
            d.fix = "Consume in batches (rd_kafka_consume_batch_queue, ~500 per call) or do \
                     less per message; past one application thread, more consumers."
                .into();
            d.cannot_tell = Some(
                "Statistics cannot tell librdkafka's per-message poll cost from the \
                 application's own work: per-thread CPU (analyze-thread-cpu) shows which thread \
                 is at one core."
                    .into(),
            );
            out.push(d);
        }
    }

    /// consumer-lag-growing: partitions whose lag grows.
    pub(super) fn consumer_lag_growing(
        &self,
        cx: &Context<'_>,
        signs: &ConsumerSigns,
        out: &mut Vec<StatsDiagnosis>,
    ) {
        let t = cx.t;
        let acc = cx.acc;
        let ConsumerSigns {
            rx_mean,
            lag_first,
            lag_last,
            lag_field,
            ..
        } = *signs;
        let growing = acc.growing_partitions(cx.track, t);
        if !growing.is_empty() {
            let first = lag_first;
            let last = lag_last;
            let held = Held {
                considered: acc.lag_total.count(),
                held: acc.lag_total.count(),
                ..Held::default()
            };
            let mut d = cx.base(
                &CONSUMER_LAG_GROWING,
                format!(
                    "consumer lag grows: {:.0} → {:.0} messages in {} partition(s)",
                    first,
                    last,
                    growing.len()
                ),
                &held,
            );
            d.partitions = growing.iter().map(|g| g.0.clone()).collect();
            d.evidence = json!({
                "lag_messages_first": round_sig(first),
                "lag_messages_last": round_sig(last),
                "lag_trend_per_s": acc.lag_total.slope_per_s().map(round_sig),
                "lag_field": lag_field,
                "per_partition": growing.iter().map(|g| json!({
                    "partition": g.0, "first": g.1, "last": g.2, "trend_per_s": g.3,
                })).collect::<Vec<_>>(),
                "messages_per_s_mean": round_sig(rx_mean),
            });
            d.cause = "The consumer falls behind what is written to these partitions. Why: see \
                       fetch-queue-backoff (it naps), fetch-queue-empty-lag-growing (fetching is \
                       the limit) or fetch-queue-full-lag-growing (the application is the \
                       limit)."
                .into();
            d.fix = "Remove the limit the other diagnoses name; otherwise more consumers (up \
                     to the partition count) or a faster application loop."
                .into();
            d.cannot_tell = Some(
                match lag_field {
                    "consumer_lag" => {
                        "consumer_lag follows the committed offset (before 1.8, the larger of the \
                         committed and the application's): a lag that grows only between \
                         commits is not a slow consumer."
                    }
                    _ => {
                        "Lag follows the high watermark: a producer that writes in bursts makes \
                         it jump without the consumer being slow; the trend over a long capture \
                         tells."
                    }
                }
                .into(),
            );
            out.push(d);
        }
    }

    /// consumer-rebalances: the group rebalanced again and again.
    pub(super) fn consumer_rebalances(&self, cx: &Context<'_>, out: &mut Vec<StatsDiagnosis>) {
        let t = cx.t;
        let acc = cx.acc;
        // The consumer's own join and leave are not the group rebalancing.
        let rebalances = acc.rebalances_beyond_membership();
        if rebalances >= t.rebalances_min {
            let held = Held::default();
            let mut d = cx.base(
                &CONSUMER_REBALANCES,
                format!("{rebalances:.0} rebalances during the capture"),
                &held,
            );
            d.evidence = json!({
                "rebalances": rebalances,
                "rebalances_counted_by_librdkafka": acc.rebalances(),
                "last_reason": cx.track.rebalance_reason,
            });
            d.cause = "The group rebalanced again and again: every rebalance stops consumption \
                       of the moved partitions (and, with the eager protocol, of all)."
                .into();
            d.fix = "Look at the reasons (members joining or leaving, max.poll.interval.ms \
                     exceeded, session timeouts); partition.assignment.strategy=cooperative-sticky \
                     limits what each rebalance stops."
                .into();
            out.push(d);
        }
    }
}
