//! An input that says when nothing arrives. A FIFO nobody writes to, or a pipe whose writer
//! went quiet, would otherwise leave an analyzer waiting without a word (a `timeout` was the
//! user's only way out): a watcher thread tells the user once per quiet spell, and the read
//! carries on, so a writer that comes later is still read to its end.

use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long without a byte before the user is told.
pub const QUIET_AFTER: Duration = Duration::from_secs(10);

/// Wraps a reader; a watcher thread calls `on_quiet` (once per quiet spell) when no byte has
/// come for `after`. The watcher ends when the reader is dropped or reaches its end.
pub struct Watched<R> {
    inner: R,
    origin: Instant,
    /// Milliseconds since `origin` of the last byte read (0: none yet).
    last_ms: Arc<AtomicU64>,
    done: Arc<AtomicBool>,
}

/// Watch `inner`: `on_quiet` gets the time since the last byte (or since the start).
pub fn watch<R: Read>(
    inner: R,
    after: Duration,
    on_quiet: impl Fn(Duration) + Send + 'static,
) -> Watched<R> {
    let origin = Instant::now();
    let last_ms = Arc::new(AtomicU64::new(0));
    let done = Arc::new(AtomicBool::new(false));
    let (last, stop) = (last_ms.clone(), done.clone());
    // Checked 20 times per period: told within 5% of `after`, at a negligible cost.
    let tick = (after / 20).clamp(Duration::from_millis(10), Duration::from_millis(250));
    std::thread::spawn(move || {
        let mut told = false;
        while !stop.load(Ordering::Relaxed) {
            std::thread::sleep(tick);
            let now = origin.elapsed().as_millis() as u64;
            let idle = Duration::from_millis(now.saturating_sub(last.load(Ordering::Relaxed)));
            if idle >= after {
                if !told && !stop.load(Ordering::Relaxed) {
                    on_quiet(idle);
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
        let r = self.inner.read(buf);
        match &r {
            Ok(0) => self.done.store(true, Ordering::Relaxed),
            Ok(_) => {
                let now = self.origin.elapsed().as_millis() as u64;
                self.last_ms.store(now, Ordering::Relaxed);
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            // A failed input is not waiting: the caller reports the error.
            Err(_) => self.done.store(true, Ordering::Relaxed),
        }
        r
    }
}

impl<R> Drop for Watched<R> {
    fn drop(&mut self) {
        self.done.store(true, Ordering::Relaxed);
    }
}

/// A file opened at its first read: opening a FIFO blocks until a writer comes, and that
/// wait must happen inside [`watch`] to be told.
pub struct OpenOnRead {
    path: PathBuf,
    file: Option<std::fs::File>,
}

impl OpenOnRead {
    pub fn new(path: &Path) -> Self {
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

/// What kind of file `meta` is, in the words of the note an analyzer prints before reading
/// it; `None` for a regular file (read without a note).
pub fn non_regular_kind(meta: &std::fs::Metadata) -> Option<&'static str> {
    let t = meta.file_type();
    if t.is_file() {
        return None;
    }
    if t.is_dir() {
        return Some("a directory");
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return Some("a FIFO");
        }
        if t.is_socket() {
            return Some("a socket");
        }
        if t.is_char_device() {
            return Some("a character device");
        }
        if t.is_block_device() {
            return Some("a block device");
        }
    }
    Some("not a regular file")
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
    fn a_quiet_spell_is_told_once_and_a_steady_reader_never() {
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

    #[test]
    fn an_input_that_ended_is_not_told_as_waiting() {
        let told = Arc::new(Mutex::new(0));
        let t = told.clone();
        let mut w = watch(&b"done"[..], Duration::from_millis(50), move |_| {
            *t.lock().unwrap() += 1
        });
        let mut s = String::new();
        w.read_to_string(&mut s).unwrap();
        // Kept alive past the quiet period: the end of the input stopped the watcher.
        std::thread::sleep(Duration::from_millis(200));
        assert_eq!(*told.lock().unwrap(), 0);
        drop(w);
    }

    #[cfg(unix)]
    #[test]
    fn kinds_are_named() {
        let dir = std::env::temp_dir();
        assert_eq!(
            non_regular_kind(&std::fs::metadata(&dir).unwrap()),
            Some("a directory")
        );
        assert_eq!(
            non_regular_kind(&std::fs::metadata("/dev/null").unwrap()),
            Some("a character device")
        );
        let f = dir.join(format!("kgap-watch-kind-{}", std::process::id()));
        std::fs::write(&f, b"x").unwrap();
        assert_eq!(non_regular_kind(&std::fs::metadata(&f).unwrap()), None);
        let _ = std::fs::remove_file(&f);
    }
}
