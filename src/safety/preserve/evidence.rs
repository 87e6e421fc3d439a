//! Whether a journal without a table of what its test wrote (the test was
//! killed mid-run, see [`crate::safety::journal::beat`]) may still be
//! written back: the target must not have been changed after the test's
//! last heartbeat beyond what the test itself could have written then.
//!
//! A regular file's ctime moves with every write. The test beats every
//! 50 ms, so its own last writes are at most one period (plus the time
//! the heartbeat thread waited for a CPU) after its last beat:
//! [`MARGIN`] (0.5 s, ten periods) leaves room for a loaded machine, and a
//! later ctime was someone else's write. Erring refuses, never overwrites;
//! `--force` is the way past. A block device's sectors-written counter
//! (since boot) is compared the same way: the fastest the test wrote
//! between two beats, times [`MARGIN`], plus [`SLACK_SECTORS`] for writes
//! in flight at the kill, is all it could have added. A test killed in
//! its first second has no rate yet: nothing is told then.

use super::heart::{boot_id, sectors_written};
use crate::safety::birth::ctime_of;
use crate::safety::journal::Beat;
use std::fs::File;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::time::Duration;

/// How long after its last beat the test's own writes may still land.
pub const MARGIN: Duration = Duration::from_millis(500);
/// Sectors (512 B) a block device may see written after the last beat
/// beyond the test's rate: 4 MiB, what a deep queue has in flight.
const SLACK_SECTORS: u64 = 8192;
/// Beats (a second's worth) before a device's write rate is known.
const RATE_BEATS: u64 = 20;

/// What decided how a journal was written back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Evidence {
    /// The journal holds what the test wrote, block by block: blocks
    /// written since were left as found.
    TestHashes,
    /// The target was not changed after the test's last heartbeat.
    Quiet,
    /// Nothing could be told: written back whole.
    Unknown(Unknowable),
    /// `--force`: written back whole, whatever was seen.
    Forced,
}

/// Why nothing could be told.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unknowable {
    /// A journal of format 1, or its heartbeats are damaged.
    NoHeartbeat,
    /// The machine was restarted since: counters since boot start over.
    OtherBoot,
    /// The device's write counter could not be read.
    NoCounter,
    /// The test died in its first second: its write rate is unknown.
    NoRate,
}

/// What showed the target was written after the test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Seen {
    /// The file changed this long after the test's last heartbeat.
    ChangedAfter(Duration),
    /// The device had this many sectors written since the last beat, of
    /// which the test could account for `allowed`.
    SectorsWritten { sectors: u64, allowed: u64 },
}

/// Weighs the last beat against the target now: the evidence, or what
/// was seen that forbids writing the journal back.
pub(super) fn weigh(beat: Option<&Beat>, target: &File) -> Result<Evidence, Seen> {
    let Some(beat) = beat else {
        return Ok(Evidence::Unknown(Unknowable::NoHeartbeat));
    };
    let Ok(meta) = target.metadata() else {
        return Ok(Evidence::Unknown(Unknowable::NoCounter));
    };
    if !meta.file_type().is_block_device() {
        let (Some(now), Some(_)) = (ctime_of(target), beat.ctime) else {
            return Ok(Evidence::Unknown(Unknowable::NoHeartbeat));
        };
        let after = now.nanos() - beat.wall.nanos();
        if after > MARGIN.as_nanos() as i128 {
            return Err(Seen::ChangedAfter(Duration::from_nanos(after as u64)));
        }
        return Ok(Evidence::Quiet);
    }
    if beat.boot_id.is_none() || beat.boot_id != boot_id() {
        return Ok(Evidence::Unknown(Unknowable::OtherBoot));
    }
    let (major, minor) = (
        rustix::fs::major(meta.rdev()),
        rustix::fs::minor(meta.rdev()),
    );
    let stat = format!("/sys/dev/block/{major}:{minor}/stat");
    let (Some(now), Some(then)) = (sectors_written(stat.as_ref()), beat.sectors) else {
        return Ok(Evidence::Unknown(Unknowable::NoCounter));
    };
    // A test still speeding up has no rate to go by yet.
    let (Some(peak), true) = (beat.peak_rate, beat.seq >= RATE_BEATS) else {
        return Ok(Evidence::Unknown(Unknowable::NoRate));
    };
    let allowed = (peak as f64 * MARGIN.as_secs_f64()) as u64 + SLACK_SECTORS;
    let sectors = now.saturating_sub(then);
    if sectors > allowed {
        return Err(Seen::SectorsWritten { sectors, allowed });
    }
    Ok(Evidence::Quiet)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::safety::birth::Stamp;

    fn beat_of(target: &File, wall: Stamp) -> Beat {
        Beat {
            seq: 1,
            wall,
            ctime: ctime_of(target),
            sectors: None,
            prev_wall: None,
            prev_sectors: None,
            peak_rate: None,
            boot_id: boot_id(),
        }
    }

    #[test]
    fn a_file_changed_long_after_the_last_beat_is_seen_and_a_quiet_one_passes() {
        let (_dir, f) = crate::safety::scratch::file_holding("f", b"x");
        let target = File::open(&f).unwrap();
        let now = Stamp::now();
        assert_eq!(
            weigh(Some(&beat_of(&target, now)), &target),
            Ok(Evidence::Quiet)
        );
        let long_ago = Stamp {
            sec: now.sec - 60,
            nsec: 0,
        };
        let seen = weigh(Some(&beat_of(&target, long_ago)), &target).unwrap_err();
        assert!(
            matches!(seen, Seen::ChangedAfter(d) if d > Duration::from_secs(55)),
            "{seen:?}"
        );
        assert_eq!(
            weigh(None, &target),
            Ok(Evidence::Unknown(Unknowable::NoHeartbeat))
        );
    }
}
