//! The `profile` plan: CrystalDiskMark's four rows (SEQ 1MiB Q8, SEQ 1MiB Q1,
//! RND 4KiB Q32, RND 4KiB Q1), each read and written, each repeated.
//!
//! Every measurement is bounded by time, not bytes, so a slow SD card and a
//! fast NVMe drive finish in comparable wall time: 24 measurements of
//! 1.5 s plus a 0.25 s warm-up make about 42 s, and the preparation pass that
//! fills the test area is cut off after 15 s (the area shrinks to what was
//! written, never below 64 MiB).

use super::spec::Rw;
use std::time::Duration;

/// One row of the profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProfileRow {
    pub name: &'static str,
    pub random: bool,
    pub block_size: u64,
    pub queue_depth: u32,
}

impl ProfileRow {
    pub fn rw(&self, write: bool) -> Rw {
        match (self.random, write) {
            (false, false) => Rw::Read,
            (false, true) => Rw::Write,
            (true, false) => Rw::RandRead,
            (true, true) => Rw::RandWrite,
        }
    }
}

pub const ROWS: [ProfileRow; 4] = [
    ProfileRow {
        name: "SEQ 1MiB Q8",
        random: false,
        block_size: 1 << 20,
        queue_depth: 8,
    },
    ProfileRow {
        name: "SEQ 1MiB Q1",
        random: false,
        block_size: 1 << 20,
        queue_depth: 1,
    },
    ProfileRow {
        name: "RND 4KiB Q32",
        random: true,
        block_size: 4096,
        queue_depth: 32,
    },
    ProfileRow {
        name: "RND 4KiB Q1",
        random: true,
        block_size: 4096,
        queue_depth: 1,
    },
];

/// Counted time of each measurement unless `--time` says otherwise.
pub const DEFAULT_TIME: Duration = Duration::from_millis(1500);
/// Warm-up before each measurement, as a share of its time (at most 0.25 s).
pub fn ramp_for(time: Duration) -> Duration {
    (time / 6).min(Duration::from_millis(250))
}
/// The preparation pass stops after this long...
pub const PREP_TIME_LIMIT: Duration = Duration::from_secs(15);
/// ...but always writes at least this much (or the whole area if smaller).
pub const PREP_MIN_BYTES: u64 = 64 << 20;

/// Wall time the measurements will take, for the ETA.
pub fn planned(time: Duration, repeat: u32, with_writes: bool) -> Duration {
    let per = time + ramp_for(time);
    let directions = if with_writes { 2 } else { 1 };
    per * (ROWS.len() as u32 * directions * repeat)
}
