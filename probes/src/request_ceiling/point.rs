//! One point of the sweep: partitions and batch.size, and a fix or a control on top.

use super::knob::Knob;
use serde::Serialize;

/// One point: a partition count and a batch.size, and for the extra points a fix or a
/// control set on top (one client's own).
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
pub struct Point {
    pub partitions: i32,
    #[serde(rename = "batch.size")]
    pub batch_size: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub knob: Option<Knob>,
}

impl Point {
    /// A point of the plain partitions × batch.size grid.
    pub fn plain(partitions: i32, batch_size: u64) -> Point {
        Point {
            partitions,
            batch_size,
            knob: None,
        }
    }

    /// Its client settings on top of batch.size (none on the plain grid).
    pub fn knob_settings(&self) -> Vec<(&'static str, &'static str)> {
        self.knob.map(Knob::settings).unwrap_or_default()
    }
}
