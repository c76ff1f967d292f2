//! How gap-report runs: the options the binary and library callers pass.

/// How to run.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Build SVG charts ([`GapReport::charts`](crate::gap_report::GapReport::charts)) for `--svg-dir`.
    pub charts: bool,
    /// Parser threads for librdkafka logs (as the log analyzers' `--threads`).
    pub workers: Option<usize>,
    /// What the user says the folder's JVM artifacts are (`--jvm-role`): GC logs, JFR
    /// recordings and thread CPU of an unknown JVM are filed under a Java finding only with
    /// Kafka evidence of their own, or this.
    pub jvm_role: Option<crate::findings::scope::JvmRole>,
}
