//! What can still be read of statistics a paste cut or escaped: the emit up to its last whole
//! broker or topic, and an emit written as an escaped JSON string inside another line (a
//! Prometheus label, a logger that quotes its message).
//!
//! A cut emit is read only up to the last member the cut did not reach at the top two levels
//! (a whole broker, a whole topic, a top-level figure): a broker or topic is there whole or
//! not at all, so no rule judges half an object. It is read only when at least one whole
//! broker came before the cut: the client's figures without any connection are too little to
//! judge, and a fragment that starts inside an object has no client to speak of.

/// Deepest level whose members a repair keeps: 1 the top-level figures, 2 each broker, topic
/// or the group's object.
const KEEP_DEPTH: usize = 2;

/// The cut object `head` closed after its last whole member at depth ≤ 2, when at least one
/// whole broker is in it; None when there is none (a refusal's place).
pub fn repair_cut(head: &[u8]) -> Option<Vec<u8>> {
    let head = &head[json_start(head)?..];
    let mut stack: Vec<u8> = Vec::new();
    let (mut in_str, mut esc) = (false, false);
    // The last cut point: where to end, and the closers it needs.
    let mut best: Option<(usize, Vec<u8>)> = None;
    for (i, &b) in head.iter().enumerate() {
        if in_str {
            match (esc, b) {
                (true, _) => esc = false,
                (false, b'\\') => esc = true,
                (false, b'"') => in_str = false,
                (false, b'\n') => break,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_str = true,
            b'{' | b'[' => stack.push(if b == b'{' { b'}' } else { b']' }),
            b'}' | b']' => {
                if stack.pop() != Some(b) {
                    return None;
                }
                if stack.is_empty() {
                    // Not cut after all.
                    return Some(head[..=i].to_vec());
                }
            }
            b',' if stack.len() <= KEEP_DEPTH => {
                best = Some((i, stack.iter().rev().copied().collect()));
            }
            _ => {}
        }
    }
    let (end, closers) = best?;
    let mut out = head[..end].to_vec();
    out.extend_from_slice(&closers);
    let v: serde_json::Value = serde_json::from_slice(&out).ok()?;
    let whole_broker = v
        .get("brokers")
        .and_then(|b| b.as_object())
        .is_some_and(|b| b.values().any(|x| x.is_object()));
    whole_broker.then_some(out)
}

/// Where the JSON object starts in `text`: the first `{` followed by a key (`{ "name"`), so a
/// prefix of braces that are not JSON (`{offset : 12||value : ip#{ "name": …`) is passed over.
pub fn json_start(text: &[u8]) -> Option<usize> {
    memchr::memchr_iter(b'{', text).find(|&i| {
        text[i + 1..]
            .iter()
            .find(|b| !b.is_ascii_whitespace())
            .is_some_and(|&b| b == b'"')
    })
}

/// The statistics object written as an escaped JSON string in `text` (`"{\"name\":…`),
/// unescaped once, up to the string's end (or the text's, when the paste cut it).
pub fn unescape_once(text: &[u8]) -> Option<Vec<u8>> {
    let start = memchr::memmem::find(text, b"{\\\"")?;
    memchr::memmem::find(&text[start..], b"\\\"brokers\\\"")?;
    let mut out = Vec::with_capacity(text.len() - start);
    let mut it = text[start..].iter().copied().peekable();
    while let Some(b) = it.next() {
        match b {
            b'\\' => match it.next() {
                Some(b'"') => out.push(b'"'),
                Some(b'\\') => out.push(b'\\'),
                Some(b'/') => out.push(b'/'),
                Some(b'n') => out.push(b'\n'),
                Some(b't') => out.push(b'\t'),
                // Anything else is an escape of the inner JSON's own string: kept as written.
                Some(c) => {
                    out.push(b'\\');
                    out.push(c);
                }
                None => break,
            },
            // An unescaped quote ends the string that held the object.
            b'"' => break,
            _ => out.push(b),
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cut_emit_keeps_its_whole_brokers_and_drops_the_one_cut() {
        let head = br#"x { "name": "c", "type": "consumer", "ts": 1, "brokers": { "a": { "state": "UP", "rtt": { "cnt": 0 } }, "b": { "state": "UP", "waitresp_cnt": 1, "int_latency": {"#;
        let fixed = repair_cut(head).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&fixed).unwrap();
        assert_eq!(v["brokers"].as_object().unwrap().len(), 1);
        assert_eq!(v["brokers"]["a"]["state"], "UP");
        assert_eq!(v["ts"], 1);
    }

    #[test]
    fn the_object_starts_at_its_first_key_not_at_a_prefix_brace() {
        let t = br#"data = {offset : 1||value : 10.0.0.1#{ "name": "p", "brokers": {"#;
        assert_eq!(json_start(t), Some(37));
    }

    #[test]
    fn a_cut_inside_the_first_broker_is_too_little() {
        let head = br#"{ "name": "c", "type": "producer", "ts": 1, "brokers": { "a": { "state": "INIT", "tx": 0, "rtt": { "min": 0,"#;
        assert_eq!(repair_cut(head), None);
        assert_eq!(repair_cut(br#""state": "UP", "rtt": 1 }, "b": {"#), None);
    }

    #[test]
    fn an_escaped_emit_is_unescaped_once_to_its_strings_end() {
        let t =
            br#"m{label="{\"name\":\"c\",\"brokers\":{\"a\":{\"nodename\":\"x\\\\y\"}}}",k="v"} 1"#;
        let u = unescape_once(t).unwrap();
        assert_eq!(
            u,
            br#"{"name":"c","brokers":{"a":{"nodename":"x\\y"}}}"#.to_vec()
        );
        assert_eq!(unescape_once(br#"{"name":"c"}"#), None);
    }
}
