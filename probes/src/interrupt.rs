//! Ctrl-C: the first stops the sweep after printing what was measured (and deleting the
//! run's topic); a second exits at once.

use std::sync::atomic::{AtomicBool, Ordering};

static STOP: AtomicBool = AtomicBool::new(false);

/// Installs the handler (once per process; later calls are no-ops).
pub fn install() {
    let _ = ctrlc::set_handler(|| {
        if STOP.swap(true, Ordering::SeqCst) {
            eprintln!("kgap: second Ctrl-C, exiting now (this run's topic may remain: its name starts with kgap.)");
            std::process::exit(crate::error::exit::INTERRUPTED);
        }
        eprintln!("kgap: Ctrl-C, stopping; printing what was measured so far (Ctrl-C again to quit at once)");
    });
}

/// True once Ctrl-C was pressed. A relaxed load: cheap enough for a hot loop.
#[inline]
pub fn stopped() -> bool {
    STOP.load(Ordering::Relaxed)
}

/// Names the calling thread in /proc (`comm`, at most 15 bytes), so per-thread CPU can say
/// which thread is the application's.
pub fn name_this_thread(name: &str) {
    let mut buf = [0u8; 16];
    let n = name.len().min(15);
    buf[..n].copy_from_slice(&name.as_bytes()[..n]);
    unsafe {
        libc::prctl(libc::PR_SET_NAME, buf.as_ptr() as libc::c_ulong, 0, 0, 0);
    }
}
