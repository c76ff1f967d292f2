//! What the machine's cores decide: the heap every JVM gets by default and the producers swept.

/// The post's heap per vCPU: 2 GB for K=16 on 16 vCPUs.
pub const POST_HEAP_MB_PER_CORE: usize = 2048 / 16;

/// Cores this process (and the JVMs it starts) may run on: its affinity.
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get())
}

/// The default heap on a machine with `cores`: the post's heap per vCPU times the cores, at
/// least 256m. Senders, and so the backlog they build, scale with the cores; a fixed heap
/// would hide the collapse on a big machine and fake it on a small one.
pub fn default_heap(cores: usize) -> String {
    format!("{}m", (POST_HEAP_MB_PER_CORE * cores).max(256))
}

/// 1, 2, 4, … up to 4× the cores and at least 16: past the core count is where the post's
/// collapse began.
pub fn default_producers(cores: usize) -> Vec<u32> {
    let top = (4 * cores as u32).max(16);
    let mut ks = vec![1u32];
    while ks[ks.len() - 1] * 2 <= top {
        ks.push(ks[ks.len() - 1] * 2);
    }
    ks
}
