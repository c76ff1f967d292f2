//! probe-fetch-backoff: does librdkafka's 1000 ms fetch queue backoff make this consumer nap?

use kgap_probes::fetch_backoff::{FetchBackoff, Options};

fn main() {
    kgap_probes::kit::main(FetchBackoff::new(kgap_analyzers::vocab::args::parse::<
        Options,
    >()))
}
