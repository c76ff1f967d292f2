//! What the readers find, collected one observation at a time: per-thread CPU, the
//! socket accumulators, samples by frame and stack, GC, allocation and locks.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::rc::Rc;

use super::report::{Jvm, SocketOp, TypeCount};
use crate::vocab::report::Dist;

/// Collects what the readers find, one observation at a time (memory grows with
/// the number of distinct threads, addresses, frames and stacks, not with events).
#[derive(Default)]
pub(crate) struct Aggregator {
    pub counts: BTreeMap<String, TypeCount>,
    pub start_ns: Option<i64>,
    pub end_ns: Option<i64>,
    pub jvm: Option<Jvm>,
    pub hw_threads: Option<u64>,
    pub(super) thread_cpu: HashMap<Rc<str>, CpuAcc>,
    /// Socket accumulators by (op, thread) and by (op, `address:port`): indices into
    /// `socket_accs`, so a reader can keep the slots of the events it saw last
    /// ([`SocketSlots`]) instead of looking both keys up again for every event.
    pub(super) socket: BTreeMap<(SocketOp, Rc<str>), usize>,
    pub(super) socket_by_address: BTreeMap<(SocketOp, String), usize>,
    pub(super) socket_accs: Vec<SocketAcc>,
    pub(super) samples_total: u64,
    pub(super) self_samples: HashMap<Rc<str>, u64>,
    pub(super) total_samples: HashMap<Rc<str>, u64>,
    pub(super) stacks: HashMap<Vec<Rc<str>>, u64>,
    pub(super) thread_samples: HashMap<Rc<str>, ThreadSamples>,
    pub(super) gc: BTreeMap<String, GcAcc>,
    pub(super) gc_pauses_ms: Dist,
    pub(super) heap_after_gc: Dist,
    pub(super) heap_committed_max: u64,
    pub(super) alloc: HashMap<Rc<str>, AllocAcc>,
    pub(super) alloc_source: Option<&'static str>,
    pub(super) locks: HashMap<Rc<str>, LockAcc>,
    /// Scratch for the `address:port` key of a socket event.
    pub(super) address_key: String,
}

#[derive(Default)]
pub(super) struct CpuAcc {
    pub(super) n: u64,
    pub(super) sum: f64,
    pub(super) max: f64,
    pub(super) user: f64,
    pub(super) system: f64,
}

/// The socket events of one key (an operation on a thread, or to an address): sizes,
/// total bytes and time, first and last.
#[derive(Default)]
pub(crate) struct SocketAcc {
    pub(super) bytes: Dist,
    /// The last size seen and how many times in a row, not in `bytes` yet: a socket
    /// stuck at its buffer's size reads or writes the same size again and again, and
    /// recording each in the histogram cost more than counting the run (docs/perf.md).
    pub(super) run: (u64, u64),
    pub(super) total: u128,
    pub(super) duration_ns: u128,
    pub(super) first_ns: Option<i64>,
    pub(super) last_ns: Option<i64>,
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
    pub(super) fn flush(&mut self) {
        if self.run.1 > 0 {
            self.bytes.record_n(self.run.0, self.run.1);
            self.run.1 = 0;
        }
    }
}

/// The two accumulators one socket event adds to (see [`Aggregator::socket_slots`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SocketSlots {
    pub(super) by_thread: usize,
    pub(super) by_address: usize,
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
pub(crate) struct ThreadSamples {
    pub(crate) total: u64,
    pub(crate) socket_read: u64,
    pub(crate) socket_write: u64,
    pub(crate) deflate: u64,
}

#[derive(Default)]
pub(super) struct GcAcc {
    pub(super) count: u64,
    pub(super) pause_ns: u128,
    pub(super) longest_ns: i64,
    pub(super) causes: BTreeMap<String, u64>,
}

#[derive(Default)]
pub(super) struct AllocAcc {
    pub(super) samples: u64,
    pub(super) weight: u128,
}

#[derive(Default)]
pub(super) struct LockAcc {
    pub(super) count: u64,
    pub(super) total_ns: u128,
    pub(super) max_ns: i64,
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
        // The address key is built in a kept buffer, not a new String per event
        // (docs/perf.md).
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_port_is_written_as_format_writes_it() {
        for n in [1u64, 9, 10, 9092, 65535, u64::MAX] {
            let mut s = String::from("10.0.0.1");
            push_decimal(&mut s, n);
            assert_eq!(s, format!("10.0.0.1:{n}"));
        }
    }
}
