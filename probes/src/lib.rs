//! kgap's probes: each reproduces one client performance gap in isolation.
//!
//! A probe creates its own topic on a real cluster (`--brokers`) or on librdkafka's in-process
//! mock, sweeps the knob that matters, measures through a fixed window with per-thread CPU,
//! keeps librdkafka's debug log and statistics, and prints a table and the findings
//! catalogue's verdicts (or one JSON document, the typed
//! [`kgap_analyzers::findings::probe_result::ProbeResult`]).
//!
//! Two layers, each a folder:
//! - [`kit`]: what every probe shares, written once — the sweep driver, reps, run order,
//!   Ctrl-C, the out dir and exports, the broker and topics, clients with captured logs and
//!   statistics, the measured window, payloads, producing and consuming loops, the Java
//!   companion (redaction is the analyzers' `vocab::redact`, shared with capture).
//! - one folder per probe, each its points, one run at a point and its typed figures; no
//!   probe imports another:
//!   [`fetch_backoff`] (`probe-fetch-backoff`, Gap 2 of the post), [`request_ceiling`]
//!   (`probe-request-ceiling`, Gap 1), [`inflight_latency`] (`probe-inflight-latency`),
//!   [`gzip_batch`] (`probe-gzip-batch`), [`batch_consume`] (`probe-batch-consume`),
//!   [`consumer_alloc`] (`probe-consumer-alloc`, the postmortem), [`consumer_clients`]
//!   (`probe-consumer-clients`), [`java_producers`] (`probe-java-producers`) and
//!   [`java_socket_buffers`] (`probe-java-socket-buffers`).

pub mod batch_consume;
pub mod consumer_alloc;
pub mod consumer_clients;
pub mod fetch_backoff;
pub mod gzip_batch;
pub mod inflight_latency;
pub mod java_producers;
pub mod java_socket_buffers;
pub mod kit;
pub mod request_ceiling;
