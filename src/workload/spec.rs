//! What one measurement is asked to do: a plain, validated description.

use super::pattern::Pattern;
use crate::engine::EngineKind;
use serde::Serialize;
use std::time::Duration;

/// Access pattern and direction, named as in fio.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Rw {
    Read,
    Write,
    RandRead,
    RandWrite,
    /// Sequential, mixed reads and writes.
    Rw,
    /// Random, mixed reads and writes.
    RandRw,
}

impl Rw {
    pub fn parse(text: &str) -> Option<Rw> {
        Some(match text {
            "read" => Rw::Read,
            "write" => Rw::Write,
            "randread" => Rw::RandRead,
            "randwrite" => Rw::RandWrite,
            "rw" | "readwrite" => Rw::Rw,
            "randrw" => Rw::RandRw,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Rw::Read => "read",
            Rw::Write => "write",
            Rw::RandRead => "randread",
            Rw::RandWrite => "randwrite",
            Rw::Rw => "rw",
            Rw::RandRw => "randrw",
        }
    }

    pub fn is_random(self) -> bool {
        matches!(self, Rw::RandRead | Rw::RandWrite | Rw::RandRw)
    }

    pub fn is_mixed(self) -> bool {
        matches!(self, Rw::Rw | Rw::RandRw)
    }

    pub fn reads(self) -> bool {
        !matches!(self, Rw::Write | Rw::RandWrite)
    }

    pub fn writes(self) -> bool {
        !matches!(self, Rw::Read | Rw::RandRead)
    }
}

/// One measurement: a workload over a region of an open target.
#[derive(Debug, Clone, Serialize)]
pub struct MeasureSpec {
    pub rw: Rw,
    /// Read share of a mixed workload, in percent.
    pub mix_read_percent: u8,
    pub block_size: u64,
    pub queue_depth: u32,
    pub threads: u32,
    pub engine: EngineKind,
    /// Start of the region, bytes from the start of the target.
    pub offset: u64,
    /// Length of the region.
    pub span: u64,
    /// Offset granularity of random I/O.
    pub align: u64,
    /// Bytes to move in the counted phase (all jobs together).
    pub size: Option<u64>,
    /// Duration of the counted phase.
    #[serde(with = "duration_secs")]
    pub time: Option<Duration>,
    /// Warm-up before counting.
    #[serde(with = "duration_secs")]
    pub ramp: Option<Duration>,
    pub pattern: Pattern,
    pub seed: u64,
    /// False when the seed was made up; a verify read then takes the seed
    /// from the blocks it reads.
    pub seed_given: bool,
    pub verify: bool,
    /// Through the page cache instead of O_DIRECT.
    pub buffered: bool,
}

mod duration_secs {
    use serde::Serializer;
    use std::time::Duration;

    pub fn serialize<S: Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
        match d {
            Some(d) => s.serialize_f64(d.as_secs_f64()),
            None => s.serialize_none(),
        }
    }
}
