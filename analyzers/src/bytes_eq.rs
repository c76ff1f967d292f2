//! Byte-string equality for short strings, inline.
//!
//! On this project's hot paths the strings compared are short (an address, a host name, a
//! librdkafka line's repeated head), and `perf record` put a large share of the time in
//! libc's `memcmp` called for them (28 % of a socket recording's in analyze-jfr; 11-18 % of
//! analyze-protocol-log's), while callgrind counted few instructions there: the call and its
//! set-up, not the compare. These compare eight bytes a step in the caller's code.

/// `a == b`.
#[inline]
pub(crate) fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && same_prefix(a, b)
}

/// `hay.starts_with(prefix)`.
#[inline]
pub(crate) fn starts_with_bytes(hay: &[u8], prefix: &[u8]) -> bool {
    hay.len() >= prefix.len() && same_prefix(&hay[..prefix.len()], prefix)
}

/// `a == b` for slices of one length.
#[inline]
fn same_prefix(a: &[u8], b: &[u8]) -> bool {
    debug_assert_eq!(a.len(), b.len());
    let (mut x, mut y) = (a, b);
    while let (Some((p, xs)), Some((q, ys))) =
        (x.split_first_chunk::<8>(), y.split_first_chunk::<8>())
    {
        if u64::from_ne_bytes(*p) != u64::from_ne_bytes(*q) {
            return false;
        }
        (x, y) = (xs, ys);
    }
    // Under 8 bytes left: the differences OR-folded, so no loop the compiler turns back
    // into a `memcmp` call.
    x.iter().zip(y).fold(0u8, |d, (p, q)| d | (p ^ q)) == 0
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
            }
        }
    }
}
