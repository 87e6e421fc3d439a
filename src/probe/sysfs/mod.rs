//! Block-device facts from sysfs and mount facts from `/proc/self/mountinfo`.
//!
//! A benchmark target is a path: a file, a directory to put a scratch file in,
//! or a block device node. iocurve needs to know which block device lies
//! beneath that path for two reasons. First, safety: before anything is written
//! to a device, [`crate::medium::write_rules`] must learn whether the device (or one of its
//! partitions, or the disk it is part of) is mounted, stacked upon or used as
//! swap. Second, honesty: the device keeps its own I/O counters
//! (`/sys/class/block/<name>/stat`), and reading them before and after a run
//! shows what actually reached the device (page-cache hits that never left
//! memory, merges done by the block layer, writes the filesystem added of its
//! own), as opposed to what the benchmark asked for.
//!
//! Everything here is read from the kernel's own descriptions: sysfs for the
//! devices and `/proc/self/mountinfo` for the mounts. A fact the kernel does not
//! give is reported as `None` and never guessed.
//!
//! One file per kind of fact: [`device`] the device itself and its queue
//! attributes, [`stack`] its partitions and the devices stacked on it,
//! [`diskstat`] its I/O counters, [`mountinfo`] the mounts; [`attrs`] reads
//! and checks the attributes they share.

mod attrs;
mod device;
mod diskstat;
mod mountinfo;
mod stack;

pub use device::{BlockDevice, from_dev_t_in, from_name_in};
pub use diskstat::DiskStat;
pub(crate) use mountinfo::unescape_octal;
pub use mountinfo::{Mount, mount_of, mounts_of_device, parse_mountinfo};

/// Bytes per sector in the `size` attribute and in the sector counters of
/// `stat`: always 512, whatever the device's logical block size.
pub const SECTOR_BYTES: u64 = 512;

#[cfg(test)]
pub(crate) mod tests;
