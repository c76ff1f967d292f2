//! probe-inflight-latency: does librdkafka's in-flight window queue requests, and does it
//! linger per partition?

use kgap_probes::inflight_latency::{InflightLatency, Options};

fn main() {
    kgap_probes::kit::main(InflightLatency::new(kgap_analyzers::vocab::args::parse::<
        Options,
    >()))
}
