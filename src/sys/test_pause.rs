//! A handshake with an integration test at a named moment of a write test.
//!
//! Why: the promise "every byte moves through the descriptor that was
//! checked" is only proved by changing what the target's name names at each
//! moment of a test (before the journal copy, while the test writes, before
//! the restore, during the read-back) and watching where the bytes go. A
//! sleep cannot place a change at a moment reliably; a handshake can. With
//! `IOCURVE_TEST_PAUSE_AT=<moment>` and `IOCURVE_TEST_PAUSE_FILE=<path>` in
//! the environment, the process creates the file when it reaches that
//! moment and waits (at most a minute) until the test removes it. Unset, a
//! pause costs one environment lookup, outside every timed loop.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The moments a test may pause a write test at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Moment {
    /// The target is open and checked; nothing is journalled yet.
    Opened,
    /// The journal is armed; the test is about to write.
    Armed,
    /// The test has written; the restore is about to start.
    BeforeRestore,
    /// The originals are written back; the read-back is about to start.
    BeforeReadBack,
}

impl Moment {
    fn name(self) -> &'static str {
        match self {
            Moment::Opened => "opened",
            Moment::Armed => "armed",
            Moment::BeforeRestore => "before-restore",
            Moment::BeforeReadBack => "before-read-back",
        }
    }
}

const AT_ENV: &str = "IOCURVE_TEST_PAUSE_AT";
const FILE_ENV: &str = "IOCURVE_TEST_PAUSE_FILE";
/// A test that never answers does not hang the process for good.
const LONGEST: Duration = Duration::from_secs(60);

/// Waits at `moment` when a test asked for it (see the module's doc); once
/// per process, at the first time the moment comes (a command that arms
/// twice pauses at its first arming only).
pub fn pause(moment: Moment) {
    static DONE: AtomicBool = AtomicBool::new(false);
    let asked = std::env::var(AT_ENV).is_ok_and(|at| at == moment.name());
    let Some(file) = std::env::var_os(FILE_ENV).map(PathBuf::from) else {
        return;
    };
    if !asked || DONE.swap(true, Ordering::Relaxed) || std::fs::write(&file, moment.name()).is_err()
    {
        return;
    }
    let started = Instant::now();
    while file.exists() && started.elapsed() < LONGEST {
        std::thread::sleep(Duration::from_millis(5));
    }
}
