//! The thresholds of one snapshot analysis.

/// Thresholds of one snapshot analysis.
#[derive(Debug, Clone)]
pub struct PasteOptions {
    /// A thread at or above this many cores is "at a full core".
    pub saturated_cores: f64,
    /// Threads shown in the text report (all are in `--json`).
    pub top: usize,
}

impl Default for PasteOptions {
    fn default() -> Self {
        PasteOptions {
            saturated_cores: crate::findings::saturation::SATURATED_CORES,
            top: 10,
        }
    }
}
