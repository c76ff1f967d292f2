//! What a recording says, whatever it was read from: the aggregator both readers
//! feed (binary chunks and `jfr print --json` exports), the report, and the
//! diagnoses in the post's terms.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write as _;
use std::rc::Rc;

use serde::Serialize;
use serde_json::json;

use crate::vocab::report::{human_bytes, render_diagnosis, round3, wrap_into, Diagnosis, Dist};

/// Socket operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SocketOp {
    Read,
    Write,
}

impl SocketOp {
    fn as_str(self) -> &'static str {
        match self {
            SocketOp::Read => "read",
            SocketOp::Write => "write",
        }
    }
}

/// Collects what the readers find, one observation at a time (memory grows with
/// the number of distinct threads, addresses, frames and stacks, not with events).
#[derive(Default)]
pub(crate) struct Aggregator {
    pub counts: BTreeMap<String, TypeCount>,
    pub start_ns: Option<i64>,
    pub end_ns: Option<i64>,
    pub jvm: Option<Jvm>,
    pub hw_threads: Option<u64>,
    thread_cpu: HashMap<Rc<str>, CpuAcc>,
    /// Socket accumulators by (op, thread) and by (op, `address:port`): indices into
    /// `socket_accs`, so a reader can keep the slots of the events it saw last
    /// ([`SocketSlots`]) instead of looking both keys up again for every event.
    socket: BTreeMap<(SocketOp, Rc<str>), usize>,
    socket_by_address: BTreeMap<(SocketOp, String), usize>,
    socket_accs: Vec<SocketAcc>,
    samples_total: u64,
    self_samples: HashMap<Rc<str>, u64>,
    total_samples: HashMap<Rc<str>, u64>,
    stacks: HashMap<Vec<Rc<str>>, u64>,
    thread_samples: HashMap<Rc<str>, ThreadSamples>,
    gc: BTreeMap<String, GcAcc>,
    gc_pauses_ms: Dist,
    heap_after_gc: Dist,
    heap_committed_max: u64,
    alloc: HashMap<Rc<str>, AllocAcc>,
    alloc_source: Option<&'static str>,
    locks: HashMap<Rc<str>, LockAcc>,
    /// Scratch for the `address:port` key of a socket event.
    address_key: String,
}

/// Events of one type.
#[derive(Debug, Clone, Default, Serialize)]
pub struct TypeCount {
    pub count: u64,
    pub bytes: u64,
}

/// The JVM that wrote the recording (jdk.JVMInformation).
#[derive(Debug, Clone, Default, Serialize)]
pub struct Jvm {
    pub name: String,
    pub version: String,
    pub arguments: String,
    pub java_arguments: String,
}

#[derive(Default)]
struct CpuAcc {
    n: u64,
    sum: f64,
    max: f64,
    user: f64,
    system: f64,
}

/// The socket events of one key (an operation on a thread, or to an address): sizes,
/// total bytes and time, first and last.
#[derive(Default)]
pub(crate) struct SocketAcc {
    bytes: Dist,
    /// The last size seen and how many times in a row, not in `bytes` yet: a socket
    /// stuck at its buffer's size reads or writes the same size again and again, and
    /// recording each in the histogram was a sixth of a socket recording's instructions.
    run: (u64, u64),
    total: u128,
    duration_ns: u128,
    first_ns: Option<i64>,
    last_ns: Option<i64>,
}

impl SocketAcc {
    /// One event of `bytes` at `t_ns` that took `duration_ns`.
    #[inline]
    pub(crate) fn add(&mut self, bytes: i64, t_ns: i64, duration_ns: i64) {
        let b = bytes.max(0) as u64;
        if self.run.0 == b {
            self.run.1 += 1;
        } else {
            self.flush();
            self.run = (b, 1);
        }
        self.total += b as u128;
        self.duration_ns += duration_ns.max(0) as u128;
        self.first_ns = Some(self.first_ns.map_or(t_ns, |f| f.min(t_ns)));
        self.last_ns = Some(self.last_ns.map_or(t_ns, |l| l.max(t_ns)));
    }

    /// The run of equal sizes not recorded yet, into the histogram.
    fn flush(&mut self) {
        if self.run.1 > 0 {
            self.bytes.record_n(self.run.0, self.run.1);
            self.run.1 = 0;
        }
    }
}

/// The two accumulators one socket event adds to (see [`Aggregator::socket_slots`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SocketSlots {
    by_thread: usize,
    by_address: usize,
}

#[cfg(test)]
impl SocketSlots {
    pub(crate) fn for_test(by_thread: usize, by_address: usize) -> Self {
        SocketSlots {
            by_thread,
            by_address,
        }
    }
}

/// Where one thread's samples were.
#[derive(Default, Clone)]
struct ThreadSamples {
    total: u64,
    socket_read: u64,
    socket_write: u64,
    deflate: u64,
}

#[derive(Default)]
struct GcAcc {
    count: u64,
    pause_ns: u128,
    longest_ns: i64,
    causes: BTreeMap<String, u64>,
}

#[derive(Default)]
struct AllocAcc {
    samples: u64,
    weight: u128,
}

#[derive(Default)]
struct LockAcc {
    count: u64,
    total_ns: u128,
    max_ns: i64,
}

/// `:` and `n` in decimal onto `s` (what `write!(s, ":{n}")` writes, without the
/// formatting machinery: a socket event's port, 146,000 times on a 5 MB recording).
fn push_decimal(s: &mut String, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    s.push(':');
    // SAFETY: ASCII digits are valid UTF-8.
    s.push_str(unsafe { std::str::from_utf8_unchecked(&digits[i..]) });
}

/// Frames whose presence in a sample means the thread was in a socket read
/// (sun.nio.ch's read0 / SocketDispatcher.read / NioSocketImpl.read, or
/// SocketChannelImpl.read above them).
fn is_socket_read(frame: &str) -> bool {
    frame.ends_with("SocketChannelImpl.read")
        || frame.ends_with("SocketDispatcher.read0")
        || frame.ends_with("NioSocketImpl.read")
}

/// ... in a socket write, including the JDK's copy of a heap buffer into a
/// temporary direct one (IOUtil.write → copy).
fn is_socket_write(frame: &str) -> bool {
    frame.ends_with("SocketChannelImpl.write")
        || frame.ends_with("SocketDispatcher.writev0")
        || frame.ends_with("SocketDispatcher.write0")
        || frame.ends_with("NioSocketImpl.write")
}

/// ... in zlib's deflate (gzip compression).
fn is_deflate(frame: &str) -> bool {
    frame.starts_with("java.util.zip.Deflater.deflate") || frame == "deflate"
}

/// The printable name of a frame: `package.Class.method`, or the bare symbol of a
/// native frame. JFR stores class names with `/`.
pub(crate) fn frame_name(class: Option<&str>, method: &str) -> Rc<str> {
    match class {
        Some(c) if !c.is_empty() => Rc::from(format!("{}.{method}", c.replace('/', "."))),
        _ => Rc::from(method),
    }
}

impl Aggregator {
    pub fn count(&mut self, type_name: &str, n: u64, bytes: u64) {
        let c = match self.counts.get_mut(type_name) {
            Some(c) => c,
            None => self.counts.entry(type_name.to_string()).or_default(),
        };
        c.count += n;
        c.bytes += bytes;
    }

    /// An event type the recording declares (listed even with no events).
    pub fn declare(&mut self, type_name: &str) {
        self.count(type_name, 0, 0);
    }

    pub fn span(&mut self, start_ns: i64, end_ns: i64) {
        self.start_ns = Some(self.start_ns.map_or(start_ns, |s| s.min(start_ns)));
        self.end_ns = Some(self.end_ns.map_or(end_ns, |e| e.max(end_ns)));
    }

    pub fn thread_cpu(&mut self, thread: &Rc<str>, user: f64, system: f64) {
        let a = self.thread_cpu.entry(thread.clone()).or_default();
        let v = user + system;
        a.n += 1;
        a.sum += v;
        a.user += user;
        a.system += system;
        a.max = a.max.max(v);
    }

    #[allow(clippy::too_many_arguments)]
    #[allow(clippy::too_many_arguments)]
    pub fn socket(
        &mut self,
        op: SocketOp,
        thread: &Rc<str>,
        address: &str,
        port: i64,
        bytes: i64,
        t_ns: i64,
        duration_ns: i64,
    ) {
        let slots = self.socket_slots(op, thread, address, port);
        self.socket_at(slots, bytes, t_ns, duration_ns);
    }

    /// Where a socket event of `op` on `thread` to `address`:`port` is counted (made
    /// on first use).
    pub fn socket_slots(
        &mut self,
        op: SocketOp,
        thread: &Rc<str>,
        address: &str,
        port: i64,
    ) -> SocketSlots {
        let next = self.socket_accs.len();
        let by_thread = *self.socket.entry((op, thread.clone())).or_insert(next);
        if by_thread == next {
            self.socket_accs.push(SocketAcc::default());
        }
        // The address key is built in a kept buffer: a new String per event was a
        // seventh of a socket recording's instructions.
        let mut key = (op, std::mem::take(&mut self.address_key));
        key.1.clear();
        key.1.push_str(address);
        if port > 0 {
            push_decimal(&mut key.1, port as u64);
        }
        let by_address = match self.socket_by_address.get(&key) {
            Some(&i) => i,
            None => {
                let i = self.socket_accs.len();
                self.socket_accs.push(SocketAcc::default());
                self.socket_by_address.insert(key.clone(), i);
                i
            }
        };
        self.address_key = key.1;
        SocketSlots {
            by_thread,
            by_address,
        }
    }

    /// One socket event counted where `slots` say.
    pub fn socket_at(&mut self, slots: SocketSlots, bytes: i64, t_ns: i64, duration_ns: i64) {
        for i in [slots.by_thread, slots.by_address] {
            self.socket_accs[i].add(bytes, t_ns, duration_ns);
        }
    }

    /// What [`socket_at`](Self::socket_at) of each event of `part` makes: its events,
    /// counted apart (on another core), added to both slots at once.
    pub fn socket_merge(&mut self, slots: SocketSlots, part: &mut SocketAcc) {
        part.flush();
        for i in [slots.by_thread, slots.by_address] {
            let a = &mut self.socket_accs[i];
            a.bytes.merge(&part.bytes);
            a.total += part.total;
            a.duration_ns += part.duration_ns;
            a.first_ns = match (a.first_ns, part.first_ns) {
                (Some(x), Some(y)) => Some(x.min(y)),
                (x, y) => x.or(y),
            };
            a.last_ns = a.last_ns.max(part.last_ns);
        }
    }

    /// `n` samples of `thread` with this stack (top frame first).
    pub fn samples(&mut self, thread: &Rc<str>, frames: &[Rc<str>], n: u64) {
        self.samples_total += n;
        if let Some(top) = frames.first() {
            *self.self_samples.entry(top.clone()).or_default() += n;
        }
        let mut seen: HashSet<&str> = HashSet::with_capacity(frames.len());
        let (mut read, mut write, mut deflate) = (false, false, false);
        for f in frames {
            if seen.insert(f) {
                *self.total_samples.entry(f.clone()).or_default() += n;
            }
            read |= is_socket_read(f);
            write |= is_socket_write(f);
            deflate |= is_deflate(f);
        }
        let t = self.thread_samples.entry(thread.clone()).or_default();
        t.total += n;
        t.socket_read += n * read as u64;
        t.socket_write += n * write as u64;
        t.deflate += n * deflate as u64;
        *self.stacks.entry(frames.to_vec()).or_default() += n;
    }

    pub fn gc(&mut self, name: &str, cause: &str, sum_of_pauses_ns: i64, longest_ns: i64) {
        let g = self.gc.entry(name.to_string()).or_default();
        g.count += 1;
        g.pause_ns += sum_of_pauses_ns.max(0) as u128;
        g.longest_ns = g.longest_ns.max(longest_ns);
        *g.causes.entry(cause.to_string()).or_default() += 1;
        self.gc_pauses_ms
            .record((sum_of_pauses_ns.max(0) / 1000) as u64);
    }

    pub fn heap_after_gc(&mut self, used: i64, committed: i64) {
        self.heap_after_gc.record(used.max(0) as u64);
        self.heap_committed_max = self.heap_committed_max.max(committed.max(0) as u64);
    }

    pub fn alloc(&mut self, source: &'static str, class: &Rc<str>, weight: i64) {
        if self.alloc_source.is_none() || source == "jdk.ObjectAllocationSample" {
            self.alloc_source = Some(source);
        }
        let a = self.alloc.entry(class.clone()).or_default();
        a.samples += 1;
        a.weight += weight.max(0) as u128;
    }

    pub fn monitor_enter(&mut self, class: &Rc<str>, duration_ns: i64) {
        let l = self.locks.entry(class.clone()).or_default();
        l.count += 1;
        l.total_ns += duration_ns.max(0) as u128;
        l.max_ns = l.max_ns.max(duration_ns);
    }

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
            heap_after_gc_p50_mb: round3(self.heap_after_gc.quantile(0.5) as f64 / 1048576.0),
            heap_after_gc_max_mb: round3(self.heap_after_gc.max() as f64 / 1048576.0),
            heap_committed_max_mb: round3(self.heap_committed_max as f64 / 1048576.0),
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

/// Share of values within 10% of the largest: high when sizes pile up at a ceiling.
fn share_near_max(d: &Dist) -> f64 {
    if d.is_empty() {
        return 0.0;
    }
    let floor = d.max() - d.max() / 10;
    let below = d.histogram().count_between(0, floor.saturating_sub(1));
    1.0 - below as f64 / d.len() as f64
}

/// Options of the report.
#[derive(Debug, Clone)]
pub struct ReportOptions {
    /// Rows in the hot-method, allocation and lock tables.
    pub top: usize,
    /// Frames shown per top stack.
    pub stack_depth: usize,
}

impl Default for ReportOptions {
    fn default() -> Self {
        ReportOptions {
            top: 15,
            stack_depth: 12,
        }
    }
}

/// What was read.
#[derive(Debug, Clone, Default, Serialize)]
pub struct InputInfo {
    /// The name shown for the input.
    pub name: String,
    /// "jfr" (binary recording) or "jfr-json" (`jfr print --json`).
    pub format: String,
    /// JFR format version(s) of the chunks, e.g. "2.1".
    pub version: Option<String>,
    pub bytes: u64,
    pub chunks: u64,
    /// What could not be read, in words (empty when everything was).
    pub problems: Vec<String>,
    /// Where the input ends early (a chunk cut short, a header cut off, an export not read to
    /// its end): what was lost may hold any event, so no absence is evidence.
    pub cut_at_byte: Option<u64>,
}

/// The report of analyze-jfr: the documented JSON contract.
#[derive(Debug, Clone, Serialize)]
pub struct JfrReport {
    pub input: InputInfo,
    pub recording: Recording,
    pub jvm: Option<Jvm>,
    /// Hardware threads of the machine (jdk.CPUInformation): turns JFR's CPU
    /// loads (fractions of the machine) into cores.
    pub hw_threads: Option<u64>,
    pub threads: Vec<ThreadCpu>,
    pub socket: Vec<SocketRow>,
    pub socket_by_address: Vec<SocketRow>,
    /// Execution samples read.
    pub samples: u64,
    pub hot_methods: Vec<HotMethod>,
    pub top_stacks: Vec<TopStack>,
    pub gc: Option<GcSummary>,
    /// The event type allocation rows come from.
    pub allocation_source: Option<&'static str>,
    pub allocation: Vec<AllocRow>,
    pub locks: Vec<LockRow>,
    pub diagnoses: Vec<Diagnosis>,
    /// Count and bytes per event type (`--events` prints this).
    #[serde(skip)]
    pub event_types: BTreeMap<String, TypeCount>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Recording {
    /// Start (UTC, ISO 8601).
    pub start: Option<String>,
    pub start_epoch_s: Option<f64>,
    pub duration_s: f64,
    /// Events read, metadata and checkpoints included.
    pub events: u64,
}

/// CPU of one thread (jdk.ThreadCPULoad, user + system, as fractions of the
/// whole machine the way JFR reports them; `cores_*` multiply by hw_threads).
#[derive(Debug, Clone, Serialize)]
pub struct ThreadCpu {
    pub name: String,
    pub cpu_mean: f64,
    pub cpu_max: f64,
    pub user_mean: f64,
    pub system_mean: f64,
    pub cores_mean: Option<f64>,
    pub cores_max: Option<f64>,
    /// jdk.ThreadCPULoad events for the thread.
    pub measurements: u64,
    /// Execution samples of the thread.
    pub samples: u64,
}

/// Socket reads or writes of one thread (`thread`) or one remote address (`address`).
#[derive(Debug, Clone, Serialize)]
pub struct SocketRow {
    pub op: SocketOp,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thread: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub address: Option<String>,
    pub count: u64,
    pub bytes_total: u64,
    pub bytes_p50: u64,
    pub bytes_p90: u64,
    pub bytes_max: u64,
    /// Mean over the recording.
    pub ops_per_s: f64,
    pub mb_per_s: f64,
    /// Share of operations within 10% of the largest.
    pub near_max_share: f64,
    /// Time inside the operations (sum of event durations).
    pub time_ms: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct HotMethod {
    pub frame: String,
    /// Samples with this frame on top.
    pub self_samples: u64,
    /// Samples with this frame anywhere in the stack.
    pub total_samples: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct TopStack {
    pub samples: u64,
    /// Top frame first.
    pub frames: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct GcSummary {
    pub collections: u64,
    pub pause_total_ms: f64,
    pub pause_p50_ms: f64,
    pub pause_max_ms: f64,
    /// Pause time over the recording's span.
    pub pause_share: f64,
    pub heap_after_gc_p50_mb: f64,
    pub heap_after_gc_max_mb: f64,
    pub heap_committed_max_mb: f64,
    pub by_collector: Vec<GcCollector>,
}

#[derive(Debug, Clone, Serialize)]
pub struct GcCollector {
    pub name: String,
    pub count: u64,
    pub pause_total_ms: f64,
    pub longest_pause_ms: f64,
    pub causes: BTreeMap<String, u64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct AllocRow {
    pub class: String,
    pub samples: u64,
    /// Bytes the samples stand for (ObjectAllocationSample's weight; TLAB size
    /// or object size for async-profiler's events).
    pub weight_bytes: u64,
    pub share: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct LockRow {
    pub class: String,
    pub count: u64,
    pub total_ms: f64,
    pub max_ms: f64,
}

/// Largest write that still points at a fixed send buffer: the kernel doubles
/// SO_SNDBUF (128 KB → 256 KB) and a write takes a little more than that (the
/// post: ~298 KB); autotuned buffers let writes grow to MBs (~692 KB in the post).
const FIXED_SNDBUF_CEILING_MAX: u64 = 512 * 1024;
/// Same for reads: receive.buffer.bytes 64 KB gave ~56 KB reads in the post.
const FIXED_RCVBUF_CEILING_MAX: u64 = 256 * 1024;
/// Operations needed before a ceiling is believed.
const MIN_OPS: u64 = 50;
/// ... and this often (a few large messages a second are not a buffer cap).
const MIN_OPS_PER_S: f64 = 20.0;
/// A thread this busy (in cores) counts as "at one core".
const ONE_CORE: f64 = 0.85;

fn diagnose(r: &JfrReport, samples: &HashMap<Rc<str>, ThreadSamples>) -> Vec<Diagnosis> {
    let mut out = Vec::new();
    let thread = |name: &str| r.threads.iter().find(|t| t.name == name);
    let sample_share = |name: &str, pick: fn(&ThreadSamples) -> u64| {
        samples
            .iter()
            .find(|(n, _)| &***n == name)
            .filter(|(_, t)| t.total > 0)
            .map(|(_, t)| round3(pick(t) as f64 / t.total as f64))
    };
    for s in &r.socket {
        let Some(tname) = s.thread.as_deref() else {
            continue;
        };
        let ceiling = match s.op {
            SocketOp::Write => FIXED_SNDBUF_CEILING_MAX,
            SocketOp::Read => FIXED_RCVBUF_CEILING_MAX,
        };
        // Clustered under a ceiling: the median at least half the largest and the
        // 90th percentile near it (sizes pile up under a cap instead of spreading
        // to MBs as with autotuned buffers), the largest small enough to be a
        // fixed buffer, and often enough to matter.
        let clustered = s.count >= MIN_OPS
            && s.ops_per_s >= MIN_OPS_PER_S
            && s.bytes_max <= ceiling
            && s.bytes_max >= 32 * 1024
            && s.bytes_p50 as f64 >= 0.5 * s.bytes_max as f64
            && s.bytes_p90 as f64 >= 0.8 * s.bytes_max as f64;
        if !clustered {
            continue;
        }
        let t = thread(tname);
        let (knob, pick): (&str, fn(&ThreadSamples) -> u64) = match s.op {
            SocketOp::Write => ("send.buffer.bytes", |t| t.socket_write),
            SocketOp::Read => ("receive.buffer.bytes", |t| t.socket_read),
        };
        let evidence = json!({
            "op": s.op.as_str(),
            "thread": tname,
            "ops": s.count,
            "bytes_p50": s.bytes_p50,
            "bytes_p90": s.bytes_p90,
            "bytes_max": s.bytes_max,
            "near_max_share": s.near_max_share,
            "ops_per_s": s.ops_per_s,
            "thread_cores_mean": t.and_then(|t| t.cores_mean),
            "thread_cpu_mean": t.map(|t| t.cpu_mean),
            "samples_in_socket_op": sample_share(tname, pick),
        });
        let (cause, fix) = match s.op {
            SocketOp::Write => (
                format!(
                    "{}% of the {} writes of '{tname}' are within 10% of the largest ({}): \
                     writes are capped by a fixed socket send buffer (send.buffer.bytes, 128 KB \
                     by default; the kernel doubles it). A large request then takes many writes, \
                     and for a heap buffer the JDK copies the whole unsent rest into a temporary \
                     direct buffer on every one (the post: ~298 KB per write, 22 writes and \
                     copies for a 6.29 MB request).",
                    (s.near_max_share * 100.0).round(),
                    s.count,
                    human_bytes(s.bytes_max as f64)
                ),
                "send.buffer.bytes=-1 (let the kernel autotune: ~692 KB per write in the \
                 post, 1 MB batches from 630k to 875k msg/s), or keep requests small with \
                 max.request.size (e.g. 1100000, one batch per request)"
                    .to_string(),
            ),
            SocketOp::Read => (
                format!(
                    "the {} reads of '{tname}' pile up under {} (median {}): \
                     reads are capped by a fixed socket receive buffer (receive.buffer.bytes, \
                     64 KB by default), so a large fetch response arrives in many small reads \
                     on the polling thread (the post: ~56 KB reads, 22,500 per second).",
                    s.count,
                    human_bytes(s.bytes_max as f64),
                    human_bytes(s.bytes_p50 as f64)
                ),
                "receive.buffer.bytes=-1 (let the kernel autotune: halves the reads, +16 to 17% \
                 for one consumer in the post)"
                    .to_string(),
            ),
        };
        out.push(Diagnosis {
            id: "fixed-socket-buffer".into(),
            title: format!(
                "{} sizes clustered at a fixed socket buffer ({knob})",
                s.op.as_str()
            ),
            evidence,
            cause,
            fix,
            examples: Vec::new(),
        });
    }

    // One consumer at one core: a thread that reads the socket itself and is
    // near a whole core (CPU load or, without it, read-heavy samples).
    for s in r
        .socket
        .iter()
        .filter(|s| s.op == SocketOp::Read && s.count >= MIN_OPS)
    {
        let Some(tname) = s.thread.as_deref() else {
            continue;
        };
        let Some(t) = thread(tname) else { continue };
        let Some(cores) = t.cores_mean else { continue };
        if cores < ONE_CORE {
            continue;
        }
        out.push(Diagnosis {
            id: "single-core-consumer".into(),
            title: format!("'{tname}' reads the socket and runs at one core"),
            evidence: json!({
                "thread": tname,
                "cores_mean": cores,
                "cores_max": t.cores_max,
                "reads": s.count,
                "read_bytes_p50": s.bytes_p50,
                "samples_in_socket_read": sample_share(tname, |t| t.socket_read),
            }),
            cause: format!(
                "'{tname}' does the socket reads and the per-byte work on one thread at \
                 {cores:.2} cores: in the classic consumer the thread that calls poll() also \
                 reads the socket (the post: 0.95 to 0.98 cores, ~1.4 GB/s per consumer)."
            ),
            fix: "receive.buffer.bytes=-1 first; past that, add consumers (and partitions): \
                  one KafkaConsumer's per-byte work stays on one core"
                .into(),
            examples: Vec::new(),
        });
    }

    if let Some(gc) = &r.gc {
        let heap_full = gc.heap_committed_max_mb > 0.0
            && gc.heap_after_gc_p50_mb >= 0.8 * gc.heap_committed_max_mb;
        if gc.pause_share >= 0.10 || (heap_full && gc.collections >= 5) {
            out.push(Diagnosis {
                id: "gc-pressure".into(),
                title: "GC takes a large share of the recording".into(),
                evidence: json!({
                    "collections": gc.collections,
                    "pause_share": gc.pause_share,
                    "pause_total_ms": gc.pause_total_ms,
                    "pause_max_ms": gc.pause_max_ms,
                    "heap_after_gc_p50_mb": gc.heap_after_gc_p50_mb,
                    "heap_committed_max_mb": gc.heap_committed_max_mb,
                }),
                cause: format!(
                    "pauses take {:.0}% of the recording and the heap after GC is {:.0} of \
                     {:.0} MB: live data fills the heap (the post, 16 producers in one JVM: \
                     records waiting in the accumulators, ~190 B of objects per 100 B \
                     record, survive young collections; 37% of the window in GC).",
                    gc.pause_share * 100.0,
                    gc.heap_after_gc_p50_mb,
                    gc.heap_committed_max_mb
                ),
                fix: "bound the backlog: a smaller buffer.memory per producer (2 MB took 16 \
                      producers from 6.6M to 10.1M msg/s in the post); fewer busy threads than \
                      CPUs; a bigger heap helps less"
                    .into(),
                examples: Vec::new(),
            });
        }
    }

    for (name, t) in samples {
        if t.total < 20 || t.deflate * 2 < t.total {
            continue;
        }
        let share = round3(t.deflate as f64 / t.total as f64);
        out.push(Diagnosis {
            id: "deflate-dominates".into(),
            title: format!("'{name}' spends most samples in zlib deflate"),
            evidence: json!({
                "thread": name.to_string(),
                "samples": t.total,
                "deflate_share": share,
                "thread_cores_mean": thread(name).and_then(|t| t.cores_mean),
            }),
            cause: format!(
                "{:.0}% of this thread's samples are in java.util.zip.Deflater (gzip): Java \
                 closes a gzip batch when its estimated compressed size reaches batch.size, so \
                 a 16 KB batch holds ~43 KB of input, and zlib is slower per byte on longer \
                 input (the post: 96% of the sending thread in deflate).",
                share * 100.0
            ),
            fix: "compare at equal input per batch: a smaller batch.size for gzip (3000 B gave \
                  48.2k against 33.9k msg/s), compression.gzip.level=1, or lz4/zstd"
                .into(),
            examples: Vec::new(),
        });
    }
    out.sort_by(|a, b| a.id.cmp(&b.id));
    out
}

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

impl JfrReport {
    /// Anything to report: at least one event was read.
    pub fn is_usable(&self) -> bool {
        self.recording.events > 0
    }

    /// `--events --json`: event type → count.
    pub fn events_json(&self) -> serde_json::Value {
        let events: serde_json::Map<String, serde_json::Value> = self
            .event_types
            .iter()
            .map(|(k, v)| (k.clone(), json!(v.count)))
            .collect();
        let bytes: serde_json::Map<String, serde_json::Value> = self
            .event_types
            .iter()
            .map(|(k, v)| (k.clone(), json!(v.bytes)))
            .collect();
        json!({ "input": self.input, "events": events, "bytes": bytes })
    }

    /// `--events`: the table `jfr summary` prints (most events first).
    pub fn render_events(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "{}: JFR {}, {} chunk(s), {} events, {:.1} s",
            self.input.name,
            self.input.version.as_deref().unwrap_or("?"),
            self.input.chunks,
            self.recording.events,
            self.recording.duration_s
        );
        let mut rows: Vec<(&String, &TypeCount)> = self.event_types.iter().collect();
        rows.sort_by(|a, b| {
            b.1.count
                .cmp(&a.1.count)
                .then(b.1.bytes.cmp(&a.1.bytes))
                .then(a.0.cmp(b.0))
        });
        let w = rows.iter().map(|r| r.0.len()).max().unwrap_or(10).max(10);
        let _ = writeln!(
            out,
            "\n {:<w$} {:>10} {:>13}",
            "Event Type", "Count", "Size (bytes)"
        );
        let _ = writeln!(out, "{}", "=".repeat(w + 26));
        for (name, c) in rows {
            let _ = writeln!(out, " {name:<w$} {:>10} {:>13}", c.count, c.bytes);
        }
        for p in &self.input.problems {
            wrap_into(&mut out, "warning: ", p);
        }
        out
    }

    /// The human report (80 columns).
    pub fn render_text(&self) -> String {
        let mut out = String::new();
        let r = &self.recording;
        // What was read, in words: a recording names its chunks and format version; an
        // export has neither. gzip is said, not mistaken for an export.
        let gz = if self.input.format.ends_with("+gzip") {
            ", gzip"
        } else {
            ""
        };
        let what = if self.input.format.starts_with("jfr-json") {
            format!("jfr print --json export{gz}")
        } else {
            format!(
                "JFR recording{gz} ({}, format {})",
                crate::vocab::units::counted(self.input.chunks, "chunk"),
                self.input.version.as_deref().unwrap_or("unknown")
            )
        };
        let desc = format!(
            "{what}, {} over {:.1} s from {}",
            crate::vocab::units::counted(r.events, "event"),
            r.duration_s,
            r.start.as_deref().unwrap_or("an unknown start")
        );
        // The headline within 100 columns: a long path gets a line of its own.
        if self.input.name.chars().count() + 2 + desc.chars().count() <= 100 {
            let _ = writeln!(out, "{}: {desc}", self.input.name);
        } else {
            let _ = writeln!(out, "{}:", self.input.name);
            wrap_into(&mut out, "  ", &desc);
        }
        if let Some(j) = &self.jvm {
            wrap_into(
                &mut out,
                "JVM: ",
                // jvmVersion already starts with the VM's name.
                short_version(if j.version.is_empty() {
                    &j.name
                } else {
                    &j.version
                }),
            );
        }
        for p in &self.input.problems {
            wrap_into(&mut out, "warning: ", p);
        }

        if !self.threads.is_empty() {
            let _ = writeln!(
                out,
                "\nThread CPU (jdk.ThreadCPULoad, user+system{}):",
                if self.hw_threads.is_some() {
                    "; cores = load x hw threads"
                } else {
                    ""
                }
            );
            let _ = writeln!(
                out,
                "  {:<40} {:>7} {:>7} {:>7} {:>7}",
                "thread", "mean", "max", "cores", "samples"
            );
            for t in self.threads.iter().take(12) {
                let _ = writeln!(
                    out,
                    "  {:<40} {:>6.1}% {:>6.1}% {:>7} {:>7}",
                    cut(&t.name, 40),
                    t.cpu_mean * 100.0,
                    t.cpu_max * 100.0,
                    t.cores_mean.map_or("-".into(), |c| format!("{c:.2}")),
                    t.samples
                );
            }
            if self.threads.len() > 12 {
                let _ = writeln!(
                    out,
                    "  … {} more threads (--json has all)",
                    self.threads.len() - 12
                );
            }
        }

        if !self.socket.is_empty() {
            let _ = writeln!(out, "\nSocket I/O per thread (bytes per operation):");
            let _ = writeln!(
                out,
                "  {:<5} {:<26} {:>8} {:>9} {:>9} {:>9} {:>8}",
                "op", "thread", "ops", "p50", "p90", "max", "ops/s"
            );
            for s in &self.socket {
                let _ = writeln!(
                    out,
                    "  {:<5} {:<26} {:>8} {:>9} {:>9} {:>9} {:>8.0}",
                    s.op.as_str(),
                    cut(s.thread.as_deref().unwrap_or("?"), 26),
                    s.count,
                    human_bytes(s.bytes_p50 as f64),
                    human_bytes(s.bytes_p90 as f64),
                    human_bytes(s.bytes_max as f64),
                    s.ops_per_s
                );
            }
            let _ = writeln!(out, "  per remote address:");
            for s in self.socket_by_address.iter().take(10) {
                let _ = writeln!(
                    out,
                    "  {:<5} {:<26} {:>8} {:>9} {:>9} {:>9} {:>8.0}",
                    s.op.as_str(),
                    cut(s.address.as_deref().unwrap_or("?"), 26),
                    s.count,
                    human_bytes(s.bytes_p50 as f64),
                    human_bytes(s.bytes_p90 as f64),
                    human_bytes(s.bytes_max as f64),
                    s.ops_per_s
                );
            }
        }

        if self.samples > 0 {
            let _ = writeln!(
                out,
                "\nHot methods ({} execution samples; self = on top):",
                self.samples
            );
            let _ = writeln!(out, "  {:>6} {:>6} {:>6}  frame", "self", "self%", "total%");
            for h in self.hot_methods.iter().take(10) {
                let _ = writeln!(
                    out,
                    "  {:>6} {:>5.1}% {:>5.1}%  {}",
                    h.self_samples,
                    100.0 * h.self_samples as f64 / self.samples as f64,
                    100.0 * h.total_samples as f64 / self.samples as f64,
                    cut(&h.frame, 56)
                );
            }
            if let Some(s) = self.top_stacks.first() {
                let _ = writeln!(
                    out,
                    "  top stack ({} samples, {:.1}%):",
                    s.samples,
                    100.0 * s.samples as f64 / self.samples as f64
                );
                for f in s.frames.iter().take(6) {
                    let _ = writeln!(out, "    {}", cut(f, 74));
                }
            }
        }

        if let Some(gc) = &self.gc {
            let _ = writeln!(
                out,
                "\nGC: {} collections, pauses {:.1} ms total ({:.1}% of the recording), p50 {:.2} ms, max {:.2} ms",
                gc.collections,
                gc.pause_total_ms,
                gc.pause_share * 100.0,
                gc.pause_p50_ms,
                gc.pause_max_ms
            );
            if gc.heap_committed_max_mb > 0.0 {
                let _ = writeln!(
                    out,
                    "  heap after GC: p50 {:.1} MB, max {:.1} MB of {:.1} MB committed",
                    gc.heap_after_gc_p50_mb, gc.heap_after_gc_max_mb, gc.heap_committed_max_mb
                );
            }
            for c in &gc.by_collector {
                let _ = writeln!(
                    out,
                    "  {:<24} {:>6} collections {:>10.1} ms, longest {:.2} ms",
                    c.name, c.count, c.pause_total_ms, c.longest_pause_ms
                );
            }
        }

        if !self.allocation.is_empty() {
            let _ = writeln!(
                out,
                "\nAllocation by class ({}):",
                self.allocation_source.unwrap_or("?")
            );
            for a in self.allocation.iter().take(8) {
                let _ = writeln!(
                    out,
                    "  {:>9} {:>5.1}%  {}",
                    human_bytes(a.weight_bytes as f64),
                    a.share * 100.0,
                    cut(&a.class, 60)
                );
            }
        }

        if !self.locks.is_empty() {
            let _ = writeln!(out, "\nLock contention (jdk.JavaMonitorEnter):");
            for l in self.locks.iter().take(8) {
                let _ = writeln!(
                    out,
                    "  {:>7} waits {:>10.1} ms, max {:>8.2} ms  {}",
                    l.count,
                    l.total_ms,
                    l.max_ms,
                    cut(&l.class, 36)
                );
            }
        }

        if self.diagnoses.is_empty() {
            let more = if let Some(at) = self.input.cut_at_byte {
                format!(
                    " But the recording is cut at byte {at}: the lost part may hold what was \
                     not found here, so this says nothing about it."
                )
            } else if self.socket.is_empty() {
                " No socket events: record with jdk.SocketRead/jdk.SocketWrite at threshold 0 \
                 ms (see fixtures/jfr/capture/socket-io.jfc)."
                    .to_string()
            } else {
                String::new()
            };
            out.push('\n');
            wrap_into(
                &mut out,
                "",
                &format!(
                    "No gap found (checked: fixed socket buffer, one consumer at one core, GC \
                     pressure, deflate dominating).{more}"
                ),
            );
        } else {
            let _ = writeln!(out, "\nDiagnoses:");
            for d in &self.diagnoses {
                render_diagnosis(&mut out, d);
            }
        }
        out
    }
}

fn short_version(v: &str) -> &str {
    // "OpenJDK 64-Bit Server VM (17.0.15+6-...) for linux-amd64 JRE (...), built on …"
    v.split(", built on").next().unwrap_or(v)
}

fn cut(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let tail: String = s.chars().skip(s.chars().count() - (n - 1)).collect();
        format!("…{tail}")
    }
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

    #[test]
    fn writes_at_a_ceiling_are_diagnosed_and_spread_writes_are_not() {
        let run = |sizes: &[u64]| {
            let mut a = Aggregator::default();
            let t: Rc<str> = Rc::from("net");
            a.span(0, 10_000_000_000);
            for (i, &b) in sizes.iter().enumerate() {
                a.socket(SocketOp::Write, &t, "10.0.0.1", 9092, b as i64, i as i64, 0);
            }
            a.finish(InputInfo::default(), &ReportOptions::default())
        };
        let capped: Vec<u64> = (0..200)
            .map(|i| if i % 10 == 0 { 90_000 } else { 300_000 })
            .collect();
        let r = run(&capped);
        assert_eq!(r.diagnoses.len(), 1);
        assert_eq!(r.diagnoses[0].id, "fixed-socket-buffer");
        // Autotuned: sizes spread up to MBs.
        let spread: Vec<u64> = (0..200).map(|i| 50_000 + i * 20_000).collect();
        assert!(run(&spread).diagnoses.is_empty());
        // Too few writes to believe a ceiling.
        assert!(run(&capped[..20]).diagnoses.is_empty());
    }

    fn ids(r: &JfrReport) -> Vec<&str> {
        r.diagnoses.iter().map(|d| d.id.as_str()).collect()
    }

    #[test]
    fn a_reading_thread_at_one_core_is_a_single_core_consumer() {
        let run = |load: f64| {
            let mut a = Aggregator::default();
            a.hw_threads = Some(16);
            a.span(0, 10_000_000_000);
            let t: Rc<str> = Rc::from("main");
            // 1/16 of the machine is one core.
            a.thread_cpu(&t, load * 0.9 / 16.0, load * 0.1 / 16.0);
            for i in 0..500 {
                a.socket(SocketOp::Read, &t, "b1", 9092, 20_000 + i * 7_000, i, 0);
            }
            a.finish(InputInfo::default(), &ReportOptions::default())
        };
        assert_eq!(ids(&run(0.97)), ["single-core-consumer"]);
        assert!(ids(&run(0.5)).is_empty());
    }

    #[test]
    fn gc_pauses_over_a_tenth_of_the_recording_are_gc_pressure() {
        let run = |pause_ms: i64| {
            let mut a = Aggregator::default();
            a.span(0, 10_000_000_000);
            for _ in 0..10 {
                a.gc(
                    "G1Old",
                    "G1 Evacuation Pause",
                    pause_ms * 1_000_000,
                    pause_ms * 1_000_000,
                );
                a.heap_after_gc(100 << 20, 2048 << 20);
            }
            a.finish(InputInfo::default(), &ReportOptions::default())
        };
        assert_eq!(ids(&run(110)), ["gc-pressure"]); // 1.1 s of 10 s
        assert!(ids(&run(2)).is_empty());
    }

    #[test]
    fn a_thread_mostly_in_deflate_is_diagnosed() {
        let mut a = Aggregator::default();
        a.span(0, 1_000_000_000);
        let t: Rc<str> = Rc::from("kafka-producer-network-thread | p1");
        let deflate: Vec<Rc<str>> = vec![
            Rc::from("java.util.zip.Deflater.deflateBytesBytes"),
            Rc::from("org.apache.kafka.common.compress.GzipOutputStream.write"),
        ];
        let other: Vec<Rc<str>> = vec![Rc::from("sun.nio.ch.SocketChannelImpl.write")];
        a.samples(&t, &deflate, 96);
        a.samples(&t, &other, 4);
        let r = a.finish(InputInfo::default(), &ReportOptions::default());
        assert_eq!(ids(&r), ["deflate-dominates"]);
        assert_eq!(r.diagnoses[0].evidence["deflate_share"], 0.96);
        assert_eq!(
            r.hot_methods[0].frame,
            "java.util.zip.Deflater.deflateBytesBytes"
        );
        assert_eq!(r.hot_methods[0].self_samples, 96);
    }

    #[test]
    fn a_port_is_written_as_format_writes_it() {
        for n in [1u64, 9, 10, 9092, 65535, u64::MAX] {
            let mut s = String::from("10.0.0.1");
            push_decimal(&mut s, n);
            assert_eq!(s, format!("10.0.0.1:{n}"));
        }
    }

    #[test]
    fn cut_keeps_the_tail() {
        assert_eq!(cut("abcdef", 4), "…def");
        assert_eq!(cut("abc", 4), "abc");
    }
}
