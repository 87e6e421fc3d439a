//! The link a block device sits behind and its practical ceiling.
//!
//! A figure above what the link can carry did not come from the medium (a
//! cache answered); a figure close to it says the link, not the device, set
//! the pace. Each ceiling below is the signalling rate less the line coding
//! and a typical protocol overhead, and the basis is noted beside it. Where
//! the link cannot be read, the kind is known but the ceiling is `None`.

use super::{attr, block, ios, mmc, nvme, usb};
use crate::probe::sysfs::BlockDevice;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The interface between the host and the medium.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Interface {
    /// `usb`, `mmc`, `sata`, `nvme`, `virtio`, `scsi`, `loop`, `zram`, ...
    pub kind: String,
    /// For people: "USB 2.0 High Speed (480 Mb/s)", "PCIe 3.0 x4", ...
    pub description: String,
    /// Negotiated signalling rate in Mbit/s, when known; written as MB/s
    /// (an eighth of it).
    #[serde(
        rename = "link_mb_per_s",
        with = "crate::units::wire::opt_mbit_as_mb_per_s"
    )]
    #[schemars(with = "Option<f64>")]
    pub link_mbit_s: Option<f64>,
    /// Practical payload ceiling in MB/s (10^6 B/s) after protocol
    /// overhead, when known. A figure above it did not come through the
    /// link (a cache answered).
    #[serde(rename = "practical_limit_mb_per_s", alias = "practical_limit_mb_s")]
    pub practical_limit_mb_s: Option<f64>,
}

/// The interface of `dev`, read from the live sysfs.
pub fn interface_of(dev: &BlockDevice) -> Option<Interface> {
    interface_in(Path::new(super::SYSFS), dev)
}

/// The interface of `dev` under a sysfs tree rooted at `sys_root` (tests
/// use fixture trees): the stack is followed down to the medium first.
pub fn interface_in(sys_root: &Path, dev: &BlockDevice) -> Option<Interface> {
    let bottom = block::stack_in(sys_root, &dev.name).bottom?;
    disk_interface(sys_root, &bottom)
}

/// What a disk without an SD bus sits on (or in).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Transport {
    /// NVMe over PCIe.
    Nvme,
    /// SATA.
    Sata,
    /// Paravirtual: the host's storage sets the pace.
    Virtio,
    /// A loop device: a file's blocks.
    Loop,
    /// Compressed RAM.
    Zram,
    /// A RAM disk.
    Ram,
    /// A network block device.
    Nbd,
}

/// Where a whole disk is attached, with what its link is read from.
#[derive(Debug, Clone, PartialEq)]
pub enum Attachment {
    /// On USB: the USB device's directory.
    Usb(PathBuf),
    /// An SD/MMC card: the card's directory.
    Mmc(PathBuf),
    /// NVMe: the disk's device directory.
    Nvme(PathBuf),
    /// SATA, on ATA port `N`.
    Sata(u32),
    /// Memory, a file, a network or a hypervisor: no link of its own.
    NoLink(Transport),
}

/// Where whole disk `name` is attached; `None` when sysfs does not say.
pub fn attachment(sys: &Path, name: &str) -> Option<Attachment> {
    for (prefix, t) in [
        ("loop", Transport::Loop),
        ("zram", Transport::Zram),
        ("ram", Transport::Ram),
        ("nbd", Transport::Nbd),
    ] {
        if name.starts_with(prefix) {
            return Some(Attachment::NoLink(t));
        }
    }
    let dir = block::device_dir(sys, name)?;
    if let Some(u) = usb::usb_device_dir(sys, &dir) {
        return Some(Attachment::Usb(u));
    }
    if let Some(card) = mmc::card_dir(&dir) {
        return Some(Attachment::Mmc(card));
    }
    if nvme::controller_dir(&dir).is_some() {
        return Some(Attachment::Nvme(dir));
    }
    if let Some(port) = ata_port(&dir) {
        return Some(Attachment::Sata(port));
    }
    has_component(&dir, "virtio").then_some(Attachment::NoLink(Transport::Virtio))
}

/// The interface of whole disk `name`.
pub fn disk_interface(sys: &Path, name: &str) -> Option<Interface> {
    Some(match attachment(sys, name)? {
        Attachment::NoLink(Transport::Virtio) => no_ceiling(
            "virtio",
            "virtio (paravirtual; the host's storage sets the pace)",
        ),
        Attachment::NoLink(t) => {
            let kind = match t {
                Transport::Loop => "loop",
                Transport::Zram => "zram",
                Transport::Ram => "ram",
                Transport::Nbd => "nbd",
                Transport::Nvme => "nvme",
                Transport::Sata => "sata",
                Transport::Virtio => "virtio",
            };
            no_ceiling(
                kind,
                &format!("{kind} device (memory or file backed; no link)"),
            )
        }
        Attachment::Usb(u) => usb_link(usb::read(&u).speed_mbit_s),
        Attachment::Mmc(card) => {
            let ios = mmc::read(&card).host.and_then(|h| ios::read(sys, &h).ok());
            mmc_link(ios.as_deref())
        }
        Attachment::Nvme(dir) => pcie_link(nvme::pci_dir(sys, &dir).as_deref()),
        Attachment::Sata(port) => {
            let spd = attr(&sys.join(format!("class/ata_link/link{port}/sata_spd")));
            sata_link(spd.as_deref())
        }
    })
}

fn no_ceiling(kind: &str, description: &str) -> Interface {
    Interface {
        kind: kind.to_string(),
        description: description.to_string(),
        link_mbit_s: None,
        practical_limit_mb_s: None,
    }
}

/// True when a component of `dir` starts with `prefix`.
fn has_component(dir: &Path, prefix: &str) -> bool {
    dir.components()
        .any(|c| c.as_os_str().to_string_lossy().starts_with(prefix))
}

/// The ATA port number from a path component `ataN`.
fn ata_port(dir: &Path) -> Option<u32> {
    dir.components().find_map(|c| {
        let s = c.as_os_str().to_string_lossy();
        s.strip_prefix("ata")?.parse().ok()
    })
}

/// USB, from the negotiated speed in Mb/s.
pub fn usb_link(speed: Option<f64>) -> Interface {
    // Ceilings for bulk-only mass storage (BOT) and UAS in practice:
    // USB 1.1 full speed moves about 1 MB/s of payload (12 Mb/s, frame
    // scheduling); USB 2.0 high speed about 40 MB/s (480 Mb/s is 60 MB/s
    // raw, but microframe scheduling and BOT's command/status phases leave
    // 35-42 MB/s); USB 3.x lose 8b/10b (Gen 1) or 128b/132b (Gen 2) coding
    // plus about 10% protocol.
    let (name, limit) = match speed.map(|s| s as u64) {
        Some(1) => ("USB 1.0 Low Speed", Some(0.15)),
        Some(12) => ("USB 1.1 Full Speed", Some(1.0)),
        Some(480) => ("USB 2.0 High Speed", Some(40.0)),
        Some(5000) => ("USB 3.x Gen 1 (SuperSpeed)", Some(450.0)),
        Some(10000) => ("USB 3.x Gen 2 (SuperSpeed+)", Some(1000.0)),
        Some(20000) => ("USB 3.2 Gen 2x2", Some(2000.0)),
        _ => ("USB (speed unknown)", None),
    };
    let description = match speed {
        Some(s) => format!("{name} ({s} Mb/s)"),
        None => name.to_string(),
    };
    Interface {
        kind: "usb".into(),
        description,
        link_mbit_s: speed,
        practical_limit_mb_s: limit,
    }
}

/// SD/MMC bus mode from debugfs `ios` (root only); unknown without it.
pub fn mmc_link(ios: Option<&str>) -> Interface {
    let Some(text) = ios else {
        return no_ceiling("mmc", "SD/MMC (bus mode unknown: debugfs ios not readable)");
    };
    let mode = ios::parse(text);
    let mbit = mode.and_then(|m| m.link_mbit_s());
    // The kernel's own name of the mode, for people.
    let timing = ios::field(text, "timing spec")
        .and_then(ios::parenthesised)
        .unwrap_or("unknown timing");
    Interface {
        kind: "mmc".into(),
        description: match mbit {
            Some(m) => format!("SD/MMC {timing}, {m:.0} Mb/s"),
            None => format!("SD/MMC {timing}"),
        },
        link_mbit_s: mbit,
        practical_limit_mb_s: mode.and_then(|m| m.ceiling_mb_s()),
    }
}

/// SATA, from `sata_spd` ("6.0 Gbps").
pub fn sata_link(spd: Option<&str>) -> Interface {
    let gbps: Option<f64> = spd.and_then(|s| s.split_whitespace().next()?.parse().ok());
    // 8b/10b coding leaves rate/10 bytes per second; FIS framing and
    // command overhead about 7% more (SATA III drives top out near 560 MB/s).
    let limit = gbps.map(|g| (g * 1000.0 / 10.0 * 0.93).round());
    Interface {
        kind: "sata".into(),
        description: match gbps {
            Some(g) => format!("SATA {g:.1} Gb/s"),
            None => "SATA (link speed unknown)".into(),
        },
        link_mbit_s: gbps.map(|g| g * 1000.0),
        practical_limit_mb_s: limit,
    }
}

/// Payload MB/s per PCIe lane at a transfer rate in GT/s, after line coding.
fn pcie_lane_mb_s(gt_s: f64) -> Option<(&'static str, f64)> {
    let g = (gt_s * 10.0).round() as u32;
    Some(match g {
        25 => ("1.0", 250.0),
        50 => ("2.0", 500.0),
        80 => ("3.0", 984.6),
        160 => ("4.0", 1969.2),
        320 => ("5.0", 3938.5),
        640 => ("6.0", 7563.0),
        _ => return None,
    })
}

/// PCIe, from the function's `current_link_speed` ("8.0 GT/s PCIe") and
/// `current_link_width`.
pub fn pcie_link(pci: Option<&Path>) -> Interface {
    let speed: Option<f64> = pci
        .and_then(|p| attr(&p.join("current_link_speed")))
        .and_then(|s| s.split_whitespace().next()?.parse().ok());
    let width: Option<u32> = pci.and_then(|p| attr(&p.join("current_link_width"))?.parse().ok());
    let lane = speed.and_then(pcie_lane_mb_s);
    // TLP headers and flow control cost about 10% at the usual 256-byte
    // payload size.
    let limit = lane
        .zip(width)
        .map(|((_, mb), w)| (mb * f64::from(w) * 0.9).round());
    let description = match (lane, width) {
        (Some((generation, _)), Some(w)) => format!("NVMe over PCIe {generation} x{w}"),
        _ => "NVMe (PCIe link unknown)".into(),
    };
    Interface {
        kind: "nvme".into(),
        description,
        link_mbit_s: speed.zip(width).map(|(s, w)| s * 1000.0 * f64::from(w)),
        practical_limit_mb_s: limit,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usb_speeds() {
        assert_eq!(usb_link(Some(480.0)).practical_limit_mb_s, Some(40.0));
        assert_eq!(
            usb_link(Some(480.0)).description,
            "USB 2.0 High Speed (480 Mb/s)"
        );
        assert_eq!(
            usb_link(Some(12.0)).description,
            "USB 1.1 Full Speed (12 Mb/s)"
        );
        assert_eq!(usb_link(Some(5000.0)).practical_limit_mb_s, Some(450.0));
        assert_eq!(usb_link(None).practical_limit_mb_s, None);
    }

    #[test]
    fn mmc_ios() {
        let ios = "clock:\t\t50000000 Hz\nactual clock:\t50000000 Hz\nvdd:\t\t21 (3.3 ~ 3.4 V)\nbus mode:\t2 (push-pull)\nchip select:\t0 (don't care)\npower mode:\t2 (on)\nbus width:\t2 (4 bits)\ntiming spec:\t2 (sd high-speed)\nsignal voltage:\t0 (3.30 V)\n";
        let i = mmc_link(Some(ios));
        assert_eq!(i.link_mbit_s, Some(200.0));
        assert_eq!(i.practical_limit_mb_s, Some(22.5));
        assert_eq!(i.description, "SD/MMC sd high-speed, 200 Mb/s");
        assert_eq!(mmc_link(None).practical_limit_mb_s, None);
    }

    #[test]
    fn sata_speeds() {
        assert_eq!(
            sata_link(Some("6.0 Gbps")).practical_limit_mb_s,
            Some(558.0)
        );
        assert_eq!(sata_link(Some("<unknown>")).practical_limit_mb_s, None);
    }
}
