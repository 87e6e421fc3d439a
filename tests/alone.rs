//! Tests whose subject is something the whole process or machine shares,
//! so they run one at a time with nothing beside them: `cpu_load` counts the
//! CPU time of this whole process, `no_uring` switches io_uring off for the
//! whole machine for a moment, `compare_noise` loads the machine to
//! count `compare`'s false alarms, and `flash_fuse` times a FUSE-backed card on
//! the wall clock, where another test's CPU load would read as the card's
//! slowness. Cargo runs test binaries one after another, so no other crate's
//! tests run with them, and every test here first takes [`one_at_a_time`].
//! A new test joins them only under the same condition. See tests/README.md.

#[path = "common/mod.rs"]
mod common;

#[path = "alone/compare_noise.rs"]
mod compare_noise;
#[path = "alone/cpu_load.rs"]
mod cpu_load;
#[path = "alone/flash_fuse.rs"]
mod flash_fuse;
#[path = "alone/no_uring.rs"]
mod no_uring;

use std::sync::{Mutex, MutexGuard};

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// The crate's one lock: held for a whole test, so that no two tests of
/// this crate run at once (a test that panicked leaves it usable).
pub(crate) fn one_at_a_time() -> MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}
