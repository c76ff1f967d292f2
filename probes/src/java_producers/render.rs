//! The text report's table, and what the probe says about its settings and its limits.

use super::cores::{cores, default_heap, POST_HEAP_MB_PER_CORE};
use super::figures::Figures;
use super::options::JavaProducers;
use crate::kit::{Sweep, Table};
use kgap_analyzers::findings::Reps;
use kgap_analyzers::vocab::report::wrap_into;
use kgap_analyzers::vocab::svg::bytes_label;
use kgap_analyzers::vocab::units;

/// One row per point: median (min–max) msg/s, medians of the rest, collapsed reps counted.
pub fn table(sweep: &Sweep<JavaProducers>) -> String {
    let mut t = Table::new([
        "buffer",
        "K",
        "msg/s median (min–max)",
        "p99 ms",
        "GC %",
        "worst 1 s",
        "heap",
        "full GCs",
        "backlog MB",
        "collapsed",
    ]);
    for m in sweep.measured() {
        let med =
            |f: &dyn Fn(&Figures) -> Option<f64>| Reps::of_some(m.runs.iter().map(f)).median();
        let pct = |x: Option<f64>| x.map_or("-".to_string(), |x| format!("{:.0}%", 100.0 * x));
        let num = |x: Option<f64>, d: usize| x.map_or("-".to_string(), |x| format!("{x:.d$}"));
        let collapsed = m.runs.iter().filter(|f| f.collapsed == Some(true)).count();
        let oom = m.runs.iter().filter(|f| f.gc.out_of_memory).count();
        t.row(vec![
            m.point
                .buffer_memory
                .map_or("default".into(), |b| bytes_label(b as f64)),
            m.point.producers.to_string(),
            m.reps(|f| f.msgs_per_s).show(units::si),
            num(med(&|f| f.send_to_ack_ms_p99), 0),
            pct(med(&|f| Some(f.gc.gc_share_window))),
            pct(med(&|f| f.gc.gc_share_worst_second)),
            pct(med(&|f| f.gc.heap_full_share())),
            num(med(&|f| Some(f.gc.full_gcs as f64)), 0),
            num(med(&|f| f.buffer_used_mb_end), 0),
            format!(
                "{collapsed}/{}{}",
                m.runs.len(),
                if oom > 0 {
                    format!(", {oom} OOM")
                } else {
                    String::new()
                }
            ),
        ]);
    }
    let mut s = t.render();
    s.push('\n');
    wrap_into(
        &mut s,
        "",
        "buffer: buffer.memory per producer (default: kafka-clients' 32 MB). msg/s: acknowledged \
         messages in the window, all producers. p99 ms: send-to-ack of sampled messages. GC %: \
         pause time over the window (the JVM's GC MXBeans); worst 1 s: GC's share of the worst \
         second in the run's gc.log; heap: heap after young GC as a share of the maximum in the \
         second that collapsed, else in the GC-heaviest second (analyze-gc-log), or over the \
         whole run when that is fuller and the run had evacuation failures or full GCs. full \
         GCs: in the window or the gc.log. backlog MB: the accumulators' bytes in use at the window's \
         end (what buffer.memory bounds). collapsed: reps in which GC took ≥ 20% of the window \
         or of its worst second while young GCs left the heap ≥ 80% full; OOM: reps whose JVM \
         threw OutOfMemoryError (collapsed, at 0 msg/s). Medians over the reps.",
    );
    s
}

/// The Java side of the sweep, for the notes.
pub fn java_note(p: &JavaProducers, version: &str) -> String {
    let heap = p.heap();
    let n = cores();
    format!(
        "Java companion: {version}, kafka-clients 4.3.1; one JVM per run, G1, -Xms=-Xmx={heap}{}, \
         unified GC log kept as gc.log in each run's folder",
        if heap == default_heap(n) {
            format!(" (the post's {POST_HEAP_MB_PER_CORE} MB per vCPU × {n} cores)")
        } else {
            String::new()
        }
    )
}

pub fn notes(p: &JavaProducers) -> Vec<String> {
    let o = &p.opts;
    let mut v = vec![
        format!(
            "each run: its own topic of {} partitions (deleted after it); every producer sends \
             {} messages and flushes them, then a {} window counting acknowledged messages",
            o.partitions,
            o.warmup_messages,
            units::seconds(o.duration.as_secs_f64())
        ),
        "producers: acks=1, enable.idempotence=false (the seed's baseline); other settings are \
         kafka-clients 4.3.1's defaults (buffer.memory 32 MB, batch.size 16384, linger.ms 5)"
            .to_string(),
        format!(
            "the rule judges the smallest K measured that reaches this machine's {} cores (the \
             post's K=16 on its 16 vCPUs)",
            cores()
        ),
    ];
    for (k, val) in &o.java_property {
        v.push(format!(
            "-J {} (applied last to every producer)",
            kgap_analyzers::vocab::redact::pair(k, val)
        ));
    }
    v
}

pub fn not_measured() -> Vec<String> {
    vec![
        "send-to-ack latency of every message: one message in 16 is timed (a reusable slot, so \
         timing allocates nothing); a sample whose slot is still in flight is skipped"
            .to_string(),
        "the broker's CPU and GC (only the companion JVM is measured)".to_string(),
        "a class histogram of what is live (run jmap -histo on the companion for that)".to_string(),
        "the topic of a run whose JVM ran out of memory (created and deleted, its name not \
         reported)"
            .to_string(),
    ]
}
