//! What data a device seems to hold: a device nothing uses may still hold
//! data nobody has mounted right now, so the common on-disk formats are
//! recognised for the caller to warn (or demand confirmation) before a
//! destructive run.

/// How many leading bytes of a device [`has_data_signature`] looks at: enough
/// for every signature it knows (the farthest is btrfs, at 64 KiB + 64, and
/// swap on 64 KiB-page systems).
pub const SIGNATURE_PROBE_BYTES: usize = 68 * 1024;

fn at(buf: &[u8], offset: usize, pattern: &[u8]) -> bool {
    buf.get(offset..offset + pattern.len()) == Some(pattern)
}

/// A format known by the bytes it holds at an offset: (offset, bytes,
/// name).
type Magic = (usize, &'static [u8], &'static str);

/// Headers at the very start, checked first.
const HEADERS: [Magic; 4] = [
    (0, b"LUKS\xba\xbe", "LUKS"),
    (0, b"XFSB", "XFS"),
    (3, b"NTFS    ", "NTFS"),
    (3, b"EXFAT   ", "exFAT"),
];

/// FAT's type strings in its boot sector, believed only behind the boot
/// signature.
const FAT: [Magic; 3] = [
    (54, b"FAT12", "FAT12"),
    (54, b"FAT16", "FAT16"),
    (82, b"FAT32", "FAT32"),
];

/// The name of the first format of `table` whose bytes `buf` holds.
fn first_magic(buf: &[u8], table: &[Magic]) -> Option<&'static str> {
    let (_, _, name) = table
        .iter()
        .find(|(offset, bytes, _)| at(buf, *offset, bytes))?;
    Some(name)
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
    if let Some(name) = first_magic(b, &HEADERS) {
        return Some(name);
    }
    if boot_signature && let Some(name) = first_magic(b, &FAT) {
        return Some(name);
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
/// shorter) and passes them to [`has_data_signature`]; for tests only: a
/// target is read through the descriptor it was examined through.
#[cfg(test)]
pub fn probe_data_signature(path: &std::path::Path) -> std::io::Result<Option<&'static str>> {
    use std::io::Read;
    let mut buf = Vec::with_capacity(SIGNATURE_PROBE_BYTES);
    std::fs::File::open(path)?
        .take(SIGNATURE_PROBE_BYTES as u64)
        .read_to_end(&mut buf)?;
    Ok(has_data_signature(&buf))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::sysfs::tests::mbr_two_partitions;

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
}
