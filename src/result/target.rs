//! What a result records about the target it measured: its path and kind,
//! the block device and file system beneath, the I/O mode and the notes
//! opening it produced. Filled by the opener, read by every renderer.

use crate::probe::sysfs::{BlockDevice, Mount};
use crate::result::Caveat;
use crate::vocab::options::IoMode;
use serde::{Deserialize, Serialize};

/// The kind of thing a target path names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TargetKind {
    Directory,
    File,
    BlockDevice,
    /// A `sim:` target: a simulated flash card in memory.
    Simulated,
}

/// What the result records about the target.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TargetInfo {
    /// The target as given: a file, directory, block device or `sim:` card.
    pub path: String,
    /// What the path names.
    pub kind: TargetKind,
    /// The scratch file created in a directory target (removed at the end).
    pub scratch_file: Option<String>,
    /// Usable size: the device, the file, or the scratch file.
    pub size_bytes: u64,
    /// The block device beneath the target; null when there is none.
    pub device: Option<BlockDevice>,
    /// The file system the target is on; null for a block device.
    pub filesystem: Option<Mount>,
    /// O_DIRECT (`direct`) or through the page cache (`buffered`).
    pub mode: IoMode,
    /// Alignment O_DIRECT needs for offsets and lengths.
    pub logical_block_size: u32,
    /// The target was opened for writing.
    pub writable: bool,
    /// Remarks for the reader: choices made, limits met.
    pub notes: Vec<Caveat>,
}
