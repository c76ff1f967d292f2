//! analyze-gc-log's diagnoses: a GC log read into pauses, windows of GC time and the heap
//! after collections ([`GcReport`], [`GcEvidence`]), judged here. GC logs are any JVM's
//! (Scope::AnyProcess): the words name a Kafka client's knob as one bound among others,
//! never as the cause the log shows.

use serde_json::json;

use super::rule::{DiagnosisRule, Level, Scope, Threshold};
use crate::gc::evidence::GcEvidence;
use crate::gc::report::GcReport;
use crate::vocab::report::{round3, Diagnosis};

const ANALYZER: &str = "analyze-gc-log";

/// Pauses at least this long are long (ms): G1's default pause goal
/// (-XX:MaxGCPauseMillis=200); `--long-pause-ms` changes it per run.
pub const LONG_PAUSE_MS: f64 = 200.0;
/// A window is GC-heavy at this share of its time in pauses: the post saw 37% of the
/// window at K=16 (collapsed) and 1% at K=8; the same bar as java-gc-collapse's.
pub const COLLAPSE_GC_SHARE: f64 = 0.20;
/// …and collapsed when collections leave the heap at least this share of the maximum:
/// the post's 1846 of 2048 MB after young GC (90%) against 214 MB (10%) at K=8.
pub const COLLAPSE_HEAP_SHARE: f64 = 0.80;
/// Tenuring lines needed before their thresholds are believed: a reasoned margin (one
/// or two young GCs at a low threshold are start-up, not a pattern).
pub const TENURING_MIN_LINES: u64 = 4;
/// Premature promotion when at least this share of the tenuring lines say threshold 1
/// (of a larger maximum): a reasoned margin, half of them.
pub const TENURING_LOW_SHARE: f64 = 0.5;
/// …or when young GCs promoted at least this share of the maximum heap…
pub const PROMOTED_HEAP_SHARE: f64 = 0.25;
/// …that full GCs then found dead (at least this share of the heap they found): a
/// reasoned margin, half of what they collected was garbage promoted early.
pub const FULL_GC_FREED_SHARE: f64 = 0.5;
/// Humongous allocations are a diagnosis when they start at least one GC in this many
/// young GCs (or pauses / 2): a reasoned margin, below it they are incidental.
pub const HUMONGOUS_GCS_ONE_IN: u64 = 10;

const COLLAPSE_THRESHOLDS: &[Threshold] = &[
    Threshold {
        name: "COLLAPSE_GC_SHARE",
        value: COLLAPSE_GC_SHARE,
        unit: "share of a window in GC pauses",
        source: "the post: 37% of the window at K=16, 1% at K=8",
    },
    Threshold {
        name: "COLLAPSE_HEAP_SHARE",
        value: COLLAPSE_HEAP_SHARE,
        unit: "share of the maximum heap after GC",
        source: "the post: 1846 of 2048 MB after young GC at K=16, 214 MB at K=8",
    },
];
const LONG_PAUSE: Threshold = Threshold {
    name: "LONG_PAUSE_MS",
    value: LONG_PAUSE_MS,
    unit: "ms",
    source: "G1's default pause goal, -XX:MaxGCPauseMillis=200",
};
const ALL_CLEAR_THRESHOLDS: &[Threshold] =
    &[COLLAPSE_THRESHOLDS[0], COLLAPSE_THRESHOLDS[1], LONG_PAUSE];

pub const GC_COLLAPSE: DiagnosisRule = DiagnosisRule {
    id: "gc-collapse",
    analyzer: ANALYZER,
    level: Level::Problem,
    scope: Scope::AnyProcess,
    rule: "a window spends at least COLLAPSE_GC_SHARE of its time in GC pauses while \
           collections leave the heap at least COLLAPSE_HEAP_SHARE full (after young GC when \
           the window had one, else after its other collections; after a full GC that gives \
           the old generation's numbers, the old generation's fill when the heap's is below)",
    thresholds: COLLAPSE_THRESHOLDS,
};
pub const CONCURRENT_GC_BEHIND: DiagnosisRule = DiagnosisRule {
    id: "concurrent-gc-behind",
    analyzer: ANALYZER,
    level: Level::Problem,
    scope: Scope::AnyProcess,
    rule: "any allocation stall (ZGC) or fallback of a concurrent collector to stop-the-world \
           (Shenandoah degenerated or full GC, G1 concurrent mark abort, CMS concurrent mode \
           failure)",
    thresholds: &[],
};
pub const OUT_OF_MEMORY: DiagnosisRule = DiagnosisRule {
    id: "out-of-memory",
    analyzer: ANALYZER,
    level: Level::Problem,
    scope: Scope::AnyProcess,
    rule: "any `Out Of Memory` line (ZGC) or `java.lang.OutOfMemoryError` in the log: the JVM \
           ran out of heap, never passed over in silence",
    thresholds: &[],
};
pub const EVACUATION_FAILURES: DiagnosisRule = DiagnosisRule {
    id: "evacuation-failures",
    analyzer: ANALYZER,
    level: Level::Problem,
    scope: Scope::AnyProcess,
    rule: "G1 evacuation failures (to-space exhausted) and no gc-collapse",
    thresholds: &[],
};
pub const LONG_PAUSES: DiagnosisRule = DiagnosisRule {
    id: "long-pauses",
    analyzer: ANALYZER,
    level: Level::Problem,
    scope: Scope::AnyProcess,
    rule: "any pause of at least LONG_PAUSE_MS (--long-pause-ms); the words follow whether \
           most of them are full GCs",
    thresholds: &[LONG_PAUSE],
};
pub const PREMATURE_PROMOTION: DiagnosisRule = DiagnosisRule {
    id: "premature-promotion",
    analyzer: ANALYZER,
    level: Level::Note,
    scope: Scope::AnyProcess,
    rule: "at least TENURING_MIN_LINES tenuring lines, TENURING_LOW_SHARE of them at threshold \
           1; or, without gc-collapse, young GCs promoted PROMOTED_HEAP_SHARE of the maximum \
           heap and full GCs freed FULL_GC_FREED_SHARE of what they found",
    thresholds: &[
        Threshold {
            name: "TENURING_MIN_LINES",
            value: TENURING_MIN_LINES as f64,
            unit: "tenuring lines",
            source: "a reasoned margin: one or two low thresholds are start-up",
        },
        Threshold {
            name: "TENURING_LOW_SHARE",
            value: TENURING_LOW_SHARE,
            unit: "share of tenuring lines at threshold 1",
            source: "a reasoned margin: half of them",
        },
        Threshold {
            name: "PROMOTED_HEAP_SHARE",
            value: PROMOTED_HEAP_SHARE,
            unit: "share of the maximum heap promoted",
            source: "a reasoned margin: a quarter of the heap",
        },
        Threshold {
            name: "FULL_GC_FREED_SHARE",
            value: FULL_GC_FREED_SHARE,
            unit: "share of the heap before full GCs that they freed",
            source: "a reasoned margin: half of what they found was garbage",
        },
    ],
};
pub const HUMONGOUS_ALLOCATIONS: DiagnosisRule = DiagnosisRule {
    id: "humongous-allocations",
    analyzer: ANALYZER,
    level: Level::Problem,
    scope: Scope::AnyProcess,
    rule: "humongous allocations started at least one GC in HUMONGOUS_GCS_ONE_IN young GCs \
           (or half the pauses, if more)",
    thresholds: &[Threshold {
        name: "HUMONGOUS_GCS_ONE_IN",
        value: HUMONGOUS_GCS_ONE_IN as f64,
        unit: "young GCs per GC a humongous allocation started",
        source: "a reasoned margin: rarer, they are incidental",
    }],
};
pub const GC_LOG_TOO_SHORT: DiagnosisRule = DiagnosisRule {
    id: "gc-log-too-short",
    analyzer: ANALYZER,
    level: Level::Refusal,
    scope: Scope::AnyProcess,
    rule: "no problem found and no whole window measured (the log covers less than one \
           window): no share of time in GC could be measured",
    thresholds: &[],
};
pub const GC_LOG_CUT: DiagnosisRule = DiagnosisRule {
    id: "gc-log-cut",
    analyzer: ANALYZER,
    level: Level::Refusal,
    scope: Scope::AnyProcess,
    rule: "no problem found in what was read, but the log ends mid-line or its gzip stream \
           ends early: nothing is said of what was not read",
    thresholds: ALL_CLEAR_THRESHOLDS,
};
pub const NO_GC_PROBLEM: DiagnosisRule = DiagnosisRule {
    id: "no-gc-problem",
    analyzer: ANALYZER,
    level: Level::AllClear,
    scope: Scope::AnyProcess,
    rule: "no other diagnosis, at least one whole window measured, and the log not cut",
    thresholds: ALL_CLEAR_THRESHOLDS,
};

pub const RULES: &[DiagnosisRule] = &[
    GC_COLLAPSE,
    CONCURRENT_GC_BEHIND,
    OUT_OF_MEMORY,
    EVACUATION_FAILURES,
    LONG_PAUSES,
    PREMATURE_PROMOTION,
    HUMONGOUS_ALLOCATIONS,
    GC_LOG_TOO_SHORT,
    GC_LOG_CUT,
    NO_GC_PROBLEM,
];

fn round2(v: f64) -> f64 {
    (v * 100.0).round() / 100.0
}

fn pct(f: f64) -> f64 {
    round2(f * 100.0)
}

/// The diagnoses of one analysis: its report and what the report does not carry.
pub(crate) fn diagnose(e: &GcEvidence, r: &GcReport) -> Vec<Diagnosis> {
    let mut out = Vec::new();
    let generational = e.generational;
    let max_mb = r.max_heap_mb.unwrap_or(0.0);

    // gc-collapse: the post's K=16 producer.
    if let Some(c) = e.worst_collapse {
        let heap = c.heap_considered.unwrap_or(0.0);
        out.push(GC_COLLAPSE.emit(
            format!(
                "GC collapse: {:.0}% of a {} s window in GC pauses while collections leave the {} {:.0}% full",
                c.gc_fraction * 100.0,
                r.window_s,
                if e.old_full_after_full_gcs > 0 {
                    "heap (or, after full GCs, the old generation)"
                } else {
                    "heap"
                },
                heap * 100.0
            ),
            json!({
                "windows_collapsed": e.collapse_windows,
                "windows": e.windows_closed,
                "worst_window_start_s": round3(c.start_s),
                "worst_window_gc_fraction": round3(c.gc_fraction),
                "heap_after_gc_pct": pct(heap),
                "full_gcs_old_generation_full": e.old_full_after_full_gcs,
                "first_collapse_s": e.first_collapse.map(|f| round3(f.start_s)),
                "full_gcs": r.full_gcs,
                "full_gc_p50_ms": full_gc_p50(r),
                "evacuation_failures": r.evacuation_failures,
                "heap_after_young_trend": r.heap_after_young.as_ref().map(|h| h.trend),
                "max_heap_mb": max_mb,
                "max_heap_source": r.max_heap_source,
            }),
            format!(
                "A live backlog survives young collections: each young GC copies it instead of \
                 freeing it, the old generation fills, evacuations fail and full GCs run back to \
                 back, so the application gets the CPU GC leaves over. The post saw this at K=16 \
                 producers: heap 1913M->1846M of 2048M after young GCs, a 105-117 ms full GC about \
                 once a second, GC 37% of the window.{}",
                if generational { "" } else { " (This collector is not generational: the heap stays full after every cycle.)" }
            ),
            "Bound the backlog: buffer.memory for a Kafka producer (the post: 2 MB per \
                  instance took 16 producers to 10.1M msg/s at 54 ms p99), or the application's \
                  queue. A bigger heap only delays it: the queue fills the new space too."
                .into(),
            e.ex_collapse.clone(),
        ));
    }

    // Concurrent collectors that fell behind allocation.
    let failures: u64 = r.concurrent_failures.iter().map(|c| c.count).sum();
    let stalls = r
        .allocation_stalls
        .count
        .max(r.allocation_stalls.counted_by_gc);
    if failures > 0 || stalls > 0 {
        let mut ev = json!({
            "allocation_stalls": stalls,
            "allocation_stall_ms": r.allocation_stalls.total_ms,
            "allocation_stall_max_ms": r.allocation_stalls.max_ms,
            "degenerated_gcs": r.degenerated_gcs,
        });
        for c in &r.concurrent_failures {
            ev[c.what.as_str()] = json!(c.count);
        }
        out.push(CONCURRENT_GC_BEHIND.emit(
            format!(
                "The concurrent collector could not keep up: {stalls} allocation stall(s), {failures} fallback(s) to stop-the-world"
            ),
            ev,
            "Allocation outran the concurrent cycle: threads stalled waiting for free memory \
                    (ZGC), or the collector gave up and stopped the world (Shenandoah degenerated or \
                    full GC, G1 concurrent mark abort, CMS concurrent mode failure)."
                .into(),
            "Give the collector headroom (a larger heap, more concurrent GC threads) or \
                  allocate less; if the heap stays nearly full after each cycle, the live set is \
                  the problem, not the collector: bound it (buffer.memory for a Kafka producer)."
                .into(),
            e.ex_behind.clone(),
        ));
    }

    // The JVM ran out of memory: whatever else the log shows, it ended in an error.
    if e.out_of_memory > 0 {
        out.push(
            OUT_OF_MEMORY.emit(
                format!(
                    "The JVM ran out of memory: {}",
                    crate::vocab::units::counted(e.out_of_memory, "OutOfMemoryError line")
                ),
                json!({
                    "out_of_memory_lines": e.out_of_memory,
                    "full_gcs": r.full_gcs,
                    "allocation_stalls": stalls,
                    "heap_after_gc_max_pct": r.heap_after_gc.as_ref().map(|h| h.max_pct),
                    "max_heap_mb": r.max_heap_mb,
                }),
                "An allocation failed after the collector had done what it could: the application \
             got OutOfMemoryError (ZGC prints `Out Of Memory` for a stalled allocation that \
             still found no memory). A GC log shows that it happened, not what filled the \
             heap: that is in a heap dump."
                    .into(),
                "Take a heap dump at the error (-XX:+HeapDumpOnOutOfMemoryError) and bound what \
             fills it (queues, caches, buffers); raise the heap only if the live set is \
             legitimately that large."
                    .into(),
                e.ex_oom.clone(),
            ),
        );
    }

    // Evacuation failures without a collapse: G1 found no room to copy survivors.
    if r.evacuation_failures > 0 && e.worst_collapse.is_none() {
        out.push(EVACUATION_FAILURES.emit(
            format!(
                "{}: G1 ran out of free regions to copy into",
                crate::vocab::units::counted(r.evacuation_failures, "evacuation failure")
            ),
            json!({
                "evacuation_failures": r.evacuation_failures,
                "full_gcs": r.full_gcs,
                "heap_after_young_max_pct": r.heap_after_young.as_ref().map(|h| h.max_pct),
            }),
            "Survivors of a young GC found no free region: the heap was nearly full of live \
                    (or humongous) data, so G1 kept objects in place and often follows with a full GC."
                .into(),
            "Keep headroom: bound what stays live (queues, buffers), raise the heap, or reserve \
                  more (-XX:G1ReservePercent); see the humongous diagnosis if present."
                .into(),
            e.ex_collapse.clone(),
        ));
    }

    // Long pauses.
    if e.long_pauses > 0 {
        let worst = r
            .pauses_by_type
            .iter()
            .max_by(|x, y| x.stats.max_ms.total_cmp(&y.stats.max_ms))
            .map(|t| t.kind.clone());
        let mostly_full = e.long_full * 2 >= e.long_pauses;
        out.push(LONG_PAUSES.emit(
            format!(
                "{} pause(s) of {} ms or more (max {:.1} ms, {})",
                e.long_pauses,
                e.long_pause_ms,
                r.pauses.max_ms,
                worst.as_deref().unwrap_or("?")
            ),
            json!({
                "long_pauses": e.long_pauses,
                "threshold_ms": e.long_pause_ms,
                "of_which_full_gcs": e.long_full,
                "max_ms": r.pauses.max_ms,
                "p99_ms": r.pauses.p99_ms,
                "longest_type": worst,
            }),
            if mostly_full {
                "Most long pauses are full GCs: the whole heap is marked and compacted with the \
                 application stopped, because the old generation filled."
                    .into()
            } else {
                "Young or mixed pauses take long: much live data is copied per collection (a large \
                 young generation full of survivors), or the machine is short of CPU for GC threads."
                    .into()
            },
            if mostly_full {
                "Find what fills the old generation (see gc-collapse / premature-promotion); a Kafka \
                 producer's backlog is bounded by buffer.memory."
                    .into()
            } else {
                "Lower what survives a young GC, check CPU oversubscription (GC threads compete \
                 with application threads), or set a pause goal (-XX:MaxGCPauseMillis)."
                    .into()
            },
            e.ex_long.clone(),
        ));
    }

    // Premature promotion: objects tenured early, then found dead in the old generation.
    let p = &r.promotion;
    let tenuring_low = p.tenuring_lines >= TENURING_MIN_LINES
        && p.tenuring_threshold_low as f64 >= TENURING_LOW_SHARE * p.tenuring_lines as f64;
    let dies_old = e.worst_collapse.is_none()
        && r.full_gcs > 0
        && max_mb > 0.0
        && p.promoted_mb >= PROMOTED_HEAP_SHARE * max_mb
        && p.full_gc_before_mb > 0.0
        && p.full_gc_freed_mb >= FULL_GC_FREED_SHARE * p.full_gc_before_mb;
    if tenuring_low || dies_old {
        out.push(PREMATURE_PROMOTION.emit(
            if tenuring_low {
                format!(
                    "Premature promotion: the tenuring threshold fell to 1 in {} of {} young GCs",
                    p.tenuring_threshold_low, p.tenuring_lines
                )
            } else {
                format!(
                    "Premature promotion: young GCs promoted {:.0} MB that full GCs then freed ({:.0}% of the heap they found)",
                    p.promoted_mb,
                    p.full_gc_freed_mb / p.full_gc_before_mb * 100.0
                )
            },
            json!({
                "promoted_mb": p.promoted_mb,
                "young_gcs_with_old_gen_numbers": p.young_gcs_measured,
                "full_gc_freed_mb": p.full_gc_freed_mb,
                "full_gc_before_mb": p.full_gc_before_mb,
                "tenuring_lines": p.tenuring_lines,
                "tenuring_threshold_low": p.tenuring_threshold_low,
            }),
            "Objects that die soon after their first few collections are copied into the \
                    old generation (survivor space too small, or the tenuring threshold dropped), \
                    so the old generation fills with garbage only a full or mixed GC frees."
                .into(),
            "Give survivors room (a larger young generation or survivor space: -Xmn, \
                  -XX:SurvivorRatio, G1NewSizePercent) or shorten object lifetimes (smaller \
                  batches in flight); this is a heuristic, check it against the gc+age lines."
                .into(),
            Vec::new(),
        ));
    }

    // Humongous allocations: G1 objects of half a region or more.
    let young_gcs = r.heap_after_young.as_ref().map_or(0, |h| h.count);
    if r.humongous.gcs_caused > 0
        && r.humongous.gcs_caused * HUMONGOUS_GCS_ONE_IN >= young_gcs.max(r.pauses.count / 2).max(1)
    {
        out.push(
            HUMONGOUS_ALLOCATIONS.emit(
                format!(
                    "{} GC(s) started by humongous allocations",
                    r.humongous.gcs_caused
                ),
                json!({
                    "gcs_caused": r.humongous.gcs_caused,
                    "max_humongous_regions": r.humongous.max_regions,
                    "max_humongous_mb": r.humongous.max_mb,
                }),
                "Objects of at least half a G1 region (large byte[] buffers: a Kafka batch.size \
                    or fetch buffer of a few MB) go straight to the old generation and trigger \
                    collections of their own."
                    .into(),
                "Raise -XX:G1HeapRegionSize so those buffers are below half a region, or make \
                  the buffers smaller."
                    .into(),
                e.ex_humongous.clone(),
            ),
        );
    }

    // A log that ends mid-line was cut (a truncated copy, a paste, a running JVM): the event
    // it was writing and whatever came after are not in it, so "no problem" would be a claim
    // about what was never read.
    let cut = r.input.unterminated_last_line || r.input.gzip_cut.is_some();
    // No whole window measured (a few lines over less than a window): "no window spent
    // 20% in GC" would be said of no window at all.
    if out.is_empty() && r.gc_fraction_max_window.is_none() {
        out.push(GC_LOG_TOO_SHORT.emit(
            "Too short to tell whether GC is a problem".into(),
            json!({
                "pauses": r.pauses.count,
                "max_pause_ms": r.pauses.max_ms,
                "duration_s": r.duration_s,
                "window_s": r.window_s,
            }),
            format!(
                "The log covers less than one {} s window, so no share of time in GC could be \
                 measured; its {} pause(s) reached {} ms at most.{}",
                r.window_s,
                r.pauses.count,
                r.pauses.max_ms,
                if cut {
                    " It is also cut (it ends mid-line): what came after is not in it."
                } else {
                    ""
                }
            ),
            "Give a longer stretch of the log (a minute or more around the slow period).".into(),
            Vec::new(),
        ));
    }
    if out.is_empty() && cut {
        out.push(
            GC_LOG_CUT.emit(
                "No GC problem in what was read, but the log is cut".into(),
                json!({
                    "gc_fraction_max_window": r.gc_fraction_max_window,
                    "max_pause_ms": r.pauses.max_ms,
                    "full_gcs": r.full_gcs,
                    "bytes_read": r.input.bytes,
                }),
                format!(
                "In what was read no window spent {:.0}% or more in GC with a full heap and no \
                 pause reached {} ms; but the log ends mid-line (a truncated copy or paste, or a \
                 JVM still writing it), so the event it was writing and whatever came after \
                 are not in it: this says nothing about them.",
                e.collapse_gc_share * 100.0,
                e.long_pause_ms
            ),
                "Give the whole log (or the part after the cut) to see whether the GC that \
                  was being written, or a later one, is the problem."
                    .into(),
                Vec::new(),
            ),
        );
    }
    if out.is_empty() {
        out.push(NO_GC_PROBLEM.emit(
            "No GC problem".into(),
            json!({
                "gc_fraction_max_window": r.gc_fraction_max_window,
                "max_pause_ms": r.pauses.max_ms,
                "full_gcs": r.full_gcs,
                "heap_after_young_max_pct": r.heap_after_young.as_ref().map(|h| h.max_pct),
            }),
            format!(
                "No window spent {:.0}% or more in GC with a full heap, no pause reached {} ms, \
                 no evacuation failure or stall.",
                e.collapse_gc_share * 100.0,
                e.long_pause_ms
            ),
            "Nothing to change for GC; look elsewhere for the gap.".into(),
            Vec::new(),
        ));
    }
    out
}

fn full_gc_p50(r: &GcReport) -> Option<f64> {
    r.pauses_by_type
        .iter()
        .find(|t| t.kind.starts_with("Pause Full") || t.kind == "Full GC")
        .map(|t| t.stats.p50_ms)
}

#[cfg(test)]
mod tests {
    //! Each rule both ways, on the report of a healthy real log (the bounded producer of
    //! fixtures/gc) with one figure moved across the rule's threshold.

    use super::*;
    use crate::gc::report::WindowSummary;
    use crate::gc::{analyze_gc_logs, GcInput, GcLogOptions};

    fn healthy() -> (GcEvidence, GcReport) {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../fixtures/gc/g1-jdk17-bounded.log");
        let file = std::fs::File::open(path).unwrap();
        let r = analyze_gc_logs(
            vec![GcInput {
                name: "bounded".into(),
                reader: crate::engine::input::Source::stream(file),
            }],
            &GcLogOptions::default(),
            None,
        )
        .unwrap();
        let e = GcEvidence {
            generational: true,
            long_pause_ms: LONG_PAUSE_MS,
            collapse_gc_share: COLLAPSE_GC_SHARE,
            ..GcEvidence::default()
        };
        (e, r)
    }

    fn ids(e: &GcEvidence, r: &GcReport) -> Vec<String> {
        diagnose(e, r).into_iter().map(|d| d.id).collect()
    }

    #[test]
    fn the_healthy_log_has_no_gc_problem_and_is_not_said_so_when_cut_or_short() {
        let (e, mut r) = healthy();
        assert_eq!(ids(&e, &r), ["no-gc-problem"]);
        r.input.unterminated_last_line = true;
        assert_eq!(ids(&e, &r), ["gc-log-cut"]);
        r.gc_fraction_max_window = None;
        assert_eq!(ids(&e, &r), ["gc-log-too-short"]);
    }

    #[test]
    fn a_window_in_gc_with_the_heap_full_is_a_collapse_and_covers_evacuation_failures() {
        let (mut e, mut r) = healthy();
        r.evacuation_failures = 2;
        assert_eq!(ids(&e, &r), ["evacuation-failures"]);
        let w = WindowSummary {
            start_s: 3.0,
            gc_ms: 370.0,
            gc_fraction: 0.37,
            heap_after_young: Some(0.9),
            heap_after_gc: Some(0.9),
            heap_considered: Some(0.9),
        };
        e.worst_collapse = Some(w);
        e.first_collapse = Some(w);
        e.collapse_windows = 1;
        assert_eq!(ids(&e, &r), ["gc-collapse"]);
    }

    #[test]
    fn a_stall_or_a_fallback_is_a_concurrent_collector_behind() {
        let (e, mut r) = healthy();
        r.allocation_stalls.counted_by_gc = 1;
        assert_eq!(ids(&e, &r), ["concurrent-gc-behind"]);
        r.allocation_stalls.counted_by_gc = 0;
        r.concurrent_failures.push(crate::gc::report::Count {
            what: "concurrent mode failure".into(),
            count: 1,
        });
        assert_eq!(ids(&e, &r), ["concurrent-gc-behind"]);
    }

    #[test]
    fn an_out_of_memory_line_is_never_passed_over() {
        let (mut e, r) = healthy();
        e.out_of_memory = 1;
        assert_eq!(ids(&e, &r), ["out-of-memory"]);
        e.out_of_memory = 0;
        assert_eq!(ids(&e, &r), ["no-gc-problem"]);
    }

    #[test]
    fn long_pauses_are_counted_by_the_analysis_at_the_threshold() {
        let (mut e, r) = healthy();
        e.long_pauses = 1;
        assert_eq!(ids(&e, &r), ["long-pauses"]);
    }

    #[test]
    fn premature_promotion_by_tenuring_lines_or_promoted_garbage() {
        let (e, mut r) = healthy();
        r.promotion.tenuring_lines = TENURING_MIN_LINES;
        r.promotion.tenuring_threshold_low = TENURING_MIN_LINES / 2;
        assert_eq!(ids(&e, &r), ["premature-promotion"]);
        r.promotion.tenuring_threshold_low = TENURING_MIN_LINES / 2 - 1;
        assert_eq!(ids(&e, &r), ["no-gc-problem"]);
        r.promotion.tenuring_lines = TENURING_MIN_LINES - 1;
        r.promotion.tenuring_threshold_low = TENURING_MIN_LINES - 1;
        assert_eq!(ids(&e, &r), ["no-gc-problem"]);
        // Promoted a quarter of the heap, and full GCs freed half of what they found.
        r.full_gcs = 1;
        r.max_heap_mb = Some(1000.0);
        r.promotion.promoted_mb = PROMOTED_HEAP_SHARE * 1000.0;
        r.promotion.full_gc_before_mb = 400.0;
        r.promotion.full_gc_freed_mb = FULL_GC_FREED_SHARE * 400.0;
        assert_eq!(ids(&e, &r), ["premature-promotion"]);
        r.promotion.full_gc_freed_mb = FULL_GC_FREED_SHARE * 400.0 - 1.0;
        assert_eq!(ids(&e, &r), ["no-gc-problem"]);
    }

    #[test]
    fn humongous_allocations_count_from_one_gc_in_ten() {
        let (e, mut r) = healthy();
        r.heap_after_young = None;
        r.humongous.gcs_caused = 1;
        r.pauses.count = 2 * HUMONGOUS_GCS_ONE_IN;
        assert_eq!(ids(&e, &r), ["humongous-allocations"]);
        r.pauses.count = 2 * HUMONGOUS_GCS_ONE_IN + 2;
        assert_eq!(ids(&e, &r), ["no-gc-problem"]);
    }
}
