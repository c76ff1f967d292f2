//! The page every HTML report is: one self-contained file (its stylesheet inline, charts as
//! inline SVG, nothing fetched: it reads offline and as an e-mail attachment) whose
//! Content-Security-Policy forbids every fetch and every script but kgap's own sorting one
//! (allowed by its hash, so a script that got in any other way would not run); and the
//! small pieces every page is made of: a chart, a table of facts, a list, the footer.
//!
//! Everything spliced in is escaped by maud (a topic name or a log line is text, never
//! markup). The page's own stylesheet and script are spliced as they are (they are this
//! crate's files), and so is a chart: its SVG is kgap's own renderers' output
//! ([`crate::vocab::svg`], the GC log's), which escape every label they draw.

use maud::{html, Markup, PreEscaped, DOCTYPE};

use super::sorting;

/// The stylesheet, inline.
const CSS: &str = include_str!("page.css");

/// No fetch of any kind; inline style; no script but the sorting one, named by its hash.
fn content_security_policy() -> String {
    format!(
        "default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src '{}'; \
         base-uri 'none'; form-action 'none'",
        sorting::script_hash()
    )
}

/// A whole page: `<!DOCTYPE html>`, the head (charset, viewport, CSP, the stylesheet), then
/// `body`, then the sorting script (last, so every table it sorts is already there).
pub(crate) fn document(title: &str, body: Markup) -> String {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                meta http-equiv="Content-Security-Policy" content=(content_security_policy());
                meta name="generator" content=(format!("kgap {}", env!("CARGO_PKG_VERSION")));
                title { (title) }
                style { (PreEscaped(CSS)) }
            }
            body {
                (body)
                script { (PreEscaped(sorting::SCRIPT)) }
            }
        }
    }
    .into_string()
}

/// A chart, inline, titled by the file it is also written as (or the run it is of).
pub(crate) fn chart(name: &str, title: &str, svg: &str) -> Markup {
    html! {
        figure {
            // kgap's own renderers' SVG: each escapes its labels where it draws them.
            (PreEscaped(svg))
            figcaption { (title) " — " code { (name) } }
        }
    }
}

/// A two-column table of facts, a name a row.
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

/// A list under a heading, nothing when empty; `class` marks its items (warnings).
pub(crate) fn list(heading: &str, items: &[String], class: Option<&str>) -> Markup {
    html! {
        @if !items.is_empty() {
            h2 { (heading) }
            ul class=[class] {
                @for i in items { li { (i) } }
            }
        }
    }
}

/// "s" after a count that is not one.
pub(crate) fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// The footer: what made the page.
pub(crate) fn footer(tool: &str) -> Markup {
    html! {
        footer {
            "Made by " code { (tool) } " (kgap " (env!("CARGO_PKG_VERSION")) ") from its typed \
             result and the findings catalogue. One self-contained file: nothing fetched; its \
             one script only sorts tables."
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spliced_value_is_text_and_the_page_allows_only_its_own_script() {
        let page = document(
            "t<script>",
            html! { p { "<img src=x onerror=alert(2)>" " a & b" } },
        );
        assert_eq!(page.matches("<script").count(), 1, "{page}");
        assert!(!page.contains("<img"), "{page}");
        assert!(page.contains("t&lt;script&gt;"));
        assert!(page.contains("a &amp; b"));
        assert!(page.contains("default-src 'none'"));
        assert!(page.contains(&format!("script-src '{}'", sorting::script_hash())));
        assert!(page.contains(&format!("<script>{}</script>", sorting::SCRIPT)));
    }
}
