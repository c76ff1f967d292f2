//! Build a large raw-stderr librdkafka log for the analyzers' benchmark
//! (scripts/bench-log-analyzers) by repeating a seed log, renumbering its CorrIds,
//! moving its offsets on and shifting its timestamps on every repetition so the result
//! reads as one long run.
//!
//! usage: make-bench-log <protocol|fetch> <bytes> <out> [seed.log]
//! Without a seed, a built-in one is used: a producer at the post's per-request
//! ceiling (protocol) or a consumer backing off on a full queue (fetch), in the
//! printf formats of librdkafka 2.12.1.

use std::fmt::Write as _;
use std::io::{BufWriter, Write};

fn builtin_seed(kind: &str) -> String {
    let mut s = String::new();
    let t0 = 1_796_017_460.0f64;
    let stamp = |t: f64| {
        let ms = (t * 1000.0).round() as i64;
        format!("{}.{:03}", ms / 1000, ms % 1000)
    };
    let b = "127.0.0.1:9092/1";
    if kind == "protocol" {
        // 2 s at 15,400 req/s of ~15.6 KB, rtt ~0.4 ms, six partitions.
        for i in 0..30_800u32 {
            let t = t0 + i as f64 / 15_400.0;
            let size = 15_621 - (i % 7);
            let _ = writeln!(s, "%7|{}|SEND|rdkafka#producer-1| [thrd:{b}]: {b}: Sent ProduceRequest (v10, {size} bytes @ 0, CorrId {})", stamp(t), i + 1);
            let rtt = 0.35 + (i % 10) as f64 * 0.01;
            let _ = writeln!(s, "%7|{}|RECV|rdkafka#producer-1| [thrd:{b}]: {b}: Received ProduceResponse (v10, 62 bytes, CorrId {}, rtt {rtt:.2}ms)", stamp(t + rtt / 1000.0), i + 1);
        }
    } else {
        // 20 cycles of six partitions filling their queue and backing off 1000 ms.
        for k in 0..20u32 {
            let base = t0 + k as f64 * 1.05;
            let _ = writeln!(
                s,
                "%7|{}|FETCH|rdkafka#consumer-1| [thrd:{b}]: {b}: Fetch 6/6/6 toppar(s)",
                stamp(base)
            );
            for p in 0..6 {
                let t = base + 0.001 * p as f64;
                let off = k as u64 * 100_000;
                let _ = writeln!(s, "%7|{}|FETCH|rdkafka#consumer-1| [thrd:{b}]: {b}: Fetch topic bench [{p}] at offset {off} (leader epoch 0, current leader epoch 0, v2)", stamp(t));
                let _ = writeln!(s, "%7|{}|FETCH|rdkafka#consumer-1| [thrd:{b}]: {b}: Topic bench [{p}] MessageSet size 1048576, error \"Success\", MaxOffset {}, LSO {}, Ver 2/2", stamp(t + 0.02), off + 100_000, off + 100_000);
                let _ = writeln!(s, "%7|{}|CONSUME|rdkafka#consumer-1| [thrd:{b}]: {b}: Enqueue 100000 message(s) (10400000 bytes, 100000 ops) on bench [{p}] fetch queue (qlen 100000, v2, last_offset {}, 0 ctrl msgs, uncompressed)", stamp(t + 0.02), off + 99_999);
                let _ = writeln!(s, "%7|{}|FETCH|rdkafka#consumer-1| [thrd:{b}]: {b}: Topic bench [{p}] in state active at offset {} (leader epoch 0) (100000/100000 msgs, 10156/65536 kb queued, opv 2) is not fetchable: queued.min.messages exceeded", stamp(t + 0.03), off + 100_000);
                let _ = writeln!(s, "%7|{}|BACKOFF|rdkafka#consumer-1| [thrd:{b}]: {b}: bench [{p}]: Fetch backoff for 1000ms: Local: Queue full", stamp(t + 0.03));
                let _ = writeln!(s, "%7|{}|FETCH|rdkafka#consumer-1| [thrd:{b}]: {b}: Topic bench [{p}] in state active at offset {} (leader epoch 0) (0/100000 msgs, 0/65536 kb queued, opv 2) is fetchable", stamp(t + 1.03), off + 100_000);
            }
        }
    }
    s
}

/// The `|<secs>.<ms>|` span of a raw-stderr line.
fn stamp_span(line: &str) -> Option<(usize, usize)> {
    let start = line.find('|')? + 1;
    let len = line[start..].find('|')?;
    line[start..start + len]
        .contains('.')
        .then_some((start, start + len))
}

/// The words librdkafka's fetch lines put before an offset.
const OFFSET_WORDS: &[&str] = &["at offset ", "MaxOffset ", "LSO ", "last_offset "];

/// `text` into `out` with the number after each of `words` passed through `f`.
fn renumber(mut text: &str, words: &[&str], f: impl Fn(i64) -> i64, out: &mut String) {
    while let Some((i, w)) = words
        .iter()
        .filter_map(|w| text.find(w).map(|i| (i, w.len())))
        .min()
    {
        out.push_str(&text[..i + w]);
        let digits = text[i + w..].bytes().take_while(u8::is_ascii_digit).count();
        match text[i + w..i + w + digits].parse::<i64>() {
            Ok(n) => {
                let _ = write!(out, "{}", f(n));
            }
            Err(_) => out.push_str(&text[i + w..i + w + digits]),
        }
        text = &text[i + w + digits..];
    }
    out.push_str(text);
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 4 {
        eprintln!("usage: make-bench-log <protocol|fetch> <bytes> <out> [seed.log]");
        std::process::exit(2);
    }
    let kind = args[1].as_str();
    let target: u64 = args[2].parse().expect("bytes");
    let seed = match args.get(4) {
        Some(p) => std::fs::read_to_string(p).expect("seed log"),
        None => builtin_seed(kind),
    };
    let lines: Vec<&str> = seed.lines().collect();
    let times: Vec<f64> = lines
        .iter()
        .filter_map(|l| stamp_span(l).and_then(|(a, b)| l[a..b].parse().ok()))
        .collect();
    let (t_min, t_max) = times
        .iter()
        .fold((f64::MAX, f64::MIN), |(lo, hi), &t| (lo.min(t), hi.max(t)));
    let span = if times.is_empty() {
        1.0
    } else {
        (t_max - t_min) + 0.001
    };
    let max_corr: i64 = lines
        .iter()
        .filter_map(|l| l.find("CorrId ").map(|i| &l[i + 7..]))
        .filter_map(|r| r.split(|c: char| !c.is_ascii_digit()).next()?.parse().ok())
        .max()
        .unwrap_or(0);
    // A consumer's offsets move on: each repetition's start where the last one's ended, so
    // its lines do not repeat byte for byte where a real log's would not (the analyzers
    // remember repeated raw lines; a repeated seed must not hand them hits).
    let max_offset: i64 = lines
        .iter()
        .flat_map(|l| {
            OFFSET_WORDS
                .iter()
                .filter_map(move |w| l.find(w).map(|i| &l[i + w.len()..]))
        })
        .filter_map(|r| r.split(|c: char| !c.is_ascii_digit()).next()?.parse().ok())
        .max()
        .unwrap_or(0);
    let mut out = BufWriter::with_capacity(1 << 20, std::fs::File::create(&args[3]).expect("out"));
    let mut written = 0u64;
    let mut rep = 0u64;
    let mut buf = String::new();
    while written < target {
        let dt = rep as f64 * span;
        let dc = rep as i64 * max_corr;
        let doff = rep as i64 * (max_offset + 1);
        for l in &lines {
            buf.clear();
            let mut rest: &str = l;
            if let Some((a, b)) = stamp_span(l) {
                if let Ok(t) = l[a..b].parse::<f64>() {
                    let ms = ((t + dt) * 1000.0).round() as i64;
                    buf.push_str(&l[..a]);
                    let _ = write!(buf, "{}.{:03}", ms / 1000, ms % 1000);
                    rest = &l[b..];
                }
            }
            // Renumber every `CorrId N` (Sent, Received, prev CorrId) and every offset.
            let mut tail = String::new();
            renumber(
                rest,
                &["CorrId "],
                |n| (n + dc) % i32::MAX as i64,
                &mut tail,
            );
            renumber(&tail, OFFSET_WORDS, |n| n + doff, &mut buf);
            buf.push('\n');
            out.write_all(buf.as_bytes()).expect("write");
            written += buf.len() as u64;
        }
        rep += 1;
    }
    out.flush().expect("flush");
}
