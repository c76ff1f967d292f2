//! A consume API as a point's parameters, and which one is the batch API under a policy.

use crate::kit::batch::WaitPolicy;
use crate::kit::consume::ConsumeApi;
use serde::Serialize;

/// A consume API as a point's parameters: `api`, and for the batch API its size and the
/// naive policy's timeout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ApiParams {
    pub api: ConsumeApi,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub batch: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub naive_timeout_ms: Option<u64>,
}

impl ApiParams {
    pub fn of(api: ConsumeApi) -> ApiParams {
        match api {
            ConsumeApi::Poll => ApiParams {
                api,
                batch: None,
                naive_timeout_ms: None,
            },
            ConsumeApi::Batch { size, policy } => ApiParams {
                api,
                batch: Some(size),
                naive_timeout_ms: match policy {
                    WaitPolicy::Naive { timeout } => Some(timeout.as_millis() as u64),
                    WaitPolicy::Fixed => None,
                },
            },
        }
    }
}

/// Whether an API is the batch API under a policy.
pub fn is_batch(api: ConsumeApi, policy_name: &str) -> bool {
    matches!(api, ConsumeApi::Batch { policy, .. } if policy.name() == policy_name)
}
