//! The same statistics in the forms services log them give the same figures.

use serde_json::Value;

use crate::common::*;

/// A client's figures without where they sat in the input.
fn figures(r: &kgap_analyzers::stats::StatsReport) -> Vec<Value> {
    r.clients
        .iter()
        .map(|c| {
            let mut v = serde_json::to_value(c).unwrap();
            let o = v.as_object_mut().unwrap();
            o.remove("first_line");
            o.remove("last_line");
            for b in o["brokers"].as_array_mut().unwrap() {
                for s in b["state_change_list"].as_array_mut().unwrap() {
                    s.as_object_mut().unwrap().remove("line");
                }
            }
            v
        })
        .collect()
}

#[test]
fn pretty_printed_one_line_and_gzip_read_like_the_plain_lines() {
    let plain = analyze_file("kafka431-producer-linger5-1k.jsonl", &["linger.ms=5"]);
    let pretty = analyze_file("pretty-linger5-1k.json", &["linger.ms=5"]);
    assert!(pretty.input.lines > 10 * pretty.input.statistics_objects);
    assert_eq!(figures(&plain), figures(&pretty));
    assert_eq!(ids(&plain), ids(&pretty));

    let plain = analyze_file("kafka431-consumer-backoff-1000ms.jsonl", &[]);
    let one = analyze_file("one-line-backoff-1000ms.json", &[]);
    assert_eq!(one.input.lines, 1);
    assert_eq!(figures(&plain), figures(&one));

    let plain = analyze_file("kafka431-producer-ceiling-16k.jsonl", &["batch.size=16384"]);
    let gz = analyze_file("gzip-ceiling-16k.jsonl.gz", &["batch.size=16384"]);
    assert!(gz.input.gzip);
    assert_eq!(figures(&plain), figures(&gz));
}

#[test]
fn logger_lines_are_unwrapped() {
    let prefix = analyze_file("logged-prefix.log", &[]);
    assert!(prefix.input.statistics_objects > 5);
    assert_eq!(prefix.input.wrapped_objects, 0);
    for f in ["logged-json.log", "logged-json-string.log"] {
        let r = analyze_file(f, &[]);
        assert!(r.input.statistics_objects > 5, "{f}");
        assert_eq!(r.input.wrapped_objects, r.input.statistics_objects, "{f}");
        assert!(
            r.clients[0]
                .producer
                .as_ref()
                .unwrap()
                .messages_per_s
                .is_some(),
            "{f}"
        );
    }
}

#[test]
fn several_objects_on_a_line_and_after_prefixes_with_braces() {
    let two = two_emits();
    let lines: Vec<&[u8]> = two
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .collect();
    let mut input = b"[main{1}] INFO {not json} STATS: ".to_vec();
    input.extend_from_slice(lines[0]);
    input.extend_from_slice(b" took 3ms ");
    input.extend_from_slice(lines[1]);
    input.push(b'\n');
    let r = analyze(&input);
    assert_eq!(r.input.statistics_objects, 2);
    assert_eq!(r.input.other_objects, 2);
    assert_eq!(r.clients[0].intervals, 1);
    assert_eq!(figures(&r), figures(&analyze(&two)));
}
