//! Native stacks of a librdkafka process's busiest threads: `eu-stack` (elfutils; fast) or
//! `gdb -batch`, when one is installed. Both attach with ptrace: eu-stack `-1` stops only the
//! thread it reads, gdb every thread of the target while it reads them; the time each took is
//! kept, so the report says what it cost.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The stack tool found on PATH.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StackTool {
    EuStack(PathBuf),
    Gdb(PathBuf),
}

impl StackTool {
    pub fn name(&self) -> &'static str {
        match self {
            StackTool::EuStack(_) => "eu-stack",
            StackTool::Gdb(_) => "gdb",
        }
    }
}

/// What the report says when no tool is there.
pub const NO_TOOL: &str = "native stacks: not taken (neither eu-stack nor gdb is installed): \
    they would show where each rdk:* thread spends its time (in a poll wait, in a lock, \
    copying a batch); install elfutils (eu-stack) or gdb";

/// eu-stack first: it reads the stacks in a fraction of gdb's time (gdb loads every symbol
/// table first), so the target is stopped for less.
pub fn find() -> Option<StackTool> {
    let on_path = |name: &str| {
        std::env::var_os("PATH").and_then(|p| {
            std::env::split_paths(&p)
                .map(|d| d.join(name))
                .find(|f| f.is_file())
        })
    };
    on_path("eu-stack")
        .map(StackTool::EuStack)
        .or_else(|| on_path("gdb").map(StackTool::Gdb))
}

/// One set of stacks: the text and how long the target was stopped for it (at most).
pub struct Stacks {
    pub text: String,
    pub took: Duration,
}

/// Reads the stacks of `tids` (threads of `pid`). eu-stack reads one thread at a time
/// (`-1`: only that thread is stopped, for its own read); gdb attaches to the whole process
/// once and its answer is cut down to those threads. `took` is the longest any thread was
/// stopped. A thread that ended since it was chosen is a line in the text, not an error; an
/// error only when no stack could be read.
pub fn take_threads(
    tool: &StackTool,
    pid: i32,
    tids: &[i32],
    limit: Duration,
) -> Result<Stacks, String> {
    match tool {
        StackTool::EuStack(p) => {
            let mut text = String::new();
            let mut took = Duration::ZERO;
            let mut errors = Vec::new();
            for tid in tids {
                let mut c = Command::new(p);
                c.args(["-1", "-n", "64", "-p", &tid.to_string()]);
                match run(c, tool.name(), limit) {
                    Ok(s) => {
                        text.push_str(&s.text);
                        took = took.max(s.took);
                    }
                    Err(e) => {
                        text.push_str(&format!("TID {tid}: not read: {e}\n"));
                        errors.push(e);
                    }
                }
            }
            if errors.len() == tids.len() && !tids.is_empty() {
                return Err(errors.join("; "));
            }
            Ok(Stacks { text, took })
        }
        StackTool::Gdb(p) => {
            let mut c = Command::new(p);
            c.args([
                "-batch",
                "-nx",
                "-p",
                &pid.to_string(),
                "-ex",
                "set pagination off",
                "-ex",
                "thread apply all bt 40",
            ]);
            let s = run(c, tool.name(), limit)?;
            Ok(Stacks {
                text: gdb_threads(&s.text, tids),
                took: s.took,
            })
        }
    }
}

/// The sections of a gdb `thread apply all bt` answer whose thread is one of `tids`
/// (`Thread 3 (Thread 0x7f… (LWP 1234) "rdk:broker1"):` up to the next such line).
pub fn gdb_threads(text: &str, tids: &[i32]) -> String {
    let mut out = String::new();
    let mut keep = false;
    for line in text.lines() {
        if line.starts_with("Thread ") {
            keep = line
                .split("(LWP ")
                .nth(1)
                .and_then(|r| r.split(')').next())
                .and_then(|n| n.trim().parse::<i32>().ok())
                .is_some_and(|t| tids.contains(&t));
        }
        if keep {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// Runs one stack tool to its end or `limit`.
fn run(mut cmd: Command, name: &str, limit: Duration) -> Result<Stacks, String> {
    let t0 = Instant::now();
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("{name}: {e}"))?;
    let out = child.stdout.take().expect("piped");
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut { out }, &mut s);
        s
    });
    let status = loop {
        if let Some(s) = child.try_wait().map_err(|e| e.to_string())? {
            break s;
        }
        if t0.elapsed() > limit {
            // Killing the tool detaches it: the target runs on.
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("{name} took over {} s: stopped", limit.as_secs()));
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let took = t0.elapsed();
    let text = reader.join().unwrap_or_default();
    if !status.success() && text.trim().is_empty() {
        let mut err = String::new();
        if let Some(mut e) = child.stderr.take() {
            let _ = std::io::Read::read_to_string(&mut e, &mut err);
        }
        return Err(format!("{name}: {}", ptrace_hint(err.trim())));
    }
    Ok(Stacks { text, took })
}

/// A refused attach names the knob that refuses it.
fn ptrace_hint(err: &str) -> String {
    let scope = std::fs::read_to_string(Path::new("/proc/sys/kernel/yama/ptrace_scope"))
        .map(|s| s.trim().to_string())
        .unwrap_or_default();
    if (err.contains("ptrace") || err.contains("Operation not permitted"))
        && !scope.is_empty()
        && scope != "0"
    {
        format!(
            "{err} (kernel.yama.ptrace_scope is {scope}: run capture as root, or `sysctl \
             kernel.yama.ptrace_scope=0`)"
        )
    } else {
        err.lines().last().unwrap_or("failed").to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gdb_s_answer_cut_to_the_chosen_threads() {
        let text = "[New LWP 11]\n\
Thread 3 (Thread 0x7f1 (LWP 12) \"rdk:broker1\"):\n#0  0x1 in poll ()\n\n\
Thread 2 (Thread 0x7f2 (LWP 11) \"rdk:main\"):\n#0  0x2 in cnd_timedwait ()\n\n\
Thread 1 (Thread 0x7f3 (LWP 10) \"app\"):\n#0  0x3 in memcpy ()\n";
        let got = gdb_threads(text, &[12, 10]);
        assert!(got.contains("LWP 12") && got.contains("in poll"), "{got}");
        assert!(got.contains("LWP 10") && got.contains("memcpy"), "{got}");
        assert!(
            !got.contains("LWP 11") && !got.contains("cnd_timedwait"),
            "{got}"
        );
        assert_eq!(gdb_threads(text, &[]), "");
    }
}
