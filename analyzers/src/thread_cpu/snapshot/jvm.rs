//! JVM thread dumps: `jstack [-l] PID`, `jcmd PID Thread.print [-l]` (its first line is
//! `PID:`), and `kill -3`'s dump in the JVM's stdout among the program's own lines. A thread
//! is a header line (`"name" #1 [tid] daemon prio=5 os_prio=0 cpu=…ms elapsed=…s tid=0x…
//! nid=…`, JDK 11+ for `cpu=`, JDK 19+ for `[tid]` and a decimal nid), its
//! `java.lang.Thread.State:`, frames (`at …`) and lock lines (`- locked <0x…> (a …)`,
//! `- waiting to lock …`, `- parking to wait for …`, `Locked ownable synchronizers:`). The
//! nid is the thread id top shows (hex before JDK 19). The JVM prints `cpu=`/`elapsed=` in
//! the process's locale (decimal commas in German).

use std::sync::OnceLock;

use regex::Regex;

use super::collect::Collector;
use super::stacks::{Dump, JvmThread, Lock};
use super::text::decimal;

/// Frames kept per thread (the innermost ones tell what it does).
const MAX_FRAMES: usize = 16;

#[derive(Debug, Default)]
pub struct JvmReader {
    dump: Option<Dump>,
    thread: Option<JvmThread>,
    ownable: bool,
    /// A `PID:` or timestamp line that may open the next dump.
    pending_pid: Option<(u64, i32)>,
    pending_time: Option<(u64, String)>,
    /// After `JNI global refs`: kill -3 may print the heap after it.
    heap_tail: bool,
}

fn header_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(
            r#"^"(?P<name>.*)" (?:#(?P<num>\d+) )?(?:\[(?P<ostid>\d+)\] )?(?P<daemon>daemon )?(?:prio=-?\d+ )?(?:os_prio=-?\d+ )?(?:cpu=(?P<cpu>[0-9.,]+)ms )?(?:elapsed=(?P<el>[0-9.,]+)s )?(?:allocated=\S+ )?(?:defined_classes=\d+ )?(?:tid=0x[0-9a-fA-F]+ )?(?:nid=(?P<nid>0x[0-9a-fA-F]+|\d+)\s*)?(?P<rest>.*)$"#,
        )
        .expect("valid regex")
    })
}

fn lock_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(
            r"^\s*- (?:(?P<how>locked|waiting to lock|parking to wait for|waiting on|waiting to re-lock in wait\(\)|eliminated) +)?(?:on +)?(?:<(?P<addr>0x[0-9a-fA-F]+)> \(a (?P<class>[^)]*)\)|(?P<cls>[A-Za-z_$][\w.$]*)@(?P<hash>[0-9a-fA-F]+)\b)",
        )
        .expect("valid regex")
    })
}

/// `2026-12-01 07:15:24`.
fn is_timestamp(line: &str) -> bool {
    let b = line.as_bytes();
    b.len() == 19
        && b[4] == b'-'
        && b[7] == b'-'
        && b[10] == b' '
        && b[13] == b':'
        && b[16] == b':'
        && b.iter()
            .enumerate()
            .all(|(i, c)| [4, 7, 10, 13, 16].contains(&i) || c.is_ascii_digit())
}

/// A thread header, or None when the line is not one. A header must carry one of the
/// fields every JVM prints (`prio=`, `os_prio=`, `tid=`, `nid=`), or be the name and the
/// thread's number alone (`"name" #56`: a dump abbreviated by hand or by a tool).
fn header(no: u64, line: &str) -> Option<JvmThread> {
    if !line.starts_with('"') {
        return None;
    }
    let c = header_re().captures(line)?;
    let fields = line.contains(" prio=") || line.contains("os_prio=") || line.contains(" nid=");
    let rest = c.name("rest").map_or("", |m| m.as_str().trim());
    let numbered_alone = (c.name("num").is_some() && rest.is_empty())
        || rest
            .strip_prefix('#')
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    if !(fields || numbered_alone) {
        return None;
    }
    let nid = c.name("nid").and_then(|m| {
        let s = m.as_str();
        match s.strip_prefix("0x") {
            Some(h) => i64::from_str_radix(h, 16).ok(),
            None => s.parse().ok(),
        }
    });
    let nid = nid
        .or_else(|| c.name("ostid").and_then(|m| m.as_str().parse().ok()))
        .and_then(|v: i64| i32::try_from(v).ok())
        .filter(|v| *v > 0);
    let rest = if numbered_alone { "" } else { rest };
    let os_state = rest.split(" [0x").next().unwrap_or(rest).trim().to_string();
    Some(JvmThread {
        name: c["name"].to_string(),
        nid,
        cpu_ms: c.name("cpu").and_then(|m| decimal(m.as_str())),
        elapsed_s: c.name("el").and_then(|m| decimal(m.as_str())),
        os_state,
        state: None,
        frames: Vec::new(),
        held: Vec::new(),
        waiting: None,
        line: no,
        text: line.to_string(),
    })
}

impl JvmReader {
    fn in_dump(&self) -> bool {
        self.dump.is_some()
    }

    fn open(&mut self, no: u64, c: &mut Collector) {
        self.close(c);
        let mut d = Dump {
            first_line: no,
            last_line: no,
            ..Dump::default()
        };
        if let Some((l, t)) = self.pending_time.take() {
            d.first_line = d.first_line.min(l);
            d.taken_at = Some(t);
        }
        if let Some((l, p)) = self.pending_pid.take() {
            d.first_line = d.first_line.min(l);
            d.pid = Some(p);
        }
        self.dump = Some(d);
    }

    fn end_thread(&mut self) {
        if let (Some(t), Some(d)) = (self.thread.take(), self.dump.as_mut()) {
            d.threads.push(t);
        }
        self.ownable = false;
    }

    fn close(&mut self, c: &mut Collector) {
        self.end_thread();
        if let Some(d) = self.dump.take() {
            if d.threads.is_empty() {
                c.header_without_rows(super::format::Format::JvmDump, d.first_line);
            } else {
                c.dump(d);
            }
        }
    }

    pub fn feed(&mut self, no: u64, line: &str, c: &mut Collector) -> bool {
        let t = line.trim();
        if let Some(th) = header(no, line) {
            if !self.in_dump() {
                self.open(no, c);
            }
            self.end_thread();
            self.thread = Some(th);
            self.touch(no);
            return true;
        }
        if t.starts_with("Full thread dump ") {
            self.open(no, c);
            if let Some(d) = self.dump.as_mut() {
                d.vm = Some(
                    t.trim_start_matches("Full thread dump ")
                        .trim_end_matches(':')
                        .to_string(),
                );
            }
            return true;
        }
        if is_timestamp(t) {
            self.pending_time = Some((no, t.to_string()));
            return true;
        }
        if let Some(p) = t.strip_suffix(':').and_then(|p| p.parse::<i32>().ok()) {
            if !self.in_dump() && !t.contains(' ') {
                self.pending_pid = Some((no, p));
                return true;
            }
        }
        if self.heap_tail {
            if t == "Heap" || (line.starts_with(' ') && !t.is_empty()) {
                return true;
            }
            self.heap_tail = false;
        }
        if !self.in_dump() {
            return false;
        }
        self.touch(no);
        if t.starts_with("JNI global refs") {
            self.close(c);
            self.heap_tail = true;
            return true;
        }
        // A blank line does not end a thread: `Locked ownable synchronizers:` comes after
        // one (jstack -l). The next header does.
        if t.is_empty() {
            return true;
        }
        if let Some(th) = self.thread.as_mut() {
            if let Some(s) = t.strip_prefix("java.lang.Thread.State: ") {
                th.state = Some(s.to_string());
                return true;
            }
            if let Some(f) = t.strip_prefix("at ") {
                if th.frames.len() < MAX_FRAMES {
                    let name = f.split('(').next().unwrap_or(f).to_string();
                    th.frames.push(name);
                }
                return true;
            }
            if t == "Locked ownable synchronizers:" {
                self.ownable = true;
                return true;
            }
            if let Some(m) = lock_re().captures(line) {
                let how = m
                    .name("how")
                    .map_or(if self.ownable { "owns" } else { "locked" }, |h| h.as_str());
                // `<0x…> (a Class)`, or an abbreviated dump's `Class@hash`.
                let (addr, class) = match (m.name("addr"), m.name("class")) {
                    (Some(a), Some(c)) => (a.as_str(), c.as_str()),
                    _ => (&m["hash"], &m["cls"]),
                };
                let lock = Lock {
                    how: how.to_string(),
                    addr: addr.to_string(),
                    class: class.to_string(),
                    line: no,
                    text: line.to_string(),
                };
                match how {
                    "locked" | "owns" => th.held.push(lock),
                    "eliminated" => {}
                    _ => {
                        if th.waiting.is_none() {
                            th.waiting = Some(lock);
                        }
                    }
                }
                return true;
            }
            // `- None`, `- waiting on <no object reference available>`, and other lock lines
            // with nothing to join.
            if t.starts_with("- ")
                || t.starts_with("No compile task")
                || t.starts_with("Compiling:")
            {
                return true;
            }
        }
        // The dump's own furniture: the SMR list, a deadlock report, a line between dumps.
        if t.starts_with("Threads class SMR info:")
            || t.starts_with("_java_thread_list=")
            || t.starts_with("0x")
            || t == "}"
            || t.starts_with("Found ")
            || t.starts_with("=====")
            || t.starts_with("Java stack information")
            || t.starts_with("which is held by")
            || t.starts_with("waiting to lock")
            || t.starts_with("waiting for ownable")
            || (t.starts_with('"') && t.ends_with("\":"))
        {
            return true;
        }
        false
    }

    fn touch(&mut self, no: u64) {
        if let Some(d) = self.dump.as_mut() {
            d.last_line = no;
        }
    }

    pub fn end(&mut self, c: &mut Collector) {
        // A whole dump ends with `JNI global refs`: without it the paste stops inside one.
        if let Some(d) = &self.dump {
            c.warn(format!(
                "lines {}-{}: the dump has no `JNI global refs` line at its end: cut? (its last \
                 thread may be partial)",
                d.first_line, d.last_line
            ));
        }
        self.close(c);
        self.pending_pid = None;
        self.pending_time = None;
        self.heap_tail = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_of_jdk17_and_jdk25() {
        let h = header(
            1,
            "\"main\" #1 prio=5 os_prio=0 cpu=31.98ms elapsed=2.32s tid=0x00007f4c00017ea0 \
             nid=0x49ae waiting on condition  [0x00007f4c073fe000]",
        )
        .unwrap();
        assert_eq!(h.name, "main");
        assert_eq!(h.nid, Some(0x49ae));
        assert_eq!(h.cpu_ms, Some(31.98));
        assert_eq!(h.elapsed_s, Some(2.32));
        assert_eq!(h.os_state, "waiting on condition");
        let h = header(
            1,
            "\"kafka-producer-network-thread | kgap-java-0\" #21 [18963] daemon prio=5 \
             os_prio=0 cpu=2293,17ms elapsed=2,37s tid=0x00007f6a4c0ea3c0 nid=18963 runnable  \
             [0x00007f6a2c1fd000]",
        )
        .unwrap();
        assert_eq!(h.name, "kafka-producer-network-thread | kgap-java-0");
        assert_eq!(h.nid, Some(18963));
        assert_eq!(h.cpu_ms, Some(2293.17));
        let h = header(
            1,
            "\"GC Thread#0\" os_prio=0 cpu=0,07ms elapsed=2,39s tid=0x1 nid=18946 runnable  ",
        )
        .unwrap();
        assert_eq!(h.nid, Some(18946));
        assert_eq!(h.os_state, "runnable");
        assert!(header(1, "\"t1\":").is_none());
        assert!(header(1, "\"just a quote\" said someone").is_none());
    }
}
