//! The reasons a fetcher backed off for, counted (the first 32 distinct ones).

use super::model::ReasonCount;

pub(crate) fn count_reason(list: &mut Vec<ReasonCount>, reason: &str) {
    if let Some(r) = list.iter_mut().find(|r| r.reason == reason) {
        r.count += 1;
    } else if list.len() < 32 {
        list.push(ReasonCount {
            reason: reason.to_string(),
            count: 1,
        });
    }
}

/// Whether a backoff's reason is librdkafka's end-of-partition signal (the broker had no
/// more messages: `Broker: No more messages`, RD_KAFKA_RESP_ERR__PARTITION_EOF's string),
/// which a consumer at the head of its partitions meets all the time: not a failed fetch.
pub(super) fn is_end_of_partition(reason: &str) -> bool {
    reason.contains("No more messages")
}
