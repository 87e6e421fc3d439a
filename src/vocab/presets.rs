//! The rows of `profile`: CrystalDiskMark's and KDiskMark's named tests
//! (`SEQ1M Q8T1`, `RND4K Q32T16`…) and the presets that group them, as plain
//! values every layer can name without reaching into the workload that runs
//! them.

use crate::vocab::Rw;
use crate::vocab::options::ProfilePreset;

/// One row of the profile: a pattern, a transfer size, a queue depth and a
/// number of jobs, named as CrystalDiskMark and KDiskMark name them
/// (`SEQ1M Q8T1`, `RND4K Q32T16`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProfileRow {
    pub random: bool,
    pub block_size: u64,
    pub queue_depth: u32,
    pub threads: u32,
}

impl ProfileRow {
    pub const fn new(random: bool, block_size: u64, queue_depth: u32, threads: u32) -> ProfileRow {
        ProfileRow {
            random,
            block_size,
            queue_depth,
            threads,
        }
    }

    pub fn rw(&self, write: bool) -> Rw {
        match (self.random, write) {
            (false, false) => Rw::Read,
            (false, true) => Rw::Write,
            (true, false) => Rw::RandRead,
            (true, true) => Rw::RandWrite,
        }
    }

    /// The row with `threads` jobs instead of its own.
    pub fn with_threads(self, threads: u32) -> ProfileRow {
        ProfileRow { threads, ..self }
    }
}

impl std::fmt::Display for ProfileRow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = if self.random { "RND" } else { "SEQ" };
        let size = size_label(self.block_size);
        write!(f, "{kind}{size} Q{}T{}", self.queue_depth, self.threads)
    }
}

impl serde::Serialize for ProfileRow {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl schemars::JsonSchema for ProfileRow {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "ProfileRow".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "pattern": "^(SEQ|RND)[0-9]+[GMKB] Q[0-9]+T[0-9]+$",
            "description": "A profile row as CrystalDiskMark names it: SEQ or RND, the transfer size (binary K, M, G), the queue depth and the number of jobs (`SEQ1M Q8T1`)."
        })
    }
}

/// A transfer size as the row names it: `4K`, `128K`, `1M` (binary units,
/// as CrystalDiskMark writes them), else bytes with `B`.
pub fn size_label(bytes: u64) -> String {
    for (unit, shift) in [("G", 30), ("M", 20), ("K", 10)] {
        if bytes >= 1 << shift && bytes.is_multiple_of(1 << shift) {
            return format!("{}{unit}", bytes >> shift);
        }
    }
    format!("{bytes}B")
}

const SEQ1M_Q8T1: ProfileRow = ProfileRow::new(false, 1 << 20, 8, 1);
const SEQ1M_Q1T1: ProfileRow = ProfileRow::new(false, 1 << 20, 1, 1);
const SEQ128K_Q32T1: ProfileRow = ProfileRow::new(false, 128 << 10, 32, 1);
const RND4K_Q32T1: ProfileRow = ProfileRow::new(true, 4096, 32, 1);
const RND4K_Q32T16: ProfileRow = ProfileRow::new(true, 4096, 32, 16);
const RND4K_Q1T1: ProfileRow = ProfileRow::new(true, 4096, 1, 1);

/// The rows of each preset, as CrystalDiskMark 8 and KDiskMark define
/// their profiles: the default four, the NVMe SSD set (a 128 KiB
/// sequential row at Q32 and 16 random jobs), peak (the two rows that
/// show the most a drive can do) and real world (one request at a time).
pub fn preset_rows(preset: ProfilePreset) -> Vec<ProfileRow> {
    match preset {
        ProfilePreset::Default => vec![SEQ1M_Q8T1, SEQ1M_Q1T1, RND4K_Q32T1, RND4K_Q1T1],
        ProfilePreset::Nvme => vec![SEQ1M_Q8T1, SEQ128K_Q32T1, RND4K_Q32T16, RND4K_Q1T1],
        ProfilePreset::Peak => vec![SEQ1M_Q8T1, RND4K_Q32T16],
        ProfilePreset::RealWorld => vec![SEQ1M_Q1T1, RND4K_Q1T1],
    }
}
