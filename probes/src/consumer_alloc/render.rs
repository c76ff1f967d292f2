//! The text report: one row per variant and allocator, the RSS saw, perf's shares.

use super::figures::Figures;
use super::options::ConsumerAlloc;
use crate::kit::broker::Broker;
use crate::kit::{Sweep, Table};
use kgap_analyzers::vocab::report::wrap_into;
use kgap_analyzers::vocab::units;

pub fn describe(f: &Figures) -> String {
    format!(
        "{}, {} allocations/record, p99 {:.1} µs, RSS {:.0}–{:.0} MB",
        units::msgs_per_s(f.msgs_per_s),
        f.allocations_per_record
            .map_or("uncounted".to_string(), |a| format!("{a:.2}")),
        f.processing_p99_us,
        f.rss.min_mb,
        f.rss.max_mb
    )
}

pub fn headline(p: &ConsumerAlloc, s: &Sweep<ConsumerAlloc>) -> String {
    let size = s.result.payload.as_ref().map_or(0, |p| p.size_bytes);
    let records = s
        .measured()
        .next()
        .and_then(|m| m.runs.first())
        .map_or("no".to_string(), |f| f.records.to_string());
    let pace = p
        .opts
        .rate
        .map_or("unpaced".to_string(), |r| format!("paced at {r} records/s"));
    format!(
        "{records} × {size} B JSON records per run, {} partitions (one processing thread each), \
         {pace}",
        p.opts.partitions
    )
}

pub fn render(s: &Sweep<ConsumerAlloc>) -> String {
    let mut t = Table::new([
        "variant",
        "alloc",
        "msg/s (min–max)",
        "allocs/rec",
        "B/rec",
        "CPU s/M",
        "p50/p99 µs",
        "RSS MB",
        "perf a/c %",
    ]);
    for m in s.measured() {
        let med = |f: &dyn Fn(&Figures) -> Option<f64>| m.reps_of(f).median();
        let num = |x: Option<f64>, d: usize| x.map_or("—".to_string(), |v| format!("{v:.d$}"));
        let perf = match (
            med(&|f| f.perf.as_ref().map(|p| p.pipeline_alloc_pct)),
            med(&|f| f.perf.as_ref().map(|p| p.pipeline_memcpy_pct)),
        ) {
            (Some(a), Some(c)) => format!("{a:.0}/{c:.0}"),
            _ => "—".to_string(),
        };
        t.row(vec![
            m.point.variant.name().to_string(),
            m.point.allocator.name().to_string(),
            m.reps(|f| f.msgs_per_s).show(units::si),
            num(med(&|f| f.allocations_per_record), 3),
            num(med(&|f| f.bytes_allocated_per_record), 0),
            num(med(&|f| Some(f.pipeline_cpu_s_per_million)), 2),
            format!(
                "{}/{}",
                num(med(&|f| Some(f.processing_p50_us)), 2),
                num(med(&|f| Some(f.processing_p99_us)), 1)
            ),
            format!(
                "{}–{}",
                num(med(&|f| Some(f.rss.min_mb)), 0),
                num(med(&|f| Some(f.rss.max_mb)), 0)
            ),
            perf,
        ]);
    }
    let mut out = t.render();
    out.push_str("\nRSS per second, first rep (max MB; the sawtooth is growth, a drop, growth):\n");
    for m in s.measured() {
        let Some(f) = m.runs.first() else { continue };
        let line: Vec<String> = f
            .rss
            .per_second_mb
            .iter()
            .map(|[_, hi]| format!("{hi:.0}"))
            .collect();
        out.push_str(&format!(
            "  {:<18} {}  (swing {:.1} MB/s median, {} drops > 1 MB)\n",
            format!("{}-{}:", m.point.variant.name(), m.point.allocator.name()),
            if line.is_empty() {
                "(under a second)".to_string()
            } else {
                line.join(" ")
            },
            f.rss.swing_mb_median,
            f.rss.drops
        ));
    }
    out.push('\n');
    wrap_into(
        &mut out,
        "",
        "allocs/rec, B/rec: heap allocations and bytes asked per record by the pipeline's \
         threads (a counting global allocator; librdkafka's own C allocations are not Rust's \
         and not counted). CPU s/M: the processing and writer threads' CPU seconds per \
         million records (the whole process's is in the JSON). p50/p99: per-record \
         processing time, take → handed to the writer. RSS: median of the reps' min and max \
         over the window. perf a/c: percent of the pipeline threads' samples in the \
         allocator (malloc/free, mi_*) and in memcpy.",
    );
    if let Some(why) = s
        .measured()
        .flat_map(|m| m.runs.iter())
        .find_map(|f| f.perf_not_measured.as_deref())
    {
        wrap_into(&mut out, "", &format!("perf: not measured ({why})."));
    }
    let limit = s
        .measured()
        .flat_map(|m| m.runs.iter().map(move |f| (m, f)))
        .find(|(_, f)| f.stray_messages > 0 || f.bad_records > 0);
    if let Some((m, f)) = limit {
        wrap_into(
            &mut out,
            "warning: ",
            &format!(
                "{}-{}: {} stray messages on the consumer's queue, {} bad records",
                m.point.variant.name(),
                m.point.allocator.name(),
                f.stray_messages,
                f.bad_records
            ),
        );
    }
    out
}

pub fn not_measured(broker: &Broker, no_perf: bool) -> Vec<String> {
    let mut v = vec![
        "the Java consumer the postmortem compared with: this probe measures the Rust side"
            .to_string(),
        "memory per partition (+35% in the postmortem): RSS is the whole process's; compare \
         runs at different --partitions"
            .to_string(),
        "librdkafka's C allocations: its threads call malloc directly, neither counted nor \
         moved to mimalloc"
            .to_string(),
        "bigger thread caches: mimalloc has no thread-cache size to raise (its free lists are \
         per thread already)"
            .to_string(),
        "allocator lock waits as such: contention shows only as CPU per record and perf's share"
            .to_string(),
    ];
    if no_perf {
        v.push("perf's malloc/free/memcpy shares (--no-perf)".to_string());
    }
    if broker.is_mock() {
        v.push(
            "Apache Kafka's fetch path: the broker was librdkafka's in-process mock (lz4 prefill)"
                .to_string(),
        );
    }
    v
}
