//! `--preserve`: copy what a write test will overwrite, put it back after,
//! and finish the job after a crash (`iocurve recover`).
//!
//! The sequence, each step fsynced before the next (see [`super::journal`]):
//! check the journal directory (another file system than the target, one
//! that survives power loss, with room for the copy); copy the regions into
//! a `FILLING` journal with per-chunk checksums; arm it; run the test while
//! a heartbeat records how far the target has changed; hash what the test
//! wrote, block by block, into the journal (`WRITTEN`); write back only the
//! blocks that still hold the test's bytes, fsync, read the medium back
//! with O_DIRECT and compare; mark the journal `DONE`; delete it. None of
//! this is timed: the commands call it outside the measurements.
//!
//! Every byte goes through the descriptor the test holds (or a reopen of
//! that very object through `/proc/self/fd`): the target's name may lead
//! elsewhere by the end of a test, and the originals belong to the object
//! the test wrote, not to whatever now has its name.
//!
//! A test that learns where it must write while running (the capacity
//! search) journals each new set of regions the same way, in a journal of
//! its own numbered after the first (`part` in the metadata). The parts are
//! written back latest first, after the test or by `recover`, which
//! finishes every armed part of a test whichever one it is given.
//!
//! f3probe keeps its backup in memory, which a crash loses; iocurve's lives
//! in a file that `recover` can replay any number of times.
//!
//! One file per job: `directory` checks where the journal goes, `save`
//! fills and arms it, `heart` beats while the test runs, `restore` writes
//! it back after the test (`writeback` block by block), `recover`
//! finishes it after a crash (`evidence` says whether it still may),
//! `marker` records a restore a read-only journal could not, `unfinished`
//! finds the journals left behind, `holder` tells who holds one, `medium`
//! reads and writes the medium past the page cache, and `messages` words
//! what failed and how to finish it.

mod directory;
mod evidence;
mod heart;
mod holder;
mod hooks;
mod marker;
mod medium;
mod messages;
mod recover;
mod recover_command;
mod restore;
mod restore_error;
mod save;
mod unfinished;
mod writeback;

#[cfg(test)]
mod fixture;

pub use directory::{check_journal_dir, journal_dir};
pub use evidence::{Evidence, MARGIN, Seen, Unknowable};
pub use messages::{failed_after_test, journal_left_note, restore_failure};
pub use recover::{Outcome, recover};
pub use recover_command::recover_command;
pub use restore::{
    Changes, NameNow, Restored, changed_bytes, record_test_bytes, restore_after_test,
};
pub use restore_error::RestoreError;
pub use save::{Preserved, Timing, backup, regions_for};
pub use unfinished::{list, refuse_if_unfinished, unfinished};
