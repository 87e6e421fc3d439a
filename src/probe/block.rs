//! The block device beneath a target and the stack above its medium.
//!
//! A file lives on a partition, a partition on a disk; a device-mapper or md
//! device sits on `slaves/`; a loop device reads a backing file that lives on
//! yet another device. The medium that sets the speed is at the bottom, so the
//! probe walks down to it and records every layer passed on the way.

use super::{attr, attr_num};
use crate::probe::sysfs::{BlockDevice, SECTOR_BYTES, from_dev_t_in, from_name_in};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// How deep a stack may be before the walk gives up (a loop cycle).
const MAX_DEPTH: usize = 16;

/// What a layer is over what lies beneath it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LayerKind {
    /// A partition of a disk.
    Partition,
    /// A device-mapper device (LVM, dm-crypt, dm-linear, dm-cache).
    Dm,
    /// A software RAID (md) array.
    Md,
    /// A loop device over a file.
    Loop,
    /// A bcache device: a slow disk behind a fast cache device.
    Bcache,
    /// Any other device stacked on `slaves/`.
    Stacked,
}

impl LayerKind {
    pub fn as_str(self) -> &'static str {
        match self {
            LayerKind::Partition => "partition",
            LayerKind::Dm => "dm",
            LayerKind::Md => "md",
            LayerKind::Loop => "loop",
            LayerKind::Bcache => "bcache",
            LayerKind::Stacked => "stacked",
        }
    }
}

/// A cache inside the stack: something between the target and the medium
/// that can answer in its place, so figures taken through it may not be
/// the medium's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StackCache {
    /// A loop device without direct I/O: its file goes through the host's
    /// page cache.
    PageCache,
    /// A loop device whose backing file lives in RAM (tmpfs, ramfs).
    Memory,
    /// A device-mapper cache (LVM's dm-cache or dm-writecache).
    DmCache,
    /// A bcache device.
    Bcache,
}

impl StackCache {
    /// Why figures through this layer may not be the medium's.
    pub fn describe(self) -> &'static str {
        match self {
            StackCache::PageCache => "read through the page cache (loop direct I/O off)",
            StackCache::Memory => "its file is in RAM",
            StackCache::DmCache => "a device-mapper cache",
            StackCache::Bcache => "a bcache cache",
        }
    }
}

/// One layer passed on the way down to the medium.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Layer {
    /// Kernel name of the layer's device (`sda1`, `dm-0`, `loop0`).
    pub name: String,
    /// `partition`, `dm`, `md`, `loop`, `bcache`, `stacked`.
    pub kind: LayerKind,
    /// The partition's disk, the dm target's name, the loop's backing file,
    /// the members of an md or bcache device.
    pub detail: Option<String>,
    /// Size of this layer's device, bytes; null in results from before it
    /// was recorded.
    #[serde(default)]
    pub size_bytes: Option<u64>,
    /// Kernel name of the device directly beneath: the partition's disk,
    /// the device holding the loop's backing file, the first member of a
    /// dm, md or bcache device; null when there is none (a backing file on
    /// tmpfs) or it is not known.
    #[serde(default)]
    pub below: Option<String>,
    /// The partition's number; null for other layers.
    #[serde(default)]
    pub number: Option<u32>,
    /// Where the layer begins in what lies beneath, bytes: a partition's
    /// start, a loop device's offset into its file.
    #[serde(default)]
    pub offset_bytes: Option<u64>,
    /// The loop's backing file's inode number (with `below`, what keeps a
    /// loop's key when it is attached again); null for other layers.
    #[serde(default)]
    pub inode: Option<u64>,
    /// The file system type holding the loop's backing file (`ext4`,
    /// `tmpfs`); null for other layers or when not found.
    #[serde(default)]
    pub file_system: Option<String>,
    /// The dm or md device's UUID (`dm/uuid`, `md/uuid`); null when the
    /// kernel gives none.
    #[serde(default)]
    pub uuid: Option<String>,
    /// Whether the loop device reads its file with direct I/O (`loop/dio`);
    /// null for other layers.
    #[serde(default)]
    pub direct_io: Option<bool>,
    /// The cache this layer is, when it can answer for what lies beneath;
    /// null when it passes every request down.
    #[serde(default)]
    pub cache: Option<StackCache>,
}

impl Layer {
    fn new(name: &str, size_bytes: u64) -> Layer {
        Layer {
            name: name.to_string(),
            kind: LayerKind::Stacked,
            detail: None,
            size_bytes: Some(size_bytes),
            below: None,
            number: None,
            offset_bytes: None,
            inode: None,
            file_system: None,
            uuid: None,
            direct_io: None,
            cache: None,
        }
    }

    /// The layer for people, without its name or the device beneath:
    /// `partition 1`, `loop, file /srv/disk.img on ext4, read through the
    /// page cache (loop direct I/O off)`.
    pub fn describe(&self) -> String {
        let mut text = match self.kind {
            LayerKind::Partition => match self.number {
                Some(n) => format!("partition {n}"),
                None => "partition".to_string(),
            },
            LayerKind::Loop => {
                let file = self.detail.as_deref().unwrap_or("unknown file");
                match &self.file_system {
                    Some(fs) => format!("loop, file {file} on {fs}"),
                    None => format!("loop, file {file}"),
                }
            }
            LayerKind::Dm => match &self.detail {
                Some(name) => format!("dm {name}"),
                None => "dm".to_string(),
            },
            kind => kind.as_str().to_string(),
        };
        if let Some(cache) = self.cache {
            text.push_str(", ");
            text.push_str(cache.describe());
        }
        text
    }
}

/// The stack as one line, top first, ending at the medium:
/// `loop0 (loop, file /srv/a.img on ext4) → sda1 (partition 1) → sda`.
pub fn describe_stack(layers: &[Layer], bottom: Option<&str>) -> String {
    let mut parts: Vec<String> = layers
        .iter()
        .map(|l| format!("{} ({})", l.name, l.describe()))
        .collect();
    parts.extend(bottom.map(str::to_string));
    parts.join(" → ")
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
    /// Largest transfer the kernel sends now, KiB as sysfs gives it
    /// (`queue/max_sectors_kb`); written in bytes.
    #[serde(
        rename = "max_sectors_bytes",
        with = "crate::units::wire::opt_kib_as_bytes"
    )]
    #[schemars(with = "Option<u64>")]
    pub max_sectors_kb: Option<u64>,
    /// The hardware's largest transfer, KiB (`queue/max_hw_sectors_kb`),
    /// written in bytes; 2147483647 KiB means the driver states none.
    #[serde(
        rename = "max_hw_sectors_bytes",
        with = "crate::units::wire::opt_kib_as_bytes"
    )]
    #[schemars(with = "Option<u64>")]
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
            Down::To(next) => current = next,
            Down::Medium => {
                stack.bottom = Some(current);
                return stack;
            }
            Down::Nothing => return stack,
        }
    }
    stack
}

/// Where the walk goes after one device.
enum Down {
    /// To this device beneath.
    To(String),
    /// Nowhere: the device is the medium.
    Medium,
    /// Nowhere known: a layer whose file lives on no block device (tmpfs)
    /// or on one sysfs does not know.
    Nothing,
}

/// Records the layer `dev` is and says where the walk goes next.
fn step(sys: &Path, dev: &BlockDevice, stack: &mut Stack) -> Down {
    let dir = sys.join("class/block").join(&dev.name);
    let mut layer = Layer::new(&dev.name, dev.size_bytes);
    if dev.partition {
        layer.kind = LayerKind::Partition;
        layer.detail = Some(dev.disk.clone());
        layer.below = Some(dev.disk.clone());
        layer.number = attr_num(&dir.join("partition"));
        layer.offset_bytes = attr_num::<u64>(&dir.join("start")).map(|s| s * SECTOR_BYTES);
    } else if let Some(file) = &dev.loop_backing_file {
        loop_layer(sys, &dir, file, &mut layer);
    } else {
        let slaves = list_dir(&dir.join("slaves"));
        let Some(first) = slaves.first() else {
            return Down::Medium;
        };
        layer.below = Some(first.clone());
        layer.detail = Some(slaves.join(","));
        if dev.name.starts_with("dm-") {
            let uuid = attr(&dir.join("dm/uuid"));
            stack.encrypted |= uuid.as_deref().is_some_and(|u| u.starts_with("CRYPT-"));
            layer.kind = LayerKind::Dm;
            layer.detail = attr(&dir.join("dm/name"));
            layer.uuid = uuid;
            layer.cache = lvm_cache(sys, &slaves).then_some(StackCache::DmCache);
        } else if dev.name.starts_with("md") {
            layer.kind = LayerKind::Md;
            layer.uuid = attr(&dir.join("md/uuid"));
        } else if dev.name.starts_with("bcache") {
            layer.kind = LayerKind::Bcache;
            layer.cache = Some(StackCache::Bcache);
        }
    }
    let below = layer.below.clone();
    stack.layers.push(layer);
    below.map_or(Down::Nothing, Down::To)
}

/// File systems that keep their files in RAM.
const MEMORY_FILE_SYSTEMS: [&str; 2] = ["tmpfs", "ramfs"];

/// Fills in a loop layer: its file, where that file lives, and whether the
/// host's memory can answer for it (the file on tmpfs, or read without
/// direct I/O through the page cache).
fn loop_layer(sys: &Path, dir: &Path, file: &str, layer: &mut Layer) {
    layer.kind = LayerKind::Loop;
    layer.detail = Some(file.to_string());
    layer.offset_bytes = attr_num(&dir.join("loop/offset"));
    layer.direct_io = attr_num::<u8>(&dir.join("loop/dio")).map(|d| d != 0);
    let path = Path::new(file);
    if let Ok(st) = rustix::fs::stat(path) {
        layer.inode = Some(st.st_ino);
        let (major, minor) = (rustix::fs::major(st.st_dev), rustix::fs::minor(st.st_dev));
        layer.below = from_dev_t_in(sys, major, minor).ok().map(|d| d.name);
    }
    layer.file_system = crate::probe::sysfs::mount_of(path)
        .ok()
        .flatten()
        .map(|m| m.fstype);
    let in_memory = layer
        .file_system
        .as_deref()
        .is_some_and(|fs| MEMORY_FILE_SYSTEMS.contains(&fs));
    layer.cache = if in_memory {
        Some(StackCache::Memory)
    } else if layer.direct_io == Some(false) {
        Some(StackCache::PageCache)
    } else {
        None
    };
}

/// LVM names the hidden parts of a cached volume `<lv>_corig` (the slow
/// origin) and `<lv>_cdata` or `<lv>_cvol` (the fast cache). sysfs does not
/// give a dm device's target type, so these names are what shows a
/// dm-cache or dm-writecache from sysfs alone.
fn lvm_cache(sys: &Path, slaves: &[String]) -> bool {
    slaves.iter().any(|s| {
        attr(&sys.join("class/block").join(s).join("dm/name")).is_some_and(|n| {
            ["_corig", "_cdata", "_cvol", "_wcorig"]
                .iter()
                .any(|suffix| n.ends_with(suffix))
        })
    })
}

/// The caches in the stack beneath device `name` (itself included): what
/// can answer for the medium when a target on `name` is measured.
pub fn caches_in(sys: &Path, name: &str) -> Vec<Layer> {
    stack_in(sys, name)
        .layers
        .into_iter()
        .filter(|l| l.cache.is_some())
        .collect()
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

/// Reads the facts of device `name`: a whole disk, or a layer above one
/// (a partition shares its disk's queue, so its queue facts are the disk's).
pub fn facts_in(sys: &Path, name: &str) -> Option<BlockFacts> {
    let dev = from_name_in(sys, name).ok()?;
    let dir = device_dir(sys, name)?;
    let queue = device_dir(sys, &dev.disk)
        .unwrap_or_else(|| dir.clone())
        .join("queue");
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
        let part = &stack.layers[0];
        assert_eq!(stack.layers.len(), 1);
        assert_eq!(
            (part.kind, part.number, part.below.as_deref()),
            (LayerKind::Partition, Some(1), Some("vdb"))
        );
        assert_eq!(part.size_bytes, Some(1024 * 512));
        assert_eq!(
            describe_stack(&stack.layers, Some("vdb")),
            "vdb1 (partition 1) → vdb"
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
        let dm = &stack.layers[0];
        assert_eq!(
            (dm.kind, dm.detail.as_deref(), dm.uuid.as_deref()),
            (LayerKind::Dm, Some("root"), Some("CRYPT-LUKS2-abc-root"))
        );
        assert_eq!(dm.cache, None);
        let f = facts_in(t.root(), "sda").unwrap();
        assert_eq!(f.serial.as_deref(), Some("S3Z9NB0K123456X"));
    }
}
