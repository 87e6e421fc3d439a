//! Who the device is and what it sits behind, from sysfs.
//!
//! Results carry this so that figures can be judged against the link they
//! went through (a USB 2.0 reader caps any card near 40 MB/s) and so runs of
//! one device can be found again later (the device key).
//!
//! Each concept has its own file: [`block`] the block device and the stack
//! (partition, dm, md, loop) above the medium, [`usb`], [`mmc`] and
//! [`nvme`] the transports, [`link`] the negotiated interface and its
//! ceiling, [`ios`] an SD/MMC bus's mode, [`bus`] the host bus a class
//! result names, [`fs`] the file system, [`host`] the machine. Every reader takes
//! the sysfs root as an argument so tests run on fixture trees. A fact the
//! kernel does not give is `None`, shown as "unknown", never guessed.

pub mod block;
pub mod bus;
pub mod fs;
pub mod host;
pub mod identity;
pub mod ios;
pub mod link;
pub mod mmc;
pub mod nvme;
pub mod sysfs;
pub mod usb;

pub use identity::DeviceIdentity;
pub use link::{Interface, interface_of};

use std::path::Path;

/// Where sysfs is mounted; debugfs is looked for at `kernel/debug` under it.
pub const SYSFS: &str = "/sys";

/// The trimmed text of a sysfs attribute; `None` when absent, unreadable or
/// empty.
pub(crate) fn attr(path: &Path) -> Option<String> {
    let text = std::fs::read(path).ok()?;
    let text = String::from_utf8_lossy(&text).trim().to_string();
    (!text.is_empty()).then_some(text)
}

/// A numeric attribute; `None` when absent or not a number.
pub(crate) fn attr_num<T: std::str::FromStr>(path: &Path) -> Option<T> {
    attr(path)?.parse().ok()
}

/// Probes the target at `path` on this machine.
pub fn identify(path: &Path) -> DeviceIdentity {
    identity::identify_in(Path::new(SYSFS), path)
}

#[cfg(test)]
pub(crate) mod fixture {
    //! Builds fake sysfs trees for the readers' tests.
    use std::path::{Path, PathBuf};

    /// A temporary directory standing for `/sys`.
    pub struct Tree {
        pub dir: tempfile::TempDir,
    }

    impl Tree {
        pub fn new() -> Tree {
            Tree {
                dir: tempfile::tempdir().unwrap(),
            }
        }

        pub fn root(&self) -> &Path {
            self.dir.path()
        }

        /// Writes `text` to the file at `rel` (with a newline, as sysfs does).
        pub fn file(&self, rel: &str, text: &str) -> PathBuf {
            let p = self.root().join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, format!("{text}\n")).unwrap();
            p
        }

        /// A symlink at `rel` pointing to the tree path `to`.
        pub fn link(&self, rel: &str, to: &str) {
            let p = self.root().join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::os::unix::fs::symlink(self.root().join(to), p).unwrap();
        }

        /// A block device directory at `devpath` (under `devices/`) with the
        /// attributes the block reader needs, linked from `class/block` and
        /// `dev/block`.
        pub fn disk(&self, devpath: &str, name: &str, dev: &str, sectors: u64) -> String {
            let dir = format!("devices/{devpath}/block/{name}");
            self.file(&format!("{dir}/dev"), dev);
            self.file(&format!("{dir}/size"), &sectors.to_string());
            self.file(&format!("{dir}/ro"), "0");
            self.file(&format!("{dir}/queue/logical_block_size"), "512");
            self.file(&format!("{dir}/queue/physical_block_size"), "512");
            self.link(&format!("class/block/{name}"), &dir);
            self.link(&format!("dev/block/{dev}"), &dir);
            dir
        }

        /// A partition `name` of the disk at `disk_dir`.
        pub fn partition(&self, disk_dir: &str, name: &str, dev: &str, number: u32, sectors: u64) {
            let dir = format!("{disk_dir}/{name}");
            self.file(&format!("{dir}/dev"), dev);
            self.file(&format!("{dir}/size"), &sectors.to_string());
            self.file(&format!("{dir}/ro"), "0");
            self.file(&format!("{dir}/partition"), &number.to_string());
            self.file(&format!("{dir}/start"), "2048");
            self.link(&format!("class/block/{name}"), &dir);
            self.link(&format!("dev/block/{dev}"), &dir);
        }
    }
}
