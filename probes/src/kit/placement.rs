//! Which cores the client and the broker run on. The post pinned the broker and the client
//! to separate cores; on a 2-core machine they otherwise take turns on both, and every
//! figure then carries the other's load. `--cpus LIST` pins the probe (and every thread it
//! starts: librdkafka's, the embedded mock's) with sched_setaffinity; a broker on this
//! machine is found by its listening socket and its affinity read, so every output says
//! whether the two shared cores.
//!
//! `--own-core CPU` (probes whose clients have one limiting thread) gives that thread a cpu
//! to itself and runs the rest of the client on the others: on a 2-core machine each
//! client's limit then runs on a core of its own, as on the post's 32-core machine, while the
//! rest of the client shares the broker's.

use crate::kit::error::{ProbeError, Result};
use kgap_analyzers::findings::probe_result::Placement;
use nix::sched::{sched_getaffinity, sched_setaffinity, CpuSet};
use nix::unistd::Pid;

/// Parses `0`, `1,3`, `0-2,5`: a cpu list as taskset and /proc write it.
pub fn parse_cpus(s: &str) -> std::result::Result<Vec<usize>, String> {
    let mut out = Vec::new();
    for part in s.split(',') {
        let part = part.trim();
        if part.is_empty() {
            return Err(format!("empty item in cpu list {s:?} (e.g. 0 or 0-1,3)"));
        }
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        let (a, b): (usize, usize) = match (a.trim().parse(), b.trim().parse()) {
            (Ok(a), Ok(b)) if a <= b => (a, b),
            _ => {
                return Err(format!(
                    "bad cpu list item {part:?} in {s:?} (e.g. 0 or 0-1,3)"
                ))
            }
        };
        out.extend(a..=b);
    }
    out.sort_unstable();
    out.dedup();
    let cores = machine_cores();
    if let Some(&c) = out.iter().find(|&&c| c >= cores) {
        return Err(format!(
            "cpu {c} does not exist: this machine has cpus 0-{}",
            cores.saturating_sub(1)
        ));
    }
    Ok(out)
}

/// The machine's cores (online cpus), whatever this process's affinity.
pub fn machine_cores() -> usize {
    // available_parallelism follows our own affinity; sysconf counts the machine's.
    let online = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    if online > 0 {
        online as usize
    } else {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    }
}

/// Pins the calling thread, and so every thread it starts afterwards, to `cpus`. Call it
/// first in main, before any thread exists.
pub fn pin(cpus: &[usize]) -> Result<()> {
    let mut set = CpuSet::new();
    for &c in cpus {
        set.set(c)
            .map_err(|e| ProbeError::Usage(format!("--cpus: cpu {c}: {e}")))?;
    }
    sched_setaffinity(Pid::from_raw(0), &set)
        .map_err(|e| ProbeError::Usage(format!("--cpus: sched_setaffinity: {e}")))
}

/// The cpus the rest of the client runs on when `own` is given to its limiting threads:
/// `cpus` (all of the machine's when None) without `own`.
pub fn rest_of(cpus: Option<&[usize]>, own: usize) -> std::result::Result<Vec<usize>, String> {
    let cores = machine_cores();
    if own >= cores {
        return Err(format!(
            "--own-core: cpu {own} does not exist: this machine has cpus 0-{}",
            cores.saturating_sub(1)
        ));
    }
    let all: Vec<usize> = (0..cores).collect();
    let rest: Vec<usize> = cpus
        .unwrap_or(&all)
        .iter()
        .copied()
        .filter(|&c| c != own)
        .collect();
    if rest.is_empty() {
        return Err(format!(
            "--own-core {own}: no cpu is left for the rest of the client (give --cpus other \
             cpus as well, e.g. --cpus 0 --own-core 1)"
        ));
    }
    Ok(rest)
}

/// Pins every thread of process `pid` whose name (`/proc/PID/task/TID/comm`) `is_limit`
/// picks to `cpu` alone. Returns how many such threads the process has, pinned now or
/// before; 0 when none runs yet (or the process is gone).
pub fn pin_threads(pid: u32, cpu: usize, is_limit: impl Fn(&str) -> bool) -> usize {
    let mut set = CpuSet::new();
    if set.set(cpu).is_err() {
        return 0;
    }
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return 0;
    };
    let mut n = 0;
    for task in tasks.flatten() {
        let Some(tid) = task
            .file_name()
            .to_str()
            .and_then(|t| t.parse::<i32>().ok())
        else {
            continue;
        };
        let Ok(comm) = std::fs::read_to_string(task.path().join("comm")) else {
            continue;
        };
        if !is_limit(comm.trim_end()) {
            continue;
        }
        if sched_setaffinity(Pid::from_raw(tid), &set).is_ok() {
            n += 1;
        }
    }
    n
}

/// A cpu, and the name prefix of the client threads that run on it alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OwnCore {
    pub cpu: usize,
    /// `rdk:broker` (librdkafka's broker threads), `kgap-poll-` (the companion's poll()
    /// threads).
    pub threads: &'static str,
}

impl OwnCore {
    /// Pins `pid`'s threads of that name to the cpu: how many it has (see [`pin_threads`]).
    pub fn pin(&self, pid: u32) -> usize {
        pin_threads(pid, self.cpu, |name| name.starts_with(self.threads))
    }

    /// A run that found none of its limiting threads to pin failed: `when` says when it
    /// looked ("when the window opened").
    pub fn require(&self, found: usize, when: &str) -> Result<()> {
        if found > 0 {
            return Ok(());
        }
        Err(ProbeError::Kafka(format!(
            "--own-core {}: no {}… thread ran {when}, so none was pinned",
            self.cpu, self.threads
        )))
    }
}

fn affinity(pid: i32) -> Option<Vec<usize>> {
    let set = sched_getaffinity(Pid::from_raw(pid)).ok()?;
    Some(
        (0..CpuSet::count())
            .filter(|&c| set.is_set(c).unwrap_or(false))
            .collect(),
    )
}

/// The pid of the process listening on a loopback `host:port` of `bootstrap`, if any.
pub(crate) fn local_broker_pid(bootstrap: &str) -> Option<i32> {
    let ports: Vec<u16> = bootstrap
        .split(',')
        .filter_map(|hp| {
            let (host, port) = hp.trim().rsplit_once(':')?;
            let host = host
                .trim_start_matches("PLAINTEXT://")
                .trim_start_matches("SSL://");
            let local = host.starts_with("127.") || host == "localhost" || host == "::1";
            local.then(|| port.parse().ok()).flatten()
        })
        .collect();
    if ports.is_empty() {
        return None;
    }
    let listening: Vec<u64> = procfs::net::tcp()
        .ok()?
        .into_iter()
        .chain(procfs::net::tcp6().ok().into_iter().flatten())
        .filter(|e| {
            e.state == procfs::net::TcpState::Listen && ports.contains(&e.local_address.port())
        })
        .map(|e| e.inode)
        .collect();
    if listening.is_empty() {
        return None;
    }
    let me = std::process::id() as i32;
    for p in procfs::process::all_processes().ok()?.flatten() {
        if p.pid == me {
            continue;
        }
        let Ok(fds) = p.fd() else { continue };
        for fd in fds.flatten() {
            if let procfs::process::FDTarget::Socket(inode) = fd.target {
                if listening.contains(&inode) {
                    return Some(p.pid);
                }
            }
        }
    }
    None
}

fn list(cpus: &[usize]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        parts.push(if i == j {
            cpus[i].to_string()
        } else {
            format!("{}-{}", cpus[i], cpus[j])
        });
        i = j + 1;
    }
    parts.join(",")
}

/// Where the client and the broker ran. `mock`: the broker is a thread of this process;
/// `own_core`: the client's limiting threads run alone on that cpu (`--own-core`).
pub fn detect(bootstrap: &str, mock: bool, own_core: Option<usize>) -> Placement {
    let machine_cores = machine_cores();
    let mut client = affinity(0).unwrap_or_else(|| (0..machine_cores).collect());
    let rest = list(&client);
    if let Some(own) = own_core {
        client.push(own);
        client.sort_unstable();
        client.dedup();
    }
    let broker = if mock {
        Some(client.clone())
    } else {
        local_broker_pid(bootstrap).and_then(affinity)
    };
    let shares = broker
        .as_ref()
        .map(|b| b.iter().any(|c| client.contains(c)));
    let mut note = match (&broker, shares, mock) {
        (_, _, true) => format!(
            "the embedded mock broker is a thread of this process: it shares the client's \
             cores ({})",
            list(&client)
        ),
        (Some(b), Some(false), _) => format!(
            "client on cpus {}, broker on cpus {}: apart, as the post ran them",
            list(&client),
            list(b)
        ),
        (Some(b), _, _) => format!(
            "client (cpus {}) and broker (cpus {}) share cores of this {machine_cores}-core \
             machine: each figure carries the other's load (scripts/kafka up --cpus 0 and \
             --cpus 1 keep them apart)",
            list(&client),
            list(b)
        ),
        (None, _, _) => format!(
            "client on cpus {}; the broker is not a process on this machine (its cores are \
             its own)",
            list(&client)
        ),
    };
    if let Some(own) = own_core {
        note = format!(
            "{note}; the client's limiting threads ran alone on cpu {own} (--own-core), the \
             rest of it on cpus {rest}"
        );
    }
    Placement {
        machine_cores,
        client_cpus: client,
        broker_cpus: broker,
        shares_cores_with_broker: shares,
        own_core,
        note,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_parse_like_taskset() {
        assert_eq!(parse_cpus("0").unwrap(), vec![0]);
        if machine_cores() >= 2 {
            assert_eq!(parse_cpus("1,0").unwrap(), vec![0, 1]);
            assert_eq!(parse_cpus("0-1").unwrap(), vec![0, 1]);
        }
        assert!(parse_cpus("").is_err());
        assert!(parse_cpus("0,,1").unwrap_err().contains("empty item"));
        assert!(parse_cpus("2-1").is_err());
        assert!(parse_cpus("9999").unwrap_err().contains("does not exist"));
        assert_eq!(list(&[0, 1, 2, 5, 7, 8]), "0-2,5,7-8");
    }

    #[test]
    fn the_mock_always_shares_the_clients_cores() {
        let p = detect("127.0.0.1:1", true, None);
        assert_eq!(p.shares_cores_with_broker, Some(true));
        assert_eq!(p.broker_cpus.as_ref(), Some(&p.client_cpus));
        assert!(p.note.contains("mock"));
    }

    #[test]
    fn a_remote_broker_has_unknown_cores() {
        let p = detect("kafka-1.example.com:9092", false, None);
        assert_eq!(p.shares_cores_with_broker, None);
        assert!(p.note.contains("not a process on this machine"));
    }

    #[test]
    fn own_core_takes_its_cpu_from_the_rest() {
        let cores = machine_cores();
        assert!(rest_of(None, cores).unwrap_err().contains("does not exist"));
        assert!(rest_of(Some(&[0]), 0)
            .unwrap_err()
            .contains("no cpu is left"));
        if cores >= 2 {
            assert_eq!(rest_of(Some(&[0, 1]), 1).unwrap(), vec![0]);
            assert_eq!(rest_of(None, 0).unwrap(), (1..cores).collect::<Vec<_>>());
        }
        let p = detect("kafka-1.example.com:9092", false, Some(0));
        assert!(p.client_cpus.contains(&0));
        assert_eq!(p.own_core, Some(0));
        assert!(p.note.contains("alone on cpu 0 (--own-core)"), "{}", p.note);
    }

    #[test]
    fn a_limiting_thread_is_pinned_by_its_name_and_no_other() {
        let cpu = machine_cores() - 1;
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let (ready_tx, ready_rx) = std::sync::mpsc::channel::<i32>();
        let t = std::thread::Builder::new()
            .name("kgap-limit-t".into())
            .spawn(move || {
                ready_tx.send(nix::unistd::gettid().as_raw()).unwrap();
                let _ = rx.recv();
            })
            .unwrap();
        let tid = ready_rx.recv().unwrap();
        let before = affinity(0);
        let n = pin_threads(std::process::id(), cpu, |name| name == "kgap-limit-t");
        assert_eq!(n, 1);
        assert_eq!(affinity(tid), Some(vec![cpu]));
        // This thread's affinity was not touched.
        assert_eq!(affinity(0), before);
        // Counted again when already pinned; nothing for a name no thread has.
        assert_eq!(
            pin_threads(std::process::id(), cpu, |name| name == "kgap-limit-t"),
            1
        );
        assert_eq!(
            pin_threads(std::process::id(), cpu, |name| name == "no-such"),
            0
        );
        assert_eq!(pin_threads(u32::MAX, cpu, |_| true), 0);
        tx.send(()).unwrap();
        t.join().unwrap();
    }
}
