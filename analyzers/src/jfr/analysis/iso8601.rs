//! Epoch nanoseconds as an ISO 8601 instant, the way the report shows times.

/// Epoch nanoseconds → `2024-09-06T12:09:59.123Z`.
pub(crate) fn iso8601(ns: i64) -> String {
    let secs = ns.div_euclid(1_000_000_000);
    let ms = ns.rem_euclid(1_000_000_000) / 1_000_000;
    let days = secs.div_euclid(86400);
    let sod = secs.rem_euclid(86400);
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + (m <= 2) as i64;
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{ms:03}Z",
        sod / 3600,
        sod % 3600 / 60,
        sod % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso8601_of_known_instants() {
        assert_eq!(iso8601(0), "1970-01-01T00:00:00.000Z");
        // 2024-09-06T12:09:59.5Z
        assert_eq!(
            iso8601(1_725_624_599_500_000_000),
            "2024-09-06T12:09:59.500Z"
        );
    }
}
