//! Bind mounts of a file: a file bind-mounted elsewhere is seen, and used,
//! there too, and a path that is itself a bind mount names another file.

use super::messages::FileUse;
use super::stat_identity;
use crate::medium::storage::FileId;
use crate::probe::sysfs::parse_mountinfo;
use std::fs;
use std::path::Path;

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
pub(super) fn bind_mounts_of(path: &Path, file: FileId) -> Vec<FileUse> {
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
