//! What shares a device's medium or sits on it: the partitions of its whole
//! disk, and the devices stacked on it (`holders/`: device-mapper, md,
//! bcache).

use super::BlockDevice;
use super::attrs::{SYSFS, check_name, read_num_opt, with_path};
use std::fs;
use std::io;
use std::path::Path;

impl BlockDevice {
    /// Kernel names of the partitions of this device's whole disk, in
    /// partition-number order. Empty for an unpartitioned disk.
    pub fn partitions(&self) -> io::Result<Vec<String>> {
        partitions_in(Path::new(SYSFS), &self.disk)
    }

    /// Kernel names of the devices stacked on this one (device-mapper, md,
    /// bcache...), from `/sys/class/block/<name>/holders/`, sorted.
    pub fn holders(&self) -> io::Result<Vec<String>> {
        holders_in(Path::new(SYSFS), &self.name)
    }
}

pub(super) fn partitions_in(sys: &Path, disk: &str) -> io::Result<Vec<String>> {
    check_name(disk)?;
    let dir = sys.join("class/block").join(disk);
    let mut found = Vec::new();
    for entry in fs::read_dir(&dir).map_err(|e| with_path(e, &dir))? {
        let entry = entry?;
        let part_file = entry.path().join("partition");
        if !part_file.is_file() {
            continue;
        }
        let number = read_num_opt::<u32>(&part_file).unwrap_or(u32::MAX);
        found.push((number, entry.file_name().to_string_lossy().into_owned()));
    }
    found.sort();
    Ok(found.into_iter().map(|(_, name)| name).collect())
}

pub(super) fn holders_in(sys: &Path, name: &str) -> io::Result<Vec<String>> {
    check_name(name)?;
    let dir = sys.join("class/block").join(name).join("holders");
    let mut names = Vec::new();
    for entry in fs::read_dir(&dir).map_err(|e| with_path(e, &dir))? {
        names.push(entry?.file_name().to_string_lossy().into_owned());
    }
    names.sort();
    Ok(names)
}
