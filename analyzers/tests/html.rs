//! The HTML reports in a real browser (headless Chromium, scripts/setup installs it): each
//! kind — gap-report's page of a folder, a probe's page, scripts/reproduce's summary —
//! opened at a desktop's and a phone's width, with no console error, no request leaving the
//! file, no script but kgap's own sorting one, the verdict in the DOM, nothing wider than the
//! window, and a screenshot written (target/tmp/html-screenshots/) for a person to look at.
//! A sortable table is clicked by its header: its rows change order, whole, by that column
//! (numbers as numbers), and a second click reverses them.
//!
//! Injection: the inputs are real captures (fixtures/) with a client name (a log's) or a
//! topic name (a probe result's) changed, in this file, to `<script>…</script>`, and a
//! statistics file renamed `<img …>.jsonl`: the page must show them as text, in its tables,
//! its charts' captions and inside their SVG, and run nothing.

#[path = "common/chromium.rs"]
mod chromium;

use std::path::{Path, PathBuf};
use std::process::Command;

use kgap_analyzers::findings::probe_result::ProbeResult;
use kgap_analyzers::findings::reproduce::Reproduction;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures");
/// The deliberate test input: what an attacker would name a topic.
const EVIL: &str = "<script>alert('kgap')</script>";
/// … and what one would name a file.
const EVIL_FILE: &str = "<img src=x onerror=alert('kgap')>";

fn scratch(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("html-{name}"));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Opens the page at a desktop's width and at a phone's, and checks what every page owes
/// its reader. Returns the desktop view, with the answers to `ask` (evaluated there).
fn check(page: &Path, name: &str, ask: &[&str]) -> chromium::Seen {
    let tmp = env!("CARGO_TARGET_TMPDIR");
    let desk = chromium::open_and_ask(
        page,
        1000,
        false,
        &chromium::screenshot_path(tmp, name),
        ask,
    );
    let phone = chromium::open(
        page,
        390,
        true,
        &chromium::screenshot_path(tmp, &format!("{name}-phone")),
    );
    for (seen, width) in [(&desk, 1000), (&phone, 390)] {
        assert!(
            seen.errors.is_empty(),
            "{name} at {width} px: {:?}",
            seen.errors
        );
        assert!(
            seen.requests.is_empty(),
            "{name} at {width} px fetched: {:?}",
            seen.requests
        );
        assert_eq!(
            seen.scripts,
            [kgap_analyzers::html::SORTING_SCRIPT],
            "{name}: a <script> element other than kgap's own sorting one"
        );
        assert!(
            !seen.overflows_x,
            "{name} at {width} px is wider than the window: something neither wraps nor \
             scrolls in its box"
        );
        let png = std::fs::read(&seen.screenshot).unwrap();
        assert!(
            png.starts_with(b"\x89PNG") && png.len() > 10_000,
            "{name}: screenshot"
        );
    }
    eprintln!("{name}: screenshot {}", desk.screenshot.display());
    desk
}

#[test]
fn gap_reports_page_of_a_folder_shows_the_gap_and_a_hostile_client_name_as_text() {
    let src = Path::new(FIXTURES).join("librdkafka/consumer-kafka431-backoff-1000ms");
    let dir = scratch("gap-folder");
    // A real capture whose client was named with a <script> (client.id is free text; a
    // topic name cannot hold '<', and the log analyzer rightly reads no topic from one):
    // every line and the statistics carry the name.
    // The statistics file is named with an <img> ('/' cannot be in a file name): the name
    // is in the files table, the evidence and the captions of the charts drawn from it; the
    // client's name is in the charts' own titles, SVG <text>.
    let client = "rdkafka#consumer-6";
    for (f, name) in [
        ("debug.log", "debug.log".to_string()),
        ("stats.jsonl", format!("{EVIL_FILE}.jsonl")),
    ] {
        let text = std::fs::read_to_string(src.join(f)).unwrap();
        assert!(text.contains(client), "{f}");
        std::fs::write(
            dir.join(name),
            text.replace(client, &format!("{EVIL}#consumer-6")),
        )
        .unwrap();
    }
    let page = gap_report_page(dir.as_ref(), "gap-page");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        !html.contains(EVIL) && !html.contains(EVIL_FILE),
        "the client's or the file's name went into the page as markup"
    );
    let texts_holding = |selector: &str, name: &str| {
        format!(
            "Array.from(document.querySelectorAll('{selector}'), t => t.textContent)\
             .filter(t => t.includes({name:?})).length"
        )
    };
    let seen = check(
        &page,
        "gap-report",
        &[
            &texts_holding("svg text", EVIL),
            &texts_holding("figcaption", EVIL_FILE),
            "document.images.length",
        ],
    );
    assert!(
        seen.answers[0].as_u64() > Some(0),
        "the client's name in a chart's text"
    );
    assert!(
        seen.answers[1].as_u64() > Some(0),
        "the file's name in a chart's caption"
    );
    assert_eq!(seen.answers[2], 0, "an <img> from a file name");
    assert!(
        seen.visible.contains("FOUND · confidence"),
        "{}",
        seen.visible
    );
    assert!(seen.visible.contains("Fetch"), "{}", seen.visible);
    // The example lines (folded evidence) hold the name, as text.
    assert!(
        seen.text.contains(EVIL),
        "the hostile topic is not shown as text"
    );
    assert!(seen.svgs >= 1, "the evidence file's charts are inline");
}

#[test]
fn gap_reports_page_of_every_fixture_opens_clean() {
    let page = gap_report_page(FIXTURES.as_ref(), "gap-all");
    let seen = check(&page, "gap-report-fixtures", &[&click_twice("kind")]);
    let r: serde_json::Value = serde_json::from_slice(
        &Command::new(env!("CARGO_BIN_EXE_gap-report"))
            .args([FIXTURES, "--json"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    // Every gap the typed report found is on the page, in its order.
    let titles: Vec<&str> = r["gaps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["title"].as_str().unwrap())
        .collect();
    assert!(!titles.is_empty());
    let mut at = 0;
    for t in titles {
        let i = seen.visible[at..]
            .find(t)
            .unwrap_or_else(|| panic!("{t} not on the page after byte {at}"));
        at += i + t.len();
    }
    // The files table, listed by path, sorted by kind: each kind's files together, and the
    // second click the first's order of kinds reversed.
    let [before, up, down] = rows_moved_whole(&seen.answers[0]);
    let kinds = |rows: &[Vec<String>]| rows.iter().map(|r| r[1].clone()).collect::<Vec<_>>();
    assert_ne!(
        kinds(&up),
        kinds(&before),
        "a click on 'kind' changed nothing"
    );
    let mut runs = kinds(&up);
    runs.dedup();
    let mut distinct = runs.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(runs.len(), distinct.len(), "a kind's files apart: {runs:?}");
    let mut reversed = kinds(&up);
    reversed.reverse();
    assert_eq!(kinds(&down), reversed);
}

#[test]
fn a_probes_page_shows_its_verdict_checks_and_a_hostile_topic_as_text() {
    let text = std::fs::read_to_string(
        Path::new(FIXTURES).join("librdkafka/consumer-kafka431-result.json"),
    )
    .unwrap();
    let mut r: ProbeResult = serde_json::from_str(&text).unwrap();
    // The deliberate injection: a real result with its topic and a note renamed here.
    r.topics = vec![EVIL.to_string()];
    r.notes.push(format!(
        "-X client.id={EVIL} (applied last to every client)"
    ));
    let page = scratch("probe").join("report.html");
    let html = kgap_analyzers::html::probe(&kgap_analyzers::html::ProbePage {
        result: &r,
        headline: "2000000 × 100 B messages per run",
        charts: &[],
        tables: "",
        command: Some("probe-fetch-backoff --brokers 127.0.0.1:9092 --seed 42"),
        environment: vec![],
        host: None,
    });
    std::fs::write(&page, &html).unwrap();
    let seen = check(&page, "probe-result", &[]);
    let v = &r.verdicts[0];
    let shown = format!("{}", v.outcome.label());
    assert!(seen.visible.contains(&shown), "{}", seen.visible);
    for c in &v.checks {
        assert!(
            seen.visible.contains(&c.condition),
            "check {:?} missing",
            c.condition
        );
    }
    assert!(seen.visible.contains(&v.post), "the post's figure");
    assert!(seen.visible.contains("Not measured") || r.not_measured.is_empty());
    assert!(
        seen.text.matches(EVIL).count() >= 2,
        "the hostile topic as text"
    );
    assert!(!html.contains(EVIL));
}

#[test]
fn a_reproduce_summary_page_puts_each_findings_verdict_first() {
    // The real folder, its one row repeated with other durations (24, 100, 5 and 9 s): what
    // the seconds column sorts by, as numbers ("100" is not before "24").
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/reproduce-embedded-mock");
    let base = scratch("summary-runs");
    copy_folder(&fixture, &base);
    let mut summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(base.join("summary.json")).unwrap()).unwrap();
    let row = summary["findings"][0].clone();
    assert_eq!(row["seconds"], 24);
    for secs in [100, 5, 9] {
        let mut r = row.clone();
        r["seconds"] = secs.into();
        summary["findings"].as_array_mut().unwrap().push(r);
    }
    std::fs::write(base.join("summary.json"), summary.to_string()).unwrap();
    let rep = Reproduction::read(&base).unwrap();
    let out = scratch("summary");
    let page = out.join("summary.html");
    let status = Command::new(env!("CARGO_BIN_EXE_reproduce-summary"))
        .arg(&base)
        .arg("--html")
        .arg(&page)
        .status()
        .unwrap();
    assert!(status.success());
    let seen = check(&page, "reproduce-summary", &[&click_twice("seconds")]);
    assert!(!rep.summary.findings.is_empty());
    for row in &rep.summary.findings {
        let v = rep
            .verdict(row)
            .expect("the fixture's runs decided their findings");
        let first = seen.visible.find(v.outcome.label()).unwrap();
        assert!(
            first < seen.visible.find("Each finding").unwrap(),
            "verdicts first"
        );
        assert!(seen.visible.contains(&row.finding));
    }
    let [_, up, down] = rows_moved_whole(&seen.answers[0]);
    let seconds = |rows: &[Vec<String>]| {
        rows.iter()
            .map(|r| r[3].parse::<u32>().unwrap())
            .collect::<Vec<_>>()
    };
    assert_eq!(seconds(&up), [5, 9, 24, 100]);
    assert_eq!(seconds(&down), [100, 24, 9, 5]);
    // A folder without a summary is a clear error, exit 2.
    let bad = Command::new(env!("CARGO_BIN_EXE_reproduce-summary"))
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("summary.json"));
}

/// gap-report on `dir` with `--html` into a scratch folder of its own; the page's path.
fn gap_report_page(dir: &std::path::Path, name: &str) -> std::path::PathBuf {
    let page = scratch(name).join("gap-report.html");
    let out = Command::new(env!("CARGO_BIN_EXE_gap-report"))
        .arg(dir)
        .arg("--html")
        .arg(&page)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    page
}

/// An expression that clicks the header `header` of the page's sortable table twice and
/// answers the rows (each a list of its cells' text) before, after the first click and after
/// the second, and the header's aria-sort at the end.
fn click_twice(header: &str) -> String {
    format!(
        r#"(() => {{
            const th = Array.from(document.querySelectorAll('table.sortable th'))
                .find(h => h.textContent.trim() === {header:?});
            const body = th.closest('table').tBodies[0];
            const rows = () => Array.from(body.rows, r => Array.from(r.cells, c => c.textContent.trim()));
            const button = th.querySelector('button');
            const before = rows();
            button.click();
            const up = rows();
            button.click();
            return {{before, up, down: rows(), sort: th.getAttribute('aria-sort')}};
        }})()"#
    )
}

/// The rows of a [`click_twice`] answer (before, after one click, after two), checked to be
/// the same rows each time, whole (a sort moves rows, never cells), and the header to say
/// it sorts descending.
fn rows_moved_whole(answer: &serde_json::Value) -> [Vec<Vec<String>>; 3] {
    let rows = |k: &str| -> Vec<Vec<String>> {
        serde_json::from_value(answer[k].clone()).unwrap_or_else(|e| panic!("{k}: {e}: {answer}"))
    };
    let [before, up, down] = [rows("before"), rows("up"), rows("down")];
    assert!(before.len() > 1, "too few rows to see a sort: {before:?}");
    let sorted = |r: &Vec<Vec<String>>| {
        let mut r = r.clone();
        r.sort();
        r
    };
    assert_eq!(sorted(&up), sorted(&before));
    assert_eq!(sorted(&down), sorted(&before));
    assert_eq!(answer["sort"], "descending");
    [before, up, down]
}

fn copy_folder(from: &Path, to: &Path) {
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            std::fs::create_dir_all(&dest).unwrap();
            copy_folder(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), dest).unwrap();
        }
    }
}
