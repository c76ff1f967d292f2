//! What one GC log line (or one legacy record) says, independent of its format.

/// A heap occupancy change, in bytes. `capacity` is what the JVM printed in
/// parentheses (committed heap, or ZGC's percentage base).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct HeapChange {
    pub before: f64,
    pub after: f64,
    pub capacity: Option<f64>,
    /// ZGC prints `after` as a percentage of the maximum heap: exact, no guess needed.
    pub after_pct_of_max: Option<f64>,
}

/// The collectors this analyzer knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Collector {
    G1,
    Parallel,
    Serial,
    Cms,
    Zgc,
    ZgcGenerational,
    Shenandoah,
}

impl Collector {
    pub fn name(self) -> &'static str {
        match self {
            Collector::G1 => "G1",
            Collector::Parallel => "Parallel",
            Collector::Serial => "Serial",
            Collector::Cms => "CMS",
            Collector::Zgc => "ZGC",
            Collector::ZgcGenerational => "ZGC (generational)",
            Collector::Shenandoah => "Shenandoah",
        }
    }

    /// Collectors whose pauses are a young/old split (heap after *young* GC is
    /// the backlog's signature); for the others every cycle's heap-after counts.
    pub fn generational(self) -> bool {
        !matches!(self, Collector::Zgc | Collector::Shenandoah)
    }
}

/// How a pause relates to the heap's generations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PauseClass {
    /// Evacuates the young generation (G1 young and mixed, Parallel/Serial/CMS young).
    Young,
    /// Collects the whole heap with the application stopped.
    Full,
    /// Shenandoah's stop-the-world fallback when the concurrent cycle lost the race.
    Degenerated,
    /// A short phase of a concurrent cycle (remark, cleanup, ZGC/Shenandoah pauses).
    Other,
}

impl PauseClass {
    /// The point kind the chart colours it by (`series::Point::kind`).
    pub(crate) fn point_kind(self) -> u8 {
        match self {
            PauseClass::Young => 0,
            PauseClass::Full => 1,
            PauseClass::Other => 2,
            PauseClass::Degenerated => 3,
        }
    }
}

/// One event of interest. Borrowed strings point into the line being parsed.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Event<'a> {
    /// `Using G1`, or a collector recognised from its own vocabulary.
    Collector(Collector),
    /// The JVM's version string (`Version: 17.0.10+7-LTS (release)`, or JDK 8's header).
    Jdk(&'a str),
    /// The maximum heap, in bytes.
    MaxHeap(f64),
    /// G1's region size, in bytes.
    RegionSize(f64),
    /// A stop-the-world pause.
    Pause {
        /// `Pause Young (Normal)`, `Pause Full`, `Pause Remark`, …
        kind: &'a str,
        /// Sub-kind kept in the type's name (G1's `Normal`, `Concurrent Start`, `Mixed`…).
        subkind: Option<&'a str>,
        /// Why it ran (`G1 Evacuation Pause`, `Allocation Failure`, …).
        cause: Option<&'a str>,
        class: PauseClass,
        heap: Option<HeapChange>,
        ms: f64,
        /// JDK 21+ marks a failed evacuation on the pause itself; legacy G1 prints
        /// `(to-space exhausted)` in the record.
        evacuation_failure: bool,
    },
    /// The JVM ran out of memory: ZGC's `Out Of Memory (thread)`, or a
    /// `java.lang.OutOfMemoryError` written into a JDK 8 log.
    OutOfMemory,
    /// JDK 9–20's separate `To-space exhausted` line.
    ToSpaceExhausted,
    /// A whole concurrent collection (ZGC `Garbage Collection`, `Minor/Major Collection`;
    /// Shenandoah's `Concurrent cleanup`): heap after it, not a pause.
    Cycle { young: bool, heap: HeapChange },
    /// A thread stalled waiting for ZGC to free memory.
    AllocationStall { ms: f64 },
    /// ZGC's table of stalls per phase (`Allocation Stalls: 0 0 3 0`), summed.
    AllocationStallsCounted(u64),
    /// The concurrent collector could not keep up (Shenandoah `Cancelling GC:
    /// Allocation Failure`, G1 `Concurrent Mark Abort`, CMS `concurrent mode failure`).
    ConcurrentFailure(&'static str),
    /// Old generation before → after one GC, bytes (Parallel/Serial/CMS, or G1 regions
    /// converted with the region size).
    OldGen {
        before: f64,
        after: f64,
        /// The old generation's capacity when the line gives it (`a->b(c)`).
        capacity: Option<f64>,
    },
    /// G1 old regions before → after (converted later, when the region size is known).
    OldRegions { before: f64, after: f64 },
    /// G1 humongous regions after a GC.
    HumongousRegions { after: f64 },
    /// `new threshold 1 (max threshold 15)`: survivors overflowed, objects tenured early.
    Tenuring { threshold: u32, max: u32 },
}

/// A decimal number as the JVM printed it in any locale: `12.345`, or `12,345` when the
/// C locale's decimal separator is a comma (a JVM started with `LC_ALL=de_DE.UTF-8` or
/// `fr_FR`). HotSpot never groups thousands, so one comma between digits is the
/// separator.
pub(crate) fn parse_number(s: &str) -> Option<f64> {
    let b = s.as_bytes();
    if let Some(v) = fast_decimal(b) {
        return Some(v);
    }
    match memchr::memchr(b',', b) {
        None => s.parse().ok(),
        Some(i) => {
            let ok = i > 0
                && i + 1 < b.len()
                && b[i - 1].is_ascii_digit()
                && b[i + 1].is_ascii_digit()
                && !b[i + 1..].contains(&b',')
                && !b.contains(&b'.');
            if !ok || b.len() > 64 {
                return None;
            }
            let mut buf = [0u8; 64];
            buf[..b.len()].copy_from_slice(b);
            buf[i] = b'.';
            std::str::from_utf8(&buf[..b.len()]).ok()?.parse().ok()
        }
    }
}

/// Exact powers of ten (every one up to 1e22 is exactly representable).
pub(crate) const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// `123`, `12.345` or `12,345` with at most 15 digits, the hot path's numbers, without the
/// general parser: the digits as an integer (exact below 2^53) divided by an exact power
/// of ten is one correctly rounded operation, so the result is the one `str::parse`
/// gives. Anything else (exponents, signs, long numbers) is `None`: the caller falls back.
#[inline]
pub(crate) fn fast_decimal(b: &[u8]) -> Option<f64> {
    // At most 15 digits and one separator: longer is not taken (and cannot overflow m).
    if b.len() > 16 {
        return None;
    }
    let (mut m, mut i) = (0u64, 0);
    while i < b.len() && b[i].is_ascii_digit() {
        m = m * 10 + u64::from(b[i] - b'0');
        i += 1;
    }
    let int_digits = i;
    if int_digits == 0 {
        return None;
    }
    let mut k = 0;
    if i < b.len() {
        // One separator between digits, then digits to the end.
        if !matches!(b[i], b'.' | b',') || i + 1 == b.len() {
            return None;
        }
        i += 1;
        let frac_start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            m = m * 10 + u64::from(b[i] - b'0');
            i += 1;
        }
        if i < b.len() {
            return None;
        }
        k = i - frac_start;
    }
    if int_digits + k > 15 {
        return None;
    }
    Some(m as f64 / POW10[k])
}

/// Parse a JVM size: `1913M`, `1024.0K`, `0.0B`, `3G`, `98304K`; unit-less means bytes.
pub(crate) fn parse_size(s: &str) -> Option<f64> {
    let s = s.trim_ascii();
    let (num, mult) = match s.as_bytes().last()? {
        b'B' => (&s[..s.len() - 1], 1.0),
        b'K' | b'k' => (&s[..s.len() - 1], 1024.0),
        b'M' => (&s[..s.len() - 1], 1024.0 * 1024.0),
        b'G' => (&s[..s.len() - 1], 1024.0 * 1024.0 * 1024.0),
        b'T' => (&s[..s.len() - 1], 1024f64.powi(4)),
        _ => (s, 1.0),
    };
    let v = parse_number(num)?;
    (v.is_finite() && v >= 0.0).then_some(v * mult)
}

/// `A->B(C)` or `A(C)->B(D)` (Serial JDK 20+, legacy G1 `Heap:`), sizes with units.
pub(crate) fn parse_heap_change(token: &str) -> Option<HeapChange> {
    let arrow = find2(token.as_bytes(), b"->")?;
    let (left, right) = (&token[..arrow], &token[arrow + 2..]);
    let paren = |s: &str| s.as_bytes().iter().position(|&c| c == b'(');
    let left = &left[..paren(left).unwrap_or(left.len())];
    let (after, capacity) = match paren(right) {
        Some(i) => (
            &right[..i],
            right[i + 1..].strip_suffix(')').and_then(parse_size),
        ),
        None => (right, None),
    };
    Some(HeapChange {
        before: parse_size(left)?,
        after: parse_size(after)?,
        capacity,
        after_pct_of_max: None,
    })
}

/// Where a two-byte needle starts (`->`, ` (`): a plain loop beats a searcher's set-up
/// on the short strings of one line.
#[inline]
pub(crate) fn find2(h: &[u8], n: &[u8; 2]) -> Option<usize> {
    h.windows(2).position(|w| w == n)
}

/// A duration at the end of a message: `12.345ms`, `0.019s`, `5us`, `1234ns`.
pub(crate) fn parse_duration_ms(token: &str) -> Option<f64> {
    let (num, scale) = if let Some(n) = token.strip_suffix("ms") {
        (n, 1.0)
    } else if let Some(n) = token.strip_suffix("us") {
        (n, 1e-3)
    } else if let Some(n) = token.strip_suffix("ns") {
        (n, 1e-6)
    } else if let Some(n) = token.strip_suffix('s') {
        (n, 1e3)
    } else {
        return None;
    };
    if num.is_empty() || !num.as_bytes()[0].is_ascii_digit() {
        return None;
    }
    let v = parse_number(num)?;
    v.is_finite().then_some(v * scale)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_changes() {
        assert_eq!(parse_size("1913M"), Some(1913.0 * 1048576.0));
        assert_eq!(parse_size("0.0B"), Some(0.0));
        assert_eq!(parse_size("1024.0K"), Some(1048576.0));
        assert_eq!(parse_size("M"), None);
        let h = parse_heap_change("1913M->1846M(2048M)").unwrap();
        assert_eq!(h.after, 1846.0 * 1048576.0);
        assert_eq!(h.capacity, Some(2048.0 * 1048576.0));
        let h = parse_heap_change("1046554K(1048576K)->26K(1048576K)").unwrap();
        assert_eq!(h.before, 1046554.0 * 1024.0);
        assert_eq!(h.after, 26.0 * 1024.0);
        assert!(parse_heap_change("->").is_none());
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration_ms("12.345ms"), Some(12.345));
        assert_eq!(parse_duration_ms("0.019s"), Some(19.0));
        assert_eq!(parse_duration_ms("ms"), None);
        assert_eq!(parse_duration_ms("classes)"), None);
        // A JVM under a German or French C locale writes decimal commas.
        assert_eq!(parse_duration_ms("22,044ms"), Some(22.044));
        assert_eq!(parse_duration_ms("0,501s"), Some(501.0));
        assert_eq!(parse_size("1024,5K"), Some(1024.5 * 1024.0));
        assert_eq!(parse_number("0,0123456"), Some(0.0123456));
        assert_eq!(parse_number("1,2,3"), None);
        assert_eq!(parse_number(",5"), None);
        assert_eq!(parse_number("1,5.0"), None);
        // Past 15 digits the general parser decides; 25 digits used to overflow the fast
        // path's integer (a panic with overflow checks on, found by the gc_log fuzz target).
        assert_eq!(fast_decimal(b"1234567890123456789012345"), None);
        assert_eq!(fast_decimal(b"123456789012345"), Some(123456789012345.0));
        assert_eq!(
            parse_number("1234567890123456789012345"),
            Some(1234567890123456789012345.0)
        );
        // The fast path gives what the general parser gives.
        for t in [
            "0",
            "7",
            "12.345",
            "0.0123456",
            "1138.566",
            "1796021927326",
            "99999.999999999",
            "0.1",
            "3.0000000000001",
        ] {
            assert_eq!(
                fast_decimal(t.as_bytes()),
                Some(t.parse::<f64>().unwrap()),
                "{t}"
            );
        }
        for t in ["", ".5", "5.", "1e5", "+1", "1234567890123456", "1.2.3"] {
            assert_eq!(fast_decimal(t.as_bytes()), None, "{t}");
        }
    }

    /// The fast decimal path as it was first written (a per-byte state machine): the
    /// loop that replaced it must take and give exactly what it did.
    fn fast_decimal_as_first_written(b: &[u8]) -> Option<f64> {
        let mut m: u64 = 0;
        let mut digits = 0u32;
        let mut frac: Option<u32> = None;
        for (i, &c) in b.iter().enumerate() {
            match c {
                b'0'..=b'9' if digits == 15 => return None,
                b'0'..=b'9' => {
                    m = m * 10 + u64::from(c - b'0');
                    digits += 1;
                    if let Some(f) = frac.as_mut() {
                        *f += 1;
                    }
                }
                b'.' | b',' if frac.is_none() && i > 0 && i + 1 < b.len() => frac = Some(0),
                _ => return None,
            }
        }
        if digits == 0 {
            return None;
        }
        Some(m as f64 / POW10[frac.unwrap_or(0) as usize])
    }

    #[test]
    fn the_fast_decimal_takes_and_gives_what_it_always_did() {
        // Every string of up to 5 bytes over a small alphabet, and long ones around the
        // 15-digit edge.
        let alphabet = [b'0', b'1', b'9', b'.', b',', b'x', b'-'];
        let mut cases: Vec<Vec<u8>> = vec![Vec::new()];
        let mut last = vec![Vec::new()];
        for _ in 0..5 {
            let mut next = Vec::new();
            for s in &last {
                for &c in &alphabet {
                    let mut t = s.clone();
                    t.push(c);
                    next.push(t);
                }
            }
            cases.extend(next.iter().cloned());
            last = next;
        }
        for n in 12..20 {
            for sep in 0..=n {
                let mut t: Vec<u8> = (0..n).map(|i| b'1' + (i % 9) as u8).collect();
                cases.push(t.clone());
                if sep < n {
                    t.insert(sep, b'.');
                    cases.push(t.clone());
                    t.push(b'7');
                    cases.push(t);
                }
            }
        }
        for c in &cases {
            assert_eq!(
                fast_decimal(c).map(f64::to_bits),
                fast_decimal_as_first_written(c).map(f64::to_bits),
                "{:?}",
                String::from_utf8_lossy(c)
            );
        }
    }
}
