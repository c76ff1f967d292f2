//! How the rule writes its figures in conditions and reasons: partition counts, batch.size
//! as the post writes it, shares.

/// `1 partition`, `6 partitions`.
pub(super) fn partitions(n: i32) -> String {
    format!("{n} partition{}", if n == 1 { "" } else { "s" })
}

/// batch.size as the post writes it: `16K`, `1M`.
pub(super) fn size(b: u64) -> String {
    crate::vocab::svg::bytes_label(b as f64)
}

pub(super) fn share(x: f64) -> String {
    format!("{x:.2}")
}
