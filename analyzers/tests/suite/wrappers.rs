//! Both analyzers must give the same report whatever wrapped librdkafka's lines.

use kgap_analyzers::fetch_log::{analyze_fetch_log, FetchLogOptions};
use kgap_analyzers::protocol_log::{analyze_protocol_log, ProtocolLogOptions};

use crate::common::*;

#[test]
fn at_least_fifteen_styles() {
    assert!(styles().len() >= 15);
}

#[test]
fn protocol_report_is_the_same_in_every_style() {
    let recs = ceiling_log(5, 2_000, 15_621);
    for style in styles() {
        let log = render(&recs, &style);
        let r = analyze_protocol_log(log.as_bytes(), &ProtocolLogOptions::default()).unwrap();
        let name = style.name;
        assert_eq!(r.lines_skipped, 0, "{name}");
        assert_eq!(r.timestamps, style.stamp.label(), "{name}");
        let p = r
            .requests
            .iter()
            .find(|q| q.request == "Produce")
            .unwrap_or_else(|| panic!("{name}"));
        assert_eq!(p.broker, "kafka-1:9092/1", "{name}");
        assert_eq!(
            (p.count, p.responses, p.unknown_corr_ids),
            (10_000, 10_000, 0),
            "{name}"
        );
        assert!((p.rtt_ms_max.unwrap() - 0.44).abs() < 0.01, "{name}");
        let ids: Vec<_> = r.diagnoses.iter().map(|d| d.id.as_str()).collect();
        assert_eq!(
            ids,
            vec!["per-request-ceiling"],
            "{name}: {:?} {:?} {:?}",
            p.rate,
            p.bytes_p50,
            p.bytes_p99
        );
        match style.stamp {
            Stamp::None => assert!(p.rate.is_none(), "{name}"),
            _ => {
                let rate = p.rate.as_ref().unwrap_or_else(|| panic!("{name}: no rate"));
                assert!((rate.per_s_mean - 2_000.0).abs() < 1.0, "{name}: {rate:?}");
            }
        }
    }
}

#[test]
fn fetch_report_is_the_same_in_every_style() {
    let recs = fetch_backoff_log(3, 6, 1000);
    for style in styles() {
        let log = render(&recs, &style);
        let r = analyze_fetch_log(log.as_bytes(), &FetchLogOptions::default()).unwrap();
        let name = style.name;
        assert_eq!(r.lines_skipped, 0, "{name}");
        assert_eq!(r.partitions.len(), 3, "{name}");
        let p = &r.partitions[0];
        assert_eq!(
            (p.topic.as_str(), p.queue_full_backoffs),
            ("bench", 6),
            "{name}"
        );
        assert_eq!(r.diagnoses[0].id, "fetch-queue-backoff", "{name}");
        match style.stamp {
            Stamp::None => assert_eq!(p.backoff_fraction, None, "{name}"),
            _ => {
                let f = p.backoff_fraction.unwrap();
                assert!((0.85..=0.97).contains(&f), "{name}: {f}");
            }
        }
    }
}
