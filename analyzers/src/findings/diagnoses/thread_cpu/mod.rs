//! analyze-thread-cpu's diagnoses: [`entries`] (the catalogue's `RULES` and the thresholds),
//! [`recording`] (samples over time) and [`snapshot`] (pasted tables, backtraces, dumps).

pub mod entries;
pub mod recording;
pub mod snapshot;

pub use entries::RULES;
