//! One run's figures: the companion's window figures and its own gc.log, read the way the
//! catalogue's rule reads a rep ([`rule::Rep`]), and the sweep's evidence for that rule.

use super::cores::cores;
use super::options::JavaProducers;
use super::point::Point;
use crate::kit::error::{ProbeError, Result};
use crate::kit::java::CompanionResult;
use crate::kit::measure::round3;
use crate::kit::{Measured, Sweep};
use kgap_analyzers::findings::java_gc_collapse as rule;
use kgap_analyzers::findings::Reps;
use kgap_analyzers::gc::{analyze_gc_logs, GcInput, GcLogOptions, GcReport};
use serde::Serialize;
use std::path::Path;

/// One run's figures.
#[derive(Debug, Clone, Serialize)]
pub struct Figures {
    /// The run's own topic (created for it, deleted after it); None when its JVM ran out of
    /// memory (the companion exited before it reported anything).
    pub topic: Option<String>,
    /// Acknowledged messages in the window, all producers.
    pub messages: u64,
    pub window_s: f64,
    pub msgs_per_s: f64,
    pub mb_per_s: f64,
    /// Send-to-ack of sampled messages (one in 16).
    pub send_to_ack_ms_p50: Option<f64>,
    pub send_to_ack_ms_p99: Option<f64>,
    pub send_to_ack_ms_max: Option<f64>,
    pub latency_samples: u64,
    /// The catalogue's reading of this rep: GC's share of the window (the JVM's MXBeans) and
    /// of its worst second (the gc.log), the heap after young GC then, out of memory.
    #[serde(flatten)]
    pub gc: rule::Rep,
    /// Collapsed by the catalogue's rule (None: GC-heavy with the heap not measured).
    pub collapsed: Option<bool>,
    /// GC over the window (MXBeans): collections and pause time; full collections (the
    /// old-generation collector's, or the gc.log's when more).
    pub gc_count: u64,
    pub gc_time_ms: u64,
    /// analyze-gc-log's diagnoses of the run's whole gc.log (JVM start to exit); its full
    /// GCs, evacuation failures and mean heap after young GC are in `gc`.
    pub gc_log_diagnoses: Vec<String>,
    pub process_cpu_s: f64,
    pub cpu_s_per_million: f64,
    pub rss_mb: f64,
    pub delivery_errors: u64,
    /// The backlog at the window's end: messages sent and not acknowledged, the
    /// accumulators' MB in use (all producers), and the seconds send() spent blocked on a
    /// full buffer.memory during the window (summed over producers).
    pub sent_per_s: Option<f64>,
    pub backlog_messages_end: Option<i64>,
    pub buffer_used_mb_end: Option<f64>,
    pub buffer_wait_s: Option<f64>,
}

/// analyze-gc-log on one run's gc.log, with the catalogue's collapse thresholds so its
/// collapse second is the rule's.
pub fn read_gc_log(path: &Path) -> Result<GcReport> {
    let f = std::fs::File::open(path)
        .map_err(|e| ProbeError::io(format!("reading {}", path.display()), e))?;
    let opts = GcLogOptions {
        collapse_gc_share: rule::MIN_GC_SHARE,
        collapse_heap_share: rule::MIN_HEAP_SHARE,
        ..GcLogOptions::default()
    };
    analyze_gc_logs(
        vec![GcInput {
            name: path.display().to_string(),
            reader: kgap_analyzers::engine::input::Source::file(f),
        }],
        &opts,
        None,
    )
    .map_err(|e| ProbeError::Kafka(format!("analyzing {}: {e}", path.display())))
}

/// A run's figures from the companion's result and its GC log.
pub fn figures(r: &CompanionResult, gc: &GcReport, topic: Option<String>) -> Figures {
    let mut rep = rule::Rep::of(r.gc_fraction, gc, false);
    // The old-generation collector's count from the MXBeans when the gc.log saw fewer.
    rep.full_gcs = r.full_gcs().max(gc.full_gcs);
    Figures {
        topic,
        messages: r.messages,
        window_s: r.seconds,
        msgs_per_s: r.msgs_per_s,
        mb_per_s: r.mb_per_s,
        send_to_ack_ms_p50: r.send_to_ack_ms_p50.filter(|x| *x >= 0.0),
        send_to_ack_ms_p99: r.send_to_ack_ms_p99.filter(|x| *x >= 0.0),
        send_to_ack_ms_max: r.send_to_ack_ms_max.filter(|x| *x >= 0.0),
        latency_samples: r.latency_samples.unwrap_or(0),
        gc: rep,
        collapsed: rep.collapsed(),
        gc_count: r.gc_count,
        gc_time_ms: r.gc_time_ms,
        gc_log_diagnoses: gc.diagnoses.iter().map(|d| d.id.to_string()).collect(),
        process_cpu_s: r.process_cpu_s,
        cpu_s_per_million: if r.messages > 0 {
            round3(r.process_cpu_s / (r.messages as f64 / 1e6))
        } else {
            0.0
        },
        rss_mb: round3(r.rss_bytes as f64 / 1e6),
        delivery_errors: r.delivery_errors.unwrap_or(0),
        sent_per_s: r.sent_per_s,
        backlog_messages_end: r.backlog_messages_end,
        buffer_used_mb_end: r.buffer_used_bytes_end.map(|b| round3(b as f64 / 1e6)),
        buffer_wait_s: r.buffer_wait_s,
    }
}

/// A run whose JVM threw OutOfMemoryError: the collapse run to its end. No RESULT line, so
/// the window figures are 0 (a producer that died acknowledges nothing more) and GC comes
/// from the run's gc.log alone (its whole life, warmup included).
pub fn figures_out_of_memory(gc: &GcReport) -> Figures {
    let share = match gc.duration_s {
        Some(d) if d > 0.0 => round3(gc.pauses.total_ms / 1000.0 / d),
        _ => 0.0,
    };
    let mut f = figures(&CompanionResult::default(), gc, None);
    f.gc = rule::Rep::of(share, gc, true);
    f.collapsed = f.gc.collapsed();
    f.gc_count = gc.pauses.count;
    f.gc_time_ms = gc.pauses.total_ms.round() as u64;
    f
}

/// One point's reps as the rule takes them.
pub fn point_evidence(point: &Point, runs: &[Figures]) -> rule::PointEvidence {
    rule::PointEvidence {
        producers: point.producers,
        buffer_memory_bytes: point.buffer_memory,
        reps: runs.iter().map(|f| f.gc).collect(),
        msgs_per_s: Reps::new(runs.iter().map(|f| f.msgs_per_s)),
        send_to_ack_ms_p99: Reps::of_some(runs.iter().map(|f| f.send_to_ack_ms_p99)),
    }
}

/// The sweep's evidence: every measured point, the cores the JVM could use, its heap.
pub fn evidence(probe: &JavaProducers, sweep: &Sweep<JavaProducers>) -> rule::Evidence {
    rule::Evidence {
        cores: cores() as u32,
        heap_mb: crate::kit::java::parse_size(&probe.heap()).map_or(0.0, |b| b as f64 / 1048576.0),
        points: sweep
            .measured()
            .map(|m: Measured<'_, JavaProducers>| point_evidence(m.point, m.runs))
            .collect(),
    }
}
