//! `probe-java-producers`: the post's "producer that collapsed at K=16", on this machine.
//!
//! K KafkaProducer instances in one JVM (one sending thread each) send 100 B records as fast
//! as they can. Each producer keeps up to buffer.memory (32 MB by default) of unsent batches,
//! and for every record in them a handful of small objects (callback, future, headers, thunk):
//! once the network threads fall behind, that backlog is live data, survives young
//! collections and fills the heap; GC then eats the CPU the network threads needed. The post
//! saw it at K=16 on 16 vCPUs (GC 37% of the window, full GCs ~1/s) and fixed it with
//! buffer.memory=2 MB per producer. The probe sweeps K and buffer.memory, one JVM per run,
//! reads GC from the JVM's MXBeans and from its own unified GC log (`kgap_analyzers::gc`), and
//! the catalogue's rule ([`kgap_analyzers::findings::java_gc_collapse`]) decides.
//!
//! Here: the producer settings, the points and the Probe impl. Beside it: the options and the
//! probe (`options`), a point (`point`), what the cores decide (`cores`), a run's figures and
//! evidence (`figures`), the report's text (`render`).

mod cores;
mod figures;
mod options;
mod point;
mod render;

pub use cores::{cores, default_heap, default_producers, POST_HEAP_MB_PER_CORE};
pub use figures::{figures, figures_out_of_memory, point_evidence, read_gc_log, Figures};
pub use options::{BufferMemory, JavaProducers, Options};
pub use point::Point;

use crate::kit::broker::Broker;
use crate::kit::cli::CommonArgs;
use crate::kit::error::{ProbeError, Result};
use crate::kit::java::{self, Jvm};
use crate::kit::payload::{PayloadKind, Pool};
use crate::kit::{Context, Probe, Sweep};
use kgap_analyzers::findings::probe_result::{Client, ProbeResult};
use kgap_analyzers::findings::{java_gc_collapse as rule, Verdict};
use kgap_analyzers::vocab::units;
use std::path::Path;
use std::time::Duration;

/// What every run shares: the payload pool's digest (the companion's is checked against it)
/// and the load average when the sweep began.
pub struct Setup {
    sha256: String,
    load_before: Option<String>,
}

/// The producer settings of one run; `-J` comes after these.
pub fn producer_settings(buffer_memory: Option<u64>) -> Vec<(String, String)> {
    let mut v = vec![
        // The seed's baseline producer: acks=1, idempotence off (linger.ms 5 and batch.size
        // 16384 are kafka-clients 4.3.1's defaults already).
        ("acks".to_string(), "1".to_string()),
        ("enable.idempotence".to_string(), "false".to_string()),
    ];
    if let Some(b) = buffer_memory {
        v.push(("buffer.memory".to_string(), b.to_string()));
    }
    v
}

impl JavaProducers {
    fn producers(&self) -> Vec<u32> {
        if self.opts.producers.is_empty() {
            default_producers(cores())
        } else {
            self.opts.producers.clone()
        }
    }
}

impl Probe for JavaProducers {
    type Point = Point;
    type Figures = Figures;
    type Setup<'c> = Setup;
    const NAME: &'static str = "probe-java-producers";

    fn common(&self) -> &CommonArgs {
        &self.opts.common
    }

    fn clients(&self) -> Vec<Client> {
        vec![Client::Java]
    }

    fn points(&self, _broker: &Broker) -> Vec<Point> {
        let mut v = Vec::new();
        for b in &self.opts.buffer_memory {
            for k in self.producers() {
                let p = Point {
                    buffer_memory: b.0,
                    producers: k,
                };
                if !v.contains(&p) {
                    v.push(p);
                }
            }
        }
        v
    }

    fn label(&self, p: &Point) -> String {
        format!(
            "bm{}-k{}",
            p.buffer_memory
                .map_or("default".to_string(), |b| b.to_string()),
            p.producers
        )
    }

    fn prepare<'c>(&self, cx: &'c Context, result: &mut ProbeResult<Figures>) -> Result<Setup> {
        let pool = Pool::new(self.opts.size as usize, PayloadKind::Random);
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
        Ok(Setup {
            sha256: pool.sha256_hex(),
            load_before,
        })
    }

    fn run(
        &self,
        cx: &Context,
        setup: &Setup,
        client: Client,
        p: &Point,
        dir: &Path,
    ) -> Result<Option<Figures>> {
        if client != Client::Java {
            return Err(ProbeError::Usage(
                "probe-java-producers runs the Java client only".into(),
            ));
        }
        let mut settings: Vec<(String, String)> = vec![(
            "bootstrap.servers".into(),
            cx.broker.bootstrap().to_string(),
        )];
        settings.extend(producer_settings(p.buffer_memory));
        settings.extend(self.opts.java_property.iter().cloned());
        let run = java::run_point(
            cx.java()?,
            &cx.broker,
            Self::NAME,
            self.opts.partitions,
            dir,
            &Jvm::heap(&self.heap()),
            &[
                ("mode", "produce".into()),
                ("size", self.opts.size.to_string()),
                ("kind", "random".into()),
                ("producers", p.producers.to_string()),
                ("warmup", self.opts.warmup_messages.to_string()),
                (
                    "seconds",
                    format!("{:.3}", self.opts.duration.as_secs_f64()),
                ),
            ],
            &settings,
            self.opts.duration + Duration::from_secs(120),
            &setup.sha256,
        );
        match run {
            Ok(Some((run, topic))) => Ok(Some(figures(
                &run.result,
                &read_gc_log(&run.gc_log)?,
                Some(topic),
            ))),
            Ok(None) => Ok(None),
            // The heap ran out for good: the finding's end state, not a failed probe.
            Err(ProbeError::JavaOutOfMemory(msg)) => {
                cx.progress(&format!(
                    "{}: out of memory, counted as collapsed at 0 msg/s ({msg})",
                    self.label(p)
                ));
                Ok(Some(figures_out_of_memory(&read_gc_log(
                    &dir.join("gc.log"),
                )?)))
            }
            Err(e) => Err(e),
        }
    }

    fn describe(&self, f: &Figures) -> String {
        if f.gc.out_of_memory {
            return "OutOfMemoryError: collapsed".into();
        }
        format!(
            "{}, p99 {}, GC {} of the window ({} of its worst second), heap after young GC {}: {}",
            units::msgs_per_s(f.msgs_per_s),
            f.send_to_ack_ms_p99.map_or("?".into(), units::ms),
            units::percent(f.gc.gc_share_window),
            f.gc.gc_share_worst_second
                .map_or("?".into(), units::percent),
            f.gc.heap_full_share().map_or("?".into(), units::percent),
            match f.collapsed {
                Some(true) => "collapsed",
                Some(false) => "clean",
                None => "heap not measured",
            }
        )
    }

    fn run_topics(&self, f: &Figures) -> Vec<String> {
        f.topic.iter().cloned().collect()
    }

    fn window_s(&self, f: &Figures) -> Option<f64> {
        (!f.gc.out_of_memory).then_some(f.window_s)
    }

    fn after(&self, _cx: &Context, setup: &Setup, sweep: &mut Sweep<Self>) -> Result<()> {
        sweep
            .result
            .notes
            .push(java::load_note(setup.load_before.as_deref()));
        Ok(())
    }

    fn verdicts(&self, sweep: &Sweep<Self>) -> Vec<Verdict> {
        vec![rule::decide(&figures::evidence(self, sweep))]
    }

    fn headline(&self, _sweep: &Sweep<Self>) -> String {
        format!(
            "K Java producers in one JVM, {} B random messages, a {} heap, {} windows",
            self.opts.size,
            self.heap(),
            units::seconds(self.opts.duration.as_secs_f64())
        )
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

    fn opts(args: &[&str]) -> std::result::Result<Options, clap::Error> {
        let mut argv = vec!["probe-java-producers"];
        argv.extend_from_slice(args);
        Options::try_parse_from(argv)
    }

    #[test]
    fn default_heap_is_the_posts_heap_per_vcpu() {
        assert_eq!(default_heap(16), "2048m"); // the post's machine: its 2 GB
        assert_eq!(default_heap(2), "256m");
        assert_eq!(default_heap(1), "256m"); // the floor: the JVM and the pool need room
        assert_eq!(default_heap(64), "8192m");
    }

    #[test]
    fn default_producers_pass_the_cores_and_the_posts_16() {
        assert_eq!(default_producers(2), vec![1, 2, 4, 8, 16]);
        assert_eq!(default_producers(16), vec![1, 2, 4, 8, 16, 32, 64]);
    }

    #[test]
    fn lists_parse_and_bad_items_are_refused() {
        let o = opts(&["--producers", "2,16", "--buffer-memory", "default,512k"]).unwrap();
        assert_eq!(o.producers, vec![2, 16]);
        assert_eq!(
            o.buffer_memory,
            vec![BufferMemory(None), BufferMemory(Some(512 << 10))]
        );
        assert!(opts(&["--producers", "2,,4"]).is_err());
        assert!(opts(&["--producers", "0"]).is_err());
        assert!(opts(&["--buffer-memory", "2X"]).is_err());
        assert!(opts(&["--buffer-memory", "default,"]).is_err());
        assert!(opts(&["--heap", "lots"]).is_err());
        let p = JavaProducers::new(
            opts(&["--producers", "2", "--buffer-memory", "default,2M"]).unwrap(),
        );
        let points = p.points(&Broker::start(None, &[]).unwrap());
        assert_eq!(points.len(), 2);
        assert_eq!(p.label(&points[1]), "bm2097152-k2");
        let params = serde_json::to_value(points[0]).unwrap();
        assert_eq!(params["buffer.memory"], "default");
        assert_eq!(params["producers"], 2);
    }
}
