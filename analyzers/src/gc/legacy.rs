//! JDK 8 (and older) `-XX:+PrintGCDetails` logs: bracketed records that may span many
//! lines, with nested sub-records and, in G1 and CMS logs, concurrent-phase records
//! printed in the middle of a pause record:
//!
//! ```text
//! 61273.557: [Full GC (Metadata GC Threshold) 61273.557: [GC concurrent-root-region-scan-start]
//! 61273.560: [GC concurrent-mark-start]
//!  1604M->1178M(4096M), 5.7141264 secs]
//! ```
//!
//! So records are assembled by bracket depth across lines, keeping only the text at
//! the record's own level (and, one level down, the generation sub-records).

use super::event::{
    parse_heap_change, parse_number, parse_size, Collector, Event, HeapChange, PauseClass,
};
use super::unified::{paren_groups, parse_iso8601, parse_tenuring};

/// Text kept per record level; longer records keep their head (constant memory).
const TEXT_CAP: usize = 4096;
/// A record still open after this many lines is abandoned (a truncated or garbled log).
const MAX_RECORD_LINES: u32 = 10_000;

/// A G1 pause waits for the `[Eden: … Heap: a(b)->c(d)]` line that follows it.
#[derive(Debug, Default)]
struct Pending {
    kind: String,
    subkind: Option<String>,
    cause: Option<String>,
    class: Option<PauseClass>,
    heap: Option<HeapChange>,
    ms: f64,
    evacuation_failure: bool,
    uptime_s: Option<f64>,
    wall_s: Option<f64>,
    line: u64,
}

/// Times of a legacy event: the record's `uptime:` and date stamp, and its line.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct LegacyStamp {
    pub uptime_s: Option<f64>,
    pub wall_s: Option<f64>,
    pub line: u64,
}

#[derive(Debug, Default)]
pub(crate) struct LegacyAssembler {
    depth: u32,
    /// The open record's own text (depth 1).
    text: String,
    /// The open depth-2 sub-record's text (`PSYoungGen: …`, `CMS: …`).
    sub: String,
    prefix: String,
    stamp: LegacyStamp,
    record_lines: u32,
    pending: Option<Pending>,
    /// Records abandoned (unbalanced brackets).
    pub abandoned: u64,
}

impl LegacyAssembler {
    /// Feed one line; events go to `emit` with their time stamp.
    pub fn line(
        &mut self,
        line: &str,
        line_no: u64,
        emit: &mut dyn FnMut(LegacyStamp, &Event<'_>),
    ) {
        let stamp_here = LegacyStamp {
            line: line_no,
            ..self.stamp
        };
        // Whole-line facts, wherever they sit.
        // The banner: `OpenJDK 64-Bit Server VM (25.352-b08) … JRE (1.8.0_352-b08), …`
        if line.contains(" VM (") {
            if let Some(v) = line.split("JRE (").nth(1).and_then(|s| s.split(')').next()) {
                emit(stamp_here, &Event::Jdk(v));
            }
        }
        if let Some(flags) = line.strip_prefix("CommandLine flags: ") {
            for f in flags.split_whitespace() {
                if let Some(v) = f.strip_prefix("-XX:MaxHeapSize=") {
                    if let Some(b) = parse_size(v) {
                        emit(stamp_here, &Event::MaxHeap(b));
                    }
                }
                let c = match f {
                    "-XX:+UseG1GC" => Some(Collector::G1),
                    "-XX:+UseParallelGC" | "-XX:+UseParallelOldGC" => Some(Collector::Parallel),
                    "-XX:+UseConcMarkSweepGC" => Some(Collector::Cms),
                    "-XX:+UseSerialGC" => Some(Collector::Serial),
                    _ => None,
                };
                if let Some(c) = c {
                    emit(stamp_here, &Event::Collector(c));
                }
            }
            return;
        }
        if line.contains("java.lang.OutOfMemoryError") {
            emit(stamp_here, &Event::OutOfMemory);
        }
        if line.contains("ParNew (promotion failed)") {
            emit(
                stamp_here,
                &Event::ConcurrentFailure(
                    "CMS promotion failed (no room in the old generation for a young GC's survivors)",
                ),
            );
        }
        if line.contains("concurrent mode failure") {
            emit(
                stamp_here,
                &Event::ConcurrentFailure(
                    "CMS concurrent mode failure (old generation filled first)",
                ),
            );
        }
        if let Some(i) = line.find("new threshold ") {
            if let Some(e) = parse_tenuring(&line[i + "new threshold ".len()..]) {
                emit(stamp_here, &e);
            }
        }
        for &b in line.as_bytes() {
            match (self.depth, b) {
                (0, b'[') => {
                    self.depth = 1;
                    self.text.clear();
                    self.record_lines = 0;
                    self.stamp = stamp_of(&self.prefix, line_no);
                    self.prefix.clear();
                }
                (0, _) => push_capped(&mut self.prefix, b),
                (_, b'[') => {
                    self.depth += 1;
                    if self.depth == 2 {
                        self.sub.clear();
                    }
                }
                (_, b']') => {
                    self.depth -= 1;
                    if self.depth == 1 {
                        self.close_sub(emit);
                    } else if self.depth == 0 {
                        self.close_record(emit);
                    }
                }
                (1, _) => push_capped(&mut self.text, b),
                (2, _) => push_capped(&mut self.sub, b),
                _ => {}
            }
        }
        if self.depth == 0 {
            self.prefix.clear();
        } else {
            push_capped(&mut self.text, b' ');
            self.record_lines += 1;
            if self.record_lines > MAX_RECORD_LINES {
                self.depth = 0;
                self.abandoned += 1;
            }
        }
    }

    /// End of input: a pending G1 pause is emitted without its heap line.
    pub fn finish(&mut self, emit: &mut dyn FnMut(LegacyStamp, &Event<'_>)) {
        self.flush_pending(emit);
        if self.depth > 0 {
            self.abandoned += 1;
            self.depth = 0;
        }
    }

    /// A record is open at the end of the input (a truncated log).
    pub fn open_record(&self) -> bool {
        self.depth > 0
    }

    fn close_sub(&mut self, emit: &mut dyn FnMut(LegacyStamp, &Event<'_>)) {
        let s = self.sub.trim();
        let stamp = self.stamp;
        for (prefix, old) in [
            ("PSYoungGen:", false),
            ("ParNew", false),
            ("DefNew", false),
            ("ParOldGen:", true),
            ("PSOldGen:", true),
            ("CMS:", true),
            ("Tenured:", true),
        ] {
            if let Some(rest) = s.strip_prefix(prefix) {
                let c = match prefix {
                    "PSYoungGen:" | "ParOldGen:" | "PSOldGen:" => Collector::Parallel,
                    "ParNew" | "CMS:" => Collector::Cms,
                    _ => Collector::Serial,
                };
                emit(stamp, &Event::Collector(c));
                if old {
                    if let Some(h) = rest
                        .split_whitespace()
                        .find(|t| t.contains("->"))
                        .and_then(|t| parse_heap_change(t.trim_end_matches(',')))
                    {
                        emit(
                            stamp,
                            &Event::OldGen {
                                before: h.before,
                                after: h.after,
                                capacity: h.capacity,
                            },
                        );
                    }
                }
                return;
            }
        }
    }

    fn close_record(&mut self, emit: &mut dyn FnMut(LegacyStamp, &Event<'_>)) {
        let text = std::mem::take(&mut self.text);
        let t = text.trim();
        if let Some(rest) = t.strip_prefix("Eden:") {
            // G1 details: `Eden: … Heap: 3038.2M(3072.0M)->2748.7M(3072.0M)` for the
            // pause just closed.
            if let (Some(p), Some(h)) = (self.pending.as_mut(), rest.split("Heap: ").nth(1)) {
                p.heap = h.split_whitespace().next().and_then(parse_heap_change);
            }
            self.flush_pending(emit);
        } else if t.starts_with("GC concurrent-mark-abort") {
            emit(
                self.stamp,
                &Event::ConcurrentFailure("G1 concurrent mark aborted by a full GC"),
            );
        } else if t.starts_with("GC concurrent-") || t.starts_with("CMS-concurrent-") {
            // Concurrent phases are not pauses.
        } else if let Some(p) = parse_record(t, self.stamp) {
            self.flush_pending(emit);
            if p.class == Some(PauseClass::Young) && p.kind == "GC pause" && p.heap.is_none() {
                // PrintGCDetails G1: the heap comes on the `[Eden: …]` line.
                self.pending = Some(p);
            } else {
                self.pending = Some(p);
                self.flush_pending(emit);
            }
        }
        self.text = text;
        self.text.clear();
    }

    fn flush_pending(&mut self, emit: &mut dyn FnMut(LegacyStamp, &Event<'_>)) {
        let Some(p) = self.pending.take() else { return };
        let stamp = LegacyStamp {
            uptime_s: p.uptime_s,
            wall_s: p.wall_s,
            line: p.line,
        };
        if p.kind == "GC pause" || p.kind == "GC remark" || p.kind == "GC cleanup" {
            emit(stamp, &Event::Collector(Collector::G1));
        }
        if p.kind.starts_with("GC (CMS") {
            emit(stamp, &Event::Collector(Collector::Cms));
        }
        emit(
            stamp,
            &Event::Pause {
                kind: &p.kind,
                subkind: p.subkind.as_deref(),
                cause: p.cause.as_deref(),
                class: p.class.unwrap_or(PauseClass::Other),
                heap: p.heap,
                ms: p.ms,
                evacuation_failure: p.evacuation_failure,
            },
        );
    }
}

fn push_capped(s: &mut String, b: u8) {
    if s.len() < TEXT_CAP {
        // Non-ASCII bytes become '?': the text is only searched for ASCII words.
        s.push(if b.is_ascii() { b as char } else { '?' });
    }
}

/// `2020-02-16T23:24:09.668+0000: 880272.698: ` → the stamps before a record.
fn stamp_of(prefix: &str, line: u64) -> LegacyStamp {
    let mut st = LegacyStamp {
        line,
        ..Default::default()
    };
    for tok in prefix.split_whitespace() {
        let tok = tok.trim_end_matches(':');
        if tok.contains('T') {
            st.wall_s = parse_iso8601(tok).or(st.wall_s);
        } else if let Some(v) = parse_number(tok) {
            st.uptime_s = Some(v);
        }
    }
    st
}

/// One record's own text → a pause (or nothing).
fn parse_record(t: &str, stamp: LegacyStamp) -> Option<Pending> {
    let (kind, class) = if t.starts_with("GC pause") {
        ("GC pause", PauseClass::Young)
    } else if t.starts_with("Full GC") {
        ("Full GC", PauseClass::Full)
    } else if t.starts_with("GC remark") {
        ("GC remark", PauseClass::Other)
    } else if t.starts_with("GC cleanup") {
        ("GC cleanup", PauseClass::Other)
    } else if t.starts_with("GC (CMS Initial Mark)") {
        ("GC (CMS Initial Mark)", PauseClass::Other)
    } else if t.starts_with("GC (CMS Final Remark)") {
        ("GC (CMS Final Remark)", PauseClass::Other)
    } else if t.starts_with("GC ") || t.starts_with("GC-") || t == "GC" {
        ("GC", PauseClass::Young)
    } else {
        return None;
    };
    // The duration: the number before the last `secs`.
    let secs_at = t.rfind("secs")?;
    // `…(251392K), 0.0123456 secs` or, in a German locale, `…(251392K), 0,0123456 secs`:
    // the last word, or what follows its last comma when it has a decimal point.
    let word = t[..secs_at].trim_end().rsplit(' ').next()?.trim();
    let num = match word.rsplit_once(',') {
        Some((_, after)) if word.contains('.') => after,
        _ => word,
    };
    let ms = parse_number(num)? * 1000.0;
    let before_secs = &t[..secs_at];
    let heap = before_secs
        .split_whitespace()
        .rev()
        .find(|tok| tok.contains("->") && tok.contains('('))
        .and_then(|tok| parse_heap_change(tok.trim_end_matches(',')));
    let mut subkind = None;
    let mut cause = None;
    let mut evacuation_failure = false;
    let groups_text = &t[kind.len().min(t.len())..];
    for g in paren_groups(groups_text) {
        match g {
            "young" | "mixed" | "initial-mark" if subkind.is_none() => {
                subkind = Some(g.to_string());
            }
            "young" | "mixed" | "initial-mark" => {}
            "to-space exhausted" | "to-space overflow" => evacuation_failure = true,
            _ if cause.is_none() && !g.contains("->") && !g.ends_with('K') && !g.ends_with('M') => {
                cause = Some(g.to_string())
            }
            _ => {}
        }
    }
    // -XX:+PrintGC without details marks a failed evacuation with `--` after the groups:
    // `[GC pause (G1 Humongous Allocation) (young)-- 492M->492M(504M), …`.
    if t.contains("promotion failed") || groups_text.contains(")--") {
        evacuation_failure = true;
    }
    Some(Pending {
        kind: kind.to_string(),
        subkind,
        cause,
        class: Some(class),
        heap,
        ms,
        evacuation_failure,
        uptime_s: stamp.uptime_s,
        wall_s: stamp.wall_s,
        line: stamp.line,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feed lines; collect (line, kind, ms, heap-after) of the pauses.
    fn pauses(lines: &[&str]) -> Vec<(u64, String, f64, Option<f64>, bool)> {
        let mut a = LegacyAssembler::default();
        let mut out = Vec::new();
        let mut emit = |st: LegacyStamp, e: &Event<'_>| {
            if let Event::Pause {
                kind,
                ms,
                heap,
                evacuation_failure,
                ..
            } = e
            {
                out.push((
                    st.line,
                    kind.to_string(),
                    *ms,
                    heap.map(|h| h.after),
                    *evacuation_failure,
                ));
            }
        };
        for (i, l) in lines.iter().enumerate() {
            a.line(l, i as u64 + 1, &mut emit);
        }
        a.finish(&mut emit);
        out
    }

    // Shapes of JDK 8's PrintGCDetails records (format knowledge, as the JVM prints
    // them); the real-log checks are in tests/gc.rs over the corpus.
    #[test]
    fn full_gc_with_concurrent_records_inside() {
        let got = pauses(&[
            "61273.557: [Full GC (Metadata GC Threshold) 61273.557: [GC concurrent-root-region-scan-start]",
            "61273.560: [GC concurrent-root-region-scan-end, 0.0029799 secs]",
            " 1604M->1178M(4096M), 5.7141264 secs]",
        ]);
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].1, "Full GC");
        assert!((got[0].2 - 5714.1264).abs() < 1e-6);
        assert_eq!(got[0].3, Some(1178.0 * 1048576.0));
    }

    #[test]
    fn parallel_and_cms_young_records() {
        let got = pauses(&[
            "2.345: [GC (Allocation Failure) [PSYoungGen: 33280K->5104K(38400K)] 33280K->25600K(125952K), 0.0123000 secs] [Times: user=0.03 sys=0.01, real=0.01 secs]",
            "3.5: [GC (Allocation Failure) 3.5: [ParNew: 100K->10K(200K), 0.0100 secs] 1000K->900K(2000K), 0.0200000 secs] [Times: user=0.01 sys=0.00, real=0.02 secs]",
        ]);
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].3, Some(25600.0 * 1024.0));
        assert!((got[0].2 - 12.3).abs() < 1e-9);
        assert!((got[1].2 - 20.0).abs() < 1e-9);
    }

    #[test]
    fn g1_details_take_the_heap_from_the_eden_line() {
        let got = pauses(&[
            "2017-06-22T12:25:26.515+0530: 66155.261: [GC pause (G1 Humongous Allocation) (mixed) (to-space exhausted), 0.2466797 secs]",
            "   [Parallel Time: 223.4 ms, GC Workers: 4]",
            "   [Eden: 32.0M(204.0M)->0.0B(204.0M) Survivors: 0.0B->0.0B Heap: 3816.0M(4096.0M)->3734.5M(4096.0M)]",
            " [Times: user=0.39 sys=0.03, real=0.25 secs]",
        ]);
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].3, Some(3734.5 * 1048576.0));
        assert!(got[0].4);
    }
}
