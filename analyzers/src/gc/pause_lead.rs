//! The pause reader's first step ([`super::pause_line`]): what a unified line says before
//! its message — the decorations (as `unified::split_decorations` classifies them) and
//! `GC(N)` (as `unified::split_gc_id` reads it) — read in one pass over the bytes, for the
//! forms read exactly as the general path reads them.

use super::pause_numbers::{digit_run, epoch_ms, numeric_time, quick_time};
use crate::engine::bytes_eq::find_byte;

/// What a unified line says before its message: where the message starts (`at`), the
/// uptime, whether an ISO time was among the decorations, and the `GC(N)` id.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Lead {
    pub(super) at: usize,
    pub(super) uptime: Option<f64>,
    pub(super) iso_time: bool,
    pub(super) id: Option<u64>,
}

/// Why [`lead`] stopped.
pub(super) enum Stop {
    /// A unified line of other tags than `gc`'s (its message not read).
    OtherTags,
    /// A form this reader does not take.
    GiveUp,
}

/// The decorations (as `split_decorations` classifies them) and `GC(N)` (as
/// `split_gc_id` reads it) of the line at the start of `b`.
///
/// `FORWARD`: `b` runs past the line's end, into the lines after it. What is read then
/// is what reading the line alone reads: every form taken stops at a byte a line does
/// not end with (digits, `ms]`, `)`, lower-case letters), the tokens found up to a `]`
/// are taken only when they hold nothing else than a tag's or a level's letters (no
/// blank for the trim to remove, no line end), and blanks after `GC(N)` that reach a
/// `\r` or `\n` give up.
#[inline(always)]
pub(super) fn lead<const FORWARD: bool>(b: &[u8]) -> Result<Lead, Stop> {
    let give_up = Err(Stop::GiveUp);
    if b.first() != Some(&b'[') {
        return give_up;
    }
    let mut at = 0;
    let mut numeric: [Option<(f64, bool)>; 2] = [None, None];
    let mut numeric_seen = 0;
    let mut tags: Option<&[u8]> = None;
    // An ISO time's token is checked at two places only: it could hold anything.
    let mut iso_time = false;
    while b.get(at) == Some(&b'[') {
        let slot = usize::from(numeric_seen > 0);
        // `[1796021927326ms]`: the wall clock beside an uptime, whose value this
        // reader never uses (it gives a line without uptime up). Not tried after a
        // number: a second epoch stamp is no line's (`quick_time` reads one as well).
        if numeric_seen == 0 {
            if let Some(next) = epoch_ms(b, at + 1) {
                numeric[slot] = Some((f64::NAN, true));
                numeric_seen += 1;
                at = next;
                continue;
            }
        }
        // The usual `[123.456s]` or `[462ms]`, read as it is scanned.
        if let Some((v, next)) = quick_time(b, at + 1) {
            numeric[slot] = Some(v);
            numeric_seen += 1;
            at = next;
            continue;
        }
        let Some(close) = find_byte(&b[at + 1..], b']') else {
            return give_up;
        };
        let raw = &b[at + 1..at + 1 + close];
        if FORWARD && !forward_token(raw) {
            return give_up;
        }
        let token = raw.trim_ascii();
        let Some(&first) = token.first() else {
            return give_up;
        };
        if first.is_ascii_digit() {
            if token.len() >= 11 && token[4] == b'-' && token[10] == b'T' {
                // An ISO time: needed only without an uptime, when this parser gives up.
                iso_time = true;
            } else if token[token.len() - 1] == b's' {
                let Some(v) = numeric_time(token) else {
                    return give_up;
                };
                numeric[slot] = Some(v);
                numeric_seen += 1;
            } else if !token.iter().all(u8::is_ascii_digit) {
                return give_up;
            }
        } else if matches!(
            token,
            b"info" | b"debug" | b"trace" | b"warning" | b"error" | b"develop"
        ) {
        } else if token
            .iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b',' || *c == b'_')
        {
            tags = Some(token);
        } else {
            return give_up;
        }
        at += close + 2;
    }
    if at == 0 {
        return give_up;
    }
    if tags.is_some_and(|t| !t.starts_with(b"gc")) {
        return Err(Stop::OtherTags);
    }
    if b.get(at) == Some(&b' ') {
        at += 1;
    }
    // `GC(N)`, as `split_gc_id` reads it (digits only here).
    let mut id = None;
    if b[at..].starts_with(b"GC(") {
        // Up to 16 digits here (the general path takes 19: it reads the rest).
        let Some((n, digits)) = digit_run(&b[at + 3..]) else {
            return give_up;
        };
        if digits == 0 || b.get(at + 3 + digits) != Some(&b')') {
            return give_up;
        }
        id = Some(n);
        at += 3 + digits + 1;
        while let Some(&c) = b.get(at) {
            if !c.is_ascii_whitespace() {
                break;
            }
            if FORWARD && (c == b'\n' || c == b'\r') {
                return give_up;
            }
            at += 1;
        }
    }
    // The uptime, as `Decorations::uptime_s` picks it; without one the wall clock may
    // be in use, and the general path reads the line.
    let uptime = numeric
        .iter()
        .flatten()
        .find_map(|&(v, epoch)| (!epoch).then_some(v));
    Ok(Lead {
        at,
        uptime,
        iso_time,
        id,
    })
}

/// A decoration's token (between `[` and `]`) that [`lead`] takes when reading forward:
/// a level or tags (a lower-case letter, then letters, digits, `,`, `_` and the blanks
/// the JVM pads them with), or a number or an ISO time (a digit, then digits and
/// `-T:.+`). Neither holds a line end, nor any byte but ASCII.
#[inline(always)]
fn forward_token(raw: &[u8]) -> bool {
    match raw.first() {
        Some(c) if c.is_ascii_lowercase() => raw.iter().all(|&c| {
            c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, b',' | b'_' | b' ')
        }),
        Some(c) if c.is_ascii_digit() => raw
            .iter()
            .all(|&c| c.is_ascii_digit() || matches!(c, b'-' | b'T' | b':' | b'.' | b'+')),
        _ => false,
    }
}
