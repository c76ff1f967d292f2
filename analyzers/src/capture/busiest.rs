//! Which threads get a native stack: the busiest few by CPU over the sampler's last interval,
//! a few times over the capture (early, at the middle, at the end). A stack is a moment in a
//! thread's life; the threads that burn the CPU are the ones whose moments say where the time
//! goes, and reading only them stops only them (`eu-stack -1` attaches to one thread).

use std::path::Path;
use std::time::Duration;

use super::native::{self, StackTool};
use crate::thread_cpu::threads::ThreadCores;

/// How many threads' stacks at each point.
pub const STACKED_THREADS: usize = 3;

/// A thread whose stack was taken, and why it was chosen.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct StackedThread {
    pub tid: i32,
    pub name: String,
    /// Cores it used over the interval before the stack (1.0 = one core).
    pub cores: f64,
}

/// One point of the capture where stacks were taken.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct StackPoint {
    /// `early`, `middle` or `end`.
    pub at: String,
    /// Seconds into the capture.
    pub at_s: f64,
    /// The tool (`eu-stack`, `gdb`).
    pub tool: String,
    /// The threads, busiest first.
    pub threads: Vec<StackedThread>,
    /// The file in the bundle (none when no stack could be read).
    pub file: Option<String>,
    /// How long the target (eu-stack: each chosen thread, one at a time; gdb: the whole
    /// process) was stopped, at most, in ms.
    pub stopped_ms: u64,
    /// Why these threads, in words.
    pub why: String,
}

/// A point of the capture where stacks may be taken: the busiest threads over the interval
/// just ended (the sampler hands over `early` and `middle`, its last interval is the `end`).
#[derive(Debug, Clone)]
pub struct Point {
    pub label: &'static str,
    pub at_s: f64,
    pub busiest: Vec<StackedThread>,
    /// Threads seen in the interval.
    pub threads: usize,
    pub interval_s: f64,
}

/// Takes the stacks of `p`'s busiest threads of `pid` into `bundle/native/stacks-<label>.txt`
/// (headed by the threads and why), and says what was done; the error says why none could be
/// read.
pub fn take_at(
    tool: &StackTool,
    pid: i32,
    p: &Point,
    bundle: &Path,
) -> (StackPoint, Option<String>) {
    let mut point = StackPoint {
        at: p.label.into(),
        at_s: p.at_s,
        tool: tool.name().into(),
        threads: p.busiest.clone(),
        why: why(p.interval_s, p.busiest.len(), p.threads),
        ..StackPoint::default()
    };
    if p.busiest.is_empty() {
        point.why = format!(
            "no thread used CPU in the {:.1} s before: no stack",
            p.interval_s
        );
        return (point, None);
    }
    let tids: Vec<i32> = p.busiest.iter().map(|t| t.tid).collect();
    match native::take_threads(tool, pid, &tids, Duration::from_secs(60)) {
        Ok(st) => {
            let name = format!("native/stacks-{}.txt", p.label);
            let _ = std::fs::create_dir_all(bundle.join("native"));
            let mut text = format!("# {} at {:.1} s: {}\n", tool.name(), p.at_s, point.why);
            for th in &p.busiest {
                text.push_str(&format!(
                    "# tid {} {}: {:.2} cores\n",
                    th.tid, th.name, th.cores
                ));
            }
            text.push_str(&st.text);
            if std::fs::write(bundle.join(&name), text).is_ok() {
                point.file = Some(name);
            }
            point.stopped_ms = st.took.as_millis() as u64;
            (point, None)
        }
        Err(e) => (
            point,
            Some(format!("native stacks at the {}: {e}", p.label)),
        ),
    }
}

/// The `n` busiest threads over an interval, busiest first; threads that used no CPU are no
/// one's limit and are left out (an idle process gets no stack).
pub fn busiest(cores: &[ThreadCores], n: usize) -> Vec<StackedThread> {
    let mut v: Vec<&ThreadCores> = cores.iter().filter(|t| t.cores > 0.0).collect();
    v.sort_by(|a, b| b.cores.total_cmp(&a.cores).then(a.tid.cmp(&b.tid)));
    v.into_iter()
        .take(n)
        .map(|t| StackedThread {
            tid: t.tid,
            name: t.name.clone(),
            cores: t.cores,
        })
        .collect()
}

/// The words for the choice: which interval the figures are over.
fn why(interval_s: f64, chosen: usize, of: usize) -> String {
    format!(
        "the {chosen} busiest of {of} threads by CPU over the {interval_s:.1} s before \
         (per-thread CPU from /proc)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(tid: i32, name: &str, cores: f64) -> ThreadCores {
        ThreadCores {
            tid,
            name: name.into(),
            cores,
            user_cores: cores,
            system_cores: 0.0,
        }
    }

    #[test]
    fn the_busiest_first_and_no_idle_thread() {
        let cores = [
            t(10, "app", 0.05),
            t(11, "rdk:broker1", 0.9),
            t(12, "rdk:main", 0.0),
            t(13, "rdk:broker2", 0.3),
            t(14, "kgap-consumer", 0.1),
        ];
        let got: Vec<i32> = busiest(&cores, 3).iter().map(|s| s.tid).collect();
        assert_eq!(got, vec![11, 13, 14]);
        let idle = [t(1, "a", 0.0), t(2, "b", 0.0)];
        assert!(busiest(&idle, 3).is_empty());
        assert_eq!(busiest(&cores, 0).len(), 0);
    }
}
