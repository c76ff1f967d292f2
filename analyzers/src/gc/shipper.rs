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
//! A line with none of these is returned as it is, at the cost of a look at its first
//! bytes. JDK 8's own `-XX:+PrintGCDateStamps` stamp (`2026-…+0000: 1.234: [GC`) ends in
//! a colon and is never taken for a shipper's time.

/// The line without a shipper's prefix. `scratch` holds the unescaped text of a JSON
/// record (reused, so a long run of records allocates once).
pub(crate) fn strip<'a>(line: &'a [u8], scratch: &'a mut Vec<u8>) -> &'a [u8] {
    match line.first() {
        Some(b'{') => json_log(line, scratch).unwrap_or(line),
        Some(b'0'..=b'9') => after_rfc3339(line).unwrap_or(line),
        Some(b'A'..=b'Z') => after_syslog_stamp(line)
            .and_then(after_host_and_tag)
            .unwrap_or(line),
        _ => line,
    }
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
            jvm.to_string(),
        ] {
            assert_eq!(s(&line), jvm, "{line}");
        }
    }

    #[test]
    fn jdk8_date_stamps_and_jvm_words_are_not_prefixes() {
        for line in [
            "2026-12-01T10:58:16.123+0000: 1.234: [GC (Allocation Failure) 1K->1K(2K), 0.01 secs]",
            "1.234: [GC pause (G1 Evacuation Pause) (young), 0.0123 secs]",
            "Java HotSpot(TM) 64-Bit Server VM (25.0-b70) for linux-amd64 JRE (1.8.0-b132)",
            "Memory: 4k page, physical 16314588k(1386880k free), swap 0k(0k free)",
        ] {
            assert_eq!(s(line), line);
        }
    }
}
