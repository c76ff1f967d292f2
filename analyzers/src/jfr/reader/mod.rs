//! The JFR binary format, read natively: chunk headers, compressed integers,
//! metadata, constant pools and events, one chunk in memory at a time.
//!
//! A recording is a sequence of chunks. Each chunk opens with a 68-byte header
//! (`FLR\0`, version, sizes, times) followed by events. Every event starts with
//! its size and type id; type 0 is the metadata (the classes and their fields, as
//! an element tree over a string table) and type 1 a checkpoint (constant pools:
//! threads, stack traces, methods, classes, symbols …, referred to by key from
//! the events). Integers are LEB128-like varints when the header's flag byte says
//! so (every 2.x writer does), raw big-endian otherwise (the 1.x layout).
//!
//! The reader never trusts a size or an offset: every read is bounds-checked, a
//! chunk cut short is read up to its last complete event, and what stopped the
//! reading is returned as a [`ChunkProblem`] for the report. Header offsets are not
//! needed: the chunk is scanned once for its metadata and checkpoints (which also
//! works for a chunk still being written, whose header is not final yet).

mod chunk;
mod chunk_reader;
mod cursor;
mod header;
mod lite;
mod metadata;
mod problem;
mod value;

pub use chunk::{Chunk, EventPos, Events, PoolEntry, CHECKPOINT_TYPE, METADATA_TYPE};
pub use chunk_reader::{ChunkRead, ChunkReader};
pub use cursor::{Cursor, DecodeError, Kind, StrOrRef};
pub use header::{ChunkHeader, HEADER_SIZE, MAGIC};
pub use lite::{Lite, LiteStep, Pick};
pub use metadata::{Class, Field, Metadata};
pub use problem::ChunkProblem;
pub use value::{Decoder, Value};
