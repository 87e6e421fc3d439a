//! Test hooks: pauses the integration tests ask for through the
//! environment, so that they can kill or signal the process while a journal
//! is being filled or written back. Unset, they cost one lookup.

use std::time::Duration;

/// Test hook: sleep this many milliseconds per chunk copied or restored, so
/// that a test can kill the process in the middle of either.
const DELAY_ENV: &str = "IOCURVE_TEST_JOURNAL_DELAY_MS";

/// Test hook: sleep this many milliseconds once before copying into a
/// test's later journal (part 1 on), which is often one chunk long, so
/// that a test can signal the process while that journal is filling.
pub(super) const LATER_PART_DELAY_ENV: &str = "IOCURVE_TEST_LATER_JOURNAL_DELAY_MS";

/// Test hook: sleep this many milliseconds once a later journal is armed,
/// before the test writes what it covers, so that a test can kill the
/// process while two journals are armed (without it that window is as short
/// as the rest of the run, too short to hit on a loaded machine).
pub(super) const LATER_ARMED_DELAY_ENV: &str = "IOCURVE_TEST_LATER_ARMED_DELAY_MS";

pub(super) fn test_delay() {
    test_sleep(DELAY_ENV);
}

pub(super) fn test_sleep(env: &str) {
    if let Some(ms) = std::env::var(env).ok().and_then(|v| v.parse::<u64>().ok()) {
        std::thread::sleep(Duration::from_millis(ms));
    }
}

/// Test hook: a path P. Before a test's restore (its heartbeat stopped,
/// nothing written back yet) the process creates `P.waiting` and waits
/// until P exists (two minutes at most), so that a test can change the
/// world there: remount the journal's file system read-only, say.
const BEFORE_RESTORE_ENV: &str = "IOCURVE_TEST_BEFORE_RESTORE";

pub(super) fn before_restore() {
    let Some(gate) = std::env::var_os(BEFORE_RESTORE_ENV).map(std::path::PathBuf::from) else {
        return;
    };
    let mut waiting = gate.clone().into_os_string();
    waiting.push(".waiting");
    let _ = std::fs::write(&waiting, b"");
    let started = std::time::Instant::now();
    while !gate.exists() && started.elapsed() < Duration::from_secs(120) {
        std::thread::sleep(Duration::from_millis(10));
    }
}
