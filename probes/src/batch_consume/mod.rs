//! `probe-batch-consume`: the post's consumer limits after the backoff fix, and its batch
//! wrapper's latency bug. One binary, three modes, each a [`Probe`](crate::kit::Probe) on
//! the kit; the options choose ([`Options::mode`]):
//!
//! - [`throughput`] (the default): one prefilled topic read with poll() and the batch API
//!   ([`crate::kit::batch`]) at each fetch.queue.backoff.ms. The catalogue decides
//!   `batch-consume` (poll()'s thread is the limit, the batch API is faster) and
//!   `librdkafka-broker-thread-limit` (with the batch API rdk:broker is the limit).
//! - [`latency`] (`--rate`): a paced producer and a consumer in one process, end-to-end
//!   latency with each API; the catalogue decides `batch-wrapper-latency`.
//! - [`harness`] (`--rdkafka-performance PATH`): the probe's batch loop against
//!   librdkafka's own rdkafka_performance on the same topic, like for like; no finding, a
//!   ratio (`scripts/bench-harness-consumer`).
//!
//! Here: the mode the options choose, run. Beside it: the options (`options`), a consume API
//! as a point's parameters (`api`), the -X notes every mode shares (`notes`), the shared topic
//! (`topic`) and the harness pair's types (`pair`).

mod api;
pub mod harness;
pub mod latency;
mod notes;
mod options;
pub mod pair;
pub mod rdkafka_performance;
pub mod subscribed;
pub mod throughput;
pub mod topic;

pub use api::{is_batch, ApiParams};
pub use notes::override_notes;
pub use options::{
    ApiName, Mode, Options, EXTERNAL_MESSAGES, EXTERNAL_PARTITIONS, MOCK_PARTITIONS, NAME,
};

/// Runs the mode the options ask for, as the binary does, and exits.
pub fn main(opts: Options) -> ! {
    match opts.mode() {
        Mode::Throughput => crate::kit::main(throughput::Throughput::new(opts)),
        Mode::Latency => crate::kit::main(latency::Latency::new(opts)),
        Mode::Harness => crate::kit::main(harness::Harness::new(opts)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kit::consume::ConsumeApi;
    use clap::Parser;

    fn opts(args: &[&str]) -> Options {
        let mut argv = vec![NAME];
        argv.extend_from_slice(args);
        Options::try_parse_from(argv).unwrap()
    }

    #[test]
    fn the_options_choose_the_mode() {
        assert_eq!(opts(&[]).mode(), Mode::Throughput);
        assert_eq!(opts(&["--rate", "1000"]).mode(), Mode::Latency);
        assert_eq!(
            opts(&["--rdkafka-performance", "/bin/true"]).mode(),
            Mode::Harness
        );
        assert!(
            Options::try_parse_from([NAME, "--rate", "1", "--rdkafka-performance", "x"]).is_err()
        );
    }

    #[test]
    fn apis_parse_once_each_and_bad_lists_are_refused() {
        let o = opts(&["--api", "poll,fixed,naive,fixed", "--batch", "100"]);
        let apis = o.apis();
        assert_eq!(apis.len(), 3);
        assert_eq!(apis[2].name(), "batch-naive");
        assert_eq!(ApiParams::of(apis[2]).naive_timeout_ms, Some(100));
        assert_eq!(ApiParams::of(apis[1]).batch, Some(100));
        for bad in [
            &["--api", "poll,bogus"][..],
            &["--api", "poll,,fixed"][..],
            &["--backoff-ms", "10,,1000"][..],
            &["--rate", "0"][..],
            &["--rate", "1000,"][..],
            &["--naive-timeout", "0"][..],
            &["--messages", "5"][..],
        ] {
            let mut argv = vec![NAME];
            argv.extend_from_slice(bad);
            assert!(Options::try_parse_from(argv).is_err(), "{bad:?}");
        }
        assert_eq!(
            opts(&["--backoff-ms", "10,10,1000"]).backoffs(),
            vec![10, 1000]
        );
    }

    #[test]
    fn params_serialize_in_the_domains_words() {
        let v = serde_json::to_value(ApiParams::of(ConsumeApi::Poll)).unwrap();
        assert_eq!(v, serde_json::json!({"api": "poll"}));
    }
}
