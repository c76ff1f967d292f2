//! A regular file read and parsed on every core, and fed in order on the calling thread:
//! what both block front ends (the librdkafka log analyzers' and the GC analyzer's) do
//! with a plain file. Each thread reads its own chunks ([`FileChunks`], positioned reads)
//! and parses them where they were read; the calling thread also feeds the analysis, in
//! input order, and parses a chunk itself only while the next one to feed is not ready.
//!
//! Why (issue 19): on two cores the stream front end ran a reading thread, the parsers
//! and the analyzing thread, three or four threads on two cores; their hand-offs,
//! wake-ups and every byte copied into the reading core's cache for another core to
//! fetch cost more CPU than one thread doing it all (docs/perf.md). Here there are as
//! many threads as cores and each byte is parsed where it landed.
//!
//! Memory stays flat: a thread takes a spare buffer before it claims a chunk, and a
//! buffer comes back only once its chunk is fed, so however far one thread runs ahead,
//! at most `spares` chunks are read and not yet fed.

use std::collections::BTreeMap;
use std::io;
use std::sync::mpsc::{sync_channel, Receiver};
use std::sync::{Condvar, Mutex};

use crate::engine::blocks::file_chunks::{Chunk, FileChunks};
use crate::engine::blocks::line_blocks::LineBlock;

/// A block's buffer and its results' room, reused from chunk to chunk.
pub(crate) type Spare<X> = (Vec<u8>, X);

/// A chunk, ready to feed.
pub(crate) enum Fed<P> {
    /// Its whole lines, parsed, and the file offset of its first NUL byte.
    Parsed(P, Option<u64>),
    /// A chunk holding a line to cut to its head: the caller reads its lines, from
    /// `start` to [`FileChunks::line_start_from`]`(body_end)`, the way it reads a stream.
    Long { start: u64, body_end: u64 },
}

/// A chunk as a parsing thread left it.
enum Done<P> {
    Ready(Fed<P>),
    Failed(io::Error),
}

/// Read and parse the chunks of `chunks` on as many threads as `states` (this one among
/// them, with the first; at least one), and `feed` them in order on this thread. Each
/// thread parses a chunk's block with its state and `parse`; `feed` gives the spare
/// back. Returns the states, or the first error: a read that failed, or `feed`'s.
pub(crate) fn drive<X, P, W>(
    chunks: &FileChunks,
    mut states: Vec<W>,
    parse: impl Fn(&mut W, LineBlock, X) -> P + Sync,
    mut feed: impl FnMut(Fed<P>) -> io::Result<Spare<X>>,
) -> io::Result<Vec<W>>
where
    X: Default + Send,
    P: Send,
    W: Send,
{
    assert!(!states.is_empty(), "one thread at least");
    let workers = states.len();
    // Two chunks a thread and two more: one being fed, one parsed ahead of its turn.
    let pool = Pool::new(workers * 2 + 2);
    let parse = &parse;
    let mut state = states.remove(0);
    std::thread::scope(|scope| {
        let (done_tx, done_rx) = sync_channel::<(u64, Done<P>)>(workers * 2 + 2);
        let helpers: Vec<_> = states
            .into_iter()
            .map(|mut state| {
                let tx = done_tx.clone();
                let pool = &pool;
                scope.spawn(move || {
                    while let Some(spare) = pool.take() {
                        let Some(seq) = chunks.claim() else {
                            break;
                        };
                        let done = read_and_parse(chunks, seq, spare, &mut state, parse);
                        if tx.send((seq, done)).is_err() {
                            break;
                        }
                    }
                    state
                })
            })
            .collect();
        drop(done_tx);
        let fed = {
            // However this thread leaves, helpers waiting for a spare stop.
            let _close = CloseOnDrop(&pool);
            feed_in_order(chunks, done_rx, &pool, &mut state, parse, &mut feed)
        };
        let mut states = vec![state];
        for h in helpers {
            states.push(h.join().expect("a parsing thread does not panic"));
        }
        fed.map(|()| states)
    })
}

/// Chunk `seq` read into a spare and parsed.
fn read_and_parse<X, P, W>(
    chunks: &FileChunks,
    seq: u64,
    (buf, room): Spare<X>,
    state: &mut W,
    parse: &impl Fn(&mut W, LineBlock, X) -> P,
) -> Done<P> {
    match chunks.read(seq, buf) {
        Ok(Chunk::Lines { block, first_nul }) => {
            Done::Ready(Fed::Parsed(parse(state, block, room), first_nul))
        }
        Ok(Chunk::Long { start, body_end }) => Done::Ready(Fed::Long { start, body_end }),
        Err(e) => Done::Failed(e),
    }
}

/// The calling thread: feed the chunks in order as they are ready; while the next one is
/// not, read and parse one here (when one is left and a spare is free), else wait for a
/// helper's.
fn feed_in_order<X: Default, P, W>(
    chunks: &FileChunks,
    rx: Receiver<(u64, Done<P>)>,
    pool: &Pool<X>,
    state: &mut W,
    parse: &impl Fn(&mut W, LineBlock, X) -> P,
    feed: &mut impl FnMut(Fed<P>) -> io::Result<Spare<X>>,
) -> io::Result<()> {
    let mut pending: BTreeMap<u64, Done<P>> = BTreeMap::new();
    let count = chunks.count();
    let mut next = 0u64;
    let mut claimed_all = false;
    while next < count {
        while let Ok((seq, d)) = rx.try_recv() {
            pending.insert(seq, d);
        }
        if let Some(d) = pending.remove(&next) {
            next += 1;
            match d {
                Done::Ready(fed) => pool.give(feed(fed)?),
                Done::Failed(e) => return Err(e),
            }
            continue;
        }
        if !claimed_all {
            if let Some(spare) = pool.try_take() {
                match chunks.claim() {
                    Some(seq) => {
                        pending.insert(seq, read_and_parse(chunks, seq, spare, state, parse));
                        continue;
                    }
                    None => {
                        claimed_all = true;
                        pool.give(spare);
                    }
                }
            }
        }
        match rx.recv() {
            Ok((seq, d)) => {
                pending.insert(seq, d);
            }
            // The next chunk is claimed (all before the unclaimed ones are) and not here:
            // a helper held it and stopped without sending it, which only a panic does.
            Err(_) => {
                return Err(io::Error::other("a parsing thread stopped mid-chunk"));
            }
        }
    }
    Ok(())
}

/// The spare buffers. A helper waits for one; the calling thread never does (while none
/// is free it has chunks to feed or to wait for).
struct Pool<X> {
    /// The spares, and whether the pool is closed.
    spares: Mutex<(Vec<Spare<X>>, bool)>,
    freed: Condvar,
}

impl<X: Default> Pool<X> {
    fn new(n: usize) -> Self {
        Pool {
            spares: Mutex::new(((0..n).map(|_| Default::default()).collect(), false)),
            freed: Condvar::new(),
        }
    }
}

impl<X> Pool<X> {
    fn lock(&self) -> std::sync::MutexGuard<'_, (Vec<Spare<X>>, bool)> {
        self.spares
            .lock()
            .expect("no thread panics holding the pool")
    }

    /// A spare, waiting for one; `None` once the pool is closed.
    fn take(&self) -> Option<Spare<X>> {
        let mut g = self.lock();
        loop {
            if g.1 {
                return None;
            }
            if let Some(s) = g.0.pop() {
                return Some(s);
            }
            g = self
                .freed
                .wait(g)
                .expect("no thread panics holding the pool");
        }
    }

    /// A spare, if one is free now.
    fn try_take(&self) -> Option<Spare<X>> {
        self.lock().0.pop()
    }

    fn give(&self, s: Spare<X>) {
        self.lock().0.push(s);
        self.freed.notify_one();
    }

    /// No more spares: waiting helpers stop.
    fn close(&self) {
        self.lock().1 = true;
        self.freed.notify_all();
    }
}

/// Closes the pool when dropped.
struct CloseOnDrop<'a, X>(&'a Pool<X>);

impl<X> Drop for CloseOnDrop<'_, X> {
    fn drop(&mut self) {
        self.0.close();
    }
}
