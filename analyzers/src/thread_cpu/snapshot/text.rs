//! Line-level helpers every snapshot format shares: terminal escapes out, tokens with their
//! offsets, numbers in any locale's format, the clock and duration forms the tools print, a
//! line as an example.

use crate::vocab::report::{ExampleLine, EXAMPLE_CHARS};

/// The line without terminal escape sequences (an interactive `top` captured through
/// `script`, or a paste from a terminal that kept them) and without trailing blanks.
pub fn clean(line: &str) -> std::borrow::Cow<'_, str> {
    if !line.contains('\u{1b}') {
        return std::borrow::Cow::Borrowed(line.trim_end());
    }
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\u{1b}' {
            out.push(c);
            continue;
        }
        match chars.next() {
            // CSI: parameters and intermediates, then one final byte in @..~.
            Some('[') => {
                for c in chars.by_ref() {
                    if ('@'..='~').contains(&c) {
                        break;
                    }
                }
            }
            // Character set selection: one more character.
            Some('(') | Some(')') | Some('*') | Some('+') => {
                chars.next();
            }
            // OSC: up to BEL or ESC \.
            Some(']') => {
                while let Some(c) = chars.next() {
                    if c == '\u{7}' {
                        break;
                    }
                    if c == '\u{1b}' {
                        chars.next();
                        break;
                    }
                }
            }
            _ => {}
        }
    }
    let trimmed = out.trim_end().len();
    out.truncate(trimmed);
    std::borrow::Cow::Owned(out)
}

/// Whitespace-separated tokens with their byte offsets.
pub fn tokens(line: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in line.char_indices() {
        if c.is_whitespace() {
            if let Some(s) = start.take() {
                out.push((s, &line[s..i]));
            }
        } else if start.is_none() {
            start = Some(i);
        }
    }
    if let Some(s) = start {
        out.push((s, &line[s..]));
    }
    out
}

/// A decimal as any locale prints it: `99.7`, `99,7` (one separator, no grouping).
pub fn decimal(s: &str) -> Option<f64> {
    if s.is_empty() || s.len() > 24 {
        return None;
    }
    let mut seen_sep = false;
    let mut digits = 0;
    for (i, c) in s.char_indices() {
        match c {
            '0'..='9' => digits += 1,
            '.' | ',' if !seen_sep && i > 0 => seen_sep = true,
            '-' if i == 0 => {}
            _ => return None,
        }
    }
    if digits == 0 {
        return None;
    }
    let v: f64 = s.replace(',', ".").parse().ok()?;
    v.is_finite().then_some(v)
}

/// A whole number (a pid, a tid).
pub fn integer(s: &str) -> Option<i64> {
    if s.is_empty() || s.len() > 18 || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// A thread id: a positive whole number that fits a Linux tid.
pub fn tid(s: &str) -> Option<i32> {
    integer(s)
        .and_then(|v| i32::try_from(v).ok())
        .filter(|&v| v > 0)
}

/// A clock time of day `HH:MM:SS` (as top's and pidstat's headers print it) in seconds.
pub fn clock(s: &str) -> Option<u32> {
    let b = s.as_bytes();
    if b.len() != 8 || b[2] != b':' || b[5] != b':' {
        return clock_in_words(s);
    }
    let n = |i: usize| -> Option<u32> {
        let (a, c) = (b[i], b[i + 1]);
        (a.is_ascii_digit() && c.is_ascii_digit()).then(|| ((a - b'0') * 10 + (c - b'0')) as u32)
    };
    let (h, m, sec) = (n(0)?, n(3)?, n(6)?);
    (h < 24 && m < 60 && sec < 61).then_some(h * 3600 + m * 60 + sec)
}

/// A time of day written with a locale's words for hour, minute and second (`14时05分26秒`,
/// `14시05분26초`): three runs of one or two digits, each followed by a non-ASCII word.
fn clock_in_words(s: &str) -> Option<u32> {
    let mut parts = [0u32; 3];
    let mut n = 0;
    let mut digits = 0;
    let mut value = 0u32;
    for c in s.chars() {
        if let Some(d) = c.to_digit(10) {
            digits += 1;
            value = value * 10 + d;
            if digits > 2 {
                return None;
            }
        } else if !c.is_ascii() && digits > 0 {
            *parts.get_mut(n)? = value;
            n += 1;
            (digits, value) = (0, 0);
        } else if c.is_ascii() || digits > 0 {
            return None;
        }
    }
    let [h, m, sec] = parts;
    (n == 3 && digits == 0 && h < 24 && m < 60 && sec < 61).then_some(h * 3600 + m * 60 + sec)
}

/// ps's `TIME` and `ELAPSED` (`[[DD-]HH:]MM:SS`, or whole seconds for etimes) and top's
/// `TIME+` (`M:SS.hh`, any locale's separator), in seconds.
pub fn duration(s: &str) -> Option<f64> {
    if let Some(v) = integer(s) {
        return Some(v as f64);
    }
    let (days, rest) = match s.split_once('-') {
        Some((d, r)) => (integer(d)? as f64, r),
        None => (0.0, s),
    };
    let parts: Vec<&str> = rest.split(':').collect();
    if parts.len() < 2 || parts.len() > 3 {
        return None;
    }
    let mut total = 0.0;
    for (i, p) in parts.iter().enumerate() {
        let last = i == parts.len() - 1;
        let v = if last {
            decimal(p)?
        } else {
            integer(p)? as f64
        };
        if v < 0.0 || (i > 0 && v >= 60.0 + 1e-9 && !last) {
            return None;
        }
        total = total * 60.0 + v;
    }
    Some(days * 86400.0 + total)
}

/// A line of the paste as an example: trailing blanks off, cut at [`EXAMPLE_CHARS`].
pub(crate) fn example(line: u64, text: &str) -> ExampleLine {
    ExampleLine {
        line,
        text: text.trim_end().chars().take(EXAMPLE_CHARS).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_of_an_interactive_top_are_removed() {
        let l = "\u{1b}[7m  PID USER \u{1b}(B\u{1b}[m\u{1b}[39;49m\u{1b}[K";
        assert_eq!(clean(l), "  PID USER");
        assert_eq!(clean("plain  "), "plain");
    }

    #[test]
    fn tokens_keep_offsets() {
        assert_eq!(tokens(" a  bc d"), vec![(1, "a"), (4, "bc"), (7, "d")]);
    }

    #[test]
    fn numbers_in_any_locale() {
        assert_eq!(decimal("99,7"), Some(99.7));
        assert_eq!(decimal("99.7"), Some(99.7));
        assert_eq!(decimal("100"), Some(100.0));
        assert_eq!(decimal("1.2.3"), None);
        assert_eq!(decimal(","), None);
        assert_eq!(decimal("R"), None);
        assert_eq!(tid("0"), None);
        assert_eq!(tid("12345"), Some(12345));
        assert_eq!(tid("99999999999"), None);
    }

    #[test]
    fn clocks_and_durations() {
        assert_eq!(clock("07:10:51"), Some(7 * 3600 + 10 * 60 + 51));
        assert_eq!(clock("7:10:51"), None);
        assert_eq!(duration("00:00:04"), Some(4.0));
        assert_eq!(duration("1-02:00:00"), Some(93600.0));
        assert_eq!(duration("00:05"), Some(5.0));
        assert_eq!(duration("0:02.30"), Some(2.3));
        assert_eq!(duration("0:02,30"), Some(2.3));
        assert_eq!(duration("24"), Some(24.0));
        assert_eq!(duration("x:01"), None);
    }
}
