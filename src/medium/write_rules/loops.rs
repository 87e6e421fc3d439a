//! Loop devices and what backs them. A regular file behind a loop device is
//! that device's medium, so writing to it writes under whatever uses the
//! loop device; and a loop device set up over a block device's node uses
//! that device. The backing file is known by its device and inode as the
//! kernel reports them, not by the path sysfs shows.

use super::{Identity, stat_identity};
use std::fs;
use std::io;
use std::path::Path;

/// The error of a failed check, saying what was being checked.
pub(super) fn backing_context(path: &Path, e: io::Error) -> io::Error {
    io::Error::new(
        e.kind(),
        format!(
            "cannot check whether {} backs a loop device: {e}",
            path.display()
        ),
    )
}

/// What a bound loop device reads and writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct LoopBacking {
    /// Kernel name: `loop3`.
    pub(super) name: String,
    /// (major, minor, inode) of the backing file's file system and inode.
    pub(super) file: Option<(u32, u32, u64)>,
    /// (major, minor) of the backing file when it is a device node.
    pub(super) rdev: Option<(u32, u32)>,
}

/// Every bound loop device and what backs it.
///
/// The identity comes from the kernel (`LOOP_GET_STATUS64` on the loop
/// device: the backing file's device, inode and rdev as the kernel sees
/// them, whatever its name now is). The kernel of this writing has no sysfs
/// attribute with those numbers, only `loop/backing_file`, a path, which is
/// stale when the file was renamed in another namespace, ends in
/// `(deleted)` when its name was removed, and is relative to the reader's
/// root. So that path is only stat'ed when the loop device cannot be opened
/// (no node in this `/dev`, no permission), and never when it is marked
/// deleted.
///
/// Each loop device is opened read-only, without `O_EXCL`, for the moment of
/// the ioctl: that claims nothing, but a `losetup -d` that lands in that
/// moment is deferred until the close, like one on any open loop device.
pub(super) fn loop_backings() -> io::Result<Vec<LoopBacking>> {
    let mut found = Vec::new();
    for entry in fs::read_dir("/sys/class/block")? {
        let Ok(entry) = entry else { continue };
        let Ok(name) = entry.file_name().into_string() else {
            continue;
        };
        // Only bound loop devices have `loop/`; it vanishes on detach.
        let Ok(text) = fs::read_to_string(entry.path().join("loop/backing_file")) else {
            continue;
        };
        let from_kernel = fs::read_to_string(entry.path().join("dev"))
            .ok()
            .and_then(|t| parse_dev_attr(&t))
            .and_then(|mm| loop_status(&name, mm));
        let (file, rdev) = match from_kernel {
            Some(ids) => ids,
            None => match backing_path(&text).and_then(stat_identity) {
                Some(ids) => ids,
                None => continue,
            },
        };
        found.push(LoopBacking { name, file, rdev });
    }
    found.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(found)
}

/// The `dev` attribute of sysfs, `major:minor`.
fn parse_dev_attr(text: &str) -> Option<(u32, u32)> {
    let (major, minor) = text.trim().split_once(':')?;
    Some((major.parse().ok()?, minor.parse().ok()?))
}

/// The path in a `loop/backing_file` attribute, when it can name the file:
/// not empty, and not marked `(deleted)` (the inode has lost that name).
fn backing_path(text: &str) -> Option<&str> {
    let path = text.strip_suffix('\n').unwrap_or(text);
    (!path.is_empty() && !path.ends_with(" (deleted)")).then_some(path)
}

/// The backing identity of loop device `name` (device number `mm`) as the
/// kernel reports it; `None` when the node is missing, is not that device,
/// cannot be opened, or the loop device was detached meanwhile.
fn loop_status(name: &str, mm: (u32, u32)) -> Option<Identity> {
    use rustix::fs::{Mode, OFlags};
    let node = Path::new("/dev").join(name.replace('!', "/"));
    let st = rustix::fs::stat(&node).ok()?;
    let is_it = rustix::fs::FileType::from_raw_mode(st.st_mode).is_block_device()
        && (rustix::fs::major(st.st_rdev), rustix::fs::minor(st.st_rdev)) == mm;
    if !is_it {
        return None;
    }
    // Read-only and without O_EXCL: claims nothing, writes nothing.
    let fd = rustix::fs::open(
        &node,
        OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .ok()?;
    let info = crate::sys::loop_status64(&fd).ok()?;
    let (major, minor) = decode_kernel_dev(info.lo_device);
    let rdev = decode_kernel_dev(info.lo_rdevice);
    Some((
        Some((major, minor, info.lo_inode)),
        (rdev != (0, 0)).then_some(rdev),
    ))
}

/// Splits a device number in the kernel's 32-bit encoding
/// (`new_encode_dev`: minor bits 0-7, major bits 8-19, minor's high bits
/// 20-31), the one `struct loop_info64` carries.
fn decode_kernel_dev(dev: u64) -> (u32, u32) {
    let major = ((dev & 0xfff00) >> 8) as u32;
    let minor = ((dev & 0xff) | ((dev >> 12) & 0xfff00)) as u32;
    (major, minor)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::medium::write_rules::why_file_busy;
    use crate::probe::sysfs::BlockDevice;
    use crate::probe::sysfs::tests::{LoopDev, MIB, Mounted, loop_lock, mkfs_ext4, or_skip, run};

    #[test]
    fn loop_attributes_parse() {
        assert_eq!(
            backing_path("/srv/images/disk.img\n"),
            Some("/srv/images/disk.img")
        );
        assert_eq!(backing_path("/a b/disk.img"), Some("/a b/disk.img"));
        assert_eq!(backing_path("/srv/images/disk.img (deleted)\n"), None);
        assert_eq!(backing_path("\n"), None);
        assert_eq!(backing_path(""), None);
        assert_eq!(parse_dev_attr("7:3\n"), Some((7, 3)));
        assert_eq!(parse_dev_attr("259:12"), Some((259, 12)));
        assert_eq!(parse_dev_attr("7"), None);
        assert_eq!(parse_dev_attr("7:x"), None);
        // new_encode_dev: minor bits 0-7, major 8-19, minor's high bits 20-31.
        assert_eq!(decode_kernel_dev(0xfe00), (254, 0));
        assert_eq!(decode_kernel_dev(0x0703), (7, 3));
        assert_eq!(decode_kernel_dev(0x0010_3512), (53, 0x112));
        assert_eq!(decode_kernel_dev(0), (0, 0));
        // Agrees with the C library's makedev for the numbers stat returns.
        for (major, minor) in [(8, 17), (259, 3), (0, 52), (7, 300), (254, 70000)] {
            let dev = rustix::fs::makedev(major, minor);
            let kernel = u64::from((minor & 0xff) | (major << 8) | ((minor & !0xff) << 12));
            assert_eq!(decode_kernel_dev(kernel), (major, minor));
            assert_eq!(
                (rustix::fs::major(dev), rustix::fs::minor(dev)),
                (major, minor)
            );
        }
    }

    /// A second loop device over `file`, detached when dropped.
    struct ExtraLoop(String);

    impl ExtraLoop {
        fn over(file: &Path) -> Result<ExtraLoop, String> {
            let out = run("losetup", &["-f", "--show", file.to_str().unwrap()])?;
            Ok(ExtraLoop(out.trim().to_owned()))
        }
    }

    impl Drop for ExtraLoop {
        fn drop(&mut self) {
            if let Err(e) = run("losetup", &["-d", &self.0]) {
                eprintln!("cleanup: {e}");
            }
        }
    }

    #[test]
    fn the_kernel_and_the_path_agree_on_what_backs_a_loop() {
        let _lock = loop_lock();
        let lo = or_skip!(LoopDev::new(8 * MIB, &[]));
        let mm = {
            let d = BlockDevice::from_name(&lo.name).unwrap();
            (d.major, d.minor)
        };
        let by_path = stat_identity(lo.backing.to_str().unwrap()).unwrap();
        assert_eq!(loop_status(&lo.name, mm), Some(by_path));
        assert_eq!(by_path.1, None, "a regular file has no device number");
        let found = loop_backings().unwrap();
        let this = found.iter().find(|b| b.name == lo.name).expect("listed");
        assert_eq!((this.file, this.rdev), by_path);
        // A loop over the loop: backed by a device node, known by its rdev.
        let upper = or_skip!(ExtraLoop::over(&lo.node));
        let upper_name = upper.0.trim_start_matches("/dev/");
        let found = loop_backings().unwrap();
        let over = found.iter().find(|b| b.name == upper_name).expect("listed");
        assert_eq!(over.rdev, Some(mm));
    }

    #[test]
    fn a_file_backing_a_loop_is_busy_by_any_of_its_names() {
        let _lock = loop_lock();
        let lo = or_skip!(LoopDev::new(8 * MIB, &[]));
        let node = lo.node.display().to_string();
        let detach = format!("detach it with `losetup -d {node}`");
        let why = why_file_busy(&lo.backing).unwrap().expect("busy");
        assert_eq!(
            why,
            format!(
                "it backs loop device {node}, which is attached though nothing uses it now: {detach}"
            )
        );
        // Another name of the same inode; then the name losetup was given
        // removed, so that sysfs only says "(deleted)".
        let link = lo.backing.with_file_name("other name.img");
        fs::hard_link(&lo.backing, &link).unwrap();
        assert_eq!(why_file_busy(&link).unwrap().as_deref(), Some(why.as_str()));
        fs::remove_file(&lo.backing).unwrap();
        let shown =
            fs::read_to_string(format!("/sys/class/block/{}/loop/backing_file", lo.name)).unwrap();
        assert!(shown.trim_end().ends_with("(deleted)"), "{shown}");
        assert_eq!(why_file_busy(&link).unwrap().as_deref(), Some(why.as_str()));
        fs::hard_link(&link, &lo.backing).unwrap();

        // A copy is another file; directories and missing paths are not files.
        let copy = lo.backing.with_file_name("copy.img");
        fs::copy(&lo.backing, &copy).unwrap();
        assert_eq!(why_file_busy(&copy).unwrap(), None);
        assert_eq!(why_file_busy(lo.backing.parent().unwrap()).unwrap(), None);
        let e = why_file_busy(&lo.backing.with_file_name("missing")).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
        assert!(e.to_string().contains("backs a loop device"), "{e}");

        // A second loop device over the file: one sentence each.
        let second = or_skip!(ExtraLoop::over(&lo.backing));
        let why = why_file_busy(&lo.backing).unwrap().unwrap();
        assert_eq!(why.matches("it backs loop device").count(), 2, "{why}");
        assert!(why.contains(&second.0), "{why}");
        drop(second);

        or_skip!(mkfs_ext4(lo.node_str()));
        let mounted = or_skip!(Mounted::new(lo.node_str()));
        let mount_point = fs::canonicalize(mounted.dir.path()).unwrap();
        let mp = mount_point.display();
        assert_eq!(
            why_file_busy(&link).unwrap(),
            Some(format!(
                "it backs loop device {node}, and {node} is mounted on {mp} (ext4): unmount {mp} and {detach}"
            ))
        );
    }
}
