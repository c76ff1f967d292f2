//! The stacks a paste holds, as read: a native thread's backtrace (gdb, pstack) and a JVM
//! thread dump's threads with the locks they hold or wait for.

/// One thread's backtrace.
#[derive(Debug, Clone)]
pub struct Backtrace {
    pub tid: i32,
    pub name: Option<String>,
    /// Function names, innermost first.
    pub frames: Vec<String>,
    /// The innermost frames are in a wait (poll, a condition variable, a sleep, a read).
    pub waiting: bool,
    pub line: u64,
    pub last_line: u64,
    /// The thread line.
    pub text: String,
    /// The first frames' lines.
    pub top_lines: Vec<(u64, String)>,
}

/// A lock a thread holds or waits for.
#[derive(Debug, Clone)]
pub struct Lock {
    /// `locked`, `waiting to lock`, `parking to wait for`, `waiting on`, or `owns` (an
    /// ownable synchronizer under `Locked ownable synchronizers:`).
    pub how: String,
    pub addr: String,
    pub class: String,
    pub line: u64,
    pub text: String,
}

impl Lock {
    pub fn describe(&self) -> String {
        if self.addr.starts_with("0x") {
            format!("<{}> (a {})", self.addr, self.class)
        } else {
            format!("{}@{}", self.class, self.addr)
        }
    }
}

/// One thread of a dump.
#[derive(Debug, Clone)]
pub struct JvmThread {
    pub name: String,
    pub nid: Option<i32>,
    pub cpu_ms: Option<f64>,
    pub elapsed_s: Option<f64>,
    /// The header's own words (`runnable`, `waiting on condition`).
    pub os_state: String,
    /// `java.lang.Thread.State` (`RUNNABLE`, `BLOCKED (on object monitor)`).
    pub state: Option<String>,
    /// Frames, innermost first (`sun.nio.ch.EPoll.wait`).
    pub frames: Vec<String>,
    pub held: Vec<Lock>,
    pub waiting: Option<Lock>,
    pub line: u64,
    pub text: String,
}

/// One dump: its threads.
#[derive(Debug, Clone, Default)]
pub struct Dump {
    pub first_line: u64,
    pub last_line: u64,
    /// `2026-12-01 07:15:24` above `Full thread dump`.
    pub taken_at: Option<String>,
    pub vm: Option<String>,
    /// jcmd's `PID:` line.
    pub pid: Option<i32>,
    pub threads: Vec<JvmThread>,
}

/// A Java stack inside the consumer's poll().
pub(crate) fn is_consumer_poll(frames: &[String]) -> bool {
    frames.iter().any(|f| {
        f.starts_with("org.apache.kafka.clients.consumer.")
            && (f.ends_with("KafkaConsumer.poll") || f.ends_with("Consumer.poll"))
    })
}
