//! kgap's analyzers: readers of what a Kafka client left behind, into gap reports.
//!
//! Three layers, each a folder:
//! - [`engine`]: the byte engine (streaming input, chunks on every core, SIMD searches,
//!   memos). Knows no Kafka.
//! - [`vocab`]: the shared vocabulary (units, charts, report pieces, JSON headers, command
//!   line, errors).
//! - the domain: one folder per kind of input, each reading bytes through the engine and
//!   handing typed evidence on —
//!   [`librdkafka`] (librdkafka's log lines in any wrapper, and the request accounting both
//!   log analyzers share), [`protocol_log`] (`analyze-protocol-log`), [`fetch_log`]
//!   (`analyze-fetch-log`), [`stats`] (`analyze-stats`), [`gc`] (`analyze-gc-log`), [`jfr`]
//!   (`analyze-jfr`), [`thread_cpu`] (`analyze-thread-cpu`, per-thread CPU and snapshots),
//!   and [`gap_report`] (`gap-report`, a folder of captures into one report) — and the
//!   [`findings`] catalogue that decides every verdict (with the probes' result document);
//!   and [`capture`], which collects those artifacts from a running client and hands them to
//!   gap-report.
//!
//! Everything here is pure, no Kafka client and no network, but for [`capture`]: it reads a
//! live process's /proc and runs `ss`, `jcmd` and `eu-stack`/`gdb` against it.

pub mod capture;
pub mod engine;
pub mod fetch_log;
pub mod findings;
pub mod gap_report;
pub mod gc;
pub mod html;
pub mod jfr;
pub mod librdkafka;
pub mod protocol_log;
pub mod stats;
pub mod thread_cpu;
pub mod vocab;

pub use vocab::error::AnalyzeError;
