//! After a fake verdict: the partition table that makes the card usable at
//! its real size, as f3fix does (F3's "f3fix: edit the partition table of
//! a fake drive"), written by iocurve's own code rather than libparted.
//!
//! Why: a fake card loses whatever is written beyond its real size, so
//! the one safe layout is a partition that ends at or before the last good
//! sector. Like f3fix this writes one MBR partition (FAT32 with LBA, type
//! 0x0C, which every camera and computer reads) starting at 1 MiB, the
//! start SD cards are formatted with (the SD Association's formatter, and
//! sfdisk's default), and ends it on a boundary of 1 MiB, or of the erase
//! block when the kernel states one, at or below the last good sector: a
//! file system then never spans a partly lost erase block. The same table
//! is printed as `sfdisk` and `parted` command lines for whoever prefers
//! them.
//!
//! The MBR is the classic one (the IBM PC layout every partitioner
//! writes): 446 bytes of boot code (zero: the card boots nothing), four
//! 16-byte entries, the 0x55AA signature in bytes 510–511; sector counts
//! are 32-bit, so a partition ends below 2 TiB, far above any fake's real
//! size.

use super::FlashIo;
use std::io;

/// Bytes per sector of the table (what the MBR counts in).
pub const SECTOR: u64 = 512;
/// The first sector of the partition: 1 MiB.
pub const START: u64 = 2048;
/// FAT32 with LBA addressing.
pub const FAT32_LBA: u8 = 0x0c;
const MIB: u64 = 1 << 20;
/// Bytes read and rewritten at the start of the card: a 4 KiB page, so
/// that a card (or a 4Kn device) that accepts only whole pages takes it.
const HEAD: usize = 4096;

/// The one partition the repair writes, in 512-byte sectors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Repair {
    /// The last sector shown to hold data.
    pub last_good_sector: u64,
    /// The partition's first sector and its length.
    pub start: u64,
    pub sectors: u64,
}

impl Repair {
    /// The partition's last sector.
    pub fn end(&self) -> u64 {
        self.start + self.sectors - 1
    }
}

/// The repair for a card whose sectors up to `last_good_sector` hold
/// data: from [`START`] to the last boundary of `align` bytes (at least
/// 1 MiB; the erase block when known) at or below it. `None` when no
/// whole aligned unit fits, or the size does not fit an MBR.
pub fn repair(last_good_sector: u64, align: Option<u64>) -> Option<Repair> {
    let align = align
        .filter(|a| *a >= MIB && a.is_multiple_of(MIB))
        .unwrap_or(MIB)
        / SECTOR;
    let usable = last_good_sector.checked_add(1)?;
    let end = usable / align * align;
    let sectors = end.checked_sub(START).filter(|s| *s > 0)?;
    let fits = u32::try_from(START + sectors).is_ok();
    fits.then_some(Repair {
        last_good_sector,
        start: START,
        sectors,
    })
}

/// Sector 0 as the repair writes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mbr(pub [u8; SECTOR as usize]);

impl Mbr {
    /// The table of one FAT32 (LBA) partition as `r` says, with
    /// `disk_id` as the disk signature (what `blkid` shows as PTUUID).
    pub fn new(r: &Repair, disk_id: u32) -> Mbr {
        let mut s = [0u8; SECTOR as usize];
        s[440..444].copy_from_slice(&disk_id.to_le_bytes());
        let e = &mut s[446..462];
        e[0] = 0x00; // not bootable
        e[1..4].copy_from_slice(&chs(r.start));
        e[4] = FAT32_LBA;
        e[5..8].copy_from_slice(&chs(r.end()));
        e[8..12].copy_from_slice(&(r.start as u32).to_le_bytes());
        e[12..16].copy_from_slice(&(r.sectors as u32).to_le_bytes());
        s[510] = 0x55;
        s[511] = 0xaa;
        Mbr(s)
    }
}

/// The first entry of a sector 0: (type, first sector, sectors), when the
/// sector carries the MBR signature.
pub fn first_entry(sector: &[u8]) -> Option<(u8, u32, u32)> {
    if sector.len() < SECTOR as usize || sector[510..512] != [0x55, 0xaa] {
        return None;
    }
    let e = &sector[446..462];
    let word = |at: usize| u32::from_le_bytes([e[at], e[at + 1], e[at + 2], e[at + 3]]);
    Some((e[4], word(8), word(12)))
}

/// Cylinder/head/sector of a sector for the legacy fields (255 heads of 63
/// sectors, as every partitioner assumes), or the "beyond CHS" marker
/// 1023/254/63 above what they can address.
fn chs(lba: u64) -> [u8; 3] {
    let (heads, per_track) = (255, 63);
    let c = lba / (heads * per_track);
    if c > 1023 {
        return [0xfe, 0xff, 0xff];
    }
    let h = (lba / per_track) % heads;
    let s = lba % per_track + 1;
    [h as u8, (s as u8) | (((c >> 8) as u8) << 6), c as u8]
}

/// Writes `mbr` as sector 0 and reads it back. The first 4 KiB are read,
/// sector 0 replaced, and a GPT header in sector 1 ("EFI PART") cleared,
/// so no tool takes a stale GPT over the new table; the rest of the page
/// is written back as it was.
pub fn write(io: &mut dyn FlashIo, mbr: &Mbr) -> io::Result<()> {
    let mut head = io.buffer(HEAD);
    io.read(0, head.as_mut_slice())?;
    let page = head.as_mut_slice();
    page[..SECTOR as usize].copy_from_slice(&mbr.0);
    if page[512..520] == *b"EFI PART" {
        page[512..1024].fill(0);
    }
    let written = page.to_vec();
    io.write(0, head.as_slice())?;
    let mut back = io.buffer(HEAD);
    io.read(0, back.as_mut_slice())?;
    match back.as_slice() == written.as_slice() {
        true => Ok(()),
        false => Err(io::Error::other(
            "the partition table read back differs from what was written: the card does not keep its first sectors",
        )),
    }
}

/// The command lines that write the same table with the usual tools, and
/// iocurve's own, for `target` as the user gave it.
pub fn commands(r: &Repair, target: &str) -> [String; 3] {
    [
        format!(
            "echo 'start={}, size={}, type=c' | sudo sfdisk {target}",
            r.start, r.sectors
        ),
        format!(
            "sudo parted -s {target} mklabel msdos mkpart primary fat32 {}s {}s",
            r.start,
            r.end()
        ),
        format!("iocurve flash capacity {target} --fix --destructive"),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::sim::{SimDevice, SimParams};
    use crate::flash::SimIo;
    use proptest::prelude::*;

    #[test]
    fn a_two_gib_card_gets_one_partition_from_1_mib_to_its_end() {
        let last = (2u64 << 30) / 512 - 1;
        let r = repair(last, None).unwrap();
        assert_eq!(
            (r.start, r.sectors, r.end()),
            (2048, 4_194_304 - 2048, last)
        );
        // An erase block of 4 MiB ends it on a 4 MiB boundary.
        let r = repair(last - 1, Some(4 << 20)).unwrap();
        assert_eq!(r.end() + 1, (2u64 << 30) / 512 - 8192);
        assert!(repair(2048, None).is_none(), "no room for a MiB");
    }

    #[test]
    fn the_mbr_holds_one_fat32_entry_and_the_signature() {
        let r = repair(4_194_303, None).unwrap();
        let mbr = Mbr::new(&r, 0x1234_5678);
        assert_eq!(&mbr.0[510..], &[0x55, 0xaa]);
        assert_eq!(first_entry(&mbr.0), Some((0x0c, 2048, 4_192_256)));
        assert_eq!(&mbr.0[440..444], &0x1234_5678u32.to_le_bytes());
        assert!(mbr.0[462..510].iter().all(|b| *b == 0), "one entry only");
        assert_eq!(chs(2048), [32, 33, 0], "as fdisk writes 2048");
    }

    #[test]
    fn the_table_is_written_and_read_back_on_a_simulated_card() {
        let dev = SimDevice::new(SimParams::parse("size=64M,real=32M").unwrap());
        let r = repair((32 << 20) / 512 - 1, None).unwrap();
        write(&mut SimIo(&dev), &Mbr::new(&r, 1)).unwrap();
        let mut back = vec![0u8; 512];
        dev.read(0, &mut back).unwrap();
        assert_eq!(first_entry(&back), Some((0x0c, 2048, 63_488)));
    }

    #[test]
    fn the_commands_name_the_target_as_given() {
        let r = repair(4_194_303, None).unwrap();
        let [sfdisk, parted, own] = commands(&r, "/dev/sdX");
        assert_eq!(
            sfdisk,
            "echo 'start=2048, size=4192256, type=c' | sudo sfdisk /dev/sdX"
        );
        assert!(parted.ends_with("fat32 2048s 4194303s"), "{parted}");
        assert_eq!(own, "iocurve flash capacity /dev/sdX --fix --destructive");
    }

    proptest! {
        #[test]
        fn a_repair_never_reaches_past_the_last_good_sector(
            last in any::<u64>(), au in proptest::option::of(any::<u64>())
        ) {
            if let Some(r) = repair(last, au) {
                prop_assert!(r.end() <= last && r.start == START && r.sectors > 0);
                prop_assert!((r.end() + 1).is_multiple_of(2048));
                let mbr = Mbr::new(&r, 0);
                prop_assert_eq!(first_entry(&mbr.0), Some((0x0c, 2048, r.sectors as u32)));
            }
        }
    }
}
