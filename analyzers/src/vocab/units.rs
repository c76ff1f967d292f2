//! Numbers as the post writes them, with their units: one formatter per kind of figure, so
//! every report (probes, analyzers, verdicts) prints the same value the same way.

/// `1234567.0` → `1.23M`, `389000` → `389k`, `2500` → `2.5k`: rates and counts.
pub fn si(x: f64) -> String {
    let a = x.abs();
    if a >= 1e6 {
        format!("{:.2}M", x / 1e6)
    } else if a >= 1e4 {
        format!("{:.0}k", x / 1e3)
    } else if a >= 1e3 {
        format!("{:.1}k", x / 1e3)
    } else {
        format!("{x:.0}")
    }
}

/// A rate of messages: `1.48M msg/s`.
pub fn msgs_per_s(x: f64) -> String {
    format!("{} msg/s", si(x))
}

/// Milliseconds with a precision that suits them: `0.47 ms`, `14.1 ms`, `1,188 ms`.
pub fn ms(x: f64) -> String {
    let a = x.abs();
    if a >= 1000.0 {
        format!("{} ms", thousands(x.round()))
    } else if a >= 10.0 {
        format!("{x:.1} ms")
    } else {
        format!("{x:.2} ms")
    }
}

/// Cores of a thread or process: `0.94 cores`.
pub fn cores(x: f64) -> String {
    format!("{x:.2} cores")
}

/// A ratio: `3.8x`, `1.05x`.
pub fn times(x: f64) -> String {
    if x.abs() >= 10.0 {
        format!("{x:.1}x")
    } else {
        format!("{x:.2}x")
    }
}

/// A count, whole: `12`, `1,589`.
pub fn count(x: f64) -> String {
    thousands(x.round())
}

/// A rate in a table cell, with the precision a small rate needs: whole from 10 up (`15393`,
/// `si` from a million: `1.23M`), `3.4`, `0.3` below, `<0.1` for a rate that is there but rounds away (a bare
/// `0` would read as none, beside a `-` that means not measured).
pub fn per_s(x: f64) -> String {
    if x >= 1e6 {
        si(x)
    } else if x >= 10.0 || x <= 0.0 {
        format!("{x:.0}")
    } else if x >= 0.1 {
        format!("{x:.1}")
    } else {
        "<0.1".to_string()
    }
}

/// A count with its noun, in the right number: `no GCs`, `1 GC`, `2 GCs`, `1,589 events`.
/// `noun` is the singular; the plural adds an `s` (kgap's nouns: GC, region, chunk, event).
pub fn counted(n: u64, noun: &str) -> String {
    match n {
        0 => format!("no {noun}s"),
        1 => format!("1 {noun}"),
        n => format!("{} {noun}s", thousands(n as f64)),
    }
}

/// Bytes in decimal units, as Kafka's sizes are usually quoted: `15.6 KB`, `1.05 MB`.
pub fn bytes(x: f64) -> String {
    let a = x.abs();
    if a >= 1e9 {
        format!("{:.2} GB", x / 1e9)
    } else if a >= 1e6 {
        format!("{:.2} MB", x / 1e6)
    } else if a >= 1e3 {
        format!("{:.1} KB", x / 1e3)
    } else {
        format!("{x:.0} B")
    }
}

/// What every MB/s of kgap is, said once where a table or report prints one: decimal
/// megabytes (10^6 B) per second, as Kafka's perf tools and rdkafka_performance print them.
pub const MB_PER_S_NOTE: &str =
    "MB/s = 10^6 bytes/s (decimal); MiB/s = MB/s x 0.9537 (MB/s = MiB/s x 1.048576)";

/// A rate of bytes in decimal megabytes per second: `118.4 MB/s` (see [`MB_PER_S_NOTE`]).
pub fn mb_per_s(bytes_per_s: f64) -> String {
    format!("{:.1} MB/s", bytes_per_s / 1e6)
}

/// Decimal MB/s as binary MiB/s, for a comparison with a tool that prints those.
pub fn mib_per_s(mb_per_s: f64) -> f64 {
    mb_per_s * 1e6 / 1_048_576.0
}

/// A share as a percentage: `37%`, `0.4%`.
pub fn percent(share: f64) -> String {
    let p = share * 100.0;
    if p.abs() >= 10.0 || p == 0.0 {
        format!("{p:.0}%")
    } else {
        format!("{p:.1}%")
    }
}

/// Seconds: `2.4 s`.
pub fn seconds(x: f64) -> String {
    format!("{x:.1} s")
}

fn thousands(x: f64) -> String {
    let neg = x < 0.0;
    let digits = format!("{:.0}", x.abs());
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if neg {
        format!("-{out}")
    } else {
        out
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn per_s_keeps_small_rates_apart_from_none() {
        assert_eq!(super::per_s(15393.0), "15393");
        assert_eq!(super::per_s(1.234e6), "1.23M");
        assert_eq!(super::per_s(3.44), "3.4");
        assert_eq!(super::per_s(0.04), "<0.1");
        assert_eq!(super::per_s(0.0), "0");
    }

    #[test]
    fn counted_says_none_one_and_many() {
        assert_eq!(super::counted(0, "GC"), "no GCs");
        assert_eq!(super::counted(1, "GC"), "1 GC");
        assert_eq!(super::counted(1589, "event"), "1,589 events");
    }

    use super::*;

    #[test]
    fn figures_print_as_the_post_writes_them() {
        assert_eq!(si(389_000.0), "389k");
        assert_eq!(si(1_480_000.0), "1.48M");
        assert_eq!(si(2_500.0), "2.5k");
        assert_eq!(si(12.0), "12");
        assert_eq!(ms(0.47), "0.47 ms");
        assert_eq!(ms(14.1), "14.1 ms");
        assert_eq!(ms(1188.0), "1,188 ms");
        assert_eq!(count(1589.0), "1,589");
        assert_eq!(bytes(15621.0), "15.6 KB");
        assert_eq!(percent(0.37), "37%");
        assert_eq!(times(3.8), "3.80x");
        assert_eq!(times(20.6), "20.6x");
        assert_eq!(mb_per_s(118_400_000.0), "118.4 MB/s");
        // 100 MB/s decimal is 95.37 MiB/s: the note's factor is the function's.
        assert!((mib_per_s(100.0) - 95.367).abs() < 0.001);
        assert!(MB_PER_S_NOTE.contains("0.9537") && MB_PER_S_NOTE.contains("10^6"));
    }
}
