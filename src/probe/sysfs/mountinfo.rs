//! Mount facts from `/proc/self/mountinfo`: every mount, and the one a path
//! resolves into (walking the mount tree, so over-mounts are seen as the
//! kernel sees them).

use super::attrs::{parse_dev, with_path};
use serde::{Deserialize, Serialize};
use std::fs;
use std::io;
use std::path::{Component, Path};

/// One line of /proc/self/mountinfo.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Mount {
    /// Major number of the mounted device.
    pub major: u32,
    /// Minor number of the mounted device.
    pub minor: u32,
    /// What is mounted, as a path inside its file system (`/` for a whole
    /// file system; a file's own path where a file is bind-mounted).
    /// Unescaped; not stored with results.
    #[serde(skip)]
    pub root: String,
    /// Unescaped (`\040` in the file is a space here).
    pub mount_point: String,
    /// File system type (`ext4`, `vfat`).
    pub fstype: String,
    /// What is mounted (`/dev/sda1`, a server share).
    pub source: String,
    /// The per-mount options then the superblock options, comma-separated,
    /// an option appearing in both only once (`rw,relatime,errors=remount-ro`).
    pub options: String,
}

/// A parsed mountinfo line together with the ids that place it in the tree.
#[derive(Debug, Clone)]
struct MountEntry {
    id: u64,
    parent: u64,
    mount: Mount,
}

/// Undoes the kernel's octal escaping (`\040` space, `\011` tab, `\012`
/// newline, `\134` backslash). A backslash not followed by three octal digits
/// is kept as it is.
pub(crate) fn unescape_octal(field: &str) -> String {
    let b = field.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && let Some(d) = b.get(i + 1..i + 4)
            && d.iter().all(|c| (b'0'..=b'7').contains(c))
        {
            let v =
                u32::from(d[0] - b'0') * 64 + u32::from(d[1] - b'0') * 8 + u32::from(d[2] - b'0');
            if let Ok(byte) = u8::try_from(v) {
                out.push(byte);
                i += 4;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn join_options(per_mount: &str, per_super: &str) -> String {
    let mut seen: Vec<&str> = Vec::new();
    for opt in per_mount.split(',').chain(per_super.split(',')) {
        if !opt.is_empty() && !seen.contains(&opt) {
            seen.push(opt);
        }
    }
    seen.join(",")
}

/// Parses one mountinfo line (proc(5)):
/// `id parent major:minor root mount-point options [optional...] - fstype source super-options`.
fn parse_mountinfo_line(line: &str) -> Option<MountEntry> {
    let fields: Vec<&str> = line.split(' ').collect();
    let sep = fields.iter().position(|f| *f == "-")?;
    if sep < 6 {
        return None;
    }
    let id = fields[0].parse().ok()?;
    let parent = fields[1].parse().ok()?;
    let (major, minor) = parse_dev(fields[2])?;
    let after = &fields[sep + 1..];
    let fstype = after.first()?;
    Some(MountEntry {
        id,
        parent,
        mount: Mount {
            major,
            minor,
            root: unescape_octal(fields[3]),
            mount_point: unescape_octal(fields[4]),
            fstype: unescape_octal(fstype),
            source: after.get(1).map(|s| unescape_octal(s)).unwrap_or_default(),
            options: join_options(fields[5], after.get(2).copied().unwrap_or("")),
        },
    })
}

fn parse_entries(text: &str) -> Vec<MountEntry> {
    text.lines().filter_map(parse_mountinfo_line).collect()
}

/// Parses the text of `/proc/self/mountinfo`, in file order. Lines that do not
/// have the documented shape are skipped.
pub fn parse_mountinfo(text: &str) -> Vec<Mount> {
    parse_entries(text).into_iter().map(|e| e.mount).collect()
}

fn read_mountinfo() -> io::Result<String> {
    let path = Path::new("/proc/self/mountinfo");
    fs::read_to_string(path).map_err(|e| with_path(e, path))
}

/// The number of normal components of `mount_point` when it is a
/// path-component prefix of `path` (so `/mnt/a` is a prefix of `/mnt/a/b` but
/// not of `/mnt/ab`); `None` when it is not.
fn prefix_depth(mount_point: &str, path: &Path) -> Option<usize> {
    let mp = Path::new(mount_point);
    if !mp.is_absolute() || !path.starts_with(mp) {
        return None;
    }
    Some(
        mp.components()
            .filter(|c| matches!(c, Component::Normal(_)))
            .count(),
    )
}

/// The mount an absolute, canonical `path` resolves into.
///
/// The mount tree is walked from the root: at each mount, among its children
/// whose mount point is a prefix of `path`, the one nearest the root covers the
/// others (a mount on `/a` hides whatever was mounted on `/a/b` before it), and
/// a mount stacked on the same point is a child of the one it covers, so it is
/// reached next. When the tree cannot be walked (no root found) the rule falls
/// back to the longest mount-point prefix, later lines winning ties.
fn find_mount(entries: &[MountEntry], path: &Path) -> Option<Mount> {
    let candidates: Vec<(usize, usize)> = entries
        .iter()
        .enumerate()
        .filter_map(|(i, e)| prefix_depth(&e.mount.mount_point, path).map(|d| (i, d)))
        .collect();
    let ids: Vec<u64> = entries.iter().map(|e| e.id).collect();
    // The root: a "/" mount whose parent is not listed (it lies outside this
    // process's root) or is itself. The last such line wins.
    let root = candidates.iter().rev().find(|&&(i, d)| {
        let e = &entries[i];
        d == 0 && (e.parent == e.id || !ids.contains(&e.parent))
    });
    if let Some(&(mut cur, _)) = root {
        for _ in 0..entries.len() {
            let cur_id = entries[cur].id;
            let mut next: Option<(usize, usize)> = None;
            for &(i, d) in &candidates {
                if i == cur || entries[i].parent != cur_id {
                    continue;
                }
                if next.is_none_or(|(_, best)| d <= best) {
                    next = Some((i, d));
                }
            }
            match next {
                Some((i, _)) => cur = i,
                None => return Some(entries[cur].mount.clone()),
            }
        }
    }
    let mut best: Option<(usize, usize)> = None;
    for &(i, d) in &candidates {
        if best.is_none_or(|(_, b)| d >= b) {
            best = Some((i, d));
        }
    }
    best.map(|(i, _)| entries[i].mount.clone())
}

/// The mount that `path` lives on: the mount that the canonical path resolves
/// into, in this process's mount namespace. `Ok(None)` only if no mount point
/// is a prefix of it, which does not happen in an ordinary namespace.
pub fn mount_of(path: &Path) -> io::Result<Option<Mount>> {
    let canonical = fs::canonicalize(path).map_err(|e| with_path(e, path))?;
    let entries = parse_entries(&read_mountinfo()?);
    Ok(find_mount(&entries, &canonical))
}

/// Every mount of the filesystem on device `major:minor` in this process's
/// mount namespace, in mountinfo order (bind mounts and over-mounted ones
/// included).
pub fn mounts_of_device(major: u32, minor: u32) -> io::Result<Vec<Mount>> {
    Ok(parse_mountinfo(&read_mountinfo()?)
        .into_iter()
        .filter(|m| m.major == major && m.minor == minor)
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    const MOUNTINFO: &str = "\
22 27 0:21 / /proc rw,relatime - proc proc rw
27 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw,discard
40 27 7:3 / /mnt/my\\040disk rw,nosuid shared:7 master:2 - ext4 /dev/loop3 rw,errors=remount-ro
41 27 0:40 /sub /srv\\011tab\\012nl\\134bs ro,relatime - tmpfs  rw,size=4k
not a mountinfo line
42 27 0:41 / /broken rw
";

    #[test]
    fn mountinfo_parses_fields_escapes_and_optional_fields() {
        let m = parse_mountinfo(MOUNTINFO);
        assert_eq!(m.len(), 4, "{m:#?}");
        assert_eq!(
            m[1],
            Mount {
                major: 254,
                minor: 0,
                root: "/".into(),
                mount_point: "/".into(),
                fstype: "ext4".into(),
                source: "/dev/vda".into(),
                options: "rw,relatime,discard".into(),
            }
        );
        assert_eq!(
            m[2],
            Mount {
                major: 7,
                minor: 3,
                root: "/".into(),
                mount_point: "/mnt/my disk".into(),
                fstype: "ext4".into(),
                source: "/dev/loop3".into(),
                options: "rw,nosuid,errors=remount-ro".into(),
            }
        );
        // An empty source leaves an empty field between two spaces.
        assert_eq!(m[3].mount_point, "/srv\ttab\nnl\\bs");
        assert_eq!(m[3].source, "");
        assert_eq!(m[3].fstype, "tmpfs");
        assert_eq!(m[3].options, "ro,relatime,rw,size=4k");
    }

    #[test]
    fn unescape_octal_keeps_what_is_not_an_escape() {
        assert_eq!(unescape_octal(r"a\040b"), "a b");
        assert_eq!(unescape_octal(r"a\\b"), r"a\\b");
        assert_eq!(unescape_octal(r"a\04"), r"a\04");
        assert_eq!(unescape_octal(r"a\089"), r"a\089");
        assert_eq!(unescape_octal(r"\777x"), r"\777x");
        assert_eq!(unescape_octal(r"end\"), r"end\");
    }

    fn find(text: &str, path: &str) -> Option<String> {
        find_mount(&parse_entries(text), Path::new(path)).map(|m| m.source)
    }

    #[test]
    fn mount_lookup_uses_component_prefixes_and_stacking() {
        let text = "\
1 1 0:1 / / rw - rootfs rootfs rw
27 1 254:0 / / rw - ext4 root rw
30 27 7:0 / /mnt/a rw - ext4 a rw
31 27 7:1 / /mnt/ab rw - ext4 ab rw
32 30 7:2 / /mnt/a rw - ext4 a-over rw
33 27 7:3 / /mnt/x/y rw - ext4 xy rw
34 27 7:4 / /mnt/x rw - ext4 x-later rw
35 27 7:5 / /mnt/my\\040disk rw - ext4 sp rw
";
        assert_eq!(find(text, "/").as_deref(), Some("root"));
        assert_eq!(find(text, "/etc/passwd").as_deref(), Some("root"));
        // Over-mount on the same point: the later one is on top.
        assert_eq!(find(text, "/mnt/a").as_deref(), Some("a-over"));
        assert_eq!(find(text, "/mnt/a/f").as_deref(), Some("a-over"));
        // `/mnt/a` is not a prefix of `/mnt/ab`.
        assert_eq!(find(text, "/mnt/ab/f").as_deref(), Some("ab"));
        assert_eq!(find(text, "/mnt/abc").as_deref(), Some("root"));
        // A later mount on `/mnt/x` hides the earlier one on `/mnt/x/y`.
        assert_eq!(find(text, "/mnt/x/y/f").as_deref(), Some("x-later"));
        assert_eq!(find(text, "/mnt/my disk/f").as_deref(), Some("sp"));

        // Without a root (parents all listed, none its own), the longest
        // prefix wins and later lines win ties.
        let rootless = "\
5 6 254:0 / / rw - ext4 root rw
6 5 7:0 / /mnt rw - ext4 first rw
7 5 7:1 / /mnt rw - ext4 second rw
";
        assert_eq!(find(rootless, "/mnt/f").as_deref(), Some("second"));
        assert_eq!(find(rootless, "/usr").as_deref(), Some("root"));
        assert_eq!(find("", "/usr"), None);
    }
}
