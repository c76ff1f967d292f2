//! analyze-stats: the captured fixtures (fixtures/stats, real runs re-made by
//! fixtures/stats/capture.sh) against fixtures/stats/EXPECTED.tsv, the forms statistics come
//! in, bad input, and the CLI contract.

#[path = "stats/bad_input.rs"]
mod bad_input;
#[path = "stats/cli.rs"]
mod cli;
#[path = "stats/common.rs"]
mod common;
#[path = "stats/connections.rs"]
mod connections;
#[path = "stats/fixtures.rs"]
mod fixtures;
#[path = "stats/forms.rs"]
mod forms;
#[path = "common/gzip.rs"]
mod gzip;
#[path = "stats/pastes.rs"]
mod pastes;
