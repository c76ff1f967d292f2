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
    /// Runs `jcmd PID <args>` and returns its answer without the leading `PID:` line. A
    /// non-zero exit, an exception in the answer, or the time limit is an error.
    pub fn call(&self, args: &[&str]) -> Result<String, JcmdError> {
        let cmd = args.join(" ");
        let fail = |reason: String| JcmdError::Failed {
            cmd: cmd.clone(),
            reason,
        };
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_explicit_jcmd_must_exist() {
        assert_eq!(find(None, Some(Path::new("/nonexistent/jcmd"))), None);
        let me = std::env::current_exe().unwrap();
        assert_eq!(find(None, Some(&me)), Some(me));
    }
}
