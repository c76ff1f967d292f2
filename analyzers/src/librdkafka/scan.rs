//! A tiny forward cursor over bytes: the parsing primitives for librdkafka's
//! printf-shaped message bodies. Nothing here allocates.

/// A position in a byte slice that only moves forward on success.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Cur<'a> {
    pub s: &'a [u8],
    pub i: usize,
}

impl<'a> Cur<'a> {
    #[inline]
    pub fn new(s: &'a [u8], i: usize) -> Self {
        Cur { s, i }
    }

    #[inline]
    pub fn rest(&self) -> &'a [u8] {
        &self.s[self.i.min(self.s.len())..]
    }

    #[inline]
    pub fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    /// Consume `lit` if the input continues with it.
    #[inline]
    pub fn lit(&mut self, lit: &[u8]) -> Option<()> {
        if self.rest().starts_with(lit) {
            self.i += lit.len();
            Some(())
        } else {
            None
        }
    }

    /// Consume `lit` when present; never fails.
    #[inline]
    pub fn opt(&mut self, lit: &[u8]) -> bool {
        self.lit(lit).is_some()
    }

    /// An unsigned decimal (at most 19 digits, so it cannot overflow). Always inlined:
    /// the body parsers call it for every number, and the call cost as much as the
    /// few digits.
    #[inline(always)]
    pub fn uint(&mut self) -> Option<u64> {
        let rest = self.rest();
        let mut v: u64 = 0;
        let mut n = 0;
        while n < rest.len() && rest[n].is_ascii_digit() {
            if n == 19 {
                return None;
            }
            v = v * 10 + (rest[n] - b'0') as u64;
            n += 1;
        }
        if n == 0 {
            return None;
        }
        self.i += n;
        Some(v)
    }

    /// A signed decimal.
    #[inline]
    pub fn int(&mut self) -> Option<i64> {
        let save = self.i;
        let neg = self.opt(b"-");
        match self.uint() {
            Some(v) if v <= i64::MAX as u64 => Some(if neg { -(v as i64) } else { v as i64 }),
            _ => {
                self.i = save;
                None
            }
        }
    }

    /// A CorrId: librdkafka prints an `int32_t`.
    #[inline]
    pub fn i32(&mut self) -> Option<i32> {
        let save = self.i;
        match self.int().and_then(|v| i32::try_from(v).ok()) {
            Some(v) => Some(v),
            None => {
                self.i = save;
                None
            }
        }
    }

    #[inline]
    pub fn u32(&mut self) -> Option<u32> {
        let save = self.i;
        match self.uint().and_then(|v| u32::try_from(v).ok()) {
            Some(v) => Some(v),
            None => {
                self.i = save;
                None
            }
        }
    }

    /// A decimal with optional fraction, as `%.2f` prints it.
    #[inline]
    pub fn float(&mut self) -> Option<f64> {
        let save = self.i;
        let whole = self.uint()?;
        let mut v = whole as f64;
        if self.opt(b".") {
            let rest = self.rest();
            let n = rest.iter().take_while(|b| b.is_ascii_digit()).count();
            if n == 0 {
                self.i = save;
                return None;
            }
            let mut scale = 0.1;
            for &b in &rest[..n.min(12)] {
                v += (b - b'0') as f64 * scale;
                scale /= 10.0;
            }
            self.i += n;
        }
        Some(v)
    }

    /// The longest run of bytes for which `pred` holds (possibly empty).
    #[inline]
    pub fn take_while(&mut self, pred: impl Fn(u8) -> bool) -> &'a [u8] {
        let rest = self.rest();
        let mut n = 0;
        while n < rest.len() && pred(rest[n]) {
            n += 1;
        }
        self.i += n;
        &rest[..n]
    }

    /// [`take_while`](Self::take_while)`(is_topic_byte)`, 16 bytes a step (SSE2) where
    /// it can: topic names run to 50 bytes and more, and a byte loop over them was a
    /// real share of a `debug=fetch` log's cost (docs/perf.md).
    #[inline]
    pub fn take_topic(&mut self) -> &'a [u8] {
        let rest = self.rest();
        let mut n = 0;
        while let Some(chunk) = rest.get(n..n + 16) {
            let ok = topic_run16(chunk.try_into().expect("16 bytes"));
            n += ok;
            if ok < 16 {
                self.i += n;
                return &rest[..n];
            }
        }
        while n < rest.len() && is_topic_byte(rest[n]) {
            n += 1;
        }
        self.i += n;
        &rest[..n]
    }

    /// Bytes up to (not including) `lit`, searching at most `limit` bytes ahead;
    /// the cursor moves past `lit`.
    #[inline]
    pub fn until(&mut self, lit: &[u8], limit: usize) -> Option<&'a [u8]> {
        let rest = self.rest();
        let window = &rest[..rest.len().min(limit + lit.len())];
        // (`memmem::find` builds a searcher on every call: more than these few bytes.)
        let at = crate::engine::bytes_eq::find_bytes(window, lit)?;
        self.i += at + lit.len();
        Some(&rest[..at])
    }
}

/// Byte classes as one table lookup each: these tests run on every byte of every
/// topic and ApiKey name (issue 19's profile: a third of a parse went to them).
const TOPIC: u8 = 1;
const API: u8 = 2;
const CLASSES: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        if c.is_ascii_alphanumeric() {
            t[b] = TOPIC | API;
        }
        if c == b'.' || c == b'_' {
            t[b] |= TOPIC;
        }
        if c == b'-' {
            t[b] |= TOPIC | API;
        }
        if c == b'?' {
            t[b] |= API;
        }
        b += 1;
    }
    t
};

/// Kafka's legal topic characters (`[a-zA-Z0-9._-]`).
#[inline]
pub(crate) fn is_topic_byte(b: u8) -> bool {
    CLASSES[b as usize] & TOPIC != 0
}

/// How many of the 16 bytes, from the first, are topic bytes ([`is_topic_byte`]).
#[inline]
fn topic_run16(b: &[u8; 16]) -> usize {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::*;
        // SAFETY: SSE2 is part of every x86_64 CPU; the load reads exactly 16 bytes.
        unsafe {
            let v = _mm_loadu_si128(b.as_ptr().cast());
            // x <= k (unsigned) as min(x, k) == x.
            let le = |x: __m128i, k: i8| _mm_cmpeq_epi8(_mm_min_epu8(x, _mm_set1_epi8(k)), x);
            let letter = le(
                _mm_sub_epi8(
                    _mm_or_si128(v, _mm_set1_epi8(0x20)),
                    _mm_set1_epi8(b'a' as i8),
                ),
                25,
            );
            let digit = le(_mm_sub_epi8(v, _mm_set1_epi8(b'0' as i8)), 9);
            let punct = _mm_or_si128(
                _mm_or_si128(
                    _mm_cmpeq_epi8(v, _mm_set1_epi8(b'.' as i8)),
                    _mm_cmpeq_epi8(v, _mm_set1_epi8(b'_' as i8)),
                ),
                _mm_cmpeq_epi8(v, _mm_set1_epi8(b'-' as i8)),
            );
            let ok = _mm_movemask_epi8(_mm_or_si128(_mm_or_si128(letter, digit), punct)) as u32;
            (!ok).trailing_zeros().min(16) as usize
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        b.iter().take_while(|&&c| is_topic_byte(c)).count()
    }
}

/// librdkafka's ApiKey names: letters, plus `Unknown-<n>?` for keys it does not know.
#[inline]
pub(crate) fn is_api_byte(b: u8) -> bool {
    CLASSES[b as usize] & API != 0
}

/// Bytes as `&str`, `""` when they are not UTF-8 (mostly called on runs already
/// checked to be ASCII, which need no second check).
#[inline]
pub(crate) fn ascii(b: &[u8]) -> &str {
    if b.is_ascii() {
        // SAFETY: ASCII bytes are valid UTF-8.
        unsafe { std::str::from_utf8_unchecked(b) }
    } else {
        std::str::from_utf8(b).unwrap_or("")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sixteen_bytes_at_once_agree_with_the_table_on_every_byte_and_place() {
        for b in 0..=255u8 {
            for at in 0..16 {
                let mut chunk = [b'a'; 16];
                chunk[at] = b;
                let want = if is_topic_byte(b) { 16 } else { at };
                assert_eq!(topic_run16(&chunk), want, "byte {b} at {at}");
            }
        }
        // Pseudo-random chunks of topic bytes with a few others among them.
        let mut x: u64 = 42;
        for _ in 0..20_000 {
            let mut chunk = [0u8; 16];
            for c in chunk.iter_mut() {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let r = (x >> 33) as u8;
                *c = if r % 7 == 0 {
                    r
                } else {
                    b"az.Z_9-0"[(r % 8) as usize]
                };
            }
            let want = chunk.iter().take_while(|&&c| is_topic_byte(c)).count();
            assert_eq!(topic_run16(&chunk), want, "{chunk:?}");
        }
    }

    #[test]
    fn take_topic_takes_what_take_while_takes() {
        let long = "kgap.probe-fetch-backoff.1796021755980.15832.0";
        for text in [
            String::new(),
            "t [0]".to_string(),
            format!("{long} [3]: x"),
            format!("{long}{long}"),
            format!("{}é [1]", &long[..31]),
            "a".repeat(16),
            "a".repeat(17) + " ",
        ] {
            for start in [0, 1, 5] {
                let b = text.as_bytes();
                if start > b.len() {
                    continue;
                }
                let (mut x, mut y) = (Cur::new(b, start), Cur::new(b, start));
                assert_eq!(x.take_topic(), y.take_while(is_topic_byte), "{text:?}");
                assert_eq!(x.i, y.i);
            }
        }
    }
}
