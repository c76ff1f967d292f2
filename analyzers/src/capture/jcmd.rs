//! The JDK's attach tool, `jcmd`: found beside the target's own `java` (the matching JDK)
//! before PATH, run with a time limit, its answers as text.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long one jcmd call may take: attaching to a busy JVM on a loaded host takes seconds
/// (the JDK's own attach timeout is 10 s).
const CALL_LIMIT: Duration = Duration::from_secs(30);

/// A jcmd bound to one JVM.
#[derive(Debug, Clone)]
pub struct Jcmd {
    pub path: PathBuf,
    pub pid: i32,
}

/// Why a call failed.
#[derive(Debug, Clone, thiserror::Error)]
pub enum JcmdError {
    #[error("jcmd {cmd}: {reason}")]
    Failed { cmd: String, reason: String },
}

/// jcmd of the JDK the target runs on (`exe`'s folder), else `$JAVA_HOME/bin`, else PATH.
pub fn find(exe: Option<&Path>, given: Option<&Path>) -> Option<PathBuf> {
    if let Some(g) = given {
        return g.is_file().then(|| g.to_path_buf());
    }
    let beside = exe.and_then(|e| e.parent()).map(|d| d.join("jcmd"));
    let home = std::env::var_os("JAVA_HOME").map(|h| PathBuf::from(h).join("bin/jcmd"));
    let path = std::env::var_os("PATH")
        .map(|p| {
            std::env::split_paths(&p)
                .map(|d| d.join("jcmd"))
                .collect::<Vec<_>>()
        })
        .unwrap_or_default();
    beside
        .into_iter()
        .chain(home)
        .chain(path)
        .find(|p| p.is_file())
}

impl Jcmd {
    /// Waits (at most `limit`) until the JVM catches SIGQUIT, as it does once started: a
    /// capture begun beside the JVM's own start attaches when it can, not ends it.
    pub fn wait_until_attachable(&self, limit: Duration) {
        let t0 = Instant::now();
        while attach_would_end_it(self.pid)
            && !super::target::exited(self.pid)
            && t0.elapsed() < limit
        {
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Runs `jcmd PID <args>` and returns its answer without the leading `PID:` line. A
    /// non-zero exit, an exception in the answer, or the time limit is an error.
    pub fn call(&self, args: &[&str]) -> Result<String, JcmdError> {
        let cmd = args.join(" ");
        let fail = |reason: String| JcmdError::Failed {
            cmd: cmd.clone(),
            reason,
        };
        // A zombie's pid still answers kill(0) and /proc; jcmd would wait out its 10 s timeout.
        if super::target::exited(self.pid) {
            return Err(fail("the process exited".to_string()));
        }
        // jcmd of JDK 20 and older sends SIGQUIT to start the target's attach listener;
        // before the JVM has installed its handler, that signal ends the JVM.
        if attach_would_end_it(self.pid) {
            return Err(fail(
                "the JVM has not yet installed its SIGQUIT handler nor started its attach \
                 listener (still starting): jcmd's signal would end it"
                    .to_string(),
            ));
        }
        let mut child = Command::new(&self.path)
            .arg(self.pid.to_string())
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| fail(format!("cannot run {}: {e}", self.path.display())))?;
        let mut out = child.stdout.take().expect("piped");
        let mut err = child.stderr.take().expect("piped");
        let reader = std::thread::spawn(move || {
            let mut o = String::new();
            let _ = out.read_to_string(&mut o);
            let mut e = String::new();
            let _ = err.read_to_string(&mut e);
            (o, e)
        });
        let t0 = Instant::now();
        let status = loop {
            if let Some(s) = child.try_wait().map_err(|e| fail(e.to_string()))? {
                break s;
            }
            if t0.elapsed() > CALL_LIMIT {
                let _ = child.kill();
                let _ = child.wait();
                return Err(fail(format!("no answer in {} s", CALL_LIMIT.as_secs())));
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let (out, err) = reader.join().unwrap_or_default();
        let body = out
            .strip_prefix(&format!("{}:\n", self.pid))
            .unwrap_or(&out)
            .to_string();
        // jcmd exits 0 with an exception in its output for some refusals (a bad option).
        let refused = body.lines().any(|l| {
            l.starts_with("java.lang.")
                || l.starts_with("com.sun.tools.attach.")
                || l.contains("Exception:")
        });
        if !status.success() || refused {
            let text = if err.trim().is_empty() { &out } else { &err };
            let first = text
                .lines()
                .find(|l| !l.trim().is_empty() && !l.ends_with(':'))
                .unwrap_or("no output")
                .trim();
            return Err(fail(first.to_string()));
        }
        Ok(body)
    }
}

/// jcmd connects to the attach listener's socket when there is one (a JVM run with -Xrs
/// starts its listener at launch); otherwise it sends SIGQUIT, which a JVM catches once its
/// handlers are in place and which ends any process that does not. One read of /proc.
fn attach_would_end_it(pid: i32) -> bool {
    status_of(pid).is_some_and(|s| !catches(&s) && !listener_socket(pid, &s).exists())
}

fn status_of(pid: i32) -> Option<procfs::process::Status> {
    procfs::process::Process::new(pid).ok()?.status().ok()
}

/// The attach listener's socket as jcmd looks for it: `.java_pid<pid>` in the target's
/// /tmp, by its pid in its own namespace (a container's).
fn listener_socket(pid: i32, status: &procfs::process::Status) -> PathBuf {
    let ns_pid = status
        .nspid
        .as_ref()
        .and_then(|n| n.last().copied())
        .unwrap_or(pid);
    PathBuf::from(format!("/proc/{pid}/root/tmp/.java_pid{ns_pid}"))
}

fn catches(status: &procfs::process::Status) -> bool {
    const SIGQUIT: u64 = 3;
    status.sigcgt & (1 << (SIGQUIT - 1)) != 0
}

/// Whether `pid` catches SIGQUIT (its `SigCgt` mask in /proc), as the JVM does once its
/// signal handlers are in place; None when the process cannot be read.
pub fn catches_sigquit(pid: i32) -> Option<bool> {
    status_of(pid).map(|s| catches(&s))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_explicit_jcmd_must_exist() {
        assert_eq!(find(None, Some(Path::new("/nonexistent/jcmd"))), None);
        let me = std::env::current_exe().unwrap();
        assert_eq!(find(None, Some(&me)), Some(me));
    }

    #[test]
    fn a_process_without_a_sigquit_handler_is_not_attached() {
        // `sleep` keeps SIGQUIT's default action: jcmd's signal would end it.
        let mut child = Command::new("sleep").arg("30").spawn().unwrap();
        let pid = child.id() as i32;
        assert_eq!(catches_sigquit(pid), Some(false));
        let j = Jcmd {
            path: PathBuf::from("/bin/true"),
            pid,
        };
        let e = j.call(&["VM.version"]).unwrap_err().to_string();
        assert!(e.contains("SIGQUIT handler"), "{e}");
        assert!(child.try_wait().unwrap().is_none(), "still running");
        let _ = child.kill();
        let _ = child.wait();
        assert_eq!(catches_sigquit(i32::MAX - 1), None);
    }
}
