//! What every diagnosis is made with: the series' track, figures and settings, the
//! diagnosis' common fields, and how a figure is shown in the evidence.

use serde_json::{json, Value};

use super::entries::{ANALYZER, RULES};
use super::held::{BrokerHeld, Held};
use super::thresholds::Thresholds;
use crate::findings::diagnoses::rule::DiagnosisRule;
use crate::stats::config::{Resolved, Setting};
use crate::stats::report::StatsDiagnosis;
use crate::stats::stat::{round_sig, Stat};
use crate::stats::summary::SeriesAcc;
use crate::stats::track::Track;
use crate::vocab::report::{Diagnosis, ExampleLine};

pub(super) fn summ(s: &Stat) -> Value {
    match s.summary(1.0) {
        Some(x) => json!({"p50": x.p50, "min": x.min, "max": x.max}),
        None => Value::Null,
    }
}

pub(super) fn med(s: &Stat) -> Value {
    s.median().map(round_sig).map_or(Value::Null, Value::from)
}

/// Everything a diagnosis needs from its series.
pub(crate) struct Context<'a> {
    pub track: &'a Track,
    pub acc: &'a SeriesAcc,
    pub config: &'a Resolved,
    pub t: &'a Thresholds,
}

impl Context<'_> {
    pub(super) fn base(
        &self,
        rule: &'static DiagnosisRule,
        title: String,
        held: &Held,
    ) -> StatsDiagnosis {
        let id = rule.id;
        // Which finding it speaks for, and how strongly, is the catalogue's to say.
        let (finding, strength) = crate::findings::evidence_from(id, Some(ANALYZER), None)
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

    /// The names of the connections a per-broker rule fired on.
    pub(super) fn brokers(&self, hits: &[(usize, &BrokerHeld)]) -> Vec<String> {
        hits.iter()
            .map(|(i, _)| self.broker(*i).to_string())
            .collect()
    }

    pub(super) fn setting(&self, v: Setting) -> Value {
        json!({"value": v.value, "source": v.source})
    }
}

impl StatsDiagnosis {
    /// The shared [`crate::vocab::report::Diagnosis`] form (gap-report, the probes). Its example
    /// lines are the emits that open the first episodes (line numbers; the text is the
    /// evidence's summary, not the object, which is ~10 KB).
    pub fn to_diagnosis(&self) -> Diagnosis {
        let mut evidence = self.evidence.clone();
        if let Some(o) = evidence.as_object_mut() {
            o.insert("client".into(), self.client.clone().into());
            o.insert("intervals_held".into(), self.intervals_held.into());
            o.insert(
                "intervals_considered".into(),
                self.intervals_considered.into(),
            );
            if !self.brokers.is_empty() {
                o.insert("brokers".into(), self.brokers.clone().into());
            }
            if !self.partitions.is_empty() {
                o.insert("partitions".into(), self.partitions.clone().into());
            }
            if let Some(c) = &self.cannot_tell {
                o.insert("cannot_tell".into(), c.clone().into());
            }
        }
        // Made by its rule: an id the catalogue does not list cannot be made here.
        let rule = RULES
            .iter()
            .find(|r| r.id == self.id)
            .expect("every analyze-stats diagnosis is made by one of its RULES");
        rule.emit(
            self.title.clone(),
            evidence,
            self.cause.clone(),
            self.fix.clone(),
            self.episodes
                .iter()
                .take(3)
                .map(|e| ExampleLine {
                    line: e.from_line,
                    text: format!(
                        "statistics emit at {:.1} s: {} held for {} interval(s), to line {}",
                        e.from_t_s, self.id, e.intervals, e.to_line
                    ),
                })
                .collect(),
        )
    }
}
