//! The memory a chunk is read into.
//!
//! A chunk is read whole (its metadata and constant pools come last, and the events
//! before them need both), and a chunk is megabytes: a fresh heap buffer for each was
//! a page fault, zeroed by the kernel, every 4 KiB (~2,000 a chunk of 8 MB, a tenth of
//! the run). A regular file's chunk is mapped where it lies ([`ChunkBytes::map`]): the
//! page cache's own pages, nothing zeroed or copied. Other input (a pipe) goes into an
//! anonymous mapping with transparent huge pages asked for (2 MiB a fault where the kernel
//! grants them), kept for the next chunk. Memory stays one chunk either way.

use std::fs::File;
use std::io::{self, Read};
use std::ops::Deref;

use memmap2::{Advice, Mmap, MmapMut, MmapOptions};

/// A chunk's bytes: in a kept mapping, or on the heap when the size was not known up
/// front (a chunk still being written, read to the end of the input).
pub enum ChunkBytes {
    Heap(Vec<u8>),
    Mapped {
        map: MmapMut,
        len: usize,
    },
    /// A window of the file itself.
    File(Mmap),
}

impl Default for ChunkBytes {
    fn default() -> Self {
        ChunkBytes::Heap(Vec::new())
    }
}

impl Deref for ChunkBytes {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            ChunkBytes::Heap(v) => v,
            ChunkBytes::Mapped { map, len } => &map[..*len],
            ChunkBytes::File(map) => map,
        }
    }
}

impl ChunkBytes {
    /// `head` then up to `want` bytes of `input` (fewer where it ends), in `spare`'s
    /// mapping when it is large enough, else in a new one.
    pub fn read<R: Read>(
        input: &mut R,
        head: &[u8],
        want: usize,
        spare: Option<ChunkBytes>,
    ) -> io::Result<ChunkBytes> {
        let size = head.len() + want;
        let mut map = match spare {
            Some(ChunkBytes::Mapped { map, .. }) if map.len() >= size => map,
            _ => {
                let map = MmapMut::map_anon(size)?;
                // Only a hint: without huge pages the mapping works the same.
                let _ = map.advise(Advice::HugePage);
                map
            }
        };
        map[..head.len()].copy_from_slice(head);
        let n = read_full(input, &mut map[head.len()..size])?;
        Ok(ChunkBytes::Mapped {
            map,
            len: head.len() + n,
        })
    }
}

impl ChunkBytes {
    /// Up to `want` bytes of `file` from `offset` (fewer where the file ends now), mapped
    /// read-only where they lie. Empty past the end.
    pub fn map(file: &File, offset: u64, want: u64) -> io::Result<ChunkBytes> {
        let len = want.min(file.metadata()?.len().saturating_sub(offset));
        if len == 0 {
            return Ok(ChunkBytes::Heap(Vec::new()));
        }
        let len = usize::try_from(len).map_err(|_| io::Error::other("chunk larger than memory"))?;
        // SAFETY: the mapping is read-only and only this reader holds it, and `len` stops at
        // the file's present end. What mmap cannot rule out is another process truncating
        // the file while it is mapped: reading the lost pages then raises SIGBUS, which ends
        // the process (no wrong report). JVMs only append to a recording or write a new one
        // (a dump goes to a new file), so a reader of a finished recording does not meet it.
        let map = unsafe {
            MmapOptions::new()
                .offset(offset)
                .len(len)
                .populate()
                .map(file)?
        };
        Ok(ChunkBytes::File(map))
    }
}

/// Read at `offset` into `buf` as far as the file goes, without moving its cursor.
pub fn read_full_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    use std::os::unix::fs::FileExt;
    let mut n = 0;
    while n < buf.len() {
        match file.read_at(&mut buf[n..], offset + n as u64) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// Fill `buf` as far as the input goes; returns the bytes read.
pub fn read_full<R: Read>(r: &mut R, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_head_then_what_the_input_has_and_reuses_a_large_enough_mapping() {
        let input: Vec<u8> = (0..100u8).collect();
        let b = ChunkBytes::read(&mut &input[..], b"HEAD", 10, None).unwrap();
        assert_eq!(&b[..], &[b"HEAD".as_slice(), &input[..10]].concat()[..]);
        // The input ends before `want`: what is there.
        let b = ChunkBytes::read(&mut &input[90..], b"H", 50, Some(b)).unwrap();
        assert_eq!(&b[..], &[b"H".as_slice(), &input[90..]].concat()[..]);
        let ChunkBytes::Mapped { map, .. } = &b else {
            panic!("not mapped")
        };
        assert_eq!(
            map.len(),
            51,
            "a new mapping when the spare one is too small"
        );
        let b = ChunkBytes::read(&mut &input[..], b"", 3, Some(b)).unwrap();
        assert_eq!(&b[..], &input[..3]);
        let ChunkBytes::Mapped { map, .. } = &b else {
            panic!("not mapped")
        };
        assert_eq!(map.len(), 51, "the spare mapping reused");
    }

    #[test]
    fn a_file_window_is_what_the_file_has_there() {
        let path = std::env::temp_dir().join(format!("kgap-chunk-bytes-{}", std::process::id()));
        let content: Vec<u8> = (0..10_000u32).map(|i| (i * 7) as u8).collect();
        std::fs::write(&path, &content).unwrap();
        let f = File::open(&path).unwrap();
        // An offset off the page size, a window cut by the end of the file, one past it.
        let b = ChunkBytes::map(&f, 4099, 100).unwrap();
        assert_eq!(&b[..], &content[4099..4199]);
        let b = ChunkBytes::map(&f, 9_990, 100).unwrap();
        assert_eq!(&b[..], &content[9_990..]);
        let b = ChunkBytes::map(&f, 20_000, 100).unwrap();
        assert!(b.is_empty());
        let mut head = [0u8; 8];
        assert_eq!(read_full_at(&f, &mut head, 9_996).unwrap(), 4);
        assert_eq!(&head[..4], &content[9_996..]);
        std::fs::remove_file(&path).unwrap();
    }
}
