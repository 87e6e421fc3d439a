//! The identity every result carries, and the device key that links the
//! runs of one device over time.
//!
//! The key prefers what the device itself says it is: an SD card's CID, or a
//! serial number. Without one it falls back to model, size and transport,
//! which can merge two identical devices but never splits one.
//!
//! A device stacked on the medium (a partition, a loop device, a dm or md
//! device) is a device of its own: it has its own size, and what it
//! measures is not the medium's speed (a loop reads a file through a file
//! system and perhaps the page cache; dm-crypt encrypts; md spreads over
//! members). So it gets a key of its own, made of what makes that layer
//! itself and stays put from one run to the next (a partition's number and
//! start; a loop's backing file by inode, not by loop number; a dm or md
//! UUID), over the key of what lies beneath. Runs on `loop0` and runs in a
//! directory of the disk beneath are then never one history.

use super::block::{self, BlockFacts, Layer, LayerKind};
use super::fs::{self, FsInfo};
use super::host::{self, HostFacts};
use super::link::{self, Interface};
use super::mmc::{self, MmcInfo};
use super::nvme::{self, NvmeInfo};
use super::usb::{self, UsbInfo};
use crate::probe::sysfs::{self, from_dev_t_in};
use crate::units::format_size;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Who the measured device is, what it sits behind, and where.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DeviceIdentity {
    /// Links the runs of one device: `cid:...`, `serial:...`, `model:...`.
    pub key: String,
    /// A name for people: "SanDisk SD08G, 7.4 GiB".
    pub label: String,
    /// The path probed.
    pub target: String,
    #[serde(flatten)]
    pub device: DeviceFacts,
    /// The file system the target lives on; null for a block device.
    pub filesystem: Option<FsInfo>,
    /// The machine it was measured on.
    pub host: HostFacts,
}

/// What sysfs says about a block device and the medium beneath it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DeviceFacts {
    /// Kernel name of the device the target is on (a partition, a loop).
    pub device: Option<String>,
    /// Layers passed on the way down to the medium.
    pub stack: Vec<Layer>,
    /// The whole disk at the bottom.
    pub block: Option<BlockFacts>,
    /// The device itself when it is a layer above the medium (a partition,
    /// loop, dm or md device): its own size, and its rotational flag as the
    /// kernel reports it for that device; null when the device is the whole
    /// disk (then `block` is it).
    #[serde(default)]
    pub top: Option<BlockFacts>,
    /// The link the device sits behind (USB, SD/MMC, NVMe, SATA), with what it
    /// can carry; null when not known.
    pub interface: Option<Interface>,
    /// The USB device the disk hangs from; null when not on USB.
    pub usb: Option<UsbInfo>,
    /// The SD/MMC card's registers; null when not an SD/MMC card.
    pub mmc: Option<MmcInfo>,
    /// The NVMe controller; null when not NVMe.
    pub nvme: Option<NvmeInfo>,
    /// A dm-crypt layer was passed.
    #[serde(default)]
    pub encrypted: bool,
}

/// Probes the target at `path` with sysfs at `sys`.
pub fn identify_in(sys: &Path, path: &Path) -> DeviceIdentity {
    let (name, raw) = device_name_of(sys, path);
    let device = name.map(|n| describe_in(sys, &n)).unwrap_or_default();
    let filesystem = if raw {
        None
    } else {
        sysfs::mount_of(path)
            .ok()
            .flatten()
            .map(|m| fs::with_space(fs::from_mount(&m, device.encrypted), path))
    };
    let host = host::this_host();
    DeviceIdentity {
        key: device_key(&device, &host.hostname, path),
        label: simulated_label(path).unwrap_or_else(|| label(&device, filesystem.as_ref())),
        target: path.display().to_string(),
        device,
        filesystem,
        host,
    }
}

/// The kernel name of the device beneath `path`, and whether `path` is the
/// device node itself.
fn device_name_of(sys: &Path, path: &Path) -> (Option<String>, bool) {
    let Ok(st) = rustix::fs::stat(path) else {
        return (None, false);
    };
    let raw = rustix::fs::FileType::from_raw_mode(st.st_mode).is_block_device();
    let dev = if raw { st.st_rdev } else { st.st_dev };
    let found = from_dev_t_in(sys, rustix::fs::major(dev), rustix::fs::minor(dev));
    (found.ok().map(|d| d.name), raw)
}

/// Everything sysfs under `sys` says about device `name` and its medium.
pub fn describe_in(sys: &Path, name: &str) -> DeviceFacts {
    let stack = block::stack_in(sys, name);
    let top = if stack.layers.is_empty() {
        None
    } else {
        block::facts_in(sys, name)
    };
    let mut facts = DeviceFacts {
        device: Some(name.to_string()),
        stack: stack.layers,
        top,
        encrypted: stack.encrypted,
        ..DeviceFacts::default()
    };
    let Some(bottom) = stack.bottom else {
        return facts;
    };
    facts.block = block::facts_in(sys, &bottom);
    facts.interface = link::disk_interface(sys, &bottom);
    if let Some(dir) = block::device_dir(sys, &bottom) {
        facts.usb = usb::usb_device_dir(sys, &dir).map(|d| usb::read(&d));
        facts.mmc = mmc::card_dir(&dir).map(|d| mmc::read(&d));
        facts.nvme = nvme::controller_dir(&dir).map(|d| nvme::read(&d));
    }
    facts
}

/// The key linking runs of one device: for the medium its CID, else a
/// serial, else model, size and transport; for a device stacked on it, the
/// stack's own keys over that (see the module's doc); else the host and
/// path.
pub fn device_key(d: &DeviceFacts, hostname: &str, path: &Path) -> String {
    let medium = medium_key(d, hostname);
    let stacked = d.stack.iter().rev().fold(medium, |below, layer| {
        Some(layer_key(layer, below, hostname))
    });
    stacked.unwrap_or_else(|| format!("path:{hostname}:{}", path.display()))
}

/// The key of the medium at the bottom of the stack.
fn medium_key(d: &DeviceFacts, hostname: &str) -> Option<String> {
    if let Some(cid) = d.mmc.as_ref().and_then(|m| m.cid.clone()) {
        return Some(format!("cid:{cid}"));
    }
    let serial = d
        .nvme
        .as_ref()
        .and_then(|n| n.serial.clone())
        .or_else(|| d.block.as_ref().and_then(|b| b.serial.clone()))
        .or_else(|| d.usb.as_ref().and_then(|u| u.serial.clone()));
    if let Some(s) = serial {
        return Some(format!("serial:{s}"));
    }
    let transport = d.interface.as_ref().map_or("unknown", |i| i.kind.as_str());
    d.block.as_ref().map(|b| {
        let model = b
            .model
            .clone()
            .unwrap_or_else(|| format!("{}@{hostname}", b.name));
        format!("model:{model}|{}|{transport}", b.size_bytes)
    })
}

/// The key of one layer over the key of what lies beneath it (`None`
/// when nothing known does: a loop's file on tmpfs). What names the layer
/// is what survives a reboot or a re-attachment: the partition's number
/// and start, the loop's file (inode and offset, not the loop's number),
/// the dm or md UUID (which needs nothing beneath to be unique).
fn layer_key(layer: &Layer, below: Option<String>, hostname: &str) -> String {
    let uuid = layer.uuid.as_deref().filter(|u| !u.is_empty());
    let own = match layer.kind {
        LayerKind::Dm | LayerKind::Md if uuid.is_some() => {
            return format!("{}:{}", layer.kind.as_str(), uuid.unwrap_or_default());
        }
        LayerKind::Partition => format!(
            "part:{}@{}",
            layer
                .number
                .map_or_else(|| layer.name.clone(), |n| n.to_string()),
            layer.offset_bytes.unwrap_or(0)
        ),
        LayerKind::Loop => {
            let file = match layer.inode {
                Some(ino) => format!("ino={ino}"),
                None => format!("file={}", layer.detail.as_deref().unwrap_or("?")),
            };
            match layer.offset_bytes.filter(|&o| o > 0) {
                Some(off) => format!("loop:{file},off={off}"),
                None => format!("loop:{file}"),
            }
        }
        LayerKind::Dm => format!("dm:{}", layer.detail.as_deref().unwrap_or(&layer.name)),
        kind => format!("{}:{}", kind.as_str(), layer.name),
    };
    match below {
        Some(b) => format!("{own}/{b}"),
        // Nothing beneath to anchor it (a file on tmpfs): the path and the
        // host keep two such loops apart.
        None => match (layer.kind, &layer.detail) {
            (LayerKind::Loop, Some(file)) if layer.inode.is_some() => {
                format!("{own}/{file}@{hostname}")
            }
            _ => format!("{own}@{hostname}"),
        },
    }
}

/// A short name for people: the medium's, or for a device stacked on it
/// the layer's own ("loop0 over disk.img, 256 MiB", "SD SanDisk SD08G
/// partition 1, 3.70 GiB").
pub fn label(d: &DeviceFacts, fs: Option<&FsInfo>) -> String {
    if let (Some(top), Some(layer)) = (&d.top, d.stack.first()) {
        return format!(
            "{}, {}",
            layer_name(layer, d, fs),
            format_size(top.size_bytes)
        );
    }
    let name = medium_name(d, fs);
    match d.block.as_ref().map(|b| format_size(b.size_bytes)) {
        Some(s) => format!("{name}, {s}"),
        None => name,
    }
}

/// How a layer is called: a partition by its medium and number, a loop by
/// its file, a dm device by its name.
fn layer_name(layer: &Layer, d: &DeviceFacts, fs: Option<&FsInfo>) -> String {
    match (layer.kind, &layer.detail) {
        (LayerKind::Partition, _) if d.stack.len() == 1 => match layer.number {
            Some(n) => format!("{} partition {n}", medium_name(d, fs)),
            None => format!("{} ({})", layer.name, medium_name(d, fs)),
        },
        (LayerKind::Loop, Some(file)) => {
            let file = Path::new(file)
                .file_name()
                .map_or_else(|| file.clone(), |n| n.to_string_lossy().into_owned());
            format!("{} over {file}", layer.name)
        }
        (LayerKind::Dm, Some(name)) => format!("{} ({name})", layer.name),
        _ => layer.name.clone(),
    }
}

/// The medium's name without its size.
fn medium_name(d: &DeviceFacts, fs: Option<&FsInfo>) -> String {
    let name = if let Some(m) = &d.mmc {
        let maker = m
            .manufacturer
            .clone()
            .or_else(|| m.manfid.map(|id| format!("Mfg 0x{id:02x}")));
        join(&[m.card_type.clone(), maker, m.name.clone()])
    } else if let Some(n) = &d.nvme {
        n.model.clone().unwrap_or_default()
    } else if let Some(u) = &d.usb {
        let b = d.block.as_ref();
        let vendor = u
            .manufacturer
            .clone()
            .or_else(|| b.and_then(|b| b.vendor.clone()));
        let model = u
            .product
            .clone()
            .or_else(|| b.and_then(|b| b.model.clone()));
        join(&[Some("USB".into()), vendor, model])
    } else if let Some(b) = &d.block {
        // virtio and some PCI devices give a numeric vendor id there.
        let vendor = b.vendor.clone().filter(|v| !v.starts_with("0x"));
        join(&[vendor, b.model.clone()])
    } else {
        String::new()
    };
    match (name.is_empty(), &d.block) {
        (false, _) => name,
        (true, Some(b)) => b.name.clone(),
        (true, None) => fs.map_or("unknown device".into(), |f| {
            format!("{} file system", f.fstype)
        }),
    }
}

/// "simulated card, 8 GiB" for a `sim:` target: it has no device to
/// probe, and "unknown device" would hide that it is not hardware.
fn simulated_label(path: &Path) -> Option<String> {
    let spec = path.to_str()?.strip_prefix("sim:")?;
    let claimed = crate::engine::sim::SimParams::parse(spec)
        .map(|p| format!(", {}", crate::units::format_size(p.size)))
        .unwrap_or_default();
    Some(format!("simulated card{claimed}"))
}

fn join(parts: &[Option<String>]) -> String {
    parts
        .iter()
        .flatten()
        .cloned()
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
#[path = "identity_tests.rs"]
mod tests;
