//! analyze-stats' diagnoses: [`thresholds`] (the defaults of `Thresholds`, each with its
//! source), [`rules`] (pure functions of one interval's figures), [`entries`] (the catalogue's
//! `RULES`), and from the rules' per-interval answers to diagnoses: where each held (intervals, episodes,
//! brokers, partitions), the evidence in figures with their units, the cause in the post's
//! terms, the fix, and what statistics cannot tell apart.
//!
//! [`observe`] gathers each interval's answers ([`held`]: where a rule held); `finish`
//! decides the diagnoses in a fixed order, one phase a kind of diagnosis ([`producer`],
//! [`broker`], [`consumer`], [`app`], [`fatal`]), each made the same way ([`context`]).

mod app;
mod broker;
mod consumer;
mod context;
pub mod entries;
mod episode;
mod fatal;
mod held;
mod observe;
mod producer;
pub mod rules;
pub mod thresholds;

pub(crate) use context::Context;
pub use entries::RULES;
pub(crate) use observe::Diagnoser;

use crate::stats::report::StatsDiagnosis;

impl Diagnoser {
    pub fn finish(&self, cx: &Context<'_>) -> Vec<StatsDiagnosis> {
        let mut out = Vec::new();
        self.per_request_ceiling(cx, &mut out);
        self.inflight_queueing(cx, &mut out);
        self.short_episodes(cx, &mut out);
        self.producer_backlog(cx, &mut out);
        self.linger_bound_latency(cx, &mut out);
        self.broker_throttle(cx, &mut out);
        self.request_timeouts(cx, &mut out);
        self.broker_silent(cx, &mut out);
        self.broker_down_or_flapping(cx, &mut out);
        let signs = self.consumer_signs(cx);
        self.fetch_queue_backoff(cx, &signs, &mut out);
        self.fetch_queue_empty_lag_growing(cx, &signs, &mut out);
        self.fetch_queue_full_lag_growing(cx, &signs, &mut out);
        self.consumer_lag_growing(cx, &signs, &mut out);
        self.app_not_polling(cx, &mut out);
        self.consumer_rebalances(cx, &mut out);
        self.fatal_error(cx, &mut out);
        out
    }
}
