//! A probe's HTML page in a real browser (headless Chromium; scripts/setup installs it):
//! probe-gzip-batch on the embedded mock, two batch.sizes × two reps of 1 s, writes
//! report.html into --out and the same page to --html. Opened at a desktop's and a phone's
//! width: no console error, no request, no script but kgap's sorting one, the verdicts in the DOM, the sweep's
//! charts inline with each point's min–max, nothing wider than the window, a screenshot
//! kept (target/tmp/html-screenshots/). The client.id given with -X is a `<script>`: a
//! deliberate test input, shown as text.

#[path = "../../analyzers/tests/common/chromium.rs"]
mod chromium;

use std::process::Command;

const EVIL: &str = "<script>alert('kgap')</script>";

#[test]
fn a_probes_page_shows_its_verdicts_and_the_sweeps_spread() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let html = dir.path().join("page.html");
    let run = Command::new(env!("CARGO_BIN_EXE_probe-gzip-batch"))
        .args([
            "--batch-size",
            "3000,16384",
            "--level",
            "-1",
            "--duration",
            "1s",
            "--reps",
            "2",
            "--seed",
            "3",
            "-q",
            "-X",
            &format!("client.id={EVIL}"),
            "--out",
        ])
        .arg(&out)
        .arg("--html")
        .arg(&html)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let page = std::fs::read_to_string(&html).unwrap();
    assert_eq!(
        page,
        std::fs::read_to_string(out.join("report.html")).unwrap()
    );
    assert!(
        !page.contains(EVIL),
        "the -X value went into the page as markup"
    );
    let result: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("result.json")).unwrap()).unwrap();
    let tmp = env!("CARGO_TARGET_TMPDIR");
    for (width, mobile, name) in [
        (1000, false, "probe-gzip-batch"),
        (390, true, "probe-gzip-batch-phone"),
    ] {
        let seen = chromium::open(&html, width, mobile, &chromium::screenshot_path(tmp, name));
        assert!(seen.errors.is_empty(), "{name}: {:?}", seen.errors);
        assert!(
            seen.requests.is_empty(),
            "{name} fetched {:?}",
            seen.requests
        );
        assert_eq!(seen.scripts, [kgap_analyzers::html::SORTING_SCRIPT]);
        assert!(!seen.overflows_x, "{name} is wider than its window");
        for v in result["verdicts"].as_array().unwrap() {
            let label = match v["outcome"].as_str().unwrap() {
                "holds" => "HOLDS",
                "does-not-hold" => "DOES NOT HOLD",
                _ => "CANNOT TELL",
            };
            assert!(seen.visible.contains(label), "{name}: {label}");
            for c in v["checks"].as_array().unwrap() {
                assert!(seen.visible.contains(c["condition"].as_str().unwrap()));
            }
        }
        // Both charts inline, each with a whisker per point and its legend entry.
        assert!(seen.svgs >= 2, "{name}: {} charts", seen.svgs);
        assert!(seen.visible.contains("min–max over reps"), "{name}");
        assert!(seen.text.contains(EVIL), "{name}: the client.id as text");
        assert!(seen.visible.contains("Not measured"));
        eprintln!("{name}: screenshot {}", seen.screenshot.display());
    }
}
