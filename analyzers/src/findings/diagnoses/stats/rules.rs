//! The diagnoses' rules: pure functions of one interval's figures, the client's settings and
//! the named [`Thresholds`]. Each answers `None` when it does not apply to the interval (a
//! consumer for a producer rule, an idle interval), else whether it held.

use super::thresholds::{
    Thresholds, APP_TAKEN_SHARE_MAX, APP_WAITING_MIN, FETCHER_BUSY_MAX, FETCHQ_FULL_SHARE,
    NAP_MIN_UNFETCHED,
};
use crate::stats::config::Resolved;
use crate::stats::interval::{batches_per_request, ms, BrokerFig, Interval, PartFig};

/// int_latency p50 of the interval, ms.
fn int_latency_p50_ms(iv: &Interval) -> Option<f64> {
    iv.total
        .int_latency
        .filter(|w| w.count() > 0)
        .and_then(|w| ms(w.p50))
}

/// Messages are waiting for the broker, not for linger: int_latency well above linger.ms,
/// or the producer queue filling.
fn messages_wait(iv: &Interval, c: &Resolved, t: &Thresholds) -> bool {
    let wait_floor = t
        .ceiling_wait_ms
        .max(t.ceiling_wait_linger_factor * c.linger_ms.value);
    int_latency_p50_ms(iv).is_some_and(|p| p >= wait_floor)
        || iv.queue_share().is_some_and(|q| q >= t.ceiling_queue_share)
}

/// Per-request ceiling: many small requests, one partition's batch each, while messages
/// wait to be sent.
pub(crate) fn per_request_ceiling(iv: &Interval, c: &Resolved, t: &Thresholds) -> Option<bool> {
    let rate = iv.total.produce_per_s.filter(|&r| iv.producer && r > 0.0)?;
    let bytes = iv.total.bytes_per_produce?;
    let one_batch = batches_per_request(iv).is_none_or(|b| b >= t.one_batch_per_request_min);
    Some(
        rate >= t.ceiling_min_requests_per_s
            && bytes <= t.small_request_bytes
            && one_batch
            && messages_wait(iv, c, t),
    )
}

/// In-flight queueing on one connection: many requests waiting for their response and the
/// round trip far above the fastest one (they queue at the broker), small requests.
pub(crate) fn inflight_queueing(b: &BrokerFig, t: &Thresholds) -> Option<bool> {
    b.produce_per_s.filter(|&r| r > 0.0)?;
    let rtt = b.rtt.filter(|w| w.count() > 0)?;
    let waiting = b.waitresp_cnt?;
    let (p50, min) = (ms(rtt.p50)?, ms(rtt.min)?);
    let messages_per_request = match (b.waitresp_msg_cnt, b.waitresp_cnt) {
        (Some(m), Some(r)) if r > 0.0 => Some(m / r),
        _ => None,
    };
    let small = match (messages_per_request, b.bytes_per_produce) {
        (Some(m), _) => m <= t.inflight_max_messages_per_request,
        (None, Some(bytes)) => bytes <= t.inflight_max_request_bytes,
        (None, None) => false,
    };
    Some(
        waiting >= t.inflight_waiting_min
            && p50 >= t.inflight_rtt_p50_ms
            && p50 >= t.inflight_rtt_over_min * min.max(0.001)
            && small,
    )
}

/// The producer queue near its limit: produce() is about to fail with QueueFull.
pub(crate) fn producer_backlog(iv: &Interval, t: &Thresholds) -> Option<bool> {
    if !iv.producer {
        return None;
    }
    Some(iv.queue_share()? >= t.backlog_queue_share)
}

/// Linger-bound latency: messages wait about linger.ms in small batches with nothing queued
/// behind them (a low rate per partition; librdkafka lingers per partition).
pub(crate) fn linger_bound(iv: &Interval, c: &Resolved, t: &Thresholds) -> Option<bool> {
    let linger = c.linger_ms.value;
    if !iv.producer || linger < 1.0 {
        return None;
    }
    iv.tx_msgs_per_s.filter(|&r| r > 0.0)?;
    let p50 = int_latency_p50_ms(iv)?;
    let in_band = p50 >= t.linger_band_low * linger && p50 <= t.linger_band_high * linger;
    let queue_small = iv
        .queue_share()
        .is_none_or(|q| q <= t.linger_queue_share_max);
    let fill = t.linger_batch_fill_max;
    let small_bytes = iv
        .batch_bytes()
        .and_then(|w| w.p50)
        .is_none_or(|b| (b as f64) <= fill * c.batch_size.value);
    let small_count = iv
        .batch_messages()
        .and_then(|w| w.p50)
        .is_none_or(|n| (n as f64) <= fill * c.batch_num_messages.value);
    Some(in_band && queue_small && small_bytes && small_count)
}

/// The broker throttled this connection (a quota).
pub(crate) fn throttled(b: &BrokerFig, t: &Thresholds) -> Option<bool> {
    let w = b.throttle?;
    Some(w.count() > 0 && w.max.is_some_and(|m| m as f64 >= t.throttle_min_ms))
}

/// Requests timed out or were retried, or a round trip took seconds (unless the broker
/// throttled the connection in the interval: a throttled response is slow on purpose).
pub(crate) fn timeouts_or_retries(b: &BrokerFig, t: &Thresholds) -> Option<bool> {
    if b.timeouts.is_none() && b.retries.is_none() && b.rtt.is_none() {
        return None;
    }
    let slow = b
        .rtt
        .filter(|w| w.count() > 0)
        .and_then(|w| ms(w.max))
        .is_some_and(|m| m >= t.slow_rtt_ms)
        && throttled(b, t) != Some(true);
    Some(b.timeouts.unwrap_or(0.0) > 0.0 || b.retries.unwrap_or(0.0) > 0.0 || slow)
}

/// A partition's fetch queue at the threshold that makes its fetcher back off.
pub(crate) fn fetch_queue_full(p: &PartFig, c: &Resolved, t: &Thresholds) -> Option<bool> {
    let cnt = p.fetchq_cnt?;
    let by_count = cnt >= t.fetchq_full_share * c.queued_min_messages.value;
    let by_bytes = p
        .fetchq_size
        .is_some_and(|s| s >= t.fetchq_full_share * c.queued_max_messages_kbytes.value * 1024.0);
    Some(by_count || by_bytes)
}

/// Starved: the fetch queues are empty while messages wait on the broker (lag > 0), so the
/// application has nothing to take although there is data. Applies to consumer intervals
/// with lag known.
pub(crate) fn starved(iv: &Interval, c: &Resolved, t: &Thresholds) -> Option<bool> {
    let lag = iv.lag_total()?;
    let queued = iv.fetchq_total()?;
    Some(queued <= t.fetchq_empty_share * c.queued_min_messages.value && lag > 0.0)
}

/// The fetcher naps: data waits on the broker, the fetch queues have room, yet the fetcher
/// sent so few fetches that it was busy (fetches × rtt p50) at most FETCHER_BUSY_MAX of the
/// interval: a backoff is running (fetch.queue.backoff.ms after the queue reached
/// queued.min.messages). Applies to consumer intervals with fetches, rtt and offsets known.
pub(crate) fn fetcher_napping(iv: &Interval, c: &Resolved, throttled: bool) -> Option<bool> {
    if iv.producer {
        return None;
    }
    let fetches = iv.total.fetch_per_s?;
    // No fetch at all is no time fetching, whatever the (empty) rtt window says.
    let rtt_s = if fetches > 0.0 {
        iv.total
            .rtt
            .filter(|w| w.count() > 0)
            .and_then(|w| ms(w.p50))?
            / 1000.0
    } else {
        0.0
    };
    let unfetched = iv.unfetched_total()?;
    let room = iv
        .fetchq_max()
        .is_some_and(|q| q < FETCHQ_FULL_SHARE * c.queued_min_messages.value);
    // A throttled fetcher waits on purpose (broker-throttle says so).
    Some(
        unfetched >= NAP_MIN_UNFETCHED && room && !throttled && fetches * rtt_s <= FETCHER_BUSY_MAX,
    )
}

/// The application took not one message in the interval while at least APP_WAITING_MIN
/// fetched messages waited for it, at its start (`waiting_before`) and its end, in the fetch
/// queue. None where what it took is unknown for a partition with messages waiting.
pub(crate) fn app_stalled(iv: &Interval, waiting_before: Option<f64>) -> Option<bool> {
    if iv.producer || iv.dt_s <= 0.0 {
        return None;
    }
    let (waiting, before, queued) = (iv.waiting_total()?, waiting_before?, iv.fetchq_total()?);
    for p in &iv.partitions {
        match p.taken {
            Some(n) if n > 0.0 => return Some(false),
            None if p.waiting.unwrap_or(0.0) > 0.0 => return None,
            _ => {}
        }
    }
    Some(waiting >= APP_WAITING_MIN && before >= APP_WAITING_MIN && queued > 0.0)
}

/// One emit: the application has taken at most APP_TAKEN_SHARE_MAX of the messages fetched
/// and at least APP_WAITING_MIN wait for it in the fetch queue.
pub(crate) fn app_behind(iv: &Interval) -> Option<bool> {
    if iv.producer {
        return None;
    }
    let (waiting, fetched, queued) = (iv.waiting_total()?, iv.fetched_total()?, iv.fetchq_total()?);
    let taken = (fetched - waiting).max(0.0);
    Some(
        fetched > 0.0
            && waiting >= APP_WAITING_MIN
            && queued > 0.0
            && taken <= APP_TAKEN_SHARE_MAX * fetched,
    )
}

/// The reason librdkafka gives a rebalance when the application did not poll within
/// max.poll.interval.ms (classic protocol; rdkafka_cgrp.c's max-poll timer), kept in the
/// group's `rebalance_reason` until the next rebalance.
pub const MAX_POLL_EXCEEDED: &str = "max.poll.interval.ms exceeded";

/// The group's last rebalance was the application exceeding max.poll.interval.ms.
pub(crate) fn max_poll_exceeded(rebalance_reason: Option<&str>) -> bool {
    rebalance_reason.is_some_and(|r| r.contains(MAX_POLL_EXCEEDED))
}

/// Lag growth over a run (first and last value, least-squares trend per second).
pub(crate) fn lag_growing(first: f64, last: f64, trend_per_s: Option<f64>, t: &Thresholds) -> bool {
    let growth = last - first;
    growth >= t.lag_growth_min_messages
        && growth >= t.lag_growth_min_share * first.max(1.0)
        && trend_per_s.is_some_and(|s| s > 0.0)
}

/// A broker that matters (it leads partitions the client uses, or has requests queued) is
/// not UP, or lost its connection, in the interval.
pub(crate) fn broker_unavailable(b: &BrokerFig) -> Option<bool> {
    let up = b.up?;
    let lost = b.disconnects.unwrap_or(0.0) > 0.0;
    Some((!up && b.has_work) || lost)
}

/// Silent: requests wait on the connection (sent, awaiting a response) and not one response
/// came back in the interval, the connection still UP: the broker stopped answering
/// (a stopped or stuck process, a network cut the client has not noticed yet).
pub(crate) fn broker_silent(b: &BrokerFig) -> Option<bool> {
    let waiting = b.waitresp_cnt?;
    let responses = b.responses_per_s?;
    if b.up == Some(false) {
        return Some(false);
    }
    Some(waiting > 0.0 && responses <= 0.0)
}

/// Flapping: a broker lost its connection again and again (one outage, however many
/// reconnect attempts it takes, is one episode).
pub(crate) fn flapping(disconnects: f64, down_episodes: u64, t: &Thresholds) -> bool {
    disconnects >= t.flapping_disconnects_min || down_episodes as f64 >= t.flapping_disconnects_min
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::config::{ClientConfig, Defaults};
    use crate::stats::interval::TopicFig;
    use crate::stats::model::Window;

    fn win(cnt: i64, min: i64, p50: i64, max: i64) -> Option<Window> {
        Some(Window {
            cnt: Some(cnt),
            min: Some(min),
            p50: Some(p50),
            max: Some(max),
            ..Window::default()
        })
    }

    fn cfg(kv: &[&str]) -> Resolved {
        let mut c = ClientConfig::default();
        for s in kv {
            c.set(s).unwrap();
        }
        c.resolve(Defaults { before_1_5: false })
    }

    /// The post's Gap 1 interval: 15,400 requests/s of 15.6 KB, one batch each, 200 ms in
    /// the queue.
    fn ceiling_interval() -> Interval {
        let mut iv = Interval {
            producer: true,
            dt_s: 1.0,
            msg_cnt: Some(100_000.0),
            msg_max: Some(100_000.0),
            ..Interval::default()
        };
        iv.total.produce_per_s = Some(15_400.0);
        iv.total.produce_requests = Some(15_400.0);
        iv.total.bytes_per_produce = Some(15_621.0);
        iv.total.int_latency = win(1000, 100, 200_000, 600_000);
        iv.topics.push(TopicFig {
            idx: 0,
            batchsize: win(15_400, 15_000, 15_600, 15_700),
            batchcnt: win(15_400, 15, 15, 15),
        });
        iv
    }

    #[test]
    fn the_ceiling_holds_on_the_posts_numbers_and_not_with_big_requests() {
        let t = Thresholds::default();
        let c = cfg(&["batch.size=16384"]);
        let iv = ceiling_interval();
        assert_eq!(per_request_ceiling(&iv, &c, &t), Some(true));
        let mut big = iv.clone();
        big.total.bytes_per_produce = Some(1_000_000.0);
        assert_eq!(per_request_ceiling(&big, &c, &t), Some(false));
        // Nothing waiting: the application is not asking for more.
        let mut idle = iv.clone();
        idle.msg_cnt = Some(10.0);
        idle.total.int_latency = win(1000, 100, 3_000, 9_000);
        assert_eq!(per_request_ceiling(&idle, &c, &t), Some(false));
        let mut consumer = iv;
        consumer.producer = false;
        assert_eq!(per_request_ceiling(&consumer, &c, &t), None);
    }

    #[test]
    fn inflight_needs_depth_and_a_queueing_rtt() {
        let t = Thresholds::default();
        let mut b = BrokerFig {
            produce_per_s: Some(5000.0),
            waitresp_cnt: Some(128.0),
            bytes_per_produce: Some(2000.0),
            rtt: win(5000, 500, 57_000, 90_000),
            ..BrokerFig::default()
        };
        assert_eq!(inflight_queueing(&b, &t), Some(true));
        // Full 15.6 KB batches of 15 messages queueing: the ceiling's signature, not this.
        b.waitresp_msg_cnt = Some(128.0 * 15.0);
        assert_eq!(inflight_queueing(&b, &t), Some(false));
        b.waitresp_msg_cnt = Some(128.0 * 1.5);
        assert_eq!(inflight_queueing(&b, &t), Some(true));
        b.waitresp_msg_cnt = None;
        b.bytes_per_produce = Some(15_645.0);
        assert_eq!(inflight_queueing(&b, &t), Some(false));
        b.bytes_per_produce = Some(2000.0);
        b.waitresp_cnt = Some(4.0);
        assert_eq!(inflight_queueing(&b, &t), Some(false));
        b.waitresp_cnt = Some(128.0);
        b.rtt = win(5000, 500, 900, 2000);
        assert_eq!(inflight_queueing(&b, &t), Some(false));
    }

    #[test]
    fn linger_band_and_fill() {
        let t = Thresholds::default();
        let c = cfg(&["linger.ms=5"]);
        let mut iv = Interval {
            producer: true,
            tx_msgs_per_s: Some(1000.0),
            msg_cnt: Some(3.0),
            msg_max: Some(100_000.0),
            ..Interval::default()
        };
        iv.total.int_latency = win(1000, 10, 5_100, 7_000);
        iv.topics.push(TopicFig {
            idx: 0,
            batchsize: win(200, 1000, 5000, 9000),
            batchcnt: win(200, 1, 5, 9),
        });
        assert_eq!(linger_bound(&iv, &c, &t), Some(true));
        iv.total.int_latency = win(1000, 10, 50_000, 70_000);
        assert_eq!(linger_bound(&iv, &c, &t), Some(false));
        assert_eq!(linger_bound(&iv, &cfg(&["linger.ms=0"]), &t), None);
    }

    #[test]
    fn a_throttled_slow_round_trip_is_not_a_stall() {
        let t = Thresholds::default();
        let mut b = BrokerFig {
            rtt: win(10, 500, 900_000, 2_500_000),
            timeouts: Some(0.0),
            retries: Some(0.0),
            ..BrokerFig::default()
        };
        assert_eq!(timeouts_or_retries(&b, &t), Some(true));
        b.throttle = win(10, 100, 800, 2_400);
        assert_eq!(timeouts_or_retries(&b, &t), Some(false));
        b.timeouts = Some(3.0);
        assert_eq!(timeouts_or_retries(&b, &t), Some(true));
    }

    #[test]
    fn silence_is_requests_waiting_without_a_response() {
        let mut b = BrokerFig {
            up: Some(true),
            waitresp_cnt: Some(180.0),
            responses_per_s: Some(0.0),
            ..BrokerFig::default()
        };
        assert_eq!(broker_silent(&b), Some(true));
        b.responses_per_s = Some(12.0);
        assert_eq!(broker_silent(&b), Some(false));
        // Nothing waiting: an idle connection is not silent.
        b.responses_per_s = Some(0.0);
        b.waitresp_cnt = Some(0.0);
        assert_eq!(broker_silent(&b), Some(false));
        // Down is broker-down's to say.
        b.waitresp_cnt = Some(3.0);
        b.up = Some(false);
        assert_eq!(broker_silent(&b), Some(false));
        b.waitresp_cnt = None;
        assert_eq!(broker_silent(&b), None);
    }

    #[test]
    fn lag_growth_needs_size_share_and_trend() {
        let t = Thresholds::default();
        assert!(lag_growing(0.0, 50_000.0, Some(100.0), &t));
        assert!(!lag_growing(1_000_000.0, 1_000_500.0, Some(1.0), &t));
        assert!(!lag_growing(0.0, 50_000.0, Some(-1.0), &t));
    }

    #[test]
    fn a_fetcher_naps_when_it_barely_fetches_with_data_waiting_and_room() {
        let c = cfg(&[]);
        let part = |fetchq: f64, unfetched: f64| PartFig {
            fetchq_cnt: Some(fetchq),
            unfetched: Some(unfetched),
            ..PartFig::default()
        };
        // The probe's 1000 ms capture: 2 fetches in a second of ~10 ms, 28k messages waiting.
        let mut iv = Interval {
            dt_s: 1.0,
            partitions: vec![part(38_839.0, 28_000.0), part(38_839.0, 27_000.0)],
            ..Interval::default()
        };
        iv.total.fetch_per_s = Some(2.0);
        iv.total.rtt = win(2, 5_000, 9_663, 23_039);
        assert_eq!(fetcher_napping(&iv, &c, false), Some(true));
        // Throttled: it waits on purpose.
        assert_eq!(fetcher_napping(&iv, &c, true), Some(false));
        // Fetching 40 times a second of 12 ms: busy half the time (the 10 ms capture).
        iv.total.fetch_per_s = Some(40.0);
        iv.total.rtt = win(40, 2_000, 12_000, 30_000);
        assert_eq!(fetcher_napping(&iv, &c, false), Some(false));
        // Not one fetch, nothing waiting on the broker: caught up, not napping.
        iv.total.fetch_per_s = Some(0.0);
        iv.partitions = vec![part(0.0, 10.0)];
        assert_eq!(fetcher_napping(&iv, &c, false), Some(false));
        // Not one fetch with the queue full: the application is behind, not a nap.
        iv.partitions = vec![part(100_000.0, 50_000.0)];
        assert_eq!(fetcher_napping(&iv, &c, false), Some(false));
        iv.producer = true;
        assert_eq!(fetcher_napping(&iv, &c, false), None);
    }

    #[test]
    fn an_application_that_takes_nothing_with_messages_waiting_is_not_polling() {
        // kafka431-consumer-throttled-lag at 2611170719: 4830 fetched messages waiting (4043
        // on partition 1, 787 on 2), the shared queue at 4844, app_offset still.
        let part = |waiting: f64, taken: Option<f64>| PartFig {
            fetchq_cnt: Some(4844.0),
            waiting: Some(waiting),
            fetched: Some(waiting),
            taken,
            ..PartFig::default()
        };
        let mut iv = Interval {
            dt_s: 0.5,
            shared_fetchq: true,
            partitions: vec![
                part(0.0, Some(0.0)),
                part(4043.0, Some(0.0)),
                part(787.0, Some(0.0)),
            ],
            ..Interval::default()
        };
        assert_eq!(app_stalled(&iv, Some(4830.0)), Some(true));
        // The messages arrived within the interval: nothing waited at its start.
        assert_eq!(app_stalled(&iv, Some(0.0)), Some(false));
        // One message taken: the application polls, however slowly.
        iv.partitions[2].taken = Some(1.0);
        assert_eq!(app_stalled(&iv, Some(4830.0)), Some(false));
        // A partition with messages waiting whose position went back: cannot tell.
        iv.partitions[2].taken = None;
        assert_eq!(app_stalled(&iv, Some(4830.0)), None);
        // The first emit has no interval.
        iv.dt_s = 0.0;
        assert_eq!(app_stalled(&iv, Some(4830.0)), None);
    }

    #[test]
    fn one_emit_is_behind_when_the_application_took_a_small_share_of_what_was_fetched() {
        // The emit: 6,143 taken of 34,784 fetched.
        let iv = |waiting: f64, fetched: f64, queued: f64| Interval {
            shared_fetchq: true,
            partitions: vec![PartFig {
                fetchq_cnt: Some(queued),
                waiting: Some(waiting),
                fetched: Some(fetched),
                ..PartFig::default()
            }],
            ..Interval::default()
        };
        assert_eq!(app_behind(&iv(28_641.0, 34_784.0, 28_641.0)), Some(true));
        // The slow application of kafka431-consumer-slow-app-lag at its fullest queue: it
        // took 10,860 of 19,801 (55%), polling.
        assert_eq!(app_behind(&iv(8_941.0, 19_801.0, 8_941.0)), Some(false));
        // Nothing in the queue: the messages are not waiting for the application.
        assert_eq!(app_behind(&iv(28_641.0, 34_784.0, 0.0)), Some(false));
        assert_eq!(app_behind(&iv(500.0, 600.0, 500.0)), Some(false));
    }

    #[test]
    fn a_rebalance_for_max_poll_interval_is_the_application_not_polling() {
        assert!(max_poll_exceeded(Some("max.poll.interval.ms exceeded")));
        assert!(!max_poll_exceeded(Some(
            "Metadata for subscribed topic(s) has changed"
        )));
        assert!(!max_poll_exceeded(None));
    }

    #[test]
    fn fetch_queue_full_by_count_or_bytes() {
        let t = Thresholds::default();
        let c = cfg(&[]);
        let p = PartFig {
            fetchq_cnt: Some(95_000.0),
            fetchq_size: Some(1000.0),
            ..PartFig::default()
        };
        assert_eq!(fetch_queue_full(&p, &c, &t), Some(true));
        let p = PartFig {
            fetchq_cnt: Some(10.0),
            fetchq_size: Some(65_536.0 * 1024.0),
            ..PartFig::default()
        };
        assert_eq!(fetch_queue_full(&p, &c, &t), Some(true));
    }
}
