//! What every diagnosis is made with: the series' track, figures and settings, the
//! diagnosis' common fields, and how a figure is shown in the evidence.

use serde_json::{json, Value};

use super::held::Held;
use crate::stats::config::{Resolved, Setting};
use crate::stats::report::StatsDiagnosis;
use crate::stats::stat::{round_sig, Stat};
use crate::stats::summary::SeriesAcc;
use crate::stats::thresholds::Thresholds;
use crate::stats::track::Track;

pub(super) fn summ(s: &Stat) -> Value {
    match s.summary(1.0) {
        Some(x) => json!({"p50": x.p50, "min": x.min, "max": x.max}),
        None => Value::Null,
    }
}

pub(super) fn med(s: &Stat) -> Value {
    s.median().map(round_sig).map_or(Value::Null, Value::from)
}

/// The analyzer name the catalogue knows these diagnoses by.
pub const SOURCE: &str = "analyze-stats";

/// Everything a diagnosis needs from its series.
pub(crate) struct Context<'a> {
    pub track: &'a Track,
    pub acc: &'a SeriesAcc,
    pub config: &'a Resolved,
    pub t: &'a Thresholds,
}

impl Context<'_> {
    pub(super) fn base(&self, id: &'static str, title: String, held: &Held) -> StatsDiagnosis {
        // Which finding it speaks for, and how strongly, is the catalogue's to say.
        let (finding, strength) = crate::findings::evidence_from(id, Some(SOURCE), None)
            .map_or((None, None), |(f, s)| (Some(f.id), Some(s)));
        StatsDiagnosis {
            id,
            title,
            finding,
            strength,
            client: self.track.name.clone(),
            series: self.track.number,
            brokers: Vec::new(),
            partitions: Vec::new(),
            intervals_held: held.held,
            intervals_considered: held.considered,
            episodes: held.episodes(),
            evidence: Value::Null,
            cause: String::new(),
            fix: String::new(),
            cannot_tell: None,
        }
    }

    pub(super) fn broker(&self, i: usize) -> &str {
        self.track.brokers.get(i).map_or("?", |b| b.name.as_str())
    }

    pub(super) fn setting(&self, v: Setting) -> Value {
        json!({"value": v.value, "source": v.source})
    }
}
