//! Payloads byte-identical to the seed benchmark's (FACTS.md §1).
//!
//! Both harnesses of the post build a pool of payloads from SplitMix64 seeded with 42, and
//! check a SHA-256 of the concatenated pool before every run, so "the same bytes" is provable.
//! Record `i` uses `pool[i % count]` and partition `i % partitions`. The pool is built once,
//! before any measurement: nothing here runs per message except [`Pool::get`] (an index).

use sha2::{Digest, Sha256};
use std::fmt;
use std::str::FromStr;

/// The seed every run of the benchmark uses.
pub const SEED: u64 = 42;

/// Memory bound for the pool, as in the seed: min(16384, 64 MiB / size) payloads.
const POOL_BYTES: usize = 64 * 1024 * 1024;
const POOL_MAX: usize = 16384;

/// The 32 words of the `text` kind, in the seed's order (index = `next() % 32`).
pub const WORDS: [&str; 32] = [
    "kafka",
    "stream",
    "broker",
    "topic",
    "partition",
    "offset",
    "consumer",
    "producer",
    "record",
    "batch",
    "leader",
    "follower",
    "replica",
    "commit",
    "segment",
    "index",
    "latency",
    "throughput",
    "cluster",
    "message",
    "payload",
    "header",
    "key",
    "value",
    "timestamp",
    "schema",
    "event",
    "log",
    "queue",
    "fetch",
    "poll",
    "ack",
];

/// SplitMix64, Steele et al.; the generator both harnesses share.
#[derive(Debug, Clone)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        SplitMix64 { state: seed }
    }

    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// What the payload bytes look like: incompressible, or word-list text for the codecs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PayloadKind {
    Random,
    Text,
    /// JSON-shaped records with keys ([`json_record`]): what a processing pipeline parses.
    /// Not offered by `--kind` (the Java companion builds random and text only).
    Json,
}

impl FromStr for PayloadKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "random" => Ok(PayloadKind::Random),
            "text" => Ok(PayloadKind::Text),
            _ => Err(format!(
                "unknown payload kind {s:?} (expected random or text)"
            )),
        }
    }
}

impl fmt::Display for PayloadKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            PayloadKind::Random => "random",
            PayloadKind::Text => "text",
            PayloadKind::Json => "json",
        })
    }
}

/// The payload pool: `count` payloads of `size` bytes, contiguous in one allocation.
/// Shared (`Arc`) so a producer can keep it alive while librdkafka holds zero-copy
/// references into it ([`Pool::shared`]).
pub struct Pool {
    bytes: std::sync::Arc<[u8]>,
    size: usize,
    count: usize,
    kind: PayloadKind,
}

impl Pool {
    /// Builds the pool exactly as the seed does. `size` must be at least 1.
    pub fn new(size: usize, kind: PayloadKind) -> Pool {
        Pool::with_count(size, kind, Pool::seed_count(size))
    }

    /// The seed's pool length for `size`-byte payloads: min(16384, 64 MiB / size).
    pub fn seed_count(size: usize) -> usize {
        POOL_MAX.min((POOL_BYTES / size.max(1)).max(1))
    }

    /// The seed's first `count` payloads. A short pool stays in the CPU cache (one payload
    /// is what rdkafka_performance sends); the seed's 16 MiB of 1 KB payloads do not, and
    /// librdkafka's copy of each into its request buffer then waits on memory.
    pub fn with_count(size: usize, kind: PayloadKind, count: usize) -> Pool {
        assert!(size > 0, "payload size must be at least 1 byte");
        assert!(count > 0, "a pool needs at least one payload");
        let mut rng = SplitMix64::new(SEED);
        let mut bytes = Vec::with_capacity(count * size);
        let mut text = String::with_capacity(size + 16);
        for _ in 0..count {
            match kind {
                PayloadKind::Random => {
                    let start = bytes.len();
                    while bytes.len() - start < size {
                        let word = rng.next().to_le_bytes();
                        let take = (size - (bytes.len() - start)).min(8);
                        bytes.extend_from_slice(&word[..take]);
                    }
                }
                PayloadKind::Text => {
                    text.clear();
                    while text.len() < size {
                        text.push_str(WORDS[(rng.next() % 32) as usize]);
                        text.push(' ');
                    }
                    bytes.extend_from_slice(&text.as_bytes()[..size]);
                }
                PayloadKind::Json => {
                    json_record(&mut rng, size, &mut text);
                    bytes.extend_from_slice(text.as_bytes());
                }
            }
        }
        Pool {
            bytes: bytes.into(),
            size,
            count,
            kind,
        }
    }

    pub fn size(&self) -> usize {
        self.size
    }

    pub fn count(&self) -> usize {
        self.count
    }

    pub fn kind(&self) -> PayloadKind {
        self.kind
    }

    /// Payload of record `i` (`pool[i % count]`).
    #[inline]
    pub fn get(&self, i: u64) -> &[u8] {
        let at = (i % self.count as u64) as usize * self.size;
        &self.bytes[at..at + self.size]
    }

    /// The pool's bytes, for a producer to keep until librdkafka is done with them.
    pub fn shared(&self) -> std::sync::Arc<[u8]> {
        self.bytes.clone()
    }

    /// A mutable copy of payload `i` for stamping an end-to-end timestamp into, made once per
    /// slot before the run, never per message.
    pub fn slot(&self, i: u64) -> Vec<u8> {
        self.get(i).to_vec()
    }

    /// Hex SHA-256 of the concatenated pool: the proof that two clients sent the same bytes.
    /// What the result document says about this pool.
    pub fn info(&self) -> kgap_analyzers::findings::probe_result::PayloadInfo {
        kgap_analyzers::findings::probe_result::PayloadInfo {
            size_bytes: self.size(),
            kind: self.kind().to_string(),
            pool_count: self.count(),
            sha256: self.sha256_hex(),
        }
    }

    pub fn sha256_hex(&self) -> String {
        hex(&Sha256::digest(&self.bytes))
    }
}

/// Keys of the JSON records: hot keys first (a skewed draw over this many users).
pub const JSON_KEYS: u64 = 1024;
/// The shortest JSON record: the fixed fields and a few words of value.
pub const JSON_MIN_SIZE: usize = 96;

/// One JSON-shaped record of exactly `size` bytes into `out`:
/// `{"key":"user-0042","event":"fetch","seq":17,"value":"kafka stream …"}` padded with
/// trailing spaces (the trailing bytes a pipeline trims). Keys are skewed (a few hot users),
/// the event and the value's words come from [`WORDS`]. `size` ≥ [`JSON_MIN_SIZE`].
pub fn json_record(rng: &mut SplitMix64, size: usize, out: &mut String) {
    use fmt::Write;
    assert!(
        size >= JSON_MIN_SIZE,
        "a JSON record needs at least {JSON_MIN_SIZE} bytes"
    );
    out.clear();
    // The product of two uniform draws: low user ids are hot.
    let key = (rng.next() % JSON_KEYS) * (rng.next() % JSON_KEYS) / JSON_KEYS;
    let event = WORDS[(rng.next() % 32) as usize];
    let seq = rng.next() % 1_000_000_000;
    write!(
        out,
        r#"{{"key":"user-{key:04}","event":"{event}","seq":{seq},"value":""#
    )
    .expect("writing to a String");
    // Words while the record and its closing `"}` fit; at least a tenth of it is padding.
    let budget = size - size / 10 - 2;
    let mut first = true;
    loop {
        let w = WORDS[(rng.next() % 32) as usize];
        let add = w.len() + usize::from(!first);
        if out.len() + add > budget {
            break;
        }
        if !first {
            out.push(' ');
        }
        out.push_str(w);
        first = false;
    }
    out.push_str("\"}");
    while out.len() < size {
        out.push(' ');
    }
}

/// Writes wall-clock nanoseconds, big-endian, into bytes 0..8 (the seed's e2e latency stamp).
/// Payloads shorter than 8 bytes cannot carry it and are left alone.
#[inline]
pub fn stamp_e2e(payload: &mut [u8], wall_ns: i64) {
    if payload.len() >= 8 {
        payload[..8].copy_from_slice(&wall_ns.to_be_bytes());
    }
}

/// Reads the stamp of [`stamp_e2e`].
#[inline]
pub fn read_e2e(payload: &[u8]) -> Option<i64> {
    payload
        .get(..8)
        .map(|b| i64::from_be_bytes(b.try_into().expect("8 bytes")))
}

/// Writes the message's intended send time (its slot in the pacer's schedule), wall-clock
/// nanoseconds, big-endian, into bytes 8..16: latency from it counts the wait of a late send
/// (coordinated omission). Payloads shorter than 16 bytes are left alone.
#[inline]
pub fn stamp_e2e_intended(payload: &mut [u8], wall_ns: i64) {
    if payload.len() >= 16 {
        payload[8..16].copy_from_slice(&wall_ns.to_be_bytes());
    }
}

/// Reads the stamp of [`stamp_e2e_intended`].
#[inline]
pub fn read_e2e_intended(payload: &[u8]) -> Option<i64> {
    payload
        .get(8..16)
        .map(|b| i64::from_be_bytes(b.try_into().expect("8 bytes")))
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    use fmt::Write;
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        write!(s, "{b:02x}").expect("writing to a String");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix64_matches_published_test_vector() {
        let mut rng = SplitMix64::new(0);
        assert_eq!(rng.next(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(rng.next(), 0x6E78_9E6A_A1B9_65F4);
    }

    #[test]
    fn pool_count_follows_the_seed_rule() {
        assert_eq!(Pool::new(100, PayloadKind::Random).count(), 16384);
        assert_eq!(Pool::new(1024, PayloadKind::Random).count(), 16384);
        // 64 MiB / 10 KiB = 6553.6 → 6553 payloads.
        assert_eq!(Pool::new(10 * 1024, PayloadKind::Random).count(), 6553);
        assert_eq!(Pool::new(128 * 1024 * 1024, PayloadKind::Random).count(), 1);
    }

    #[test]
    fn random_payload_is_little_endian_generator_output() {
        let pool = Pool::new(12, PayloadKind::Random);
        let mut rng = SplitMix64::new(SEED);
        let a = rng.next().to_le_bytes();
        let b = rng.next().to_le_bytes();
        assert_eq!(&pool.get(0)[..8], &a);
        assert_eq!(&pool.get(0)[8..], &b[..4]);
        // The next payload starts from a fresh output, not the rest of `b`.
        let c = rng.next().to_le_bytes();
        assert_eq!(&pool.get(1)[..8], &c);
    }

    #[test]
    fn text_payload_is_words_and_spaces_truncated_to_size() {
        let pool = Pool::new(100, PayloadKind::Text);
        let mut rng = SplitMix64::new(SEED);
        let mut expect = String::new();
        while expect.len() < 100 {
            expect.push_str(WORDS[(rng.next() % 32) as usize]);
            expect.push(' ');
        }
        assert_eq!(pool.get(0), &expect.as_bytes()[..100]);
        for p in 0..pool.count() as u64 {
            assert!(pool
                .get(p)
                .iter()
                .all(|b| b.is_ascii_lowercase() || *b == b' '));
        }
    }

    #[test]
    fn a_short_pool_is_the_seed_pool_cut_short() {
        let seed = Pool::new(1024, PayloadKind::Random);
        let one = Pool::with_count(1024, PayloadKind::Random, 1);
        assert_eq!(one.count(), 1);
        assert_eq!(one.get(0), seed.get(0));
        assert_eq!(one.get(7), seed.get(0));
        let three = Pool::with_count(1024, PayloadKind::Text, 3);
        assert_eq!(three.get(2), Pool::new(1024, PayloadKind::Text).get(2));
        assert_eq!(three.get(5), three.get(2));
    }

    #[test]
    fn records_cycle_through_the_pool() {
        let pool = Pool::new(100, PayloadKind::Random);
        assert_eq!(pool.get(3), pool.get(3 + pool.count() as u64));
        assert_ne!(pool.get(3), pool.get(4));
    }

    #[test]
    fn pool_hash_is_stable_and_depends_on_kind_and_size() {
        let a = Pool::new(100, PayloadKind::Random).sha256_hex();
        assert_eq!(a, Pool::new(100, PayloadKind::Random).sha256_hex());
        assert_eq!(a.len(), 64);
        assert_ne!(a, Pool::new(100, PayloadKind::Text).sha256_hex());
        assert_ne!(a, Pool::new(101, PayloadKind::Random).sha256_hex());
    }

    #[test]
    fn json_records_are_json_of_the_size_with_keys() {
        let pool = Pool::with_count(256, PayloadKind::Json, 500);
        let mut keys = std::collections::HashSet::new();
        for i in 0..500 {
            let r = pool.get(i);
            assert_eq!(r.len(), 256);
            let v: serde_json::Value = serde_json::from_slice(r).expect("valid JSON");
            let key = v["key"].as_str().unwrap().to_string();
            assert!(key.starts_with("user-"), "{key}");
            assert!(v["seq"].is_u64() && v["value"].as_str().unwrap().len() > 100);
            assert_eq!(*r.last().unwrap(), b' ', "padded");
            keys.insert(key);
        }
        // Hot keys repeat, and there are many of them.
        assert!(keys.len() > 50 && keys.len() < 500, "{}", keys.len());
        assert_eq!(
            pool.get(3),
            Pool::with_count(256, PayloadKind::Json, 4).get(3)
        );
        assert_eq!(PayloadKind::Json.to_string(), "json");
        assert!("json".parse::<PayloadKind>().is_err(), "not a --kind");
    }

    #[test]
    fn e2e_stamp_round_trips_big_endian() {
        let mut p = vec![0u8; 16];
        stamp_e2e(&mut p, 0x0102_0304_0506_0708);
        assert_eq!(&p[..8], &[1, 2, 3, 4, 5, 6, 7, 8]);
        assert_eq!(read_e2e(&p), Some(0x0102_0304_0506_0708));
        let mut short = vec![9u8; 4];
        stamp_e2e_intended(&mut p, 0x0a0b_0c0d_0e0f_1011);
        assert_eq!(
            read_e2e(&p),
            Some(0x0102_0304_0506_0708),
            "bytes 0..8 untouched"
        );
        assert_eq!(read_e2e_intended(&p), Some(0x0a0b_0c0d_0e0f_1011));
        stamp_e2e(&mut short, 1);
        assert_eq!(short, vec![9u8; 4]);
        assert_eq!(read_e2e(&short), None);
    }
}
