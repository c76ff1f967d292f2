//! The machine's cross-cpu wakeup: how long a thread blocked in a read takes to run again
//! after a thread on another cpu writes to it. A message at a low rate makes several such
//! hops to threads asleep on other cores — the producer's broker thread to the broker's
//! network thread, the broker's answer to the consumer's broker thread, that thread to the
//! application — so on a machine whose idle cores are slow to wake, an end-to-end latency
//! carries it several times over, whatever the client does. Measured as a message's hops
//! happen at 1k msg/s: one write every [`GAP`], the woken cpu idle in between. A virtual
//! machine whose idle vCPUs halt wakes them through the hypervisor (this project's 2-core
//! VM: tens of µs, docs/preflight.md); a bare-metal core takes a few.

use super::placement;
use kgap_analyzers::findings::probe_result::Wakeup;
use std::io::{Read, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Wakeups timed: half a second at [`GAP`].
pub const SAMPLES: usize = 500;
/// Between two writes: the woken cpu goes idle, as between messages at 1k msg/s.
pub const GAP: Duration = Duration::from_millis(1);

/// Times [`SAMPLES`] wakeups of a thread on `to_cpu` by a thread on `from_cpu`, one-way:
/// from the write to the woken thread's first instruction after its read. None when a
/// thread could not be pinned or the pipe failed.
pub fn measure(from_cpu: usize, to_cpu: usize) -> Option<Wakeup> {
    let (rx, tx) = std::io::pipe().ok()?;
    let origin = Instant::now();
    let sent = Arc::new(AtomicU64::new(0));
    let woken = {
        let sent = sent.clone();
        std::thread::Builder::new()
            .name("kgap-wakeup".into())
            .spawn(move || -> Option<Vec<u64>> {
                placement::pin(&[to_cpu]).ok()?;
                let mut rx = rx;
                let mut out = Vec::with_capacity(SAMPLES);
                let mut b = [0u8; 1];
                for _ in 0..SAMPLES {
                    rx.read_exact(&mut b).ok()?;
                    let now = origin.elapsed().as_nanos() as u64;
                    out.push(now.saturating_sub(sent.load(Ordering::Acquire)));
                }
                Some(out)
            })
            .ok()?
    };
    let waker = std::thread::Builder::new()
        .name("kgap-waker".into())
        .spawn(move || -> Option<()> {
            placement::pin(&[from_cpu]).ok()?;
            let mut tx = tx;
            for _ in 0..SAMPLES {
                std::thread::sleep(GAP);
                sent.store(origin.elapsed().as_nanos() as u64, Ordering::Release);
                tx.write_all(b"w").ok()?;
            }
            Some(())
        })
        .ok()?;
    // A waker that failed drops its end of the pipe: the reader's read fails, and it ends.
    let wrote = waker.join().ok().flatten();
    let times = woken.join().ok().flatten()?;
    wrote?;
    Some(summarize(from_cpu, to_cpu, times))
}

/// The wakeup figures of one-way times in ns.
pub fn summarize(from_cpu: usize, to_cpu: usize, mut ns: Vec<u64>) -> Wakeup {
    ns.sort_unstable();
    let at = |q: f64| {
        let i = ((ns.len() as f64 * q).ceil() as usize).clamp(1, ns.len().max(1)) - 1;
        ns.get(i).map_or(0.0, |&v| round1(v as f64 / 1e3))
    };
    Wakeup {
        from_cpu,
        to_cpu,
        samples: ns.len(),
        gap_ms: GAP.as_secs_f64() * 1e3,
        us_p50: at(0.50),
        us_p99: at(0.99),
        us_max: at(1.0),
    }
}

fn round1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

/// Which cpus to time: from the client's first cpu to the broker's first other cpu (a
/// message's hop to the broker), else to another of the client's or the machine's, else
/// the same cpu.
pub fn cpus(client: &[usize], broker: Option<&[usize]>, machine_cores: usize) -> (usize, usize) {
    let from = client.first().copied().unwrap_or(0);
    let other = |c: &usize| *c != from;
    let to = broker
        .and_then(|b| b.iter().find(|c| other(c)).copied())
        .or_else(|| client.iter().find(|c| other(c)).copied())
        .or_else(|| (0..machine_cores).find(|c| other(c)))
        .unwrap_or(from);
    (from, to)
}

/// The report's line: which cpus, the p50, p99 and max, and what it means for latency.
pub fn line(w: &Wakeup) -> String {
    format!(
        "a thread on cpu {} woke one blocked on cpu {} in {:.1} µs (p50), {:.1} µs (p99), \
         {:.1} µs at most ({} wakeups {} ms apart): about what each hop of a message to a \
         thread asleep on another core takes, before any work",
        w.from_cpu, w.to_cpu, w.us_p50, w.us_p99, w.us_max, w.samples, w.gap_ms
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_of_the_one_way_times() {
        let ns: Vec<u64> = (1..=100).map(|i| i * 1000).collect();
        let w = summarize(1, 0, ns);
        assert_eq!((w.us_p50, w.us_p99, w.us_max), (50.0, 99.0, 100.0));
        assert_eq!(w.samples, 100);
        assert!(
            line(&w).contains("cpu 1 woke one blocked on cpu 0 in 50.0 µs (p50), 99.0 µs"),
            "{}",
            line(&w)
        );
    }

    #[test]
    fn the_hop_timed_is_the_client_to_the_broker() {
        assert_eq!(cpus(&[1], Some(&[0]), 2), (1, 0));
        assert_eq!(cpus(&[0, 1], Some(&[0]), 2), (0, 1));
        assert_eq!(cpus(&[1], None, 2), (1, 0));
        assert_eq!(cpus(&[0], None, 1), (0, 0));
        assert_eq!(cpus(&[2, 3], Some(&[2, 3]), 4), (2, 3));
    }

    #[test]
    fn a_real_wakeup_is_timed() {
        let n = crate::kit::placement::machine_cores();
        let w = measure(0, n - 1).expect("measured");
        assert_eq!(w.samples, SAMPLES);
        assert!(
            w.us_p50 > 0.0 && w.us_p50 <= w.us_p99 && w.us_p99 <= w.us_max,
            "{w:?}"
        );
        // A cpu that does not exist is refused, not hung on.
        assert_eq!(measure(0, 100_000), None);
    }
}
