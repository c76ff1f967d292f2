//! probe-gzip-batch: what does batch.size mean for a compressed batch, in librdkafka and Java?

use clap::Parser;
use kgap_probes::gzip_batch::{GzipBatch, Options};

fn main() {
    kgap_probes::kit::main(GzipBatch::new(Options::parse()))
}
