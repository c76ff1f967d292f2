//! What else ran beside each rep: the machine's busy CPU from /proc/stat (the hypervisor's
//! steal apart), less the probe's own (its children, the Java companion, included) and the
//! local broker's. A CANNOT TELL or an outlier then says whether other processes competed
//! with the client, or the client itself varied.

use kgap_analyzers::findings::probe_result::RepNoise;
use kgap_analyzers::findings::Verdict;
use std::time::Instant;

/// Other processes at or above this many cores beside a run make it noisy: a reasoned bound,
/// a fifth of a core is a tenth of this 2-core machine, larger than the spread the rules
/// tolerate between reps.
pub const NOISY_OTHERS_CORES: f64 = 0.2;
/// Steal at or above this many cores is worth saying (a VM whose host is busy).
pub const NOISY_STEAL_CORES: f64 = 0.05;

/// CPU counters at one instant, in clock ticks.
#[derive(Debug, Clone, Copy)]
pub struct Snapshot {
    at: Instant,
    busy: u64,
    steal: u64,
    own: u64,
    broker: Option<u64>,
}

fn ticks_of(pid: Option<i32>) -> Option<u64> {
    let p = match pid {
        Some(pid) => procfs::process::Process::new(pid).ok()?,
        None => procfs::process::Process::myself().ok()?,
    };
    let s = p.stat().ok()?;
    let children = if pid.is_none() {
        (s.cutime.max(0) + s.cstime.max(0)) as u64
    } else {
        0
    };
    Some(s.utime + s.stime + children)
}

/// The counters now; None where /proc cannot be read (then nothing is said).
pub fn snapshot(broker_pid: Option<i32>) -> Option<Snapshot> {
    use procfs::CurrentSI;
    let k = procfs::KernelStats::current().ok()?;
    let t = k.total;
    let busy = t.user + t.nice + t.system + t.irq.unwrap_or(0) + t.softirq.unwrap_or(0);
    Some(Snapshot {
        at: Instant::now(),
        busy,
        steal: t.steal.unwrap_or(0),
        own: ticks_of(None)?,
        broker: broker_pid.and_then(|p| ticks_of(Some(p))),
    })
}

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
    Some(RepNoise {
        point,
        rep,
        machine_busy_cores: r3(busy),
        own_cores: r3(own),
        broker_cores: broker.map(r3),
        others_cores: r3((busy - own - broker.unwrap_or(0.0)).max(0.0)),
        steal_cores: r3(cores(a.steal, b.steal)),
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
    Some(format!(
        "beside the runs other processes took {} cores and the hypervisor's steal {} (median \
         (min–max) over {} runs; the probe and the broker not counted); {loud} of {} runs had \
         ≥ {NOISY_OTHERS_CORES} cores of others or ≥ {NOISY_STEAL_CORES} of steal{}",
        show(|n| n.others_cores),
        show(|n| n.steal_cores),
        noise.len(),
        noise.len(),
        if loud > 0 {
            ": their figures competed with other work, not only the client's own limits \
             (a quieter machine, or --cpus to pin the client apart)"
        } else {
            ": the reps ran on a quiet machine"
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
