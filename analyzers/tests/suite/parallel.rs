//! The binaries read on several cores: their reports must equal the sequential ones.

use kgap_analyzers::engine::input::Source;
use kgap_analyzers::fetch_log::{FetchLogAnalyzer, FetchLogOptions};
use kgap_analyzers::protocol_log::LogAnalyzer;
use kgap_analyzers::protocol_log::{ProtocolLogAnalyzer, ProtocolLogOptions};

use crate::common::*;

fn protocol_both(log: &[u8], workers: usize) -> (serde_json::Value, serde_json::Value) {
    let opts = ProtocolLogOptions::default();
    let mut seq = ProtocolLogAnalyzer::new(&opts);
    let s = seq.read(log).unwrap();
    let mut par = ProtocolLogAnalyzer::new(&opts);
    let p = par.read_parallel(Source::stream(log), workers).unwrap();
    (
        serde_json::to_value(seq.finish(s).unwrap()).unwrap(),
        serde_json::to_value(par.finish(p).unwrap()).unwrap(),
    )
}

#[test]
fn protocol_reports_match_across_many_chunks_and_workers() {
    // ~4 MB: many 256 KiB chunks, finished out of order by three workers.
    let log = raw(&ceiling_log(5, 2_000, 15_621));
    for workers in [1, 3] {
        let (a, b) = protocol_both(log.as_bytes(), workers);
        assert_eq!(a, b, "workers={workers}");
    }
    let log = raw(&inflight_log(3, 0));
    let (a, b) = protocol_both(log.as_bytes(), 2);
    assert_eq!(a, b);
}

#[test]
fn json_escaped_wrappers_match_too() {
    // The worker rewrites `\/` in place; the report must not notice.
    let style = styles()
        .into_iter()
        .find(|s| s.name.contains("escaped slashes"))
        .unwrap();
    let log = render(&ceiling_log(2, 1_000, 15_621), &style);
    let (a, b) = protocol_both(log.as_bytes(), 2);
    assert_eq!(a, b);
    assert_eq!(a["lines_skipped"], 0);
}

#[test]
fn fetch_reports_match() {
    let log = raw(&fetch_backoff_log(6, 40, 1000));
    let opts = FetchLogOptions::default();
    let mut seq = FetchLogAnalyzer::new(&opts);
    let s = seq.read(log.as_bytes()).unwrap();
    let mut par = FetchLogAnalyzer::new(&opts);
    let p = par
        .read_parallel(Source::stream(log.as_bytes()), 2)
        .unwrap();
    assert_eq!(
        serde_json::to_value(seq.finish(s).unwrap()).unwrap(),
        serde_json::to_value(par.finish(p).unwrap()).unwrap()
    );
}

#[test]
fn bad_input_matches() {
    let mut log = b"\xff\xfe\x00junk\r\n".to_vec();
    log.extend_from_slice(raw(&ceiling_log(1, 50, 1000)).as_bytes());
    log.extend_from_slice(
        b"%7|1520428015.000|SEND|rdkafka#producer-1| [thrd:x]: x/1: Sent ProduceRe",
    );
    let (a, b) = protocol_both(&log, 2);
    assert_eq!(a, b);
    assert_eq!(a["input"]["unterminated_last_line"], true);
}

#[test]
fn producer_message_sets_tallied_by_the_parsing_threads_match_inside_and_outside_a_window() {
    // A captured producer with debug=protocol,msg: half its records are MessageSet lines,
    // which the parsing threads count themselves; with --from/--to some fall outside.
    let gz = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../fixtures/librdkafka/producer-kafka431-batch16k-6p-protocol/debug.log.gz"
    ))
    .unwrap();
    let mut first = ProtocolLogAnalyzer::new(&ProtocolLogOptions::default());
    let s = first.read(&gz[..]).unwrap();
    let report = serde_json::to_value(first.finish(s).unwrap()).unwrap();
    let start = report["window"]["start_s"].as_f64().unwrap();
    assert!(
        report["messages_per_request"]["messagesets"]
            .as_u64()
            .unwrap()
            > 1000
    );
    for (from, to) in [(None, None), (Some(start + 0.2), Some(start + 0.6))] {
        let opts = ProtocolLogOptions {
            window_start: from,
            window_end: to,
            ..ProtocolLogOptions::default()
        };
        let mut seq = ProtocolLogAnalyzer::new(&opts);
        let s = seq.read(&gz[..]).unwrap();
        let want = serde_json::to_value(seq.finish(s).unwrap()).unwrap();
        if from.is_some() {
            assert!(
                want["records_outside_window"].as_u64().unwrap() > 100,
                "{want}"
            );
        }
        for workers in [0, 1, 2] {
            let mut par = ProtocolLogAnalyzer::new(&opts);
            let p = par.read_parallel(Source::stream(&gz[..]), workers).unwrap();
            let got = serde_json::to_value(par.finish(p).unwrap()).unwrap();
            assert_eq!(got, want, "workers {workers}, window {from:?}..{to:?}");
        }
    }
}

/// A plain file is read in chunks by every thread, the calling one among them: the
/// reports equal the sequential ones with chunks finished out of order, chunks inside
/// one line, and lines cut to their head (a cap of a few lines' length makes chunks that
/// small, and every longer line a line to cut).
#[test]
fn plain_files_read_in_chunks_match() {
    let dir = std::env::temp_dir().join(format!("kgap-chunked-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("debug.log");
    let mut bad = b"\xff\xfe\x00junk\r\n".to_vec();
    bad.extend_from_slice(raw(&ceiling_log(1, 200, 1000)).as_bytes());
    bad.extend_from_slice(
        b"%7|1520428015.000|SEND|rdkafka#producer-1| [thrd:x]: x/1: Sent ProduceRe",
    );
    let logs: Vec<(&str, Vec<u8>)> = vec![
        ("ceiling", raw(&ceiling_log(5, 2_000, 15_621)).into_bytes()),
        ("inflight", raw(&inflight_log(3, 0)).into_bytes()),
        ("fetch", raw(&fetch_backoff_log(6, 40, 1000)).into_bytes()),
        ("bad", bad),
        ("empty", Vec::new()),
    ];
    for (name, log) in &logs {
        std::fs::write(&path, log).unwrap();
        for max_line in [None, Some(150), Some(1000)] {
            let popts = ProtocolLogOptions {
                max_line_bytes: max_line,
                ..ProtocolLogOptions::default()
            };
            let fopts = FetchLogOptions {
                max_line_bytes: max_line,
                ..FetchLogOptions::default()
            };
            let mut seq = ProtocolLogAnalyzer::new(&popts);
            let s = seq.read(&log[..]).unwrap();
            let want = serde_json::to_value(seq.finish(s).unwrap()).unwrap();
            let mut fseq = FetchLogAnalyzer::new(&fopts);
            let s = fseq.read(&log[..]).unwrap();
            let fwant = serde_json::to_value(fseq.finish(s).unwrap()).unwrap();
            for workers in [1, 2, 3] {
                let file = std::fs::File::open(&path).unwrap();
                let mut par = ProtocolLogAnalyzer::new(&popts);
                let p = par.read_parallel(Source::file(file), workers).unwrap();
                let got = serde_json::to_value(par.finish(p).unwrap()).unwrap();
                assert_eq!(got, want, "{name}, cap {max_line:?}, {workers} threads");
                let file = std::fs::File::open(&path).unwrap();
                let mut par = FetchLogAnalyzer::new(&fopts);
                let p = par.read_parallel(Source::file(file), workers).unwrap();
                let got = serde_json::to_value(par.finish(p).unwrap()).unwrap();
                assert_eq!(
                    got, fwant,
                    "fetch: {name}, cap {max_line:?}, {workers} threads"
                );
            }
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
