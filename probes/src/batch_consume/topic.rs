//! The prefilled topic that throughput and harness modes read, and the consumer's settings
//! of a throughput run.

use super::options::{Options, EXTERNAL_MESSAGES, EXTERNAL_PARTITIONS, MOCK_PARTITIONS, NAME};
use crate::kit::broker::{Broker, TopicGuard};
use crate::kit::consumer_topic::{self, PrefillChoice, PrefillPlan};
use crate::kit::error::Result;
use crate::kit::Context;
use kgap_analyzers::findings::probe_result::ProbeResult;

/// Partitions of the topic: the option, or the broker's default.
pub fn partitions(opts: &Options, broker: &Broker) -> i32 {
    opts.partitions.unwrap_or(if broker.is_mock() {
        MOCK_PARTITIONS
    } else {
        EXTERNAL_PARTITIONS
    })
}

/// What to prefill: the shared consumer topic's plan, with this probe's default count on a
/// real broker.
pub fn prefill_plan(opts: &Options, broker: &Broker) -> PrefillPlan {
    consumer_topic::plan(
        broker.is_mock(),
        partitions(opts, broker),
        PrefillChoice {
            messages: opts
                .messages
                .or((!broker.is_mock()).then_some(EXTERNAL_MESSAGES)),
            ..PrefillChoice::default()
        },
    )
}

/// Creates the topic and prefills it, filling the result's payload, topics and prefill.
pub fn prefilled<'c, F>(
    cx: &'c Context,
    opts: &Options,
    result: &mut ProbeResult<F>,
) -> Result<(TopicGuard<'c>, PrefillPlan)> {
    let broker = &cx.broker;
    let plan = prefill_plan(opts, broker);
    let partitions = partitions(opts, broker);
    let topic =
        consumer_topic::create_prefilled(cx, NAME, partitions, opts.size as usize, &plan, result)?;
    Ok((topic, plan))
}

/// The consumer's settings for one throughput run. Statistics stay off: under the batch API
/// librdkafka serves them from the consumer queue inside the batch call, where
/// rust-rdkafka's context never sees them (FACTS.md §5), so poll() runs go without them too.
pub fn settings(backoff_ms: u64, mock: bool) -> Vec<(&'static str, String)> {
    consumer_topic::consumer_settings(
        backoff_ms,
        &crate::kit::broker::topic_name("probe-batch-consume-group"),
        mock,
    )
    .into_iter()
    .filter(|(k, _)| *k != "statistics.interval.ms")
    .collect()
}
