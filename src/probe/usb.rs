//! USB mass storage: the USB device a disk hangs from.
//!
//! A stick or card reader shows up as a SCSI disk whose sysfs path passes
//! through the USB device node (`.../usb1/1-1`), which carries the vendor and
//! product ids, the device release and the negotiated speed in Mb/s.

use super::attr;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The USB device a disk belongs to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct UsbInfo {
    /// Four hex digits, as in `lsusb`.
    pub vendor_id: Option<String>,
    /// Four hex digits, as in `lsusb`.
    pub product_id: Option<String>,
    /// Device release (`bcdDevice`), four hex digits.
    pub bcd_device: Option<String>,
    /// Negotiated signalling rate, Mbit/s (1.5, 12, 480, 5000, 10000,
    /// 20000); written as MB/s, an eighth of it.
    #[serde(
        rename = "speed_mb_per_s",
        with = "crate::units::wire::opt_mbit_as_mb_per_s"
    )]
    #[schemars(with = "Option<f64>")]
    pub speed_mbit_s: Option<f64>,
    /// The manufacturer string the device reports; null when none.
    pub manufacturer: Option<String>,
    /// The product string the device reports; null when none.
    pub product: Option<String>,
    /// The serial string the device reports; null when none.
    pub serial: Option<String>,
}

/// The nearest ancestor of the canonical device directory `dir` (below
/// `sys`) that is a USB device: the first one with an `idVendor`.
pub fn usb_device_dir(sys: &Path, dir: &Path) -> Option<PathBuf> {
    dir.ancestors()
        .take_while(|p| p.starts_with(sys) && *p != sys)
        .find(|p| p.join("idVendor").is_file())
        .map(Path::to_path_buf)
}

/// Reads the USB facts of the device directory `usb`.
pub fn read(usb: &Path) -> UsbInfo {
    UsbInfo {
        vendor_id: attr(&usb.join("idVendor")),
        product_id: attr(&usb.join("idProduct")),
        bcd_device: attr(&usb.join("bcdDevice")),
        speed_mbit_s: attr(&usb.join("speed")).and_then(|s| s.parse().ok()),
        manufacturer: attr(&usb.join("manufacturer")),
        product: attr(&usb.join("product")),
        serial: attr(&usb.join("serial")),
    }
}

/// The name of the driver bound to the USB interface the disk at the
/// canonical directory `disk_dir` hangs from (`uas`, `usb-storage`), read
/// from the interface's `driver` link; `usb_dev` is the USB device above
/// it ([`usb_device_dir`]). `None` when no driver link is there.
pub fn interface_driver(usb_dev: &Path, disk_dir: &Path) -> Option<String> {
    let interface = disk_dir.ancestors().find(|p| p.parent() == Some(usb_dev))?;
    let driver = std::fs::read_link(interface.join("driver")).ok()?;
    Some(driver.file_name()?.to_string_lossy().into_owned())
}
