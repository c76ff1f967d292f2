//! probe-java-producers: do K Java producers in one JVM collapse under GC, and does a bounded
//! buffer.memory stop it?

use kgap_probes::java_producers::{JavaProducers, Options};

fn main() {
    kgap_probes::kit::main(JavaProducers::new(kgap_analyzers::vocab::args::parse::<
        Options,
    >()))
}
