//! The link a block device sits behind and its practical ceiling.
//! (Placeholder: answers "unknown" until the probe lands.)

use crate::target::sysfs::BlockDevice;
use serde::Serialize;
use std::path::Path;

/// The interface between the host and the medium.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Interface {
    /// `usb`, `mmc`, `sata`, `nvme`, `virtio`, `scsi`, `loop`, `zram`, ...
    pub kind: String,
    /// For people: "USB 2.0 High Speed (480 Mb/s)", "PCIe 3.0 x4", ...
    pub description: String,
    /// Negotiated signalling rate in Mb/s, when known.
    pub link_mbit_s: Option<f64>,
    /// Practical payload ceiling in MB/s (10^6 B/s) after protocol
    /// overhead, when known. A figure above it did not come through the
    /// link (a cache answered).
    pub practical_limit_mb_s: Option<f64>,
}

/// The interface of `dev`, read from the live sysfs.
pub fn interface_of(dev: &BlockDevice) -> Option<Interface> {
    interface_in(Path::new("/sys"), dev)
}

/// The interface of `dev` under a sysfs tree rooted at `sys_root` (tests
/// use fixture trees).
pub fn interface_in(_sys_root: &Path, _dev: &BlockDevice) -> Option<Interface> {
    None
}
