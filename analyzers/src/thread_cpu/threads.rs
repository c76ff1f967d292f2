//! Per-thread CPU from `/proc/<pid>/task/*/stat`: which thread is the limit.
//!
//! The post's consumer story is a chain of saturated threads (the app thread calling poll(),
//! then librdkafka's `rdk:broker*` thread), so every probe reports cores per thread. A
//! [`Snapshot`] is cheap (one small read per thread); [`cores_between`] turns two of them into
//! cores per thread over the interval. Threads that exit inside the interval are missing from
//! the per-thread list but still counted in the process total.

use serde::{Deserialize, Serialize};
use std::time::Instant;

/// CPU time of one thread at one moment, in clock ticks (USER_HZ, normally 100 per second).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThreadTicks {
    pub tid: i32,
    /// The kernel's thread name (`comm`, at most 15 bytes): `rdk:broker1`, `rdk:main`, …
    pub name: String,
    pub user_ticks: u64,
    pub system_ticks: u64,
}

/// All threads of a process at one moment.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Snapshot {
    /// Seconds since the sampler's origin (monotonic).
    pub at_s: f64,
    /// Process total (includes threads that already exited).
    pub process_ticks: u64,
    pub threads: Vec<ThreadTicks>,
}

/// Cores used by one thread over an interval (1.0 = one core busy the whole time).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThreadCores {
    pub tid: i32,
    pub name: String,
    pub cores: f64,
    pub user_cores: f64,
    pub system_cores: f64,
}

/// Reads a snapshot of `pid` (None: this process). `origin` anchors `at_s`.
pub fn snapshot(pid: Option<i32>, origin: Instant) -> std::io::Result<Snapshot> {
    let process = match pid {
        Some(pid) => procfs::process::Process::new(pid),
        None => procfs::process::Process::myself(),
    }
    .map_err(to_io)?;
    let at_s = origin.elapsed().as_secs_f64();
    let stat = process.stat().map_err(to_io)?;
    let mut threads = Vec::with_capacity(stat.num_threads.max(1) as usize);
    for task in process.tasks().map_err(to_io)? {
        // A thread may exit between listing and reading: skip it, it is in the process total.
        let Ok(task) = task else { continue };
        let Ok(ts) = task.stat() else { continue };
        threads.push(ThreadTicks {
            tid: task.tid,
            name: ts.comm,
            user_ticks: ts.utime,
            system_ticks: ts.stime,
        });
    }
    Ok(Snapshot {
        at_s,
        process_ticks: stat.utime + stat.stime,
        threads,
    })
}

fn to_io(e: procfs::ProcError) -> std::io::Error {
    std::io::Error::other(e.to_string())
}

/// Clock ticks per second of this machine (USER_HZ).
pub fn ticks_per_second() -> u64 {
    procfs::ticks_per_second()
}

/// Cores per thread between two snapshots of the same process, busiest first. A thread born
/// inside the interval counts from zero.
pub fn cores_between(a: &Snapshot, b: &Snapshot, ticks_per_s: u64) -> Vec<ThreadCores> {
    let secs = b.at_s - a.at_s;
    if secs <= 0.0 || ticks_per_s == 0 {
        return Vec::new();
    }
    let scale = 1.0 / (secs * ticks_per_s as f64);
    // By tid: a JVM or a big pool has thousands of threads (a linear search per thread
    // would make each sample quadratic).
    let before: std::collections::HashMap<i32, (u64, u64)> = a
        .threads
        .iter()
        .map(|p| (p.tid, (p.user_ticks, p.system_ticks)))
        .collect();
    let mut out: Vec<ThreadCores> = b
        .threads
        .iter()
        .map(|t| {
            let (u0, s0) = before.get(&t.tid).copied().unwrap_or((0, 0));
            let user = t.user_ticks.saturating_sub(u0) as f64 * scale;
            let system = t.system_ticks.saturating_sub(s0) as f64 * scale;
            ThreadCores {
                tid: t.tid,
                name: t.name.clone(),
                cores: user + system,
                user_cores: user,
                system_cores: system,
            }
        })
        .collect();
    out.sort_by(|x, y| y.cores.total_cmp(&x.cores).then(x.tid.cmp(&y.tid)));
    out
}

/// Process cores between two snapshots (all threads, including exited ones).
pub fn process_cores(a: &Snapshot, b: &Snapshot, ticks_per_s: u64) -> f64 {
    let secs = b.at_s - a.at_s;
    if secs <= 0.0 || ticks_per_s == 0 {
        return 0.0;
    }
    b.process_ticks.saturating_sub(a.process_ticks) as f64 / (secs * ticks_per_s as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snap(at_s: f64, total: u64, threads: &[(i32, &str, u64, u64)]) -> Snapshot {
        Snapshot {
            at_s,
            process_ticks: total,
            threads: threads
                .iter()
                .map(|&(tid, name, u, s)| ThreadTicks {
                    tid,
                    name: name.into(),
                    user_ticks: u,
                    system_ticks: s,
                })
                .collect(),
        }
    }

    #[test]
    fn cores_are_tick_deltas_over_wall_time_busiest_first() {
        let a = snap(1.0, 100, &[(1, "app", 50, 10), (2, "rdk:broker1", 20, 0)]);
        let b = snap(
            3.0,
            400,
            &[
                (1, "app", 100, 10),
                (2, "rdk:broker1", 200, 20),
                (3, "rdk:main", 4, 0),
            ],
        );
        let c = cores_between(&a, &b, 100);
        assert_eq!(c[0].name, "rdk:broker1");
        assert!((c[0].cores - 1.0).abs() < 1e-9, "{c:?}");
        assert!((c[0].system_cores - 0.1).abs() < 1e-9);
        assert!((c[1].cores - 0.25).abs() < 1e-9);
        // Born inside the interval: counted from zero.
        assert!((c[2].cores - 0.02).abs() < 1e-9);
        assert!((process_cores(&a, &b, 100) - 1.5).abs() < 1e-9);
    }

    #[test]
    fn empty_or_reversed_interval_gives_nothing() {
        let a = snap(2.0, 10, &[(1, "x", 1, 1)]);
        assert!(cores_between(&a, &a, 100).is_empty());
        assert_eq!(process_cores(&a, &a, 100), 0.0);
    }

    /// CPU time this thread has consumed (not wall time: robust on a loaded machine).
    fn thread_cpu_time() -> std::time::Duration {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: a valid out-pointer to a timespec.
        unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
        std::time::Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
    }

    #[test]
    fn snapshot_of_this_process_sees_a_named_busy_thread() {
        use std::sync::mpsc;
        let origin = Instant::now();
        let a = snapshot(None, origin).unwrap();
        let (busy_done, wait_busy) = mpsc::channel();
        let (release, wait_release) = mpsc::channel::<()>();
        let h = std::thread::Builder::new()
            .name("kgap-spin".into())
            .spawn(move || {
                // Burn 80 ms of CPU, however long that takes on a busy machine.
                let mut x = 0u64;
                while thread_cpu_time() < std::time::Duration::from_millis(80) {
                    x = x.wrapping_add(std::hint::black_box(1));
                }
                busy_done.send(()).unwrap();
                // Stay alive until the second snapshot is taken.
                wait_release.recv().unwrap();
                x
            })
            .unwrap();
        wait_busy.recv().unwrap();
        let b = snapshot(None, origin).unwrap();
        release.send(()).unwrap();
        h.join().unwrap();
        let before = a.threads.iter().find(|t| t.name == "kgap-spin");
        assert!(before.is_none(), "the thread did not exist yet");
        let spin = b
            .threads
            .iter()
            .find(|t| t.name == "kgap-spin")
            .expect("the spinning thread is listed by name");
        // 80 ms of CPU is 8 ticks at USER_HZ 100; allow for tick rounding.
        let ticks = spin.user_ticks + spin.system_ticks;
        assert!(ticks * 1000 / ticks_per_second() >= 50, "{spin:?}");
        let cores = cores_between(&a, &b, ticks_per_second());
        assert!(cores.iter().any(|t| t.name == "kgap-spin" && t.cores > 0.0));
    }
}
