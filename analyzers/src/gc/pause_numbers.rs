//! The pause reader's numbers ([`super::pause_line`]): digits, decimals, sizes, heap
//! changes and time decorations read straight from a line's bytes, each exactly as the
//! general path (`unified`'s `str::parse`-based readers, [`fast_decimal`]) reads them, for
//! the forms it takes; `None` for any other, and the caller reads the text the general way.

use super::event::{fast_decimal, HeapChange, POW10};

/// Digits at `b[i..]` (1 to 15: `str::parse` gives the same `f64`, exactly), and where
/// they end.
#[inline(always)]
pub(super) fn integer_at(b: &[u8], i: usize) -> Option<(f64, usize)> {
    let t = b.get(i..)?;
    let n = t.iter().take(16).take_while(|c| c.is_ascii_digit()).count();
    if n == 0 || n > 15 {
        return None;
    }
    let m = t[..n]
        .iter()
        .fold(0u64, |m, &c| m * 10 + u64::from(c - b'0'));
    Some((m as f64, i + n))
}

/// The run of ASCII digits at the start of `t`, as an integer with its length, for a run
/// of at most 16 digits (`None`: longer); the value is exact for at most 15. Eight bytes a
/// step where eight are there ([`digits8`]), else a byte at a time: a dense log's line
/// holds many digits, and a byte loop over them was a real share of a line (docs/perf.md).
/// Runs of up to three digits (heap sizes in `M`, a pause's milliseconds and their
/// fraction: most numbers of a pause line) are read byte by byte first, cheaper than
/// the eight-byte step's fixed cost.
#[inline(always)]
pub(super) fn digit_run(t: &[u8]) -> Option<(u64, usize)> {
    if let [a, b, c, d, ..] = *t {
        let (a, b, c, d) = (
            a.wrapping_sub(b'0'),
            b.wrapping_sub(b'0'),
            c.wrapping_sub(b'0'),
            d.wrapping_sub(b'0'),
        );
        if a > 9 {
            return Some((0, 0));
        }
        if b > 9 {
            return Some((u64::from(a), 1));
        }
        if c > 9 {
            return Some((u64::from(a) * 10 + u64::from(b), 2));
        }
        if d > 9 {
            return Some((u64::from(a) * 100 + u64::from(b) * 10 + u64::from(c), 3));
        }
    }
    let (mut m, mut n) = (0u64, 0usize);
    while let Some(chunk) = t.get(n..n + 8) {
        let (v, k) = digits8(chunk.try_into().expect("eight bytes"));
        m = m * POW10_U64[k] + v;
        n += k;
        if k < 8 {
            return Some((m, n));
        }
        if n > 8 {
            // Sixteen digits, and maybe more: longer than any number taken here.
            return None;
        }
    }
    while n < t.len() && t[n].is_ascii_digit() {
        if n >= 16 {
            return None;
        }
        m = m * 10 + u64::from(t[n] - b'0');
        n += 1;
    }
    Some((m, n))
}

/// Powers of ten as integers, `10^0` to `10^8`.
const POW10_U64: [u64; 9] = [
    1,
    10,
    100,
    1_000,
    10_000,
    100_000,
    1_000_000,
    10_000_000,
    100_000_000,
];

/// How many of eight bytes are leading ASCII digits (0 to 8), and the bytes less `'0'`.
#[inline(always)]
fn leading_digits8(bytes: [u8; 8]) -> (usize, u64) {
    let w = u64::from_le_bytes(bytes);
    // Each byte less `'0'`: a digit is 0..=9 and stays under 0x80 with 0x76 added; a byte
    // below `'0'` wraps to 0x80 or more, one above `'9'` reaches 0x80 with 0x76 added.
    // A borrow or carry only runs toward later bytes, past the first non-digit.
    let x = w.wrapping_sub(0x3030_3030_3030_3030);
    let non_digit = (x | x.wrapping_add(0x7676_7676_7676_7676)) & 0x8080_8080_8080_8080;
    ((non_digit.trailing_zeros() / 8) as usize, x)
}

/// A `[…ms]` decoration at `b[i..]` (just after its `[`) of 13 to 15 digits, the first
/// not `0`, without a fraction: at least 10^12 ms, so [`quick_time`] classifies it as
/// epoch milliseconds (over 10^11); where the next decoration starts. Its digits are
/// counted, not combined.
#[inline(always)]
pub(super) fn epoch_ms(b: &[u8], i: usize) -> Option<usize> {
    let t = b.get(i..i + 16)?;
    if t[0] == b'0' {
        return None;
    }
    let (n1, _) = leading_digits8(t[..8].try_into().expect("eight bytes"));
    let (n2, _) = leading_digits8(t[8..].try_into().expect("eight bytes"));
    if n1 != 8 || !(5..=7).contains(&n2) {
        return None;
    }
    let e = i + 8 + n2;
    (b.get(e..e + 3)? == b"ms]").then_some(e + 3)
}

/// The leading ASCII digits of eight bytes (the first byte the most significant digit):
/// their value and how many (0 to 8), with no branch per byte.
#[inline(always)]
fn digits8(bytes: [u8; 8]) -> (u64, usize) {
    let (n, x) = leading_digits8(bytes);
    if n == 0 {
        return (0, 0);
    }
    // The n digits to the top bytes (zeros before them are leading zeros), then pairs,
    // quads and the eight combined.
    let v = x << (64 - 8 * n as u32);
    let v = (v & 0x0F0F_0F0F_0F0F_0F0F).wrapping_mul(2561) >> 8;
    let v = (v & 0x00FF_00FF_00FF_00FF).wrapping_mul(6_553_601) >> 16;
    let v = (v & 0x0000_FFFF_0000_FFFF).wrapping_mul(42_949_672_960_001) >> 32;
    (v, n)
}

/// A decimal `D[.D]` (or `,`) at `b[i..]` as [`fast_decimal`] reads it (at most 15
/// digits, one before the separator at least, one after it), and where it ends; `None`
/// for any other form (the caller then reads the text the general way).
#[inline(always)]
fn decimal_at(b: &[u8], i: usize) -> Option<(f64, usize)> {
    let t = b.get(i..)?;
    let (m, int_digits) = digit_run(t)?;
    if int_digits == 0 || int_digits > 15 {
        return None;
    }
    let j = int_digits;
    if j + 1 < t.len() && matches!(t[j], b'.' | b',') && t[j + 1].is_ascii_digit() {
        let (f, k) = digit_run(&t[j + 1..])?;
        if int_digits + k > 15 {
            return None;
        }
        let m = m * POW10_U64[k.min(8)] * if k > 8 { POW10_U64[k - 8] } else { 1 } + f;
        // Through `i64` (at most 15 digits: exact either way): one instruction where
        // `u64` to `f64` is a branch and a fix-up on this target (docs/perf.md).
        return Some((m as i64 as f64 / POW10[k], i + j + 1 + k));
    }
    // `m / 10^0`: the same value as the division by one.
    Some((m as i64 as f64, i + j))
}

/// A `[…s]` or `[…ms]` decoration's time at `b[i..]` (just after its `[`), as
/// [`numeric_time`] reads it, and where the next decoration starts.
#[inline(always)]
pub(super) fn quick_time(b: &[u8], i: usize) -> Option<((f64, bool), usize)> {
    let (v, i) = decimal_at(b, i)?;
    match b.get(i..i + 3)? {
        [b's', b']', _] => Some(((v, false), i + 2)),
        [b'm', b's', b']'] => Some(((v / 1e3, v > 1e11), i + 3)),
        _ => None,
    }
}

/// A size at `b[i..]` as `size` reads it (`24M`, `1024.0K`, `0B`, unit-less bytes), and
/// where it ends.
#[inline(always)]
fn size_at(b: &[u8], i: usize) -> Option<(f64, usize)> {
    let (v, i) = decimal_at(b, i)?;
    let mult = match b.get(i) {
        Some(b'B') => 1.0,
        Some(b'K' | b'k') => 1024.0,
        Some(b'M') => 1024.0 * 1024.0,
        Some(b'G') => 1024.0 * 1024.0 * 1024.0,
        Some(b'T') => 1024f64.powi(4),
        _ => return Some((v, i)),
    };
    Some((v * mult, i + 1))
}

/// ` A->B(C) Dms` exactly, from `b[i..]` to `m_end`: the heap change and the duration.
#[inline(always)]
pub(super) fn heap_and_ms(b: &[u8], i: usize, m_end: usize) -> Option<(HeapChange, f64)> {
    let (heap, ms, i) = heap_and_duration(b, i)?;
    if i + 2 != m_end || &b[i..m_end] != b"ms" {
        return None;
    }
    Some((heap, ms))
}

/// ` A->B(C) Dms` from `b[i..]`, then the line's end (`\n` or `\r\n`): the heap change, the
/// duration, and where `ms` ends. What [`heap_and_ms`] reads of the line (`\r` trimmed)
/// when its `m_end` is that end.
#[inline(always)]
pub(super) fn heap_and_ms_to_line_end(b: &[u8], i: usize) -> Option<(HeapChange, f64, usize)> {
    let (heap, ms, i) = heap_and_duration(b, i)?;
    match b.get(i..i + 3)? {
        [b'm', b's', b'\n'] => Some((heap, ms, i + 2)),
        [b'm', b's', b'\r'] if b.get(i + 3) == Some(&b'\n') => Some((heap, ms, i + 2)),
        _ => None,
    }
}

/// ` A->B(C) D` from `b[i..]`: the heap change, the number after it, and where it ends.
#[inline(always)]
fn heap_and_duration(b: &[u8], i: usize) -> Option<(HeapChange, f64, usize)> {
    let (before, i) = size_at(b, i)?;
    if b.get(i..i + 2)? != b"->" {
        return None;
    }
    let (after, i) = size_at(b, i + 2)?;
    if b.get(i) != Some(&b'(') {
        return None;
    }
    let (capacity, i) = size_at(b, i + 1)?;
    if b.get(i..i + 2)? != b") " {
        return None;
    }
    let (ms, i) = decimal_at(b, i + 2)?;
    let heap = HeapChange {
        before,
        after,
        capacity: Some(capacity),
        after_pct_of_max: None,
    };
    Some((heap, ms, i))
}

/// A numeric time decoration as `unified::numeric_time` reads it (`…s`, `…ms`, `…ns`),
/// for the forms the exact fast decimal takes; `None` gives the line up.
pub(super) fn numeric_time(t: &[u8]) -> Option<(f64, bool)> {
    if let Some(n) = t.strip_suffix(b"ns") {
        let v = fast_decimal(n)?;
        // The general path parses this form with `str::parse`: integers only here.
        if n.contains(&b'.') || n.contains(&b',') {
            return None;
        }
        Some((v / 1e9, v > 1e17))
    } else if let Some(n) = t.strip_suffix(b"ms") {
        let v = fast_decimal(n)?;
        Some((v / 1e3, v > 1e11))
    } else {
        let v = fast_decimal(t.strip_suffix(b"s")?)?;
        Some((v, false))
    }
}

/// `A->B(C)`, as `parse_heap_change` reads it, for sizes the exact fast decimal takes.
pub(super) fn heap_change(tok: &[u8]) -> Option<HeapChange> {
    let arrow = tok.windows(2).position(|w| w == b"->")?;
    let (left, right) = (&tok[..arrow], &tok[arrow + 2..]);
    if left.contains(&b'(') {
        return None;
    }
    let paren = right.iter().position(|&c| c == b'(')?;
    let capacity = right[paren + 1..].strip_suffix(b")")?;
    Some(HeapChange {
        before: size(left)?,
        after: size(&right[..paren])?,
        capacity: Some(size(capacity)?),
        after_pct_of_max: None,
    })
}

/// A JVM size as `parse_size` reads it (`1913M`, `1024.0K`, `0B`, unit-less bytes).
pub(super) fn size(s: &[u8]) -> Option<f64> {
    let (num, mult) = match *s.last()? {
        b'B' => (&s[..s.len() - 1], 1.0),
        b'K' | b'k' => (&s[..s.len() - 1], 1024.0),
        b'M' => (&s[..s.len() - 1], 1024.0 * 1024.0),
        b'G' => (&s[..s.len() - 1], 1024.0 * 1024.0 * 1024.0),
        b'T' => (&s[..s.len() - 1], 1024f64.powi(4)),
        _ => (s, 1.0),
    };
    Some(fast_decimal(num)? * mult)
}

/// `b.is_ascii()` sixteen bytes a step with SSE2, the last sixteen overlapping (the
/// slice method is a byte loop here, over the whole line; eight bytes a step in `u64`s
/// cost more too: docs/perf.md). Elsewhere, and for short lines, the slice method.
pub(super) fn is_ascii(b: &[u8]) -> bool {
    let n = b.len();
    #[cfg(target_arch = "x86_64")]
    if n >= 16 {
        use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128};
        // SAFETY: SSE2 is part of x86_64; every load reads 16 bytes inside `b`
        // (`i + 16 <= n`, and `n - 16` with `n >= 16`), unaligned loads.
        unsafe {
            let load = |i: usize| _mm_loadu_si128(b.as_ptr().add(i) as *const __m128i);
            let mut any = load(n - 16);
            let mut i = 0;
            while i + 16 <= n {
                any = _mm_or_si128(any, load(i));
                i += 16;
            }
            return _mm_movemask_epi8(any) == 0;
        }
    }
    b.is_ascii()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `decimal_at` as it was before its digits were read eight at a time: a byte loop.
    fn decimal_at_bytewise(b: &[u8], i: usize) -> Option<(f64, usize)> {
        let t = b.get(i..)?;
        let mut j = 0;
        let mut m = 0u64;
        while j < t.len() && t[j].is_ascii_digit() {
            m = m.wrapping_mul(10).wrapping_add(u64::from(t[j] - b'0'));
            j += 1;
        }
        let int_digits = j;
        if int_digits == 0 || int_digits > 15 {
            return None;
        }
        if j + 1 < t.len() && matches!(t[j], b'.' | b',') && t[j + 1].is_ascii_digit() {
            j += 1;
            let frac = j;
            while j < t.len() && t[j].is_ascii_digit() {
                m = m.wrapping_mul(10).wrapping_add(u64::from(t[j] - b'0'));
                j += 1;
            }
            let k = j - frac;
            if int_digits + k > 15 {
                return None;
            }
            return Some((m as f64 / POW10[k], i + j));
        }
        Some((m as f64, i + j))
    }

    /// Every run length 0 to 20 before and after a separator, each neighbouring byte kind
    /// (the digit check's edges `/`, `:`, a high byte), at each offset: the same value and
    /// end as the byte loop.
    #[test]
    fn digits_eight_at_a_time_read_what_the_byte_loop_read() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut digit = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            b'0' + (x % 10) as u8
        };
        let mut cases = 0;
        for int in 0..=20 {
            for frac in [
                None,
                Some(0),
                Some(1),
                Some(3),
                Some(7),
                Some(8),
                Some(9),
                Some(16),
            ] {
                for sep in [b'.', b','] {
                    for after in [&b""[..], b"/", b":", b"ms]", b"M->", &[0xC3, 0xA9][..]] {
                        let mut b: Vec<u8> = b"[x ".to_vec();
                        b.extend((0..int).map(|_| digit()));
                        if let Some(f) = frac {
                            b.push(sep);
                            b.extend((0..f).map(|_| digit()));
                        }
                        b.extend_from_slice(after);
                        for i in 0..b.len().min(6) {
                            assert_eq!(
                                decimal_at(&b, i),
                                decimal_at_bytewise(&b, i),
                                "{:?} at {i}",
                                String::from_utf8_lossy(&b)
                            );
                            cases += 1;
                        }
                    }
                }
            }
        }
        assert!(cases > 5000, "{cases}");
        for bytes in [
            &b"12345678"[..],
            b"00000000",
            b"99999999",
            b"1/345678",
            b"9:",
            b"x1234567",
        ]
        .iter()
        .map(|b| {
            let mut a = [0u8; 8];
            a[..b.len()].copy_from_slice(b);
            a
        }) {
            let n = bytes.iter().take_while(|c| c.is_ascii_digit()).count();
            let v = bytes[..n]
                .iter()
                .fold(0u64, |v, &c| v * 10 + u64::from(c - b'0'));
            assert_eq!(
                digits8(bytes),
                (v, n),
                "{:?}",
                String::from_utf8_lossy(&bytes)
            );
        }
    }

    /// Where `epoch_ms` takes a decoration, `quick_time` takes it the same way: epoch
    /// milliseconds, ending at the same place.
    #[test]
    fn epoch_stamps_are_what_quick_time_calls_epoch() {
        let mut taken = 0;
        for digits in ["1", "0", "9"] {
            for n in 1..=17 {
                for tail in ["ms]", "ms", "s]", ".5ms]", "ms][", "mss]", "]"] {
                    let token = format!("[{}{}{tail}", digits, "7".repeat(n - 1));
                    let b = token.as_bytes();
                    if let Some(next) = epoch_ms(b, 1) {
                        taken += 1;
                        let ((_, epoch), q_next) = quick_time(b, 1).expect("quick_time takes it");
                        assert!(epoch, "{token}");
                        assert_eq!(next, q_next, "{token}");
                    }
                }
            }
        }
        assert!(taken >= 6, "{taken}");
    }

    #[test]
    fn ascii_eight_bytes_at_a_time() {
        for n in 0..40 {
            let mut b = vec![b'a'; n];
            assert!(is_ascii(&b));
            for i in 0..n {
                b[i] = 0x80;
                assert!(!is_ascii(&b), "{n} {i}");
                b[i] = b'a';
            }
        }
    }
}
