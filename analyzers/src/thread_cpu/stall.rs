//! A reader that says when nothing arrives: `--from` on a FIFO or a pipe that nobody writes
//! to would otherwise wait without a word.

use std::io::{self, Read};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long without a byte before the first word.
pub const STALL_AFTER: Duration = Duration::from_secs(10);

/// Wraps a reader; a watcher thread calls `on_stall` (once per stall) when no byte has come
/// for `after`. The watcher ends when the reader is dropped or reaches its end.
pub struct Watched<R> {
    inner: R,
    origin: Instant,
    last_ms: Arc<AtomicU64>,
    done: Arc<AtomicBool>,
}

/// Watch `inner`: `on_stall` gets the time since the last byte (or since the start).
pub fn watch<R: Read>(
    inner: R,
    after: Duration,
    on_stall: impl Fn(Duration) + Send + 'static,
) -> Watched<R> {
    let origin = Instant::now();
    let last_ms = Arc::new(AtomicU64::new(0));
    let done = Arc::new(AtomicBool::new(false));
    let (last, stop) = (last_ms.clone(), done.clone());
    let tick = (after / 20).clamp(Duration::from_millis(10), Duration::from_millis(250));
    std::thread::spawn(move || {
        let mut told = false;
        while !stop.load(Ordering::Relaxed) {
            std::thread::sleep(tick);
            let now = origin.elapsed().as_millis() as u64;
            let idle = Duration::from_millis(now.saturating_sub(last.load(Ordering::Relaxed)));
            if idle >= after {
                if !told && !stop.load(Ordering::Relaxed) {
                    on_stall(idle);
                    told = true;
                }
            } else {
                told = false;
            }
        }
    });
    Watched {
        inner,
        origin,
        last_ms,
        done,
    }
}

impl<R: Read> Read for Watched<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        if n == 0 {
            self.done.store(true, Ordering::Relaxed);
        } else {
            let now = self.origin.elapsed().as_millis() as u64;
            self.last_ms.store(now, Ordering::Relaxed);
        }
        Ok(n)
    }
}

/// A file opened at its first read: opening a FIFO blocks until a writer comes, and that wait
/// must be inside [`watch`] to be told.
pub struct OpenOnRead {
    path: std::path::PathBuf,
    file: Option<std::fs::File>,
}

impl OpenOnRead {
    pub fn new(path: &std::path::Path) -> Self {
        OpenOnRead {
            path: path.to_path_buf(),
            file: None,
        }
    }
}

impl Read for OpenOnRead {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.file.is_none() {
            self.file = Some(std::fs::File::open(&self.path)?);
        }
        self.file.as_mut().expect("opened").read(buf)
    }
}

impl<R> Drop for Watched<R> {
    fn drop(&mut self) {
        self.done.store(true, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// A reader that waits before each of its chunks.
    struct Slow(Vec<(Duration, &'static [u8])>);

    impl Read for Slow {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            if self.0.is_empty() {
                return Ok(0);
            }
            let (wait, bytes) = self.0.remove(0);
            std::thread::sleep(wait);
            buf[..bytes.len()].copy_from_slice(bytes);
            Ok(bytes.len())
        }
    }

    #[test]
    fn a_stall_is_told_once_and_a_steady_reader_never() {
        let told = Arc::new(Mutex::new(Vec::new()));
        let t = told.clone();
        let slow = Slow(vec![
            (Duration::from_millis(400), b"a"),
            (Duration::ZERO, b"b"),
        ]);
        let mut w = watch(slow, Duration::from_millis(150), move |d| {
            t.lock().unwrap().push(d)
        });
        let mut s = String::new();
        w.read_to_string(&mut s).unwrap();
        assert_eq!(s, "ab");
        std::thread::sleep(Duration::from_millis(100));
        let told = told.lock().unwrap();
        assert_eq!(told.len(), 1, "{told:?}");
        assert!(told[0] >= Duration::from_millis(150));

        let quiet = Arc::new(Mutex::new(0));
        let q = quiet.clone();
        let steady = Slow(
            (0..5)
                .map(|_| (Duration::from_millis(20), &b"x"[..]))
                .collect(),
        );
        let mut w = watch(steady, Duration::from_millis(150), move |_| {
            *q.lock().unwrap() += 1
        });
        let mut s = String::new();
        w.read_to_string(&mut s).unwrap();
        assert_eq!(*quiet.lock().unwrap(), 0);
    }
}
