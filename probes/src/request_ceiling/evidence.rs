//! The typed evidence the catalogue's rule takes, gathered from the sweep.

use super::figures::Figures;
use super::librdkafka::ProtocolPass;
use super::options::RequestCeiling;
use crate::kit::Sweep;
use kgap_analyzers::findings::probe_result::Client;
use kgap_analyzers::findings::request_ceiling::{self as rule, PointEvidence};

/// The typed evidence the catalogue's rule takes: every measured librdkafka point.
pub fn evidence(sweep: &Sweep<RequestCeiling>) -> rule::Evidence {
    let mock = sweep.result.broker.is_mock();
    let points = sweep
        .of(Client::Librdkafka)
        .filter(|m| m.point.knob.is_none())
        .map(|m| {
            let rdk = |f: &Figures| f.librdkafka().cloned();
            // The busiest broker thread's name: the one most reps had busiest.
            let mut names: Vec<String> = m
                .runs
                .iter()
                .filter_map(|f| f.librdkafka()?.busiest_broker_thread.clone())
                .collect();
            names.sort();
            let broker_thread = names
                .iter()
                .max_by_key(|n| names.iter().filter(|x| x == n).count())
                .cloned()
                .unwrap_or_else(|| "rdk:broker".into());
            PointEvidence {
                partitions: m.point.partitions,
                batch_size: m.point.batch_size,
                msgs_per_s: m.reps_of(|f| Some(rdk(f)?.window.msgs_per_s)),
                produce_requests_per_s: m.reps_of(|f| rdk(f)?.produce_requests_per_s),
                bytes_per_request: m.reps_of(|f| rdk(f)?.bytes_per_request),
                batches_per_request: m.reps_of(|f| rdk(f)?.batches_per_request),
                app_cores: m.reps_of(|f| rdk(f)?.app_cores),
                broker_thread,
                broker_thread_cores: m.reps_of(|f| rdk(f)?.busiest_broker_thread_cores),
                mock_thread_cores: if mock {
                    m.reps_of(|f| Some(rdk(f)?.mock_cores))
                } else {
                    Default::default()
                },
                connections: crate::kit::broker_figures::connections(
                    &m.runs
                        .iter()
                        .filter_map(|f| Some(f.librdkafka()?.brokers.as_slice()))
                        .collect::<Vec<_>>(),
                ),
            }
        })
        .collect();
    let log_batches_per_request = sweep
        .result
        .diagnoses
        .iter()
        .filter_map(|d| serde_json::from_value::<ProtocolPass>(d.clone()).ok())
        .find_map(|p| p.batches_per_request);
    rule::Evidence {
        broker_is_mock: mock,
        points,
        log_batches_per_request,
    }
}
