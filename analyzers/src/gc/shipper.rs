//! Prefixes a log shipper put before the JVM's own line, recognised by their shape and
//! stripped, so the rest of the analyzer sees the line the JVM wrote:
//!
//! - Docker's json-file driver (and Fluent Bit / Vector records): `{"log":"…\n",…}`,
//!   the JSON string unescaped (Go escapes `>` as `\u003e`, so `->` arrives escaped);
//! - the CRI log format of containerd / CRI-O (`/var/log/pods`):
//!   `2026-01-01T00:00:00.000000000Z stdout F …`;
//! - `kubectl logs --timestamps` and `docker logs -t`: an RFC 3339 time and a space;
//! - syslog and journald (`journalctl -o short`, `-o short-iso`):
//!   `Dec 01 10:58:16 host java[1234]: …`, `2026-12-01T10:58:16+0000 host java[1234]: …`.
//!
//! Any other prefix ending in `|` or `| ` (`name|`, docker compose's or swarm's
//! `service  | `) or a Markdown fence glued to the line, before a line that does not
//! start the way a JVM's does, is found by where the JVM's line starts after it: a
//! unified decoration (`[1.234s]`, `[2026-…]`, `[info]`) or a JDK 8 stamp (`1.234: [`,
//! `2026-…: 1.234: [`), within the line's first [`PREFIX_MAX`] bytes.
//!
//! A line with none of these is returned as it is, at the cost of a look at its first
//! bytes (lines that start with `[`, a digit or a space are never searched). JDK 8's own `-XX:+PrintGCDateStamps` stamp (`2026-…+0000: 1.234: [GC`) ends in
//! a colon and is never taken for a shipper's time.

/// The line without a shipper's prefix. `scratch` holds the unescaped text of a JSON
/// record (reused, so a long run of records allocates once).
pub(crate) fn strip<'a>(line: &'a [u8], scratch: &'a mut Vec<u8>) -> &'a [u8] {
    match line.first() {
        Some(b'{') => json_log(line, scratch).unwrap_or(line),
        Some(b'0'..=b'9') => after_rfc3339(line).unwrap_or(line),
        Some(b'A'..=b'Z') => after_syslog_stamp(line)
            .and_then(after_host_and_tag)
            .or_else(|| after_any_prefix(line))
            .unwrap_or(line),
        Some(b'[') | Some(b' ') | Some(b'\t') | None => line,
        _ => after_any_prefix(line).unwrap_or(line),
    }
}

/// How far into a line a prefix is looked for: a container or CI prefix is at most a
/// few dozen bytes (docker swarm's `service.1.<25-char id>@host    | ` is ~60).
pub(crate) const PREFIX_MAX: usize = 160;

/// The JVM's line after a prefix of any kind: from the first separator-led position
/// where a unified decoration or a JDK 8 record's stamp starts.
fn after_any_prefix(line: &[u8]) -> Option<&[u8]> {
    let head = &line[..line.len().min(PREFIX_MAX)];
    for i in 1..head.len() {
        // The JVM's line starts after a prefix's own end: `name|`, `service  | `, a
        // Markdown fence. Never after other text: a JDK 8 record wrapped over lines goes
        // on with `secs]1.234: [CMS…`, which is the record's, not a prefix.
        let before = head[i - 1];
        let ends_prefix = before == b'|'
            || before == b'`'
            || (before == b' ' && head[..i].trim_ascii_end().ends_with(b"|"));
        if !ends_prefix {
            continue;
        }
        let rest = &line[i..];
        let hit = match rest[0] {
            b'[' => unified_starts(rest),
            b'0'..=b'9' => legacy_starts(rest),
            _ => false,
        };
        if hit {
            return Some(rest);
        }
    }
    None
}

/// `[1.234s][info][gc] …`: decorations the unified parser takes, with a time or `gc`
/// tags (an application's `[main]` is not a JVM's line).
fn unified_starts(s: &[u8]) -> bool {
    let Ok(text) = std::str::from_utf8(&s[..s.len().min(PREFIX_MAX)]) else {
        return false;
    };
    let (d, _) = super::unified::split_decorations(text);
    d.decorated && (d.timed() || d.tags.is_some_and(|t| t.starts_with("gc")))
}

/// `1.234: [` (uptime) or `2026-01-01T00:00:00.000+0000: ` (date stamp): a JDK 8 record.
fn legacy_starts(s: &[u8]) -> bool {
    if s.len() >= 11 && s[4] == b'-' && s[7] == b'-' && s[10] == b'T' {
        return s[..s.len().min(40)].windows(2).any(|w| w == b": ");
    }
    let digits = s.iter().take_while(|b| b.is_ascii_digit()).count();
    let frac = s[digits..].first().is_some_and(|&b| b == b'.' || b == b',');
    if !frac {
        return false;
    }
    let rest = &s[digits + 1..];
    let decimals = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    decimals > 0 && rest[decimals..].starts_with(b": [")
}

/// `{"log":"<JSON string>",…}` (or `"message"`): the string, unescaped into `scratch`.
fn json_log<'a>(line: &[u8], scratch: &'a mut Vec<u8>) -> Option<&'a [u8]> {
    let key = [&b"\"log\":\""[..], b"\"message\":\""]
        .into_iter()
        .find_map(|k| memchr::memmem::find(line, k).map(|i| i + k.len()))?;
    scratch.clear();
    let mut i = key;
    while i < line.len() {
        match line[i] {
            b'"' => break,
            b'\\' if i + 1 < line.len() => {
                i += 1;
                match line[i] {
                    b'n' | b'r' => {}
                    b't' => scratch.push(b'\t'),
                    b'u' if i + 4 < line.len() => {
                        let hex = std::str::from_utf8(&line[i + 1..i + 5]).ok()?;
                        let c = u32::from_str_radix(hex, 16).ok()?;
                        // GC lines are ASCII: anything else only needs to stay one byte.
                        scratch.push(if c < 0x80 { c as u8 } else { b'?' });
                        i += 4;
                    }
                    other => scratch.push(other),
                }
            }
            b => scratch.push(b),
        }
        i += 1;
    }
    Some(&scratch[..])
}

/// After an RFC 3339 time (`2026-01-01T00:00:00.000000000Z`, `…+00:00`, `…+0000`) and a
/// space: the CRI stream and tag are dropped too, and a syslog host and tag.
fn after_rfc3339(line: &[u8]) -> Option<&[u8]> {
    if line.len() < 20 || line[4] != b'-' || line[7] != b'-' || line[10] != b'T' {
        return None;
    }
    let sp = memchr::memchr(b' ', &line[..line.len().min(48)])?;
    let last = line[sp - 1];
    // `…+0000:` is JDK 8's own date stamp, not a shipper's.
    if !(last == b'Z' || last.is_ascii_digit()) {
        return None;
    }
    let rest = &line[sp + 1..];
    for stream in [&b"stdout "[..], b"stderr "] {
        if let Some(r) = rest.strip_prefix(stream) {
            // CRI: `F` a full line, `P` a part of a longer one (the JVM's lines fit).
            if let Some(r) = r.strip_prefix(b"F ").or_else(|| r.strip_prefix(b"P ")) {
                return Some(r);
            }
        }
    }
    // `kubectl logs --timestamps` stamps to the nanosecond; journald's `short-iso` to the
    // second, followed by a host and a tag.
    let fractional = memchr::memchr(b'.', &line[..sp]).is_some();
    if fractional || looks_like_jvm_text(rest) {
        return Some(rest);
    }
    after_host_and_tag(rest).or(Some(rest))
}

/// The start of what the JVM writes: a decoration, a `GC(N)` id, a JDK 8 uptime or
/// record, or a message word.
fn looks_like_jvm_text(s: &[u8]) -> bool {
    match s.first() {
        Some(b'[') | Some(b'0'..=b'9') | Some(b'{') => true,
        _ => s.starts_with(b"GC(") || s.starts_with(b"Using ") || s.starts_with(b"Version: "),
    }
}

/// After `Dec 01 10:58:16 ` / `Dec  1 10:58:16 ` (RFC 3164, journalctl's `short`).
fn after_syslog_stamp(line: &[u8]) -> Option<&[u8]> {
    const MONTHS: [&[u8]; 12] = [
        b"Jan ", b"Feb ", b"Mar ", b"Apr ", b"May ", b"Jun ", b"Jul ", b"Aug ", b"Sep ", b"Oct ",
        b"Nov ", b"Dec ",
    ];
    if line.len() < 16 || !MONTHS.contains(&&line[..4]) {
        return None;
    }
    let day = &line[4..6];
    let t = &line[7..15];
    let ok = (day[0] == b' ' || day[0].is_ascii_digit())
        && day[1].is_ascii_digit()
        && line[6] == b' '
        && t[2] == b':'
        && t[5] == b':'
        && line[15] == b' ';
    ok.then(|| &line[16..])
}

/// After `host tag[pid]: `, `host tag: ` or, without the host (`journalctl
/// --no-hostname`), `tag[pid]: `: the syslog header after its time.
fn after_host_and_tag(s: &[u8]) -> Option<&[u8]> {
    let mut rest = s;
    // A tag is one word ending in a colon: `java:`, `java[1234]:`, `gc-app.service:`.
    for _ in 0..2 {
        let end = memchr::memchr(b' ', &rest[..rest.len().min(96)])?;
        if end > 1 && rest[end - 1] == b':' {
            return Some(&rest[end + 1..]);
        }
        rest = &rest[end + 1..];
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(line: &str) -> String {
        let mut scratch = Vec::new();
        String::from_utf8(strip(line.as_bytes(), &mut scratch).to_vec()).unwrap()
    }

    #[test]
    fn each_shippers_prefix_is_stripped() {
        let jvm = "[0.012s][info][gc] GC(0) Pause Young (Normal) (G1 Evacuation Pause) 24M->3M(256M) 2.841ms";
        let esc = jvm.replace('>', "\\u003e");
        for line in [
            format!("{{\"log\":\"{esc}\\n\",\"stream\":\"stdout\",\"time\":\"2026-12-01T10:58:16.1Z\"}}"),
            format!("2026-12-01T10:58:16.123456789Z stdout F {jvm}"),
            format!("2026-12-01T10:58:16.123456789+01:00 stderr P {jvm}"),
            format!("2026-12-01T10:58:16.123456789Z {jvm}"),
            format!("Dec 01 10:58:16 vm java[31560]: {jvm}"),
            format!("Dec  1 10:58:16 vm java: {jvm}"),
            format!("Dec 01 10:58:16 java[31560]: {jvm}"),
            format!("2026-12-01T10:58:16+0000 vm java[31560]: {jvm}"),
            format!("ev3dev#17|{jvm}"),
            format!("app_1  | {jvm}"),
            format!("```{jvm}"),
            jvm.to_string(),
        ] {
            assert_eq!(s(&line), jvm, "{line}");
        }
    }

    #[test]
    fn a_jdk8_record_after_any_prefix_is_found() {
        let rec = "1700.401: [Full GC (Ergonomics) [PSYoungGen: 226816K->8237K(289792K)]";
        assert_eq!(s(&format!("web_1  | {rec}")), rec);
        let dated = format!("2016-02-09T00:30:52.886-0500: {rec}");
        assert_eq!(s(&format!("node-7|{dated}")), dated);
    }

    #[test]
    fn jdk8_date_stamps_and_jvm_words_are_not_prefixes() {
        for line in [
            "2026-12-01T10:58:16.123+0000: 1.234: [GC (Allocation Failure) 1K->1K(2K), 0.01 secs]",
            "1.234: [GC pause (G1 Evacuation Pause) (young), 0.0123 secs]",
            "Java HotSpot(TM) 64-Bit Server VM (25.0-b70) for linux-amd64 JRE (1.8.0-b132)",
            "Memory: 4k page, physical 16314588k(1386880k free), swap 0k(0k free)",
            "garbage-first heap   total 1048576K, used 0K [0x00000000c0000000, 0x0000000100000000)",
            " [Times: user=0.03 sys=0.01, real=0.01 secs]",
            "secs]5075.405: [CMS5081.144: [CMS-concurrent-preclean: 14.653/31.189 secs]",
            "\"5062.472: [GC 5062.472: [ParNew: 261760K->261760K(261952K), 0.0000610",
            "Using G1",
        ] {
            assert_eq!(s(line), line);
        }
    }
}
