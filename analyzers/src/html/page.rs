//! The page every HTML report is: one self-contained file (its stylesheet inline, charts as
//! inline SVG, no script, no font or image fetched: it reads offline and as an e-mail
//! attachment), a Content-Security-Policy that forbids every fetch and every script, and
//! the pieces the pages share: a verdict with its checks, a chart, a table of facts.
//!
//! Everything spliced in is escaped by maud (a topic name or a log line is text, never
//! markup); the one exception is a chart, which is kgap's own SVG renderer's output
//! ([`crate::vocab::svg`] escapes every label it draws).

use maud::{html, Markup, PreEscaped, DOCTYPE};

use crate::findings::{self, CheckState, Outcome, Verdict};

/// No fetch of any kind and no script: the page is its own bytes. Inline style only.
const CSP: &str = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; \
                   script-src 'none'; base-uri 'none'; form-action 'none'";

/// Readable on a phone (text wraps, wide tables scroll in their box, charts scale to the
/// width) and in print (evidence folded into <details> is printed open).
const CSS: &str = r#"
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;
 color:#1b1b1b;background:#fff;margin:0 auto;max-width:72rem;padding:1rem;overflow-wrap:anywhere}
h1{font-size:1.45rem;margin:.2rem 0 .6rem}
h2{font-size:1.2rem;margin:1.6rem 0 .5rem;border-bottom:1px solid #ddd;padding-bottom:.2rem}
h3{font-size:1.05rem;margin:.3rem 0}
p{margin:.4rem 0}
code,pre,.mono{font-family:ui-monospace,"DejaVu Sans Mono",Menlo,Consolas,monospace;font-size:.86em}
pre{white-space:pre-wrap;overflow-wrap:anywhere;background:#f5f6f8;padding:.5rem .7rem;margin:.4rem 0}
.lead{color:#444}
.verdicts{list-style:none;padding:0;margin:.5rem 0}
.card{border:1px solid #d0d4d9;border-left-width:6px;border-radius:4px;padding:.6rem .9rem;margin:.8rem 0;background:#fbfbfc}
.card.holds{border-left-color:#1a7f37}.card.does-not-hold{border-left-color:#cf222e}
.card.cannot-tell{border-left-color:#9a6700}.card.info{border-left-color:#57606a}
.card.high{border-left-color:#1a7f37}.card.medium{border-left-color:#9a6700}.card.low{border-left-color:#57606a}
.badge{display:inline-block;font-weight:700;font-size:.85rem;padding:.05rem .45rem;border-radius:3px;color:#fff;background:#57606a;white-space:nowrap}
.holds>.head .badge,.badge.holds{background:#1a7f37}
.does-not-hold>.head .badge,.badge.does-not-hold{background:#cf222e}
.cannot-tell>.head .badge,.badge.cannot-tell{background:#9a6700}
.badge.high{background:#1a7f37}.badge.medium{background:#9a6700}.badge.low{background:#57606a}
.head{display:flex;flex-wrap:wrap;gap:.3rem .6rem;align-items:baseline}
.checks{list-style:none;padding:0;margin:.3rem 0}
.checks li{padding-left:1.5rem;text-indent:-1.5rem;margin:.15rem 0}
.mark{display:inline-block;width:1.5rem;text-indent:0;font-weight:700}
.passed .mark{color:#1a7f37}.failed .mark{color:#cf222e}.undecided .mark{color:#9a6700}
.side{display:grid;grid-template-columns:repeat(auto-fit,minmax(16rem,1fr));gap:.3rem 1rem;margin:.4rem 0}
.side>div{background:#f2f4f7;padding:.4rem .6rem;border-radius:3px}
.label{font-weight:600;color:#444;margin-right:.3rem}
.warn{color:#7d4e00}
.scroll{overflow-x:auto;max-width:100%;margin:.4rem 0}
table{border-collapse:collapse;font-size:.92rem}
th,td{border:1px solid #d0d4d9;padding:.25rem .5rem;text-align:left;vertical-align:top}
th{background:#f2f4f7;overflow-wrap:normal}
td.num{text-align:right;white-space:nowrap;font-variant-numeric:tabular-nums}
figure{margin:.8rem 0;max-width:100%}
figure svg{display:block;max-width:100%;height:auto}
figcaption{font-size:.85rem;color:#444}
details{margin:.4rem 0}
summary{cursor:pointer;font-weight:600}
footer{margin-top:2rem;font-size:.85rem;color:#555}
@media (max-width:40rem){body{padding:.6rem;font-size:15px}}
@media print{body{max-width:none;padding:0}
 details::details-content{content-visibility:visible;display:block;height:auto}
 .card,figure,tr{break-inside:avoid}a{color:inherit}}
"#;

/// A whole page: `<!DOCTYPE html>`, the head (charset, viewport, CSP, the stylesheet),
/// then `body`.
pub(crate) fn document(title: &str, body: Markup) -> String {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                meta http-equiv="Content-Security-Policy" content=(CSP);
                meta name="generator" content=(format!("kgap {}", env!("CARGO_PKG_VERSION")));
                title { (title) }
                style { (PreEscaped(CSS)) }
            }
            body { (body) }
        }
    }
    .into_string()
}

/// The class an outcome's card and badge take.
pub(crate) fn outcome_class(o: Outcome) -> &'static str {
    match o {
        Outcome::Holds => "holds",
        Outcome::DoesNotHold => "does-not-hold",
        Outcome::CannotTell => "cannot-tell",
    }
}

fn state_class(s: CheckState) -> &'static str {
    match s {
        CheckState::Passed => "passed",
        CheckState::Failed => "failed",
        CheckState::Undecided => "undecided",
    }
}

/// How a verdict is reached, in one sentence (the rule of [`crate::findings::verdict`]).
pub(crate) const HOW_DECIDED: &str = "HOLDS when every check of the finding's mechanism \
    passed on measured evidence; DOES NOT HOLD when one failed; CANNOT TELL when none failed \
    but one could not be decided (not measured, too few reps, ranges that overlap).";

/// One verdict as a card: the outcome and the finding first, why, then every check with
/// its numbers, the post's figure beside this run's, the fix, the warnings.
pub(crate) fn verdict(v: &Verdict) -> Markup {
    let f = findings::get(&v.finding);
    let title = f.map_or(v.finding.as_str(), |f| f.title);
    html! {
        div class={"card " (outcome_class(v.outcome))} id={"verdict-" (v.finding)} {
            div class="head" {
                span class="badge" { (v.outcome.label()) }
                h3 { (title) }
                code { (v.finding) }
            }
            p { span class="label" { "Why:" } (v.reason) }
            @if !v.checks.is_empty() {
                ul class="checks" {
                    @for c in &v.checks {
                        li class=(state_class(c.state)) {
                            span class="mark" { (c.mark()) }
                            strong { (c.condition) } ": " (c.detail)
                        }
                    }
                }
            }
            div class="side" {
                div { span class="label" { "The post:" } (v.post) }
                div { span class="label" { "This run:" } (here(v)) }
            }
            @if !v.fix.is_empty() {
                p {
                    span class="label" {
                        @if v.holds() { "Fix:" } @else { "The post's fix:" }
                    }
                    (v.fix)
                }
            }
            @for w in &v.warnings {
                p class="warn" { span class="label" { "Warning:" } (w) }
            }
            @if let Some(f) = f {
                details {
                    summary { "How it was decided" }
                    p { (HOW_DECIDED) }
                    p { span class="label" { "The rule:" } (f.rule) }
                    p { span class="label" { "Reproduce:" } code { (f.reproduce.command) } }
                }
            }
        }
    }
}

/// This run's side of the comparison: what each check measured, its numbers (the reason
/// alone when the rule had no checks).
fn here(v: &Verdict) -> String {
    if v.checks.is_empty() {
        return v.reason.clone();
    }
    v.checks
        .iter()
        .map(|c| c.detail.as_str())
        .collect::<Vec<_>>()
        .join("; ")
}

/// A chart, inline, titled by the file it is also written as (or the run it is of).
pub(crate) fn chart(name: &str, title: &str, svg: &str) -> Markup {
    html! {
        figure {
            // kgap's own renderer: its labels are escaped where it draws them.
            (PreEscaped(svg))
            figcaption { (title) " — " code { (name) } }
        }
    }
}

/// A two-column table of facts (environment, run, broker).
pub(crate) fn facts(rows: &[(&str, String)]) -> Markup {
    html! {
        div class="scroll" {
            table {
                @for (k, v) in rows {
                    tr { th scope="row" { (k) } td { (v) } }
                }
            }
        }
    }
}

/// A list under a heading, nothing when empty.
pub(crate) fn list(heading: &str, items: &[String], class: &str) -> Markup {
    html! {
        @if !items.is_empty() {
            h2 { (heading) }
            ul class=(class) {
                @for i in items { li { (i) } }
            }
        }
    }
}

/// The footer: what made the page.
pub(crate) fn footer(tool: &str) -> Markup {
    html! {
        footer {
            "Made by " code { (tool) } " (kgap " (env!("CARGO_PKG_VERSION")) ") from its typed \
             result and the findings catalogue. One self-contained file: no script, nothing \
             fetched."
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::findings::Check;

    #[test]
    fn every_spliced_value_is_text_and_the_page_forbids_fetches_and_scripts() {
        let f = findings::get("fetch-backoff").unwrap();
        let v = Verdict::from_checks(
            f,
            vec![Check::passed("<script>alert(1)</script>", "a & b")],
            &(),
            || "<img src=x onerror=alert(2)>".into(),
        );
        let page = document("t<script>", verdict(&v));
        assert!(!page.contains("<script>"), "{page}");
        assert!(!page.contains("<img"), "{page}");
        assert!(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
        assert!(page.contains("a &amp; b"));
        assert!(page.contains("script-src 'none'") && page.contains("default-src 'none'"));
        assert!(page.contains(">HOLDS<"));
    }
}
