//! The SD/MMC bus mode the kernel prints in debugfs `ios`: the timing
//! mode, the data lines and the clock a card runs at.
//!
//! Why a module of its own: a class verdict names the bus the card ran on
//! and its ceiling caps what the card can show (an SD card in default
//! speed at 25 MHz over 4 lines carries 12.5 MB/s at most, whatever it
//! claims). Both the interface's ceiling ([`super::link`]) and the host
//! record of a class result ([`super::bus`]) are read here, from one
//! parse, so they cannot disagree. The text is the kernel's
//! (`mmc_ios_show` in drivers/mmc/core/debugfs.c): `key:\tvalue` lines,
//! an enum as `N (name)`; a line not understood is left unread, never
//! guessed.

use serde::{Deserialize, Serialize};
use std::io::ErrorKind;
use std::path::Path;

/// The timing mode of an SD/MMC bus (the kernel's `MMC_TIMING_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MmcTiming {
    /// Default speed (SD up to 25 MHz, MMC up to 26 MHz).
    Legacy,
    /// MMC high speed (up to 52 MHz).
    MmcHighSpeed,
    /// SD high speed (up to 50 MHz).
    SdHighSpeed,
    /// UHS-I SDR12 (up to 25 MHz at 1.8 V).
    UhsSdr12,
    /// UHS-I SDR25 (up to 50 MHz).
    UhsSdr25,
    /// UHS-I SDR50 (up to 100 MHz).
    UhsSdr50,
    /// UHS-I SDR104 (up to 208 MHz).
    UhsSdr104,
    /// UHS-I DDR50 (50 MHz, data on both edges).
    UhsDdr50,
    /// eMMC DDR52 (52 MHz, data on both edges).
    MmcDdr52,
    /// eMMC HS200 (up to 200 MHz).
    MmcHs200,
    /// eMMC HS400 (200 MHz, data on both edges).
    MmcHs400,
    /// eMMC HS400 with enhanced strobe.
    MmcHs400EnhancedStrobe,
    /// A mode this release does not know (a newer kernel's); its number
    /// is kept beside it.
    Unrecognised,
}

impl MmcTiming {
    /// The mode the kernel names `name` (the text in the parentheses).
    pub fn from_kernel_name(name: &str) -> MmcTiming {
        match name.trim() {
            "legacy" => MmcTiming::Legacy,
            "mmc high-speed" => MmcTiming::MmcHighSpeed,
            "sd high-speed" => MmcTiming::SdHighSpeed,
            "sd uhs SDR12" => MmcTiming::UhsSdr12,
            "sd uhs SDR25" => MmcTiming::UhsSdr25,
            "sd uhs SDR50" => MmcTiming::UhsSdr50,
            "sd uhs SDR104" => MmcTiming::UhsSdr104,
            "sd uhs DDR50" => MmcTiming::UhsDdr50,
            "mmc DDR52" => MmcTiming::MmcDdr52,
            "mmc HS200" => MmcTiming::MmcHs200,
            "mmc HS400" => MmcTiming::MmcHs400,
            "mmc HS400 enhanced strobe" => MmcTiming::MmcHs400EnhancedStrobe,
            _ => MmcTiming::Unrecognised,
        }
    }

    /// Whether data moves on both clock edges (twice the bits per clock).
    pub fn double_data_rate(self) -> bool {
        matches!(
            self,
            MmcTiming::UhsDdr50
                | MmcTiming::MmcDdr52
                | MmcTiming::MmcHs400
                | MmcTiming::MmcHs400EnhancedStrobe
        )
    }
}

/// The bus mode read from `ios`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MmcMode {
    /// The timing mode.
    pub timing: MmcTiming,
    /// The kernel's number of the timing mode (`timing spec: N`); null
    /// when the line had none.
    pub timing_code: Option<u32>,
    /// Data lines of the bus (1, 4 or 8); null when not printed.
    pub data_lines: Option<u32>,
    /// The clock the core asked for, Hz; null when not printed.
    pub clock_hz: Option<u64>,
    /// The clock the host really set, Hz, when its driver tells (some
    /// round the asked clock down); null when not printed.
    pub actual_clock_hz: Option<u64>,
}

/// Share of clock × lines that is payload: the SD bus spends the rest on
/// CRC, start and end bits and the gaps between blocks and commands.
const PAYLOAD_SHARE: f64 = 0.9;

impl MmcMode {
    /// The clock data moves at, Hz: the actual one when the host tells it.
    pub fn effective_clock_hz(&self) -> Option<u64> {
        self.actual_clock_hz
            .filter(|c| *c > 0)
            .or(self.clock_hz)
            .filter(|c| *c > 0)
    }

    /// The signalling rate, Mbit/s: clock × lines, twice on both edges.
    pub fn link_mbit_s(&self) -> Option<f64> {
        let clock = self.effective_clock_hz()? as f64;
        let lines = f64::from(self.data_lines.filter(|l| *l > 0)?);
        let edges = if self.timing.double_data_rate() {
            2.0
        } else {
            1.0
        };
        Some(clock * lines * edges / 1e6)
    }

    /// The practical payload ceiling, MB/s, to a tenth.
    pub fn ceiling_mb_s(&self) -> Option<f64> {
        self.link_mbit_s()
            .map(|m| (m / 8.0 * PAYLOAD_SHARE * 10.0).round() / 10.0)
    }
}

/// The value after `key:` in `ios` text.
pub fn field<'a>(ios: &'a str, key: &str) -> Option<&'a str> {
    ios.lines()
        .find_map(|l| l.strip_prefix(key)?.trim_start().strip_prefix(':'))
        .map(str::trim)
}

/// The leading number of a value (`50000000 Hz`, `2 (4 bits)`).
fn leading_number<T: std::str::FromStr>(value: &str) -> Option<T> {
    value.split_whitespace().next()?.parse().ok()
}

/// The text in the value's parentheses (`2 (sd high-speed)`).
pub fn parenthesised(value: &str) -> Option<&str> {
    let inner = value.split_once('(')?.1;
    Some(inner.rsplit_once(')').map_or(inner, |(i, _)| i).trim())
}

/// The bus mode in `ios` text; `None` when it names no timing mode (not
/// the kernel's `ios`).
pub fn parse(ios: &str) -> Option<MmcMode> {
    let timing = field(ios, "timing spec")?;
    Some(MmcMode {
        timing: parenthesised(timing).map_or(MmcTiming::Unrecognised, MmcTiming::from_kernel_name),
        timing_code: leading_number(timing),
        // "bus width:\t2 (4 bits)": the code is log2 of the lines.
        data_lines: field(ios, "bus width")
            .and_then(parenthesised)
            .and_then(leading_number),
        clock_hz: field(ios, "clock").and_then(leading_number),
        actual_clock_hz: field(ios, "actual clock").and_then(leading_number),
    })
}

/// Why the bus mode could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum IosUnread {
    /// debugfs is readable by root only, and iocurve runs as another user.
    DebugfsDenied,
    /// No `ios` for the host: debugfs not mounted, or the kernel built
    /// without it.
    DebugfsAbsent,
    /// `ios` was read but names no timing mode.
    NotUnderstood,
    /// The card's directory does not name its host.
    NoHostName,
}

impl IosUnread {
    /// Why a read of `ios` failed with an error of `kind`.
    pub fn of_error(kind: ErrorKind) -> IosUnread {
        match kind {
            ErrorKind::PermissionDenied => IosUnread::DebugfsDenied,
            _ => IosUnread::DebugfsAbsent,
        }
    }
}

/// The `ios` text of host `host` (`mmc0`), with debugfs looked for at
/// `kernel/debug` under the sysfs root `sys`.
pub fn read(sys: &Path, host: &str) -> Result<String, IosUnread> {
    let path = sys.join("kernel/debug").join(host).join("ios");
    let bytes = std::fs::read(path).map_err(|e| IosUnread::of_error(e.kind()))?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// The bus mode of host `host`, or why it cannot be told.
pub fn mode_of(sys: &Path, host: &str) -> Result<MmcMode, IosUnread> {
    parse(&read(sys, host)?).ok_or(IosUnread::NotUnderstood)
}

#[cfg(test)]
mod tests;
