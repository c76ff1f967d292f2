//! The sweep kit: what every probe is built on, written once.
//!
//! A probe is its points, one run at a point, and the typed figures a run returns
//! ([`Probe`]); it gathers typed evidence from its sweep and hands it to the findings
//! catalogue, which decides ([`kgap_analyzers::findings`]). Everything else is the kit's:
//! validation before anything starts, the broker and the Java side, the run order (reps
//! outermost, shuffled from a printed seed, the leading client alternating), progress,
//! Ctrl-C and SIGTERM with partial results, the out dir rewritten after every run, and the
//! exports (text, JSON, CSV, SVG) of the one typed result,
//! [`kgap_analyzers::findings::probe_result::ProbeResult`].
//!
//! A probe binary is then argument parsing and one call:
//!
//! ```ignore
//! fn main() {
//!     kgap_probes::kit::main(FetchBackoff::new(Options::parse()))
//! }
//! ```

pub mod batch;
pub mod broker;
pub mod broker_figures;
pub mod build_info;
pub mod capture;
pub mod cli;
pub mod consume;
pub mod consumer_figures;
pub mod consumer_topic;
pub mod e2e;
pub mod error;
pub mod export;
pub mod instances;
pub mod interrupt;
pub mod java;
pub mod measure;
pub mod noise;
pub mod order;
pub mod out;
pub mod paced;
pub mod payload;
pub mod placement;
pub mod preflight;
pub mod probe;
pub mod produce;
pub mod self_diagnosis;
pub mod stored;
pub mod sweep;
pub mod table;
pub mod wakeup;
pub mod watchdog;

// The names every probe and binary uses, from the files that own them.
pub use out::OutDir;
pub use probe::{Context, Measured, Probe, Sweep, MIN_WINDOW_S};
pub use sweep::{main, run};
pub use table::Table;
