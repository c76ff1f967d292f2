//! The client configuration the rules compare statistics against.
//!
//! Statistics carry two limits themselves (`msg_max` = queue.buffering.max.messages,
//! `msg_size_max` = queue.buffering.max.kbytes); the rest (batch.size, linger.ms,
//! queued.min.messages, …) are not in them. They come from the user (`-X key=value`, as the
//! probes take them) or are librdkafka's defaults, and the report says which.

use serde::Serialize;

/// One setting: its value and where it came from.
#[derive(Debug, Clone, Copy, Serialize, PartialEq)]
pub struct Setting {
    pub value: f64,
    /// `given` (an option) or `default` (librdkafka's documented default for the version
    /// the statistics look like).
    pub source: &'static str,
}

/// librdkafka settings that decide what the statistics mean.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct ClientConfig {
    /// batch.size (bytes).
    pub batch_size: Option<f64>,
    /// batch.num.messages.
    pub batch_num_messages: Option<f64>,
    /// linger.ms (= queue.buffering.max.ms).
    pub linger_ms: Option<f64>,
    /// queued.min.messages (per partition).
    pub queued_min_messages: Option<f64>,
    /// queued.max.messages.kbytes (per partition).
    pub queued_max_messages_kbytes: Option<f64>,
    /// fetch.queue.backoff.ms (2.2+).
    pub fetch_queue_backoff_ms: Option<f64>,
    /// max.in.flight.requests.per.connection.
    pub max_in_flight: Option<f64>,
}

/// Which of librdkafka's defaults apply: 1.5 changed linger.ms (0.5 → 5) and
/// queued.max.messages.kbytes (1 GB → 64 MB); the statistics date themselves (`age` is 1.5+).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Defaults {
    pub before_1_5: bool,
}

impl ClientConfig {
    /// Set one `key=value` (librdkafka's names and aliases). Unknown keys are an error so
    /// that a typo does not silently leave a default in place.
    pub fn set(&mut self, kv: &str) -> Result<(), String> {
        let (k, v) = kv
            .split_once('=')
            .ok_or_else(|| format!("'{kv}' is not key=value"))?;
        let v: f64 = v
            .trim()
            .parse()
            .map_err(|_| format!("{k}: '{v}' is not a number"))?;
        if !(v.is_finite() && v >= 0.0) {
            return Err(format!("{k}: '{v}' must be a number ≥ 0"));
        }
        let slot = match k.trim() {
            "batch.size" => &mut self.batch_size,
            "batch.num.messages" => &mut self.batch_num_messages,
            "linger.ms" | "queue.buffering.max.ms" => &mut self.linger_ms,
            "queued.min.messages" => &mut self.queued_min_messages,
            "queued.max.messages.kbytes" => &mut self.queued_max_messages_kbytes,
            "fetch.queue.backoff.ms" => &mut self.fetch_queue_backoff_ms,
            "max.in.flight.requests.per.connection" | "max.in.flight" => &mut self.max_in_flight,
            other => {
                return Err(format!(
                    "{other}: not a setting analyze-stats uses (batch.size, batch.num.messages, \
                     linger.ms, queued.min.messages, queued.max.messages.kbytes, \
                     fetch.queue.backoff.ms, max.in.flight)"
                ))
            }
        };
        *slot = Some(v);
        Ok(())
    }

    fn pick(given: Option<f64>, default: f64) -> Setting {
        match given {
            Some(value) => Setting {
                value,
                source: "given",
            },
            None => Setting {
                value: default,
                source: "default",
            },
        }
    }

    /// Every setting, given or defaulted.
    pub fn resolve(&self, d: Defaults) -> Resolved {
        Resolved {
            batch_size: Self::pick(self.batch_size, 1_000_000.0),
            batch_num_messages: Self::pick(self.batch_num_messages, 10_000.0),
            linger_ms: Self::pick(self.linger_ms, if d.before_1_5 { 0.5 } else { 5.0 }),
            queued_min_messages: Self::pick(self.queued_min_messages, 100_000.0),
            queued_max_messages_kbytes: Self::pick(
                self.queued_max_messages_kbytes,
                if d.before_1_5 { 1_048_576.0 } else { 65_536.0 },
            ),
            fetch_queue_backoff_ms: Self::pick(self.fetch_queue_backoff_ms, 1000.0),
            max_in_flight: Self::pick(self.max_in_flight, 1_000_000.0),
        }
    }
}

/// The settings the rules used.
#[derive(Debug, Clone, Copy, Serialize, PartialEq)]
pub struct Resolved {
    pub batch_size: Setting,
    pub batch_num_messages: Setting,
    pub linger_ms: Setting,
    pub queued_min_messages: Setting,
    pub queued_max_messages_kbytes: Setting,
    pub fetch_queue_backoff_ms: Setting,
    pub max_in_flight: Setting,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn given_values_win_and_typos_are_errors() {
        let mut c = ClientConfig::default();
        c.set("batch.size=16384").unwrap();
        c.set("queue.buffering.max.ms=0").unwrap();
        assert!(c.set("batch.sise=1").is_err());
        assert!(c.set("linger.ms").is_err());
        let r = c.resolve(Defaults { before_1_5: false });
        assert_eq!(r.batch_size.value, 16384.0);
        assert_eq!(r.batch_size.source, "given");
        assert_eq!(r.linger_ms.value, 0.0);
        assert_eq!(r.queued_min_messages.source, "default");
        let old = ClientConfig::default().resolve(Defaults { before_1_5: true });
        assert_eq!(old.linger_ms.value, 0.5);
        assert_eq!(old.queued_max_messages_kbytes.value, 1_048_576.0);
    }
}
