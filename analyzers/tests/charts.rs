//! Every chart kgap draws, rendered for real: text laid out with the system's fonts and
//! drawn to PNG (kept in the test's target dir to look at). A label that runs off its
//! canvas, a legend cut by a fixed width, or two labels drawn over each other fail here.

#[path = "common/chart_check.rs"]
mod chart_check;

use std::path::{Path, PathBuf};
use std::process::Command;

use kgap_analyzers::vocab::svg::{self, LineChart, Scale, Series};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn png_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("charts")
}

fn assert_fine(name: &str, svg: &str) {
    let png = png_dir().join(format!("{name}.png"));
    let problems = chart_check::problems(svg, Some(&png));
    assert!(
        problems.is_empty(),
        "{name}: {}\n(rendered: {})",
        problems.join("\n"),
        png.display()
    );
}

fn series(label: &str, points: &[(f64, f64)]) -> Series {
    Series {
        label: label.into(),
        points: points.to_vec(),
        ranges: Vec::new(),
    }
}

#[test]
fn long_legend_labels_widen_the_canvas_instead_of_being_cut() {
    // probe-inflight-latency's labels, once clipped to "linger 0, in-flight defa".
    let chart = LineChart {
        title: "send-to-ack latency p50 against the produce rate".into(),
        x_label: "messages/s offered".into(),
        y_label: "p50 send-to-ack (ms)".into(),
        x_scale: Scale::Log(10.0),
        x_format: svg::si_label,
        y_format: svg::plain_label,
        series: vec![
            series(
                "linger 0, in-flight default (1000000)",
                &[(1e3, 0.4), (1e4, 0.9), (1e5, 7.5)],
            ),
            series(
                "linger 0, in-flight 5",
                &[(1e3, 0.5), (1e4, 1.9), (1e5, 22.0)],
            ),
            series(
                "linger 5 ms, in-flight 5, Java kafka-clients 4.3.1",
                &[(1e3, 5.2), (1e5, 6.0)],
            ),
        ],
    };
    let svg = chart.render();
    assert_fine("long-legend", &svg);
    // The same chart with short labels keeps the usual width: the canvas follows the text.
    let short = LineChart {
        series: vec![series("a", &[(1e3, 1.0), (1e4, 2.0)])],
        ..chart.clone()
    }
    .render();
    let width = |s: &str| -> f64 {
        let i = s.find("width=\"").expect("width") + 7;
        s[i..i + s[i..].find('"').unwrap()].parse().unwrap()
    };
    assert!(
        width(&svg) > width(&short) + 100.0,
        "{} vs {}",
        width(&svg),
        width(&short)
    );
}

#[test]
fn many_series_a_long_title_and_one_point_still_fit() {
    let many: Vec<Series> = (0..24)
        .map(|i| {
            series(
                &format!("rdk:broker{i} (127.0.0.1:{})", 9092 + 10 * i),
                &[(i as f64, 1.0)],
            )
        })
        .collect();
    let chart = LineChart {
        title:
            "cores per thread over the run, every librdkafka broker thread of a large cluster shown"
                .into(),
        x_label: "seconds".into(),
        y_label: "cores".into(),
        x_scale: Scale::Linear,
        x_format: svg::plain_label,
        y_format: svg::plain_label,
        series: many,
    };
    assert_fine("many-series", &chart.render());
    let one = LineChart {
        series: vec![series("only", &[(16384.0, 1_480_000.0)])],
        x_scale: Scale::Log(2.0),
        x_format: svg::bytes_label,
        y_format: svg::si_label,
        ..chart
    };
    assert_fine("one-point", &one.render());
}

#[test]
fn a_sweeps_whiskers_and_their_legend_entry_fit() {
    // A short series label: the min–max entry is the widest of the legend, and the highest
    // max (not the median) sets the y axis.
    let chart = LineChart {
        title: "msg/s against batch.size".into(),
        x_label: "batch.size (bytes, log scale)".into(),
        y_label: "msg/s (median, min–max)".into(),
        x_scale: Scale::Log(2.0),
        x_format: svg::bytes_label,
        y_format: svg::si_label,
        series: vec![Series {
            label: "a".into(),
            points: vec![(16384.0, 200e3), (1048576.0, 900e3)],
            ranges: vec![(16384.0, 150e3, 260e3), (1048576.0, 880e3, 1_900e3)],
        }],
    };
    let svg = chart.render();
    assert_eq!(svg.matches("(min to max over reps)").count(), 2);
    assert_fine("whiskers", &svg);
}

/// Runs a tool that writes its charts into `dir`, then checks every SVG there.
fn check_dir_of(tool: &str, exe: &str, args: &[&str], dir: &Path) -> usize {
    let out = Command::new(exe).args(args).output().expect("run tool");
    assert!(out.status.code().is_some(), "{tool} died: {:?}", out.status);
    let mut n = 0;
    for entry in std::fs::read_dir(dir).expect("chart dir") {
        let p = entry.expect("entry").path();
        if p.extension().is_some_and(|e| e == "svg") {
            let svg = std::fs::read_to_string(&p).expect("read svg");
            let name = format!("{tool}-{}", p.file_stem().unwrap().to_string_lossy());
            assert_fine(&name, &svg);
            n += 1;
        }
    }
    n
}

#[test]
fn gap_reports_charts_of_the_fixtures_render_whole() {
    let dir = tempdir("gap-report");
    let fixtures = root().join("fixtures");
    let n = check_dir_of(
        "gap-report",
        env!("CARGO_BIN_EXE_gap-report"),
        &[
            "--svg-dir",
            dir.to_str().unwrap(),
            fixtures.to_str().unwrap(),
        ],
        &dir,
    );
    assert!(n >= 3, "gap-report drew only {n} charts of the fixtures");
}

#[test]
fn analyze_stats_charts_render_whole() {
    for fixture in [
        "kafka431-producer-linger0-window-5.jsonl",
        "kafka431-consumer-backoff-1000ms.jsonl",
    ] {
        let dir = tempdir(&format!("stats-{fixture}"));
        let input = root().join("fixtures/stats").join(fixture);
        let n = check_dir_of(
            "analyze-stats",
            env!("CARGO_BIN_EXE_analyze-stats"),
            &["--svg-dir", dir.to_str().unwrap(), input.to_str().unwrap()],
            &dir,
        );
        assert!(n >= 1, "analyze-stats drew no chart of {fixture}");
    }
}

fn tempdir(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("chart-runs")
        .join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}
