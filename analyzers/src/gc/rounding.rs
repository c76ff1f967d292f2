//! How the report rounds its numbers: to two decimals and to three.

pub(super) fn round2(v: f64) -> f64 {
    (v * 100.0).round() / 100.0
}

pub(super) fn round3(v: f64) -> f64 {
    (v * 1000.0).round() / 1000.0
}
