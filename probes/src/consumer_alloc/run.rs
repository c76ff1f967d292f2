//! One run: a fresh consumer, one processing thread per partition reading that partition's
//! own queue, one writer thread batching the enriched records, and this thread keeping the
//! window (10% warmup, then until 95% of the topic is read or the duration passes), the
//! RSS every 100 ms, thread CPU every second, and perf over the window.

use super::alloc_count::{self, Allocator, Counts};
use super::figures::{self, Figures, Rss};
use super::perf;
use super::pipeline::{Borrowed, Copying, Record, Ring, Variant, SLOT_BYTES};
use super::queue::PartitionQueue;
use crate::kit::broker::{Broker, Consumer, TopicGuard};
use crate::kit::capture::Sink;
use crate::kit::error::{ProbeError, Result};
use crate::kit::interrupt;
use crate::kit::measure::{self, Edge, Progress, Sampler, SLOT};
use bytes::Bytes;
use hdrhistogram::Histogram;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What one run does.
#[derive(Debug, Clone, Copy)]
pub struct RunSpec {
    pub variant: Variant,
    pub allocator: Allocator,
    pub partitions: i32,
    /// Total input rate over all partitions; None: as fast as the pipeline goes.
    pub rate: Option<u64>,
    pub duration: Duration,
    pub expected: u64,
    pub perf: bool,
}

/// Records the writer gathers before one write.
pub const WRITE_BATCH: usize = 1000;
/// Slots of a partition's ring, and the bounded channels' capacity per partition.
pub const SLOTS: usize = 1024;
/// No record for this long ends the run as stalled.
const STALL: Duration = Duration::from_secs(15);

/// The flags every thread reads.
struct Window {
    open: AtomicBool,
    close: AtomicBool,
    progress: Arc<Progress>,
}

/// One thread's part of the window.
struct Part {
    records: u64,
    /// Wall time spent processing records, and the thread's part of the window.
    busy_ns: u64,
    window_ns: u64,
    counts: Counts,
    hist: Option<Histogram<u64>>,
    bad: u64,
    errors: u64,
}

fn histogram() -> Histogram<u64> {
    // Nanoseconds, 1 ns to 10 s, 3 significant digits.
    Histogram::new_with_bounds(1, 10_000_000_000, 3).expect("valid histogram bounds")
}

/// The processing loop of one partition: take a batch, `handle` each record (timed), until
/// the partition's `quota` is read or the window closes.
fn process(
    q: &mut PartitionQueue,
    w: &Window,
    quota: u64,
    rate: Option<f64>,
    mut handle: impl FnMut(&[u8]) -> bool,
) -> Part {
    let mut hist = histogram();
    // An absolute schedule that sleeps and never spins (a spinning pacer would count as the
    // pipeline's CPU per record) and catches up after a stall instead of re-anchoring.
    let mut pacer = rate.map(|r| {
        (
            Instant::now(),
            Duration::from_secs_f64(1.0 / r.max(1.0)),
            0u32,
        )
    });
    let (mut taken, mut bytes, mut bad, mut errors) = (0u64, 0u64, 0u64, 0u64);
    let mut start: Option<(u64, Counts, Instant)> = None;
    let mut busy_ns = 0u64;
    while taken < quota && !w.close.load(Ordering::Acquire) && !interrupt::stopped() {
        if start.is_none() && w.open.load(Ordering::Acquire) {
            start = Some((taken, alloc_count::this_thread(), Instant::now()));
        }
        let recording = start.is_some();
        let mut batch_bytes = 0u64;
        let (n, e) = q.take(100, |payload| {
            if let Some((anchor, interval, k)) = pacer.as_mut() {
                let due = *anchor + *interval * *k;
                *k += 1;
                if *k == u32::MAX {
                    (*anchor, *k) = (due, 0);
                }
                if let Some(wait) = due.checked_duration_since(Instant::now()) {
                    std::thread::sleep(wait);
                }
            }
            let t0 = Instant::now();
            if !handle(payload) {
                bad += 1;
            }
            if recording {
                let ns = (t0.elapsed().as_nanos() as u64).max(1);
                busy_ns += ns;
                let _ = hist.record(ns);
            }
            batch_bytes += payload.len() as u64;
        });
        taken += n as u64;
        bytes += batch_bytes;
        errors += e as u64;
        w.progress.messages.fetch_add(n as u64, Ordering::Relaxed);
        w.progress.bytes.fetch_add(batch_bytes, Ordering::Relaxed);
    }
    let end = (taken, alloc_count::this_thread());
    let _ = bytes;
    match start {
        Some((r, c, at)) => Part {
            records: end.0 - r,
            busy_ns,
            window_ns: at.elapsed().as_nanos() as u64,
            counts: end.1 - c,
            hist: Some(hist),
            bad,
            errors,
        },
        None => Part {
            records: 0,
            busy_ns: 0,
            window_ns: 0,
            counts: Counts::default(),
            hist: None,
            bad,
            errors,
        },
    }
}

/// The writer: gathers records into one buffer, one write per [`WRITE_BATCH`]; `take` moves
/// a record's line into the buffer (and frees or releases it).
fn write<T>(rx: Receiver<T>, w: &Window, mut take: impl FnMut(T, &mut Vec<u8>)) -> Counts {
    let mut out: Vec<u8> = Vec::with_capacity(WRITE_BATCH * SLOT_BYTES);
    let (mut in_batch, mut written) = (0usize, 0u64);
    let (mut start, mut end): (Option<Counts>, Option<Counts>) = (None, None);
    loop {
        match rx.recv_timeout(Duration::from_millis(50)) {
            Ok(item) => {
                take(item, &mut out);
                in_batch += 1;
                if in_batch == WRITE_BATCH {
                    written += std::hint::black_box(out.len()) as u64;
                    out.clear();
                    in_batch = 0;
                }
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => break,
        }
        if start.is_none() && w.open.load(Ordering::Relaxed) {
            start = Some(alloc_count::this_thread());
        }
        if end.is_none() && w.close.load(Ordering::Relaxed) {
            end = Some(alloc_count::this_thread());
        }
    }
    std::hint::black_box(written);
    let end = end.unwrap_or_else(alloc_count::this_thread);
    start.map_or(Counts::default(), |s| end - s)
}

/// The writer thread, on the run's allocator.
fn spawn_writer<'scope>(
    s: &'scope std::thread::Scope<'scope, '_>,
    a: Allocator,
    f: impl FnOnce() -> Counts + Send + 'scope,
) -> std::thread::ScopedJoinHandle<'scope, Counts> {
    std::thread::Builder::new()
        .name("kgap-writer".into())
        .spawn_scoped(s, move || {
            alloc_count::use_on_this_thread(a);
            f()
        })
        .expect("spawn kgap-writer")
}

/// Messages of `partition` in a round-robin prefill of `expected`.
fn quota(expected: u64, partitions: i32, partition: i32) -> u64 {
    let p = partitions as u64;
    expected / p + u64::from((partition as u64) < expected % p)
}

/// One measured run of `spec` on `topic`; Ok(None) when Ctrl-C came before the window.
pub fn run(
    broker: &Broker,
    topic: &TopicGuard,
    settings: &[(&'static str, String)],
    spec: RunSpec,
    dir: &Path,
) -> Result<Option<Figures>> {
    let sink = Arc::new(
        Sink::to_files(Some(&dir.join("debug.log")), Some(&dir.join("stats.jsonl")))
            .map_err(|e| ProbeError::io(format!("creating files in {}", dir.display()), e))?,
    );
    let c = Consumer::new(broker, settings, sink.clone())?;
    let mut queues = Vec::new();
    for p in 0..spec.partitions {
        queues.push(
            PartitionQueue::new(&c.consumer, &topic.name, p)
                .ok_or_else(|| ProbeError::Kafka(format!("no queue for {} [{p}]", topic.name)))?,
        );
    }
    c.assign_from_start(&topic.name, spec.partitions)?;
    let w = Window {
        open: AtomicBool::new(false),
        close: AtomicBool::new(false),
        progress: Arc::new(Progress::default()),
    };
    let per_partition_rate = spec.rate.map(|r| r as f64 / spec.partitions as f64);
    let (a, parts) = (spec.allocator, spec.partitions);
    // The ring's slots, pre-allocated once (empty for the other variants).
    let slots: Vec<Vec<Mutex<String>>> = (0..parts)
        .map(|_| match spec.variant {
            Variant::Ring => (0..SLOTS)
                .map(|_| Mutex::new(String::with_capacity(SLOT_BYTES)))
                .collect(),
            _ => Vec::new(),
        })
        .collect();

    let (coord, parts_out, writer_counts) = std::thread::scope(|s| -> Result<_> {
        let w = &w;
        let slots = &slots;
        let mut handles = Vec::new();
        let writer;
        macro_rules! spawn_proc {
            ($p:expr, $q:expr, $body:expr) => {{
                let (p, mut q) = ($p, $q);
                let quota = quota(spec.expected, parts, p);
                handles.push(
                    std::thread::Builder::new()
                        .name(format!("kgap-proc-{p}"))
                        .spawn_scoped(s, move || {
                            alloc_count::use_on_this_thread(a);
                            #[allow(clippy::redundant_closure_call)]
                            let handle = ($body)(p);
                            process(&mut q, w, quota, per_partition_rate, handle)
                        })
                        .expect("spawn kgap-proc"),
                );
            }};
        }
        match spec.variant {
            Variant::Copying => {
                // The first version's shared, unbounded channel of heap records.
                let (tx, rx) = mpsc::channel::<Box<Record>>();
                writer = spawn_writer(s, a, move || {
                    write(rx, w, |r, out| out.extend_from_slice(r.line.as_bytes()))
                });
                for (p, q) in queues.drain(..).enumerate() {
                    let tx = tx.clone();
                    spawn_proc!(p as i32, q, move |p: i32| {
                        let mut c = Copying::default();
                        move |payload: &[u8]| match c.process(payload, p) {
                            Ok(r) => tx.send(r).is_ok(),
                            Err(_) => false,
                        }
                    });
                }
            }
            Variant::Borrowed => {
                let (tx, rx) = mpsc::sync_channel::<Bytes>(SLOTS * parts as usize);
                writer = spawn_writer(s, a, move || {
                    write(rx, w, |b, out| out.extend_from_slice(&b))
                });
                for (p, q) in queues.drain(..).enumerate() {
                    let tx = tx.clone();
                    spawn_proc!(p as i32, q, move |p: i32| {
                        let mut b = Borrowed::default();
                        move |payload: &[u8]| match b.process(payload, p) {
                            Ok(view) => tx.send(view).is_ok(),
                            Err(_) => false,
                        }
                    });
                }
            }
            Variant::Ring => {
                let (full_tx, full_rx) = mpsc::sync_channel::<(u32, u32)>(SLOTS * parts as usize);
                let mut free_txs = Vec::new();
                for (p, q) in queues.drain(..).enumerate() {
                    let (free_tx, free_rx) = mpsc::sync_channel::<u32>(SLOTS);
                    for i in 0..SLOTS as u32 {
                        free_tx.send(i).expect("a fresh channel has room");
                    }
                    free_txs.push(free_tx);
                    let full_tx = full_tx.clone();
                    spawn_proc!(p as i32, q, move |p: i32| {
                        let mut r = Ring::default();
                        let mine = &slots[p as usize];
                        move |payload: &[u8]| {
                            let Ok(i) = free_rx.recv() else { return false };
                            let ok = {
                                let mut slot = mine[i as usize].lock().expect("slot");
                                r.process(payload, p, &mut slot).is_ok()
                            };
                            full_tx.send((p as u32, i)).is_ok() && ok
                        }
                    });
                }
                writer = spawn_writer(s, a, move || {
                    write(full_rx, w, |(p, i), out| {
                        out.extend_from_slice(
                            slots[p as usize][i as usize]
                                .lock()
                                .expect("slot")
                                .as_bytes(),
                        );
                        let _ = free_txs[p as usize].send(i);
                    })
                });
                drop(full_tx);
            }
        }
        let coord = coordinate(broker, &c, w, &spec, dir);
        // Stop every thread whatever the coordinator found.
        w.close.store(true, Ordering::Release);
        let parts_out: Vec<Part> = handles
            .into_iter()
            .map(|h| h.join().expect("kgap-proc"))
            .collect();
        let writer_counts = writer.join().expect("kgap-writer");
        Ok((coord, parts_out, writer_counts))
    })?;
    drop(queues);
    drop(c);
    sink.flush();
    let Some(co) = coord? else { return Ok(None) };
    Ok(Some(figures_of(spec, co, &parts_out, writer_counts)))
}

/// What the coordinating thread measured.
struct Coordinated {
    window: measure::WindowFigures,
    rss: Rss,
    perf: std::result::Result<perf::PerfShares, String>,
    stray: u64,
    load: Option<f64>,
}

/// Keeps the window on this thread: opens it after the warmup, closes it at 95% of the
/// topic or the duration, samples RSS every 100 ms.
fn coordinate(
    broker: &Broker,
    c: &Consumer,
    w: &Window,
    spec: &RunSpec,
    dir: &Path,
) -> Result<Option<Coordinated>> {
    let origin = Instant::now();
    let warmup = (spec.expected / 10).max(1);
    let end_at = (spec.expected * 95 / 100).max(warmup + 1);
    let mut start: Option<(Edge, Sampler, Instant)> = None;
    let recording = if spec.perf {
        perf::start(dir)
    } else {
        Err("turned off (--no-perf)".to_string())
    };
    let mut rss: Vec<(f64, u64)> = Vec::with_capacity(1024);
    let (mut stray, mut load) = (0u64, None);
    let (mut last_n, mut last_at) = (0u64, Instant::now());
    // Ticks of 10 ms, so that a small topic cannot be read between the warmup and the
    // window's opening; the RSS is sampled every 10th tick (100 ms).
    let tick = SLOT / 10;
    let mut k = 1u32;
    loop {
        let due = origin + tick * k;
        k += 1;
        if let Some(d) = due.checked_duration_since(Instant::now()) {
            std::thread::sleep(d);
        }
        // Serve the consumer's own queue (events); a message here missed its partition queue.
        if k % 10 == 0 {
            while let Some(m) = c.consumer.poll(Duration::ZERO) {
                stray += u64::from(m.is_ok());
            }
        }
        let n = w.progress.messages.load(Ordering::Relaxed);
        let now = Instant::now();
        if n > last_n {
            (last_n, last_at) = (n, now);
        }
        // perf attaches slowly on a loaded machine: the window waits for it, for 3 s or a
        // quarter of the topic at most (a small topic would be read before it opens).
        let perf_ready = recording.as_ref().map_or(true, |r| r.ready())
            || now.duration_since(origin) > Duration::from_secs(3)
            || n >= spec.expected / 4;
        if start.is_none() && n >= warmup && perf_ready {
            load = figures::load_average();
            let edge = Edge::now(origin, n, w.progress.bytes.load(Ordering::Relaxed));
            let sampler = Sampler::start(w.progress.clone(), origin);
            start = Some((edge, sampler, now));
            w.open.store(true, Ordering::Release);
        }
        if let Some((_, _, opened)) = &start {
            let closing =
                n >= end_at || now.duration_since(*opened) >= spec.duration || interrupt::stopped();
            // Also at the close: a window shorter than 100 ms (a small topic on a fast
            // machine) has its one sample.
            if k % 10 == 0 || (closing && rss.is_empty()) {
                if let Some(b) = figures::resident_bytes() {
                    rss.push((now.duration_since(*opened).as_secs_f64(), b));
                }
            }
            if closing {
                break;
            }
        } else if interrupt::stopped() {
            return Ok(None);
        }
        if now.duration_since(last_at) > STALL || broker.is_lost() {
            return Err(ProbeError::Kafka(format!(
                "the pipeline stalled at {n} of {} records{}",
                spec.expected,
                c.sink
                    .last_error()
                    .map(|e| format!("; librdkafka: {e}"))
                    .unwrap_or_default()
            )));
        }
    }
    let end = Edge::now(
        origin,
        w.progress.messages.load(Ordering::Relaxed),
        w.progress.bytes.load(Ordering::Relaxed),
    );
    w.close.store(true, Ordering::Release);
    let (start, sampler, _) = start.expect("the window opened");
    let ticks = sampler.stop();
    let ticks: Vec<_> = ticks
        .into_iter()
        .filter(|t| t.at_s <= end.at.duration_since(origin).as_secs_f64() + 1e-6)
        .collect();
    measure::write_threads_csv(&dir.join("threads.csv"), &ticks);
    let perf = recording.and_then(|r| r.finish((start.mono_us, end.mono_us)));
    Ok(Some(Coordinated {
        window: measure::window_figures(&start, &end, &ticks),
        rss: Rss::of(&rss),
        perf,
        stray,
        load,
    }))
}

fn figures_of(spec: RunSpec, co: Coordinated, parts: &[Part], writer: Counts) -> Figures {
    let win = co.window;
    let records: u64 = parts.iter().map(|p| p.records).sum();
    let processing: Counts = parts.iter().fold(Counts::default(), |a, p| a + p.counts);
    let counted = alloc_count::installed();
    let per = |x: u64| (counted && records > 0).then(|| measure::round3(x as f64 / records as f64));
    let mut hist = histogram();
    for h in parts.iter().filter_map(|p| p.hist.as_ref()) {
        let _ = hist.add(h);
    }
    let us = |q: f64| measure::round3(hist.value_at_quantile(q) as f64 / 1000.0);
    let cores = |f: &dyn Fn(&str) -> bool| {
        win.threads
            .iter()
            .filter(|t| f(&t.name))
            .map(|t| t.cores)
            .sum::<f64>()
    };
    let processing_cores = cores(&|n| n.starts_with("kgap-proc-"));
    let writer_cores = cores(&|n| n == "kgap-writer");
    let rdk_cores = cores(&|n| n.starts_with("rdk:") && !n.starts_with("rdk:mock"));
    let per_million = |c: f64| {
        if win.messages > 0 {
            measure::round3(c * win.window_s / (win.messages as f64 / 1e6))
        } else {
            0.0
        }
    };
    let (perf, perf_not_measured) = match co.perf {
        Ok(p) => (Some(p), None),
        Err(e) => (None, Some(e)),
    };
    Figures {
        records,
        window_s: measure::round3(win.window_s),
        msgs_per_s: measure::round3(win.msgs_per_s),
        rate_per_s: spec.rate,
        allocations_counted: counted,
        allocations_per_record: per((processing + writer).allocations),
        bytes_allocated_per_record: per((processing + writer).bytes),
        processing_allocations_per_record: per(processing.allocations),
        processing_busy_share: {
            let (busy, win): (u64, u64) = parts
                .iter()
                .fold((0, 0), |a, p| (a.0 + p.busy_ns, a.1 + p.window_ns));
            (win > 0).then(|| measure::round3(busy as f64 / win as f64))
        },
        cpu_s_per_million: measure::round3(win.cpu_s_per_million),
        pipeline_cpu_s_per_million: per_million(processing_cores + writer_cores),
        librdkafka_cpu_s_per_million: per_million(rdk_cores),
        processing_cores: measure::round3(processing_cores),
        writer_cores: measure::round3(writer_cores),
        librdkafka_cores: measure::round3(rdk_cores),
        busiest_processing_thread_cores: win
            .threads
            .iter()
            .filter(|t| t.name.starts_with("kgap-proc-"))
            .map(|t| t.cores)
            .fold(0.0, f64::max),
        processing_p50_us: us(0.5),
        processing_p99_us: us(0.99),
        processing_p999_us: us(0.999),
        processing_max_us: measure::round3(hist.max() as f64 / 1000.0),
        rss: co.rss,
        perf,
        perf_not_measured,
        bad_records: parts.iter().map(|p| p.bad).sum(),
        consumer_errors: parts.iter().map(|p| p.errors).sum(),
        stray_messages: co.stray,
        load_average_1m: co.load,
        timeline: win.timeline,
        threads: win.threads,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotas_split_a_round_robin_prefill() {
        assert_eq!(
            (0..4).map(|p| quota(10, 4, p)).collect::<Vec<_>>(),
            vec![3, 3, 2, 2]
        );
        assert_eq!((0..3).map(|p| quota(9, 3, p)).sum::<u64>(), 9);
    }
}
