//! Byte-string equality and byte search for short strings, inline.
//!
//! On this project's hot paths the strings compared are short (an address, a host name, a
//! librdkafka line's repeated head), and a large share of the time went to libc's `memcmp`
//! called for them, in its call and set-up rather than the compare (docs/perf.md). These
//! compare eight bytes a step in the caller's code.

/// `a == b`.
#[inline]
pub(crate) fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && same_prefix(a, b)
}

/// `a == b` for optional strings: both absent, or both there and equal.
#[inline]
pub(crate) fn same_opt_bytes(a: Option<&[u8]>, b: Option<&[u8]>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => same_bytes(a, b),
        (a, b) => a.is_none() && b.is_none(),
    }
}

/// `hay.starts_with(prefix)`.
#[inline]
pub(crate) fn starts_with_bytes(hay: &[u8], prefix: &[u8]) -> bool {
    hay.len() >= prefix.len() && same_prefix(&hay[..prefix.len()], prefix)
}

/// `a == b` for slices of one length: from 16 bytes on, 32 bytes a step with SSE2 on
/// x86_64 ([`same_sse2`]), sixteen elsewhere, the last step overlapping the one before it
/// (the memo's keys are lines of a few hundred bytes; eight-byte steps through
/// `split_first_chunk` cost more there: docs/perf.md).
#[inline]
fn same_prefix(a: &[u8], b: &[u8]) -> bool {
    debug_assert_eq!(a.len(), b.len());
    let n = a.len();
    let b = &b[..n];
    #[cfg(target_arch = "x86_64")]
    if n >= 16 {
        return same_sse2(a, b);
    }
    let word = |s: &[u8], i: usize| u64::from_ne_bytes(s[i..i + 8].try_into().expect("8 bytes"));
    let pair = |s: &[u8], i: usize| u128::from_ne_bytes(s[i..i + 16].try_into().expect("16 bytes"));
    if n >= 16 {
        let mut i = 0;
        while i + 16 <= n {
            if pair(a, i) != pair(b, i) {
                return false;
            }
            i += 16;
        }
        return i == n || pair(a, n - 16) == pair(b, n - 16);
    }
    if n >= 8 {
        return word(a, 0) == word(b, 0) && word(a, n - 8) == word(b, n - 8);
    }
    if n >= 4 {
        // A request type's name (`Produce`, `Fetch`): two overlapping four-byte words.
        let half = |s: &[u8], i: usize| u32::from_ne_bytes(s[i..i + 4].try_into().expect("4"));
        return half(a, 0) == half(b, 0) && half(a, n - 4) == half(b, n - 4);
    }
    // Under 4 bytes: the differences OR-folded, so no loop the compiler turns back into
    // a `memcmp` call.
    a.iter().zip(b).fold(0u8, |d, (p, q)| d | (p ^ q)) == 0
}

/// [`same_prefix`] for 16 bytes or more: 32 bytes a step, two byte-wise compares whose
/// masks are joined (the memo's keys are ~150 bytes: five steps and a last overlapping
/// one, where 128-bit integer compares cost more: docs/perf.md). SSE2 is part of every
/// x86_64 CPU.
#[cfg(target_arch = "x86_64")]
#[inline]
fn same_sse2(a: &[u8], b: &[u8]) -> bool {
    use std::arch::x86_64::{_mm_and_si128, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8};
    let n = a.len();
    debug_assert!(n >= 16 && b.len() == n);
    // SAFETY: SSE2 is in every x86_64 CPU (the intrinsics are `unsafe` for want of a
    // `#[target_feature]` here only), and every load is of 16 bytes at `i` with
    // `i + 16 <= n`, the length of both slices (unaligned loads).
    unsafe {
        let eq16 = |i: usize| {
            debug_assert!(i + 16 <= n);
            _mm_cmpeq_epi8(
                _mm_loadu_si128(a.as_ptr().add(i).cast()),
                _mm_loadu_si128(b.as_ptr().add(i).cast()),
            )
        };
        let mut i = 0;
        while i + 32 <= n {
            if _mm_movemask_epi8(_mm_and_si128(eq16(i), eq16(i + 16))) != 0xffff {
                return false;
            }
            i += 32;
        }
        if i + 16 <= n {
            if _mm_movemask_epi8(eq16(i)) != 0xffff {
                return false;
            }
            i += 16;
        }
        // The last bytes, in a step that overlaps the one before.
        i == n || _mm_movemask_epi8(eq16(n - 16)) == 0xffff
    }
}

/// First index of `c` in a short slice (a log line's field, a decoration, a GC id), eight
/// bytes a step, then byte by byte: memchr's set-up costs more than these few bytes, and a
/// byte loop more than eight a step (docs/perf.md). (Shared by the librdkafka head parser
/// and the GC pause-line reader.)
#[inline(always)]
pub(crate) fn find_byte(s: &[u8], c: u8) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    let mut i = 0;
    while let Some(chunk) = s.get(i..i + 8) {
        let x = u64::from_le_bytes(chunk.try_into().expect("8 bytes")) ^ (c as u64 * ONES);
        let zero = zero_bytes_from_below(x);
        if zero != 0 {
            return Some(i + zero.trailing_zeros() as usize / 8);
        }
        i += 8;
    }
    s[i..].iter().position(|&x| x == c).map(|p| i + p)
}

/// The high bit of every byte of `x` that is zero, and maybe of some bytes above the
/// lowest zero one (a borrow runs up from it): the lowest set bit is always exact.
#[inline(always)]
fn zero_bytes_from_below(x: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    x.wrapping_sub(ONES) & !x & (0x80 * ONES)
}

/// First index of either byte `a` or `b` in a short slice (the end of a free-text reason:
/// a quote or a backslash), eight bytes a step: the lowest set bit of the two masks
/// joined is the first place either byte is.
#[inline]
pub(crate) fn find_either(s: &[u8], a: u8, b: u8) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    let mut i = 0;
    while let Some(chunk) = s.get(i..i + 8) {
        let x = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
        let hit = zero_bytes_from_below(x ^ (a as u64 * ONES))
            | zero_bytes_from_below(x ^ (b as u64 * ONES));
        if hit != 0 {
            return Some(i + hit.trailing_zeros() as usize / 8);
        }
        i += 8;
    }
    s[i..].iter().position(|&x| x == a || x == b).map(|p| i + p)
}

/// Last index of `c` in a short slice (the `(` before a fetch decision's queue figures),
/// eight bytes a step from the end: `memrchr` is a call and a set-up for these few bytes.
/// (Where `c` may be far from the end, memrchr's 32-byte steps win: measure, docs/perf.md.)
#[inline]
pub(crate) fn rfind_byte(s: &[u8], c: u8) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const LOW7: u64 = 0x7f * ONES;
    let mut end = s.len();
    while end >= 8 {
        let x =
            u64::from_le_bytes(s[end - 8..end].try_into().expect("8 bytes")) ^ (c as u64 * ONES);
        // Exactly the zero bytes' high bits: adding within seven bits carries into no
        // other byte, so the highest set bit is the last place `c` is.
        let zero = !(((x & LOW7) + LOW7) | x | LOW7);
        if zero != 0 {
            return Some(end - 1 - zero.leading_zeros() as usize / 8);
        }
        end -= 8;
    }
    s[..end].iter().rposition(|&x| x == c)
}

/// Last index of `c` in a line, sixteen bytes a step from the end with SSE2 (a `FETCH`
/// line's last `]`, 50 to 130 bytes back): `memrchr`'s dispatch and set-up cost more
/// there than these steps (docs/perf.md). Elsewhere [`rfind_byte`].
#[inline]
pub(crate) fn rfind_byte16(s: &[u8], c: u8) -> Option<usize> {
    #[cfg(target_arch = "x86_64")]
    if s.len() >= 16 {
        use std::arch::x86_64::{
            __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_set1_epi8,
        };
        // SAFETY: SSE2 is part of x86_64; every load reads 16 bytes inside `s` (`end >=
        // 16`, and the last load at 0 with `s.len() >= 16`), unaligned loads.
        unsafe {
            let needle = _mm_set1_epi8(c as i8);
            let hits = |at: usize| {
                let v = _mm_loadu_si128(s.as_ptr().add(at) as *const __m128i);
                _mm_movemask_epi8(_mm_cmpeq_epi8(v, needle)) as u32
            };
            let mut end = s.len();
            while end >= 16 {
                let m = hits(end - 16);
                if m != 0 {
                    return Some(end - 1 - (m.leading_zeros() - 16) as usize);
                }
                end -= 16;
            }
            // The first `end` bytes (fewer than 16): the first sixteen, masked to them.
            let m = hits(0) & ((1u32 << end) - 1);
            return (m != 0).then(|| 31 - m.leading_zeros() as usize);
        }
    }
    rfind_byte(s, c)
}

/// First index of a non-empty `needle` in a short `hay`, eight places a step: a place is
/// looked at only when both of the needle's first two bytes are there (a `memchr` for the
/// first byte stopped at every space of a line for ` msgs, `).
#[inline]
pub(crate) fn find_bytes(hay: &[u8], needle: &[u8]) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    let &n0 = needle.first()?;
    let Some(&n1) = needle.get(1) else {
        return find_byte(hay, n0);
    };
    let mut i = 0;
    // Two loads, at `i` and `i + 1`: the second's byte k is the byte after the first's.
    while let (Some(x), Some(y)) = (hay.get(i..i + 8), hay.get(i + 1..i + 9)) {
        let x = u64::from_le_bytes(x.try_into().expect("8 bytes"));
        let y = u64::from_le_bytes(y.try_into().expect("8 bytes"));
        // Every true place is flagged in both masks (false ones are checked away).
        let mut m = zero_bytes_from_below(x ^ (n0 as u64 * ONES))
            & zero_bytes_from_below(y ^ (n1 as u64 * ONES));
        while m != 0 {
            let k = i + m.trailing_zeros() as usize / 8;
            if starts_with_bytes(&hay[k..], needle) {
                return Some(k);
            }
            m &= m - 1;
        }
        i += 8;
    }
    (i..hay.len()).find(|&k| starts_with_bytes(&hay[k..], needle))
}

/// The end of the line starting at `buf[from..]` (its `\n`, or `buf.len()`) and whether
/// the bytes before it are all ASCII, in one pass of sixteen bytes a step: a dense GC
/// log's line was a `memchr` call with its set-up and then an ASCII test over the same
/// bytes (docs/perf.md).
#[inline]
pub(crate) fn line_end_and_ascii(buf: &[u8], from: usize) -> (usize, bool) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2, checked just above.
        return unsafe { line_end_and_ascii_avx2(buf, from) };
    }
    line_end_and_ascii_sse2(buf, from)
}

/// [`line_end_and_ascii`] thirty-two bytes a step, then sixteen for the rest: a dense GC
/// log's ~100-byte line is four steps instead of seven.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn line_end_and_ascii_avx2(buf: &[u8], from: usize) -> (usize, bool) {
    use std::arch::x86_64::{
        __m256i, _mm256_cmpeq_epi8, _mm256_loadu_si256, _mm256_movemask_epi8, _mm256_set1_epi8,
    };
    let n = buf.len();
    let mut i = from;
    let mut high = 0u32;
    while i + 32 <= n {
        // SAFETY: AVX2 is enabled here; `i + 32 <= n`: the load lies inside `buf`.
        let (nl, hi) = unsafe {
            let v = _mm256_loadu_si256(buf.as_ptr().add(i) as *const __m256i);
            (
                _mm256_movemask_epi8(_mm256_cmpeq_epi8(v, _mm256_set1_epi8(b'\n' as i8))) as u32,
                _mm256_movemask_epi8(v) as u32,
            )
        };
        if nl != 0 {
            let k = nl.trailing_zeros();
            // Bits below the newline's: `(1 << k) - 1` (k < 32 here).
            high |= hi & ((1u32 << k) - 1);
            return (i + k as usize, high == 0);
        }
        high |= hi;
        i += 32;
    }
    let (end, ascii) = line_end_and_ascii_sse2(buf, i);
    (end, ascii && high == 0)
}

/// [`line_end_and_ascii`] sixteen bytes a step (SSE2: every x86-64).
#[inline]
fn line_end_and_ascii_sse2(buf: &[u8], from: usize) -> (usize, bool) {
    let n = buf.len();
    let mut i = from;
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{
            __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_set1_epi8,
        };
        let mut high = 0u32;
        while i + 16 <= n {
            // SAFETY: SSE2 is part of x86_64; `i + 16 <= n`: the load lies inside `buf`.
            let (nl, hi) = unsafe {
                let v = _mm_loadu_si128(buf.as_ptr().add(i) as *const __m128i);
                (
                    _mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(b'\n' as i8))) as u32,
                    _mm_movemask_epi8(v) as u32,
                )
            };
            if nl != 0 {
                let k = nl.trailing_zeros();
                high |= hi & ((1u32 << k) - 1);
                return (i + k as usize, high == 0);
            }
            high |= hi;
            i += 16;
        }
        if high != 0 {
            let end = buf[i..]
                .iter()
                .position(|&c| c == b'\n')
                .map_or(n, |p| i + p);
            return (end, false);
        }
    }
    let end = buf[i..]
        .iter()
        .position(|&c| c == b'\n')
        .map_or(n, |p| i + p);
    (end, buf[i..end].is_ascii())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_bytes_and_starts_with_bytes_are_the_slice_methods() {
        let words = [
            "",
            "a",
            "b",
            "127.0.0.1",
            "127.0.0.2",
            "10.0.0.1",
            "12345678",
            "12345679",
            "123456781",
            "broker-1.example.com",
            "broker-2.example.com",
            "rdkafka#producer-1| [thrd:k:9092/1]: k:9092/1: ",
            "rdkafka#producer-1| [thrd:k:9092/1]: k:9092/2: ",
        ];
        for a in words {
            for b in words {
                let (x, y) = (a.as_bytes(), b.as_bytes());
                assert_eq!(same_bytes(x, y), x == y, "{a:?} == {b:?}");
                assert_eq!(
                    starts_with_bytes(x, y),
                    x.starts_with(y),
                    "{a:?} starts with {b:?}"
                );
                for (p, q) in [(Some(x), Some(y)), (None, Some(y)), (Some(x), None)] {
                    assert_eq!(same_opt_bytes(p, q), p == q, "{p:?} == {q:?}");
                }
            }
        }
        assert!(same_opt_bytes(None, None));
    }

    #[test]
    fn a_difference_at_any_place_of_any_length_is_seen() {
        for n in 0..150 {
            let a: Vec<u8> = (0..n).map(|i| (i * 7 + 3) as u8).collect();
            assert!(same_bytes(&a, &a.clone()), "length {n}");
            for at in 0..n {
                let mut b = a.clone();
                b[at] ^= 0x40;
                assert!(!same_bytes(&a, &b), "length {n}, byte {at}");
                assert!(!starts_with_bytes(&b, &a), "length {n}, byte {at}");
                assert!(starts_with_bytes(&b, &a[..at]), "length {n}, prefix {at}");
            }
        }
    }

    #[test]
    fn position_finds_what_a_byte_loop_finds() {
        for len in 0..40 {
            for at in 0..=len {
                for other in [0u8, b'|' ^ 0x80, b'|' - 1, b'|' + 1, 0xff] {
                    let mut s = vec![other; len];
                    if at < len {
                        s[at] = b'|';
                    }
                    // A second one after the first.
                    if at + 3 < len {
                        s[at + 3] = b'|';
                    }
                    let want = s.iter().position(|&x| x == b'|');
                    assert_eq!(find_byte(&s, b'|'), want, "{s:?}");
                }
            }
        }
    }

    #[test]
    fn the_last_byte_found_sixteen_bytes_at_a_time() {
        // Every place of one or two `]` in lines of up to 80 bytes: each step from the
        // end, and the first bytes left under a step.
        for n in 0..80 {
            let mut b: Vec<u8> = (0..n).map(|i| b'a' + (i % 26) as u8).collect();
            assert_eq!(rfind_byte16(&b, b']'), None, "{n}");
            for i in 0..n {
                for j in i..n {
                    let (x, y) = (b[i], b[j]);
                    b[i] = b']';
                    b[j] = b']';
                    assert_eq!(rfind_byte16(&b, b']'), Some(j), "{n} {i} {j}");
                    b[i] = x;
                    b[j] = y;
                }
            }
        }
    }

    #[test]
    fn a_byte_found_eight_bytes_at_a_time() {
        for n in 0..40 {
            let mut b: Vec<u8> = (0..n).map(|i| b'a' + (i % 26) as u8).collect();
            assert_eq!(find_byte(&b, b']'), None, "{n}");
            for i in 0..n {
                for j in i..n {
                    let (x, y) = (b[i], b[j]);
                    b[i] = b']';
                    b[j] = b']';
                    assert_eq!(find_byte(&b, b']'), Some(i), "{n} {i} {j}");
                    // The byte before it one above or below: no false flag from a borrow.
                    if i > 0 {
                        let z = b[i - 1];
                        for near in [b'\\', b'^', 0, 0xff] {
                            b[i - 1] = near;
                            assert_eq!(find_byte(&b, b']'), Some(i), "{n} {i} {near}");
                        }
                        b[i - 1] = z;
                    }
                    b[i] = x;
                    b[j] = y;
                }
            }
        }
    }

    #[test]
    fn the_word_searches_find_what_the_slice_methods_find() {
        // Slices of every length around the eight-byte steps, the bytes looked for at
        // every place (twice, and next to near bytes that a borrow could misflag).
        let mut x: u64 = 7;
        let mut next = || {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 33) as u8
        };
        let alphabet = [
            b']', b'^', b'\\', b'"', b' ', b'm', b's', 0, 0xff, b'(', b'C',
        ];
        for len in 0..40 {
            for _ in 0..200 {
                let s: Vec<u8> = (0..len)
                    .map(|_| alphabet[next() as usize % alphabet.len()])
                    .collect();
                for c in [b']', b'(', b'C', 0, 0xff, b'x'] {
                    let want = s.iter().rposition(|&y| y == c);
                    assert_eq!(rfind_byte(&s, c), want, "{s:?} {c}");
                    assert_eq!(rfind_byte16(&s, c), want, "{s:?} {c}");
                }
                assert_eq!(
                    find_either(&s, b'"', b'\\'),
                    s.iter().position(|&y| y == b'"' || y == b'\\'),
                    "{s:?}"
                );
                for needle in [
                    &b" m"[..],
                    b"m",
                    b"ms",
                    b" ms",
                    b"\\\"",
                    b"]]",
                    b"\xff\x00",
                    b"^^^",
                ] {
                    let want = s.windows(needle.len()).position(|w| w == needle);
                    assert_eq!(find_bytes(&s, needle), want, "{s:?} {needle:?}");
                }
            }
        }
        assert_eq!(find_bytes(b"abc", b""), None);
        assert_eq!(find_bytes(b"abc", b"c"), Some(2));
    }

    #[test]
    fn line_end_and_ascii_are_memchr_and_the_ascii_test() {
        // Lines of every length around the 16- and 32-byte steps, a high byte and a
        // newline at each place, read from every start.
        for len in 0..80 {
            for hi in (0..len).map(Some).chain([None]) {
                for nl in (0..len).map(Some).chain([None]) {
                    let mut b = vec![b'a'; len];
                    if let Some(h) = hi {
                        b[h] = 0xC3;
                    }
                    if let Some(p) = nl {
                        b[p] = b'\n';
                    }
                    for from in 0..=len.min(40) {
                        let end = memchr::memchr(b'\n', &b[from..]).map_or(len, |p| from + p);
                        let want = (end, b[from..end].is_ascii());
                        assert_eq!(
                            line_end_and_ascii(&b, from),
                            want,
                            "{len} {hi:?} {nl:?} {from}"
                        );
                        assert_eq!(
                            line_end_and_ascii_sse2(&b, from),
                            want,
                            "sse2 {len} {hi:?} {nl:?} {from}"
                        );
                    }
                }
            }
        }
    }
}
