//! probe-java-socket-buffers: do kafka-clients' fixed socket buffers cap each socket call,
//! and what does it cost?

use kgap_probes::java_socket_buffers::{JavaSocketBuffers, Options};

fn main() {
    kgap_probes::kit::main(JavaSocketBuffers::new(
        kgap_analyzers::vocab::args::parse::<Options>(),
    ))
}
