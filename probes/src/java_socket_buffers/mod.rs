//! `probe-java-socket-buffers`: the post's two Java socket-buffer defaults.
//!
//! kafka-clients fixes the socket's buffers: send.buffer.bytes 128 KB (producer) and
//! receive.buffer.bytes 64 KB (consumer); librdkafka leaves them to the OS. The post: with big
//! requests each producer write takes only ~298 KB, and the JDK re-copies the unsent rest of
//! a heap buffer on every write (1 MB batches 630k → 875k msg/s with -1); each consumer read
//! takes ~56 KB on the thread that polls (1 KB consumer 1229k → 1427k msg/s with -1). The
//! probe runs the Java companion with each default and with -1 (OS autotuning), records the
//! window with JFR (every jdk.SocketWrite / jdk.SocketRead, threshold 0) and counts the bytes
//! per socket call with the native JFR reader (`kgap_analyzers::jfr`). Two catalogue rules
//! decide, each from its own side: [`kgap_analyzers::findings::java_send_buffer`] from the
//! write pairs, [`kgap_analyzers::findings::java_receive_buffer`] from the read pairs.
//!
//! Here: the prefilled topics, the points and the Probe impl. Beside it: the options and the
//! probe (`options`), a point and its side and buffer (`point`), a run's figures and evidence
//! (`figures`), the report's text (`render`).

mod figures;
mod options;
mod point;
mod render;

pub use figures::{figures, read_jfr, receive_evidence, send_evidence, Figures};
pub use options::{JavaSocketBuffers, Options};
pub use point::{Buffer, Point, Side};

use crate::kit::broker::{Broker, TopicGuard};
use crate::kit::cli::CommonArgs;
use crate::kit::error::{ProbeError, Result};
use crate::kit::interrupt;
use crate::kit::java::{self, Jvm};
use crate::kit::payload::{PayloadKind, Pool};
use crate::kit::produce;
use crate::kit::{Context, Probe, Sweep};
use kgap_analyzers::findings::probe_result::{Client, ProbeResult};
use kgap_analyzers::findings::{java_receive_buffer as receive, java_send_buffer as send, Verdict};
use kgap_analyzers::vocab::units;
use std::path::Path;
use std::time::Duration;

/// The producer's record size (the post's socket-buffer runs: 1 KB).
pub const PRODUCE_RECORD_BYTES: usize = 1024;

/// The consumer's prefilled topics (one per record size) and the producer pool's digest.
pub struct Setup<'c> {
    sha256: String,
    consume: Vec<(u64, TopicGuard<'c>, u64)>,
    load_before: Option<String>,
}

impl JavaSocketBuffers {
    fn sizes(v: &[u64]) -> Vec<u64> {
        let mut out: Vec<u64> = Vec::new();
        for &s in v.iter().filter(|&&s| s > 0) {
            if !out.contains(&s) {
                out.push(s);
            }
        }
        out
    }

    fn jvm(&self) -> Jvm {
        Jvm {
            jfr: !self.opts.no_recording,
            ..Jvm::heap(&self.opts.heap)
        }
    }
}

impl Probe for JavaSocketBuffers {
    type Point = Point;
    type Figures = Figures;
    type Setup<'c> = Setup<'c>;
    const NAME: &'static str = "probe-java-socket-buffers";

    fn common(&self) -> &CommonArgs {
        &self.opts.common
    }

    fn clients(&self) -> Vec<Client> {
        vec![Client::Java]
    }

    fn check(&self) -> Result<()> {
        if let Some((k, _)) = self
            .opts
            .java_property
            .iter()
            .find(|(k, _)| k == "send.buffer.bytes" || k == "receive.buffer.bytes")
        {
            return Err(ProbeError::Usage(format!(
                "-J {k}: the probe sets it (the fixed default against -1) at every point"
            )));
        }
        if Self::sizes(&self.opts.batch_size).is_empty()
            && Self::sizes(&self.opts.consume_size).is_empty()
        {
            return Err(ProbeError::Usage(
                "--batch-size 0 and --consume-size 0: nothing to run".into(),
            ));
        }
        Ok(())
    }

    fn points(&self, _broker: &Broker) -> Vec<Point> {
        let mut v = Vec::new();
        for (side, sizes) in [
            (Side::Produce, &self.opts.batch_size),
            (Side::Consume, &self.opts.consume_size),
        ] {
            for size_bytes in Self::sizes(sizes) {
                for buffer in [Buffer::Fixed, Buffer::Os] {
                    v.push(Point {
                        side,
                        size_bytes,
                        buffer,
                    });
                }
            }
        }
        v
    }

    fn label(&self, p: &Point) -> String {
        format!(
            "{}-{}-{}",
            match p.side {
                Side::Produce => "produce-batch",
                Side::Consume => "consume-size",
            },
            p.size_bytes,
            match p.buffer {
                Buffer::Fixed => "default",
                Buffer::Os => "os",
            }
        )
    }

    fn prepare<'c>(&self, cx: &'c Context, result: &mut ProbeResult<Figures>) -> Result<Setup<'c>> {
        let pool = Pool::new(PRODUCE_RECORD_BYTES, PayloadKind::Random);
        result.payload = Some(pool.info());
        let java = cx.java()?;
        result
            .notes
            .insert(0, render::java_note(self, &java.version));
        let load_before = java::load_average();
        cx.progress(&format!(
            "{}; load average {}",
            java.version,
            load_before.as_deref().unwrap_or("?")
        ));
        // Consume topics: one per record size, prefilled once, read by every consume run.
        let mut consume = Vec::new();
        for size in Self::sizes(&self.opts.consume_size) {
            let topic = cx.broker.create_topic(Self::NAME, self.opts.partitions)?;
            result.topics.push(topic.name.clone());
            let pool = Pool::new(size as usize, PayloadKind::Random);
            let messages = (self.opts.consume_bytes / size).max(1);
            cx.progress(&format!(
                "prefilling {} with {messages} × {size} B (librdkafka, not measured)",
                topic.name
            ));
            produce::prefill(
                &cx.broker,
                &topic.name,
                self.opts.partitions,
                &pool,
                messages,
                "none",
                &|l| cx.progress(l),
            )?;
            consume.push((size, topic, messages));
        }
        Ok(Setup {
            sha256: pool.sha256_hex(),
            consume,
            load_before,
        })
    }

    fn run(
        &self,
        cx: &Context,
        setup: &Setup<'_>,
        client: Client,
        p: &Point,
        dir: &Path,
    ) -> Result<Option<Figures>> {
        if client != Client::Java {
            return Err(ProbeError::Usage(
                "probe-java-socket-buffers runs the Java client only".into(),
            ));
        }
        let java = cx.java()?;
        let mut settings: Vec<(String, String)> = vec![(
            "bootstrap.servers".into(),
            cx.broker.bootstrap().to_string(),
        )];
        if p.buffer == Buffer::Os {
            settings.push((p.knob().into(), "-1".into()));
        }
        let timeout = self.opts.duration + Duration::from_secs(120);
        let (run, topic) = match p.side {
            Side::Produce => {
                settings.extend([
                    ("acks".to_string(), "1".to_string()),
                    ("enable.idempotence".to_string(), "false".to_string()),
                    ("batch.size".to_string(), p.size_bytes.to_string()),
                    ("linger.ms".to_string(), self.opts.linger_ms.to_string()),
                ]);
                if let Some(m) = self.opts.max_request_size {
                    settings.push(("max.request.size".into(), m.to_string()));
                }
                settings.extend(self.opts.java_property.iter().cloned());
                let run = java::run_point(
                    java,
                    &cx.broker,
                    Self::NAME,
                    self.opts.partitions,
                    dir,
                    &self.jvm(),
                    &[
                        ("mode", "produce".into()),
                        ("size", PRODUCE_RECORD_BYTES.to_string()),
                        ("producers", "1".into()),
                        // Then rounds of a second until the JIT has settled.
                        ("warmup", "50000".into()),
                        ("warmup-passes", java::WARMUP_PASSES.to_string()),
                        (
                            "seconds",
                            format!("{:.3}", self.opts.duration.as_secs_f64()),
                        ),
                    ],
                    &settings,
                    timeout,
                    &setup.sha256,
                )?;
                match run {
                    Some((run, topic)) => (run, Some(topic)),
                    None => return Ok(None),
                }
            }
            Side::Consume => {
                let (_, topic, messages) = setup
                    .consume
                    .iter()
                    .find(|(s, _, _)| *s == p.size_bytes)
                    .ok_or_else(|| ProbeError::Kafka("no prefilled topic for this size".into()))?;
                settings.extend(self.opts.java_property.iter().cloned());
                let run = java::run(
                    java,
                    dir,
                    &self.jvm(),
                    &[
                        ("mode", "consume".into()),
                        ("topic", topic.name.clone()),
                        ("messages", messages.to_string()),
                        (
                            "warmup-fraction",
                            options::CONSUME_WARMUP_FRACTION.to_string(),
                        ),
                        // Whole reads first, until the JIT has settled (ConsumeMode.warmupPasses).
                        ("warmup-passes", java::WARMUP_PASSES.to_string()),
                        ("size", p.size_bytes.to_string()),
                        ("seconds", "120".into()),
                    ],
                    &settings,
                    timeout,
                );
                match run {
                    Err(_) if interrupt::stopped() => return Ok(None),
                    r => (r?, None),
                }
            }
        };
        let jfr = match run.jfr.as_deref() {
            Some(path) => Some(read_jfr(path)?),
            // --no-recording: no socket call counted (the figures' socket fields stay 0).
            None if self.opts.no_recording => None,
            None => return Err(ProbeError::Kafka("the run kept no JFR recording".into())),
        };
        Ok(Some(figures(&run.result, jfr.as_ref(), p.side, topic)))
    }

    fn describe(&self, f: &Figures) -> String {
        format!(
            "{}, {} socket calls of {} (median), {} at most",
            units::msgs_per_s(f.msgs_per_s),
            units::count(f.socket_calls as f64),
            units::bytes(f.bytes_per_call_p50 as f64),
            units::bytes(f.bytes_per_call_max as f64)
        )
    }

    fn run_topics(&self, f: &Figures) -> Vec<String> {
        f.topic.iter().cloned().collect()
    }

    fn window_s(&self, f: &Figures) -> Option<f64> {
        Some(f.window_s)
    }

    fn after(&self, _cx: &Context, setup: &Setup<'_>, sweep: &mut Sweep<Self>) -> Result<()> {
        sweep
            .result
            .notes
            .push(java::load_note(setup.load_before.as_deref()));
        Ok(())
    }

    fn verdicts(&self, sweep: &Sweep<Self>) -> Vec<Verdict> {
        vec![
            send::decide(&send_evidence(sweep)),
            receive::decide(&receive_evidence(sweep)),
        ]
    }

    fn headline(&self, _sweep: &Sweep<Self>) -> String {
        "Java socket buffers, kafka-clients' fixed default against -1 (OS autotuning)".into()
    }

    fn render(&self, sweep: &Sweep<Self>) -> String {
        render::table(sweep)
    }

    fn not_measured(&self, _broker: &Broker) -> Vec<String> {
        render::not_measured()
    }

    fn notes(&self, _broker: &Broker) -> Vec<String> {
        render::notes(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn probe(args: &[&str]) -> std::result::Result<JavaSocketBuffers, clap::Error> {
        let mut argv = vec!["probe-java-socket-buffers"];
        argv.extend_from_slice(args);
        Options::try_parse_from(argv).map(JavaSocketBuffers::new)
    }

    #[test]
    fn points_pair_each_size_with_both_buffers() {
        let p = probe(&["--batch-size", "1048576", "--consume-size", "0"]).unwrap();
        let points = p.points(&Broker::start(None, &[]).unwrap());
        assert_eq!(points.len(), 2);
        assert_eq!(p.label(&points[0]), "produce-batch-1048576-default");
        let params = serde_json::to_value(points[0]).unwrap();
        assert_eq!(
            params,
            serde_json::json!({"side": "produce", "batch.size": 1048576, "send.buffer.bytes": 131072})
        );
        let params = serde_json::to_value(Point {
            side: Side::Consume,
            size_bytes: 1024,
            buffer: Buffer::Os,
        })
        .unwrap();
        assert_eq!(params["receive.buffer.bytes"], -1);
        assert_eq!(params["record_bytes"], 1024);
    }

    #[test]
    fn bad_options_are_refused() {
        assert!(probe(&["--batch-size", "1,,2"]).is_err());
        assert!(probe(&["--consume-size", "-1"]).is_err());
        assert!(probe(&["--heap", "lots"]).is_err());
        let both_off = probe(&["--batch-size", "0", "--consume-size", "0"]).unwrap();
        assert!(matches!(both_off.check(), Err(ProbeError::Usage(_))));
        let swept = probe(&["-J", "send.buffer.bytes=262144"]).unwrap();
        assert!(matches!(swept.check(), Err(ProbeError::Usage(m)) if m.contains("sets it")));
        assert!(probe(&[]).unwrap().check().is_ok());
    }
}
