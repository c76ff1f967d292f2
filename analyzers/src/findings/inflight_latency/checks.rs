//! The rule's checks: a rate sustained, either of two checks, a gap that even the most
//! favourable reps fall short of, requests queued on a connection.

use super::evidence::Window;
use super::thresholds::{MIN_WAITING_REQUESTS, SUSTAINED_SHARE};
use crate::findings::connection::Connection;
use crate::findings::reps::{check_at_least, check_every_rep, Reps, MIN_REPS};
use crate::findings::verdict::{Check, CheckState};
use crate::vocab::units;

pub(super) fn sustained(w: &Window, rate: u64) -> bool {
    !w.rate_achieved_per_s.is_empty()
        && w.rate_achieved_per_s
            .values()
            .iter()
            .all(|&a| a >= SUSTAINED_SHARE * rate as f64)
}

/// A check that passes when any of `checks` passed, fails when all failed, else undecided.
pub(super) fn any_of(condition: &str, checks: Vec<Check>) -> Check {
    let state = if checks.iter().any(|c| c.state == CheckState::Passed) {
        CheckState::Passed
    } else if checks.iter().all(|c| c.state == CheckState::Failed) {
        CheckState::Failed
    } else {
        CheckState::Undecided
    };
    let detail = checks
        .iter()
        .map(|c| format!("{} {}: {}", c.mark(), c.condition, c.detail))
        .collect::<Vec<_>>()
        .join("; ");
    Check::new(condition, state, detail)
}

/// [`check_at_least`], except that overlapping ranges fail when even the most favourable
/// reps (the highest `high` over the lowest `low`) fall short of `factor`: no noise can
/// hide a 1.2x difference there.
pub(super) fn at_least_or_short(
    condition: String,
    high: &Reps,
    low: &Reps,
    factor: f64,
    fmt: impl Fn(f64) -> String + Copy,
) -> Check {
    let c = check_at_least(condition, high, low, factor, fmt);
    let best = match (high.max(), low.min()) {
        (Some(h), Some(l)) if l > 0.0 => h / l,
        _ => return c,
    };
    if c.state == CheckState::Undecided && high.n().min(low.n()) >= MIN_REPS && best < factor {
        let detail = format!(
            "{} against {}: even the most favourable reps give {}, short of {factor}x",
            high.show(fmt),
            low.show(fmt),
            units::times(best)
        );
        return Check::failed(c.condition, detail);
    }
    c
}

/// Requests queue on a connection with the default window: per broker when the connections
/// were measured (the window is per connection; the check names the ones that queued),
/// else the busiest connection's gauge.
pub(super) fn waiting_check(d: &Window) -> Check {
    let condition = format!(
        "more than {MIN_WAITING_REQUESTS} requests await a response on a connection with the \
         default window (statistics waitresp_cnt; 5 caps it at 5)"
    );
    let loaded: Vec<&Connection> = d
        .connections
        .iter()
        .filter(|c| c.requests_per_s.median().unwrap_or(0.0) > 0.0)
        .collect();
    if loaded.is_empty() {
        return check_every_rep(
            condition,
            &d.waiting_requests,
            |n| n > MIN_WAITING_REQUESTS,
            units::count,
        );
    }
    let each: Vec<(&Connection, Check)> = loaded
        .iter()
        .map(|c| {
            (
                *c,
                check_every_rep(
                    c.broker.clone(),
                    &c.waiting_requests,
                    |n| n > MIN_WAITING_REQUESTS,
                    units::count,
                ),
            )
        })
        .collect();
    let detail = each
        .iter()
        .map(|(c, k)| format!("{} {}: {}", k.mark(), c.label(), k.detail))
        .collect::<Vec<_>>()
        .join("; ");
    let queued: Vec<&str> = each
        .iter()
        .filter(|(_, k)| k.state == CheckState::Passed)
        .map(|(c, _)| c.broker.as_str())
        .collect();
    if !queued.is_empty() {
        Check::passed(
            condition,
            format!("queued on {}; {detail}", queued.join(", ")),
        )
    } else if each.iter().all(|(_, k)| k.state == CheckState::Failed) {
        Check::failed(condition, format!("on no connection: {detail}"))
    } else {
        Check::undecided(condition, detail)
    }
}
