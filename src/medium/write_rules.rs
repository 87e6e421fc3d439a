//! The write rules: may this block device or file be written right now?
//!
//! Why this module exists, and why it is not called "safety": iocurve has
//! two kinds of protection. This one decides *before* a write test whether
//! its target may be written at all (nothing mounts it, stacks on it, swaps
//! to it or holds it open; what data it seems to hold). The other,
//! `crate::safety` (preserve, journal, identity), puts data *back* after a
//! write test that was allowed. Keeping the names apart keeps a reader from
//! looking for the refusal rules among the restore code.
//!
//! A benchmark must never destroy data. Writing to a raw block device
//! overwrites whatever is on it, and doing so under a mounted filesystem, a
//! device-mapper or md array stacked on the device, active swap or a loop
//! device set up over it corrupts it in ways that surface much later. The
//! same holds for a regular file that backs a loop device: the file *is* that
//! device's medium, so writing to it is writing under whatever uses the loop
//! device. Likewise a swap file is the kernel's, a file another program
//! holds open for writing is that program's (a write test overwrites its
//! data, and a `--preserve` restore would undo its writes), and a file
//! bind-mounted elsewhere is seen, and used, there too. So a write test is
//! refused while anything uses its target, and [`why_busy`] (block
//! devices) and [`why_file_in_use`] (regular files) say, one
//! sentence per use, what uses it and how to end that use: the person reading
//! the refusal should not need a second tool to find out what to do.
//!
//! A device that nothing uses may still hold data nobody has mounted right
//! now; [`has_data_signature`] recognises the common on-disk formats so that
//! the caller can warn (or demand confirmation) before a destructive run.

use crate::medium::storage::FileId;
use crate::probe::sysfs::{BlockDevice, Mount, parse_mountinfo, unescape_octal};
use std::fs;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

/// Returns `Ok(None)` when nothing uses the device, else sentences (joined
/// by `"; "`) naming what does and how to end it: a mount (unmount it), a
/// holder (`dmsetup remove`, `mdadm --stop`), swap (`swapoff`), a loop device
/// over the node (`losetup -d`), or an exclusive opener (the program, by pid
/// and command, when `/proc` shows it).
///
/// Checked are the device itself; when it is a whole disk, each of its
/// partitions; when it is a partition, its whole disk (not its sibling
/// partitions, which writing to this one does not touch). For each of these:
/// - a mount of it in this process's mount namespace (`/proc/self/mountinfo`),
/// - devices stacked on it (`holders/` in sysfs: device-mapper, md, bcache),
/// - active swap on it (`/proc/swaps`),
/// - loop devices whose backing file is its device node.
///
/// When none of that is found, the device node itself is opened with
/// `O_EXCL`, which the kernel refuses with `EBUSY` while the device (or, for
/// a whole disk, any of its partitions; for a partition, its whole disk) is
/// mounted in any mount namespace, stacked upon, swapped to, or opened with
/// `O_EXCL` by another process (`mkfs`, another benchmark). That catches what
/// this process cannot see; the processes that have one of the nodes open
/// are then looked up in `/proc` to name them.
///
/// Because of the exclusive open, call this *before* opening the device with
/// `O_EXCL` yourself, or your own open makes the device look busy. (Like any
/// close, closing that probe lets a loop device whose detach was deferred
/// because it was busy go away, if nothing else holds it open.)
pub fn why_busy(dev: &BlockDevice) -> io::Result<Option<String>> {
    Ok(sentences(&uses_of(dev)?))
}

/// Returns `Ok(None)` unless `path` is a regular file that backs a loop
/// device; then one sentence per such loop device (joined by `"; "`), each
/// naming the loop device, what uses it (a mount and where, swap, holders,
/// another loop device, a program) and the fix: end that use and detach it
/// with `losetup -d /dev/loopN`. The sentences speak of the file as "it", to
/// follow `refusing to write to <path>: `.
///
/// The file is recognised by its device and inode number, so another name
/// for it (a hard link, a bind mount, a symlink) is recognised too, and the
/// path a loop device shows in sysfs (`loop/backing_file`), which may be
/// stale, `(deleted)` or a path of another mount namespace, is used only
/// when the kernel cannot be asked (`LOOP_GET_STATUS64` on the loop device).
///
/// Like [`why_busy`], this briefly opens each loop device over the file with
/// `O_EXCL` to find users this process cannot see.
pub fn why_file_busy(path: &Path) -> io::Result<Option<String>> {
    use std::os::unix::fs::MetadataExt;
    let meta = fs::metadata(path).map_err(|e| backing_context(path, e))?;
    if !meta.is_file() {
        return Ok(None);
    }
    let file = (
        rustix::fs::major(meta.dev()),
        rustix::fs::minor(meta.dev()),
        meta.ino(),
    );
    let found = loop_sentences(path, file)?;
    Ok((!found.is_empty()).then(|| found.join("; ")))
}

/// Everything that uses the regular file `path`, known as `file` (device
/// and inode of the descriptor it was examined through), one sentence per
/// use joined by `"; "`, each with its fix; `Ok(None)` when nothing does.
/// To the loop devices of [`why_file_busy`] this adds:
/// - active swap on it (`/proc/swaps`: `swapoff`);
/// - a bind mount of it elsewhere, or it being a bind mount over another
///   file (`/proc/self/mountinfo`: `umount`);
/// - other processes holding it open for writing (`/proc/*/fd`: stop
///   them), whose data a write test would overwrite and whose writes a
///   `--preserve` restore would undo.
///
/// Files are compared by device and inode, never by the path a table
/// shows, so another name of the file is the same file.
pub fn why_file_in_use(path: &Path, file: FileId) -> io::Result<Option<String>> {
    let mut found = loop_sentences(path, file)?;
    let uses = swap_files(file)
        .into_iter()
        .chain(bind_mounts_of(path, file))
        .chain(writers_of(file));
    found.extend(uses.map(|u| u.sentence()));
    Ok((!found.is_empty()).then(|| found.join("; ")))
}

fn backing_context(path: &Path, e: io::Error) -> io::Error {
    io::Error::new(
        e.kind(),
        format!(
            "cannot check whether {} backs a loop device: {e}",
            path.display()
        ),
    )
}

/// One sentence per loop device backed by `file` (see [`why_file_busy`]).
fn loop_sentences(path: &Path, file: FileId) -> io::Result<Vec<String>> {
    let context = |e| backing_context(path, e);
    let mut found = Vec::new();
    for backing in loop_backings().map_err(context)? {
        if backing.file != Some(file) {
            continue;
        }
        let dev = match BlockDevice::from_name(&backing.name) {
            Ok(d) => d,
            // Detached between the listing and the lookup: it uses nothing.
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(e) => return Err(context(e)),
        };
        let uses = uses_of(&dev).map_err(context)?;
        found.push(backing_sentence(
            &dev.dev_path().display().to_string(),
            &uses,
        ));
    }
    Ok(found)
}

/// One way a regular file is used besides backing a loop device;
/// [`FileUse::sentence`] says it, speaking of the file as "it".
#[derive(Debug, Clone, PartialEq, Eq)]
enum FileUse {
    /// Active swap, listed in `/proc/swaps` under this path.
    Swap { listed_as: String },
    /// Bind-mounted on another path, where it shows too.
    BoundOn { mount_point: String },
    /// The path given is itself a bind mount (of this file, over what the
    /// path held before).
    BindMount { mount_point: String },
    /// Open for writing in these processes.
    Writers { openers: Vec<Opener> },
}

impl FileUse {
    fn sentence(&self) -> String {
        match self {
            FileUse::Swap { listed_as } => format!(
                "it is an active swap file (listed in /proc/swaps as {listed_as}): turn it off with `swapoff {}`",
                shell_word(listed_as)
            ),
            FileUse::BoundOn { mount_point } => format!(
                "it is bind-mounted on {mount_point}, where whatever uses that path would see the test's data: unmount it with `umount {}`",
                shell_word(mount_point)
            ),
            FileUse::BindMount { mount_point } => format!(
                "it is a bind mount of another file over {mount_point}, so the test would write that other file: unmount it with `umount {}` (then give the file itself)",
                shell_word(mount_point)
            ),
            FileUse::Writers { openers } => {
                let one = openers.len() == 1;
                let mut named: Vec<String> = openers
                    .iter()
                    .take(OPENERS_NAMED)
                    .map(|o| format!("pid {} ({})", o.pid, o.command))
                    .collect();
                if openers.len() > OPENERS_NAMED {
                    named.push(format!("{} more", openers.len() - OPENERS_NAMED));
                }
                format!(
                    "it is open for writing in {}, whose data a write test would overwrite (and a --preserve restore would undo {} writes): stop {} (or let {} finish)",
                    named.join(", "),
                    if one { "its" } else { "their" },
                    if one {
                        "that process"
                    } else {
                        "those processes"
                    },
                    if one { "it" } else { "them" }
                )
            }
        }
    }
}

/// One way a block device is used, as found; [`Use::sentence`] says it.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Use {
    /// Mounted on these (mount point, file system type) pairs.
    Mounted {
        node: String,
        on: Vec<(String, String)>,
    },
    /// Device-mapper, md or other devices stacked on it.
    Holders { node: String, holders: Vec<Holder> },
    /// In `/proc/swaps` under this path.
    Swap { node: String, listed_as: String },
    /// Loop devices (kernel names) whose backing file is its node.
    LoopsOver { node: String, loops: Vec<String> },
    /// The kernel refused an exclusive open; these processes have one of the
    /// device's nodes open (none found: a mount in another mount namespace,
    /// a kernel user, or a process whose `/proc` this one cannot read).
    Claimed { node: String, openers: Vec<Opener> },
}

/// A device stacked on another (`holders/` in sysfs).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Holder {
    /// Kernel name: `dm-0`, `md127`, `bcache0`.
    name: String,
    /// For a device-mapper device, its mapping name (`dm/name` in sysfs),
    /// which `dmsetup` takes.
    dm_name: Option<String>,
}

impl Holder {
    fn read(name: &str) -> Holder {
        let dm_name = fs::read_to_string(format!("/sys/class/block/{name}/dm/name"))
            .ok()
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty());
        Holder {
            name: name.to_owned(),
            dm_name,
        }
    }

    /// The command that takes this holder down.
    fn remove_command(&self) -> String {
        if let Some(dm) = &self.dm_name {
            format!("`dmsetup remove {}`", shell_word(dm))
        } else if self.name.starts_with("dm-") {
            format!("`dmsetup remove /dev/{}`", self.name)
        } else if self.name.starts_with("md") {
            format!("`mdadm --stop /dev/{}`", self.name)
        } else {
            format!("stop /dev/{}", self.name)
        }
    }
}

/// A process that has a device node open.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Opener {
    pid: u32,
    /// `/proc/<pid>/comm`: the command name, at most 15 bytes.
    command: String,
    /// The node it has open.
    node: String,
}

/// How many openers a message names before saying "and N more".
const OPENERS_NAMED: usize = 4;

impl Use {
    /// What uses the device, naming its node.
    fn what(&self) -> String {
        match self {
            Use::Mounted { node, on } => {
                let on: Vec<String> = on.iter().map(|(mp, fs)| format!("{mp} ({fs})")).collect();
                format!("{node} is mounted on {}", on.join(", "))
            }
            Use::Holders { node, holders } => {
                let names: Vec<&str> = holders.iter().map(|h| h.name.as_str()).collect();
                format!("{node} has holders: {}", names.join(", "))
            }
            Use::Swap { node, listed_as } => {
                format!("{node} is active swap (listed as {listed_as})")
            }
            Use::LoopsOver { node, loops } => {
                format!(
                    "{node} has loop devices set up over it: {}",
                    loops.join(", ")
                )
            }
            Use::Claimed { node, openers } if openers.is_empty() => format!(
                "{node} is in use: the kernel refused to open it exclusively \
                 (mounted in another mount namespace, or held by a kernel driver \
                 or by a program this process cannot see)"
            ),
            Use::Claimed { node, openers } => {
                let mut named: Vec<String> = openers
                    .iter()
                    .take(OPENERS_NAMED)
                    .map(|o| {
                        if &o.node == node {
                            format!("pid {} ({})", o.pid, o.command)
                        } else {
                            format!("pid {} ({}, through {})", o.pid, o.command, o.node)
                        }
                    })
                    .collect();
                if openers.len() > OPENERS_NAMED {
                    named.push(format!("{} more", openers.len() - OPENERS_NAMED));
                }
                format!(
                    "{node} is in use: the kernel refused to open it exclusively, \
                     and it is open in {}",
                    named.join(", ")
                )
            }
        }
    }

    /// What ends that use, as an instruction.
    fn fix(&self) -> String {
        match self {
            Use::Mounted { on, .. } => {
                let points: Vec<String> = on.iter().map(|(mp, _)| shell_word(mp)).collect();
                format!("unmount {}", points.join(" and "))
            }
            Use::Holders { holders, .. } => {
                let commands: Vec<String> = holders.iter().map(Holder::remove_command).collect();
                format!("remove what is stacked on it ({})", commands.join(", "))
            }
            Use::Swap { listed_as, .. } => {
                format!("turn it off with `swapoff {}`", shell_word(listed_as))
            }
            Use::LoopsOver { loops, .. } => {
                let nodes: Vec<String> = loops.iter().map(|l| format!("/dev/{l}")).collect();
                format!("detach them with `losetup -d {}`", nodes.join(" "))
            }
            Use::Claimed { openers, .. } if openers.is_empty() => {
                "unmount or release it where it is used".into()
            }
            Use::Claimed { openers, .. } => {
                let one = openers.len() == 1;
                format!(
                    "close {} (or let {} finish)",
                    if one {
                        "that program"
                    } else {
                        "those programs"
                    },
                    if one { "it" } else { "them" }
                )
            }
        }
    }

    fn sentence(&self) -> String {
        format!("{}: {}", self.what(), self.fix())
    }
}

/// The uses joined into one line, or `None` when there are none.
fn sentences(uses: &[Use]) -> Option<String> {
    (!uses.is_empty()).then(|| {
        uses.iter()
            .map(Use::sentence)
            .collect::<Vec<_>>()
            .join("; ")
    })
}

/// The sentence about one loop device over the file [`why_file_busy`] was
/// asked about, given what uses that loop device.
fn backing_sentence(loop_node: &str, uses: &[Use]) -> String {
    let detach = format!("detach it with `losetup -d {loop_node}`");
    if uses.is_empty() {
        return format!(
            "it backs loop device {loop_node}, which is attached though nothing uses it now: {detach}"
        );
    }
    let whats: Vec<String> = uses.iter().map(Use::what).collect();
    let fixes: Vec<String> = uses.iter().map(Use::fix).collect();
    format!(
        "it backs loop device {loop_node}, and {}: {} and {detach}",
        whats.join(" and "),
        fixes.join(", ")
    )
}

/// `s` as one shell word: unchanged when it has nothing the shell would
/// interpret, else single-quoted.
fn shell_word(s: &str) -> String {
    let plain = !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-+:,=@%".contains(&b));
    if plain {
        s.to_owned()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// Everything [`why_busy`] reports, gathered.
fn uses_of(dev: &BlockDevice) -> io::Result<Vec<Use>> {
    let mut devices = vec![dev.clone()];
    if dev.partition {
        devices.push(dev.whole_disk()?);
    } else {
        for name in dev.partitions()? {
            match BlockDevice::from_name(&name) {
                Ok(p) => devices.push(p),
                // The partition vanished between the listing and the lookup
                // (a rescan): nothing left of it to use.
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => return Err(e),
            }
        }
    }

    let mounts = parse_mountinfo(&fs::read_to_string("/proc/self/mountinfo")?);
    let swaps = swap_devices()?;
    // Listed once: every device is compared against the same loop devices.
    let backings = loop_backings().unwrap_or_default();

    let mut uses = Vec::new();
    for d in &devices {
        let holders: Vec<Holder> = d.holders()?.iter().map(|h| Holder::read(h)).collect();
        uses.extend(reasons_for(d, &mounts, &holders, &swaps));
        let mut loops: Vec<String> = backings
            .iter()
            .filter(|b| b.rdev == Some((d.major, d.minor)))
            .map(|b| b.name.clone())
            .collect();
        if !loops.is_empty() {
            loops.sort();
            uses.push(Use::LoopsOver {
                node: d.dev_path().display().to_string(),
                loops,
            });
        }
    }
    // Only the device itself: an exclusive open of a whole disk is also
    // refused while any of its partitions is claimed, which for a partition
    // would report its siblings.
    if uses.is_empty() && exclusive_open_refused(dev)? {
        let nodes: Vec<PathBuf> = devices.iter().map(BlockDevice::dev_path).collect();
        uses.push(Use::Claimed {
            node: dev.dev_path().display().to_string(),
            openers: openers_of(&nodes),
        });
    }
    Ok(uses)
}

/// What a bound loop device reads and writes.
#[derive(Debug, Clone, PartialEq, Eq)]
struct LoopBacking {
    /// Kernel name: `loop3`.
    name: String,
    /// (major, minor, inode) of the backing file's file system and inode.
    file: Option<(u32, u32, u64)>,
    /// (major, minor) of the backing file when it is a device node.
    rdev: Option<(u32, u32)>,
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
fn loop_backings() -> io::Result<Vec<LoopBacking>> {
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

type Identity = (Option<(u32, u32, u64)>, Option<(u32, u32)>);

/// (file identity, device number) of what `path` names now.
fn stat_identity(path: &str) -> Option<Identity> {
    let st = rustix::fs::stat(path).ok()?;
    let file = Some((
        rustix::fs::major(st.st_dev),
        rustix::fs::minor(st.st_dev),
        st.st_ino,
    ));
    let block = rustix::fs::FileType::from_raw_mode(st.st_mode).is_block_device();
    let rdev = block.then(|| (rustix::fs::major(st.st_rdev), rustix::fs::minor(st.st_rdev)));
    Some((file, rdev))
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

/// The processes that have one of `nodes` open, from the `/proc/<pid>/fd`
/// links, by pid. Processes that exit or whose `/proc` entries cannot be
/// read (another user's, without privilege) are passed over: this only
/// names what it can.
fn openers_of(nodes: &[PathBuf]) -> Vec<Opener> {
    let Ok(procs) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for p in procs.filter_map(|e| e.ok()) {
        let Some(pid) = p.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(fds) = fs::read_dir(p.path().join("fd")) else {
            continue;
        };
        let hit = fds.filter_map(|e| e.ok()).find_map(|fd| {
            let target = fs::read_link(fd.path()).ok()?;
            nodes.iter().find(|n| **n == target).cloned()
        });
        let Some(node) = hit else { continue };
        let command = fs::read_to_string(p.path().join("comm"))
            .map(|c| c.trim_end().to_owned())
            .unwrap_or_else(|_| "?".into());
        found.push(Opener {
            pid,
            command,
            node: node.display().to_string(),
        });
    }
    found.sort_by_key(|o| o.pid);
    found
}

/// What uses `d`, from the facts gathered: mounts, holders, swap.
fn reasons_for(
    d: &BlockDevice,
    mounts: &[Mount],
    holders: &[Holder],
    swaps: &[(String, (u32, u32))],
) -> Vec<Use> {
    let node = d.dev_path().display().to_string();
    let mut uses = Vec::new();
    let on: Vec<(String, String)> = mounts
        .iter()
        .filter(|m| (m.major, m.minor) == (d.major, d.minor))
        .map(|m| (m.mount_point.clone(), m.fstype.clone()))
        .collect();
    if !on.is_empty() {
        uses.push(Use::Mounted {
            node: node.clone(),
            on,
        });
    }
    if !holders.is_empty() {
        uses.push(Use::Holders {
            node: node.clone(),
            holders: holders.to_vec(),
        });
    }
    for (path, _) in swaps.iter().filter(|(_, mm)| *mm == (d.major, d.minor)) {
        uses.push(Use::Swap {
            node: node.clone(),
            listed_as: path.clone(),
        });
    }
    uses
}

/// The block devices in active swap: each `/proc/swaps` path that is a block
/// device node, with its major:minor. Swap files are left out here (their
/// filesystem's mount already marks their device busy); [`swap_files`]
/// finds one given as a target.
fn swap_devices() -> io::Result<Vec<(String, (u32, u32))>> {
    let text = match fs::read_to_string("/proc/swaps") {
        Ok(t) => t,
        // Kernels built without swap have no /proc/swaps.
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut found = Vec::new();
    for path in parse_swaps(&text) {
        let Ok(st) = rustix::fs::stat(path.as_str()) else {
            continue;
        };
        if rustix::fs::FileType::from_raw_mode(st.st_mode).is_block_device() {
            let mm = (rustix::fs::major(st.st_rdev), rustix::fs::minor(st.st_rdev));
            found.push((path, mm));
        }
    }
    Ok(found)
}

/// The paths in the first column of `/proc/swaps` (after its header line),
/// with the kernel's octal escapes (`\040`) undone.
fn parse_swaps(text: &str) -> Vec<String> {
    text.lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next())
        .map(unescape_octal)
        .collect()
}

/// The active swap files that are `file`: each `/proc/swaps` path is
/// looked up and compared by device and inode (the path may be another
/// name of the file than the one the user gave).
fn swap_files(file: FileId) -> Vec<FileUse> {
    let Ok(text) = fs::read_to_string("/proc/swaps") else {
        return Vec::new();
    };
    parse_swaps(&text)
        .into_iter()
        .filter(|path| {
            stat_identity(path).is_some_and(|(id, rdev)| rdev.is_none() && id == Some(file))
        })
        .map(|listed_as| FileUse::Swap { listed_as })
        .collect()
}

/// (root, mount point) of each mount in a mountinfo text (proc(5)):
/// `root` is the path of the mounted thing inside its file system, a
/// file's own path when a file is bind-mounted.
fn mount_roots(text: &str) -> Vec<(String, String)> {
    parse_mountinfo(text)
        .into_iter()
        .map(|m| (m.root, m.mount_point))
        .collect()
}

/// The bind mounts that show `file`: mounts whose mount point, looked up,
/// is that file. Only mounts of something below a file system's root are
/// looked up (a file system's root is a directory, never a file), which
/// leaves out every ordinary mount, so a hung network file system is not
/// touched. When the path given is such a mount point, it is itself the
/// bind mount.
fn bind_mounts_of(path: &Path, file: FileId) -> Vec<FileUse> {
    let Ok(text) = fs::read_to_string("/proc/self/mountinfo") else {
        return Vec::new();
    };
    let given = fs::canonicalize(path).ok();
    let mut found = Vec::new();
    for (root, mount_point) in mount_roots(&text) {
        if root == "/" {
            continue;
        }
        let shows_it = stat_identity(&mount_point)
            .is_some_and(|(id, rdev)| rdev.is_none() && id == Some(file));
        if !shows_it {
            continue;
        }
        let use_ = match given.as_deref() == Some(Path::new(&mount_point)) {
            true => FileUse::BindMount { mount_point },
            false => FileUse::BoundOn { mount_point },
        };
        if !found.contains(&use_) {
            found.push(use_);
        }
    }
    found
}

/// What `/proc/<pid>/fdinfo/<fd>` says about an open file: its open flags
/// (octal in the file) and, on kernels that show it, its inode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FdInfo {
    flags: u32,
    ino: Option<u64>,
}

impl FdInfo {
    fn parse(text: &str) -> Option<FdInfo> {
        let field = |name: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
                .map(str::trim)
        };
        Some(FdInfo {
            flags: u32::from_str_radix(field("flags")?, 8).ok()?,
            ino: field("ino").and_then(|v| v.parse().ok()),
        })
    }

    /// Opened for writing: access mode 1 (write only) or 2 (read and
    /// write); 0 is read only and 3 neither (ioctl-only opens). Said by
    /// number so that reading flags is not mistaken for opening.
    fn writes(&self) -> bool {
        matches!(self.flags & libc::O_ACCMODE as u32, 1 | 2)
    }
}

/// The processes other than this one that hold `file` open for writing,
/// by pid, from `/proc/<pid>/fd` and `fdinfo`. Processes that exit meanwhile
/// or whose `/proc` entries cannot be read are passed over: this names what
/// it can see.
fn writers_of(file: FileId) -> Vec<FileUse> {
    let Ok(procs) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    let me = std::process::id();
    let mut openers = Vec::new();
    for p in procs.filter_map(|e| e.ok()) {
        let Some(pid) = p.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        if pid == me {
            continue;
        }
        let Ok(fds) = fs::read_dir(p.path().join("fd")) else {
            continue;
        };
        let writes = fds
            .filter_map(|e| e.ok())
            .any(|fd| fd_writes(&p.path(), &fd.file_name(), file));
        if writes {
            let command = fs::read_to_string(p.path().join("comm"))
                .map(|c| c.trim_end().to_owned())
                .unwrap_or_else(|_| "?".into());
            openers.push(Opener {
                pid,
                command,
                node: String::new(),
            });
        }
    }
    openers.sort_by_key(|o| o.pid);
    match openers.is_empty() {
        true => Vec::new(),
        false => vec![FileUse::Writers { openers }],
    }
}

/// Whether descriptor `fd` of the process at `proc_dir` is `file` opened
/// for writing. Cheap tests first: a pipe, socket or anonymous inode has no
/// path; then the open flags and the inode from `fdinfo`; the file itself
/// is looked up (through the descriptor's link) only when those match.
fn fd_writes(proc_dir: &Path, fd: &std::ffi::OsStr, file: FileId) -> bool {
    let link = proc_dir.join("fd").join(fd);
    if !fs::read_link(&link).is_ok_and(|target| target.is_absolute()) {
        return false;
    }
    let Some(info) = fs::read_to_string(proc_dir.join("fdinfo").join(fd))
        .ok()
        .and_then(|t| FdInfo::parse(&t))
    else {
        return false;
    };
    if !info.writes() || info.ino.is_some_and(|ino| ino != file.2) {
        return false;
    }
    link.to_str()
        .and_then(stat_identity)
        .is_some_and(|(id, _)| id == Some(file))
}

/// Whether the kernel refuses an `O_EXCL` open of the device node with
/// `EBUSY`. `false` when the node is missing or is not this device (nothing
/// can be learnt then, and the other checks still stand).
fn exclusive_open_refused(dev: &BlockDevice) -> io::Result<bool> {
    use rustix::fs::{Mode, OFlags};
    let node = dev.dev_path();
    match rustix::fs::stat(&node) {
        Ok(st)
            if rustix::fs::FileType::from_raw_mode(st.st_mode).is_block_device()
                && rustix::fs::major(st.st_rdev) == dev.major
                && rustix::fs::minor(st.st_rdev) == dev.minor => {}
        _ => return Ok(false),
    }
    let flags = OFlags::RDONLY | OFlags::EXCL | OFlags::NONBLOCK | OFlags::CLOEXEC;
    match rustix::fs::open(&node, flags, Mode::empty()) {
        Ok(_fd) => Ok(false),
        Err(rustix::io::Errno::BUSY) => Ok(true),
        // No medium, no permission...: this check cannot tell; the others
        // have already spoken.
        Err(_) => Ok(false),
    }
}

/// How many leading bytes of a device [`has_data_signature`] looks at: enough
/// for every signature it knows (the farthest is btrfs, at 64 KiB + 64, and
/// swap on 64 KiB-page systems).
pub const SIGNATURE_PROBE_BYTES: usize = 68 * 1024;

fn at(buf: &[u8], offset: usize, pattern: &[u8]) -> bool {
    buf.get(offset..offset + pattern.len()) == Some(pattern)
}

fn le_u32(buf: &[u8], offset: usize) -> Option<u32> {
    let b: [u8; 4] = buf.get(offset..offset + 4)?.try_into().ok()?;
    Some(u32::from_le_bytes(b))
}

/// Which ext version the superblock at byte 1024 describes, from its feature
/// flags: anything ext4 introduced makes it ext4, a journal alone ext3.
fn ext_flavour(buf: &[u8]) -> &'static str {
    const COMPAT_HAS_JOURNAL: u32 = 0x4;
    // extents, 64bit, mmp, flex_bg, csum_seed, largedir, inline_data, encrypt...
    const INCOMPAT_EXT4: u32 =
        0x40 | 0x80 | 0x100 | 0x200 | 0x1000 | 0x2000 | 0x4000 | 0x8000 | 0x10000;
    // huge_file, gdt_csum, dir_nlink, extra_isize, quota, bigalloc, metadata_csum
    const RO_COMPAT_EXT4: u32 = 0x8 | 0x10 | 0x20 | 0x40 | 0x100 | 0x200 | 0x400;
    let compat = le_u32(buf, 1024 + 0x5C).unwrap_or(0);
    let incompat = le_u32(buf, 1024 + 0x60).unwrap_or(0);
    let ro_compat = le_u32(buf, 1024 + 0x64).unwrap_or(0);
    if incompat & INCOMPAT_EXT4 != 0 || ro_compat & RO_COMPAT_EXT4 != 0 {
        "ext4"
    } else if compat & COMPAT_HAS_JOURNAL != 0 {
        "ext3"
    } else {
        "ext2"
    }
}

/// Recognises a partition table or filesystem from the first bytes of a
/// device (pass [`SIGNATURE_PROBE_BYTES`] of them, or all there are). Returns
/// its name: `"GPT partition table"`, `"MBR partition table"`, `"ext2"`,
/// `"ext3"`, `"ext4"`, `"FAT12"`, `"FAT16"`, `"FAT32"`, `"exFAT"`, `"NTFS"`,
/// `"XFS"`, `"btrfs"`, `"swap"`, `"LUKS"` or `"ISO9660"`. `None` means no
/// known signature, not that the device is empty.
///
/// Filesystems are checked before partition tables because FAT, exFAT and NTFS
/// boot sectors also end in the MBR's 0x55AA, and GPT before MBR because a GPT
/// disk starts with a protective MBR.
pub fn has_data_signature(first_bytes: &[u8]) -> Option<&'static str> {
    let b = first_bytes;
    let boot_signature = at(b, 510, &[0x55, 0xAA]);
    if at(b, 0, b"LUKS\xba\xbe") {
        return Some("LUKS");
    }
    if at(b, 0, b"XFSB") {
        return Some("XFS");
    }
    if at(b, 3, b"NTFS    ") {
        return Some("NTFS");
    }
    if at(b, 3, b"EXFAT   ") {
        return Some("exFAT");
    }
    if boot_signature {
        if at(b, 54, b"FAT12") {
            return Some("FAT12");
        }
        if at(b, 54, b"FAT16") {
            return Some("FAT16");
        }
        if at(b, 82, b"FAT32") {
            return Some("FAT32");
        }
    }
    if at(b, 1080, &[0x53, 0xEF]) {
        return Some(ext_flavour(b));
    }
    if at(b, 65600, b"_BHRfS_M") {
        return Some("btrfs");
    }
    // The swap header fills the first page, whatever the page size is.
    if [4096, 8192, 16384, 65536]
        .iter()
        .any(|page| at(b, page - 10, b"SWAPSPACE2"))
    {
        return Some("swap");
    }
    if at(b, 32769, b"CD001") {
        return Some("ISO9660");
    }
    if at(b, 512, b"EFI PART") {
        return Some("GPT partition table");
    }
    if boot_signature
        && (0..4).any(|i| {
            let entry = &b[446 + 16 * i..446 + 16 * (i + 1)];
            // A used entry has a non-zero type byte and a non-zero size.
            entry[4] != 0 && entry[12..16] != [0, 0, 0, 0]
        })
    {
        return Some("MBR partition table");
    }
    None
}

/// Reads the first [`SIGNATURE_PROBE_BYTES`] of `path` (fewer if it is
/// shorter) and passes them to [`has_data_signature`].
pub fn probe_data_signature(path: &Path) -> io::Result<Option<&'static str>> {
    let mut buf = Vec::with_capacity(SIGNATURE_PROBE_BYTES);
    fs::File::open(path)?
        .take(SIGNATURE_PROBE_BYTES as u64)
        .read_to_end(&mut buf)?;
    Ok(has_data_signature(&buf))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::sysfs::tests::{
        LoopDev, MIB, Mounted, have, loop_lock, mbr_two_partitions, mkfs_ext4, or_skip,
        partitioned_loop, run,
    };

    fn put(buf: &mut [u8], offset: usize, bytes: &[u8]) {
        buf[offset..offset + bytes.len()].copy_from_slice(bytes);
    }

    fn blank() -> Vec<u8> {
        vec![0u8; SIGNATURE_PROBE_BYTES]
    }

    #[test]
    fn signatures_of_built_buffers() {
        assert_eq!(has_data_signature(&blank()), None);
        assert_eq!(has_data_signature(&[]), None);
        assert_eq!(has_data_signature(&[0xFF; 100]), None);

        // 0x55AA alone (all four entries empty) is not a partition table.
        let mut b = blank();
        put(&mut b, 510, &[0x55, 0xAA]);
        assert_eq!(has_data_signature(&b), None);
        let mut b = blank();
        put(&mut b, 0, &mbr_two_partitions());
        assert_eq!(has_data_signature(&b), Some("MBR partition table"));
        put(&mut b, 510, &[0, 0]);
        assert_eq!(has_data_signature(&b), None);

        let mut b = blank();
        put(&mut b, 0, &mbr_two_partitions());
        put(&mut b, 512, b"EFI PART");
        assert_eq!(has_data_signature(&b), Some("GPT partition table"));

        let ext = |compat: u32, incompat: u32, ro_compat: u32| {
            let mut b = blank();
            put(&mut b, 1080, &0xEF53u16.to_le_bytes());
            put(&mut b, 1024 + 0x5C, &compat.to_le_bytes());
            put(&mut b, 1024 + 0x60, &incompat.to_le_bytes());
            put(&mut b, 1024 + 0x64, &ro_compat.to_le_bytes());
            has_data_signature(&b)
        };
        assert_eq!(ext(0, 0x2, 0x1), Some("ext2"));
        assert_eq!(ext(0x4, 0x2, 0x1), Some("ext3"));
        assert_eq!(ext(0x4, 0x2 | 0x40, 0x1), Some("ext4"));
        assert_eq!(ext(0x4, 0x2, 0x400), Some("ext4"));
        // Cut off after the magic: still ext, flavour from what is there.
        let mut b = vec![0u8; 1082];
        put(&mut b, 1080, &[0x53, 0xEF]);
        assert_eq!(has_data_signature(&b), Some("ext2"));

        for (offset, tag, name) in [
            (54, &b"FAT12   "[..], "FAT12"),
            (54, b"FAT16   ", "FAT16"),
            (82, b"FAT32   ", "FAT32"),
        ] {
            let mut b = blank();
            put(&mut b, offset, tag);
            assert_eq!(has_data_signature(&b), None, "{name} without 0x55AA");
            put(&mut b, 510, &[0x55, 0xAA]);
            // Boot code where a partition entry would be must not make it MBR.
            put(&mut b, 446, &[0x33; 64]);
            assert_eq!(has_data_signature(&b), Some(name));
        }

        let cases: [(usize, &[u8], &str); 9] = [
            (3, b"EXFAT   ", "exFAT"),
            (3, b"NTFS    ", "NTFS"),
            (0, b"XFSB", "XFS"),
            (65600, b"_BHRfS_M", "btrfs"),
            (4086, b"SWAPSPACE2", "swap"),
            (65526, b"SWAPSPACE2", "swap"),
            (0, b"LUKS\xba\xbe", "LUKS"),
            (32769, b"CD001", "ISO9660"),
            (16374, b"SWAPSPACE2", "swap"),
        ];
        for (offset, tag, name) in cases {
            let mut b = blank();
            put(&mut b, offset, tag);
            assert_eq!(has_data_signature(&b), Some(name), "{name} at {offset}");
            // A buffer that ends inside the signature does not have it.
            assert_eq!(has_data_signature(&b[..offset + tag.len() - 1]), None);
            // NTFS, exFAT and hybrid ISO images carry an MBR too.
            put(&mut b, 446, &mbr_two_partitions()[446..]);
            assert_eq!(has_data_signature(&b), Some(name), "{name} with an MBR");
        }
    }

    #[test]
    fn fdinfo_tells_writers_from_readers() {
        let rdwr = FdInfo::parse("pos:\t0\nflags:\t02100002\nmnt_id:\t27\nino:\t1234\n");
        assert_eq!(
            rdwr,
            Some(FdInfo {
                flags: 0o2100002,
                ino: Some(1234)
            })
        );
        assert!(rdwr.unwrap().writes());
        let wronly = FdInfo::parse("pos:\t0\nflags:\t0102001\nmnt_id:\t27\n").unwrap();
        assert!(wronly.writes());
        assert_eq!(wronly.ino, None, "older kernels show no inode");
        let rdonly = FdInfo::parse("pos:\t0\nflags:\t0100000\nino:\t9\n").unwrap();
        assert!(!rdonly.writes());
        // O_PATH has access mode 0: it cannot write.
        assert!(!FdInfo::parse("flags:\t012100000\n").unwrap().writes());
        assert_eq!(FdInfo::parse("pos:\t0\n"), None);
    }

    #[test]
    fn mountinfo_roots_show_bound_files() {
        let text = "27 1 254:0 / / rw - ext4 /dev/vda rw\n\
                    90 27 0:27 /tmp/a\\040file /tmp/b rw,relatime shared:1 - tmpfs tmpfs rw\n\
                    short line\n";
        assert_eq!(
            mount_roots(text),
            [
                ("/".to_string(), "/".to_string()),
                ("/tmp/a file".to_string(), "/tmp/b".to_string())
            ]
        );
    }

    #[test]
    fn file_uses_name_their_fixes() {
        let said = |u: FileUse| u.sentence();
        assert_eq!(
            said(FileUse::Swap {
                listed_as: "/swap file".into()
            }),
            "it is an active swap file (listed in /proc/swaps as /swap file): turn it off with `swapoff '/swap file'`"
        );
        assert!(
            said(FileUse::BoundOn {
                mount_point: "/srv/b".into()
            })
            .ends_with("unmount it with `umount /srv/b`")
        );
        assert!(
            said(FileUse::BindMount {
                mount_point: "/srv/b".into()
            })
            .contains("bind mount of another file over /srv/b")
        );
        let opener = |pid| Opener {
            pid,
            command: "sleep".into(),
            node: String::new(),
        };
        let one = said(FileUse::Writers {
            openers: vec![opener(7)],
        });
        assert!(
            one.starts_with("it is open for writing in pid 7 (sleep),")
                && one.contains("stop that process"),
            "{one}"
        );
        let many = said(FileUse::Writers {
            openers: (1..=6).map(opener).collect(),
        });
        assert!(many.contains("pid 4 (sleep), 2 more"), "{many}");
        assert!(many.contains("stop those processes"), "{many}");
    }

    #[test]
    fn a_file_written_by_another_process_is_in_use_a_file_read_is_not() {
        use std::io::{BufRead, BufReader};
        use std::os::unix::fs::MetadataExt;
        use std::process::{Command, Stdio};
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("data");
        fs::write(&file, b"data").unwrap();
        let meta = fs::metadata(&file).unwrap();
        let id = (
            rustix::fs::major(meta.dev()),
            rustix::fs::minor(meta.dev()),
            meta.ino(),
        );
        assert_eq!(why_file_in_use(&file, id).unwrap(), None);
        // This process's own descriptors are not another program's.
        let _mine = fs::OpenOptions::new().append(true).open(&file).unwrap();
        assert_eq!(why_file_in_use(&file, id).unwrap(), None);
        for (redirect, writes) in [("3<", false), ("3>>", true), ("3<>", true)] {
            let mut child = Command::new("sh")
                .arg("-c")
                .arg(format!("exec {redirect}\"$0\"; echo ready; exec sleep 30"))
                .arg(&file)
                .stdout(Stdio::piped())
                .spawn()
                .unwrap();
            let mut line = String::new();
            BufReader::new(child.stdout.take().unwrap())
                .read_line(&mut line)
                .unwrap();
            let why = why_file_in_use(&file, id).unwrap();
            let _ = child.kill();
            let _ = child.wait();
            match writes {
                true => assert!(
                    why.as_deref()
                        .is_some_and(|w| w.contains(&format!("pid {} (", child.id()))),
                    "{redirect}: {why:?}"
                ),
                false => assert_eq!(why, None, "{redirect}"),
            }
        }
    }

    #[test]
    fn swaps_file_paths_are_unescaped() {
        let text = "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n\
                    /dev/zram0                              partition\t8388604\t\t0\t\t100\n\
                    /swap\\040file                           file\t\t1048572\t\t0\t\t-2\n";
        assert_eq!(parse_swaps(text), ["/dev/zram0", "/swap file"]);
        assert!(parse_swaps("Filename Type Size Used Priority\n").is_empty());
        assert!(parse_swaps("").is_empty());
    }

    fn fake_device(name: &str, major: u32, minor: u32) -> BlockDevice {
        BlockDevice {
            name: name.into(),
            major,
            minor,
            disk: name.into(),
            partition: false,
            size_bytes: 1 << 30,
            logical_block_size: 512,
            physical_block_size: 512,
            read_only: false,
            rotational: Some(true),
            model: None,
            loop_backing_file: None,
        }
    }

    fn said(uses: Vec<Use>) -> Vec<String> {
        uses.iter().map(Use::sentence).collect()
    }

    fn holder(name: &str, dm_name: Option<&str>) -> Holder {
        Holder {
            name: name.into(),
            dm_name: dm_name.map(Into::into),
        }
    }

    #[test]
    fn reasons_name_mounts_holders_and_swap_with_their_fixes() {
        let mounts = crate::probe::sysfs::parse_mountinfo(
            "27 1 254:0 / / rw - ext4 /dev/vda rw\n\
             40 27 8:17 / /mnt/my\\040data rw - xfs /dev/sdb1 rw\n\
             41 27 8:17 /sub /srv rw - xfs /dev/sdb1 rw\n",
        );
        let swaps = vec![("/dev/sdb2".to_string(), (8, 18))];
        let sdb1 = fake_device("sdb1", 8, 17);
        assert_eq!(
            said(reasons_for(&sdb1, &mounts, &[], &swaps)),
            ["/dev/sdb1 is mounted on /mnt/my data (xfs), /srv (xfs): \
              unmount '/mnt/my data' and /srv"]
        );
        let sdb = fake_device("sdb", 8, 16);
        let holders = [
            holder("dm-0", Some("vg-home")),
            holder("dm-3", None),
            holder("md127", None),
            holder("bcache0", None),
        ];
        assert_eq!(
            said(reasons_for(&sdb, &mounts, &holders, &swaps)),
            [
                "/dev/sdb has holders: dm-0, dm-3, md127, bcache0: remove what is stacked \
              on it (`dmsetup remove vg-home`, `dmsetup remove /dev/dm-3`, \
              `mdadm --stop /dev/md127`, stop /dev/bcache0)"
            ]
        );
        let sdb2 = fake_device("sdb2", 8, 18);
        assert_eq!(
            said(reasons_for(&sdb2, &mounts, &[], &swaps)),
            ["/dev/sdb2 is active swap (listed as /dev/sdb2): \
              turn it off with `swapoff /dev/sdb2`"]
        );
        assert!(reasons_for(&fake_device("sdc", 8, 32), &mounts, &[], &swaps).is_empty());
    }

    #[test]
    fn loops_and_exclusive_openers_are_named_with_their_fixes() {
        let loops = Use::LoopsOver {
            node: "/dev/sdb".into(),
            loops: vec!["loop4".into(), "loop5".into()],
        };
        assert_eq!(
            loops.sentence(),
            "/dev/sdb has loop devices set up over it: loop4, loop5: \
             detach them with `losetup -d /dev/loop4 /dev/loop5`"
        );
        let unseen = Use::Claimed {
            node: "/dev/sdb".into(),
            openers: Vec::new(),
        };
        assert!(unseen.sentence().starts_with(
            "/dev/sdb is in use: the kernel refused to open it exclusively (mounted in another"
        ));
        assert!(
            unseen
                .sentence()
                .ends_with(": unmount or release it where it is used")
        );
        let opener = |pid, node: &str| Opener {
            pid,
            command: "mkfs.ext4".into(),
            node: node.into(),
        };
        let one = Use::Claimed {
            node: "/dev/sdb".into(),
            openers: vec![opener(812, "/dev/sdb")],
        };
        assert_eq!(
            one.sentence(),
            "/dev/sdb is in use: the kernel refused to open it exclusively, and it is \
             open in pid 812 (mkfs.ext4): close that program (or let it finish)"
        );
        let many = Use::Claimed {
            node: "/dev/sdb".into(),
            openers: (1..=6).map(|pid| opener(pid, "/dev/sdb1")).collect(),
        };
        assert_eq!(
            many.what(),
            "/dev/sdb is in use: the kernel refused to open it exclusively, and it is \
             open in pid 1 (mkfs.ext4, through /dev/sdb1), pid 2 (mkfs.ext4, through \
             /dev/sdb1), pid 3 (mkfs.ext4, through /dev/sdb1), pid 4 (mkfs.ext4, \
             through /dev/sdb1), 2 more"
        );
        assert_eq!(many.fix(), "close those programs (or let them finish)");
        assert_eq!(sentences(&[]), None);
        assert_eq!(
            sentences(&[loops.clone(), one.clone()]),
            Some(format!("{}; {}", loops.sentence(), one.sentence()))
        );
    }

    #[test]
    fn backing_sentences_name_the_loop_its_users_and_the_detach() {
        assert_eq!(
            backing_sentence("/dev/loop3", &[]),
            "it backs loop device /dev/loop3, which is attached though nothing uses \
             it now: detach it with `losetup -d /dev/loop3`"
        );
        let mounted = Use::Mounted {
            node: "/dev/loop3".into(),
            on: vec![("/mnt/img".into(), "ext4".into())],
        };
        assert_eq!(
            backing_sentence("/dev/loop3", std::slice::from_ref(&mounted)),
            "it backs loop device /dev/loop3, and /dev/loop3 is mounted on /mnt/img \
             (ext4): unmount /mnt/img and detach it with `losetup -d /dev/loop3`"
        );
        let swap = Use::Swap {
            node: "/dev/loop3p2".into(),
            listed_as: "/dev/loop3p2".into(),
        };
        assert_eq!(
            backing_sentence("/dev/loop3", &[mounted, swap]),
            "it backs loop device /dev/loop3, and /dev/loop3 is mounted on /mnt/img \
             (ext4) and /dev/loop3p2 is active swap (listed as /dev/loop3p2): unmount \
             /mnt/img, turn it off with `swapoff /dev/loop3p2` and detach it with \
             `losetup -d /dev/loop3`"
        );
    }

    #[test]
    fn shell_words_are_quoted_only_when_needed() {
        assert_eq!(shell_word("/mnt/usb-1_A.b+c"), "/mnt/usb-1_A.b+c");
        assert_eq!(shell_word("/mnt/my data"), "'/mnt/my data'");
        assert_eq!(shell_word("/mnt/it's"), r"'/mnt/it'\''s'");
        assert_eq!(shell_word("/mnt/$HOME"), "'/mnt/$HOME'");
        assert_eq!(shell_word(""), "''");
    }

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

    fn busy(dev: &BlockDevice) -> Option<String> {
        why_busy(dev).unwrap()
    }

    /// The device node held open with `O_EXCL` until dropped, as `mkfs` or
    /// another benchmark would.
    fn hold_exclusively(node: &Path) -> rustix::fd::OwnedFd {
        use rustix::fs::{Mode, OFlags};
        rustix::fs::open(
            node,
            OFlags::RDONLY | OFlags::EXCL | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .unwrap()
    }

    #[test]
    fn loop_device_busy_while_claimed_or_mounted() {
        let _lock = loop_lock();
        let lo = or_skip!(LoopDev::new(64 * MIB, &[]));
        let dev = BlockDevice::from_path(&lo.node).unwrap().unwrap();
        assert_eq!(busy(&dev), None);
        assert_eq!(probe_data_signature(&lo.node).unwrap(), None);

        let held = hold_exclusively(&lo.node);
        let why = busy(&dev).expect("busy while held");
        assert!(
            why.starts_with(&format!("{} is in use", lo.node.display())),
            "{why}"
        );
        // The holder, this very process, is found and named.
        assert!(
            why.contains(&format!("open in pid {} (", std::process::id())),
            "{why}"
        );
        assert!(
            why.ends_with("close that program (or let it finish)"),
            "{why}"
        );
        drop(held);
        assert_eq!(busy(&dev), None);

        or_skip!(mkfs_ext4(lo.node_str()));
        let mut head = Vec::new();
        fs::File::open(&lo.node)
            .unwrap()
            .take(70 * 1024)
            .read_to_end(&mut head)
            .unwrap();
        assert_eq!(head.len(), 70 * 1024);
        assert_eq!(has_data_signature(&head), Some("ext4"));
        assert_eq!(probe_data_signature(&lo.node).unwrap(), Some("ext4"));
        // Nothing uses a device merely because it holds a filesystem.
        assert_eq!(busy(&dev), None);

        {
            let mounted = or_skip!(Mounted::new(lo.node_str()));
            let mount_point = fs::canonicalize(mounted.dir.path()).unwrap();
            assert_eq!(
                busy(&dev).as_deref(),
                Some(
                    format!(
                        "{} is mounted on {} (ext4): unmount {}",
                        lo.node.display(),
                        mount_point.display(),
                        mount_point.display()
                    )
                    .as_str()
                )
            );
        }
        assert_eq!(busy(&dev), None);
    }

    #[test]
    fn partitions_make_their_disk_busy_but_not_their_siblings() {
        let _lock = loop_lock();
        let lo = or_skip!(partitioned_loop());
        let disk = BlockDevice::from_path(&lo.node).unwrap().unwrap();
        let p1 = BlockDevice::from_name(&format!("{}p1", lo.name)).unwrap();
        let p2 = BlockDevice::from_name(&format!("{}p2", lo.name)).unwrap();
        assert_eq!(
            probe_data_signature(&lo.node).unwrap(),
            Some("MBR partition table")
        );
        for d in [&disk, &p1, &p2] {
            assert_eq!(busy(d), None, "{}", d.name);
        }

        or_skip!(mkfs_ext4(p1.dev_path().to_str().unwrap()));
        assert_eq!(probe_data_signature(&p1.dev_path()).unwrap(), Some("ext4"));
        {
            let mounted = or_skip!(Mounted::new(p1.dev_path().to_str().unwrap()));
            let mount_point = fs::canonicalize(mounted.dir.path()).unwrap();
            let want = format!(
                "/dev/{}p1 is mounted on {} (ext4): unmount {}",
                lo.name,
                mount_point.display(),
                mount_point.display()
            );
            assert_eq!(busy(&disk), Some(want.clone()));
            assert_eq!(busy(&p1), Some(want));
            assert_eq!(busy(&p2), None);
        }
        for d in [&disk, &p1, &p2] {
            assert_eq!(busy(d), None, "{}", d.name);
        }

        // A claimed partition makes its disk busy, not its sibling...
        let held = hold_exclusively(&p1.dev_path());
        assert!(busy(&disk).unwrap().contains("in use"));
        assert_eq!(busy(&p2), None);
        drop(held);
        // ...and a claimed disk makes every partition busy.
        let held = hold_exclusively(&lo.node);
        assert!(busy(&p1).unwrap().contains("in use"));
        assert!(busy(&p2).unwrap().contains("in use"));
        drop(held);
        assert_eq!(busy(&p2), None);
    }

    /// Swap on a device, turned off when dropped.
    struct SwapOn(String);

    impl Drop for SwapOn {
        fn drop(&mut self) {
            if let Err(e) = run("swapoff", &[&self.0]) {
                eprintln!("cleanup: {e}");
            }
        }
    }

    #[test]
    fn active_swap_is_busy() {
        let _lock = loop_lock();
        if !have("mkswap") || !have("swapon") {
            println!("skipped: mkswap or swapon missing");
            return;
        }
        let lo = or_skip!(LoopDev::new(64 * MIB, &[]));
        let dev = BlockDevice::from_path(&lo.node).unwrap().unwrap();
        or_skip!(run("mkswap", &[lo.node_str()]));
        assert_eq!(probe_data_signature(&lo.node).unwrap(), Some("swap"));
        assert_eq!(busy(&dev), None);
        {
            or_skip!(run("swapon", &["-p", "-1", lo.node_str()]));
            let _swap = SwapOn(lo.node_str().to_owned());
            assert_eq!(
                busy(&dev),
                Some(format!(
                    "{0} is active swap (listed as {0}): turn it off with `swapoff {0}`",
                    lo.node.display()
                ))
            );
        }
        assert_eq!(busy(&dev), None);
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
