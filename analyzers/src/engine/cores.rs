//! How many cores the readers may use: one count for all of them (the librdkafka front end's
//! parsing threads, the GC analyzer's, analyze-jfr's split of a chunk), read once.

/// The cores this process may run on (its affinity, as `available_parallelism` gives
/// it), at least 1; asked of the system once per process.
pub(crate) fn available() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}
