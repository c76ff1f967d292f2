//! Which format a line is in, and routing it to that format's parser: JDK 9+ unified
//! lines one at a time, JDK 8 records through the legacy assembler.

use super::analyzer::{Analyzer, Clock};
use super::legacy::LegacyStamp;
use super::legacy_event::OwnedEvent;
use super::pre_line::{Pre, PreLine, Span, SpanEvent};
use super::{scan, shipper, unified};

impl Analyzer<'_, '_> {
    pub(super) fn unified_line(&mut self, line_no: u64, raw: &[u8], line: &str) {
        let (d, message) = unified::split_decorations(line);
        self.unified_message(line_no, raw, d, message);
    }

    /// A unified line whose decorations are split off already.
    fn unified_message(
        &mut self,
        line_no: u64,
        raw: &[u8],
        d: unified::Decorations<'_>,
        message: &str,
    ) {
        if let Some(tags) = d.tags {
            // Other tags interleaved (safepoint, os, …): not ours.
            if !tags.starts_with("gc") {
                return;
            }
        }
        let (id, message) = unified::split_gc_id(message);
        if !d.decorated && id.is_none() && !self.format_known {
            // Undecorated text before the format is known: only a few GC lines qualify.
            if !(message.starts_with("Using ")
                || message.starts_with("Version: ")
                || message.starts_with("Completed GC (degenerated)"))
            {
                return;
            }
        }
        // Shenandoah's control thread without decorations (a decorated log says the same
        // with `Pause Degenerated GC`, counted there): a cycle that fell back to
        // stop-the-world.
        let control = !d.decorated && message.starts_with("Completed GC (degenerated)");
        let parsed = if control {
            Some(super::event::Event::ConcurrentFailure(
                "Shenandoah degenerated to a stop-the-world cycle",
            ))
        } else {
            unified::parse_message(message)
        };
        let Some(event) = parsed else {
            if d.decorated || id.is_some() {
                self.note_unified();
                // A pause's start line: its end line carries the duration and the heap.
                if let Some(id) = id.filter(|_| message.starts_with("Pause ")) {
                    self.pause_start(id, message);
                }
            }
            return;
        };
        // Parse only the clock in use (ISO dates cost more than the rest of the line).
        let t = self.unified_time(id, |clock| match clock {
            Some(Clock::Uptime) => (d.uptime_s(), None),
            Some(Clock::Wall) => (None, d.wall_s()),
            None => (d.uptime_s(), d.wall_s()),
        });
        self.event(t, line_no, raw, &event);
    }

    /// What a unified line with an event counts before its event: the line, its `GC(N)`
    /// id, and its time on the clock in use (`times` gives the line's uptime and wall
    /// time for that clock).
    fn unified_time(
        &mut self,
        id: Option<u64>,
        times: impl FnOnce(Option<Clock>) -> (Option<f64>, Option<f64>),
    ) -> Option<f64> {
        self.note_unified();
        if let Some(id) = id {
            if self.gc_id_first.is_none() {
                self.gc_id_first = Some(id);
            }
            if self.gc_id_last.is_some_and(|l| id + 1000 < l) {
                self.gc_ids_backwards += 1;
            }
            self.gc_id_last = Some(self.gc_id_last.map_or(id, |l| l.max(id)));
            self.gc_id = Some(id);
        }
        let (up, wall) = times(self.clock);
        self.time(up, wall)
    }

    /// An anchored line of `buf` that a worker pre-parsed ([`super::preparse`]): what
    /// [`scan::LineSink::line`] does with it, the line's own part done already.
    pub(super) fn preparsed_line(&mut self, number: u64, buf: &[u8], l: &PreLine) {
        let bytes = &buf[l.start..l.end];
        let Pre::Unified {
            id,
            event,
            uptime,
            wall,
        } = &l.pre
        else {
            if l.pre == Pre::Serial || self.legacy_mode || !self.format_known {
                return scan::LineSink::line(self, number, bytes, false);
            }
            // Other tags: only counted.
            self.summary.lines_parsed += 1;
            self.first_line_of_file = false;
            return;
        };
        if self.legacy_mode || !self.format_known {
            // Not reached in anchored mode; the worker assumed it.
            return scan::LineSink::line(self, number, bytes, false);
        }
        self.summary.lines_parsed += 1;
        // The line starts with `[`: no JFR magic, no shipper's prefix.
        self.first_line_of_file = false;
        let Some(event) = event else {
            self.note_unified();
            // A pause's start line (`gc,start`, no duration: the worker found no event).
            // Most such lines in a `gc*` log are phases: look only at the words right after
            // `GC(id) `, in bytes, and make text of a pause's start line alone.
            if let Some(id) = *id {
                if let Some(words) = pause_start_words(bytes) {
                    self.pause_start(id, words);
                }
            }
            return;
        };
        let (uptime, wall) = (*uptime, *wall);
        let t = self.unified_time(*id, |clock| match clock {
            Some(Clock::Uptime) => (uptime, None),
            // The worker parsed the wall time only for a line without uptime.
            Some(Clock::Wall) if uptime.is_some() => (None, wall_of(bytes)),
            Some(Clock::Wall) => (None, wall),
            // With an uptime the clock becomes uptime, and the wall time is not read.
            None => (uptime, wall),
        });
        match *event {
            // A pause's words are looked up as bytes: no UTF-8 check per line.
            SpanEvent::Pause {
                kind,
                subkind,
                cause,
                class,
                heap,
                ms,
                evacuation_failure,
                head,
            } => {
                let text = |s: Span| &buf[s.start..s.end];
                let at = match self.head_slot(head) {
                    Some(at) => at,
                    None => {
                        let at =
                            self.pause_kind_slot(text(kind), subkind.map(text), cause.map(text));
                        self.remember_head(head, at);
                        at
                    }
                };
                self.pause_of_kind(t, number, bytes, at, class, heap, ms, evacuation_failure);
            }
            ref other => {
                let e = other.event(buf);
                self.event(t, number, bytes, &e);
            }
        }
    }

    /// `GC(62) Pause Young (Normal) (G1 Evacuation Pause)` without a duration: kept, so a
    /// log that ends before the pause's end line says so, and its collector named when
    /// the words name it (a G1 cause or G1's young sub-kinds).
    fn pause_start(&mut self, id: u64, message: &str) {
        let words = message.trim_ascii_end();
        let g1 = words.contains("(G1 ")
            || [
                "(Normal)",
                "(Concurrent Start)",
                "(Prepare Mixed)",
                "(Mixed)",
            ]
            .iter()
            .any(|k| words.contains(k));
        if g1 {
            Self::collector_seen(&mut self.hinted, super::event::Collector::G1);
        }
        self.gc_id_first.get_or_insert(id);
        self.gc_id_last = Some(self.gc_id_last.map_or(id, |l| l.max(id)));
        self.pause_started = Some(id);
        // Reused: one start line a GC, no allocation each.
        self.pause_started_words.clear();
        self.pause_started_words.push_str(words);
    }

    pub(super) fn note_unified(&mut self) {
        self.unified_lines += 1;
        self.format_known = true;
    }

    pub(super) fn legacy_line(&mut self, line_no: u64, line: &str) {
        self.legacy_lines += 1;
        // The assembler hands back events with the record's own time stamps.
        let mut events: Vec<(LegacyStamp, OwnedEvent)> = Vec::new();
        let mut legacy = std::mem::take(&mut self.legacy);
        legacy.line(line, line_no, &mut |st, e| {
            events.push((st, OwnedEvent::from(e)))
        });
        self.legacy = legacy;
        self.legacy_events(events);
    }

    pub(super) fn legacy_events(&mut self, events: Vec<(LegacyStamp, OwnedEvent)>) {
        for (st, e) in events {
            // JDK 8 stamps a record when the GC starts; unified logs when it ends.
            let end = if e.kind == 4 { e.a / 1000.0 } else { 0.0 };
            let t = self.time(st.uptime_s.map(|t| t + end), st.wall_s.map(|t| t + end));
            let raw = e.example.clone();
            self.event(t, st.line, raw.as_bytes(), &e.as_event());
        }
    }
}

impl scan::LineSink for Analyzer<'_, '_> {
    fn line(&mut self, number: u64, bytes: &[u8], _truncated: bool) {
        self.summary.lines_parsed += 1;
        if self.first_line_of_file {
            self.first_line_of_file = false;
            self.jfr_magic |= bytes.starts_with(b"FLR\0");
        }
        // A shipper's prefix off (docker, CRI, journald, …): the JVM's line remains.
        let mut scratch = std::mem::take(&mut self.scratch);
        self.jvm_line(number, shipper::strip(bytes, &mut scratch));
        self.scratch = scratch;
    }

    fn wants_every_line(&self) -> bool {
        // Until the format is known every line may decide it; JDK 8 records span lines.
        self.opts.every_line || self.legacy_mode || !self.format_known
    }
}

impl Analyzer<'_, '_> {
    /// One line as the JVM wrote it.
    fn jvm_line(&mut self, number: u64, bytes: &[u8]) {
        // GC logs are ASCII; a line that is not UTF-8 is parsed up to its first bad byte.
        let line = match std::str::from_utf8(bytes) {
            Ok(s) => s,
            Err(e) => match std::str::from_utf8(&bytes[..e.valid_up_to()]) {
                Ok(s) => s,
                Err(_) => return,
            },
        };
        if self.legacy_mode {
            // A unified line after JDK 8 records (two logs concatenated): both are read.
            if line.starts_with('[') && !line.starts_with("[GC") && !line.starts_with("[Full GC") {
                let (d, _) = unified::split_decorations(line);
                if d.decorated && (d.tags.is_some() || d.timed()) {
                    self.unified_line(number, bytes, line);
                    return;
                }
            }
            self.legacy_line(number, line);
            return;
        }
        // The decorations are split once, for both the format test and the parse.
        let (d, message) = unified::split_decorations(line);
        if !d.decorated && is_legacy_text(line) {
            self.legacy_mode = true;
            self.format_known = true;
            self.legacy_line(number, line);
            return;
        }
        self.unified_message(number, bytes, d, message);
    }
}

/// The wall time of a unified line's decorations.
fn wall_of(bytes: &[u8]) -> Option<f64> {
    let line = std::str::from_utf8(bytes).ok()?;
    unified::split_decorations(line).0.wall_s()
}

/// The first line that says "JDK 8 log" (the line has no unified decoration): a record
/// (`[GC`, `[Full GC`), or the JVM banner / flags that open a JDK 8 log.
fn is_legacy_text(line: &str) -> bool {
    line.contains("[GC ")
        || line.contains("[GC(")
        || line.contains("[GC-")
        || line.contains("[Full GC")
        || line.starts_with("CommandLine flags: ")
        || (line.contains(" VM (") && line.contains("JRE ("))
}

/// The words of a unified pause's start line (`… GC(62) Pause Young (Normal) …` →
/// `Pause Young (Normal) …`), None for any other line: the first `] GC(`, its closing `)`,
/// then `Pause `.
fn pause_start_words(bytes: &[u8]) -> Option<&str> {
    static GC_ID: std::sync::OnceLock<memchr::memmem::Finder<'static>> = std::sync::OnceLock::new();
    let at = GC_ID
        .get_or_init(|| memchr::memmem::Finder::new(b"] GC("))
        .find(bytes)?;
    let rest = &bytes[at + 5..];
    let close = memchr::memchr(b')', rest)?;
    let words = rest[close + 1..].strip_prefix(b" ")?;
    if !words.starts_with(b"Pause ") {
        return None;
    }
    std::str::from_utf8(words).ok()
}

#[cfg(test)]
mod tests {
    use super::pause_start_words;

    #[test]
    fn a_pause_start_line_gives_its_words_and_a_phase_line_none() {
        let start = b"[2024-01-01T00:00:01.000+0000][1.000s][info][gc,start    ] GC(62) Pause Young (Normal) (G1 Evacuation Pause)";
        assert_eq!(
            pause_start_words(start),
            Some("Pause Young (Normal) (G1 Evacuation Pause)")
        );
        let phase = b"[1.001s][info][gc,phases   ] GC(62)   Pre Evacuate Collection Set: 0.1ms";
        assert_eq!(pause_start_words(phase), None);
        assert_eq!(pause_start_words(b"no decoration at all"), None);
        assert_eq!(pause_start_words(b"[1.0s][info][gc] GC(7"), None);
    }
}
