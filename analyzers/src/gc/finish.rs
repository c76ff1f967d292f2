//! From the streamed counters to the report, and the evidence the catalogue's diagnoses
//! read beside it (`findings::diagnoses::gc`).

use super::analyzer::{Analyzer, Clock};
use super::event::Collector;
use super::evidence::GcEvidence;
use super::report::{examples, pause_stats, GcReport, PauseTypeStats, WindowSummary};
use super::rounding::{round2, round3};
use crate::findings::diagnoses;
use crate::vocab::report::{Dist, Examples};

const MB: f64 = 1048576.0;

pub(super) fn build(a: Analyzer<'_, '_>, with_timeline: bool) -> GcReport {
    let collector = a.collector();
    let mut warnings = a.warnings.clone();
    let named: Vec<Collector> = if a.named.is_empty() {
        a.hinted.clone()
    } else {
        a.named.clone()
    };
    let collector_name = if named.len() > 1
        && !(named.len() == 2
            && named.contains(&Collector::Zgc)
            && named.contains(&Collector::ZgcGenerational))
    {
        let names: Vec<&str> = named.iter().map(|c| c.name()).collect();
        warnings.push(format!(
            "several collectors in one input ({}): logs of different JVM runs given together? \
             Pause statistics mix them; analyse each run on its own",
            names.join(", ")
        ));
        Some(format!("mixed: {}", names.join(", ")))
    } else {
        collector.map(|c| c.name().to_string())
    };
    let format = match (a.unified_lines > 0, a.legacy_lines > 0) {
        (true, true) => Some("mixed"),
        (true, false) => Some("unified"),
        (false, true) => Some("legacy"),
        _ => None,
    };
    if format == Some("mixed") {
        warnings.push(
            "both JDK 9+ unified and JDK 8 lines: logs of different JVMs concatenated?".into(),
        );
    }
    if a.restarts > 0 {
        warnings.push(format!(
            "the JVM clock went backwards {} time(s): several runs in one input, or rotated files \
             out of order; windows keep each run apart",
            a.restarts
        ));
    }
    if a.gc_ids_backwards > 0 {
        warnings.push(format!(
            "GC ids restarted {} time(s): several JVM runs in one input",
            a.gc_ids_backwards
        ));
    }
    if let Some((id, words)) = a.open_pause() {
        warnings.push(format!(
            "the log ends inside GC({id}) {words}: its start is in the log, its end (duration, \
             heap after) is not; that pause is not counted"
        ));
    }
    if let Some(first) = a.gc_id_first.filter(|&f| f > 1) {
        warnings.push(format!(
            "the log starts mid-stream at GC({first}): earlier collections are not in it (a rotated file?)"
        ));
    }
    if a.legacy.abandoned > 0 {
        warnings.push(format!(
            "{} JDK 8 record(s) never closed (unbalanced brackets) were skipped",
            a.legacy.abandoned
        ));
    }
    if let (Some(log), Some(opt)) = (a.max_heap_log, a.opts.max_heap_bytes) {
        if (log - opt).abs() > 0.5 * MB {
            warnings.push(format!(
                "--max-heap-mb {:.0} was not used: the log states its maximum heap itself \
                 ({:.0} MB)",
                opt / MB,
                log / MB
            ));
        }
    }
    // Every pause was recorded in exactly one type's distribution: all of them together are
    // those merged (exact: counts per bucket, extremes, an integer sum), not a second
    // record per pause on the analyzing thread.
    let dists: Vec<Dist> = a.types.iter().map(|t| t.dist.dist()).collect();
    let mut all = Dist::default();
    for d in &dists {
        all.merge(d);
    }
    let pauses = pause_stats(&all, a.total_ms);
    let mut pauses_by_type: Vec<PauseTypeStats> = a
        .types
        .iter()
        .zip(&dists)
        .map(|(t, d)| PauseTypeStats {
            kind: t.kind.clone(),
            stats: pause_stats(d, t.total_ms),
        })
        .collect();
    pauses_by_type.sort_by(|x, y| y.stats.total_ms.total_cmp(&x.stats.total_ms));
    let mut causes = a.causes.clone();
    causes.sort_by_key(|c| std::cmp::Reverse(c.count));
    let max_heap = a.max_heap();
    let max_heap_source = if a.max_heap_log.is_some() {
        Some("log")
    } else if a.opts.max_heap_bytes.is_some() {
        Some("option")
    } else if a.capacity_seen > 0.0 {
        Some("largest heap capacity seen")
    } else {
        None
    };
    let timed = a.clock.is_some();
    let span = a.windows.span();
    let jdk_hint = if a.jdk.is_some() {
        None
    } else if a.evac_failure_marked && format != Some("legacy") {
        Some("21+ (pauses marked \"Evacuation Failure\")".to_string())
    } else if a.to_space_lines {
        Some("9-20 (separate \"To-space exhausted\" lines)".to_string())
    } else if format == Some("legacy") {
        Some("8 or older (PrintGCDetails format)".to_string())
    } else if format == Some("unified") {
        Some("9+ (unified logging)".to_string())
    } else {
        None
    };
    let young = a.young.report();
    let any = a.any.report();
    let mut stalls = a.stalls.clone();
    stalls.total_ms = round3(stalls.total_ms);
    stalls.max_ms = round3(stalls.max_ms);
    let mut promotion = a.promotion.clone();
    promotion.promoted_mb = round2(promotion.promoted_mb);
    promotion.full_gc_freed_mb = round2(promotion.full_gc_freed_mb);
    promotion.full_gc_before_mb = round2(promotion.full_gc_before_mb);
    let mut concurrent_failures = a.concurrent_failures.clone();
    concurrent_failures.sort_by_key(|c| std::cmp::Reverse(c.count));

    let events = pauses.count + a.any.n + stalls.count;
    let unsupported = unsupported_reason(&a, events, named.is_empty());
    let mut report = GcReport {
        tool: "analyze-gc-log",
        files: a.files.clone(),
        collector: collector_name,
        format,
        jdk: a.jdk.clone(),
        jdk_hint,
        clock: match a.clock {
            Some(Clock::Uptime) => "uptime",
            Some(Clock::Wall) => "wall",
            None => "none",
        },
        start_s: span.map(|(s, _)| round3(s)),
        end_s: span.map(|(_, e)| round3(e)),
        duration_s: span.map(|(s, e)| round3(e - s)),
        gc_id_first: a.gc_id_first,
        gc_id_last: a.gc_id_last,
        max_heap_mb: max_heap.map(|b| round2(b / MB)),
        max_heap_source,
        pauses,
        pauses_by_type,
        causes,
        full_gcs: a.full_gcs,
        full_gc_ms: round3(a.full_gc_ms),
        degenerated_gcs: a.degenerated,
        evacuation_failures: a.evacuation_failures,
        window_s: a.opts.window_s,
        gc_fraction_max_window: if timed {
            a.windows.worst.map(|w| round3(w.gc_fraction))
        } else {
            None
        },
        worst_window: a.windows.worst.map(round_window),
        worst_collapse_window: a.windows.worst_collapse.map(round_window),
        windows: a.windows.closed,
        windows_gc_over_share: a.windows.busy_windows,
        windows_collapsed: a.windows.collapse_windows,
        heap_after_young: young,
        heap_after_gc: any,
        humongous: a.humongous.clone(),
        allocation_stalls: stalls,
        concurrent_failures,
        promotion,
        diagnoses: Vec::new(),
        warnings,
        unsupported,
        input: a.summary.clone(),
        timeline_rows: with_timeline.then_some(a.windows.rows),
        heap_points: a.heap_series.points(),
        pause_points: a.pause_series.points(),
    };
    if report.unsupported.is_none() {
        report.diagnoses = diagnoses::gc::diagnose(&evidence(&a, collector), &report);
    }
    report
}

/// What the diagnoses read beside the report.
fn evidence(a: &Analyzer<'_, '_>, collector: Option<Collector>) -> GcEvidence {
    let w = &a.windows;
    // Concurrent failures first, then stalls: one list of examples for falling behind.
    let mut behind = a.ex_failure.clone();
    for l in &a.ex_stall.lines {
        behind.offer(l.line, l.text.as_bytes());
    }
    GcEvidence {
        generational: collector.map_or(true, Collector::generational),
        worst_collapse: w.worst_collapse,
        first_collapse: w.first_collapse,
        collapse_windows: w.collapse_windows,
        windows_closed: w.closed,
        long_pauses: a.long_pauses,
        long_full: a.long_full,
        long_pause_ms: a.opts.long_pause_ms,
        collapse_gc_share: a.opts.collapse_gc_share,
        ex_collapse: examples(&a.ex_collapse),
        ex_long: examples(&a.ex_long),
        ex_behind: behind.take(Examples::CAP),
        ex_humongous: examples(&a.ex_humongous),
        old_full_after_full_gcs: a.old_full_after_full_gc,
        out_of_memory: a.out_of_memory,
        ex_oom: examples(&a.ex_oom),
    }
}

fn round_window(w: WindowSummary) -> WindowSummary {
    WindowSummary {
        start_s: round3(w.start_s),
        gc_ms: round3(w.gc_ms),
        gc_fraction: round3(w.gc_fraction),
        heap_after_young: w.heap_after_young.map(round3),
        heap_after_gc: w.heap_after_gc.map(round3),
        heap_considered: w.heap_considered.map(round3),
    }
}

fn unsupported_reason(a: &Analyzer<'_, '_>, events: u64, no_collector: bool) -> Option<String> {
    if events > 0 || !no_collector {
        return None;
    }
    let s = &a.summary;
    if s.bytes == 0 {
        return Some(match &s.gzip_cut {
            Some(c) => crate::engine::input::gzip_cut_warning(c, 0),
            None => "empty input".into(),
        });
    }
    if let Some(off) = s.binary_at_offset {
        let what = if a.jfr_magic {
            "a JFR recording, not a GC log (read it with `jfr print`)"
        } else {
            "binary data, not a text GC log"
        };
        return Some(format!("binary input (NUL byte at offset {off}): {what}"));
    }
    if a.unified_lines > 0 {
        return Some(format!(
            "{} unified-logging lines but no GC pause, cycle or collector among them: was the \
             log written with -Xlog:gc (info level) or -Xlog:gc*? (-Xlog:safepoint or gc+heap alone \
             do not say when collections ran)",
            a.unified_lines
        ));
    }
    if a.legacy_lines > 0 {
        return Some(format!(
            "{} lines in JDK 8 style but no GC record among them: was the log written with \
             -XX:+PrintGCDetails (or -verbose:gc)?",
            a.legacy_lines
        ));
    }
    Some(format!(
        "no GC log lines in {} lines: expected JDK 9+ `-Xlog:gc…` output (`[…][gc] GC(0) Pause …`) \
         or JDK 8 `-XX:+PrintGCDetails` output (`… [GC pause …`)",
        s.lines
    ))
}
