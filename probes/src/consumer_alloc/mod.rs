//! `probe-consumer-alloc`: the postmortem of a Rust consumer rewrite
//! (postmortem-rust-consumer-allocations.txt): allocation patterns, not safety, decide it.
//!
//! The probe prefills a topic of its own with JSON-shaped records with keys
//! ([`crate::kit::payload::json_record`]), then reads it with one processing thread per
//! partition (each on its partition's own librdkafka queue) running the same deserialize →
//! enrich → keyed aggregation pipeline in the variants of [`pipeline`], each on the system
//! allocator and on mimalloc, and one writer thread batching the results. A counting global
//! allocator ([`alloc_count`], installed by the binary) counts the pipeline threads'
//! allocations. The catalogue decides ([`kgap_analyzers::findings::consumer_allocation_pattern`],
//! [`kgap_analyzers::findings::allocator_eases_not_fixes`]).
//!
//! Here: the points, the prefilled topic, the catalogue's evidence and the Probe impl. Beside
//! it: the options and the probe (`options`), one run (`run`), its figures (`figures`), the
//! report's text (`render`).

pub mod alloc_count;
pub mod figures;
mod options;
pub mod perf;
pub mod pipeline;
pub mod queue;
mod render;
pub mod run;

pub use options::{ConsumerAlloc, Options, EXTERNAL_MESSAGES, MOCK_MESSAGES_PER_PARTITION};

use crate::kit::broker::{Broker, TopicGuard};
use crate::kit::cli::CommonArgs;
use crate::kit::consumer_topic;
use crate::kit::error::{ProbeError, Result};
use crate::kit::payload::{PayloadKind, Pool};
use crate::kit::produce;
use crate::kit::{Context, Measured, Probe, Sweep};
use alloc_count::Allocator;
use figures::Figures;
use kgap_analyzers::findings::probe_result::{Client, ProbeResult};
use kgap_analyzers::findings::{
    allocator_eases_not_fixes as eases, consumer_allocation_pattern as pattern, Reps, Verdict,
};
use pipeline::Variant;
use serde::Serialize;
use std::path::Path;

/// One point: a variant on an allocator.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
pub struct Point {
    pub variant: Variant,
    pub allocator: Allocator,
}

/// The prefilled topic every run reads from the start.
pub struct Setup<'c> {
    topic: TopicGuard<'c>,
    messages: u64,
}

impl ConsumerAlloc {
    fn messages(&self, broker: &Broker) -> u64 {
        self.opts.messages.unwrap_or(if broker.is_mock() {
            MOCK_MESSAGES_PER_PARTITION * self.opts.partitions as u64
        } else {
            EXTERNAL_MESSAGES
        })
    }

    fn settings(&self, broker: &Broker) -> Vec<(&'static str, String)> {
        vec![
            (
                "group.id",
                crate::kit::broker::topic_name("probe-consumer-alloc-group"),
            ),
            ("enable.auto.commit", "false".into()),
            ("enable.auto.offset.store", "false".into()),
            ("auto.offset.reset", "earliest".into()),
            ("statistics.interval.ms", "1000".into()),
            // The post's fix for the consumer's naps, so they do not hide the pipeline.
            ("fetch.queue.backoff.ms", "10".into()),
        ]
        .into_iter()
        .chain(
            broker
                .is_mock()
                .then(|| ("queued.min.messages", "10000".to_string())),
        )
        .collect()
    }
}

fn find<'a>(
    s: &'a Sweep<ConsumerAlloc>,
    v: Variant,
    a: Allocator,
) -> Option<Measured<'a, ConsumerAlloc>> {
    s.measured()
        .find(|m| m.point.variant == v && m.point.allocator == a)
}

fn reps_of(m: Option<Measured<'_, ConsumerAlloc>>, f: impl Fn(&Figures) -> Option<f64>) -> Reps {
    m.map(|m| m.reps_of(f)).unwrap_or_default()
}

fn machine_cores() -> usize {
    std::thread::available_parallelism().map_or(0, |n| n.get())
}

fn load(s: &Sweep<ConsumerAlloc>) -> Option<f64> {
    let mut v: Vec<f64> = s
        .measured()
        .flat_map(|m| m.runs.iter().filter_map(|f| f.load_average_1m))
        .collect();
    (!v.is_empty()).then(|| crate::kit::measure::median(&mut v))
}

/// The evidence for consumer-allocation-pattern: copying against borrowed on the system
/// allocator (or the one allocator measured).
pub fn pattern_evidence(s: &Sweep<ConsumerAlloc>) -> Option<pattern::Evidence> {
    let a = [Allocator::System, Allocator::Mimalloc]
        .into_iter()
        .find(|&a| {
            find(s, Variant::Copying, a).is_some() && find(s, Variant::Borrowed, a).is_some()
        })?;
    let (c, b) = (find(s, Variant::Copying, a), find(s, Variant::Borrowed, a));
    let perf = |f: fn(&perf::PerfShares) -> f64| reps_of(c, move |x| x.perf.as_ref().map(f));
    Some(pattern::Evidence {
        allocator: a.name().into(),
        paced_rate_per_s: c.and_then(|m| m.point_rate()),
        copying_allocs_per_record: reps_of(c, |f| f.allocations_per_record),
        borrowed_allocs_per_record: reps_of(b, |f| f.allocations_per_record),
        copying_msgs_per_s: reps_of(c, |f| Some(f.msgs_per_s)),
        borrowed_msgs_per_s: reps_of(b, |f| Some(f.msgs_per_s)),
        copying_p50_us: reps_of(c, |f| Some(f.processing_p50_us)),
        borrowed_p50_us: reps_of(b, |f| Some(f.processing_p50_us)),
        copying_cpu_s_per_million: reps_of(c, |f| Some(f.pipeline_cpu_s_per_million)),
        borrowed_cpu_s_per_million: reps_of(b, |f| Some(f.pipeline_cpu_s_per_million)),
        copying_busy_share: reps_of(c, |f| f.processing_busy_share),
        copying_alloc_pct: perf(|p| p.pipeline_alloc_pct),
        copying_memcpy_pct: perf(|p| p.pipeline_memcpy_pct),
        load_average_1m: load(s),
        machine_cores: machine_cores(),
    })
}

fn side(m: Option<Measured<'_, ConsumerAlloc>>) -> eases::Side3 {
    eases::Side3 {
        msgs_per_s: reps_of(m, |f| Some(f.msgs_per_s)),
        p50_us: reps_of(m, |f| Some(f.processing_p50_us)),
        cpu_s_per_million: reps_of(m, |f| Some(f.pipeline_cpu_s_per_million)),
        allocs_per_record: reps_of(m, |f| f.allocations_per_record),
    }
}

/// The evidence for allocator-eases-not-fixes.
pub fn eases_evidence(s: &Sweep<ConsumerAlloc>) -> Option<eases::Evidence> {
    let cs = find(s, Variant::Copying, Allocator::System)?;
    let cm = find(s, Variant::Copying, Allocator::Mimalloc)?;
    let bs = find(s, Variant::Borrowed, Allocator::System)?;
    Some(eases::Evidence {
        scalable: Allocator::Mimalloc.name().into(),
        paced_rate_per_s: cs.point_rate(),
        copying_system: side(Some(cs)),
        copying_scalable: side(Some(cm)),
        borrowed_system: side(Some(bs)),
        copying_busy_share: cs.reps_of(|f| f.processing_busy_share),
        load_average_1m: load(s),
        machine_cores: machine_cores(),
    })
}

trait PointRate {
    fn point_rate(&self) -> Option<u64>;
}

impl PointRate for Measured<'_, ConsumerAlloc> {
    fn point_rate(&self) -> Option<u64> {
        self.runs.first().and_then(|f| f.rate_per_s)
    }
}

impl Probe for ConsumerAlloc {
    type Point = Point;
    type Figures = Figures;
    type Setup<'c> = Setup<'c>;
    const NAME: &'static str = "probe-consumer-alloc";

    fn common(&self) -> &CommonArgs {
        &self.opts.common
    }

    fn check(&self) -> Result<()> {
        if self.opts.variants.is_empty() || self.opts.allocators.is_empty() {
            return Err(ProbeError::Usage(
                "give at least one variant and one allocator".into(),
            ));
        }
        Ok(())
    }

    fn points(&self, _broker: &Broker) -> Vec<Point> {
        let mut v = Vec::new();
        for &variant in &self.opts.variants {
            for &allocator in &self.opts.allocators {
                let p = Point { variant, allocator };
                if !v.contains(&p) {
                    v.push(p);
                }
            }
        }
        v
    }

    fn label(&self, p: &Point) -> String {
        format!("{}-{}", p.variant.name(), p.allocator.name())
    }

    fn validate(&self, broker: &Broker, _points: &[Point]) -> Result<()> {
        broker.validate(&self.settings(broker))
    }

    fn prepare<'c>(&self, cx: &'c Context, result: &mut ProbeResult<Figures>) -> Result<Setup<'c>> {
        let broker = &cx.broker;
        let (partitions, messages) = (self.opts.partitions, self.messages(broker));
        let pool = Pool::new(self.opts.size as usize, PayloadKind::Json);
        result.payload = Some(pool.info());
        let topic = broker.create_topic(Self::NAME, partitions)?;
        result.topics.push(topic.name.clone());
        // lz4 on the mock, which keeps only 5 MiB of batches per partition.
        let compression = if broker.is_mock() { "lz4" } else { "none" };
        cx.progress(&format!(
            "topic {} ({partitions} partitions): prefilling {messages} × {} B JSON records \
             ({compression} compression)",
            topic.name, self.opts.size
        ));
        let pre = produce::prefill(
            broker,
            &topic.name,
            partitions,
            &pool,
            messages,
            compression,
            &|l| cx.progress(l),
        )?;
        consumer_topic::check_retained(broker, &topic, messages)?;
        cx.progress(&format!("prefill done in {:.1} s", pre.seconds));
        result.prefill = serde_json::to_value(&pre).ok();
        Ok(Setup { topic, messages })
    }

    fn run(
        &self,
        cx: &Context,
        setup: &Setup<'_>,
        _client: Client,
        p: &Point,
        dir: &Path,
    ) -> Result<Option<Figures>> {
        let spec = run::RunSpec {
            variant: p.variant,
            allocator: p.allocator,
            partitions: self.opts.partitions,
            rate: self.opts.rate,
            duration: self.opts.duration,
            expected: setup.messages,
            perf: !self.opts.no_perf,
        };
        run::run(
            &cx.broker,
            &setup.topic,
            &self.settings(&cx.broker),
            spec,
            dir,
        )
    }

    fn describe(&self, f: &Figures) -> String {
        render::describe(f)
    }

    fn window_s(&self, f: &Figures) -> Option<f64> {
        Some(f.window_s)
    }

    fn verdicts(&self, sweep: &Sweep<Self>) -> Vec<Verdict> {
        vec![
            match pattern_evidence(sweep) {
                Some(e) => pattern::decide(&e),
                None => Verdict::cannot_tell(
                    &pattern::FINDING,
                    "the copying and borrowed variants were not both measured on one allocator \
                     (--variants copying,borrowed)",
                ),
            },
            match eases_evidence(sweep) {
                Some(e) => eases::decide(&e),
                None => Verdict::cannot_tell(
                    &eases::FINDING,
                    "needs copying on system and mimalloc and borrowed on system \
                     (--variants copying,borrowed --allocators system,mimalloc)",
                ),
            },
        ]
    }

    fn headline(&self, sweep: &Sweep<Self>) -> String {
        render::headline(self, sweep)
    }

    fn render(&self, sweep: &Sweep<Self>) -> String {
        render::render(sweep)
    }

    fn not_measured(&self, broker: &Broker) -> Vec<String> {
        render::not_measured(broker, self.opts.no_perf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[test]
    fn lists_and_bounds_are_checked_by_the_parser() {
        let o =
            Options::try_parse_from(["p", "--variants", "copying,ring", "--allocators", "system"])
                .unwrap();
        assert_eq!(o.variants, vec![Variant::Copying, Variant::Ring]);
        let argv =
            |a: &[&str]| Options::try_parse_from(std::iter::once("p").chain(a.iter().copied()));
        assert!(argv(&["--variants", "copying,,ring"]).is_err());
        assert!(argv(&["--allocators", "jemalloc"]).is_err());
        assert!(argv(&["--size", "50"]).is_err());
        assert!(argv(&["--partitions", "0"]).is_err());
        assert!(argv(&["--rate", "0"]).is_err());
    }
}
