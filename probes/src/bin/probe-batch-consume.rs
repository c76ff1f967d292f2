//! probe-batch-consume: which thread limits this consumer — poll(), the batch API, or
//! librdkafka's broker thread — and what a batch wrapper that waits does to latency.

use kgap_probes::batch_consume::{self, Options};

fn main() {
    batch_consume::main(kgap_analyzers::vocab::args::parse::<Options>())
}
