//! From the streamed counters to the report, and the diagnoses in the post's terms.

use serde_json::json;

use super::analyzer::{Analyzer, Clock};
use super::event::Collector;
use super::report::{examples, pause_stats, GcReport, PauseTypeStats};
use super::rounding::{round2, round3};
use super::windows::WindowSummary;
use crate::vocab::report::{Diagnosis, Dist, Examples};

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
        report.diagnoses = diagnoses(&a, &report, collector);
    }
    report
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

fn pct(f: f64) -> f64 {
    round2(f * 100.0)
}

fn diagnoses(a: &Analyzer<'_, '_>, r: &GcReport, collector: Option<Collector>) -> Vec<Diagnosis> {
    let mut out = Vec::new();
    let generational = collector.map_or(true, Collector::generational);
    let w = &a.windows;
    let max_mb = r.max_heap_mb.unwrap_or(0.0);

    // gc-collapse: the post's K=16 producer.
    if let Some(c) = w.worst_collapse {
        let heap = c.heap_considered.unwrap_or(0.0);
        out.push(Diagnosis {
            id: "gc-collapse".into(),
            title: format!(
                "GC collapse: {:.0}% of a {} s window in GC pauses while collections leave the heap {:.0}% full",
                c.gc_fraction * 100.0,
                r.window_s,
                heap * 100.0
            ),
            evidence: json!({
                "windows_collapsed": w.collapse_windows,
                "windows": w.closed,
                "worst_window_start_s": round3(c.start_s),
                "worst_window_gc_fraction": round3(c.gc_fraction),
                "heap_after_gc_pct": pct(heap),
                "first_collapse_s": w.first_collapse.map(|f| round3(f.start_s)),
                "full_gcs": r.full_gcs,
                "full_gc_p50_ms": full_gc_p50(r),
                "evacuation_failures": r.evacuation_failures,
                "heap_after_young_trend": r.heap_after_young.as_ref().map(|h| h.trend),
                "max_heap_mb": max_mb,
                "max_heap_source": r.max_heap_source,
            }),
            cause: format!(
                "A live backlog survives young collections: each young GC copies it instead of \
                 freeing it, the old generation fills, evacuations fail and full GCs run back to \
                 back, so the application gets the CPU GC leaves over. The post saw this at K=16 \
                 producers: heap 1913M->1846M of 2048M after young GCs, a 105-117 ms full GC about \
                 once a second, GC 37% of the window.{}",
                if generational { "" } else { " (This collector is not generational: the heap stays full after every cycle.)" }
            ),
            fix: "Bound the backlog: buffer.memory for a Kafka producer (the post: 2 MB per \
                  instance took 16 producers to 10.1M msg/s at 54 ms p99), or the application's \
                  queue. A bigger heap only delays it: the queue fills the new space too."
                .into(),
            examples: examples(&a.ex_collapse),
        });
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
        let mut ex = a.ex_failure.clone();
        for l in &a.ex_stall.lines {
            ex.offer(l.line, l.text.as_bytes());
        }
        out.push(Diagnosis {
            id: "concurrent-gc-behind".into(),
            title: format!(
                "The concurrent collector could not keep up: {stalls} allocation stall(s), {failures} fallback(s) to stop-the-world"
            ),
            evidence: ev,
            cause: "Allocation outran the concurrent cycle: threads stalled waiting for free memory \
                    (ZGC), or the collector gave up and stopped the world (Shenandoah degenerated or \
                    full GC, G1 concurrent mark abort, CMS concurrent mode failure)."
                .into(),
            fix: "Give the collector headroom (a larger heap, more concurrent GC threads) or \
                  allocate less; if the heap stays nearly full after each cycle, the live set is \
                  the problem, not the collector: bound it (buffer.memory for a Kafka producer)."
                .into(),
            examples: ex.take(Examples::CAP),
        });
    }

    // Evacuation failures without a collapse: G1 found no room to copy survivors.
    if r.evacuation_failures > 0 && w.worst_collapse.is_none() {
        out.push(Diagnosis {
            id: "evacuation-failures".into(),
            title: format!(
                "{}: G1 ran out of free regions to copy into",
                crate::vocab::units::counted(r.evacuation_failures, "evacuation failure")
            ),
            evidence: json!({
                "evacuation_failures": r.evacuation_failures,
                "full_gcs": r.full_gcs,
                "heap_after_young_max_pct": r.heap_after_young.as_ref().map(|h| h.max_pct),
            }),
            cause: "Survivors of a young GC found no free region: the heap was nearly full of live \
                    (or humongous) data, so G1 kept objects in place and often follows with a full GC."
                .into(),
            fix: "Keep headroom: bound what stays live (queues, buffers), raise the heap, or reserve \
                  more (-XX:G1ReservePercent); see the humongous diagnosis if present."
                .into(),
            examples: examples(&a.ex_collapse),
        });
    }

    // Long pauses.
    if a.long_pauses > 0 {
        let worst = r
            .pauses_by_type
            .iter()
            .max_by(|x, y| x.stats.max_ms.total_cmp(&y.stats.max_ms))
            .map(|t| t.kind.clone());
        let mostly_full = a.long_full * 2 >= a.long_pauses;
        out.push(Diagnosis {
            id: "long-pauses".into(),
            title: format!(
                "{} pause(s) of {} ms or more (max {:.1} ms, {})",
                a.long_pauses,
                a.opts.long_pause_ms,
                r.pauses.max_ms,
                worst.as_deref().unwrap_or("?")
            ),
            evidence: json!({
                "long_pauses": a.long_pauses,
                "threshold_ms": a.opts.long_pause_ms,
                "of_which_full_gcs": a.long_full,
                "max_ms": r.pauses.max_ms,
                "p99_ms": r.pauses.p99_ms,
                "longest_type": worst,
            }),
            cause: if mostly_full {
                "Most long pauses are full GCs: the whole heap is marked and compacted with the \
                 application stopped, because the old generation filled."
                    .into()
            } else {
                "Young or mixed pauses take long: much live data is copied per collection (a large \
                 young generation full of survivors), or the machine is short of CPU for GC threads."
                    .into()
            },
            fix: if mostly_full {
                "Find what fills the old generation (see gc-collapse / premature-promotion); a Kafka \
                 producer's backlog is bounded by buffer.memory."
                    .into()
            } else {
                "Lower what survives a young GC, check CPU oversubscription (GC threads compete \
                 with application threads), or set a pause goal (-XX:MaxGCPauseMillis)."
                    .into()
            },
            examples: examples(&a.ex_long),
        });
    }

    // Premature promotion: objects tenured early, then found dead in the old generation.
    let p = &r.promotion;
    let tenuring_low = p.tenuring_lines >= 4 && p.tenuring_threshold_low * 2 >= p.tenuring_lines;
    let dies_old = w.worst_collapse.is_none()
        && r.full_gcs > 0
        && max_mb > 0.0
        && p.promoted_mb >= 0.25 * max_mb
        && p.full_gc_before_mb > 0.0
        && p.full_gc_freed_mb >= 0.5 * p.full_gc_before_mb;
    if tenuring_low || dies_old {
        out.push(Diagnosis {
            id: "premature-promotion".into(),
            title: if tenuring_low {
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
            evidence: json!({
                "promoted_mb": p.promoted_mb,
                "young_gcs_with_old_gen_numbers": p.young_gcs_measured,
                "full_gc_freed_mb": p.full_gc_freed_mb,
                "full_gc_before_mb": p.full_gc_before_mb,
                "tenuring_lines": p.tenuring_lines,
                "tenuring_threshold_low": p.tenuring_threshold_low,
            }),
            cause: "Objects that die soon after their first few collections are copied into the \
                    old generation (survivor space too small, or the tenuring threshold dropped), \
                    so the old generation fills with garbage only a full or mixed GC frees."
                .into(),
            fix: "Give survivors room (a larger young generation or survivor space: -Xmn, \
                  -XX:SurvivorRatio, G1NewSizePercent) or shorten object lifetimes (smaller \
                  batches in flight); this is a heuristic, check it against the gc+age lines."
                .into(),
            examples: Vec::new(),
        });
    }

    // Humongous allocations: G1 objects of half a region or more.
    let young_gcs = r.heap_after_young.as_ref().map_or(0, |h| h.count);
    if r.humongous.gcs_caused > 0
        && r.humongous.gcs_caused * 10 >= young_gcs.max(r.pauses.count / 2).max(1)
    {
        out.push(Diagnosis {
            id: "humongous-allocations".into(),
            title: format!(
                "{} GC(s) started by humongous allocations",
                r.humongous.gcs_caused
            ),
            evidence: json!({
                "gcs_caused": r.humongous.gcs_caused,
                "max_humongous_regions": r.humongous.max_regions,
                "max_humongous_mb": r.humongous.max_mb,
            }),
            cause:
                "Objects of at least half a G1 region (large byte[] buffers: a Kafka batch.size \
                    or fetch buffer of a few MB) go straight to the old generation and trigger \
                    collections of their own."
                    .into(),
            fix: "Raise -XX:G1HeapRegionSize so those buffers are below half a region, or make \
                  the buffers smaller."
                .into(),
            examples: examples(&a.ex_humongous),
        });
    }

    // A log that ends mid-line was cut (a truncated copy, a paste, a running JVM): the event
    // it was writing and whatever came after are not in it, so "no problem" would be a claim
    // about what was never read.
    let cut = r.input.unterminated_last_line || r.input.gzip_cut.is_some();
    // No whole window measured (a few lines over less than a window): "no window spent
    // 20% in GC" would be said of no window at all.
    if out.is_empty() && r.gc_fraction_max_window.is_none() {
        out.push(Diagnosis {
            id: "gc-log-too-short".into(),
            title: "Too short to tell whether GC is a problem".into(),
            evidence: json!({
                "pauses": r.pauses.count,
                "max_pause_ms": r.pauses.max_ms,
                "duration_s": r.duration_s,
                "window_s": r.window_s,
            }),
            cause: format!(
                "The log covers less than one {} s window, so no share of time in GC could be \
                 measured; its {} pause(s) reached {} ms at most.",
                r.window_s, r.pauses.count, r.pauses.max_ms
            ),
            fix: "Give a longer stretch of the log (a minute or more around the slow period)."
                .into(),
            examples: Vec::new(),
        });
    }
    if out.is_empty() && cut {
        out.push(Diagnosis {
            id: "gc-log-cut".into(),
            title: "No GC problem in what was read, but the log is cut".into(),
            evidence: json!({
                "gc_fraction_max_window": r.gc_fraction_max_window,
                "max_pause_ms": r.pauses.max_ms,
                "full_gcs": r.full_gcs,
                "bytes_read": r.input.bytes,
            }),
            cause: format!(
                "In what was read no window spent {:.0}% or more in GC with a full heap and no \
                 pause reached {} ms; but the log ends mid-line (a truncated copy or paste, or a \
                 JVM still writing it), so the event it was writing and whatever came after \
                 are not in it: this says nothing about them.",
                a.opts.collapse_gc_share * 100.0,
                a.opts.long_pause_ms
            ),
            fix: "Give the whole log (or the part after the cut) to see whether the GC that \
                  was being written, or a later one, is the problem."
                .into(),
            examples: Vec::new(),
        });
    }
    if out.is_empty() {
        out.push(Diagnosis {
            id: "no-gc-problem".into(),
            title: "No GC problem".into(),
            evidence: json!({
                "gc_fraction_max_window": r.gc_fraction_max_window,
                "max_pause_ms": r.pauses.max_ms,
                "full_gcs": r.full_gcs,
                "heap_after_young_max_pct": r.heap_after_young.as_ref().map(|h| h.max_pct),
            }),
            cause: format!(
                "No window spent {:.0}% or more in GC with a full heap, no pause reached {} ms, \
                 no evacuation failure or stall.",
                a.opts.collapse_gc_share * 100.0,
                a.opts.long_pause_ms
            ),
            fix: "Nothing to change for GC; look elsewhere for the gap.".into(),
            examples: Vec::new(),
        });
    }
    out
}

fn full_gc_p50(r: &GcReport) -> Option<f64> {
    r.pauses_by_type
        .iter()
        .find(|t| t.kind.starts_with("Pause Full") || t.kind == "Full GC")
        .map(|t| t.stats.p50_ms)
}
