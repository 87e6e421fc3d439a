//! What a verify read found, block by block, as the result records it.
//! The checking itself lives in the `verify` workload; these are only the
//! figures it hands over.

use serde::{Deserialize, Serialize};

/// How many bad blocks a [`VerifyTally`] keeps in [`VerifyTally::first_bad`].
pub const FIRST_BAD_MAX: usize = 10;

/// What the verify workload's check found in a block read back from the
/// target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Verdict {
    /// The block is exactly what was written to this offset.
    Ok,
    /// The block is what was written here, except for this many bits.
    Changed {
        /// Bits that differ from what was written.
        flipped_bits: u64,
    },
    /// Aliased: an intact block of this run that was written to
    /// `found_offset` (the wrap-around of a fake card). Read as
    /// `overwritten` too, the name results before schema 4 used.
    #[serde(alias = "overwritten")]
    Aliased {
        /// The offset this block was written to, bytes.
        found_offset: u64,
    },
    /// Anything else: zeros, foreign data, another run's blocks, widespread damage.
    Corrupted,
}

impl Verdict {
    /// True for [`Verdict::Ok`].
    #[must_use]
    pub fn is_ok(&self) -> bool {
        matches!(self, Verdict::Ok)
    }
}

/// One block that did not verify, as kept in [`VerifyTally::first_bad`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct BadBlock {
    /// Where the block was read, bytes from the start of the target.
    pub offset: u64,
    /// What the check found.
    pub verdict: Verdict,
}

/// Counts of verdicts, plus a few bad blocks to show the user.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct VerifyTally {
    /// Blocks exactly as written.
    pub ok: u64,
    /// Blocks as written but for some flipped bits.
    pub changed: u64,
    /// Blocks that read back another address's data (aliased); results
    /// before schema 4 named this `overwritten`.
    #[serde(alias = "overwritten")]
    pub aliased: u64,
    /// Blocks holding anything else: zeros, foreign data, another run's
    /// blocks.
    pub corrupted: u64,
    /// At most [`FIRST_BAD_MAX`] bad blocks: in the order recorded, or, once
    /// tallies have been merged, the lowest offsets among them in offset order.
    pub first_bad: Vec<BadBlock>,
}

impl VerifyTally {
    /// Counts one checked block; bad ones are kept while there is room.
    pub fn record(&mut self, offset: u64, verdict: Verdict) {
        match verdict {
            Verdict::Ok => {
                self.ok += 1;
                return;
            }
            Verdict::Changed { .. } => self.changed += 1,
            Verdict::Aliased { .. } => self.aliased += 1,
            Verdict::Corrupted => self.corrupted += 1,
        }
        if self.first_bad.len() < FIRST_BAD_MAX {
            if self.first_bad.capacity() == 0 {
                self.first_bad.reserve_exact(FIRST_BAD_MAX);
            }
            self.first_bad.push(BadBlock { offset, verdict });
        }
    }

    /// Adds `other`'s counts to these and keeps the [`FIRST_BAD_MAX`]
    /// lowest-offset bad blocks of both, sorted by offset (ties keep this
    /// tally's blocks first).
    pub fn merge(&mut self, other: &VerifyTally) {
        self.ok += other.ok;
        self.changed += other.changed;
        self.aliased += other.aliased;
        self.corrupted += other.corrupted;
        self.first_bad.extend_from_slice(&other.first_bad);
        self.first_bad.sort_by_key(|bad| bad.offset);
        self.first_bad.truncate(FIRST_BAD_MAX);
    }

    /// Blocks that did not verify.
    #[must_use]
    pub fn bad(&self) -> u64 {
        self.changed + self.aliased + self.corrupted
    }

    /// Blocks checked, good or bad.
    #[must_use]
    pub fn checked(&self) -> u64 {
        self.ok + self.bad()
    }
}
