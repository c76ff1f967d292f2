//! probe-gzip-batch: what does batch.size mean for a compressed batch, in librdkafka and Java?

use kgap_probes::gzip_batch::{GzipBatch, Options};

fn main() {
    kgap_probes::kit::main(GzipBatch::new(
        kgap_analyzers::vocab::args::parse::<Options>(),
    ))
}
