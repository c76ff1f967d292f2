//! The prefilled topic the consumer probes read, and their consumer's base settings.
//!
//! On a real broker: the post's bytes (random, uncompressed), 2M messages. librdkafka's mock
//! keeps only 5 MiB of record batches per partition and silently drops older ones, so there
//! the prefill is word-list text with lz4 (about 105k × 100 B per partition fit), spread
//! over more partitions so that a run still lasts seconds at the fast setting.

use crate::kit::broker::{Broker, Consumer, TopicGuard};
use crate::kit::capture::Sink;
use crate::kit::error::{ProbeError, Result};
use crate::kit::payload::{PayloadKind, Pool};
use crate::kit::probe::Context;
use crate::kit::produce;
use kgap_analyzers::findings::probe_result::ProbeResult;
use rdkafka::consumer::Consumer as _;
use std::sync::Arc;
use std::time::Duration;

/// Messages per partition the mock can hold (lz4-compressed 100 B text keeps ~105k).
pub const MOCK_MESSAGES_PER_PARTITION: u64 = 90_000;
/// Default messages on a real broker: long enough for several naps per partition, and a
/// window of seconds at the fast setting.
/// (2M gave the fast setting a 1.3 s window on Kafka 4.3.1 here: too short to sample.)
pub const EXTERNAL_MESSAGES: u64 = 4_000_000;
/// queued.min.messages on the mock, scaled to what it can hold (librdkafka's default is
/// 100000, more than the mock keeps per partition): the same mechanism at a tenth the size.
/// One fetch response (1 MB per partition, ~19k lz4-compressed 100 B messages) fills it, so
/// whether the queue fills does not depend on a race between the fetcher and the
/// application on a busy 2-core machine.
pub const MOCK_QUEUED_MIN_MESSAGES: u64 = 10_000;

/// What to prefill: the user's choices, each None for the broker's default.
#[derive(Debug, Clone, Copy, Default)]
pub struct PrefillChoice<'a> {
    pub messages: Option<u64>,
    pub kind: Option<PayloadKind>,
    pub compression: Option<&'a str>,
}

/// What is prefilled.
#[derive(Debug, Clone, PartialEq)]
pub struct PrefillPlan {
    pub messages: u64,
    pub kind: PayloadKind,
    /// compression.type of the prefill only.
    pub compression: String,
}

/// Creates the topic `name` and prefills it as `plan` says with `size`-byte messages,
/// filling the result's payload, topics and prefill and saying what it does.
pub fn create_prefilled<'c, F>(
    cx: &'c Context,
    name: &str,
    partitions: i32,
    size: usize,
    plan: &PrefillPlan,
    result: &mut ProbeResult<F>,
) -> Result<TopicGuard<'c>> {
    let broker = &cx.broker;
    let pool = Pool::new(size, plan.kind);
    result.payload = Some(pool.info());
    let topic = broker.create_topic(name, partitions)?;
    result.topics.push(topic.name.clone());
    cx.progress(&format!(
        "topic {} ({partitions} partitions): prefilling {} × {size} B {} messages ({} compression)",
        topic.name, plan.messages, plan.kind, plan.compression
    ));
    let pre = produce::prefill(
        broker,
        &topic.name,
        partitions,
        &pool,
        plan.messages,
        &plan.compression,
        &|l| cx.progress(l),
    )?;
    check_retained(broker, &topic, plan.messages)?;
    cx.progress(&format!("prefill done in {:.1} s", pre.seconds));
    result.prefill = serde_json::to_value(&pre).ok();
    Ok(topic)
}

/// The prefill for a broker and a partition count. (gzip holds more on the mock but makes
/// the consumer's broker thread the bottleneck, so its queue never fills and nothing naps.)
pub fn plan(is_mock: bool, partitions: i32, choice: PrefillChoice) -> PrefillPlan {
    PrefillPlan {
        messages: choice.messages.unwrap_or(if is_mock {
            MOCK_MESSAGES_PER_PARTITION * partitions as u64
        } else {
            EXTERNAL_MESSAGES
        }),
        kind: choice.kind.unwrap_or(if is_mock {
            PayloadKind::Text
        } else {
            PayloadKind::Random
        }),
        compression: choice
            .compression
            .unwrap_or(if is_mock { "lz4" } else { "none" })
            .to_string(),
    }
}

/// The consumer's settings at one fetch.queue.backoff.ms; `-X` overrides come after these.
pub fn consumer_settings(backoff_ms: u64, group: &str, mock: bool) -> Vec<(&'static str, String)> {
    let mut v = vec![
        // A fresh group id per run; offsets are never committed (assign, no auto commit), so
        // the probe leaves no group behind on the cluster.
        ("group.id", group.to_string()),
        ("enable.auto.commit", "false".into()),
        ("enable.auto.offset.store", "false".into()),
        ("auto.offset.reset", "earliest".into()),
        ("debug", "fetch".into()),
        ("statistics.interval.ms", "1000".into()),
        ("fetch.queue.backoff.ms", backoff_ms.to_string()),
    ];
    if mock {
        v.push(("queued.min.messages", MOCK_QUEUED_MIN_MESSAGES.to_string()));
    }
    v
}

/// The note every consumer probe prints on the mock about its scaled queued.min.messages.
pub fn mock_note(overrides: &[(String, String)]) -> Option<String> {
    (!overrides.iter().any(|(k, _)| k == "queued.min.messages")).then(|| {
        format!(
            "queued.min.messages={MOCK_QUEUED_MIN_MESSAGES} (librdkafka's default is 100000): \
             the mock keeps only ~100k messages per partition, so the nap threshold is scaled \
             down; the mechanism is the same. Use --brokers for librdkafka's defaults."
        )
    })
}

/// Fails if the broker did not keep every prefilled message (the mock silently drops old
/// data beyond 5 MiB per partition).
pub fn check_retained(broker: &Broker, topic: &TopicGuard, expected: u64) -> Result<()> {
    let c = Consumer::new(broker, &[], Arc::new(Sink::default()))?;
    let mut kept = 0u64;
    let mut dropped = 0u64;
    for p in 0..topic.partitions {
        let (lo, hi) = c
            .consumer
            .fetch_watermarks(&topic.name, p, Duration::from_secs(10))
            .map_err(|e| ProbeError::kafka(format!("watermarks of {} [{p}]", topic.name), e))?;
        kept += (hi - lo).max(0) as u64;
        dropped += lo.max(0) as u64;
    }
    if kept != expected {
        let hint = if broker.is_mock() && dropped > 0 {
            " — librdkafka's mock keeps only 5 MiB per partition and drops older data: use \
             fewer --messages or more --partitions (or --kind text with --prefill-compression gzip)"
        } else {
            ""
        };
        return Err(ProbeError::Kafka(format!(
            "the topic holds {kept} of the {expected} prefilled messages ({dropped} dropped){hint}"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mock_gets_a_compressed_text_prefill_sized_to_what_it_keeps() {
        let p = plan(true, 30, PrefillChoice::default());
        assert_eq!(p.messages, 30 * MOCK_MESSAGES_PER_PARTITION);
        assert_eq!((p.kind, p.compression.as_str()), (PayloadKind::Text, "lz4"));
        let p = plan(false, 6, PrefillChoice::default());
        assert_eq!(p.messages, EXTERNAL_MESSAGES);
        assert_eq!(
            (p.kind, p.compression.as_str()),
            (PayloadKind::Random, "none")
        );
        let p = plan(
            false,
            6,
            PrefillChoice {
                messages: Some(10),
                kind: Some(PayloadKind::Text),
                compression: Some("gzip"),
            },
        );
        assert_eq!((p.messages, p.compression.as_str()), (10, "gzip"));
    }

    #[test]
    fn the_mock_scales_queued_min_messages_unless_the_user_set_it() {
        let s = consumer_settings(10, "g", true);
        assert!(s.contains(&("queued.min.messages", "10000".into())));
        assert!(!consumer_settings(10, "g", false)
            .iter()
            .any(|(k, _)| *k == "queued.min.messages"));
        assert!(mock_note(&[]).is_some());
        assert!(mock_note(&[("queued.min.messages".into(), "5".into())]).is_none());
    }
}
