//! Self-describing blocks for `--verify`. (Stub: being written.)

use serde::Serialize;

pub const HEADER_LEN: usize = 64;

pub fn stamp(_block: &mut [u8], _offset: u64, _seed: u64, _seq: u64) {}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Verdict {
    Ok,
    Changed { flipped_bits: u64 },
    Overwritten { found_offset: u64 },
    Corrupted,
}

pub fn check(_block: &[u8], _offset: u64, _seed: u64) -> Verdict {
    Verdict::Ok
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct BadBlock {
    pub offset: u64,
    pub verdict: Verdict,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct VerifyTally {
    pub ok: u64,
    pub changed: u64,
    pub overwritten: u64,
    pub corrupted: u64,
    pub first_bad: Vec<BadBlock>,
}

impl VerifyTally {
    pub fn record(&mut self, _offset: u64, _verdict: Verdict) {}
    pub fn merge(&mut self, _other: &VerifyTally) {}
    pub fn bad(&self) -> u64 {
        self.changed + self.overwritten + self.corrupted
    }
}
