//! kgap's analyzers: readers of what a Kafka client left behind, into gap reports.
//!
//! - [`librdkafka`]: finds librdkafka debug records in any log line, whatever the
//!   wrapper (raw stderr, JSON, .NET, rust-rdkafka, syslog, …).
//! - [`input`]: streaming input (file or stdin, gzip detected) through a fixed buffer.
//! - [`protocol_log`]: `analyze-protocol-log`, requests on the wire and what bounded them.
//! - [`fetch_log`]: `analyze-fetch-log`, where a consumer's fetcher slept and why.
//! - [`requests`]: protocol accounting (requests, CorrId pairing, in-flight depth).
//! - [`stats`]: `analyze-stats`, librdkafka's statistics JSON per client, broker and
//!   partition, and what limited the client.
//! - [`gap_report`]: `gap-report`, a whole folder of captures into one report of the post's
//!   gaps, by the [`findings`] catalogue (each finding, its figures and its rule).
//! - [`report`]: diagnoses and the other pieces every report shares.
//! - [`error`]: the crate's error type; [`cli`]: what the binaries share; [`watch`]: an
//!   input that says when nothing arrives (a FIFO nobody writes to).
//!
//! Everything here is pure: no Kafka client, no network.

pub mod args;
mod bytes_eq;
mod chunk_threads;
pub mod cli;
mod cores;
mod downsample;
pub mod error;
pub mod fast_hash;
pub mod fetch_log;
mod file_chunks;
pub mod findings;
pub mod gap_report;
pub mod gc;
pub mod input;
pub mod jfr;
pub mod json_doc;
pub mod librdkafka;
mod line_blocks;
mod line_memo;
mod newlines;
mod pipeline;
pub mod probe_result;
pub mod progress;
pub mod protocol_log;
pub mod report;
pub mod requests;
pub mod stats;
pub mod svg;
pub mod thread_cpu;
pub mod threads;
mod timeline;
pub mod units;
pub mod watch;

pub use error::AnalyzeError;
