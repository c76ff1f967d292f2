//! The best timestamp a line offers: librdkafka's own `|<secs>.<ms>|` where its
//! default logger wrote the line, else the wrapper's date/time, else none.

use super::scan::Cur;

/// Where a record's time came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TimestampSource {
    /// librdkafka's stderr logger: wall clock at the time librdkafka logged.
    Librdkafka,
    /// The wrapper's or application logger's time: may be the time the line was
    /// handed to the application (rust-rdkafka logs at poll time), and may lack the
    /// date (time-only loggers) or the year (syslog).
    Wrapper,
}

impl TimestampSource {
    /// The name used in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            TimestampSource::Librdkafka => "librdkafka",
            TimestampSource::Wrapper => "wrapper",
        }
    }
}

/// A point in time, in seconds. Epoch seconds for librdkafka's and dated wrapper
/// stamps; for time-only stamps, seconds since midnight (only differences matter).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Timestamp {
    /// Seconds (with fraction).
    pub secs: f64,
    /// Where it came from.
    pub source: TimestampSource,
}

/// librdkafka's `|<secs>.<msecs>|` (as `rd_kafka_log_print` writes it), anywhere in
/// `text`: the raw stderr format, strace captures of it, wrappers that keep it.
pub fn librdkafka_stamp(text: &[u8]) -> Option<f64> {
    // The default logger's line starts `%<level>|`: try that spot first.
    if text.len() > 3 && text[0] == b'%' && text[2] == b'|' {
        if let Some(t) = stamp_at(text, 3) {
            return Some(t);
        }
    }
    for bar in memchr::memchr_iter(b'|', text) {
        if let Some(t) = stamp_at(text, bar + 1) {
            return Some(t);
        }
    }
    None
}

fn stamp_at(text: &[u8], at: usize) -> Option<f64> {
    stamp_end(text, at).map(|(t, _)| t)
}

/// librdkafka's `<secs>.<ms>|` at `at`: the time and the index after the `|`. Inlined
/// into the raw parser (every raw line's first field; the call was a tenth of its cost);
/// other shapes go to [`stamp_end_other`].
#[inline(always)]
pub(crate) fn stamp_end(text: &[u8], at: usize) -> Option<(f64, usize)> {
    // Every stamp since 2001 has 10 digits: parse that shape without the cursor, the
    // first eight digits at once.
    if let Some(s) = text.get(at..at + 15) {
        if s[10] == b'.' && s[14] == b'|' {
            let digit = |b: u8| {
                let d = b.wrapping_sub(b'0');
                (d <= 9).then_some(d as u64)
            };
            let head: &[u8; 8] = s[..8].try_into().expect("8 bytes");
            if let (Some(high), Some(d8), Some(d9), Some(m0), Some(m1), Some(m2)) = (
                eight_digits(head),
                digit(s[8]),
                digit(s[9]),
                digit(s[11]),
                digit(s[12]),
                digit(s[13]),
            ) {
                let secs = high * 100 + d8 * 10 + d9;
                let ms = m0 * 100 + m1 * 10 + m2;
                return Some((secs as f64 + ms as f64 / 1000.0, at + 15));
            }
        }
    }
    stamp_end_other(text, at)
}

/// [`stamp_end`] for stamps of other than ten digits (and for what is not a stamp).
#[inline(never)]
fn stamp_end_other(text: &[u8], at: usize) -> Option<(f64, usize)> {
    let mut c = Cur::new(text, at);
    let start = c.i;
    let secs = c.uint()?;
    let digits = c.i - start;
    c.lit(b".")?;
    let frac_start = c.i;
    let ms = c.uint()?;
    if !(9..=10).contains(&digits) || c.i - frac_start != 3 {
        return None;
    }
    c.lit(b"|")?;
    Some((secs as f64 + ms as f64 / 1000.0, c.i))
}

/// Eight ASCII digits as their value (the first the most significant), or `None` when
/// any byte is not a digit: a few word operations instead of a loop (the stamp was a
/// twentieth of a raw line's parse).
#[inline]
fn eight_digits(b: &[u8; 8]) -> Option<u64> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    let x = u64::from_le_bytes(*b);
    // Every byte 0x30..=0x3f, and below 0x3a: adding 6 to its low nibble does not carry.
    let d = x.wrapping_sub(0x30 * ONES);
    if x & (0xf0 * ONES) != 0x30 * ONES || d.wrapping_add(6 * ONES) & (0xf0 * ONES) != 0 {
        return None;
    }
    // Pairs, then fours, then the eight (fast_float's parse_eight_digits_unrolled).
    let v = (d & (0x0f * ONES)).wrapping_mul(10 * 256 + 1) >> 8;
    let v = (v & 0x00ff_00ff_00ff_00ff).wrapping_mul(100 * 65536 + 1) >> 16;
    Some((v & 0x0000_ffff_0000_ffff).wrapping_mul(10000 * (1 << 32) + 1) >> 32)
}

const MONTHS: [&[u8; 3]; 12] = [
    b"Jan", b"Feb", b"Mar", b"Apr", b"May", b"Jun", b"Jul", b"Aug", b"Sep", b"Oct", b"Nov", b"Dec",
];

/// The first date/time a wrapper put in `text` (ISO 8601 and its cousins, syslog's
/// `Mon dd hh:mm:ss`, a bare `hh:mm:ss.fff`, or epoch seconds/ms/µs/ns).
pub fn wrapper_stamp(text: &[u8]) -> Option<f64> {
    let mut i = 0;
    while i < text.len() {
        let b = text[i];
        let boundary = i == 0 || !text[i - 1].is_ascii_alphanumeric();
        if boundary && b.is_ascii_digit() {
            if let Some(t) = iso_datetime(text, i) {
                return Some(t);
            }
            if let Some(t) = time_of_day(text, i) {
                return Some(t + syslog_day_before(text, i).unwrap_or(0.0));
            }
            if let Some(t) = epoch_number(text, i) {
                return Some(t);
            }
            // Skip the rest of this number.
            while i < text.len() && text[i].is_ascii_digit() {
                i += 1;
            }
            continue;
        }
        i += 1;
    }
    None
}

fn fixed_digits(text: &[u8], at: usize, n: usize) -> Option<u32> {
    let s = text.get(at..at + n)?;
    if !s.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(s.iter().fold(0u32, |v, &b| v * 10 + (b - b'0') as u32))
}

/// `hh:mm:ss[.frac]` (also `,frac` as log4j/Python write it) at `at`, in seconds.
fn time_of_day(text: &[u8], at: usize) -> Option<f64> {
    let h = fixed_digits(text, at, 2)?;
    if text.get(at + 2) != Some(&b':') {
        return None;
    }
    let m = fixed_digits(text, at + 3, 2)?;
    if text.get(at + 5) != Some(&b':') {
        return None;
    }
    let s = fixed_digits(text, at + 6, 2)?;
    if h > 23 || m > 59 || s > 60 {
        return None;
    }
    let mut t = (h * 3600 + m * 60 + s) as f64;
    let mut j = at + 8;
    if matches!(text.get(j), Some(b'.') | Some(b',')) {
        j += 1;
        let mut scale = 0.1;
        while let Some(d) = text.get(j).filter(|d| d.is_ascii_digit()) {
            t += (d - b'0') as f64 * scale;
            scale /= 10.0;
            j += 1;
        }
    }
    Some(t)
}

/// Length of the `hh:mm:ss[.frac]` at `at`.
fn time_len(text: &[u8], at: usize) -> usize {
    let mut j = at + 8;
    if matches!(text.get(j), Some(b'.') | Some(b',')) {
        j += 1;
        while text.get(j).is_some_and(u8::is_ascii_digit) {
            j += 1;
        }
    }
    j - at
}

/// `YYYY-MM-DD[T ]hh:mm:ss[.frac][Z|±hh[:]mm]` (also `/` between the date's parts).
fn iso_datetime(text: &[u8], at: usize) -> Option<f64> {
    let y = fixed_digits(text, at, 4)?;
    let sep = *text.get(at + 4)?;
    if sep != b'-' && sep != b'/' {
        return None;
    }
    let mo = fixed_digits(text, at + 5, 2)?;
    if text.get(at + 7) != Some(&sep) {
        return None;
    }
    let d = fixed_digits(text, at + 8, 2)?;
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || !(1970..=2200).contains(&y) {
        return None;
    }
    if !matches!(text.get(at + 10), Some(b'T') | Some(b' ') | Some(b'_')) {
        return None;
    }
    let tod = time_of_day(text, at + 11)?;
    let mut t = days_from_civil(y as i64, mo, d) as f64 * 86400.0 + tod;
    let mut j = at + 11 + time_len(text, at + 11);
    // Go's time.String() puts a space before the offset.
    if text.get(j) == Some(&b' ') && matches!(text.get(j + 1), Some(b'+') | Some(b'-')) {
        j += 1;
    }
    match text.get(j) {
        Some(b'+') | Some(b'-') => {
            let sign = if text[j] == b'+' { 1.0 } else { -1.0 };
            if let Some(oh) = fixed_digits(text, j + 1, 2) {
                let k = if text.get(j + 3) == Some(&b':') {
                    j + 4
                } else {
                    j + 3
                };
                let om = fixed_digits(text, k, 2).unwrap_or(0);
                t -= sign * (oh * 3600 + om * 60) as f64;
            }
        }
        _ => {}
    }
    Some(t)
}

/// syslog's `Mon dd ` (or `Mon  d `) right before a time of day, as seconds from the
/// start of a year (a fixed leap year: syslog has no year).
fn syslog_day_before(text: &[u8], time_at: usize) -> Option<f64> {
    let head = text[..time_at].strip_suffix(b" ")?;
    let dlen = head.iter().rev().take_while(|b| b.is_ascii_digit()).count();
    if dlen == 0 || dlen > 2 {
        return None;
    }
    let day: u32 = std::str::from_utf8(&head[head.len() - dlen..])
        .ok()?
        .parse()
        .ok()?;
    let mut k = head.len() - dlen;
    while k > 0 && head[k - 1] == b' ' {
        k -= 1;
    }
    if k < 3 {
        return None;
    }
    let month = MONTHS.iter().position(|m| &head[k - 3..k] == *m)? as u32 + 1;
    Some((days_from_civil(2000, month, day) - days_from_civil(2000, 1, 1)) as f64 * 86400.0)
}

/// A delimited epoch number: seconds (10 digits, optional fraction), or 13/16/19
/// digits of ms/µs/ns, within 2001..2100.
fn epoch_number(text: &[u8], at: usize) -> Option<f64> {
    let mut c = Cur::new(text, at);
    let n = c.take_while(|b| b.is_ascii_digit()).len();
    let whole = &text[at..at + n];
    let mut v: f64 = std::str::from_utf8(whole).ok()?.parse().ok()?;
    let scale = match n {
        10 => 1.0,
        13 => 1e3,
        16 => 1e6,
        19 => 1e9,
        _ => return None,
    };
    if n == 10 && c.opt(b".") {
        let mut f = 0.1;
        let frac = c.take_while(|b| b.is_ascii_digit());
        if frac.is_empty() {
            return None;
        }
        for &d in frac.iter().take(9) {
            v += (d - b'0') as f64 * f;
            f /= 10.0;
        }
    }
    if c.peek()
        .is_some_and(|b| b.is_ascii_alphanumeric() || b == b'.')
    {
        return None;
    }
    let secs = v / scale;
    (1.0e9..4.1e9).contains(&secs).then_some(secs)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (m as i64 + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146097 + doe - 719468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn librdkafka_stamp_in_raw_and_strace_lines() {
        assert_eq!(
            librdkafka_stamp(b"%7|1796017467.732|SEND|rdkafka#producer-1| "),
            Some(1796017467.732)
        );
        assert_eq!(
            librdkafka_stamp(b"write(2, \"%7|1517292470.035|RECV|rdkafka#producer-1| "),
            Some(1517292470.035)
        );
        // .NET's `7|<date>|` is the wrapper's time, not librdkafka's.
        assert_eq!(
            librdkafka_stamp(b"7|2018-03-07 13:06:54.197|rdkafka#producer-1|RECV|"),
            None
        );
    }

    #[test]
    fn eight_digits_at_once_agree_with_a_loop_on_every_byte_and_place() {
        let by_loop = |b: &[u8; 8]| {
            b.iter().try_fold(0u64, |v, &c| {
                c.is_ascii_digit().then(|| v * 10 + (c - b'0') as u64)
            })
        };
        for base in [*b"00000000", *b"99999999", *b"17960274", *b"12345678"] {
            assert_eq!(eight_digits(&base), by_loop(&base));
            for at in 0..8 {
                for c in 0..=255u8 {
                    let mut b = base;
                    b[at] = c;
                    assert_eq!(eight_digits(&b), by_loop(&b), "{b:?}");
                }
            }
        }
        let mut x: u64 = 7;
        for _ in 0..100_000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let b = format!("{:08}", x % 100_000_000);
            let b: [u8; 8] = b.as_bytes().try_into().unwrap();
            assert_eq!(eight_digits(&b), Some(x % 100_000_000));
        }
    }

    #[test]
    fn stamps_of_every_shape_parse_as_the_cursor_parses_them() {
        // The eight-digit fast path against the cursor's parse (the slow path, reached
        // with the fast one's shape broken by a 9-digit stamp).
        for (stamp, want) in [
            ("1796027442.463|", Some(1796027442.463)),
            ("0000000000.000|", Some(0.0)),
            ("9999999999.999|", Some(9999999999.999)),
            ("179602744.463|", Some(179602744.463)),
            ("17960274a2.463|", None),
            ("1796027442.4a3|", None),
            ("1796027442.46|", None),
            ("1796027442.463.", None),
            ("179602744/.463|", None),
        ] {
            let line = format!("%7|{stamp}SEND|");
            assert_eq!(stamp_end(line.as_bytes(), 3).map(|s| s.0), want, "{stamp}");
        }
    }

    #[test]
    fn iso_dates_with_zones_are_epoch_seconds() {
        let z = wrapper_stamp(b"2018-03-07T13:06:54.197Z app").unwrap();
        assert!((z - 1520428014.197).abs() < 1e-6, "{z}");
        let plus = wrapper_stamp(b"2018-03-07T14:06:54.197+01:00").unwrap();
        assert!((plus - z).abs() < 1e-6);
        let go = wrapper_stamp(b"2018/03/07 13:06:54 x").unwrap();
        assert!((go - 1520428014.0).abs() < 1e-6);
    }

    #[test]
    fn syslog_and_time_only_stamps_keep_differences() {
        let a = wrapper_stamp(b"Mar  7 13:06:54 host app[1]: x").unwrap();
        let b = wrapper_stamp(b"Mar  7 13:06:55 host app[1]: x").unwrap();
        assert!((b - a - 1.0).abs() < 1e-9);
        let t = wrapper_stamp(b"13:06:54,250 DEBUG x").unwrap();
        assert!((t - (13.0 * 3600.0 + 6.0 * 60.0 + 54.25)).abs() < 1e-9);
    }

    #[test]
    fn epoch_numbers_need_plausible_size_and_delimiters() {
        assert_eq!(wrapper_stamp(b"{\"ts\":1517292470.5,"), Some(1517292470.5));
        assert_eq!(wrapper_stamp(b"{\"ts\":1517292470500}"), Some(1517292470.5));
        assert_eq!(wrapper_stamp(b"port 9092 corr 12345"), None);
        assert_eq!(wrapper_stamp(b"id 1517292470abc"), None);
    }
}
