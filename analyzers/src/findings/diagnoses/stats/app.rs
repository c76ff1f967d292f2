//! app-not-polling: fetched messages wait in the consumer's fetch queue and the application
//! does not take them. Lag from committed offsets does not show it (the messages have left
//! the broker), so a capture of an application that stopped polling read "no gap, lag 0".

use serde_json::json;

use super::context::{summ, Context};
use super::entries::APP_NOT_POLLING;
use super::held::Held;
use super::observe::Diagnoser;
use super::rules::{max_poll_exceeded, MAX_POLL_EXCEEDED};
use super::thresholds::APP_STALL_MIN_S;
use crate::stats::report::StatsDiagnosis;
use crate::stats::stat::round_sig;

const CAUSE: &str = "librdkafka fetches ahead into a local queue (up to queued.min.messages or \
     queued.max.messages.kbytes) that the application empties by calling poll() (consume, \
     consume_batch). Here fetched messages sat in that queue and the application's position \
     (app_offset) did not move with them: the application was not calling poll, being blocked \
     in its own work or elsewhere (a producer's flush, a lock, a GC pause) or stuck on one \
     message. Past max.poll.interval.ms without a poll the consumer leaves the group and its \
     partitions move.";

const FIX: &str = "Poll from a loop that does nothing else: hand messages to workers and never \
     block that loop on a flush, a lock or I/O; keep the time between polls under \
     max.poll.interval.ms (pause the partitions while one message takes long).";

impl Diagnoser {
    pub(super) fn app_not_polling(&self, cx: &Context<'_>, out: &mut Vec<StatsDiagnosis>) {
        let reason = cx.track.rebalance_reason.as_deref();
        let max_poll = max_poll_exceeded(reason);
        let stalled = self.app_stalled.held > 0 && self.app_stalled_s >= APP_STALL_MIN_S;
        // One emit: what was taken of what was fetched (two emits tell still from slow).
        let single = self.app_behind_first.filter(|_| cx.track.intervals == 0);
        let (mut d, cannot_tell) = if stalled {
            let waiting = self.app_waiting.max().unwrap_or(0.0);
            let mut d = cx.base(
                &APP_NOT_POLLING,
                format!(
                    "the application took no message for {:.1} s ({} interval(s)) while up to \
                     {waiting:.0} fetched messages waited for it in the fetch queue",
                    self.app_stalled_s, self.app_stalled.held
                ),
                &self.app_stalled,
            );
            d.evidence = json!({
                "seconds_taking_nothing": round_sig(self.app_stalled_s),
                "intervals_taking_nothing": self.app_stalled.held,
                "messages_waiting": summ(&self.app_waiting),
                "messages_fetched_meanwhile": round_sig(self.app_fetched_meanwhile),
                "app_stall_min_s": APP_STALL_MIN_S,
            });
            let tell = "Statistics show that the application took nothing, not what it was \
                        doing instead: a thread dump (analyze-thread-cpu --from) or its own \
                        logs of those seconds tell.";
            (d, tell)
        } else if let Some((waiting, fetched, queued)) = single {
            let taken = (fetched - waiting).max(0.0);
            let one = Held {
                considered: 1,
                held: 1,
                ..Held::default()
            };
            let mut d = cx.base(
                &APP_NOT_POLLING,
                format!(
                    "the application has taken {taken:.0} of the {fetched:.0} messages \
                     fetched: {waiting:.0} wait for it ({queued:.0} in the fetch queue)"
                ),
                &one,
            );
            d.evidence = json!({
                "messages_fetched": fetched,
                "messages_taken": taken,
                "messages_waiting": waiting,
                "fetch_queue_messages": queued,
                "share_taken": round_sig(taken / fetched),
            });
            let tell = "One emit shows how much of what was fetched the application took, not \
                        whether it is still taking: an application that stopped polling and \
                        one that polls too slowly look alike here; two emits tell (app_offset \
                        still, or moving).";
            (d, tell)
        } else if max_poll {
            let mut d = cx.base(
                &APP_NOT_POLLING,
                format!(
                    "the group rebalanced because the application did not poll within \
                     max.poll.interval.ms (librdkafka's reason: '{MAX_POLL_EXCEEDED}')"
                ),
                &Held::default(),
            );
            d.evidence = json!({});
            let tell = "The reason says it happened, not when or for how long: statistics that \
                        span it show the application's position standing still.";
            (d, tell)
        } else {
            return;
        };
        if let Some(o) = d.evidence.as_object_mut() {
            o.insert("rebalance_reason".into(), reason.into());
        }
        d.cause = CAUSE.into();
        d.fix = FIX.into();
        d.cannot_tell = Some(cannot_tell.into());
        out.push(d);
    }
}
