//! SD and MMC cards: the Card Identification register (CID) the kernel
//! splits into attributes, and the SD Status register (SSR) with the speed,
//! UHS, video and application classes the card claims.
//!
//! Manufacturer ids are not published by the SD Association; the names here
//! come from community tables, which disagree, so the raw id is always kept
//! beside the name.

use super::{attr, attr_num};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The identity of an SD or MMC card.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MmcInfo {
    /// `SD`, `MMC` or `SDIO`.
    pub card_type: Option<String>,
    /// The kernel's name of the host controller (`mmc0`).
    pub host: Option<String>,
    /// Manufacturer id from the CID.
    pub manfid: Option<u32>,
    /// Name from the community table, `None` when the id is not in it.
    pub manufacturer: Option<String>,
    /// OEM/application id as the kernel prints it (`0x5344`).
    pub oemid: Option<String>,
    /// The OEM id's two ASCII characters (`SD`) when printable.
    pub oem: Option<String>,
    /// Product name (`SD08G`).
    pub name: Option<String>,
    /// Hardware and firmware revision, `hwrev.fwrev` (`8.0`).
    pub revision: Option<String>,
    /// Manufacturing date, `YYYY-MM`.
    pub date: Option<String>,
    /// Product serial number (`0x6051fd1c`).
    pub serial: Option<String>,
    /// The whole CID, 32 hex digits.
    pub cid: Option<String>,
    /// The allocation unit the kernel prefers for erases, bytes.
    pub preferred_erase_size: Option<u64>,
    /// Classes decoded from the SSR, when the kernel exposes it.
    pub classes: Option<SdClasses>,
}

/// What the SD Status register says about speed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SdClasses {
    /// `Class 10`; `None` for class 0 (no claim).
    pub speed_class: Option<String>,
    /// `U1` or `U3`.
    pub uhs_grade: Option<String>,
    /// `V30`.
    pub video_class: Option<String>,
    /// `A1` or `A2`.
    pub app_class: Option<String>,
    /// Allocation unit size from the SSR, bytes.
    pub au_size: Option<u64>,
}

/// Manufacturer names by CID id (community tables; see the module doc).
const MANUFACTURERS: &[(u32, &str)] = &[
    (0x01, "Panasonic"),
    (0x02, "Toshiba/Kingston"),
    (0x03, "SanDisk"),
    (0x1b, "Samsung/Transcend"),
    (0x1d, "AData"),
    (0x27, "Phison"),
    (0x28, "Lexar"),
    (0x74, "Transcend"),
    (0x9e, "PNY/Lexar"),
];

/// The manufacturer's name for a CID id, when the table has it.
pub fn manufacturer(id: u32) -> Option<&'static str> {
    MANUFACTURERS
        .iter()
        .find(|(m, _)| *m == id)
        .map(|(_, n)| *n)
}

/// The card directory of the disk at canonical `dir`: its `device`, when
/// that has a `cid`.
pub fn card_dir(dir: &Path) -> Option<PathBuf> {
    let card = std::fs::canonicalize(dir.join("device")).ok()?;
    card.join("cid").is_file().then_some(card)
}

/// Reads the card's identity from its directory.
pub fn read(card: &Path) -> MmcInfo {
    let manfid = attr(&card.join("manfid")).and_then(|s| parse_hex(&s));
    let oemid = attr(&card.join("oemid"));
    let hwrev = attr(&card.join("hwrev")).and_then(|s| parse_hex(&s));
    let fwrev = attr(&card.join("fwrev")).and_then(|s| parse_hex(&s));
    MmcInfo {
        card_type: attr(&card.join("type")),
        host: host_name(card),
        manfid,
        manufacturer: manfid.and_then(manufacturer).map(str::to_string),
        oem: oemid.as_deref().and_then(oem_ascii),
        oemid,
        name: attr(&card.join("name")),
        revision: hwrev.zip(fwrev).map(|(h, f)| format!("{h}.{f}")),
        date: attr(&card.join("date")).and_then(|d| iso_month(&d)),
        serial: attr(&card.join("serial")),
        cid: attr(&card.join("cid")),
        preferred_erase_size: attr_num(&card.join("preferred_erase_size")),
        classes: attr(&card.join("ssr")).and_then(|s| decode_ssr(&s)),
    }
}

/// `mmc0` from a card directory named `mmc0:aaaa`.
fn host_name(card: &Path) -> Option<String> {
    let name = card.file_name()?.to_string_lossy().into_owned();
    name.split_once(':').map(|(h, _)| h.to_string())
}

fn parse_hex(text: &str) -> Option<u32> {
    u32::from_str_radix(text.trim_start_matches("0x"), 16).ok()
}

/// `0x5344` → `SD`, when both bytes are printable ASCII.
pub fn oem_ascii(oemid: &str) -> Option<String> {
    let v = parse_hex(oemid)?;
    let bytes = [(v >> 8) as u8, v as u8];
    bytes
        .iter()
        .all(|b| b.is_ascii_graphic())
        .then(|| String::from_utf8_lossy(&bytes).into_owned())
}

/// The kernel's `MM/YYYY` as `YYYY-MM`.
pub fn iso_month(text: &str) -> Option<String> {
    let (m, y) = text.split_once('/')?;
    let m: u32 = m.parse().ok()?;
    let y: u32 = y.parse().ok()?;
    Some(format!("{y:04}-{m:02}"))
}

/// Bits `hi..=lo` of the 512-bit SSR (bit 511 first), from the hex text
/// the kernel prints (16 words of 8 digits).
fn ssr_bits(bits: &[bool], hi: usize, lo: usize) -> u64 {
    (lo..=hi)
        .rev()
        .fold(0, |acc, b| (acc << 1) | u64::from(bits[511 - b]))
}

/// Decodes the classes from the SSR text; `None` when it is not 512 bits.
pub fn decode_ssr(hex: &str) -> Option<SdClasses> {
    let hex: String = hex.chars().filter(|c| !c.is_whitespace()).collect();
    if hex.len() != 128 {
        return None;
    }
    let mut bits = Vec::with_capacity(512);
    for c in hex.chars() {
        let v = c.to_digit(16)?;
        bits.extend((0..4).rev().map(|i| (v >> i) & 1 == 1));
    }
    let speed = match ssr_bits(&bits, 447, 440) {
        1 => Some("Class 2"),
        2 => Some("Class 4"),
        3 => Some("Class 6"),
        4 => Some("Class 10"),
        _ => None,
    };
    let uhs = match ssr_bits(&bits, 399, 396) {
        1 => Some("U1".to_string()),
        3 => Some("U3".to_string()),
        _ => None,
    };
    let video = match ssr_bits(&bits, 391, 384) {
        v @ (6 | 10 | 30 | 60 | 90) => Some(format!("V{v}")),
        _ => None,
    };
    let app = match ssr_bits(&bits, 339, 336) {
        v @ (1 | 2) => Some(format!("A{v}")),
        _ => None,
    };
    Some(SdClasses {
        speed_class: speed.map(str::to_string),
        uhs_grade: uhs,
        video_class: video,
        app_class: app,
        au_size: au_size(ssr_bits(&bits, 431, 428)),
    })
}

/// The SSR's AU_SIZE code in bytes (SD Physical Layer spec, table 4-47).
fn au_size(code: u64) -> Option<u64> {
    const KIB: u64 = 1024;
    match code {
        1..=9 => Some((16 * KIB) << (code - 1)),
        0xa => Some(8192 * KIB),
        0xb => Some(12288 * KIB),
        0xc => Some(16384 * KIB),
        0xd => Some(24576 * KIB),
        0xe => Some(32768 * KIB),
        0xf => Some(65536 * KIB),
        _ => None,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// An SSR with the given fields set, as the kernel prints it.
    pub fn ssr_hex(fields: &[(usize, usize, u64)]) -> String {
        let mut bits = [false; 512];
        for &(hi, lo, v) in fields {
            for b in lo..=hi {
                bits[511 - b] = (v >> (b - lo)) & 1 == 1;
            }
        }
        bits.chunks(4)
            .map(|c| {
                let v = c.iter().fold(0u32, |a, &b| (a << 1) | u32::from(b));
                char::from_digit(v, 16).unwrap()
            })
            .collect()
    }

    #[test]
    fn ssr_classes() {
        // Class 10, AU 4 MiB (code 9), U3, V30, A2.
        let hex = ssr_hex(&[
            (447, 440, 4),
            (431, 428, 9),
            (399, 396, 3),
            (391, 384, 30),
            (339, 336, 2),
        ]);
        let c = decode_ssr(&hex).unwrap();
        assert_eq!(c.speed_class.as_deref(), Some("Class 10"));
        assert_eq!(c.uhs_grade.as_deref(), Some("U3"));
        assert_eq!(c.video_class.as_deref(), Some("V30"));
        assert_eq!(c.app_class.as_deref(), Some("A2"));
        assert_eq!(c.au_size, Some(4 << 20));
        assert!(decode_ssr("abc").is_none());
    }

    #[test]
    fn cid_pieces() {
        assert_eq!(oem_ascii("0x5344").as_deref(), Some("SD"));
        assert_eq!(oem_ascii("0x0000"), None);
        assert_eq!(iso_month("12/2008").as_deref(), Some("2008-12"));
        assert_eq!(manufacturer(0x03), Some("SanDisk"));
        assert_eq!(manufacturer(0x42), None);
    }
}
