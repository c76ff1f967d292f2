//! librdkafka's side of a point: one producer on a fresh topic, a warmup, the window, and the
//! batch figures from its statistics (topics[].batchcnt and batchsize).

use super::codec::Codec;
use super::figures::{batch_figures, Figures, LibrdkafkaFigures};
use super::options::LINGER_MS;
use super::point::Point;
use crate::kit::broker::{Broker, Producer};
use crate::kit::capture::Sink;
use crate::kit::error::{ProbeError, Result};
use crate::kit::measure::{self, round3};
use crate::kit::payload::Pool;
use crate::kit::produce::{self, StatsFigures, ThroughputSpec, TopicHandle};
use std::path::Path;
use std::sync::Arc;

/// The producer settings of one point; `-X` overrides come after these.
pub fn producer_settings(codec: Codec, level: i32, batch_size: u64) -> Vec<(&'static str, String)> {
    vec![
        // The post's baseline producer: acks=1, linger.ms=5.
        ("acks", "1".to_string()),
        ("linger.ms", LINGER_MS.to_string()),
        ("compression.type", codec.name().to_string()),
        ("compression.level", level.to_string()),
        ("batch.size", batch_size.to_string()),
        ("statistics.interval.ms", "1000".to_string()),
    ]
}

/// How a run is sized.
pub struct Run<'a> {
    pub broker: &'a Broker,
    pub pool: &'a Pool,
    pub partitions: i32,
    pub spec: ThroughputSpec,
    pub probe: &'a str,
}

/// One run on a fresh topic (deleted after it): warmup, window, statistics.
pub fn produce_once(run: &Run<'_>, p: &Point, dir: &Path) -> Result<Figures> {
    let topic = run.broker.create_topic(run.probe, run.partitions)?;
    let stats_path = dir.join("stats.jsonl");
    let sink = Arc::new(
        Sink::to_files(Some(&dir.join("debug.log")), Some(&stats_path))
            .map_err(|e| ProbeError::io(format!("creating files in {}", dir.display()), e))?,
    );
    let settings = producer_settings(p.codec, p.level, p.batch_size);
    let producer = Producer::new(run.broker, &settings, sink)?;
    let handle = TopicHandle::new(&producer, &topic.name)?;
    let w = produce::measure_throughput(
        &producer,
        &handle,
        run.partitions,
        run.pool,
        run.spec,
        &stats_path,
    );
    drop(handle);
    drop(producer);
    let name = topic.name.clone();
    topic.delete()?;
    let w = w?;
    let window = measure::window_figures(&w.start, &w.end, &w.ticks);
    measure::write_threads_csv(&dir.join("threads.csv"), &w.ticks);
    let StatsFigures {
        produce_requests_per_s,
        bytes_per_request,
        batch_bytes_mean: wire,
        msgs_per_batch_mean: msgs,
        ..
    } = produce::stats_figures(&w.stats);
    let size = run.pool.size();
    let (input, ratio) = batch_figures(msgs, wire, size);
    let cores = |pred: &dyn Fn(&str) -> bool| -> Vec<f64> {
        window
            .threads
            .iter()
            .filter(|t| pred(&t.name))
            .map(|t| t.cores)
            .collect()
    };
    let sum = |pred: &dyn Fn(&str) -> bool| round3(cores(pred).iter().sum());
    let is_broker = |n: &str| n.starts_with("rdk:broker");
    let busiest_broker = cores(&is_broker).into_iter().reduce(f64::max).map(round3);
    Ok(Figures {
        topic: name,
        messages: window.messages,
        window_s: round3(window.window_s),
        msgs_per_s: round3(window.msgs_per_s),
        mb_per_s: round3(window.mb_per_s),
        msgs_per_batch: msgs,
        input_bytes_per_batch: input,
        wire_bytes_per_batch: wire,
        compression_ratio: ratio,
        input_over_batch_size: input.map(|i| round3(i / p.batch_size as f64)),
        compressing_thread_cores: busiest_broker,
        cpu_s_per_million: (window.messages > 0).then(|| round3(window.cpu_s_per_million)),
        librdkafka: Some(LibrdkafkaFigures {
            produce_requests_per_s,
            bytes_per_request,
            broker_thread_cores: sum(&is_broker),
            app_cores: sum(&|n| n == "app"),
            mock_cores: sum(&|n| n.starts_with("rdk:mock")),
            cpu_cores: round3(window.cpu_cores),
            delivery_errors: w.delivery_errors,
            stats_emits: w.stats.len(),
            threads: window.threads,
            timeline: window.timeline,
        }),
        java: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_name_the_codec_level_and_batch_size() {
        let s = producer_settings(Codec::Gzip, 1, 90112);
        assert!(s.contains(&("compression.type", "gzip".into())));
        assert!(s.contains(&("compression.level", "1".into())));
        assert!(s.contains(&("batch.size", "90112".into())));
        assert!(s.contains(&("linger.ms", "5".into())));
    }
}
