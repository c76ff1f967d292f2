//! One integration test binary (ripgrep's layout): topic modules under `suite/`,
//! shared log builders and wrapper styles under `common/`.

mod common;
#[path = "common/gzip.rs"]
mod gzip;

#[path = "suite/bad_input.rs"]
mod bad_input;
#[path = "suite/cli.rs"]
mod cli;
#[path = "suite/fetch.rs"]
mod fetch;
#[path = "suite/fixtures.rs"]
mod fixtures;
#[path = "suite/parallel.rs"]
mod parallel;
#[path = "suite/protocol.rs"]
mod protocol;
#[path = "suite/wrappers.rs"]
mod wrappers;
