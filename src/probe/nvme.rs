//! NVMe drives: the controller's identity and the PCIe device beneath it.
//!
//! A namespace (`nvme0n1`) points at its controller (`nvme0`), which holds
//! the model, serial and firmware revision from the Identify Controller
//! data; the controller's own `device` is the PCI function with the link.

use super::attr;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The controller of an NVMe namespace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct NvmeInfo {
    /// Kernel name of the controller (`nvme0`); null when unknown.
    pub controller: Option<String>,
    /// Model from Identify Controller; null when not readable.
    pub model: Option<String>,
    /// Serial number from Identify Controller; null when not readable.
    pub serial: Option<String>,
    /// Firmware revision; null when not readable.
    pub firmware: Option<String>,
}

/// The controller directory of the namespace at canonical `dir`, when it is
/// an NVMe namespace (its `device` has `firmware_rev`).
pub fn controller_dir(dir: &Path) -> Option<PathBuf> {
    let ctrl = std::fs::canonicalize(dir.join("device")).ok()?;
    ctrl.join("firmware_rev").is_file().then_some(ctrl)
}

/// Reads the controller facts.
pub fn read(ctrl: &Path) -> NvmeInfo {
    NvmeInfo {
        controller: ctrl.file_name().map(|n| n.to_string_lossy().into_owned()),
        model: attr(&ctrl.join("model")),
        serial: attr(&ctrl.join("serial")),
        firmware: attr(&ctrl.join("firmware_rev")),
    }
}

/// The PCI function beneath a controller: the nearest ancestor of the
/// canonical path with a `current_link_speed`.
pub fn pci_dir(sys: &Path, dir: &Path) -> Option<PathBuf> {
    dir.ancestors()
        .take_while(|p| p.starts_with(sys) && *p != sys)
        .find(|p| p.join("current_link_speed").is_file())
        .map(Path::to_path_buf)
}
