//! Active swap: a device or file in `/proc/swaps` is the kernel's, and a
//! write test under it corrupts memory paged out there.

use super::messages::FileUse;
use super::stat_identity;
use crate::medium::storage::FileId;
use crate::probe::sysfs::unescape_octal;
use std::fs;
use std::io;

/// The block devices in active swap: each `/proc/swaps` path that is a block
/// device node, with its major:minor. Swap files are left out here (their
/// filesystem's mount already marks their device busy); [`swap_files`]
/// finds one given as a target.
pub(super) fn swap_devices() -> io::Result<Vec<(String, (u32, u32))>> {
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
pub(super) fn swap_files(file: FileId) -> Vec<FileUse> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn swaps_file_paths_are_unescaped() {
        let text = "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n\
                    /dev/zram0                              partition\t8388604\t\t0\t\t100\n\
                    /swap\\040file                           file\t\t1048572\t\t0\t\t-2\n";
        assert_eq!(parse_swaps(text), ["/dev/zram0", "/swap file"]);
        assert!(parse_swaps("Filename Type Size Used Priority\n").is_empty());
        assert!(parse_swaps("").is_empty());
    }
}
