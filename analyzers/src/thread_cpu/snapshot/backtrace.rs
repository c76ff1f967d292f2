//! `gdb -batch -ex 'thread apply all bt' -p PID` and `pstack PID`: one `Thread N (Thread 0x…
//! (LWP tid) "name"):` line per thread (gdb 12+ adds the name), then its frames `#0  0x… in
//! function (args) at file:line`. The LWP is the thread id top shows; the frames tell a
//! thread that works from one that waits (poll, a condition variable, a sleep) and name
//! librdkafka's threads by their start functions whatever they are called.

use super::collect::Collector;
use super::stacks::Backtrace;

/// Frames kept while reading one backtrace (librdkafka's threads are about 10 deep; a
/// deeper stack keeps its innermost frames, which are the ones that tell).
const MAX_FRAMES: usize = 64;

#[derive(Debug, Default)]
pub struct GdbReader {
    current: Option<Backtrace>,
    /// Frames with no thread line above them (a single-threaded `bt`).
    orphan: Option<u64>,
}

/// `Thread 3 (Thread 0x7f… (LWP 29252) "sleeper"):` or `Thread 1 (LWP 123):` → (tid, name).
fn thread_line(line: &str) -> Option<(i32, Option<String>)> {
    let rest = line.strip_prefix("Thread ")?;
    let (num, rest) = rest.split_once(' ')?;
    if !num.bytes().all(|b| b.is_ascii_digit()) || !rest.starts_with('(') {
        return None;
    }
    let at = rest.find("(LWP ")?;
    let after = &rest[at + 5..];
    let end = after.find(')')?;
    let tid: i32 = after[..end].parse().ok()?;
    let tail = &after[end + 1..];
    let name = tail
        .trim_start()
        .strip_prefix('"')
        .and_then(|t| t.rfind('"').map(|q| t[..q].to_string()));
    Some((tid, name))
}

/// gdb's `info threads` row, `* 7    Thread 0x7f… (LWP 8761) "name" 0x… in poll () from …`:
/// the thread and the one frame it is in → (tid, name, function).
fn info_threads_line(line: &str) -> Option<(i32, Option<String>, Option<String>)> {
    let t = line.trim_start().trim_start_matches('*').trim_start();
    let digits = t.bytes().take_while(|b| b.is_ascii_digit()).count();
    if digits == 0 {
        return None;
    }
    let rest = t[digits..].trim_start().strip_prefix("Thread 0x")?;
    let at = rest.find("(LWP ")?;
    let after = &rest[at + 5..];
    let end = after.find(')')?;
    let tid: i32 = after[..end].parse().ok()?;
    let mut tail = after[end + 1..].trim_start();
    let mut name = None;
    if let Some(q) = tail.strip_prefix('"') {
        let close = q.find('"')?;
        name = Some(q[..close].to_string());
        tail = q[close + 1..].trim_start();
    }
    let f = frame(&format!("#0  {tail}"));
    Some((tid, name, f))
}

/// `#1  0x000055… in rd_kafka_broker_serve (rkb=…) at rdkafka_broker.c:4567` → the function.
fn frame(line: &str) -> Option<String> {
    let rest = line.strip_prefix('#')?;
    let digits = rest.bytes().take_while(|b| b.is_ascii_digit()).count();
    if digits == 0 {
        return None;
    }
    let body = rest[digits..].trim_start();
    let body = match body.split_once(" in ") {
        Some((addr, f)) if addr.starts_with("0x") => f,
        _ => body,
    };
    let name = body.split(" (").next().unwrap_or(body).trim();
    let name = name.split(" from ").next().unwrap_or(name).trim();
    (!name.is_empty()).then(|| name.to_string())
}

/// A frame's function with glibc's decorations off: `__GI___poll` → `poll`.
fn plain(f: &str) -> &str {
    let f = f.trim_start_matches('_');
    let f = f
        .strip_prefix("GI_")
        .map_or(f, |g| g.trim_start_matches('_'));
    let f = f.strip_prefix("libc_").unwrap_or(f);
    f.strip_suffix("64").unwrap_or(f)
}

const WAITS: &[&str] = &[
    "poll",
    "ppoll",
    "epoll_wait",
    "epoll_pwait",
    "select",
    "pselect",
    "pselect6",
    "pthread_cond_wait",
    "pthread_cond_timedwait",
    "pthread_cond_clockwait",
    "futex_abstimed_wait_common",
    "futex_wait",
    "lll_lock_wait",
    "lll_lock_wait_private",
    "nanosleep",
    "clock_nanosleep",
    "sleep",
    "usleep",
    "cnd_wait",
    "cnd_timedwait",
    "sem_wait",
    "sem_timedwait",
    "sigtimedwait",
    "sigwaitinfo",
    "pause",
    "accept",
    "accept4",
    "recv",
    "recvfrom",
    "recvmsg",
    "read",
    "wait4",
    "waitpid",
];

/// The innermost frames (up to three) include a wait.
pub fn is_waiting(frames: &[String]) -> bool {
    frames.iter().take(3).any(|f| {
        let p = plain(f);
        WAITS.contains(&p) || p.contains("futex_wait")
    })
}

impl GdbReader {
    pub fn feed(&mut self, no: u64, line: &str, c: &mut Collector) -> bool {
        // `info threads`: each row a thread and the frame it is in, a backtrace of one.
        if let Some((tid, name, f)) = info_threads_line(line) {
            self.end(c);
            let frames: Vec<String> = f.into_iter().collect();
            c.backtrace(Backtrace {
                tid,
                name,
                waiting: is_waiting(&frames),
                frames,
                line: no,
                last_line: no,
                text: line.to_string(),
                top_lines: vec![(no, line.to_string())],
            });
            return true;
        }
        if let Some((tid, name)) = thread_line(line.trim_start()) {
            self.end(c);
            self.current = Some(Backtrace {
                tid,
                name,
                frames: Vec::new(),
                waiting: false,
                line: no,
                last_line: no,
                text: line.to_string(),
                top_lines: Vec::new(),
            });
            return true;
        }
        let t = line.trim_start();
        if let Some(f) = frame(t) {
            match self.current.as_mut() {
                Some(b) => {
                    if b.frames.len() < MAX_FRAMES {
                        b.frames.push(f);
                    }
                    if b.top_lines.len() < 3 {
                        b.top_lines.push((no, line.to_string()));
                    }
                    b.last_line = no;
                }
                None => {
                    if self.orphan.is_none() {
                        self.orphan = Some(no);
                        c.orphan_backtrace(no);
                    }
                }
            }
            return true;
        }
        // gdb's source listing under a frame (`48\t../sysdeps/…: No such file`) and the
        // wrapped argument lists of long frames stay inside the backtrace.
        if let Some(b) = self.current.as_mut() {
            if !t.is_empty() && (t.as_bytes()[0].is_ascii_digit() || line.starts_with("    ")) {
                b.last_line = no;
                return true;
            }
        }
        false
    }

    pub fn end(&mut self, c: &mut Collector) {
        if let Some(mut b) = self.current.take() {
            b.waiting = is_waiting(&b.frames);
            c.backtrace(b);
        }
        self.orphan = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_lines_of_gdb_and_pstack() {
        assert_eq!(
            thread_line("Thread 3 (Thread 0x7f67b040a6c0 (LWP 29252) \"sleeper\"):"),
            Some((29252, Some("sleeper".into())))
        );
        assert_eq!(
            thread_line("Thread 2 (Thread 0x7f67b0c0b6c0 (LWP 29251) \"a \"b\" c\"):"),
            Some((29251, Some("a \"b\" c".into())))
        );
        assert_eq!(thread_line("Thread 1 (LWP 123):"), Some((123, None)));
        assert_eq!(
            thread_line("Thread debugging using libthread_db enabled"),
            None
        );
    }

    #[test]
    fn info_threads_rows() {
        assert_eq!(
            info_threads_line(
                "  7 Thread 0x7f9f49544700 (LWP 8761)  0x00007f9f4b6f6a5e in \
                 pthread_cond_timedwait@@GLIBC_2.3.2 () from /lib64/libpthread.so.0"
            ),
            Some((
                8761,
                None,
                Some("pthread_cond_timedwait@@GLIBC_2.3.2".into())
            ))
        );
        assert_eq!(
            info_threads_line("* 1    Thread 0x7f (LWP 12) \"rdk:main\" poll () at x.c:1"),
            Some((12, Some("rdk:main".into()), Some("poll".into())))
        );
        assert_eq!(info_threads_line("Thread 1 (LWP 123):"), None);
    }

    #[test]
    fn frames_and_waits() {
        let f = |s: &str| frame(s).unwrap();
        assert_eq!(
            f("#0  0x00007f67b0cde545 in __GI___clock_nanosleep (clock_id=0) at x.c:48"),
            "__GI___clock_nanosleep"
        );
        assert_eq!(f("#1  burn () at spin.c:16"), "burn");
        assert_eq!(
            f("#2  0x1 in poll () from /lib/x86_64-linux-gnu/libc.so.6"),
            "poll"
        );
        assert!(frame("#x").is_none());
        assert!(is_waiting(&[
            "__GI___poll".into(),
            "rd_kafka_transport_poll".into()
        ]));
        assert!(is_waiting(&[
            "syscall".into(),
            "std::sys::pal::unix::futex::futex_wait".into()
        ]));
        assert!(!is_waiting(&["burn".into(), "spinner".into()]));
    }
}
