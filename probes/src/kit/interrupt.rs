//! Stopping a sweep between runs: Ctrl-C or SIGTERM (the first stops the sweep after
//! printing what was measured and deleting the run's topic; a second exits at once), or
//! the kit itself when the broker is gone ([`abort`]). Every measurement loop checks
//! [`stopped`], so one flag stops them all.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

static STOP: AtomicBool = AtomicBool::new(false);
static ABORT: Mutex<Option<String>> = Mutex::new(None);

/// Installs the handler for SIGINT, SIGTERM and SIGHUP (once per process; later calls are
/// no-ops).
pub fn install() {
    let _ = ctrlc::set_handler(|| {
        if STOP.swap(true, Ordering::SeqCst) {
            eprintln!(
                "kgap: second signal, exiting now (this run's topic may remain: its name \
                 starts with kgap.)"
            );
            std::process::exit(crate::kit::error::exit::INTERRUPTED);
        }
        eprintln!(
            "kgap: signal received, stopping; printing what was measured so far (again to \
             quit at once)"
        );
    });
}

/// True once a signal came or the sweep was aborted. A relaxed load: cheap enough for a
/// hot loop.
#[inline]
pub fn stopped() -> bool {
    STOP.load(Ordering::Relaxed)
}

/// Stops every loop, as a signal would, and records why (the broker stopped answering).
pub fn abort(reason: String) {
    *ABORT.lock().unwrap_or_else(|e| e.into_inner()) = Some(reason);
    STOP.store(true, Ordering::SeqCst);
}

/// Why the sweep was aborted, when it was (not by a signal).
pub fn abort_reason() -> Option<String> {
    ABORT.lock().unwrap_or_else(|e| e.into_inner()).clone()
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
