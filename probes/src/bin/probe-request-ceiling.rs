//! probe-request-ceiling: is this producer bound by the broker's cost per ProduceRequest?

use kgap_probes::request_ceiling::{Options, RequestCeiling};

fn main() {
    kgap_probes::kit::main(RequestCeiling::new(kgap_analyzers::vocab::args::parse::<
        Options,
    >()))
}
