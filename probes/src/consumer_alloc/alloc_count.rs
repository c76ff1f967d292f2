//! The counting global allocator of `probe-consumer-alloc`: per-thread counts of
//! allocations and bytes, and per thread the choice of the system allocator (glibc malloc)
//! or mimalloc.
//!
//! The binary installs it (`#[global_allocator] static A: Counting = Counting;`); other
//! binaries and the library's unit tests do not, which [`installed`] tells.
//!
//! One process runs both allocators, so every free must go back to the allocator that made
//! the block: a block from a mimalloc thread may be freed by the writer thread. mimalloc
//! answers "is this mine" from its segment map (`mi_is_in_heap_region`, a bitmap read), and
//! every free asks it, on every thread and for both allocators, so the question costs the
//! system variant what it costs the mimalloc one. librdkafka's own threads call C malloc
//! directly and are neither counted nor moved: the choice is the Rust pipeline's.

use libmimalloc_sys as mi;
use serde::Serialize;
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::ffi::c_void;

/// Which allocator a thread's Rust allocations come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Allocator {
    /// glibc malloc (Rust's `System`).
    System,
    /// mimalloc (per-thread free lists in per-thread pages, no shared arena lock).
    Mimalloc,
}

impl Allocator {
    pub fn name(self) -> &'static str {
        match self {
            Allocator::System => "system",
            Allocator::Mimalloc => "mimalloc",
        }
    }
}

thread_local! {
    static ALLOCS: Cell<u64> = const { Cell::new(0) };
    static BYTES: Cell<u64> = const { Cell::new(0) };
    static USE_MI: Cell<bool> = const { Cell::new(false) };
}

/// This thread's allocations and bytes allocated so far (reallocs count as one of the new
/// size: a grown `Vec` asked the allocator again).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub allocations: u64,
    pub bytes: u64,
}

impl std::ops::Sub for Counts {
    type Output = Counts;
    fn sub(self, o: Counts) -> Counts {
        Counts {
            allocations: self.allocations.saturating_sub(o.allocations),
            bytes: self.bytes.saturating_sub(o.bytes),
        }
    }
}

impl std::ops::Add for Counts {
    type Output = Counts;
    fn add(self, o: Counts) -> Counts {
        Counts {
            allocations: self.allocations + o.allocations,
            bytes: self.bytes + o.bytes,
        }
    }
}

/// This thread's counts.
pub fn this_thread() -> Counts {
    Counts {
        allocations: ALLOCS.with(Cell::get),
        bytes: BYTES.with(Cell::get),
    }
}

/// From now on this thread's Rust allocations come from `a`.
pub fn use_on_this_thread(a: Allocator) {
    USE_MI.with(|c| c.set(a == Allocator::Mimalloc));
}

/// Whether the counting allocator is the process's global allocator (one Box counted).
pub fn installed() -> bool {
    let before = this_thread().allocations;
    let b = std::hint::black_box(Box::new(0u64));
    drop(b);
    this_thread().allocations > before
}

/// The counting, routing allocator.
pub struct Counting;

#[inline]
fn count(size: usize) {
    // try_with: a thread being torn down has no locals left; its allocations go uncounted.
    let _ = ALLOCS.try_with(|c| c.set(c.get() + 1));
    let _ = BYTES.try_with(|c| c.set(c.get() + size as u64));
}

#[inline]
fn on_mimalloc() -> bool {
    USE_MI.try_with(Cell::get).unwrap_or(false)
}

#[inline]
fn owned_by_mimalloc(p: *mut u8) -> bool {
    unsafe { mi::mi_is_in_heap_region(p as *const c_void) }
}

// Safety: every block is freed or grown by the allocator that made it (asked of mimalloc's
// segment map), and mimalloc's aligned calls honour the layout's alignment.
unsafe impl GlobalAlloc for Counting {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        if on_mimalloc() {
            mi::mi_malloc_aligned(layout.size(), layout.align()) as *mut u8
        } else {
            System.alloc(layout)
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        if on_mimalloc() {
            mi::mi_zalloc_aligned(layout.size(), layout.align()) as *mut u8
        } else {
            System.alloc_zeroed(layout)
        }
    }

    #[inline]
    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        if owned_by_mimalloc(p) {
            mi::mi_free(p as *mut c_void)
        } else {
            System.dealloc(p, layout)
        }
    }

    #[inline]
    unsafe fn realloc(&self, p: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count(new_size);
        if owned_by_mimalloc(p) {
            mi::mi_realloc_aligned(p as *mut c_void, new_size, layout.align()) as *mut u8
        } else {
            System.realloc(p, layout, new_size)
        }
    }
}
