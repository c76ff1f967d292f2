//! A fast hasher for the analyzers' hot maps (JFR constant pools and thread/class ids,
//! partition and connection keys). std's SipHash resists hash flooding but was a large
//! share of analyze-jfr's cost (docs/perf.md); these keys are small integers and
//! short names from one file, and every map here is bounded. The mix is the one rustc
//! uses for its own tables (FxHash); no crate of it is in the build's registry, so it is
//! written out here (a dozen lines).

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A `HashMap` with [`FxHasher`]. Iteration order is as unspecified as std's: nothing
/// reported may depend on it (std's is already random per process).
pub type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<FxHasher>>;

/// Multiply-rotate word hashing (FxHash).
#[derive(Default, Clone, Copy)]
pub struct FxHasher {
    hash: u64,
}

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl FxHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(SEED);
    }
}

impl Hasher for FxHasher {
    #[inline]
    fn write(&mut self, mut bytes: &[u8]) {
        while bytes.len() >= 8 {
            self.add(u64::from_le_bytes(bytes[..8].try_into().expect("8 bytes")));
            bytes = &bytes[8..];
        }
        if bytes.len() >= 4 {
            self.add(u32::from_le_bytes(bytes[..4].try_into().expect("4 bytes")) as u64);
            bytes = &bytes[4..];
        }
        for &b in bytes {
            self.add(b as u64);
        }
    }
    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.add(i as u64);
    }
    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.add(i as u64);
    }
    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }
    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }
    #[inline]
    fn write_i64(&mut self, i: i64) {
        self.add(i as u64);
    }
    #[inline]
    fn finish(&self) -> u64 {
        self.hash
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_keys_hash_equal_and_near_keys_differ() {
        let h = |b: &[u8]| {
            let mut x = FxHasher::default();
            x.write(b);
            x.finish()
        };
        assert_eq!(h(b"topic\0bench"), h(b"topic\0bench"));
        assert_ne!(h(b"topic\0bench1"), h(b"topic\0bench2"));
        let mut m: FastMap<i64, u32> = FastMap::default();
        for i in 0..10_000 {
            m.insert(i * 7, i as u32);
        }
        assert_eq!(m.len(), 10_000);
        assert_eq!(m[&(70 * 7)], 70);
    }
}
