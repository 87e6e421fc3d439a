//! The words of the host bus a class result names: the bus and its mode,
//! its ceiling, and command queueing, in one line every format prints.
//!
//! Why a module of its own: the result holds the bus as enums and numbers
//! (`crate::probe::bus`); text, HTML, CSV and Markdown each say "Host:"
//! the same way, and what the kernel did not tell is said as unknown with
//! why, never left out.

use crate::probe::bus::{
    Bus, BusUnknown, HostBus, Queueing, QueueingFrom, QueueingUnknown, UsbDriver, UsbSpeed,
};
use crate::probe::ios::{IosUnread, MmcMode, MmcTiming};
use crate::probe::link::Transport;
use crate::result::flash::{FlashReport, Outcome};
use crate::units::format_mbps;

/// The host line of a class result; `None` for another test or a class
/// run stored before the host was kept.
pub fn host_of(f: &FlashReport) -> Option<String> {
    match &f.outcome {
        Outcome::Classes { host: Some(h), .. } => Some(host_line(h)),
        _ => None,
    }
}

/// "SD/MMC bus, UHS-I SDR104, 4 bits at 200 MHz, at most 90.0 MB/s,
/// command queueing unknown (...)".
pub fn host_line(h: &HostBus) -> String {
    let mut parts = vec![bus_text(&h.bus)];
    if let Some(c) = h.ceiling_mb_per_s {
        parts.push(format!("at most {} MB/s", format_mbps(c)));
    }
    parts.extend(queueing_text(h.command_queueing));
    parts.join(", ")
}

fn bus_text(bus: &Bus) -> String {
    match bus {
        Bus::SdMmc { mode: Some(m), .. } => format!("SD/MMC bus, {}", mode_text(m)),
        Bus::SdMmc { unread, .. } => format!(
            "SD/MMC bus, mode unknown ({})",
            unread.map_or("not read", unread_text)
        ),
        Bus::Usb { speed, driver } => {
            let mut s = format!("USB, {}", speed.map_or("speed unknown", speed_text));
            if let Some(d) = driver {
                s += &format!(", {} driver", driver_name(*d));
            }
            s
        }
        Bus::Simulated {
            link_mb_per_s: Some(l),
        } => format!("simulated card behind a {} MB/s link", format_mbps(*l)),
        Bus::Simulated {
            link_mb_per_s: None,
        } => "simulated card, no link limit".into(),
        Bus::NotSd { transport } => format!("not an SD bus: {}", transport_text(*transport)),
        Bus::Unknown { why } => format!("bus unknown ({})", bus_unknown_text(*why)),
    }
}

/// "UHS-I SDR104, 4 bits at 200 MHz (208 MHz asked)".
fn mode_text(m: &MmcMode) -> String {
    let mut s = timing_text(m.timing).to_string();
    if m.timing == MmcTiming::Unrecognised {
        if let Some(code) = m.timing_code {
            s += &format!(" {code}");
        }
    }
    if let Some(lines) = m.data_lines {
        s += &format!(", {lines} bit{}", if lines == 1 { "" } else { "s" });
    }
    match (m.effective_clock_hz(), m.clock_hz) {
        (Some(actual), Some(asked)) if actual != asked => {
            s += &format!(" at {} ({} asked)", hz_text(actual), hz_text(asked));
        }
        (Some(clock), _) => s += &format!(" at {}", hz_text(clock)),
        (None, _) => s += ", clock stopped",
    }
    s
}

/// The timing mode as the SD and JEDEC specifications name it.
pub fn timing_text(t: MmcTiming) -> &'static str {
    match t {
        MmcTiming::Legacy => "default speed",
        MmcTiming::MmcHighSpeed => "MMC high speed",
        MmcTiming::SdHighSpeed => "SD high speed",
        MmcTiming::UhsSdr12 => "UHS-I SDR12",
        MmcTiming::UhsSdr25 => "UHS-I SDR25",
        MmcTiming::UhsSdr50 => "UHS-I SDR50",
        MmcTiming::UhsSdr104 => "UHS-I SDR104",
        MmcTiming::UhsDdr50 => "UHS-I DDR50",
        MmcTiming::MmcDdr52 => "eMMC DDR52",
        MmcTiming::MmcHs200 => "eMMC HS200",
        MmcTiming::MmcHs400 => "eMMC HS400",
        MmcTiming::MmcHs400EnhancedStrobe => "eMMC HS400 with enhanced strobe",
        MmcTiming::Unrecognised => "timing mode",
    }
}

/// A clock in MHz (to a tenth, `.0` dropped), or kHz below 1 MHz.
fn hz_text(hz: u64) -> String {
    if hz < 1_000_000 {
        return format!("{} kHz", hz / 1000);
    }
    let mhz = format!("{:.1}", hz as f64 / 1e6);
    format!("{} MHz", mhz.trim_end_matches(".0"))
}

fn unread_text(why: IosUnread) -> &'static str {
    match why {
        IosUnread::DebugfsDenied => "debugfs is readable by root only",
        IosUnread::DebugfsAbsent => "debugfs not mounted or without the host's ios",
        IosUnread::NotUnderstood => "debugfs ios not understood",
        IosUnread::NoHostName => "the card does not name its host",
    }
}

fn speed_text(s: UsbSpeed) -> &'static str {
    match s {
        UsbSpeed::Low => "USB 1.0 Low Speed (1.5 Mb/s)",
        UsbSpeed::Full => "USB 1.1 Full Speed (12 Mb/s)",
        UsbSpeed::High => "USB 2.0 High Speed (480 Mb/s)",
        UsbSpeed::Super => "USB 3.x Gen 1 (5 Gb/s)",
        UsbSpeed::SuperPlus => "USB 3.x Gen 2 (10 Gb/s)",
        UsbSpeed::SuperPlusGen2x2 => "USB 3.2 Gen 2x2 (20 Gb/s)",
    }
}

fn driver_name(d: UsbDriver) -> &'static str {
    match d {
        UsbDriver::Uas => "uas",
        UsbDriver::UsbStorage => "usb-storage",
        UsbDriver::Other => "another",
    }
}

fn transport_text(t: Transport) -> &'static str {
    match t {
        Transport::Nvme => "NVMe",
        Transport::Sata => "SATA",
        Transport::Virtio => "virtio",
        Transport::Loop => "a loop device",
        Transport::Zram => "zram",
        Transport::Ram => "a RAM disk",
        Transport::Nbd => "a network block device",
    }
}

fn bus_unknown_text(why: BusUnknown) -> &'static str {
    match why {
        BusUnknown::NoDevice => "no block device sysfs knows",
        BusUnknown::NotRecognised => "sysfs does not say what the disk is attached to",
    }
}

/// "command queueing off (usb-storage: one command at a time)"; nothing
/// where the question does not arise (not an SD bus, bus unknown).
fn queueing_text(q: Queueing) -> Option<String> {
    let text = match q {
        Queueing::On { from } => format!("command queueing on ({})", from_text(from)),
        Queueing::Off { from } => format!("command queueing off ({})", from_text(from)),
        Queueing::Unknown {
            why: QueueingUnknown::NotSdBus | QueueingUnknown::BusUnknown,
        } => return None,
        Queueing::Unknown { why } => {
            format!("command queueing unknown ({})", queueing_unknown_text(why))
        }
        Queueing::NotModelled => "command queueing not modelled".into(),
    };
    Some(text)
}

fn from_text(from: QueueingFrom) -> &'static str {
    match from {
        QueueingFrom::CardCmdqEn => "the card's cmdq_en",
        QueueingFrom::UasDriver => "uas: tagged commands",
        QueueingFrom::UsbStorageDriver => "usb-storage: one command at a time",
    }
}

fn queueing_unknown_text(why: QueueingUnknown) -> &'static str {
    match why {
        QueueingUnknown::SdNotExposed => "the kernel does not expose it for SD cards",
        QueueingUnknown::CardAttributeAbsent => "the card has no cmdq_en in sysfs",
        QueueingUnknown::UsbDriverUnread => "the USB driver could not be read",
        QueueingUnknown::OtherUsbDriver => "a USB driver other than uas or usb-storage",
        QueueingUnknown::NotSdBus => "not an SD bus",
        QueueingUnknown::BusUnknown => "bus unknown",
    }
}

#[cfg(test)]
mod tests;
