//! probe-consumer-alloc: do allocation patterns, not safety, decide this Rust consumer?

use clap::Parser;
use kgap_probes::consumer_alloc::alloc_count::Counting;
use kgap_probes::consumer_alloc::{ConsumerAlloc, Options};

// Counts every Rust allocation per thread and routes the pipeline threads to the system
// allocator or mimalloc, as each run asks.
#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn main() {
    kgap_probes::kit::main(ConsumerAlloc::new(Options::parse()))
}
