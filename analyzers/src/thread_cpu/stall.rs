//! `--from`'s quiet-input watch, now shared by every analyzer: see [`crate::engine::watch`].

pub use crate::engine::watch::{watch, OpenOnRead, Watched, QUIET_AFTER as STALL_AFTER};
