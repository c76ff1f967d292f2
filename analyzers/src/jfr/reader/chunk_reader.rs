//! Chunks from any input, one at a time: read into memory, or mapped where they lie
//! in a regular file.

use super::chunk::Chunk;
use super::header::{ChunkHeader, HEADER_SIZE, MAGIC};
use super::problem::ChunkProblem;
use crate::jfr::chunk_bytes::{read_full, read_full_at, ChunkBytes};
use std::io::{self, Read};

/// Largest chunk buffer reserved up front; a bigger header size is believed only
/// as the data actually arrives.
const MAX_RESERVE: u64 = 64 << 20;

/// Reads chunks from any input, one at a time.
pub struct ChunkReader<R> {
    input: R,
    offset: u64,
    done: bool,
    /// The bytes of the chunk read last, for the next one (see [`recycle`](Self::recycle)).
    spare: Option<ChunkBytes>,
    /// A regular file whose chunks are mapped, not read (see [`mapped`](ChunkReader::mapped)).
    file: Option<std::fs::File>,
    /// Problems that stopped the reading of the whole input.
    pub stopped: Option<String>,
}

impl ChunkReader<io::Empty> {
    /// The chunks of a regular file, each mapped where it lies instead of read into
    /// memory (see [`ChunkBytes::map`]); what is read is the same as from the file read
    /// through [`new`](ChunkReader::new).
    pub fn mapped(file: std::fs::File) -> Self {
        ChunkReader {
            file: Some(file),
            ..ChunkReader::new(io::empty())
        }
    }
}

impl<R: Read> ChunkReader<R> {
    pub fn new(input: R) -> Self {
        ChunkReader {
            input,
            offset: 0,
            done: false,
            spare: None,
            file: None,
            stopped: None,
        }
    }

    /// Give back a chunk that has been read: its memory takes the next one.
    pub fn recycle(&mut self, chunk: Chunk) {
        // A window of the file is let go now (unmapped), not kept beside the next one.
        if let ChunkBytes::Mapped { .. } = chunk.data {
            self.spare = Some(chunk.data);
        }
    }

    /// Are the chunks mapped where they lie in a file (see [`mapped`](ChunkReader::mapped))?
    pub fn is_mapped(&self) -> bool {
        self.file.is_some()
    }

    /// Bytes consumed so far.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// The next chunk, `None` at the end (or when reading stopped: see `stopped`).
    pub fn next_chunk(&mut self) -> io::Result<Option<Chunk>> {
        Ok(self.next_bytes()?.map(ChunkRead::parse))
    }

    /// The next chunk's bytes, not parsed yet (see [`ChunkRead::parse`]).
    pub fn next_bytes(&mut self) -> io::Result<Option<ChunkRead>> {
        if self.done {
            return Ok(None);
        }
        let mut hb = [0u8; HEADER_SIZE];
        let got = match &self.file {
            Some(f) => read_full_at(f, &mut hb, self.offset)?,
            None => read_full(&mut self.input, &mut hb)?,
        };
        if got == 0 {
            self.done = true;
            return Ok(None);
        }
        if got < 4 || &hb[..4] != MAGIC {
            self.done = true;
            self.stopped = Some(if self.offset == 0 {
                "not a JFR recording (no \"FLR\\0\" magic at offset 0)".to_string()
            } else {
                format!(
                    "no chunk magic at offset {}: the rest of the input was not read",
                    self.offset
                )
            });
            return Ok(None);
        }
        if got < HEADER_SIZE {
            self.done = true;
            self.stopped = Some(format!(
                "chunk header at offset {} cut short ({got} of {HEADER_SIZE} bytes)",
                self.offset
            ));
            return Ok(None);
        }
        let header = ChunkHeader::parse(&hb);
        let mut problems = Vec::new();
        if header.major > 2 {
            problems.push(ChunkProblem::NewerVersion {
                major: header.major,
                minor: header.minor,
            });
        }
        if !header.finished() {
            problems.push(ChunkProblem::Unfinished);
        }
        // A chunk still being written may not have its size yet: read to the end.
        let size_known = header.size > HEADER_SIZE as u64;
        let want = if size_known {
            header.size - HEADER_SIZE as u64
        } else {
            u64::MAX
        };
        let data = if let Some(f) = &self.file {
            ChunkBytes::map(f, self.offset, want.saturating_add(HEADER_SIZE as u64))?
        } else if want <= MAX_RESERVE {
            ChunkBytes::read(&mut self.input, &hb, want as usize, self.spare.take())?
        } else {
            // A size not known, or larger than believed before the bytes arrive.
            let mut data = Vec::with_capacity(HEADER_SIZE + want.min(MAX_RESERVE) as usize);
            data.extend_from_slice(&hb);
            (&mut self.input).take(want).read_to_end(&mut data)?;
            ChunkBytes::Heap(data)
        };
        let n = data.len().saturating_sub(HEADER_SIZE) as u64;
        let file_offset = self.offset;
        self.offset += HEADER_SIZE as u64 + n;
        if n < want {
            self.done = true;
            if size_known {
                problems.push(ChunkProblem::CutShort {
                    expected: header.size,
                    got: HEADER_SIZE as u64 + n,
                });
            }
        }
        Ok(Some(ChunkRead {
            header,
            data,
            file_offset,
            problems,
        }))
    }
}

/// A chunk's bytes as read or mapped, with the problems seen reading them.
pub struct ChunkRead {
    header: ChunkHeader,
    data: ChunkBytes,
    file_offset: u64,
    problems: Vec<ChunkProblem>,
}

impl ChunkRead {
    /// The chunk (see [`Chunk::new`]).
    pub fn parse(self) -> Chunk {
        Chunk::new(self.header, self.data, self.file_offset, self.problems)
    }
}
