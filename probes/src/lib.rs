//! The probe kit: what every kgap probe shares.
//!
//! A probe reproduces one client performance gap in isolation: it creates its own topic on a
//! real cluster (`--brokers`) or on librdkafka's in-process mock, sweeps the knob that
//! matters, measures through a fixed window with per-thread CPU, keeps librdkafka's debug log
//! and statistics, and prints a table and the findings catalogue's verdicts (or one JSON document, the
//! typed [`kgap_analyzers::probe_result::ProbeResult`]). The sweep itself is the
//! [`kit`]'s, written once; a probe is its points, one run and its figures.
//!
//! - [`payload`]: the seed benchmark's byte-identical payloads (SplitMix64, seed 42).
//! - [`broker`]: mock or external broker, topic lifecycle, clients with captured logs.
//! - [`capture`]: librdkafka log lines in its own stderr format, statistics JSON.
//! - [`measure`]: window, per-second timeline, cores per thread, medians.
//! - [`kit`]: the Probe trait, the one sweep driver, the exports, run order, placement.
//! - [`consume`], [`consumer_topic`], [`consumer_figures`], [`paced`], [`produce`]: the
//!   measured consume window, the prefilled topic, a consumer run's figures, the paced
//!   producer, producing without allocation.
//! - [`redact`]: secrets never leave the process.
//! - [`fetch_backoff`]: `probe-fetch-backoff` (Gap 2 of the post).
//! - [`batch_consume`]: `probe-batch-consume` (poll() against the batch API, the broker
//!   thread's limit, the batch wrapper's latency).
//! - [`request_ceiling`]: `probe-request-ceiling` (Gap 1 of the post).
//! - [`inflight_latency`]: `probe-inflight-latency` (the in-flight window and latency).
//! - [`gzip_batch`]: `probe-gzip-batch` (gzip: what batch.size means for a compressed batch).
//! - [`consumer_alloc`]: `probe-consumer-alloc` (the postmortem: allocation patterns).
//! - [`java`]: the Java companion (kafka-clients in its own JVM, GC log, JFR).
//! - [`java_producers`]: `probe-java-producers` (K Java producers in one JVM, GC collapse).
//! - [`java_socket_buffers`]: `probe-java-socket-buffers` (fixed send/receive buffers, JFR).

pub mod batch;
pub mod batch_consume;
pub mod broker;
pub mod broker_figures;
pub mod build_info;
pub mod capture;
pub mod cli;
pub mod consume;
pub mod consumer_alloc;
pub mod consumer_clients;
pub mod consumer_figures;
pub mod consumer_topic;
pub mod error;
pub mod fetch_backoff;
pub mod gzip_batch;
pub mod inflight_latency;
pub mod interrupt;
pub mod java;
pub mod java_producers;
pub mod java_socket_buffers;
pub mod kit;
pub mod measure;
pub mod paced;
pub mod payload;
pub mod produce;
pub mod redact;
pub mod request_ceiling;
