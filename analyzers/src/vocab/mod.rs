//! The shared vocabulary every tool speaks: figures with their units, charts, the pieces of a
//! report (diagnoses, examples, windows), the JSON documents' header, command-line parsing
//! and exit codes, the one error type. Nothing here reads input or decides a finding.

pub mod args;
pub mod cli;
pub(crate) mod downsample;
pub mod error;
pub mod json_doc;
pub mod redact;
pub mod report;
pub mod svg;
pub(crate) mod timeline;
pub mod units;
