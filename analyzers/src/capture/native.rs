//! Native stacks of a librdkafka process: `eu-stack` (elfutils; fast) or `gdb -batch`, when
//! one is installed. Both attach with ptrace, which stops every thread of the target while
//! the stacks are read; the time each took is kept, so the report says what it cost.

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

/// Reads every thread's stack of `pid` once.
pub fn take(tool: &StackTool, pid: i32, limit: Duration) -> Result<Stacks, String> {
    let mut cmd = match tool {
        StackTool::EuStack(p) => {
            let mut c = Command::new(p);
            c.args(["-p", &pid.to_string()]);
            c
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
            c
        }
    };
    let t0 = Instant::now();
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("{}: {e}", tool.name()))?;
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
            return Err(format!(
                "{} took over {} s: stopped",
                tool.name(),
                limit.as_secs()
            ));
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
        return Err(format!("{}: {}", tool.name(), ptrace_hint(err.trim())));
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
