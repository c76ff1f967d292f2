//! From binary chunks to observations: counts every event, decodes only the
//! event types the report uses, and turns stack traces into frame names once
//! per chunk (samples are counted by stack key and merged at the chunk's end).

use crate::engine::fast_hash::FastMap;
use std::rc::Rc;

use super::analysis::{frame_name, Aggregator, Jvm, SocketOp, SocketSlots};
use super::chunk_part::{self, Part, Readers, TypeSlot, TypeTable};
use super::handler::{handler, Handler};
use super::reader::{Chunk, Class, Decoder, EventPos, Lite, Value, CHECKPOINT_TYPE, METADATA_TYPE};
use super::socket_fields::{lite_i64, lite_str, socket_event, SocketFields, SOCKET_SLOTS};
use super::socket_memo::{SocketKey, SocketMemo};

/// Per-chunk caches: constant-pool keys → names, computed once.
struct Names<'c> {
    chunk: &'c Chunk,
    threads: FastMap<i64, Rc<str>>,
    classes: FastMap<i64, Rc<str>>,
    unknown: Rc<str>,
}

impl<'c> Names<'c> {
    fn new(chunk: &'c Chunk) -> Self {
        Names {
            chunk,
            threads: FastMap::default(),
            classes: FastMap::default(),
            unknown: Rc::from("?"),
        }
    }

    fn thread(&mut self, v: &Value) -> Rc<str> {
        let key = match v {
            Value::Ref(_, k) => *k,
            _ => return self.thread_name(v),
        };
        if let Some(n) = self.threads.get(&key) {
            return n.clone();
        }
        let n = self.thread_name(v);
        self.threads.insert(key, n.clone());
        n
    }

    fn thread_name(&self, v: &Value) -> Rc<str> {
        let c = self.chunk;
        let name = c
            .str(c.get(v, "javaName"))
            .filter(|s| !s.is_empty())
            .or_else(|| c.str(c.get(v, "osName")));
        name.map(Rc::from).unwrap_or_else(|| self.unknown.clone())
    }

    fn class(&mut self, v: &Value) -> Rc<str> {
        let key = match v {
            Value::Ref(_, k) => *k,
            _ => return self.class_name(v),
        };
        if let Some(n) = self.classes.get(&key) {
            return n.clone();
        }
        let n = self.class_name(v);
        self.classes.insert(key, n.clone());
        n
    }

    fn class_name(&self, v: &Value) -> Rc<str> {
        let c = self.chunk;
        match c.str(c.get(v, "name")) {
            Some(n) => Rc::from(n.replace('/', ".")),
            None => self.unknown.clone(),
        }
    }

    fn frames(&mut self, stack: &Value) -> Vec<Rc<str>> {
        let c = self.chunk;
        let Value::Array(frames) = c.get(stack, "frames") else {
            return Vec::new();
        };
        let mut out = Vec::with_capacity(frames.len());
        for f in frames {
            let method = c.get(f, "method");
            let mname = c.str(c.get(method, "name")).unwrap_or("?");
            let class = c.get(method, "type");
            let cname = match class {
                Value::Null => None,
                _ => Some(self.class(class)),
            };
            out.push(frame_name(cname.as_deref().filter(|s| *s != "?"), mname));
        }
        out
    }
}

/// How [`feed`] reads a chunk.
#[derive(Clone, Copy)]
struct Mode {
    /// Socket events read in place; false decodes them the full way too (the reference
    /// the in-place reading is tested against).
    fast: bool,
    /// A chunk with this many bytes of events or more is read in two parts, the later
    /// on a second core (see [`chunk_part`]).
    split_bytes: usize,
    /// The share of a split chunk's event bytes read by the first core.
    first_share: f64,
    /// Events counted in parts (see [`chunk_part`]); false reads them one by one into
    /// the report (what a part that gave up does).
    in_parts: bool,
}

/// Below this, a second thread costs more than it saves.
const SPLIT_BYTES: usize = 1 << 20;

/// The share of a split chunk's event bytes read by the first core: both read their part
/// the same way; the merge after is short.
const FIRST_SHARE: f64 = 0.5;

/// Feed one chunk's events into `agg`; returns how many of the events the report
/// reads did not decode (counted, not analysed).
pub(crate) fn feed_chunk(chunk: &Chunk, agg: &mut Aggregator) -> u64 {
    let split_bytes = if crate::engine::cores::available() > 1 {
        SPLIT_BYTES
    } else {
        usize::MAX
    };
    feed(
        chunk,
        agg,
        Mode {
            fast: true,
            split_bytes,
            first_share: FIRST_SHARE,
            in_parts: true,
        },
    )
}

fn feed(chunk: &Chunk, agg: &mut Aggregator, mode: Mode) -> u64 {
    let h = &chunk.header;
    agg.span(
        h.start_nanos,
        h.start_nanos.saturating_add(h.duration_nanos.max(0)),
    );
    let md = &chunk.metadata;
    for class in md.classes.values().filter(|c| c.is_event()) {
        agg.declare(&class.name);
    }
    let dec = Decoder { md };
    let mut handlers: FastMap<i64, (Handler, &Class)> = FastMap::default();
    let mut socket_fields: FastMap<i64, SocketFields> = FastMap::default();
    for class in md.classes.values() {
        if let Some(hd) = handler(&class.name) {
            handlers.insert(class.id, (hd, class));
            if let Handler::Socket(op) = hd {
                socket_fields.insert(
                    class.id,
                    SocketFields::of(class, op, &dec, h.compressed_ints()),
                );
            }
        }
    }
    let (first, end) = chunk.events_span();
    let cut = (mode.in_parts && end - first >= mode.split_bytes)
        .then(|| chunk.event_near(first + ((end - first) as f64 * mode.first_share) as usize));
    let readers = Readers {
        chunk,
        dec: &dec,
        handlers: &handlers,
        sockets: &socket_fields,
    };
    let mut reader = ChunkFeed {
        r: readers,
        fast: mode.fast,
        names: Names::new(chunk),
        memo: SocketMemo::default(),
        types: TypeTable::default(),
        sample_counts: FastMap::default(),
        undecoded: 0,
    };
    if !mode.in_parts {
        reader.merge(agg, None, first, end);
        return reader.finish(agg);
    }
    std::thread::scope(|s| {
        // The later part on the other core, when the chunk is large enough to gain.
        let later =
            cut.map(|c| s.spawn(move || chunk_part::read(readers, chunk.events_between(c, end))));
        let first_end = cut.unwrap_or(end);
        let part = chunk_part::read(readers, chunk.events_between(first, first_end));
        reader.merge(agg, part, first, first_end);
        if let (Some(c), Some(later)) = (cut, later) {
            // A part whose thread failed is read again here, as one that gave up is.
            reader.merge(agg, later.join().ok().flatten(), c, end);
        }
    });
    reader.finish(agg)
}

/// One chunk being read: its per-type counts, name caches and sample counts.
struct ChunkFeed<'a, 'c> {
    r: Readers<'a, 'c>,
    fast: bool,
    names: Names<'c>,
    memo: SocketMemo<'c>,
    types: TypeTable<'a, 'c>,
    sample_counts: FastMap<(i64, i64), u64>,
    undecoded: u64,
}

impl<'a, 'c> ChunkFeed<'a, 'c> {
    /// One event: counted, and read when the report reads its type.
    #[inline]
    fn event(&mut self, agg: &mut Aggregator, ev: EventPos) {
        let slot = self.types.slot(ev.type_id, &self.r);
        slot.count += 1;
        slot.bytes += ev.size as u64;
        if let Some((hd, class)) = slot.handler {
            let socket = slot.socket;
            self.read(agg, ev, hd, class, socket);
        }
    }

    /// A part of the chunk's events, from `from` to `to`, read apart (see
    /// [`chunk_part`]); read here one by one when it was not (`None`).
    fn merge(&mut self, agg: &mut Aggregator, part: Option<Part<'a, 'c>>, from: usize, to: usize) {
        let Some(part) = part else {
            for ev in self.r.chunk.events_between(from, to) {
                self.event(agg, ev);
            }
            return;
        };
        for t in part.types.slots {
            let slot = self.types.slot(t.id, &self.r);
            slot.count += t.count;
            slot.bytes += t.bytes;
        }
        for (key, mut acc) in part.sockets {
            let slots = self.socket_slots(agg, &key);
            agg.socket_merge(slots, &mut acc);
        }
        for ev in part.others {
            if let Some(&(hd, class)) = self.r.handlers.get(&ev.type_id) {
                let socket = self.r.sockets.get(&ev.type_id);
                self.read(agg, ev, hd, class, socket);
            }
        }
    }

    /// The accumulators of a socket event's key.
    fn socket_slots(&mut self, agg: &mut Aggregator, key: &SocketKey<'c>) -> SocketSlots {
        if let Some(s) = self.memo.get(key) {
            return s;
        }
        let chunk = self.r.chunk;
        let t = self.names.thread(&key.thread.value());
        let addr = lite_str(chunk, key.address).unwrap_or("");
        let host = lite_str(chunk, key.host).unwrap_or("");
        let shown = if addr.is_empty() { host } else { addr };
        let s = agg.socket_slots(key.op, &t, shown, lite_i64(chunk, key.port).unwrap_or(0));
        self.memo.put(*key, s);
        s
    }

    /// An event of a type the report reads.
    fn read(
        &mut self,
        agg: &mut Aggregator,
        ev: EventPos,
        hd: Handler,
        class: &Class,
        socket: Option<&SocketFields>,
    ) {
        let chunk = self.r.chunk;
        let dec = self.r.dec;
        let h = &chunk.header;
        if let (Handler::Socket(op), Some(sf), true) = (hd, socket, self.fast) {
            // Nearly every event of a socket recording: its fields read in place,
            // nothing allocated; the full decoding below only when a field is not
            // one that reads so (an inline object, a string not in UTF-8).
            // Only the fields the report reads are read; a field the class lacks reads
            // as null, as it does on the full path.
            let mut lite = [Lite::Null; SOCKET_SLOTS];
            let mut cur = chunk.cursor(&ev);
            if dec.event_pick(&mut cur, class, &sf.plan, &mut lite).is_ok() {
                if let Some((key, bytes, start, dur)) = socket_event(chunk, op, &lite) {
                    let slots = self.socket_slots(agg, &key);
                    agg.socket_at(slots, bytes, start, dur);
                    return;
                }
            }
        }
        let mut cur = chunk.cursor(&ev);
        // An event that does not decode is still counted; its values are skipped.
        let Ok(fields) = dec.event(&mut cur, class) else {
            self.undecoded += 1;
            return;
        };
        let f = |name: &str| -> &Value {
            class
                .field(name)
                .and_then(|i| fields.get(i))
                .map(|v| chunk.resolve(v))
                .unwrap_or(&Value::Null)
        };
        let raw = |name: &str| -> &Value {
            class
                .field(name)
                .and_then(|i| fields.get(i))
                .unwrap_or(&Value::Null)
        };
        let names = &mut self.names;
        match hd {
            Handler::ThreadCpu => {
                let t = names.thread(raw("eventThread"));
                agg.thread_cpu(
                    &t,
                    f("user").as_f64().unwrap_or(0.0),
                    f("system").as_f64().unwrap_or(0.0),
                );
            }
            Handler::Socket(op) => {
                let t = names.thread(raw("eventThread"));
                let bytes = f(match op {
                    SocketOp::Read => "bytesRead",
                    SocketOp::Write => "bytesWritten",
                })
                .as_i64()
                .unwrap_or(0);
                let start = f("startTime")
                    .as_i64()
                    .map(|t| h.ticks_to_nanos(t))
                    .unwrap_or(h.start_nanos);
                let dur = f("duration")
                    .as_i64()
                    .map(|d| h.ticks_to_duration(d))
                    .unwrap_or(0);
                let addr = chunk.str(f("address")).unwrap_or("");
                let host = chunk.str(f("host")).unwrap_or("");
                let shown = if addr.is_empty() { host } else { addr };
                agg.socket(
                    op,
                    &t,
                    shown,
                    f("port").as_i64().unwrap_or(0),
                    bytes,
                    start,
                    dur,
                );
            }
            Handler::Sample => {
                let thread_key = match raw("sampledThread") {
                    Value::Ref(_, k) => *k,
                    _ => i64::MIN,
                };
                let stack_key = match raw("stackTrace") {
                    Value::Ref(_, k) => *k,
                    _ => i64::MIN,
                };
                *self
                    .sample_counts
                    .entry((thread_key, stack_key))
                    .or_default() += 1;
            }
            Handler::Gc => {
                let name = chunk.str(f("name")).unwrap_or("?").to_string();
                let cause = chunk.str(f("cause")).unwrap_or("?").to_string();
                let sum = f("sumOfPauses")
                    .as_i64()
                    .map(|d| h.ticks_to_duration(d))
                    .unwrap_or(0);
                let longest = f("longestPause")
                    .as_i64()
                    .map(|d| h.ticks_to_duration(d))
                    .unwrap_or(0);
                agg.gc(&name, &cause, sum, longest);
            }
            Handler::HeapSummary => {
                let when = f("when");
                let when = chunk
                    .str(when)
                    .or_else(|| chunk.str(chunk.get(when, "when")));
                if when == Some("After GC") {
                    let committed = chunk
                        .get(f("heapSpace"), "committedSize")
                        .as_i64()
                        .unwrap_or(0);
                    agg.heap_after_gc(f("heapUsed").as_i64().unwrap_or(0), committed);
                }
            }
            Handler::AllocSample | Handler::AllocTlab | Handler::AllocOutsideTlab => {
                let class = names.class(raw("objectClass"));
                let (source, weight) = match hd {
                    Handler::AllocSample => ("jdk.ObjectAllocationSample", f("weight")),
                    Handler::AllocTlab => ("jdk.ObjectAllocationInNewTLAB", f("tlabSize")),
                    _ => ("jdk.ObjectAllocationOutsideTLAB", f("allocationSize")),
                };
                agg.alloc(source, &class, weight.as_i64().unwrap_or(0));
            }
            Handler::MonitorEnter => {
                let class = names.class(raw("monitorClass"));
                let dur = f("duration")
                    .as_i64()
                    .map(|d| h.ticks_to_duration(d))
                    .unwrap_or(0);
                agg.monitor_enter(&class, dur);
            }
            Handler::JvmInfo => {
                let s = |n: &str| chunk.str(f(n)).unwrap_or("").to_string();
                agg.jvm = Some(Jvm {
                    name: s("jvmName"),
                    version: s("jvmVersion"),
                    arguments: s("jvmArguments"),
                    java_arguments: s("javaArguments"),
                });
            }
            Handler::CpuInfo => {
                if let Some(n) = f("hwThreads").as_i64().filter(|n| *n > 0) {
                    agg.hw_threads = Some(n as u64);
                }
            }
        }
    }

    /// The chunk's samples and event counts, into `agg`; how many events did not decode.
    fn finish(self, agg: &mut Aggregator) -> u64 {
        let ChunkFeed {
            r,
            mut names,
            sample_counts,
            types,
            undecoded,
            ..
        } = self;
        let md = &r.chunk.metadata;
        // Samples: decode each distinct stack once.
        let stack_class = md.by_name("jdk.types.StackTrace").map(|c| c.id);
        let thread_class = md.by_name("java.lang.Thread").map(|c| c.id);
        let mut stacks: FastMap<i64, Vec<Rc<str>>> = FastMap::default();
        let mut keys: Vec<_> = sample_counts.into_iter().collect();
        keys.sort_unstable();
        for ((tk, sk), n) in keys {
            let thread = match thread_class {
                Some(tc) if tk != i64::MIN => names.thread(&Value::Ref(tc, tk)),
                _ => Rc::from("?"),
            };
            let frames = stacks.entry(sk).or_insert_with(|| match stack_class {
                Some(sc) if sk != i64::MIN => names.frames(&Value::Ref(sc, sk)),
                _ => Vec::new(),
            });
            agg.samples(&thread, frames, n);
        }
        for TypeSlot {
            id,
            count: n,
            bytes,
            ..
        } in types.slots
        {
            let name = match id {
                METADATA_TYPE => "jdk.Metadata".to_string(),
                CHECKPOINT_TYPE => "jdk.CheckPoint".to_string(),
                _ => match md.classes.get(&id) {
                    Some(c) => c.name.to_string(),
                    None => format!("unknown type id {id}"),
                },
            };
            agg.count(&name, n, bytes);
        }
        undecoded
    }
}

#[cfg(test)]
mod tests {
    use super::super::analysis::{InputInfo, ReportOptions};
    use super::super::reader::ChunkReader;
    use super::*;
    use std::path::{Path, PathBuf};

    /// The report of `path` read as `mode` says.
    fn report(path: &Path, mode: Mode) -> String {
        let mut chunks = ChunkReader::new(std::fs::File::open(path).unwrap());
        let mut agg = Aggregator::default();
        let mut undecoded = 0;
        while let Some(chunk) = chunks.next_chunk().unwrap() {
            undecoded += feed(&chunk, &mut agg, mode);
            chunks.recycle(chunk);
        }
        let r = agg.finish(InputInfo::default(), &ReportOptions::default());
        format!("{undecoded} {}", serde_json::to_string(&r).unwrap())
    }

    /// Every recording of the fixtures and of the shared corpus.
    fn all_recordings() -> Vec<PathBuf> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let mut files = Vec::new();
        recordings(&root.join("fixtures/jfr"), &mut files);
        let corpus = std::env::var_os("KGAP_CORPUS")
            .map(PathBuf::from)
            .unwrap_or_else(|| root.join("../shared/corpus"));
        recordings(&corpus.join("jfr"), &mut files);
        assert!(files.len() >= 4, "fixtures not found: {files:?}");
        files
    }

    fn recordings(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries {
            let p = e.unwrap().path();
            if p.is_dir() {
                recordings(&p, out);
            } else if p.extension().is_some_and(|x| x == "jfr") {
                out.push(p);
            }
        }
    }

    #[test]
    fn socket_events_read_in_place_report_what_full_decoding_reports() {
        let files = all_recordings();
        let mut with_sockets = 0;
        for f in &files {
            let (fast, full) = (report(f, FAST), report(f, FULL));
            assert_eq!(fast, full, "{}", f.display());
            with_sockets += fast.contains("\"bytes_p50\"") as usize;
        }
        assert!(with_sockets >= 4, "too few recordings with socket events");
    }

    /// One core, socket events decoded whole: the reference.
    const FULL: Mode = Mode {
        fast: false,
        split_bytes: usize::MAX,
        first_share: FIRST_SHARE,
        in_parts: false,
    };
    /// One core, socket events read in place, one by one into the report.
    const FAST: Mode = Mode {
        fast: true,
        split_bytes: usize::MAX,
        first_share: FIRST_SHARE,
        in_parts: false,
    };

    #[test]
    fn a_chunk_read_on_two_cores_reports_what_one_core_reports() {
        let files = all_recordings();
        for f in &files {
            let one = report(f, FAST);
            let one_part = Mode {
                in_parts: true,
                ..FAST
            };
            assert_eq!(one, report(f, one_part), "{} in one part", f.display());
            // Every chunk split, at its first event, last byte and between.
            for first_share in [0.0, 0.1, 0.45, 0.5, 0.9, 1.0] {
                let two = report(
                    f,
                    Mode {
                        fast: true,
                        split_bytes: 0,
                        first_share,
                        in_parts: true,
                    },
                );
                assert_eq!(one, two, "{} split at {first_share}", f.display());
            }
        }
    }
}
