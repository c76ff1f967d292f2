//! A chunk's fixed header: the magic, the format version, sizes, times and flags,
//! and how its ticks become nanoseconds.

/// Size of a chunk header.
pub const HEADER_SIZE: usize = 68;
/// The magic bytes at the start of every chunk.
pub const MAGIC: &[u8; 4] = b"FLR\0";

/// A chunk's fixed header.
#[derive(Debug, Clone)]
pub struct ChunkHeader {
    pub major: u16,
    pub minor: u16,
    /// Chunk size including this header, as the writer last updated it.
    pub size: u64,
    pub constant_pool_offset: u64,
    pub metadata_offset: u64,
    /// Wall-clock start, nanoseconds since the epoch.
    pub start_nanos: i64,
    pub duration_nanos: i64,
    pub start_ticks: i64,
    pub ticks_per_second: i64,
    /// Byte 64: 0 once the chunk is complete; otherwise the writer is still on it
    /// (or died while on it).
    pub file_state: u8,
    /// Byte 67: bit 0 compressed integers, bit 1 final chunk.
    pub flags: u8,
}

impl ChunkHeader {
    /// Parse the 68 header bytes (checked for the magic by the caller).
    pub fn parse(b: &[u8; HEADER_SIZE]) -> ChunkHeader {
        let u64_at = |o: usize| u64::from_be_bytes(b[o..o + 8].try_into().expect("8 bytes"));
        ChunkHeader {
            major: u16::from_be_bytes([b[4], b[5]]),
            minor: u16::from_be_bytes([b[6], b[7]]),
            size: u64_at(8),
            constant_pool_offset: u64_at(16),
            metadata_offset: u64_at(24),
            start_nanos: u64_at(32) as i64,
            duration_nanos: u64_at(40) as i64,
            start_ticks: u64_at(48) as i64,
            ticks_per_second: u64_at(56) as i64,
            file_state: b[64],
            flags: b[67],
        }
    }

    /// Varint integers (JMC's rule: the features bit; all 2.x writers set it).
    pub fn compressed_ints(&self) -> bool {
        self.flags & 1 != 0
    }

    /// The chunk was closed properly.
    pub fn finished(&self) -> bool {
        self.file_state == 0
    }

    /// Ticks to nanoseconds since the epoch.
    pub fn ticks_to_nanos(&self, ticks: i64) -> i64 {
        if self.ticks_per_second <= 0 {
            return self.start_nanos;
        }
        let delta = ticks.wrapping_sub(self.start_ticks);
        self.start_nanos.saturating_add(self.scale(delta))
    }

    /// `ticks` × 10⁹ / ticks per second (> 0), clamped to i64: exact in i64 where the
    /// product fits (and trivially at HotSpot's 10⁹ ticks a second), in i128 otherwise.
    /// The i128 division showed in a socket recording's profile (docs/perf.md).
    fn scale(&self, ticks: i64) -> i64 {
        let tps = self.ticks_per_second;
        if tps == 1_000_000_000 {
            return ticks;
        }
        if let Some(p) = ticks.checked_mul(1_000_000_000) {
            return p / tps;
        }
        (ticks as i128 * 1_000_000_000 / tps as i128).clamp(i64::MIN as i128, i64::MAX as i128)
            as i64
    }

    /// Ticks (a duration) to nanoseconds.
    pub fn ticks_to_duration(&self, ticks: i64) -> i64 {
        if self.ticks_per_second <= 0 {
            return 0;
        }
        self.scale(ticks)
    }
}
