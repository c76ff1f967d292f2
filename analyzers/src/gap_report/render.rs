//! The terminal report (80 columns) and the Markdown one (GitHub, charts beside it).

use std::fmt::Write as _;
use std::path::{Component, Path, PathBuf};

use super::report::{GapReport, Signal, SignalWindow};
use crate::vocab::report::wrap_into;

/// `2026-11-30 09:41:07 UTC` from epoch seconds (civil-from-days, no time zone data).
fn utc(epoch_s: f64) -> String {
    let secs = epoch_s.floor() as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + (m <= 2) as i64;
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02} UTC",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// The window in words.
pub(crate) fn window_text(w: &SignalWindow) -> String {
    let dur = w
        .duration_s
        .map(|d| format!("{d:.1} s"))
        .unwrap_or_else(|| "? s".into());
    let epoch = matches!(w.clock.as_str(), "epoch" | "wall") && w.start_s.is_some_and(|s| s > 1e8);
    let span = match (w.clock.as_str(), w.start_s, w.end_s) {
        (_, Some(s), Some(e)) if epoch => format!("{} → {} ({dur})", utc(s), &utc(e)[11..]),
        (clock, Some(s), Some(e)) => format!("{s:.3} → {e:.3} s ({dur}, {clock} clock)"),
        (clock, _, _) => format!("{dur} ({clock} clock)"),
    };
    match w.shows_from_s {
        Some(f) if epoch => format!("{span}; shows from {}", &utc(f)[11..]),
        Some(f) => format!("{span}; shows from {f:.1} s"),
        None => span,
    }
}

/// Scalar evidence fields as `k=v`, in the evidence's (sorted) order.
fn evidence_line(s: &Signal) -> String {
    let Some(obj) = s.evidence.as_object() else {
        return String::new();
    };
    obj.iter()
        .filter(|(_, v)| !v.is_object() && !v.is_array() && !v.is_null())
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn strength(s: &Signal) -> &'static str {
    match s.strength {
        Some(crate::findings::Strength::Direct) => "direct",
        Some(crate::findings::Strength::Indirect) => "indirect",
        None => "-",
    }
}

/// The tail of a line in `room` characters (log lines end with librdkafka's message).
fn tail(text: &str, room: usize) -> String {
    let n = text.chars().count();
    if n > room {
        let t: String = text.chars().skip(n - (room - 1)).collect();
        format!("…{t}")
    } else {
        text.to_string()
    }
}

pub(crate) fn text(r: &GapReport) -> String {
    let mut out = String::new();
    let unused = r.files_seen - r.files_used;
    let _ = writeln!(
        out,
        "gap-report: {}: {} files, {} used, {} not used",
        r.dir, r.files_seen, r.files_used, unused
    );
    if r.files_seen == 0 {
        let _ = writeln!(
            out,
            "\nThe folder is empty: nothing to analyse. Point gap-report at a folder of \
             captures\n(a probe's --out DIR, librdkafka logs, GC logs, JFR recordings)."
        );
        return out;
    }
    if r.files_used == 0 {
        let _ = writeln!(out);
        wrap_into(
            &mut out,
            "",
            "None of these files is something gap-report reads (librdkafka debug logs, \
             librdkafka statistics JSON, JVM GC logs, JFR recordings or exports, thread-CPU \
             recordings, probe results): no gap can be looked for. Why each file was not \
             used is listed below.",
        );
    }

    let _ = writeln!(out, "\nGAPS FOUND: {}", r.gaps.len());
    if r.gaps.is_empty() && r.files_used > 0 {
        let _ = writeln!(out, "  none of the post's findings shows in these files");
    }
    for g in &r.gaps {
        let _ = writeln!(out);
        wrap_into(&mut out, "* ", &format!("{} [{}]", g.title, g.finding));
        wrap_into(
            &mut out,
            "  confidence: ",
            &format!("{} ({})", g.confidence.as_str(), g.confidence_why),
        );
        wrap_into(&mut out, "  cause: ", g.cause);
        wrap_into(&mut out, "  fix:   ", g.fix);
        wrap_into(&mut out, "  post:  ", g.post);
        for s in &g.signals {
            let _ = writeln!(out);
            wrap_into(
                &mut out,
                "  - ",
                &format!("{} ({} {}, {})", s.file, s.source, s.id, strength(s)),
            );
            wrap_into(&mut out, "    ", &s.title);
            if let Some(w) = &s.window {
                wrap_into(&mut out, "    window: ", &window_text(w));
            }
            let ev = evidence_line(s);
            if !ev.is_empty() {
                wrap_into(&mut out, "    evidence: ", &ev);
            }
            for e in &s.examples {
                let label = format!("    line {}: ", e.line);
                let room = 79usize.saturating_sub(label.chars().count()).max(20);
                let _ = writeln!(out, "{label}{}", tail(&e.text, room));
            }
        }
        for a in &g.against {
            wrap_into(&mut out, "  against: ", a);
        }
        wrap_into(&mut out, "  reproduce: ", g.reproduce);
    }

    let _ = writeln!(out, "\nLOOKED FOR, NOT FOUND: {}", r.not_found.len());
    for n in &r.not_found {
        wrap_into(
            &mut out,
            "  - ",
            &format!("{} [{}]: {}", n.title, n.finding, n.result),
        );
        for v in &n.probe_verdicts {
            wrap_into(&mut out, "      probe: ", v);
        }
    }

    if !r.other_diagnoses.is_empty() {
        let _ = writeln!(
            out,
            "\nOTHER DIAGNOSES (not findings of the post): {}",
            r.other_diagnoses.len()
        );
        for s in &r.other_diagnoses {
            wrap_into(
                &mut out,
                "  - ",
                &format!("{}: {} [{}]: {}", s.file, s.source, s.id, s.title),
            );
            if let Some(q) = &s.question {
                wrap_into(&mut out, "      ? ", q);
            }
        }
    }

    let _ = writeln!(out, "\nFILES USED: {}", r.files_used);
    for f in r.files.iter().filter(|f| f.used) {
        wrap_into(
            &mut out,
            "  ",
            &format!(
                "{} [{}{}]: {}",
                f.path,
                f.kind,
                if f.gzip { ", gzip" } else { "" },
                f.summary
            ),
        );
    }
    let _ = writeln!(out, "\nFILES NOT USED: {unused}");
    for f in r.files.iter().filter(|f| !f.used) {
        wrap_into(
            &mut out,
            "  ",
            &format!("{}: {}", f.path, f.reason.as_deref().unwrap_or("")),
        );
    }
    out
}

/// A command in a code span, with a planned probe's mark outside it.
fn command(c: &str) -> String {
    match c.strip_suffix(" (planned)") {
        Some(cmd) => format!("`{cmd}` (planned probe)"),
        None => format!("`{c}`"),
    }
}

/// Markdown cells: no pipes or newlines.
fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

pub(crate) fn markdown(r: &GapReport, svg_prefix: Option<&str>) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# Gap report: `{}`\n", r.dir);
    let _ = writeln!(
        out,
        "{} files, {} used, {} not used. The findings are the post's, as kgap's \
         catalogue (`docs/findings.md`) states them.\n",
        r.files_seen,
        r.files_used,
        r.files_seen - r.files_used
    );
    if r.files_used == 0 {
        let _ = writeln!(
            out,
            "**Nothing here is something gap-report reads**: no gap can be looked for. \
             Why each file was not used is listed at the end.\n"
        );
    }
    let _ = writeln!(out, "## Gaps found ({})\n", r.gaps.len());
    if r.gaps.is_empty() {
        let _ = writeln!(out, "None of the post's findings shows in these files.\n");
    } else {
        let _ = writeln!(out, "| finding | confidence | evidence | fix |");
        let _ = writeln!(out, "| --- | --- | --- | --- |");
        for g in &r.gaps {
            let files: Vec<String> = g
                .signals
                .iter()
                .map(|s| format!("`{}` ({})", s.id, s.file))
                .collect();
            let _ = writeln!(
                out,
                "| [{}](#{}) | {} | {} | {} |",
                cell(g.title),
                g.finding,
                g.confidence.as_str(),
                cell(&files.join("<br>")),
                cell(g.fix)
            );
        }
        let _ = writeln!(out);
    }
    let mut shown = std::collections::BTreeSet::new();
    for g in &r.gaps {
        let _ = writeln!(out, "<a id=\"{}\"></a>\n### {}\n", g.finding, g.title);
        let _ = writeln!(
            out,
            "**Confidence: {}** — {}.\n",
            g.confidence.as_str(),
            g.confidence_why
        );
        let _ = writeln!(out, "- **Cause** (the post's terms): {}", g.cause);
        let _ = writeln!(out, "- **Fix**: {}", g.fix);
        let _ = writeln!(out, "- **The post**: {}", g.post);
        let _ = writeln!(out, "- **Reproduce**: {}\n", command(g.reproduce));
        for s in &g.signals {
            let _ = writeln!(
                out,
                "#### `{}` — {} `{}` ({})\n",
                s.file,
                s.source,
                s.id,
                strength(s)
            );
            let _ = writeln!(out, "{}\n", s.title);
            if let Some(w) = &s.window {
                let _ = writeln!(out, "- window: {}", window_text(w));
            }
            let ev = evidence_line(s);
            if !ev.is_empty() {
                let _ = writeln!(out, "- evidence: {}", ev.replace(", ", " · "));
            }
            if !s.cause.is_empty() {
                let _ = writeln!(out, "- analyzer's reading: {}", s.cause);
            }
            if !s.examples.is_empty() {
                let _ = writeln!(out, "\n```");
                for e in &s.examples {
                    let _ = writeln!(out, "{:>6}: {}", e.line, e.text);
                }
                let _ = writeln!(out, "```");
            }
            let _ = writeln!(out);
            if let Some(prefix) = svg_prefix {
                // Each chart once, under the first signal of its file.
                for c in r.charts.iter().filter(|c| c.source == s.file) {
                    if !shown.insert(c.file.as_str()) {
                        continue;
                    }
                    let _ = writeln!(out, "![{}]({prefix}{})\n", cell(&c.title), c.file);
                }
            }
        }
        for a in &g.against {
            let _ = writeln!(out, "- against: {a}");
        }
    }
    let _ = writeln!(out, "## Looked for, not found ({})\n", r.not_found.len());
    let _ = writeln!(out, "| finding | result | reproduce |");
    let _ = writeln!(out, "| --- | --- | --- |");
    for n in &r.not_found {
        let mut result = n.result.clone();
        for v in &n.probe_verdicts {
            result.push_str(&format!("<br>probe: {v}"));
        }
        let _ = writeln!(
            out,
            "| {} (`{}`) | {} | {} |",
            cell(n.title),
            n.finding,
            cell(&result),
            cell(&command(n.reproduce))
        );
    }
    let _ = writeln!(out);
    if !r.other_diagnoses.is_empty() {
        let _ = writeln!(out, "## Other diagnoses (not findings of the post)\n");
        for s in &r.other_diagnoses {
            let _ = writeln!(out, "- `{}` — {} `{}`: {}", s.file, s.source, s.id, s.title);
            if let Some(q) = &s.question {
                let _ = writeln!(out, "  - {q}");
            }
        }
        let _ = writeln!(out);
    }
    let _ = writeln!(out, "## Files\n");
    let _ = writeln!(out, "| file | kind | used by | what was read, or why not |");
    let _ = writeln!(out, "| --- | --- | --- | --- |");
    for f in &r.files {
        let _ = writeln!(
            out,
            "| `{}` | {}{} | {} | {} |",
            cell(&f.path),
            f.kind,
            if f.gzip { " (gzip)" } else { "" },
            if f.used {
                cell(&f.analyzers.join(", "))
            } else {
                "not used".into()
            },
            cell(if f.used {
                &f.summary
            } else {
                f.reason.as_deref().unwrap_or("")
            })
        );
    }
    out
}

/// `to` as seen from the folder `from` (both made absolute against the current folder),
/// for links from the Markdown file to its charts.
pub fn relative_path(from: &Path, to: &Path) -> PathBuf {
    let cwd = std::env::current_dir().unwrap_or_default();
    let (from, to) = (cwd.join(from), cwd.join(to));
    let f: Vec<Component<'_>> = from.components().collect();
    let t: Vec<Component<'_>> = to.components().collect();
    let common = f.iter().zip(&t).take_while(|(a, b)| a == b).count();
    let mut p = PathBuf::new();
    for c in &f[common..] {
        if !matches!(c, Component::CurDir) {
            p.push("..");
        }
    }
    for c in &t[common..] {
        if !matches!(c, Component::CurDir) {
            p.push(c.as_os_str());
        }
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_dates() {
        assert_eq!(utc(0.0), "1970-01-01 00:00:00 UTC");
        assert_eq!(utc(1_796_021_757.5), "2026-11-30 06:55:57 UTC");
    }

    #[test]
    fn relative_paths() {
        assert_eq!(
            relative_path(Path::new("/a/b"), Path::new("/a/b/svg")),
            PathBuf::from("svg")
        );
        assert_eq!(
            relative_path(Path::new("/a/b"), Path::new("/a/c/svg")),
            PathBuf::from("../c/svg")
        );
    }
}
