//! The host bus a card ran on, as the kernel tells it: an SD/MMC host's
//! timing mode, data lines and clock (debugfs `ios`), a USB reader's
//! negotiated speed and driver, or what else the disk sits on; its
//! practical ceiling; and whether the host queued commands to the card.
//!
//! Why a module of its own: a class verdict is the card's only as far as
//! the host let it show itself. An SD card on a bus in default speed
//! (25 MHz, 4 lines: 12.5 MB/s) cannot show U3 however fast it is, and
//! random IOPS depend on whether commands were queued. The class result
//! carries this record so the verdict names its host; the LINK verdicts
//! take the same ceiling ([`super::link`] reads it from the same parse).
//!
//! What the kernel does not tell is unknown, with why, never guessed:
//! debugfs is root's; an SD card's command queue is not exposed by the
//! mainline kernel (an eMMC's is: the card's `cmdq_en`); a USB reader
//! queues commands only under the `uas` driver (UAS carries tagged
//! commands; the bulk-only `usb-storage` carries one at a time).

use super::ios::{self, IosUnread, MmcMode};
use super::link::{self, Attachment, Transport};
use super::{attr, block, mmc, usb};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The bus a class test ran over, its ceiling and its command queueing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HostBus {
    /// The bus, and its mode where the kernel tells it (`kind` names it).
    pub bus: Bus,
    /// The practical payload ceiling of the bus, MB/s; null when not
    /// known. The LINK verdicts are judged against it.
    pub ceiling_mb_per_s: Option<f64>,
    /// Whether the host queued commands to the card (`state` names it).
    pub command_queueing: Queueing,
}

/// The bus, by kind.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Bus {
    /// An SD/MMC host.
    SdMmc {
        /// The bus mode from debugfs `ios`; null when unread.
        mode: Option<MmcMode>,
        /// Why the mode is null; null when it was read.
        unread: Option<IosUnread>,
    },
    /// A USB reader or stick.
    Usb {
        /// The negotiated speed; null when the kernel does not say or
        /// names one this release does not know.
        speed: Option<UsbSpeed>,
        /// The driver of the USB interface; null when not read.
        driver: Option<UsbDriver>,
    },
    /// A simulated card (`sim:`).
    Simulated {
        /// The card's `link=`, MB/s; null when it has none.
        link_mb_per_s: Option<f64>,
    },
    /// Not an SD bus: what the disk sits on.
    NotSd {
        /// The transport.
        transport: Transport,
    },
    /// The bus could not be told.
    Unknown {
        /// Why.
        why: BusUnknown,
    },
}

/// Why the bus could not be told.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum BusUnknown {
    /// The target is no block device sysfs knows.
    NoDevice,
    /// sysfs does not say what the disk is attached to (SCSI, SAS, ...).
    NotRecognised,
}

/// A USB link's negotiated speed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum UsbSpeed {
    /// USB 1.0, 1.5 Mb/s.
    Low,
    /// USB 1.1, 12 Mb/s.
    Full,
    /// USB 2.0, 480 Mb/s.
    High,
    /// USB 3.x Gen 1, 5 Gb/s.
    Super,
    /// USB 3.x Gen 2, 10 Gb/s.
    SuperPlus,
    /// USB 3.2 Gen 2x2, 20 Gb/s.
    SuperPlusGen2x2,
}

impl UsbSpeed {
    /// The speed the kernel's `speed` attribute (Mb/s) names.
    pub fn from_mbit_s(mbit: f64) -> Option<UsbSpeed> {
        Some(match (mbit * 10.0).round() as u64 {
            15 => UsbSpeed::Low,
            120 => UsbSpeed::Full,
            4800 => UsbSpeed::High,
            50_000 => UsbSpeed::Super,
            100_000 => UsbSpeed::SuperPlus,
            200_000 => UsbSpeed::SuperPlusGen2x2,
            _ => return None,
        })
    }
}

/// The driver bound to a USB storage interface.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum UsbDriver {
    /// USB Attached SCSI: tagged commands, several in flight.
    Uas,
    /// Bulk-only transport: one command at a time.
    UsbStorage,
    /// Another driver.
    Other,
}

/// Whether the host queued commands to the card.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum Queueing {
    /// Commands were queued.
    On {
        /// What says so.
        from: QueueingFrom,
    },
    /// One command at a time.
    Off {
        /// What says so.
        from: QueueingFrom,
    },
    /// Not told.
    Unknown {
        /// Why.
        why: QueueingUnknown,
    },
    /// A simulated card: its model has no command queue.
    NotModelled,
}

/// What tells command queueing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum QueueingFrom {
    /// The card's `cmdq_en` in sysfs (an eMMC's command queue mode).
    CardCmdqEn,
    /// The `uas` driver.
    UasDriver,
    /// The `usb-storage` driver.
    UsbStorageDriver,
}

/// Why command queueing is not told.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum QueueingUnknown {
    /// An SD card: the kernel exposes no command-queue state for it.
    SdNotExposed,
    /// The card has no `cmdq_en` (a kernel older than the attribute).
    CardAttributeAbsent,
    /// The USB interface's driver could not be read.
    UsbDriverUnread,
    /// A USB driver other than `uas` or `usb-storage`.
    OtherUsbDriver,
    /// Not an SD bus: not asked.
    NotSdBus,
    /// The bus could not be told.
    BusUnknown,
}

/// The host bus of device `name` on this machine.
pub fn host_bus_of(name: &str) -> HostBus {
    host_bus_in(Path::new(super::SYSFS), name)
}

/// The host bus of device `name` (a partition or layer is followed down
/// to its disk) under the sysfs root `sys` (debugfs at `kernel/debug`).
pub fn host_bus_in(sys: &Path, name: &str) -> HostBus {
    // A layer whose file lives on no disk sysfs knows (a loop device on
    // tmpfs) is its own bottom.
    let bottom = block::stack_in(sys, name)
        .bottom
        .or_else(|| block::device_dir(sys, name).map(|_| name.to_string()));
    let Some(bottom) = bottom else {
        return unknown(BusUnknown::NoDevice);
    };
    let Some(at) = link::attachment(sys, &bottom) else {
        return unknown(BusUnknown::NotRecognised);
    };
    let ceiling = link::disk_interface(sys, &bottom).and_then(|i| i.practical_limit_mb_s);
    let (bus, command_queueing) = match at {
        Attachment::Mmc(card) => mmc_bus(sys, &card),
        Attachment::Usb(dev) => usb_bus(&dev, block::device_dir(sys, &bottom).as_deref()),
        Attachment::Nvme(_) => not_sd(Transport::Nvme),
        Attachment::Sata(_) => not_sd(Transport::Sata),
        Attachment::NoLink(t) => not_sd(t),
    };
    HostBus {
        bus,
        ceiling_mb_per_s: ceiling,
        command_queueing,
    }
}

/// A simulated card behind a link of `link_mb_s` MB/s (none: no link).
pub fn simulated(link_mb_s: Option<f64>) -> HostBus {
    HostBus {
        bus: Bus::Simulated {
            link_mb_per_s: link_mb_s,
        },
        ceiling_mb_per_s: link_mb_s,
        command_queueing: Queueing::NotModelled,
    }
}

/// A bus that could not be told.
pub fn unknown(why: BusUnknown) -> HostBus {
    HostBus {
        bus: Bus::Unknown { why },
        ceiling_mb_per_s: None,
        command_queueing: Queueing::Unknown {
            why: QueueingUnknown::BusUnknown,
        },
    }
}

fn not_sd(transport: Transport) -> (Bus, Queueing) {
    let why = QueueingUnknown::NotSdBus;
    (Bus::NotSd { transport }, Queueing::Unknown { why })
}

/// An SD/MMC card's bus, from its host's `ios`, and its command queue
/// from the card's `cmdq_en`.
fn mmc_bus(sys: &Path, card: &Path) -> (Bus, Queueing) {
    let info = mmc::read(card);
    let mode = match info.host.as_deref() {
        Some(host) => ios::mode_of(sys, host),
        None => Err(IosUnread::NoHostName),
    };
    let bus = Bus::SdMmc {
        mode: mode.ok(),
        unread: mode.err(),
    };
    let sd = info.card_type.as_deref() == Some("SD");
    (
        bus,
        card_queueing(attr(&card.join("cmdq_en")).as_deref(), sd),
    )
}

/// Command queueing from a card's `cmdq_en` text (`None`: no attribute).
pub fn card_queueing(cmdq_en: Option<&str>, sd: bool) -> Queueing {
    let from = QueueingFrom::CardCmdqEn;
    match cmdq_en.map(str::trim) {
        Some("1") => Queueing::On { from },
        Some("0") => Queueing::Off { from },
        _ if sd => Queueing::Unknown {
            why: QueueingUnknown::SdNotExposed,
        },
        _ => Queueing::Unknown {
            why: QueueingUnknown::CardAttributeAbsent,
        },
    }
}

/// A USB device's bus: its speed, and the driver of the interface the
/// disk (at `disk_dir`) hangs from.
fn usb_bus(dev: &Path, disk_dir: Option<&Path>) -> (Bus, Queueing) {
    let speed = usb::read(dev).speed_mbit_s.and_then(UsbSpeed::from_mbit_s);
    let driver = disk_dir
        .and_then(|d| usb::interface_driver(dev, d))
        .map(|name| usb_driver(&name));
    (Bus::Usb { speed, driver }, usb_queueing(driver))
}

/// The driver named `name`.
pub fn usb_driver(name: &str) -> UsbDriver {
    match name {
        "uas" => UsbDriver::Uas,
        "usb-storage" => UsbDriver::UsbStorage,
        _ => UsbDriver::Other,
    }
}

fn usb_queueing(driver: Option<UsbDriver>) -> Queueing {
    match driver {
        Some(UsbDriver::Uas) => Queueing::On {
            from: QueueingFrom::UasDriver,
        },
        Some(UsbDriver::UsbStorage) => Queueing::Off {
            from: QueueingFrom::UsbStorageDriver,
        },
        Some(UsbDriver::Other) => Queueing::Unknown {
            why: QueueingUnknown::OtherUsbDriver,
        },
        None => Queueing::Unknown {
            why: QueueingUnknown::UsbDriverUnread,
        },
    }
}

#[cfg(test)]
mod tests;
