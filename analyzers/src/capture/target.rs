//! What the process is, before anything is captured: that it exists, that this user may read
//! it, and which kind of Kafka client it can be (librdkafka loaded or running its `rdk:*`
//! threads; a JVM, whose kafka-clients use shows only in its threads and stacks).

use std::fs;
use std::path::{Path, PathBuf};

use super::error::CaptureError;
use crate::thread_cpu::roles;
use crate::vocab::redact;

/// What kind of client the process can be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ClientKind {
    /// librdkafka in its memory maps or `rdk:*` threads (Rust, Python, Go, .NET, Node, C).
    Librdkafka,
    /// A JVM: a Kafka client only if its threads or stacks show kafka-clients.
    Jvm,
}

/// The process to capture.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Target {
    pub pid: i32,
    /// The kernel's name of the process (`comm`).
    pub name: String,
    /// The command line, secrets redacted.
    pub command: String,
    pub uid: u32,
    pub user: String,
    pub kind: ClientKind,
    /// The executable (`/proc/PID/exe`), when readable: a JVM's `java`, beside which its
    /// JDK's jcmd is.
    pub exe: Option<PathBuf>,
    /// librdkafka threads seen at the start (a JVM with a JNI client may have them too).
    pub rdk_threads: usize,
}

/// Whether `pid` has ended: gone from /proc, or a zombie its parent has not reaped yet (its
/// threads, sockets and attach listener are gone with it).
pub fn exited(pid: i32) -> bool {
    pid <= 0 || exited_in(&Path::new("/proc").join(pid.to_string()))
}

fn exited_in(dir: &Path) -> bool {
    match fs::read_to_string(dir.join("stat")) {
        Ok(stat) => stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| rest.starts_with('Z') || rest.starts_with('X')),
        Err(_) => true,
    }
}

/// Looks at `pid` under `proc_root` (`/proc`): exists, readable, a client.
pub fn inspect(pid: i32, proc_root: &Path) -> Result<Target, CaptureError> {
    let dir = proc_root.join(pid.to_string());
    if pid <= 0 || exited_in(&dir) {
        return Err(CaptureError::NoSuchPid(pid));
    }
    let name = fs::read_to_string(dir.join("comm"))
        .map(|s| s.trim_end().to_string())
        .unwrap_or_default();
    let uid = owner_uid(&dir.join("status")).unwrap_or(u32::MAX);
    let user = user_name(uid);
    // The memory maps need the same access as a debugger's read (same user, or root): the
    // test that every later step (fds for sockets, jcmd, stacks) can be had at all.
    let maps = match fs::read_to_string(dir.join("maps")) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(CaptureError::NoSuchPid(pid))
        }
        Err(e)
            if e.kind() == std::io::ErrorKind::PermissionDenied || e.raw_os_error() == Some(13) =>
        {
            return Err(no_permission(pid, uid, &user, "reading /proc/PID/maps"))
        }
        Err(e) => {
            return Err(CaptureError::NoPermission {
                pid,
                what: format!("reading /proc/{pid}/maps ({e})"),
                fix: fix_for(pid, uid, &user),
            })
        }
    };
    if let Err(e) = fs::read_dir(dir.join("fd")) {
        if e.kind() == std::io::ErrorKind::PermissionDenied {
            return Err(no_permission(pid, uid, &user, "listing /proc/PID/fd"));
        }
    }
    let rdk_threads = thread_names(&dir)
        .iter()
        .filter(|n| roles::classify(n).is_rdk())
        .count();
    let kind = if maps.contains("libjvm.so") {
        ClientKind::Jvm
    } else if maps.contains("librdkafka") || rdk_threads > 0 {
        ClientKind::Librdkafka
    } else {
        return Err(CaptureError::NotAClient { pid, name });
    };
    let argv: Vec<String> = fs::read(dir.join("cmdline"))
        .unwrap_or_default()
        .split(|&b| b == 0)
        .filter(|w| !w.is_empty())
        .map(|w| String::from_utf8_lossy(w).into_owned())
        .collect();
    Ok(Target {
        pid,
        name,
        command: redact::foreign_command_line(argv),
        uid,
        user,
        kind,
        exe: fs::read_link(dir.join("exe")).ok(),
        rdk_threads,
    })
}

/// The kernel names of the process's threads now.
pub fn thread_names(proc_dir: &Path) -> Vec<String> {
    let Ok(tasks) = fs::read_dir(proc_dir.join("task")) else {
        return Vec::new();
    };
    tasks
        .flatten()
        .filter_map(|t| fs::read_to_string(t.path().join("comm")).ok())
        .map(|s| s.trim_end().to_string())
        .collect()
}

fn no_permission(pid: i32, uid: u32, user: &str, what: &str) -> CaptureError {
    CaptureError::NoPermission {
        pid,
        what: what.replace("PID", &pid.to_string()),
        fix: fix_for(pid, uid, user),
    }
}

fn fix_for(pid: i32, uid: u32, user: &str) -> String {
    format!(
        "it runs as {user} (uid {uid}): run capture as that user (`sudo -u {user} capture \
         --pid {pid}`) or as root"
    )
}

/// The real uid on the `Uid:` line of `/proc/PID/status`.
fn owner_uid(status: &Path) -> Option<u32> {
    let s = fs::read_to_string(status).ok()?;
    s.lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|r| r.split_whitespace().next())
        .and_then(|u| u.parse().ok())
}

/// The user name of `uid` from /etc/passwd, or the number.
fn user_name(uid: u32) -> String {
    fs::read_to_string("/etc/passwd")
        .ok()
        .and_then(|p| {
            p.lines().find_map(|l| {
                let mut f = l.split(':');
                let name = f.next()?;
                let id: u32 = f.nth(1)?.parse().ok()?;
                (id == uid).then(|| name.to_string())
            })
        })
        .unwrap_or_else(|| uid.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    // One test: a second one running beside it would see its rdk:broker1 thread.
    #[test]
    fn a_process_is_a_client_by_its_rdk_threads() {
        // The test binary runs no librdkafka thread and is no JVM...
        let me = std::process::id() as i32;
        match inspect(me, Path::new("/proc")) {
            Err(CaptureError::NotAClient { pid, .. }) => assert_eq!(pid, me),
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            inspect(i32::MAX, Path::new("/proc")),
            Err(CaptureError::NoSuchPid(_))
        ));
        // ...until it runs a thread named as librdkafka names its own.
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let (ready_tx, ready) = std::sync::mpsc::channel::<()>();
        let h = std::thread::Builder::new()
            .name("rdk:broker1".into())
            .spawn(move || {
                ready_tx.send(()).unwrap();
                rx.recv().unwrap();
            })
            .unwrap();
        ready.recv().unwrap();
        let t = inspect(std::process::id() as i32, Path::new("/proc")).unwrap();
        tx.send(()).unwrap();
        h.join().unwrap();
        assert_eq!(t.kind, ClientKind::Librdkafka);
        assert_eq!(t.rdk_threads, 1);
    }

    #[test]
    fn a_zombie_has_exited() {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id() as i32;
        // Not reaped yet: a zombie once it has run.
        let t0 = std::time::Instant::now();
        while !exited(pid) {
            assert!(t0.elapsed().as_secs() < 10, "`true` never ended");
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert!(
            Path::new(&format!("/proc/{pid}")).exists(),
            "still a zombie"
        );
        assert!(matches!(
            inspect(pid, Path::new("/proc")),
            Err(CaptureError::NoSuchPid(_))
        ));
        child.wait().unwrap();
        assert!(!exited(std::process::id() as i32));
    }
}
