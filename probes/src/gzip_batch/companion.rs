//! The Java client's side of a point: kgap's Java companion (kafka-clients 4.3.1) on a fresh
//! topic of its own, with the same payload bytes (the pool's SHA-256 is checked equal).

use super::codec::Codec;
use super::figures::Figures;
use super::options::LINGER_MS;
use super::point::Point;
use crate::kit::broker::Broker;
use crate::kit::error::Result;
use crate::kit::java::{self, Java, Jvm};
use crate::kit::payload::Pool;
use std::path::Path;
use std::time::Duration;

/// kafka-clients settings of one point: the post's baseline producer (acks=1, linger.ms=5,
/// idempotence off) with the codec, its level (compression.<codec>.level, KIP-390; -1 and
/// snappy leave the client's default) and batch.size, in Java a limit on the *estimated
/// compressed* batch. librdkafka's `-X` names are not passed: the clients name settings apart.
pub fn java_client_settings(
    bootstrap: &str,
    codec: Codec,
    level: i32,
    batch_size: u64,
) -> Vec<(String, String)> {
    let mut v = vec![
        ("bootstrap.servers".to_string(), bootstrap.to_string()),
        ("acks".into(), "1".into()),
        ("linger.ms".into(), LINGER_MS.to_string()),
        ("enable.idempotence".into(), "false".into()),
        ("compression.type".into(), codec.name().into()),
        ("batch.size".into(), batch_size.to_string()),
    ];
    if level != -1 && codec != Codec::Snappy {
        v.push((
            format!("compression.{}.level", codec.name()),
            level.to_string(),
        ));
    }
    v
}

/// How a Java run is sized: the same payloads, warmup and window as librdkafka's.
pub struct Run<'a> {
    pub java: &'a Java,
    pub broker: &'a Broker,
    pub pool: &'a Pool,
    /// The pool's SHA-256, computed once per sweep.
    pub pool_sha256: &'a str,
    pub partitions: i32,
    pub warmup_messages: u64,
    pub window: Duration,
    pub probe: &'a str,
}

/// One run of the companion at a point. Ok(None): Ctrl-C stopped the JVM.
pub fn produce_once(run: &Run<'_>, p: &Point, dir: &Path) -> Result<Option<Figures>> {
    let done = java::run_point(
        run.java,
        run.broker,
        run.probe,
        run.partitions,
        dir,
        &Jvm::heap("1g"),
        &[
            ("mode", "produce".into()),
            ("size", run.pool.size().to_string()),
            ("kind", run.pool.kind().to_string()),
            ("producers", "1".into()),
            ("warmup", run.warmup_messages.to_string()),
            ("seconds", format!("{:.3}", run.window.as_secs_f64())),
        ],
        &java_client_settings(run.broker.bootstrap(), p.codec, p.level, p.batch_size),
        // The JVM starts, warms up and drains: minutes on a loaded machine, never forever.
        run.window + Duration::from_secs(180),
        run.pool_sha256,
    )?;
    Ok(done.map(|(r, topic)| Figures::java(&r.result, topic, run.pool.size(), p.batch_size)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_settings_name_the_level_per_codec_and_leave_defaults_alone() {
        let v = java_client_settings("h:9092", Codec::Gzip, 1, 16384);
        assert!(v.contains(&("compression.gzip.level".into(), "1".into())));
        assert!(v.contains(&("batch.size".into(), "16384".into())));
        assert!(v.contains(&("linger.ms".into(), "5".into())));
        let d = java_client_settings("h:9092", Codec::Zstd, -1, 16384);
        assert!(d.iter().all(|(k, _)| !k.ends_with(".level")), "{d:?}");
        let s = java_client_settings("h:9092", Codec::Snappy, 3, 16384);
        assert!(s.iter().all(|(k, _)| !k.ends_with(".level")), "{s:?}");
    }
}
