//! The direction and order of a workload's requests, as fio names them:
//! read, write, randread, randwrite, rw, randrw.

use serde::{Deserialize, Serialize};

/// Access pattern and direction, named as in fio; `run --rw` takes it as it
/// is. (Variant comments are `//`: clap would print doc comments in the help.)
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
#[value(rename_all = "lowercase")]
pub enum Rw {
    Read,
    Write,
    RandRead,
    RandWrite,
    // Sequential, mixed reads and writes.
    Rw,
    // Random, mixed reads and writes.
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
