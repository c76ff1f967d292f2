//! What else ran beside each rep: the machine's busy CPU from /proc/stat (the hypervisor's
//! steal apart), less the probe's own (its children, the Java companion, included) and the
//! local broker's. A CANNOT TELL or an outlier then says whether other processes competed
//! with the client, or the client itself varied.

use kgap_analyzers::findings::probe_result::{OtherProcess, RepNoise};
use kgap_analyzers::findings::Verdict;
use std::collections::{HashMap, HashSet};
use std::time::Instant;

/// Other processes at or above this many cores beside a run make it noisy: a reasoned bound,
/// a fifth of a core is a tenth of this 2-core machine, larger than the spread the rules
/// tolerate between reps.
pub const NOISY_OTHERS_CORES: f64 = 0.2;
/// Steal at or above this many cores is worth saying (a VM whose host is busy).
pub const NOISY_STEAL_CORES: f64 = 0.05;

/// CPU counters at one instant, in clock ticks.
#[derive(Debug, Clone)]
pub struct Snapshot {
    at: Instant,
    busy: u64,
    steal: u64,
    own: u64,
    broker: Option<u64>,
    /// Every other process: pid → (comm, its ticks and its ended children's).
    others: HashMap<i32, (String, u64)>,
}

/// One process in /proc: parent, name, its ticks and its ended (reaped) children's.
struct Proc {
    ppid: i32,
    comm: String,
    ticks: u64,
}

fn processes() -> HashMap<i32, Proc> {
    let Ok(all) = procfs::process::all_processes() else {
        return HashMap::new();
    };
    all.flatten()
        .filter_map(|p| p.stat().ok())
        .map(|s| {
            let children = (s.cutime.max(0) + s.cstime.max(0)) as u64;
            let proc = Proc {
                ppid: s.ppid,
                comm: s.comm,
                ticks: s.utime + s.stime + children,
            };
            (s.pid, proc)
        })
        .collect()
}

/// `root` and every process under it that is still running.
fn tree(procs: &HashMap<i32, Proc>, root: i32) -> HashSet<i32> {
    let mut members = HashSet::from([root]);
    // Parents come before children in pid order only mostly (pids wrap): repeat to a fixpoint.
    loop {
        let before = members.len();
        for (pid, p) in procs {
            if members.contains(&p.ppid) {
                members.insert(*pid);
            }
        }
        if members.len() == before {
            return members;
        }
    }
}

/// The counters now; None where /proc cannot be read (then nothing is said).
///
/// A tree's ticks are its processes' own and their ended children's: a child that ends
/// between two snapshots moves from the first's live members into its parent's ended
/// children, so the difference is what it ran in between, as for one still running.
pub fn snapshot(broker_pid: Option<i32>) -> Option<Snapshot> {
    use procfs::CurrentSI;
    let k = procfs::KernelStats::current().ok()?;
    let t = k.total;
    let busy = t.user + t.nice + t.system + t.irq.unwrap_or(0) + t.softirq.unwrap_or(0);
    let procs = processes();
    let me = std::process::id() as i32;
    procs.get(&me)?;
    let own_tree = tree(&procs, me);
    let broker_tree = broker_pid
        .filter(|p| procs.contains_key(p))
        .map(|p| tree(&procs, p));
    let ticks = |members: &HashSet<i32>| members.iter().map(|p| procs[p].ticks).sum::<u64>();
    let others = procs
        .iter()
        .filter(|(pid, _)| {
            !own_tree.contains(pid) && !broker_tree.as_ref().is_some_and(|b| b.contains(pid))
        })
        .map(|(pid, p)| (*pid, (p.comm.clone(), p.ticks)))
        .collect();
    Some(Snapshot {
        at: Instant::now(),
        busy,
        steal: t.steal.unwrap_or(0),
        own: ticks(&own_tree),
        broker: broker_tree.as_ref().map(ticks),
        others,
    })
}

/// Other processes named beside a run: at most this many…
const OTHERS_NAMED: usize = 3;
/// …each with at least this many cores over the run.
const OTHER_NAMED_MIN_CORES: f64 = 0.05;

/// The cores each side took between two snapshots of one run.
pub fn between(a: &Snapshot, b: &Snapshot, point: usize, rep: u32) -> Option<RepNoise> {
    let secs = b.at.duration_since(a.at).as_secs_f64();
    let hz = procfs::ticks_per_second() as f64;
    if secs <= 0.0 || hz <= 0.0 {
        return None;
    }
    let cores = |x: u64, y: u64| y.saturating_sub(x) as f64 / hz / secs;
    let r3 = |x: f64| (x * 1000.0).round() / 1000.0;
    let busy = cores(a.busy, b.busy);
    let own = cores(a.own, b.own);
    let broker = a.broker.zip(b.broker).map(|(x, y)| cores(x, y));
    // A process born during the run counts from zero; one that ended is not seen.
    let mut others_top: Vec<OtherProcess> = b
        .others
        .iter()
        .map(|(pid, (comm, t))| {
            let before = a
                .others
                .get(pid)
                .filter(|(c, _)| c == comm)
                .map_or(0, |x| x.1);
            OtherProcess {
                pid: *pid,
                comm: comm.clone(),
                cores: r3(cores(before, *t)),
            }
        })
        .filter(|o| o.cores >= OTHER_NAMED_MIN_CORES)
        .collect();
    others_top.sort_by(|x, y| y.cores.total_cmp(&x.cores));
    others_top.truncate(OTHERS_NAMED);
    Some(RepNoise {
        point,
        rep,
        machine_busy_cores: r3(busy),
        own_cores: r3(own),
        broker_cores: broker.map(r3),
        others_cores: r3((busy - own - broker.unwrap_or(0.0)).max(0.0)),
        steal_cores: r3(cores(a.steal, b.steal)),
        others_top,
    })
}

/// Whether a run had other processes (or steal) worth saying beside its figures.
pub fn noisy(n: &RepNoise) -> bool {
    n.others_cores >= NOISY_OTHERS_CORES || n.steal_cores >= NOISY_STEAL_CORES
}

/// One line over every run: the others' and the steal's cores (median, min–max), and the
/// runs that were noisy; None when nothing was measured.
pub fn summary(noise: &[RepNoise]) -> Option<String> {
    if noise.is_empty() {
        return None;
    }
    let show = |f: fn(&RepNoise) -> f64| {
        let mut v: Vec<f64> = noise.iter().map(f).collect();
        v.sort_by(f64::total_cmp);
        format!("{:.2} ({:.2}–{:.2})", v[v.len() / 2], v[0], v[v.len() - 1])
    };
    let loud = noise.iter().filter(|n| noisy(n)).count();
    // Who competed: each other process's most over the noisy runs, busiest first.
    let mut named: Vec<&OtherProcess> = Vec::new();
    for o in noise
        .iter()
        .filter(|n| noisy(n))
        .flat_map(|n| &n.others_top)
    {
        match named
            .iter_mut()
            .find(|x| x.pid == o.pid && x.comm == o.comm)
        {
            Some(x) if x.cores < o.cores => *x = o,
            Some(_) => {}
            None => named.push(o),
        }
    }
    named.sort_by(|x, y| y.cores.total_cmp(&x.cores));
    let who = if named.is_empty() {
        String::new()
    } else {
        let list: Vec<String> = named
            .iter()
            .take(OTHERS_NAMED)
            .map(|o| format!("{} (pid {}) {:.2} cores", o.comm, o.pid, o.cores))
            .collect();
        format!(
            "; the busiest other processes in those runs: {}",
            list.join(", ")
        )
    };
    Some(format!(
        "beside the runs other processes took {} cores and the hypervisor's steal {} (median \
         (min–max) over {} runs; the probe and the broker not counted); {loud} of {} runs had \
         ≥ {NOISY_OTHERS_CORES} cores of others or ≥ {NOISY_STEAL_CORES} of steal{}",
        show(|n| n.others_cores),
        show(|n| n.steal_cores),
        noise.len(),
        noise.len(),
        if loud > 0 {
            format!(
                ": their figures competed with other work, not only the client's own limits \
                 (a quieter machine, or --cpus to pin the client apart){who}"
            )
        } else {
            ": the reps ran on a quiet machine".to_string()
        }
    ))
}

/// Says the sweep's noise beside every verdict that could not decide or flags an outlier,
/// so the reader can tell the machine's noise from the client's.
pub fn annotate(verdicts: &mut [Verdict], noise: &[RepNoise]) {
    let Some(line) = summary(noise) else { return };
    for v in verdicts.iter_mut() {
        let outlier = v.warnings.iter().any(|w| w.contains("outlier"));
        if v.outcome == kgap_analyzers::findings::Outcome::CannotTell || outlier {
            v.warnings.push(format!("noise: {line}"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(others: f64, steal: f64) -> RepNoise {
        RepNoise {
            point: 0,
            rep: 1,
            machine_busy_cores: 1.0 + others,
            own_cores: 0.8,
            broker_cores: Some(0.2),
            others_cores: others,
            steal_cores: steal,
            others_top: Vec::new(),
        }
    }

    #[test]
    fn a_quiet_sweep_says_so_and_a_noisy_rep_is_named() {
        let quiet = summary(&[n(0.02, 0.0), n(0.05, 0.0), n(0.01, 0.0)]).unwrap();
        assert!(quiet.contains("0 of 3 runs"), "{quiet}");
        assert!(quiet.contains("quiet machine"), "{quiet}");
        let loud = summary(&[n(0.02, 0.0), n(1.1, 0.0), n(0.01, 0.1)]).unwrap();
        assert!(loud.contains("2 of 3 runs"), "{loud}");
        assert!(loud.contains("competed with other work"), "{loud}");
        assert!(summary(&[]).is_none());
        assert!(
            !loud.contains("busiest other"),
            "none measured, none named: {loud}"
        );
    }

    #[test]
    fn the_busiest_other_processes_of_noisy_runs_are_named() {
        let other = |pid, comm: &str, cores| OtherProcess {
            pid,
            comm: comm.into(),
            cores,
        };
        let mut a = n(0.5, 0.0);
        a.others_top = vec![other(7, "bash", 0.41), other(9, "java", 0.06)];
        let mut b = n(0.3, 0.0);
        b.others_top = vec![other(7, "bash", 0.25), other(11, "cc1", 0.2)];
        // A quiet run's processes are not named.
        let mut c = n(0.1, 0.0);
        c.others_top = vec![other(13, "ld", 0.09)];
        let line = summary(&[a, b, c]).unwrap();
        assert!(
            line.ends_with(
                "the busiest other processes in those runs: bash (pid 7) 0.41 cores, cc1 (pid \
                 11) 0.20 cores, java (pid 9) 0.06 cores"
            ),
            "{line}"
        );
    }

    #[test]
    fn a_child_s_cpu_is_the_probe_s_own_running_or_ended() {
        // A child that burns CPU across the second snapshot, then another that ends before
        // it: both are this process's, none of it "others".
        let burn = "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done";
        let a = snapshot(None).expect("/proc readable");
        let mut running = std::process::Command::new("sh")
            .args(["-c", &format!("{burn}; sleep 5")])
            .spawn()
            .unwrap();
        std::process::Command::new("sh")
            .args(["-c", burn])
            .status()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(600));
        let b = snapshot(None).unwrap();
        let _ = running.kill();
        let _ = running.wait();
        let r = between(&a, &b, 0, 1).unwrap();
        assert!(r.own_cores > 0.2, "{r:?}");
        assert!(
            r.others_top.iter().all(|o| o.comm != "sh"),
            "the probe's children are its own: {r:?}"
        );
    }

    #[test]
    fn snapshots_of_this_process_count_its_own_cpu() {
        let a = snapshot(None).expect("/proc readable");
        let t = Instant::now();
        let mut x = 0u64;
        while t.elapsed().as_millis() < 300 {
            x = x.wrapping_add(std::hint::black_box(1));
        }
        let b = snapshot(None).unwrap();
        let r = between(&a, &b, 0, 1).unwrap();
        assert!(r.own_cores > 0.5, "{r:?} {x}");
        assert!(r.machine_busy_cores >= r.own_cores * 0.8, "{r:?}");
    }
}
