//! The report from what was aggregated: rows sorted and cut to the options' top, the
//! socket figures, GC and allocation summaries, then the diagnoses.

use super::aggregator::{Aggregator, SocketAcc};
use super::iso8601::iso8601;
use super::report::*;
use crate::findings::diagnoses::jfr::{diagnose, NEAR_MAX_WITHIN_PCT};
use crate::vocab::report::{round3, Dist};

impl Aggregator {
    /// The report, with diagnoses.
    pub fn finish(mut self, input: InputInfo, opts: &ReportOptions) -> JfrReport {
        for a in &mut self.socket_accs {
            a.flush();
        }
        let duration_s = match (self.start_ns, self.end_ns) {
            (Some(s), Some(e)) => e.saturating_sub(s).max(0) as f64 / 1e9,
            _ => 0.0,
        };
        let hw = self.hw_threads;
        let mut threads: Vec<ThreadCpu> = self
            .thread_cpu
            .iter()
            .map(|(name, a)| {
                let mean = a.sum / a.n as f64;
                ThreadCpu {
                    name: name.to_string(),
                    cpu_mean: round3(mean),
                    cpu_max: round3(a.max),
                    user_mean: round3(a.user / a.n as f64),
                    system_mean: round3(a.system / a.n as f64),
                    cores_mean: hw.map(|h| round3(mean * h as f64)),
                    cores_max: hw.map(|h| round3(a.max * h as f64)),
                    measurements: a.n,
                    samples: self.thread_samples.get(name).map_or(0, |t| t.total),
                }
            })
            .collect();
        threads.sort_by(|a, b| b.cpu_mean.total_cmp(&a.cpu_mean).then(a.name.cmp(&b.name)));

        let socket_row = |op: SocketOp, key: String, a: &SocketAcc, per_thread: bool| SocketRow {
            op,
            thread: per_thread.then(|| key.clone()),
            address: (!per_thread).then_some(key),
            count: a.bytes.len(),
            bytes_total: a.total as u64,
            bytes_p50: a.bytes.quantile(0.5),
            bytes_p90: a.bytes.quantile(0.9),
            bytes_max: a.bytes.max(),
            ops_per_s: if duration_s > 0.0 {
                round3(a.bytes.len() as f64 / duration_s)
            } else {
                0.0
            },
            mb_per_s: if duration_s > 0.0 {
                round3(a.total as f64 / duration_s / 1e6)
            } else {
                0.0
            },
            near_max_share: round3(share_near_max(&a.bytes)),
            time_ms: round3(a.duration_ns as f64 / 1e6),
        };
        let mut socket: Vec<SocketRow> = self
            .socket
            .iter()
            .map(|((op, t), &i)| socket_row(*op, t.to_string(), &self.socket_accs[i], true))
            .collect();
        socket.sort_by(|a, b| a.op.cmp(&b.op).then(b.bytes_total.cmp(&a.bytes_total)));
        let mut socket_by_address: Vec<SocketRow> = self
            .socket_by_address
            .iter()
            .map(|((op, addr), &i)| socket_row(*op, addr.clone(), &self.socket_accs[i], false))
            .collect();
        socket_by_address.sort_by(|a, b| a.op.cmp(&b.op).then(b.bytes_total.cmp(&a.bytes_total)));

        let mut hot: Vec<HotMethod> = self
            .total_samples
            .iter()
            .map(|(f, &total)| HotMethod {
                frame: f.to_string(),
                self_samples: self.self_samples.get(f).copied().unwrap_or(0),
                total_samples: total,
            })
            .collect();
        hot.sort_by(|a, b| {
            b.self_samples
                .cmp(&a.self_samples)
                .then(b.total_samples.cmp(&a.total_samples))
                .then(a.frame.cmp(&b.frame))
        });
        hot.truncate(opts.top);
        let mut top_stacks: Vec<TopStack> = self
            .stacks
            .iter()
            .map(|(frames, &n)| TopStack {
                samples: n,
                frames: frames
                    .iter()
                    .take(opts.stack_depth)
                    .map(|f| f.to_string())
                    .collect(),
            })
            .collect();
        top_stacks.sort_by(|a, b| b.samples.cmp(&a.samples).then(a.frames.cmp(&b.frames)));
        top_stacks.truncate(opts.top.min(10));

        let gc_count: u64 = self.gc.values().map(|g| g.count).sum();
        let pause_ns: u128 = self.gc.values().map(|g| g.pause_ns).sum();
        let gc = (gc_count > 0 || !self.heap_after_gc.is_empty()).then(|| GcSummary {
            collections: gc_count,
            pause_total_ms: round3(pause_ns as f64 / 1e6),
            pause_p50_ms: round3(self.gc_pauses_ms.quantile(0.5) as f64 / 1000.0),
            pause_max_ms: round3(self.gc_pauses_ms.max() as f64 / 1000.0),
            pause_share: if duration_s > 0.0 {
                round3(pause_ns as f64 / 1e9 / duration_s)
            } else {
                0.0
            },
            // An empty distribution has no quantile (its clamp gives u64::MAX): unset, not
            // a figure.
            heap_after_gc_p50_mb: (!self.heap_after_gc.is_empty())
                .then(|| round3(self.heap_after_gc.quantile(0.5) as f64 / 1048576.0)),
            heap_after_gc_max_mb: (!self.heap_after_gc.is_empty())
                .then(|| round3(self.heap_after_gc.max() as f64 / 1048576.0)),
            heap_committed_max_mb: (self.heap_committed_max > 0)
                .then(|| round3(self.heap_committed_max as f64 / 1048576.0)),
            by_collector: self
                .gc
                .iter()
                .map(|(name, g)| GcCollector {
                    name: name.clone(),
                    count: g.count,
                    pause_total_ms: round3(g.pause_ns as f64 / 1e6),
                    longest_pause_ms: round3(g.longest_ns as f64 / 1e6),
                    causes: g.causes.clone(),
                })
                .collect(),
        });

        let alloc_total: u128 = self.alloc.values().map(|a| a.weight).sum();
        let mut allocation: Vec<AllocRow> = self
            .alloc
            .iter()
            .map(|(c, a)| AllocRow {
                class: c.to_string(),
                samples: a.samples,
                weight_bytes: a.weight as u64,
                share: if alloc_total > 0 {
                    round3(a.weight as f64 / alloc_total as f64)
                } else {
                    0.0
                },
            })
            .collect();
        allocation.sort_by(|a, b| {
            b.weight_bytes
                .cmp(&a.weight_bytes)
                .then(a.class.cmp(&b.class))
        });
        allocation.truncate(opts.top);

        let mut locks: Vec<LockRow> = self
            .locks
            .iter()
            .map(|(c, l)| LockRow {
                class: c.to_string(),
                count: l.count,
                total_ms: round3(l.total_ns as f64 / 1e6),
                max_ms: round3(l.max_ns as f64 / 1e6),
            })
            .collect();
        locks.sort_by(|a, b| {
            b.total_ms
                .total_cmp(&a.total_ms)
                .then(a.class.cmp(&b.class))
        });
        locks.truncate(opts.top);

        let events_read = self.counts.values().map(|c| c.count).sum();
        let mut report = JfrReport {
            input,
            recording: Recording {
                start: self.start_ns.map(iso8601),
                start_epoch_s: self.start_ns.map(|s| round3(s as f64 / 1e9)),
                duration_s: round3(duration_s),
                events: events_read,
            },
            jvm: self.jvm.clone(),
            hw_threads: hw,
            threads,
            socket,
            socket_by_address,
            samples: self.samples_total,
            hot_methods: hot,
            top_stacks,
            gc,
            allocation_source: self.alloc_source,
            allocation,
            locks,
            diagnoses: Vec::new(),
            event_types: self.counts.clone(),
        };
        report.diagnoses = diagnose(&report, &self.thread_samples);
        report
    }
}

/// Share of values within [`NEAR_MAX_WITHIN_PCT`] of the largest: high when sizes pile
/// up at a ceiling.
fn share_near_max(d: &Dist) -> f64 {
    if d.is_empty() {
        return 0.0;
    }
    let floor = d.max() - d.max() * NEAR_MAX_WITHIN_PCT / 100;
    let below = d.histogram().count_between(0, floor.saturating_sub(1));
    1.0 - below as f64 / d.len() as f64
}
