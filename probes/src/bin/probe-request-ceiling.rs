//! probe-request-ceiling: is this producer bound by the broker's cost per ProduceRequest?

use clap::Parser;
use kgap_probes::request_ceiling::{Options, RequestCeiling};

fn main() {
    kgap_probes::kit::main(RequestCeiling::new(Options::parse()))
}
