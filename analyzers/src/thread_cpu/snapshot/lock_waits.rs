//! The heartbeat threads of a JVM dump that wait for a lock, with who holds it: the evidence
//! of `java-heartbeat-waits-for-poll-thread` (the catalogue decides it).

use super::stacks::{Dump, Lock};
use super::text::example;
use crate::vocab::report::ExampleLine;

/// A heartbeat thread waiting for a lock that another thread holds, in one dump.
#[derive(Debug, Clone)]
pub struct LockWait {
    pub dump: u32,
    pub waiter_tid: Option<i32>,
    pub waiter_name: String,
    pub waiter: ExampleLine,
    pub wait: Lock,
    /// The holder: tid, name, its header line, the line that says it holds the lock.
    pub holder: Option<(Option<i32>, String, ExampleLine, ExampleLine)>,
    /// The holder is the thread inside ConsumerNetworkClient.poll (the dump has no
    /// `Locked ownable synchronizers`: `jstack -l` would name it).
    pub holder_inferred: bool,
}

/// The heartbeat threads of a dump that wait for a lock, with who holds it.
pub fn lock_waits(d: &Dump, index: u32) -> Vec<LockWait> {
    let mut out = Vec::new();
    for w in &d.threads {
        if !w.name.starts_with("kafka-coordinator-heartbeat-thread") {
            continue;
        }
        let Some(wait) = &w.waiting else { continue };
        if !matches!(wait.how.as_str(), "waiting to lock" | "parking to wait for") {
            continue;
        }
        let held = d.threads.iter().find_map(|t| {
            t.held
                .iter()
                .find(|l| l.addr == wait.addr)
                .map(|l| (t, l.line, l.text.clone()))
        });
        let (holder, inferred) = match held {
            Some((t, line, text)) => (
                Some((
                    t.nid,
                    t.name.clone(),
                    example(t.line, &t.text),
                    example(line, &text),
                )),
                false,
            ),
            None => {
                // Without -l the ReentrantLock's owner is not printed: the thread inside the
                // network client's poll (not parked itself) is the one that holds it.
                let in_poll = d.threads.iter().find(|t| {
                    !std::ptr::eq(*t, w)
                        && t.waiting.is_none()
                        && t.frames
                            .iter()
                            .any(|f| f.ends_with("ConsumerNetworkClient.poll"))
                });
                match in_poll {
                    Some(t) => {
                        let f = t
                            .frames
                            .iter()
                            .position(|f| f.ends_with("ConsumerNetworkClient.poll"))
                            .unwrap_or(0);
                        (
                            Some((
                                t.nid,
                                t.name.clone(),
                                example(t.line, &t.text),
                                example(t.line, &format!("at {}", t.frames[f])),
                            )),
                            true,
                        )
                    }
                    None => (None, false),
                }
            }
        };
        out.push(LockWait {
            dump: index,
            waiter_tid: w.nid,
            waiter_name: w.name.clone(),
            waiter: example(w.line, &w.text),
            wait: wait.clone(),
            holder,
            holder_inferred: inferred,
        });
    }
    out
}
