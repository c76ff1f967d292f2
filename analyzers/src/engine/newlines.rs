//! Where a block's newlines are, found in one pass over the block.
//!
//! The block front end used to look for each line's end with its own `memchr` call: the
//! call through memchr's dispatch, its set-up, and a vector loop that stops after a few
//! steps, a real share of analyze-protocol-log's cost (issue 19). One pass compares 64
//! bytes a step and turns the matches into positions with a bit scan, far cheaper a line
//! (docs/perf.md).

/// Push the index of every `\n` in `buf` onto `out`, in order. `buf` must be shorter than
/// 4 GiB (a block's buffer is).
pub(crate) fn newline_positions(buf: &[u8], out: &mut Vec<u32>) {
    debug_assert!(buf.len() <= u32::MAX as usize);
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2, checked just above.
            unsafe { avx2::positions(buf, out) };
            return;
        }
    }
    portable(buf, out, 0);
}

/// The positions of `\n` in `buf`, counted from `base`, through memchr (the tail of a
/// block, and CPUs without AVX2).
fn portable(buf: &[u8], out: &mut Vec<u32>, base: usize) {
    for i in memchr::memchr_iter(b'\n', buf) {
        out.push((base + i) as u32);
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::*;

    /// 64 bytes a step: two compares, two masks joined into one 64-bit word, whose set
    /// bits are the newlines.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn positions(buf: &[u8], out: &mut Vec<u32>) {
        let nl = _mm256_set1_epi8(b'\n' as i8);
        let mut i = 0;
        while i + 64 <= buf.len() {
            // SAFETY: `i + 64 <= buf.len()`: both loads lie inside `buf` (unaligned loads).
            let (a, b) = unsafe {
                let p = buf.as_ptr().add(i);
                (
                    _mm256_loadu_si256(p as *const __m256i),
                    _mm256_loadu_si256(p.add(32) as *const __m256i),
                )
            };
            let lo = _mm256_movemask_epi8(_mm256_cmpeq_epi8(a, nl)) as u32 as u64;
            let hi = _mm256_movemask_epi8(_mm256_cmpeq_epi8(b, nl)) as u32 as u64;
            let mut bits = lo | (hi << 32);
            while bits != 0 {
                out.push((i + bits.trailing_zeros() as usize) as u32);
                bits &= bits - 1;
            }
            i += 64;
        }
        super::portable(&buf[i..], out, i);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reference(buf: &[u8]) -> Vec<u32> {
        buf.iter()
            .enumerate()
            .filter(|(_, &b)| b == b'\n')
            .map(|(i, _)| i as u32)
            .collect()
    }

    #[test]
    fn every_newline_is_found_at_every_length_and_place() {
        // Lengths around the 64-byte step, newlines at the edges of a step, runs of them,
        // and bytes that differ from `\n` by one bit.
        let mut x: u32 = 12345;
        for len in (0..200).chain([1000, 4096 + 63]) {
            for density in [0, 1, 5, 50] {
                let buf: Vec<u8> = (0..len)
                    .map(|_| {
                        x ^= x << 13;
                        x ^= x >> 17;
                        x ^= x << 5;
                        if (x % 100) < density {
                            b'\n'
                        } else {
                            [b'a', 0x0b, 0x8a, b'\r', 0][(x % 5) as usize]
                        }
                    })
                    .collect();
                let mut got = vec![7]; // what was there stays
                newline_positions(&buf, &mut got);
                let mut want = vec![7];
                want.extend(reference(&buf));
                assert_eq!(got, want, "len {len} density {density}");
                let mut got = Vec::new();
                portable(&buf, &mut got, 0);
                assert_eq!(got, reference(&buf), "portable, len {len}");
            }
        }
        let all = vec![b'\n'; 130];
        let mut got = Vec::new();
        newline_positions(&all, &mut got);
        assert_eq!(got, reference(&all));
    }
}
