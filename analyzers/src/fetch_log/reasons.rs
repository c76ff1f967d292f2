//! The reasons a fetcher backed off for, counted (the first 32 distinct ones).

use super::model::ReasonCount;

pub(super) fn count_reason(list: &mut Vec<ReasonCount>, reason: &str) {
    if let Some(r) = list.iter_mut().find(|r| r.reason == reason) {
        r.count += 1;
    } else if list.len() < 32 {
        list.push(ReasonCount {
            reason: reason.to_string(),
            count: 1,
        });
    }
}
