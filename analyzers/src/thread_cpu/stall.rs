//! `--from`'s quiet-input watch, now shared by every analyzer: see [`crate::watch`].

pub use crate::watch::{watch, OpenOnRead, Watched, QUIET_AFTER as STALL_AFTER};
