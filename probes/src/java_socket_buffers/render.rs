//! The text report's table, and what the probe says about its settings and its limits.

use super::figures::Figures;
use super::options::{JavaSocketBuffers, CONSUME_WARMUP_FRACTION};
use super::point::{Buffer, Side};
use crate::kit::{Sweep, Table};
use kgap_analyzers::findings::Reps;
use kgap_analyzers::vocab::report::wrap_into;
use kgap_analyzers::vocab::svg::bytes_label;
use kgap_analyzers::vocab::units;

/// One row per point, then the producer's requests where kafka-clients reported them.
pub fn table(sweep: &Sweep<JavaSocketBuffers>) -> String {
    let mut t = Table::new([
        "side",
        "size",
        "buffer",
        "msg/s (min–max)",
        "MB/s",
        "calls/s",
        "call p50",
        "call max",
        "thread",
    ]);
    let med = |runs: &[Figures], f: &dyn Fn(&Figures) -> Option<f64>| {
        Reps::of_some(runs.iter().map(f)).median()
    };
    for m in sweep.measured() {
        let p = m.point;
        let thread = match p.side {
            Side::Produce => med(m.runs, &|f| f.network_thread_cores),
            Side::Consume => med(m.runs, &|f| f.poll_thread_cores),
        };
        t.row(vec![
            match p.side {
                Side::Produce => "produce",
                Side::Consume => "consume",
            }
            .into(),
            format!(
                "{} {}",
                bytes_label(p.size_bytes as f64),
                if p.side == Side::Produce {
                    "batch"
                } else {
                    "recs"
                }
            ),
            match (p.buffer, p.side) {
                (Buffer::Os, _) => "-1".into(),
                (Buffer::Fixed, Side::Produce) => "128K".into(),
                (Buffer::Fixed, Side::Consume) => "64K".into(),
            },
            m.reps(|f| f.msgs_per_s).show(units::si),
            format!("{:.0}", med(m.runs, &|f| Some(f.mb_per_s)).unwrap_or(0.0)),
            units::si(med(m.runs, &|f| Some(f.socket_calls_per_s)).unwrap_or(0.0)),
            units::bytes(med(m.runs, &|f| Some(f.bytes_per_call_p50 as f64)).unwrap_or(0.0)),
            units::bytes(med(m.runs, &|f| Some(f.bytes_per_call_max as f64)).unwrap_or(0.0)),
            thread.map_or("-".into(), |c| format!("{c:.2}")),
        ]);
    }
    let mut s = t.render();
    let mut requests = String::new();
    for m in sweep
        .measured()
        .filter(|m| m.point.side == Side::Produce && m.point.buffer == Buffer::Fixed)
    {
        let (Some(req), Some(w), Some(x)) = (
            med(m.runs, &|f| f.request_bytes),
            med(m.runs, &|f| f.writes_per_request.map(|w| w as f64)),
            med(m.runs, &|f| f.tail_copy_factor),
        ) else {
            continue;
        };
        requests.push_str(&format!(
            "  batch.size {}: {} per ProduceRequest, {} writes each, the JDK copying {} the \
             request\n",
            bytes_label(m.point.size_bytes as f64),
            units::bytes(req),
            units::count(w),
            units::times(x)
        ));
    }
    if !requests.is_empty() {
        s.push_str("\nwith send.buffer.bytes fixed (medians):\n");
        s.push_str(&requests);
    }
    s.push('\n');
    wrap_into(
        &mut s,
        "",
        "buffer: send.buffer.bytes (produce) or receive.buffer.bytes (consume), kafka-clients' \
         fixed default or -1. calls/s, call p50, call max: jdk.SocketWrite (produce) or \
         jdk.SocketRead (consume) events of the busiest thread in the window's JFR recording \
         (threshold 0, read by kgap's native JFR reader), bytes per call. thread: cores of the \
         producer's network thread or of the consumer's poll thread over the window. Medians \
         over the reps.",
    );
    s
}

pub fn java_note(p: &JavaSocketBuffers, version: &str) -> String {
    format!(
        "Java companion: {version}, kafka-clients 4.3.1, -Xms=-Xmx={}, heap pre-touched; \
         before each window, rounds of a second ({} at most) until the JIT's compiler \
         threads take under a tenth of one (the producer's first round at least 50,000 \
         messages, flushed); the window (producer {}; consumer from {:.0}% of the prefilled \
         messages to the last) is recorded with JFR, every jdk.SocketWrite and \
         jdk.SocketRead (window.jfr in each run's folder)",
        p.opts.heap,
        crate::kit::java::WARMUP_PASSES,
        units::seconds(p.opts.duration.as_secs_f64()),
        CONSUME_WARMUP_FRACTION * 100.0
    )
}

pub fn notes(p: &JavaSocketBuffers) -> Vec<String> {
    let o = &p.opts;
    let mut v = vec![format!(
        "producer: 1 KB records, one KafkaProducer, acks=1, idempotence off, linger.ms {}, \
         max.request.size {}, {} partitions, a topic of its own per run; consumer: assign() and \
         seek to the start of a topic prefilled by librdkafka with {} of records",
        o.linger_ms,
        o.max_request_size
            .map_or_else(|| "1048576 (default)".into(), |m| m.to_string()),
        o.partitions,
        units::bytes(o.consume_bytes as f64)
    )];
    for (k, val) in &o.java_property {
        v.push(format!(
            "-J {} (applied last to every client)",
            kgap_analyzers::vocab::redact::pair(k, val)
        ));
    }
    if o.no_recording {
        v.push(
            "--no-recording: no JFR recording, so no socket call was counted; msg/s and CPU \
             are the clients' without the recording's cost"
                .into(),
        );
    }
    v
}

pub fn not_measured() -> Vec<String> {
    vec![
        "the copy cost itself (the post measured it with per-thread CPU and the JDK source): \
         bytes per socket call, the writes a request takes and the network thread's CPU are \
         counted here"
            .into(),
        "the broker's side of the socket".into(),
        "a real network: on loopback with the broker on the same cores, the kernel's \
         autotuning is not a network's"
            .into(),
    ]
}
