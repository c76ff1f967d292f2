//! The human report: 80 columns, numbers first, diagnoses last.

use std::fmt::Write as _;

use super::report::GcReport;
use crate::vocab::report::render_diagnosis;

impl GcReport {
    /// The human report (80 columns).
    pub fn render_text(&self) -> String {
        text(self)
    }
}

fn text(r: &GcReport) -> String {
    let mut o = String::new();
    let files = r.files.join(", ");
    let _ = writeln!(
        o,
        "{}: {} ({}{})",
        files,
        r.collector.as_deref().unwrap_or("collector unknown"),
        r.format.unwrap_or("?"),
        match (&r.jdk, &r.jdk_hint) {
            (Some(v), _) => format!(", JDK {v}"),
            (None, Some(h)) => format!(", JDK {h}"),
            _ => String::new(),
        }
    );
    if let Some(reason) = &r.unsupported {
        let _ = writeln!(o, "unsupported: {reason}");
        return o;
    }
    let span = match (r.start_s, r.end_s, r.duration_s) {
        (Some(s), Some(e), Some(d)) => {
            format!("{s:.3} .. {e:.3} s on the {} clock ({d:.1} s)", r.clock)
        }
        _ => "no timestamps: per-window GC time is not measured".into(),
    };
    let _ = writeln!(o, "log:    {span}, {} lines", r.input.lines);
    if let Some(m) = r.max_heap_mb {
        let _ = writeln!(
            o,
            "heap:   max {m:.0} MB ({})",
            r.max_heap_source.unwrap_or("?")
        );
    }
    let p = &r.pauses;
    let _ = writeln!(o);
    let _ = writeln!(
        o,
        "pauses: {} in {:.1} ms; p50 {:.3} ms, p99 {:.3} ms, max {:.3} ms",
        p.count, p.total_ms, p.p50_ms, p.p99_ms, p.max_ms
    );
    if !r.pauses_by_type.is_empty() {
        let _ = writeln!(
            o,
            "  {:<34} {:>6} {:>10} {:>9} {:>9} {:>9}",
            "type", "count", "total ms", "p50 ms", "p99 ms", "max ms"
        );
        for t in &r.pauses_by_type {
            let s = &t.stats;
            let kind: String = t.kind.chars().take(34).collect();
            let _ = writeln!(
                o,
                "  {kind:<34} {:>6} {:>10.1} {:>9.3} {:>9.3} {:>9.3}",
                s.count, s.total_ms, s.p50_ms, s.p99_ms, s.max_ms
            );
        }
    }
    let _ = writeln!(
        o,
        "full GCs: {} ({:.1} ms); evacuation failures: {}{}",
        r.full_gcs,
        r.full_gc_ms,
        r.evacuation_failures,
        if r.degenerated_gcs > 0 {
            format!("; degenerated GCs: {}", r.degenerated_gcs)
        } else {
            String::new()
        }
    );
    if let (Some(f), Some(w)) = (r.gc_fraction_max_window, r.worst_window) {
        let _ = writeln!(
            o,
            "GC time: worst {} s window {:.1}% at {:.1} s; {} of {} windows ≥ 20%, {} of them with a full heap",
            r.window_s,
            f * 100.0,
            w.start_s,
            r.windows_gc_over_share,
            r.windows,
            r.windows_collapsed
        );
    }
    for (label, h) in [
        ("young GC", &r.heap_after_young),
        ("any GC", &r.heap_after_gc),
    ] {
        if let Some(h) = h {
            let _ = writeln!(
                o,
                "heap after {label}: {:.1}% -> {:.1}% of max (min {:.1}, max {:.1}, {}, {}{})",
                h.first_pct,
                h.last_pct,
                h.min_pct,
                h.max_pct,
                crate::vocab::units::counted(h.count, "GC"),
                h.trend,
                h.trend_pct_per_min
                    .map(|s| if r.duration_s.unwrap_or(0.0) < 120.0 {
                        // Short logs: per minute would extrapolate far past the log.
                        format!(" {:+.2} pts/s", s / 60.0)
                    } else {
                        format!(" {s:+.1} pts/min")
                    })
                    .unwrap_or_default()
            );
        }
    }
    if r.humongous.gcs_caused > 0 || r.humongous.max_regions.unwrap_or(0) > 0 {
        let _ = writeln!(
            o,
            "humongous: {} caused, {}",
            crate::vocab::units::counted(r.humongous.gcs_caused, "GC"),
            match r.humongous.max_regions {
                Some(m) if m > 0 => format!(
                    "at most {} after a GC",
                    crate::vocab::units::counted(m, "region")
                ),
                _ => "no regions left after any GC".to_string(),
            }
        );
    }
    let st = &r.allocation_stalls;
    if st.count > 0 || st.counted_by_gc > 0 {
        let _ = writeln!(
            o,
            "allocation stalls: {} ({:.1} ms, max {:.1} ms)",
            st.count.max(st.counted_by_gc),
            st.total_ms,
            st.max_ms
        );
    }
    for c in &r.concurrent_failures {
        let _ = writeln!(o, "could not keep up: {} x {}", c.count, c.what);
    }
    if !r.causes.is_empty() {
        let causes: Vec<String> = r
            .causes
            .iter()
            .take(5)
            .map(|c| format!("{} {}", c.what, c.count))
            .collect();
        let _ = writeln!(o, "causes: {}", causes.join(", "));
    }
    for w in &r.warnings {
        let _ = writeln!(o, "warning: {w}");
    }
    for d in &r.diagnoses {
        render_diagnosis(&mut o, d);
    }
    o
}
