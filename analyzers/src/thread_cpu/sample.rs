//! Live sampling of a running process (`--pid`) or of a command it runs.

use std::io;
use std::time::{Duration, Instant};

use super::analyzer::{Analyzer, SnapshotIntervals};
use super::report::CommandOutcome;
use crate::thread_cpu::threads::{self, Snapshot};

/// What to sample.
#[derive(Debug, Clone)]
pub enum Target {
    Pid(i32),
    /// Run this command (argv) and sample it until it exits.
    Command(Vec<String>),
}

/// How to sample.
#[derive(Debug, Clone)]
pub struct SampleOptions {
    pub interval: Duration,
    pub duration: Option<Duration>,
}

/// Why sampling could not start.
#[derive(Debug, thiserror::Error)]
pub enum SampleError {
    #[error("no such process: {0}")]
    NoSuchPid(i32),
    #[error("pid {pid}: {reason}")]
    Unreadable { pid: i32, reason: String },
    #[error("cannot run `{cmd}`: {reason}")]
    Spawn { cmd: String, reason: String },
    #[error("{0}")]
    Io(#[from] io::Error),
}

/// What live sampling found beside the intervals.
#[derive(Debug, Clone)]
pub struct SampleInfo {
    pub samples: u64,
    pub ended: String,
    pub command: Option<CommandOutcome>,
    /// Wall time spent reading /proc, over all samples.
    pub sampling_cost: Duration,
}

/// Samples `target` every `opts.interval`, feeding each snapshot to `on_snapshot` (for
/// `--save`) and each interval to `analyzer`. Returns when the process or command exits or
/// the duration is over; an error only when nothing could be sampled at all.
pub fn sample(
    target: &Target,
    opts: &SampleOptions,
    analyzer: &mut Analyzer,
    on_snapshot: &mut dyn FnMut(&Snapshot) -> io::Result<()>,
) -> Result<SampleInfo, SampleError> {
    let origin = Instant::now();
    let tps = threads::ticks_per_second();
    let mut child = None;
    let pid = match target {
        Target::Pid(p) => {
            if !std::path::Path::new(&format!("/proc/{p}")).exists() || *p <= 0 {
                return Err(SampleError::NoSuchPid(*p));
            }
            *p
        }
        Target::Command(argv) => {
            let Some((prog, args)) = argv.split_first() else {
                return Err(SampleError::Spawn {
                    cmd: String::new(),
                    reason: "no command given".into(),
                });
            };
            let mut cmd = std::process::Command::new(prog);
            cmd.args(args);
            // The command's stdout goes to our stderr: stdout is the report's (--json).
            #[cfg(unix)]
            {
                use std::os::fd::AsFd;
                if let Ok(fd) = io::stderr().as_fd().try_clone_to_owned() {
                    cmd.stdout(std::process::Stdio::from(fd));
                }
            }
            let c = cmd.spawn().map_err(|e| SampleError::Spawn {
                cmd: argv.join(" "),
                reason: e.to_string(),
            })?;
            let pid = c.id() as i32;
            child = Some(c);
            pid
        }
    };
    let mut intervals = SnapshotIntervals::new(tps);
    let mut samples = 0u64;
    let mut cost = Duration::ZERO;
    let ended: String;
    let mut command = None;
    let mut tick = 0u32;
    loop {
        if let Some(c) = child.as_mut() {
            if let Some(status) = c.try_wait()? {
                command = Some(outcome(status, false));
                ended = "the command exited".into();
                break;
            }
        }
        if child.is_none() && samples > 0 && exited(pid) {
            ended = "the process exited".into();
            break;
        }
        let t0 = Instant::now();
        let snap = threads::snapshot(Some(pid), origin);
        cost += t0.elapsed();
        match snap {
            Ok(s) => {
                samples += 1;
                on_snapshot(&s)?;
                if let Some(iv) = intervals.push(s) {
                    analyzer.add(&iv)?;
                }
            }
            Err(e) if samples == 0 && child.is_none() => {
                return Err(if e.to_string().contains("No such") {
                    SampleError::NoSuchPid(pid)
                } else {
                    SampleError::Unreadable {
                        pid,
                        reason: e.to_string(),
                    }
                });
            }
            Err(_) => {
                if child.is_none() {
                    ended = "the process exited".into();
                    break;
                }
                // A command between exit and reaping: the next try_wait sees it.
                std::thread::sleep(Duration::from_millis(10));
                continue;
            }
        }
        tick += 1;
        let mut next = opts.interval * tick;
        if let Some(d) = opts.duration {
            if origin.elapsed() >= d {
                ended = "--duration reached".into();
                if let Some(mut c) = child.take() {
                    let killed = c.try_wait()?.is_none();
                    if killed {
                        let _ = c.kill();
                    }
                    let status = c.wait()?;
                    command = Some(outcome(status, killed));
                }
                break;
            }
            next = next.min(d);
        }
        // Sleep to the next tick, waking early to notice a command's exit.
        loop {
            let now = origin.elapsed();
            if now >= next {
                break;
            }
            let left = next - now;
            if let Some(c) = child.as_mut() {
                if c.try_wait()?.is_some() {
                    break;
                }
                std::thread::sleep(left.min(Duration::from_millis(20)));
            } else {
                std::thread::sleep(left);
            }
        }
    }
    Ok(SampleInfo {
        samples,
        ended,
        command,
        sampling_cost: cost,
    })
}

/// A pid that is gone, or a zombie (exited, not yet reaped by its parent: no threads left).
fn exited(pid: i32) -> bool {
    match procfs::process::Process::new(pid).and_then(|p| p.stat()) {
        Ok(st) => matches!(st.state, 'Z' | 'X' | 'x'),
        Err(_) => true,
    }
}

fn outcome(status: std::process::ExitStatus, killed: bool) -> CommandOutcome {
    #[cfg(unix)]
    let signal = std::os::unix::process::ExitStatusExt::signal(&status);
    #[cfg(not(unix))]
    let signal = None;
    CommandOutcome {
        exit_code: status.code(),
        signal,
        killed_at_duration: killed,
    }
}
