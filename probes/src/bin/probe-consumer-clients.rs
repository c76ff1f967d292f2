//! probe-consumer-clients: which consumer is faster at this message size, and which thread
//! is its limit?

use clap::Parser;
use kgap_probes::consumer_clients::{ConsumerClients, Options};

fn main() {
    kgap_probes::kit::main(ConsumerClients::new(Options::parse()))
}
