//! What stopped the reading of a chunk, or could not be read in it, as the report
//! names it.

/// Why reading stopped early, or what could not be read. The report names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChunkProblem {
    /// The chunk header says N bytes but the input ended after M.
    CutShort { expected: u64, got: u64 },
    /// An event's size or contents did not fit: reading of the chunk stopped here.
    Corrupt { offset: u64, reason: String },
    /// No metadata event in the readable part of the chunk: events are counted by
    /// type id only.
    NoMetadata,
    /// A checkpoint could not be decoded whole (its later pools are missing).
    BadCheckpoint { offset: u64, reason: String },
    /// The header says the writer was still on this chunk.
    Unfinished,
    /// A version this reader was not written for (read as 2.x anyway).
    NewerVersion { major: u16, minor: u16 },
}

impl std::fmt::Display for ChunkProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ChunkProblem::CutShort { expected, got } => write!(
                f,
                "chunk cut short: header says {expected} bytes, input has {got} \
                 (a crashed JVM or a copy taken while recording); read up to the last complete event"
            ),
            ChunkProblem::Corrupt { offset, reason } => {
                write!(f, "unreadable data at chunk offset {offset}: {reason}; rest of chunk skipped")
            }
            ChunkProblem::NoMetadata => write!(
                f,
                "no metadata event in the readable part of the chunk: events counted by type id only"
            ),
            ChunkProblem::BadCheckpoint { offset, reason } => write!(
                f,
                "constant pool at chunk offset {offset} not read whole ({reason}): some names are missing"
            ),
            ChunkProblem::Unfinished => write!(
                f,
                "chunk still being written when copied (header file state not 0)"
            ),
            ChunkProblem::NewerVersion { major, minor } => write!(
                f,
                "JFR format {major}.{minor} is newer than this reader knows (1.x, 2.x): read as 2.x"
            ),
        }
    }
}
