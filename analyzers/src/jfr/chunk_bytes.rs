//! The memory a chunk is read into.
//!
//! A chunk is read whole (its metadata and constant pools come last, and the events
//! before them need both), and a chunk is megabytes: a fresh heap buffer for each was
//! a page fault, zeroed by the kernel, every 4 KiB (~2,000 a chunk of 8 MB, a tenth of
//! the run). The bytes go instead into an anonymous mapping with transparent huge pages
//! asked for (2 MiB a fault where the kernel grants them), and the mapping is kept for
//! the next chunk of the input. Memory stays one chunk.

use std::io::{self, Read};
use std::ops::Deref;

use memmap2::{Advice, MmapMut};

/// A chunk's bytes: in a kept mapping, or on the heap when the size was not known up
/// front (a chunk still being written, read to the end of the input).
pub enum ChunkBytes {
    Heap(Vec<u8>),
    Mapped { map: MmapMut, len: usize },
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
}
