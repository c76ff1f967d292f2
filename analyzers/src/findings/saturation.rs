//! When a thread is saturated: the one threshold every finding, analyzer and probe uses.

/// A thread at this many cores (of one) is saturated: it is the limit, and a faster
/// machine or more of its work would show it. The post's limiting threads ran at 0.95 to
/// 0.98 cores; sampling on a loaded machine loses a few percent, so 0.9.
pub const SATURATED_CORES: f64 = 0.9;
