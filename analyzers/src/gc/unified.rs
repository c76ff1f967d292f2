//! JDK 9+ unified logging (`-Xlog:gc…`): decorations, then one message per line.
//!
//! Decorations are whatever `-Xlog:…:decorators` chose, in any order, padded or not:
//! `[2024-02-01T11:09:50.737+0000][2.564s][79853115ms][info ][gc,start     ]`. Each is
//! recognised by its shape, so no decoration set is assumed.

use super::event::{
    fast_decimal, find2, parse_duration_ms, parse_heap_change, parse_number, parse_size, Collector,
    Event, HeapChange, PauseClass,
};

/// What the decorations of one line said. Times are kept as text and parsed only for
/// lines that carry an event: most anchored lines do not (the hot path).
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub(crate) struct Decorations<'a> {
    /// Numeric time decorations (`2.564s`, `79853115ms`, `1706785790737ms`, `…ns`).
    numeric: [Option<&'a str>; 2],
    /// ISO-8601 time (`time`, `utctime`).
    iso: Option<&'a str>,
    pub level: Option<&'a str>,
    pub tags: Option<&'a str>,
    /// At least one `[…]` decoration was recognised.
    pub decorated: bool,
}

impl Decorations<'_> {
    /// Seconds since JVM start (`uptime`, `uptimemillis`, `uptimenanos`).
    pub fn uptime_s(&self) -> Option<f64> {
        self.numeric
            .iter()
            .flatten()
            .filter_map(|t| numeric_time(t))
            .find_map(|(v, epoch)| (!epoch).then_some(v))
    }

    /// Epoch seconds (`time`, `utctime`, `timemillis`, `timenanos`).
    pub fn wall_s(&self) -> Option<f64> {
        self.iso.and_then(parse_iso8601).or_else(|| {
            self.numeric
                .iter()
                .flatten()
                .filter_map(|t| numeric_time(t))
                .find_map(|(v, epoch)| epoch.then_some(v))
        })
    }

    /// The line has some time decoration.
    pub fn timed(&self) -> bool {
        self.numeric[0].is_some() || self.iso.is_some()
    }
}

/// `2.564s` / `79853115ms` / `…ns` → (seconds, since the epoch?). timemillis and
/// timenanos count from 1970 (~1.7e12 ms); the uptime forms are small.
fn numeric_time(t: &str) -> Option<(f64, bool)> {
    if let Some(n) = t.strip_suffix("ns") {
        let v: f64 = n.parse().ok()?;
        Some((v / 1e9, v > 1e17))
    } else if let Some(n) = t.strip_suffix("ms") {
        let v: f64 = fast_decimal(n.as_bytes()).or_else(|| n.parse().ok())?;
        Some((v / 1e3, v > 1e11))
    } else {
        // `uptime` is the one numeric decoration with decimals: `0,176s` in a German locale.
        let v = parse_number(t.strip_suffix('s')?)?;
        Some((v, false))
    }
}

/// Split a line into its decorations and its message.
pub(crate) fn split_decorations(line: &str) -> (Decorations<'_>, &str) {
    let mut d = Decorations::default();
    let mut rest = line;
    while rest.as_bytes().first() == Some(&b'[') {
        let body = &rest[1..];
        let Some(close) = memchr::memchr(b']', body.as_bytes()) else {
            break;
        };
        let token = body[..close].trim_ascii();
        if !classify(token, &mut d) {
            break;
        }
        d.decorated = true;
        rest = &body[close + 1..];
    }
    (d, rest.strip_prefix(' ').unwrap_or(rest))
}

fn classify<'a>(token: &'a str, d: &mut Decorations<'a>) -> bool {
    let b = token.as_bytes();
    let Some(&first) = b.first() else {
        return false;
    };
    if first.is_ascii_digit() {
        if b.len() >= 11 && b[4] == b'-' && b[10] == b'T' {
            d.iso = Some(token);
            return true;
        }
        if b[b.len() - 1] == b's' {
            if b[..b.len() - 1]
                .iter()
                .all(|c| c.is_ascii_digit() || matches!(*c, b'.' | b',' | b'm' | b'n'))
            {
                let slot = if d.numeric[0].is_none() { 0 } else { 1 };
                d.numeric[slot] = Some(token);
                return true;
            }
            return false;
        }
        // pid / tid decorations: digits only.
        return b.iter().all(u8::is_ascii_digit);
    }
    if matches!(
        token,
        "info" | "debug" | "trace" | "warning" | "error" | "develop"
    ) {
        d.level = Some(token);
        return true;
    }
    if b.iter()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b',' || *c == b'_')
    {
        d.tags = Some(token);
        return true;
    }
    false
}

/// `2024-02-01T11:09:50.737+0000` (or `Z`, or `+00:00`) → epoch seconds.
pub(crate) fn parse_iso8601(s: &str) -> Option<f64> {
    let (date, rest) = s.split_once('T')?;
    let mut dp = date.split('-');
    let y: i64 = dp.next()?.parse().ok()?;
    let mo: i64 = dp.next()?.parse().ok()?;
    let day: i64 = dp.next()?.parse().ok()?;
    // Time runs up to the zone: '+', '-', or 'Z'.
    let zone_at = rest.find(['+', '-', 'Z']).unwrap_or(rest.len());
    let (time, zone) = rest.split_at(zone_at);
    let mut tp = time.split(':');
    let h: f64 = tp.next()?.parse().ok()?;
    let mi: f64 = tp.next()?.parse().ok()?;
    let sec = parse_number(tp.next().unwrap_or("0"))?;
    let offset_s = match zone.as_bytes().first() {
        Some(sign @ (b'+' | b'-')) => {
            let digits: String = zone[1..].chars().filter(char::is_ascii_digit).collect();
            if digits.len() < 4 {
                return None;
            }
            let oh: f64 = digits[..2].parse().ok()?;
            let om: f64 = digits[2..4].parse().ok()?;
            let o = oh * 3600.0 + om * 60.0;
            if *sign == b'+' {
                o
            } else {
                -o
            }
        }
        _ => 0.0,
    };
    if !(1..=12).contains(&mo) || !(1..=31).contains(&day) {
        return None;
    }
    Some(days_from_civil(y, mo, day) as f64 * 86400.0 + h * 3600.0 + mi * 60.0 + sec - offset_s)
}

/// Days since 1970-01-01 (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146097 + doe - 719468
}

/// A message with its `GC(N)` id split off.
pub(crate) fn split_gc_id(message: &str) -> (Option<u64>, &str) {
    let b = message.as_bytes();
    if b.starts_with(b"GC(") {
        if let Some(close) = b[3..].iter().position(|&c| c == b')') {
            if let Ok(id) = message[3..3 + close].parse() {
                return (Some(id), message[3 + close + 1..].trim_ascii_start());
            }
        }
    }
    (None, message)
}

/// `s` split at its last space (a byte loop: the reverse char searcher's set-up cost
/// more than the search on one line's words).
#[inline]
fn rsplit_space(s: &str) -> Option<(&str, &str)> {
    let i = s.as_bytes().iter().rposition(|&c| c == b' ')?;
    Some((&s[..i], &s[i + 1..]))
}

/// The event one unified message carries, if any (the message has no `GC(N)`).
pub(crate) fn parse_message(m: &str) -> Option<Event<'_>> {
    let m = m.trim_ascii_end();
    // Generational ZGC prefixes phases with the generation: `Y: `, `O: `.
    let body = m
        .strip_prefix("Y: ")
        .or_else(|| m.strip_prefix("O: "))
        .unwrap_or(m);
    if body.starts_with("Pause ") {
        return parse_pause(m);
    }
    if let Some(rest) = m.strip_prefix("Using ") {
        let c = if rest.starts_with("G1") {
            Collector::G1
        } else if rest.starts_with("Parallel") {
            Collector::Parallel
        } else if rest.starts_with("Serial") {
            Collector::Serial
        } else if rest.starts_with("Concurrent Mark Sweep") {
            Collector::Cms
        } else if rest.starts_with("The Z Garbage Collector") {
            Collector::Zgc
        } else if rest.starts_with("Shenandoah") {
            Collector::Shenandoah
        } else {
            return None;
        };
        return Some(Event::Collector(c));
    }
    if body.starts_with("Out Of Memory") {
        return Some(Event::OutOfMemory);
    }
    if m == "To-space exhausted" {
        return Some(Event::ToSpaceExhausted);
    }
    if let Some(v) = m.strip_prefix("Version: ") {
        return Some(Event::Jdk(v.trim()));
    }
    if let Some(v) = m.strip_prefix("Heap Max Capacity: ") {
        return parse_size(v).map(Event::MaxHeap);
    }
    if let Some(v) = body.strip_prefix("Max Capacity: ") {
        // ZGC: `Max Capacity: 3954M(100%)`.
        return parse_size(v.split('(').next()?).map(Event::MaxHeap);
    }
    if let Some(v) = m.strip_prefix("Maximum heap ") {
        return parse_size(v.split_whitespace().next()?).map(Event::MaxHeap);
    }
    if let Some(v) = m.strip_prefix("Initialize Shenandoah heap: ") {
        // `8192M initial, 8192M min, 8192M max`
        let max = v.split(", ").find_map(|p| p.strip_suffix(" max"))?;
        return parse_size(max).map(Event::MaxHeap);
    }
    if m.starts_with("Heap address: ") {
        // `Heap address: 0x…, size: 4096 MB, Compressed Oops mode: …`: the reservation.
        let size = m.split(", size: ").nth(1)?;
        let mb: f64 = size.split_whitespace().next()?.parse().ok()?;
        return Some(Event::MaxHeap(mb * 1048576.0));
    }
    if let Some(v) = m
        .strip_prefix("Heap region size: ")
        .or_else(|| m.strip_prefix("Heap Region Size: "))
    {
        return parse_size(v).map(Event::RegionSize);
    }
    if let Some(v) = m.strip_prefix("Old regions: ") {
        let (b, a) = v.split_once("->")?;
        return Some(Event::OldRegions {
            before: b.trim().parse().ok()?,
            after: a.split('(').next()?.trim().parse().ok()?,
        });
    }
    if let Some(v) = m.strip_prefix("Humongous regions: ") {
        let (_, a) = v.split_once("->")?;
        return Some(Event::HumongousRegions {
            after: a.split('(').next()?.trim().parse().ok()?,
        });
    }
    for prefix in ["ParOldGen: ", "PSOldGen: ", "Tenured: ", "CMS: "] {
        if let Some(v) = m.strip_prefix(prefix) {
            let h = parse_heap_change(v.split_whitespace().next()?)?;
            return Some(Event::OldGen {
                before: h.before,
                after: h.after,
                capacity: h.capacity,
            });
        }
    }
    if m.starts_with("PSYoungGen: ") {
        return Some(Event::Collector(Collector::Parallel));
    }
    if m.starts_with("DefNew: ") {
        return Some(Event::Collector(Collector::Serial));
    }
    if m.starts_with("ParNew: ") {
        return Some(Event::Collector(Collector::Cms));
    }
    if let Some(rest) = body.strip_prefix("Allocation Stall (") {
        let ms = parse_duration_ms(rest.rsplit(' ').next()?)?;
        return Some(Event::AllocationStall { ms });
    }
    if let Some(rest) = body.strip_prefix("Allocation Stalls:") {
        let n: u64 = rest
            .split_whitespace()
            .filter_map(|t| t.parse::<u64>().ok())
            .sum();
        return Some(Event::AllocationStallsCounted(n));
    }
    for (prefix, young) in [
        ("Garbage Collection (", false),
        ("Minor Collection (", true),
        ("Major Collection (", false),
    ] {
        if let Some(rest) = m.strip_prefix(prefix) {
            return parse_zgc_cycle(rest, young);
        }
    }
    if let Some(rest) = m.strip_prefix("Concurrent cleanup ") {
        // Shenandoah: the heap once the cycle freed its collection set.
        let heap = parse_heap_change(rest.split_whitespace().next()?)?;
        return Some(Event::Cycle { young: false, heap });
    }
    if m.starts_with("Cancelling GC: Allocation Failure") {
        return Some(Event::ConcurrentFailure(
            "Shenandoah cancelled a concurrent cycle: allocation failure",
        ));
    }
    if m.starts_with("Concurrent Mark Abort") {
        return Some(Event::ConcurrentFailure(
            "G1 concurrent mark aborted by a full GC",
        ));
    }
    if m.starts_with("Desired survivor size ") {
        let i = m.find("new threshold ")?;
        return parse_tenuring(&m[i + "new threshold ".len()..]);
    }
    None
}

/// `1 (max threshold 15)` (unified) or `1 (max 15)` (JDK 8).
pub(crate) fn parse_tenuring(s: &str) -> Option<Event<'_>> {
    let (t, rest) = s.split_once(' ')?;
    let max = rest
        .trim_start_matches("(max threshold ")
        .trim_start_matches("(max ")
        .trim_end_matches(')');
    Some(Event::Tenuring {
        threshold: t.parse().ok()?,
        max: max.trim().parse().ok()?,
    })
}

/// `(Allocation Rate) 3334M(84%)->2230M(56%)` (optionally ` 0.019s` after).
fn parse_zgc_cycle(rest: &str, young: bool) -> Option<Event<'_>> {
    let token = rest.split_whitespace().find(|t| t.contains("->"))?;
    let (l, r) = token.split_once("->")?;
    let before = parse_size(l.split('(').next()?)?;
    let (a, pct) = r.split_once('(')?;
    let after = parse_size(a)?;
    let pct: f64 = pct
        .trim_end_matches(')')
        .trim_end_matches('%')
        .parse()
        .ok()?;
    Some(Event::Cycle {
        young,
        heap: HeapChange {
            before,
            after,
            capacity: None,
            after_pct_of_max: Some(pct),
        },
    })
}

/// G1's young sub-kinds, kept in the pause type's name.
const G1_YOUNG_SUBKINDS: [&[u8]; 4] = [b"Normal", b"Concurrent Start", b"Prepare Mixed", b"Mixed"];

/// `Pause Young (Normal) (G1 Evacuation Pause) [(Evacuation Failure…)] 1913M->1846M(2048M) 12.345ms`
fn parse_pause(m: &str) -> Option<Event<'_>> {
    let (head, last) = rsplit_space(m)?;
    // `gc,start` lines carry no duration: the summary line will.
    let ms = parse_duration_ms(last)?;
    let mut head = head.trim_ascii_end();
    let mut heap = None;
    if let Some((h, tok)) = rsplit_space(head) {
        if find2(tok.as_bytes(), b"->").is_some() {
            heap = parse_heap_change(tok);
            head = h.trim_ascii_end();
        }
    }
    Some(pause_event(head, heap, ms))
}

/// The pause whose line reads `head` (up to its heap change and duration), `heap`, `ms`:
/// kind, class, sub-kind, cause and evacuation failure from its words.
pub(crate) fn pause_event(head: &str, heap: Option<HeapChange>, ms: f64) -> Event<'_> {
    let p = pause_parts(head.as_bytes());
    Event::Pause {
        kind: &head[..p.kind_end],
        subkind: p.subkind.map(|(a, b)| &head[a..b]),
        cause: p.cause.map(|(a, b)| &head[a..b]),
        class: p.class,
        heap,
        ms,
        evacuation_failure: p.evacuation_failure,
    }
}

/// What a pause's words say, as offsets into them (every one next to an ASCII byte, so
/// a char boundary of the text they were taken from).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct PauseParts {
    /// The kind is `head[..kind_end]`.
    pub kind_end: usize,
    pub subkind: Option<(usize, usize)>,
    pub cause: Option<(usize, usize)>,
    pub class: PauseClass,
    pub evacuation_failure: bool,
}

/// [`pause_event`]'s reading of `head`, on its bytes.
pub(crate) fn pause_parts(head: &[u8]) -> PauseParts {
    let name_end = find_space_paren(head).unwrap_or(head.len());
    let kind = &head[..name_end];
    let base = kind
        .strip_prefix(b"Y: ")
        .or_else(|| kind.strip_prefix(b"O: "))
        .unwrap_or(kind);
    let class = match base {
        // JDK 9's G1 named its young pauses `Pause Initial Mark` and `Pause Mixed`.
        b"Pause Young" | b"Pause Initial Mark" | b"Pause Mixed" => PauseClass::Young,
        b"Pause Full" => PauseClass::Full,
        b"Pause Degenerated GC" => PauseClass::Degenerated,
        _ => PauseClass::Other,
    };
    let mut subkind = None;
    let mut cause = None;
    let mut evacuation_failure = false;
    for (a, b) in paren_group_spans(&head[name_end..]) {
        let (a, b) = (name_end + a, name_end + b);
        let group = &head[a..b];
        if group.starts_with(b"Evacuation Failure") {
            evacuation_failure = true;
        } else if subkind.is_none()
            && ((cause.is_none() && G1_YOUNG_SUBKINDS.contains(&group))
                || class == PauseClass::Degenerated)
        {
            // G1's young sub-kind, or the phase a Shenandoah cycle degenerated at.
            subkind = Some((a, b));
        } else if cause.is_none() && class != PauseClass::Other {
            cause = Some((a, b));
        }
    }
    PauseParts {
        kind_end: name_end,
        subkind,
        cause,
        class,
        evacuation_failure,
    }
}

/// Where ` (` first starts: [`find2`] by its rarer second byte.
fn find_space_paren(h: &[u8]) -> Option<usize> {
    let mut from = 0;
    while let Some(j) = h[from..].iter().position(|&c| c == b'(') {
        let i = from + j;
        if i > 0 && h[i - 1] == b' ' {
            return Some(i - 1);
        }
        from = i + 1;
    }
    None
}

/// Top-level `(…)` groups, nested parentheses kept: `(System.gc())`.
pub(crate) fn paren_groups(s: &str) -> impl Iterator<Item = &str> {
    paren_group_spans(s.as_bytes()).map(move |(a, b)| &s[a..b])
}

/// [`paren_groups`] as offsets: each group is `s[a..b]`, between its parentheses.
fn paren_group_spans(b: &[u8]) -> impl Iterator<Item = (usize, usize)> + '_ {
    let mut i = 0;
    std::iter::from_fn(move || {
        i += b[i.min(b.len())..].iter().position(|&c| c == b'(')?;
        let start = i + 1;
        let mut depth = 0;
        // From parenthesis to parenthesis (a tight loop: the text between is skipped).
        while let Some(j) = b[i..].iter().position(|&c| c == b'(' || c == b')') {
            i += j;
            if b[i] == b'(' {
                depth += 1;
            } else {
                depth -= 1;
                if depth == 0 {
                    let g = (start, i);
                    i += 1;
                    return Some(g);
                }
            }
            i += 1;
        }
        i = b.len();
        None
    })
}

/// A hint of the collector from a pause's own vocabulary (logs without `Using …`).
pub(crate) fn collector_from_pause(
    kind: &str,
    subkind: Option<&str>,
    cause: Option<&str>,
) -> Option<Collector> {
    let base = kind.trim_start_matches("Y: ").trim_start_matches("O: ");
    if kind.starts_with("Y: ") || kind.starts_with("O: ") {
        return Some(Collector::ZgcGenerational);
    }
    match base {
        "Pause Mark Start" | "Pause Mark End" | "Pause Relocate Start" => Some(Collector::Zgc),
        "Pause Init Mark"
        | "Pause Final Mark"
        | "Pause Init Update Refs"
        | "Pause Final Update Refs"
        | "Pause Final Roots"
        | "Pause Degenerated GC" => Some(Collector::Shenandoah),
        "Pause Remark" | "Pause Cleanup" | "Pause Initial Mark" | "Pause Mixed" => {
            Some(Collector::G1)
        }
        _ if subkind.is_some() => Some(Collector::G1),
        _ if cause.is_some_and(|c| c.starts_with("G1 ")) => Some(Collector::G1),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decorations_any_order_padded_or_not() {
        let (d, m) = split_decorations(
            "[2024-02-01T11:09:50.737+0000][2.564s][info ][gc,start     ] GC(3) Pause Young",
        );
        assert_eq!(d.uptime_s(), Some(2.564));
        assert_eq!(d.wall_s(), Some(1706785790.737));
        assert_eq!(d.level, Some("info"));
        assert_eq!(d.tags, Some("gc,start"));
        assert_eq!(m, "GC(3) Pause Young");
        let (d, _) = split_decorations("[2021-03-13T03:37:40.047+0530][79853115ms] GC(8645) x");
        assert_eq!(d.uptime_s(), Some(79853.115));
        let (d, m) = split_decorations("[2026-12-01T10:58:57.006+0000][0,176s][info][gc] GC(0) x");
        assert_eq!(d.uptime_s(), Some(0.176));
        assert_eq!(m, "GC(0) x");
        let (d, _) = split_decorations("[1796021929339ms][2475ms] GC(23) To-space exhausted");
        assert_eq!(d.uptime_s(), Some(2.475));
        assert_eq!(d.wall_s(), Some(1796021929.339));
        let (d, m) = split_decorations("61273.557: [Full GC (Metadata GC Threshold)");
        assert!(!d.decorated);
        assert!(m.starts_with("61273"));
    }

    #[test]
    fn pause_lines_of_each_jdk() {
        let e = parse_message(
            "Pause Young (Normal) (G1 Evacuation Pause) (Evacuation Failure: Allocation) 254M->254M(256M) 6.463ms",
        )
        .unwrap();
        match e {
            Event::Pause {
                kind,
                subkind,
                cause,
                class,
                heap,
                ms,
                evacuation_failure,
            } => {
                assert_eq!(kind, "Pause Young");
                assert_eq!(subkind, Some("Normal"));
                assert_eq!(cause, Some("G1 Evacuation Pause"));
                assert_eq!(class, PauseClass::Young);
                assert_eq!(heap.unwrap().after, 254.0 * 1048576.0);
                assert_eq!(ms, 6.463);
                assert!(evacuation_failure);
            }
            other => panic!("{other:?}"),
        }
        // gc,start lines (no duration) and Shenandoah's statistics table are not pauses.
        assert!(parse_message("Pause Young (Normal) (G1 Evacuation Pause)").is_none());
        assert!(parse_message("Pause Init Mark (G)                 258 us").is_none());
        match parse_message("Pause Full (System.gc()) 10M->5M(20M) 30.5ms").unwrap() {
            Event::Pause { cause, class, .. } => {
                assert_eq!(cause, Some("System.gc()"));
                assert_eq!(class, PauseClass::Full);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn zgc_cycles_keep_the_percentage_of_max() {
        match parse_message("Garbage Collection (Allocation Rate) 3334M(84%)->2230M(56%)").unwrap()
        {
            Event::Cycle { young, heap } => {
                assert!(!young);
                assert_eq!(heap.after_pct_of_max, Some(56.0));
            }
            other => panic!("{other:?}"),
        }
    }
}
