//! The client's fatal error, as a diagnosis.

use serde_json::json;

use super::context::Context;
use super::entries::FATAL_ERROR;
use super::held::Held;
use super::observe::Diagnoser;
use crate::stats::report::StatsDiagnosis;

impl Diagnoser {
    /// fatal-error: the client raised a fatal error.
    pub(super) fn fatal_error(&self, cx: &Context<'_>, out: &mut Vec<StatsDiagnosis>) {
        if let Some(f) = &cx.track.fatal {
            let held = Held::default();
            let mut d = cx.base(&FATAL_ERROR, format!("fatal error: {f}"), &held);
            d.evidence = json!({ "fatal": f });
            d.cause = "The client raised a fatal error (idempotent or transactional producer): \
                       it can no longer produce."
                .into();
            d.fix = "Recreate the client; find the cause in its log (the error names it).".into();
            out.push(d);
        }
    }
}
