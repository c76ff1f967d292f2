//! The shared vocabulary every tool speaks: figures with their units, charts, the pieces of a
//! report (diagnoses, examples, windows), the JSON documents' header, command-line parsing
//! and exit codes, the one error type, the machine a tool runs on (`host`, the only piece that
//! reads anything: this machine's /proc). Nothing here reads a tool's input or decides a
//! finding.

pub mod args;
pub mod cli;
pub(crate) mod downsample;
pub mod error;
pub mod host;
pub mod json_doc;
pub mod redact;
pub mod report;
pub mod svg;
pub(crate) mod timeline;
pub mod units;
