//! The consume loops a probe can measure: rust-rdkafka's poll() (one message per call) or
//! the batch API ([`crate::batch`]) with a waiting policy. One driver, so every consumer probe
//! counts, times and stops the same way whatever the API.

use crate::batch::{BatchQueue, WaitPolicy};
use crate::broker::Consumer;
use crate::error::{ProbeError, Result};
use rdkafka::message::Message as _;
use serde::Serialize;
use std::time::Duration;

/// How the application takes messages from librdkafka.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(into = "String")]
pub enum ConsumeApi {
    /// `BaseConsumer::poll()`: one message per call.
    Poll,
    /// `rd_kafka_consume_batch_queue`, up to `size` messages per call.
    Batch { size: usize, policy: WaitPolicy },
}

impl ConsumeApi {
    /// `poll`, `batch-fixed`, `batch-naive`: the names in tables, JSON and run folders.
    pub fn name(&self) -> String {
        match self {
            ConsumeApi::Poll => "poll".into(),
            ConsumeApi::Batch { policy, .. } => format!("batch-{}", policy.name()),
        }
    }
}

impl From<ConsumeApi> for String {
    fn from(a: ConsumeApi) -> String {
        a.name()
    }
}

/// What the driver does after a message or an empty wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    Continue,
    Stop,
}

/// Takes messages with `api` until a callback says stop. `on_message` gets each payload
/// (empty for a null payload); `on_idle` is called when a wait of `wait` found nothing.
/// Per-message errors are counted, not passed on. Returns that count. The loop allocates
/// nothing per message.
pub fn drive(
    c: &Consumer,
    api: ConsumeApi,
    wait: Duration,
    mut on_message: impl FnMut(&[u8]) -> Flow,
    mut on_idle: impl FnMut() -> Flow,
) -> Result<u64> {
    let mut errors = 0u64;
    match api {
        ConsumeApi::Poll => loop {
            match c.consumer.poll(wait) {
                Some(Ok(m)) => {
                    if on_message(m.payload().unwrap_or(&[])) == Flow::Stop {
                        break;
                    }
                }
                Some(Err(_)) => errors += 1,
                None => {
                    if on_idle() == Flow::Stop {
                        break;
                    }
                }
            }
        },
        ConsumeApi::Batch { size, policy } => {
            let mut q = BatchQueue::new(&c.consumer, size, policy)
                .map_err(|e| ProbeError::Kafka(e.to_string()))?;
            'outer: loop {
                let batch = q
                    .next_batch(wait)
                    .map_err(|e| ProbeError::Kafka(e.to_string()))?;
                if batch.is_empty() {
                    if on_idle() == Flow::Stop {
                        break;
                    }
                    continue;
                }
                for m in batch.iter() {
                    if m.is_error() {
                        errors += 1;
                        continue;
                    }
                    if on_message(m.payload().unwrap_or(&[])) == Flow::Stop {
                        break 'outer;
                    }
                }
            }
        }
    }
    Ok(errors)
}
