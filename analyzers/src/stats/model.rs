//! The typed model of one statistics emit, as librdkafka 0.11 to 2.12 write it.
//!
//! Every field is optional: a field a version does not emit is absent (`None`), never zero
//! (window percentiles and `outbuf_latency` appeared in 0.11.5, `connects`/`disconnects` and
//! `req` in 1.0, `age` in 1.5, `txidle` in 1.7, `consumer_lag_stored` in 1.8, the leader
//! epochs in 2.1). Numbers are read leniently (integers, or floats
//! as some wrappers re-serialise them); unknown fields, such as the `*_d`/`*_fd` deltas Karafka
//! adds, are skipped without being built. Strings borrow from the input where they can.
//!
//! Sentinels are turned into absence here, once: `consumer_lag` -1 (unknown) and offsets
//! below zero (-1001 is librdkafka's "invalid offset").

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde::Deserialize;

/// One emit: the top-level object.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Emit<'a> {
    #[serde(borrow)]
    pub name: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub client_id: Option<Cow<'a, str>>,
    #[serde(rename = "type", borrow)]
    pub client_type: Option<Cow<'a, str>>,
    /// librdkafka's monotonic clock, µs.
    #[serde(deserialize_with = "num")]
    pub ts: Option<i64>,
    /// Wall clock, seconds since the epoch.
    #[serde(deserialize_with = "num")]
    pub time: Option<i64>,
    /// µs since the client was created (1.5+).
    #[serde(deserialize_with = "num")]
    pub age: Option<i64>,
    #[serde(deserialize_with = "num")]
    pub replyq: Option<i64>,
    #[serde(deserialize_with = "num")]
    pub msg_cnt: Option<i64>,
    #[serde(deserialize_with = "num")]
    pub msg_size: Option<i64>,
    /// queue.buffering.max.messages.
    #[serde(deserialize_with = "num")]
    pub msg_max: Option<i64>,
    /// queue.buffering.max.kbytes, in bytes.
    #[serde(deserialize_with = "num")]
    pub msg_size_max: Option<i64>,
    /// Partitions consumed with the legacy API (consume_start): above 0, each has a fetch
    /// queue of its own; the high-level consumer forwards them all to one.
    #[serde(deserialize_with = "num")]
    pub simple_cnt: Option<i64>,
    #[serde(deserialize_with = "num")]
    pub tx: Option<i64>,
    #[serde(deserialize_with = "num")]
    pub tx_bytes: Option<i64>,
    #[serde(deserialize_with = "num")]
    pub rx: Option<i64>,
    #[serde(deserialize_with = "num")]
    pub rx_bytes: Option<i64>,
    #[serde(deserialize_with = "num")]
    pub txmsgs: Option<i64>,
    #[serde(deserialize_with = "num")]
    pub txmsg_bytes: Option<i64>,
    #[serde(deserialize_with = "num")]
    pub rxmsgs: Option<i64>,
    #[serde(deserialize_with = "num")]
    pub rxmsg_bytes: Option<i64>,
    #[serde(borrow)]
    pub brokers: Option<Entries<'a, Broker<'a>>>,
    #[serde(borrow)]
    pub topics: Option<Entries<'a, Topic<'a>>>,
    #[serde(borrow)]
    pub cgrp: Option<Cgrp<'a>>,
    #[serde(borrow)]
    pub fatal: Option<Fatal<'a>>,
}

/// A broker handle: one connection (a learned or configured broker, or a logical one such as
/// `GroupCoordinator`, which has a connection of its own).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Broker<'a> {
    #[serde(borrow)]
    pub name: Option<Cow<'a, str>>,
    #[serde(deserialize_with = "num")]
    pub nodeid: Option<i64>,
    /// `configured`, `learned`, `internal`, `logical` (1.0+).
    #[serde(borrow)]
    pub source: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub state: Option<Cow<'a, str>>,
    /// µs since the last state change.
    #[serde(deserialize_with = "num")]
    pub stateage: Option<i64>,
    #[serde(deserialize_with = "num")]
    pub outbuf_cnt: Option<i64>,
    #[serde(deserialize_with = "num")]
    pub outbuf_msg_cnt: Option<i64>,
    #[serde(deserialize_with = "num")]
    pub waitresp_cnt: Option<i64>,
    #[serde(deserialize_with = "num")]
    pub waitresp_msg_cnt: Option<i64>,
    #[serde(deserialize_with = "num")]
    pub tx: Option<i64>,
    #[serde(deserialize_with = "num")]
    pub txbytes: Option<i64>,
    #[serde(deserialize_with = "num")]
    pub txerrs: Option<i64>,
    #[serde(deserialize_with = "num")]
    pub txretries: Option<i64>,
    /// µs since the last send (1.7+; -1 before the first).
    #[serde(deserialize_with = "num")]
    pub txidle: Option<i64>,
    #[serde(deserialize_with = "num")]
    pub req_timeouts: Option<i64>,
    #[serde(deserialize_with = "num")]
    pub rx: Option<i64>,
    #[serde(deserialize_with = "num")]
    pub rxbytes: Option<i64>,
    #[serde(deserialize_with = "num")]
    pub rxerrs: Option<i64>,
    #[serde(deserialize_with = "num")]
    pub rxcorriderrs: Option<i64>,
    #[serde(deserialize_with = "num")]
    pub connects: Option<i64>,
    #[serde(deserialize_with = "num")]
    pub disconnects: Option<i64>,
    pub int_latency: Option<Window>,
    pub outbuf_latency: Option<Window>,
    pub rtt: Option<Window>,
    /// Milliseconds, unlike the other windows.
    pub throttle: Option<Window>,
    /// Requests sent per API name, cumulative (1.0+).
    #[serde(borrow)]
    pub req: Option<Entries<'a, Count>>,
    /// Partitions this broker handle serves ("topic-partition" keys).
    pub toppars: Option<Counted>,
}

/// A rolling window (STATISTICS.md "Window stats"): figures of the last interval only.
#[derive(Debug, Default, Clone, Copy, Deserialize, PartialEq)]
#[serde(default)]
pub struct Window {
    #[serde(deserialize_with = "num")]
    pub min: Option<i64>,
    #[serde(deserialize_with = "num")]
    pub max: Option<i64>,
    #[serde(deserialize_with = "num")]
    pub avg: Option<i64>,
    #[serde(deserialize_with = "num")]
    pub sum: Option<i64>,
    #[serde(deserialize_with = "num")]
    pub p50: Option<i64>,
    #[serde(deserialize_with = "num")]
    pub p90: Option<i64>,
    #[serde(deserialize_with = "num")]
    pub p99: Option<i64>,
    #[serde(deserialize_with = "num")]
    pub p99_99: Option<i64>,
    /// Values beyond the histogram's range: the percentiles do not see them (`max` does).
    #[serde(deserialize_with = "num")]
    pub outofrange: Option<i64>,
    #[serde(deserialize_with = "num")]
    pub cnt: Option<i64>,
}

impl Window {
    /// Values sampled in the interval (0 when absent).
    pub fn count(&self) -> i64 {
        self.cnt.unwrap_or(0)
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Topic<'a> {
    #[serde(borrow)]
    pub topic: Option<Cow<'a, str>>,
    /// Bytes per batch (producer: per ProduceRequest batch; consumer: per fetched MessageSet).
    pub batchsize: Option<Window>,
    /// Messages per batch.
    pub batchcnt: Option<Window>,
    #[serde(borrow)]
    pub partitions: Option<Entries<'a, Partition<'a>>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Partition<'a> {
    /// -1 is librdkafka's internal UA (unassigned) partition.
    #[serde(deserialize_with = "num")]
    pub partition: Option<i64>,
    #[serde(deserialize_with = "num")]
    pub broker: Option<i64>,
    #[serde(deserialize_with = "num")]
    pub leader: Option<i64>,
    #[serde(deserialize_with = "num")]
    pub msgq_cnt: Option<i64>,
    #[serde(deserialize_with = "num")]
    pub msgq_bytes: Option<i64>,
    #[serde(deserialize_with = "num")]
    pub fetchq_cnt: Option<i64>,
    #[serde(deserialize_with = "num")]
    pub fetchq_size: Option<i64>,
    #[serde(borrow)]
    pub fetch_state: Option<Cow<'a, str>>,
    #[serde(deserialize_with = "offset")]
    pub hi_offset: Option<i64>,
    /// Offset of the last message passed to the application + 1.
    #[serde(deserialize_with = "offset")]
    pub app_offset: Option<i64>,
    /// The fetcher's position: the next offset it fetches.
    #[serde(deserialize_with = "offset")]
    pub next_offset: Option<i64>,
    #[serde(deserialize_with = "offset")]
    pub committed_offset: Option<i64>,
    #[serde(deserialize_with = "offset")]
    pub stored_offset: Option<i64>,
    /// -1 (unknown) is read as absent.
    #[serde(deserialize_with = "offset")]
    pub consumer_lag: Option<i64>,
    /// 1.8+: from the stored offset, so it follows the application without waiting for commits.
    /// Present (dating the emitter) even when -1.
    pub consumer_lag_stored: Option<Sentinel>,
    #[serde(deserialize_with = "num")]
    pub txmsgs: Option<i64>,
    #[serde(deserialize_with = "num")]
    pub txbytes: Option<i64>,
    #[serde(deserialize_with = "num")]
    pub rxmsgs: Option<i64>,
    #[serde(deserialize_with = "num")]
    pub rxbytes: Option<i64>,
    /// 2.1+; its presence dates the emitter.
    #[serde(deserialize_with = "num")]
    pub stored_leader_epoch: Option<i64>,
}

/// Consumer group handler.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Cgrp<'a> {
    #[serde(borrow)]
    pub state: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub join_state: Option<Cow<'a, str>>,
    #[serde(deserialize_with = "num")]
    pub rebalance_cnt: Option<i64>,
    #[serde(borrow)]
    pub rebalance_reason: Option<Cow<'a, str>>,
    #[serde(deserialize_with = "num")]
    pub assignment_size: Option<i64>,
}

/// A fatal error (idempotent or transactional producer).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Fatal<'a> {
    #[serde(borrow)]
    pub error: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub reason: Option<Cow<'a, str>>,
}

/// A field that is present but may hold a sentinel (-1: unknown): `Sentinel(None)`.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct Sentinel(pub Option<i64>);

impl<'de> Deserialize<'de> for Sentinel {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Sentinel(offset(d)?))
    }
}

/// A request counter (`req` values): a number, leniently.
#[derive(Debug, Default, Clone, Copy)]
pub struct Count(pub i64);

impl<'de> Deserialize<'de> for Count {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Count(num(d)?.unwrap_or(0)))
    }
}

/// The entries of a JSON object in input order, without building a map: brokers, topics,
/// partitions and `req` are read this way (their keys repeat a field inside anyway).
#[derive(Debug)]
pub struct Entries<'a, T>(pub Vec<(Cow<'a, str>, T)>);

impl<T> Default for Entries<'_, T> {
    fn default() -> Self {
        Entries(Vec::new())
    }
}

impl<'de: 'a, 'a, T: Deserialize<'de>> Deserialize<'de> for Entries<'a, T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a, T>(PhantomData<(&'a (), T)>);
        impl<'de: 'a, 'a, T: Deserialize<'de>> Visitor<'de> for V<'a, T> {
            type Value = Entries<'a, T>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<M: MapAccess<'de>>(self, mut m: M) -> Result<Self::Value, M::Error> {
                let mut out = Vec::with_capacity(m.size_hint().unwrap_or(0).min(4096));
                while let Some(k) = m.next_key::<Key<'a>>()? {
                    out.push((k.0, m.next_value()?));
                }
                Ok(Entries(out))
            }
        }
        d.deserialize_map(V(PhantomData))
    }
}

/// A map key that borrows when it has no escapes.
struct Key<'a>(Cow<'a, str>);

impl<'de: 'a, 'a> Deserialize<'de> for Key<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Key<'a>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Key(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
                Ok(Key(Cow::Owned(v)))
            }
        }
        d.deserialize_str(V(PhantomData))
    }
}

/// An object whose entries are only counted (`toppars`).
#[derive(Debug, Default, Clone, Copy)]
pub struct Counted(pub usize);

impl<'de> Deserialize<'de> for Counted {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Counted;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<M: MapAccess<'de>>(self, mut m: M) -> Result<Counted, M::Error> {
                let mut n = 0;
                while m.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {
                    n += 1;
                }
                Ok(Counted(n))
            }
        }
        d.deserialize_map(V)
    }
}

/// A number, leniently: integers as they are, floats truncated, `null` as absent.
fn num<'de, D: Deserializer<'de>>(d: D) -> Result<Option<i64>, D::Error> {
    struct V;
    impl<'de> Visitor<'de> for V {
        type Value = Option<i64>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a number")
        }
        fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
            Ok(Some(v))
        }
        fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
            Ok(Some(i64::try_from(v).unwrap_or(i64::MAX)))
        }
        fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
            Ok(v.is_finite().then_some(v as i64))
        }
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_some<D2: Deserializer<'de>>(self, d: D2) -> Result<Self::Value, D2::Error> {
            d.deserialize_any(V)
        }
    }
    d.deserialize_any(V)
}

/// An offset or lag: negative values are librdkafka's sentinels (-1 unknown, -1001 invalid).
fn offset<'de, D: Deserializer<'de>>(d: D) -> Result<Option<i64>, D::Error> {
    Ok(num(d)?.filter(|&v| v >= 0))
}

/// Parse one object's text into the model.
pub fn parse(text: &[u8]) -> Result<Emit<'_>, serde_json::Error> {
    serde_json::from_slice(text)
}

impl Emit<'_> {
    /// The object is librdkafka statistics (and not some other JSON): it has the monotonic
    /// clock and either the client's name or its brokers.
    pub fn is_statistics(&self) -> bool {
        self.ts.is_some() && (self.name.is_some() || self.brokers.is_some())
    }
}

/// What the fields present say about the librdkafka version that wrote them.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Dating {
    pub connects: bool,
    pub age: bool,
    pub txidle: bool,
    pub consumer_lag_stored: bool,
    pub leader_epoch: bool,
    pub percentiles: bool,
}

impl Dating {
    /// A version range in librdkafka's release names.
    pub fn hint(&self) -> &'static str {
        if self.leader_epoch {
            "2.1 or later (stored_leader_epoch)"
        } else if self.consumer_lag_stored {
            "1.8 to 2.0 (consumer_lag_stored, no leader epochs)"
        } else if self.txidle {
            "1.7 (txidle, no consumer_lag_stored)"
        } else if self.age {
            "1.5 or 1.6 (age, no txidle)"
        } else if self.connects {
            "1.0 to 1.4 (connects, no age)"
        } else {
            "before 1.0 (no connects), or a wrapper that dropped fields"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_fields_are_absent_and_sentinels_are_not_values() {
        let e = parse(
            br#"{"name":"p","ts":7,"brokers":{"b:9092/1":{"nodeid":1,"rtt":{"p50":2.5}}},
                 "topics":{"t":{"partitions":{"0":{"partition":0,"consumer_lag":-1,
                 "hi_offset":-1001,"fetchq_cnt":3}}}},"msg_cnt":null,"x_d":[1]}"#,
        )
        .unwrap();
        assert!(e.is_statistics());
        assert_eq!(e.msg_cnt, None);
        assert_eq!(e.age, None);
        let (name, b) = &e.brokers.as_ref().unwrap().0[0];
        assert_eq!(name, "b:9092/1");
        assert_eq!(b.rtt.unwrap().p50, Some(2));
        assert_eq!(b.rtt.unwrap().p99, None);
        assert_eq!(b.connects, None);
        let t = &e.topics.as_ref().unwrap().0[0].1;
        let p = &t.partitions.as_ref().unwrap().0[0].1;
        assert_eq!(
            (p.consumer_lag, p.hi_offset, p.fetchq_cnt),
            (None, None, Some(3))
        );
    }

    #[test]
    fn other_json_is_not_statistics() {
        assert!(!parse(br#"{"level":"info","msg":"hello"}"#)
            .unwrap()
            .is_statistics());
        assert!(parse(br#"{"ts":"2024-01-01"}"#).is_err());
    }
}
