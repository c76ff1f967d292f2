//! One point of the sweep: a codec at a level and a batch.size.

use super::codec::Codec;
use serde::{Deserialize, Serialize};

/// One point: a codec at a level and a batch.size.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
pub struct Point {
    #[serde(rename = "compression.type")]
    pub codec: Codec,
    #[serde(rename = "compression.level")]
    pub level: i32,
    #[serde(rename = "batch.size")]
    pub batch_size: u64,
}
