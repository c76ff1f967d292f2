//! The typed evidence the catalogue's three rules take, gathered from the sweep: the slowest
//! and fastest backoffs (`fetch-backoff`), 0 ms against a small nonzero one
//! (`fetch-backoff-zero`), a raised queued.min.messages against the default
//! (`queued-min-messages-fix`).

use super::figures::Figures;
use super::options::{FetchBackoff, DEFAULT_BACKOFF_MS};
use crate::kit::consumer_topic;
use crate::kit::probe::Sweep;
use kgap_analyzers::findings::{fetch_backoff as rule, fetch_backoff_zero, queued_min_messages};

/// The typed evidence the catalogue's rule takes: the slowest and fastest settings measured
/// (at the default queued.min.messages; 0 ms is its own finding, not the fast setting).
pub fn evidence(sweep: &Sweep<FetchBackoff>) -> Option<rule::Evidence> {
    let measured: Vec<_> = sweep
        .measured()
        .filter(|m| m.point.queued_min_messages.is_none())
        .collect();
    let slow = measured.iter().max_by_key(|m| m.point.backoff_ms)?;
    let fast = measured
        .iter()
        .filter(|m| m.point.backoff_ms > 0 || measured.len() == 1)
        .min_by_key(|m| m.point.backoff_ms)?;
    let rate = |f: &Figures| f.window.msgs_per_s;
    Some(rule::Evidence {
        slow_backoff_ms: slow.point.backoff_ms,
        fast_backoff_ms: fast.point.backoff_ms,
        slow_msgs_per_s: slow.reps(rate),
        fast_msgs_per_s: fast.reps(rate),
        slow_queue_full_backoffs: slow.reps(|f| f.queue_full_backoffs as f64),
        slow_idle_s: slow.reps(|f| f.window.idle_s),
        slow_window_s: slow.reps(|f| f.window.window_s),
        fast_queue_full_backoffs: fast.reps(|f| f.queue_full_backoffs as f64),
        fast_idle_s: fast.reps(|f| f.window.idle_s),
    })
}

fn queue_full_per_s(f: &Figures) -> f64 {
    if f.window.window_s > 0.0 {
        f.queue_full_backoffs as f64 / f.window.window_s
    } else {
        0.0
    }
}

/// Evidence for `fetch-backoff-zero`: 0 ms against the smallest nonzero backoff below the
/// default, both at the default queued.min.messages.
pub fn zero_evidence(sweep: &Sweep<FetchBackoff>) -> Option<fetch_backoff_zero::Evidence> {
    let at = |b: u64| {
        sweep
            .measured()
            .find(|m| m.point.backoff_ms == b && m.point.queued_min_messages.is_none())
    };
    let zero = at(0)?;
    let low = sweep
        .measured()
        .filter(|m| m.point.queued_min_messages.is_none())
        .filter(|m| m.point.backoff_ms > 0 && m.point.backoff_ms < DEFAULT_BACKOFF_MS)
        .min_by_key(|m| m.point.backoff_ms)?;
    Some(fetch_backoff_zero::Evidence {
        low_backoff_ms: low.point.backoff_ms,
        zero_msgs_per_s: zero.reps(|f| f.window.msgs_per_s),
        low_msgs_per_s: low.reps(|f| f.window.msgs_per_s),
        zero_queue_full_per_s: zero.reps(queue_full_per_s),
        low_queue_full_per_s: low.reps(queue_full_per_s),
    })
}

/// Evidence for `queued-min-messages-fix`: the largest raised queued.min.messages against
/// the default backoff's point at the default queued.min.messages.
pub fn queued_evidence(
    sweep: &Sweep<FetchBackoff>,
    mock: bool,
) -> Option<queued_min_messages::Evidence> {
    let raised = sweep
        .measured()
        .filter(|m| m.point.backoff_ms == DEFAULT_BACKOFF_MS)
        .filter(|m| m.point.queued_min_messages.is_some())
        .max_by_key(|m| m.point.queued_min_messages)?;
    let dflt = sweep.measured().find(|m| {
        m.point.backoff_ms == DEFAULT_BACKOFF_MS && m.point.queued_min_messages.is_none()
    })?;
    let idle = |f: &Figures| {
        if f.window.window_s > 0.0 {
            f.window.idle_s / f.window.window_s
        } else {
            0.0
        }
    };
    Some(queued_min_messages::Evidence {
        backoff_ms: DEFAULT_BACKOFF_MS,
        raised_queued_min_messages: raised.point.queued_min_messages.unwrap_or(0),
        default_queued_min_messages: if mock {
            consumer_topic::MOCK_QUEUED_MIN_MESSAGES
        } else {
            DEFAULT_QUEUED_MIN_MESSAGES
        },
        default_msgs_per_s: dflt.reps(|f| f.window.msgs_per_s),
        raised_msgs_per_s: raised.reps(|f| f.window.msgs_per_s),
        default_queue_full_backoffs: dflt.reps(|f| f.queue_full_backoffs as f64),
        default_idle_share: dflt.reps(idle),
        raised_idle_share: raised.reps(idle),
    })
}

/// librdkafka's default queued.min.messages.
pub const DEFAULT_QUEUED_MIN_MESSAGES: u64 = 100_000;
