//! The byte engine: how the analyzers read bytes fast. Streaming input (file, stdin, gzip) through
//! fixed buffers, a plain file cut into chunks parsed on every core, blocks of whole lines,
//! SIMD byte searches, fast hashing and the parse memos. The `unsafe`, the SIMD and the memos
//! live here only; each fast path sits beside the plain reference its tests compare it with.
//! Nothing here knows Kafka: the analyzers read through it and hand typed evidence on.

pub(crate) mod blocks;
pub(crate) mod bytes_eq;
pub(crate) mod cores;
pub mod fast_hash;
pub mod input;
pub(crate) mod line_memo;
pub(crate) mod newlines;
pub mod progress;
pub mod watch;
