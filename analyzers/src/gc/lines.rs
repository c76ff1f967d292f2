//! Which format a line is in, and routing it to that format's parser: JDK 9+ unified
//! lines one at a time, JDK 8 records through the legacy assembler.

use super::analyzer::{Analyzer, Clock};
use super::legacy::LegacyStamp;
use super::legacy_event::OwnedEvent;
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
            if !(message.starts_with("Using ") || message.starts_with("Version: ")) {
                return;
            }
        }
        let Some(event) = unified::parse_message(message) else {
            if d.decorated || id.is_some() {
                self.note_unified();
            }
            return;
        };
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
        // Parse only the clock in use (ISO dates cost more than the rest of the line).
        let (up, wall) = match self.clock {
            Some(Clock::Uptime) => (d.uptime_s(), None),
            Some(Clock::Wall) => (None, d.wall_s()),
            None => (d.uptime_s(), d.wall_s()),
        };
        let t = self.time(up, wall);
        self.event(t, line_no, raw, &event);
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
