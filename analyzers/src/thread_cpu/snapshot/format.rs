//! What a part of the paste is: the tool that printed it ([`Format`]), and what kind of
//! figure a thread's cores are there ([`Figure`]).

use serde::Serialize;

/// The tool that printed a part of the paste.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    /// `top -H` (batch `-b` or the interactive screen).
    Top,
    /// `ps -L` / `-T` with or without `-o`, `ps -eLf`.
    Ps,
    /// `pidstat -t`.
    Pidstat,
    /// `gdb -ex 'thread apply all bt'` / `pstack`.
    Gdb,
    /// `jstack`, `jcmd <pid> Thread.print`, `kill -3`.
    JvmDump,
}

impl Format {
    /// A table of CPU figures per thread (not a backtrace or a dump).
    pub fn is_table(self) -> bool {
        matches!(self, Format::Top | Format::Ps | Format::Pidstat)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Format::Top => "top",
            Format::Ps => "ps",
            Format::Pidstat => "pidstat",
            Format::Gdb => "gdb",
            Format::JvmDump => "jvm-dump",
        }
    }
}

/// What a thread's cores are a share of: the report says it, because a share over a thread's
/// whole life is not the share now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Figure {
    /// Over the tool's refresh interval: top's %CPU since its previous frame, pidstat's
    /// interval (the mean over several frames or reports).
    Interval,
    /// The rate between two snapshots of cumulative CPU time: ps's TIME over ELAPSED, a JVM
    /// dump's `cpu=` over `elapsed=`, in two snapshots of the same thread.
    BetweenSnapshots,
    /// Over the thread's whole life: ps's %CPU and C, one JVM dump's `cpu=`/`elapsed=`.
    Lifetime,
    /// pidstat without an interval: CPU time over the time since boot, not a rate.
    SinceBoot,
}

impl Figure {
    pub fn as_str(self) -> &'static str {
        match self {
            Figure::Interval => "interval",
            Figure::BetweenSnapshots => "between-snapshots",
            Figure::Lifetime => "lifetime",
            Figure::SinceBoot => "since-boot",
        }
    }

    /// The figure says how busy the thread is now, or over its life (not since boot).
    pub fn is_a_rate(self) -> bool {
        !matches!(self, Figure::SinceBoot)
    }
}
