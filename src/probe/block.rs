//! The block device beneath a target and the stack above its medium.
//!
//! A file lives on a partition, a partition on a disk; a device-mapper or md
//! device sits on `slaves/`; a loop device reads a backing file that lives on
//! yet another device. The medium that sets the speed is at the bottom, so the
//! probe walks down to it and records every layer passed on the way.

use super::{attr, attr_num};
use crate::probe::sysfs::{BlockDevice, from_dev_t_in, from_name_in};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// How deep a stack may be before the walk gives up (a loop cycle).
const MAX_DEPTH: usize = 16;

/// One layer passed on the way down to the medium.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Layer {
    /// Kernel name of the layer's device (`sda1`, `dm-0`, `loop0`).
    pub name: String,
    /// `partition`, `dm`, `md`, `loop`.
    pub kind: String,
    /// The partition's disk, the dm target's name, the loop's backing file.
    pub detail: Option<String>,
}

/// The facts of the whole disk at the bottom of the stack.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct BlockFacts {
    /// Kernel name of the whole disk (`sda`, `mmcblk0`, `nvme0n1`).
    pub name: String,
    /// `major:minor`.
    pub dev: String,
    /// Size of the disk, bytes.
    pub size_bytes: u64,
    /// Smallest unit the disk addresses, bytes (`queue/logical_block_size`).
    pub logical_block_size: u32,
    /// Smallest unit the disk writes without read-modify-write, bytes
    /// (`queue/physical_block_size`).
    pub physical_block_size: u32,
    /// `queue/rotational`: the kernel's belief that the disk spins; null when
    /// not stated.
    pub rotational: Option<bool>,
    /// Largest transfer the kernel sends now, and the hardware's limit, KiB.
    pub max_sectors_kb: Option<u64>,
    /// The hardware's largest transfer, KiB (`queue/max_hw_sectors_kb`);
    /// 2147483647 means the driver states none.
    pub max_hw_sectors_kb: Option<u64>,
    /// Requests the kernel queues for the disk at once (`queue/nr_requests`);
    /// null when not stated.
    pub nr_requests: Option<u64>,
    /// The selected I/O scheduler (the bracketed one in `queue/scheduler`).
    pub scheduler: Option<String>,
    /// Whether the device accepts discard (TRIM): `discard_max_bytes` > 0.
    pub discard: Option<bool>,
    /// `write back` or `write through`.
    pub write_cache: Option<String>,
    /// `device/vendor`; null when the kernel gives none.
    pub vendor: Option<String>,
    /// `device/model`; null when the kernel gives none.
    pub model: Option<String>,
    /// Firmware revision (`device/rev` or `device/firmware_rev`); null when the
    /// kernel gives none.
    pub revision: Option<String>,
    /// Serial number (`device/serial` or the SCSI unit serial page); null when
    /// the kernel gives none.
    pub serial: Option<String>,
}

/// A `max_hw_sectors_kb` this large is not a limit but a driver's "none":
/// virtio-blk and others leave INT_MAX KiB (2 TiB per request) there.
const NO_HARDWARE_LIMIT_KB: u64 = i32::MAX as u64;

/// What the hardware's largest transfer is, as the kernel states it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HardwareLimit {
    Kib(u64),
    /// The driver states no limit (the INT_MAX placeholder).
    NoneStated,
    Unknown,
}

impl BlockFacts {
    /// The hardware's largest transfer, telling a driver's placeholder
    /// from a limit.
    pub fn hardware_limit(&self) -> HardwareLimit {
        match self.max_hw_sectors_kb {
            None => HardwareLimit::Unknown,
            Some(kb) if kb >= NO_HARDWARE_LIMIT_KB => HardwareLimit::NoneStated,
            Some(kb) => HardwareLimit::Kib(kb),
        }
    }
}

/// The layers from the target's device down to the medium.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Stack {
    pub layers: Vec<Layer>,
    /// Kernel name of the whole disk at the bottom; `None` when the walk
    /// could not reach one.
    pub bottom: Option<String>,
    /// A dm-crypt layer was passed.
    pub encrypted: bool,
}

/// Walks from device `name` down to the medium under sysfs root `sys`.
pub fn stack_in(sys: &Path, name: &str) -> Stack {
    let mut stack = Stack::default();
    let mut current = name.to_string();
    for _ in 0..MAX_DEPTH {
        let Ok(dev) = from_name_in(sys, &current) else {
            return stack;
        };
        match step(sys, &dev, &mut stack) {
            Some(next) => current = next,
            None => {
                stack.bottom = Some(current);
                return stack;
            }
        }
    }
    stack
}

/// Records the layer `dev` is and returns the device beneath it, or `None`
/// when `dev` is the bottom.
fn step(sys: &Path, dev: &BlockDevice, stack: &mut Stack) -> Option<String> {
    if dev.partition {
        stack
            .layers
            .push(layer(&dev.name, "partition", Some(dev.disk.clone())));
        return Some(dev.disk.clone());
    }
    if let Some(file) = &dev.loop_backing_file {
        stack
            .layers
            .push(layer(&dev.name, "loop", Some(file.clone())));
        return device_of_file(sys, Path::new(file));
    }
    let slaves = list_dir(&sys.join("class/block").join(&dev.name).join("slaves"));
    let first = slaves.first()?.clone();
    let dir = sys.join("class/block").join(&dev.name);
    if dev.name.starts_with("dm-") {
        let uuid = attr(&dir.join("dm/uuid")).unwrap_or_default();
        stack.encrypted |= uuid.starts_with("CRYPT-");
        stack
            .layers
            .push(layer(&dev.name, "dm", attr(&dir.join("dm/name"))));
    } else {
        let kind = if dev.name.starts_with("md") {
            "md"
        } else {
            "stacked"
        };
        stack
            .layers
            .push(layer(&dev.name, kind, Some(slaves.join(","))));
    }
    Some(first)
}

fn layer(name: &str, kind: &str, detail: Option<String>) -> Layer {
    Layer {
        name: name.to_string(),
        kind: kind.to_string(),
        detail,
    }
}

/// The block device holding the file system `file` lives on.
fn device_of_file(sys: &Path, file: &Path) -> Option<String> {
    let st = rustix::fs::stat(file).ok()?;
    let (major, minor) = (rustix::fs::major(st.st_dev), rustix::fs::minor(st.st_dev));
    from_dev_t_in(sys, major, minor).ok().map(|d| d.name)
}

/// Sorted entry names of a directory; empty when it cannot be read.
pub(crate) fn list_dir(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|it| {
            it.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// The canonical sysfs directory of device `name`.
pub fn device_dir(sys: &Path, name: &str) -> Option<PathBuf> {
    std::fs::canonicalize(sys.join("class/block").join(name)).ok()
}

/// Reads the facts of whole disk `name`.
pub fn facts_in(sys: &Path, name: &str) -> Option<BlockFacts> {
    let dev = from_name_in(sys, name).ok()?;
    let dir = device_dir(sys, name)?;
    let queue = dir.join("queue");
    let device = dir.join("device");
    Some(BlockFacts {
        name: dev.name.clone(),
        dev: format!("{}:{}", dev.major, dev.minor),
        size_bytes: dev.size_bytes,
        logical_block_size: dev.logical_block_size,
        physical_block_size: dev.physical_block_size,
        rotational: dev.rotational,
        max_sectors_kb: attr_num(&queue.join("max_sectors_kb")),
        max_hw_sectors_kb: attr_num(&queue.join("max_hw_sectors_kb")),
        nr_requests: attr_num(&queue.join("nr_requests")),
        scheduler: attr(&queue.join("scheduler")).and_then(|s| selected_scheduler(&s)),
        discard: attr_num::<u64>(&queue.join("discard_max_bytes")).map(|n| n > 0),
        write_cache: attr(&queue.join("write_cache")),
        vendor: attr(&device.join("vendor")),
        model: attr(&device.join("model")),
        revision: attr(&device.join("rev")).or_else(|| attr(&device.join("firmware_rev"))),
        serial: attr(&device.join("serial")).or_else(|| vpd_serial(&device.join("vpd_pg80"))),
    })
}

/// The scheduler in brackets: `mq-deadline [none]` → `none`. A queue
/// without a choice prints `none` alone.
pub fn selected_scheduler(text: &str) -> Option<String> {
    if let Some(start) = text.find('[') {
        let end = text[start..].find(']')? + start;
        return Some(text[start + 1..end].to_string());
    }
    let words: Vec<&str> = text.split_whitespace().collect();
    (words.len() == 1).then(|| words[0].to_string())
}

/// The unit serial number page (SCSI VPD 0x80): a 4-byte header, then the
/// serial as ASCII.
fn vpd_serial(path: &Path) -> Option<String> {
    let bytes = std::fs::read(path).ok()?;
    let text = String::from_utf8_lossy(bytes.get(4..)?).trim().to_string();
    let text = text.trim_matches(char::from(0)).trim().to_string();
    (!text.is_empty()).then_some(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::fixture::Tree;

    #[test]
    fn scheduler_choice() {
        assert_eq!(selected_scheduler("mq-deadline [none]").unwrap(), "none");
        assert_eq!(selected_scheduler("[bfq] none").unwrap(), "bfq");
        assert_eq!(selected_scheduler("none").unwrap(), "none");
        assert_eq!(selected_scheduler("a b"), None);
    }

    #[test]
    fn partition_leads_to_its_disk() {
        let t = Tree::new();
        let disk = t.disk("pci0000:00/0000:00:05.0/virtio2", "vdb", "254:16", 2048);
        t.partition(&disk, "vdb1", "254:17", 1, 1024);
        t.file(&format!("{disk}/queue/max_sectors_kb"), "1280");
        t.file(&format!("{disk}/queue/scheduler"), "mq-deadline [none]");
        let stack = stack_in(t.root(), "vdb1");
        assert_eq!(stack.bottom.as_deref(), Some("vdb"));
        assert_eq!(
            stack.layers,
            vec![layer("vdb1", "partition", Some("vdb".into()))]
        );
        let f = facts_in(t.root(), "vdb").unwrap();
        assert_eq!(f.dev, "254:16");
        assert_eq!(f.size_bytes, 2048 * 512);
        assert_eq!(f.max_sectors_kb, Some(1280));
        assert_eq!(f.scheduler.as_deref(), Some("none"));
        assert_eq!(f.max_hw_sectors_kb, None);
        assert_eq!(f.serial, None);
    }

    /// virtio-blk's INT_MAX KiB is the driver's "no limit", not a limit
    /// of 2 TiB per request; a real limit reads as one.
    #[test]
    fn a_placeholder_hardware_limit_is_none_stated() {
        let t = Tree::new();
        let disk = t.disk("pci0000:00/0000:00:05.0/virtio2", "vdb", "254:16", 2048);
        for (text, limit) in [
            ("2147483647", HardwareLimit::NoneStated),
            ("4294967295", HardwareLimit::NoneStated),
            ("32767", HardwareLimit::Kib(32767)),
            ("junk", HardwareLimit::Unknown),
        ] {
            t.file(&format!("{disk}/queue/max_hw_sectors_kb"), text);
            let f = facts_in(t.root(), "vdb").unwrap();
            assert_eq!(f.hardware_limit(), limit, "{text}");
        }
    }

    #[test]
    fn dm_crypt_over_partition() {
        let t = Tree::new();
        let disk = t.disk(
            "pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:0",
            "sda",
            "8:0",
            4096,
        );
        t.partition(&disk, "sda2", "8:2", 2, 2048);
        t.disk("virtual", "dm-0", "253:0", 2000);
        t.link(
            "devices/virtual/block/dm-0/slaves/sda2",
            &format!("{disk}/sda2"),
        );
        t.file("devices/virtual/block/dm-0/dm/uuid", "CRYPT-LUKS2-abc-root");
        t.file("devices/virtual/block/dm-0/dm/name", "root");
        let vpd = t.root().join(format!("{disk}/device/vpd_pg80"));
        std::fs::create_dir_all(vpd.parent().unwrap()).unwrap();
        std::fs::write(&vpd, b"\x00\x80\x00\x14    S3Z9NB0K123456X\x00").unwrap();
        let stack = stack_in(t.root(), "dm-0");
        assert!(stack.encrypted);
        assert_eq!(stack.bottom.as_deref(), Some("sda"));
        assert_eq!(stack.layers.len(), 2);
        assert_eq!(stack.layers[0], layer("dm-0", "dm", Some("root".into())));
        let f = facts_in(t.root(), "sda").unwrap();
        assert_eq!(f.serial.as_deref(), Some("S3Z9NB0K123456X"));
    }
}
