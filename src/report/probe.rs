//! The probe's findings for people: one fact per line, "unknown" where the
//! kernel did not say.

use crate::probe::DeviceIdentity;
use crate::probe::block::{BlockFacts, HardwareLimit, Layer, describe_stack};
use crate::probe::fs::FsInfo;
use crate::probe::host::HostFacts;
use crate::probe::link::Interface;
use crate::probe::mmc::{MmcInfo, SdClasses};
use crate::probe::nvme::NvmeInfo;
use crate::probe::usb::UsbInfo;
use crate::units::format_size;

fn or_unknown<T: ToString>(v: Option<T>) -> String {
    v.map_or_else(|| "unknown".to_string(), |v| v.to_string())
}

fn yes_no(v: Option<bool>) -> String {
    or_unknown(v.map(|b| if b { "yes" } else { "no" }))
}

/// [`render`] for a terminal: long values wrapped under their column (the
/// HTML identity card keeps one line per field).
pub fn render_text(id: &DeviceIdentity) -> String {
    super::table::fitted(&render(id))
}

/// Renders the identity as `key: value` lines.
pub fn render(id: &DeviceIdentity) -> String {
    let d = &id.device;
    let mut lines = Lines::default();
    lines.put("target", id.target.clone());
    lines.put("device", id.label.clone());
    lines.put("device key", id.key.clone());
    put_stack(&mut lines, &d.stack, d.block.as_ref());
    match (&d.top, &d.block) {
        (Some(top), medium) => {
            put_block_device(&mut lines, top);
            lines.put(
                "medium",
                medium.as_ref().map_or_else(
                    || "none found beneath the stack (a file in RAM, or unknown)".into(),
                    medium_line,
                ),
            );
            if let Some(b) = medium {
                put_maker(&mut lines, b);
            }
        }
        (None, Some(b)) => {
            put_block_device(&mut lines, b);
            put_maker(&mut lines, b);
        }
        (None, None) => lines.put(
            "block device",
            "none found (tmpfs, network or FUSE file system, or unknown)".into(),
        ),
    }
    lines.put("interface", interface(d.interface.as_ref()));
    if let Some(u) = &d.usb {
        lines.put("usb", usb(u));
    }
    if let Some(m) = &d.mmc {
        put_card(&mut lines, m);
    }
    if let Some(n) = &d.nvme {
        lines.put("nvme", nvme(n));
    }
    match &id.filesystem {
        Some(f) => put_file_system(&mut lines, f, d.encrypted),
        None => lines.put("file system", "none (raw device)".into()),
    }
    lines.put("host", host(&id.host));
    lines.put("iocurve", id.host.iocurve_version.clone());
    lines.aligned()
}

/// The report's `key: value` pairs in order, aligned only once all keys are
/// known.
#[derive(Default)]
struct Lines(Vec<(String, String)>);

impl Lines {
    fn put(&mut self, key: &str, value: String) {
        self.0.push((key.to_string(), value));
    }

    /// One line per pair, the values in one column after the longest key.
    fn aligned(&self) -> String {
        let width = self.0.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
        self.0
            .iter()
            .map(|(k, v)| format!("{k:<width$}  {v}\n"))
            .collect()
    }
}

/// The layers between the target and the disk, top first, ending at the
/// disk; no line when there are none.
fn put_stack(lines: &mut Lines, stack: &[Layer], medium: Option<&BlockFacts>) {
    if !stack.is_empty() {
        let bottom = medium.map(|b| b.name.as_str());
        lines.put("stack", describe_stack(stack, bottom));
    }
}

/// The medium beneath a stack, on one line.
fn medium_line(b: &BlockFacts) -> String {
    format!(
        "{} ({}), {}, rotational {}",
        b.name,
        b.dev,
        format_size(b.size_bytes),
        yes_no(b.rotational)
    )
}

/// What the kernel says of the block device: geometry and queue.
fn put_block_device(lines: &mut Lines, b: &BlockFacts) {
    lines.put("kernel name", format!("{} ({})", b.name, b.dev));
    lines.put(
        "size",
        format!("{} ({} bytes)", format_size(b.size_bytes), b.size_bytes),
    );
    lines.put(
        "block size",
        format!(
            "logical {} B, physical {} B",
            b.logical_block_size, b.physical_block_size
        ),
    );
    lines.put("rotational", yes_no(b.rotational));
    lines.put(
        "largest transfer",
        format!(
            "{} KiB (hardware {})",
            or_unknown(b.max_sectors_kb),
            match b.hardware_limit() {
                HardwareLimit::Kib(kb) => format!("{kb} KiB"),
                HardwareLimit::NoneStated => "limit: none stated by the driver".into(),
                HardwareLimit::Unknown => "limit unknown".into(),
            }
        ),
    );
    lines.put("nr_requests", or_unknown(b.nr_requests));
    lines.put("scheduler", or_unknown(b.scheduler.clone()));
    lines.put("discard", yes_no(b.discard));
    lines.put("write cache", or_unknown(b.write_cache.clone()));
}

/// Who made the medium.
fn put_maker(lines: &mut Lines, b: &BlockFacts) {
    lines.put("vendor", or_unknown(b.vendor.clone()));
    lines.put("model", or_unknown(b.model.clone()));
    lines.put("revision", or_unknown(b.revision.clone()));
    lines.put("serial", or_unknown(b.serial.clone()));
}

/// The link the device hangs on, with its practical ceiling when known.
fn interface(interface: Option<&Interface>) -> String {
    interface.map_or("unknown".into(), |i| match i.practical_limit_mb_s {
        Some(c) => format!("{} · practical ceiling about {c} MB/s", i.description),
        None => i.description.clone(),
    })
}

/// The USB device's ids and strings.
fn usb(u: &UsbInfo) -> String {
    format!(
        "{}:{} bcdDevice {} · {} {} · serial {}",
        or_unknown(u.vendor_id.clone()),
        or_unknown(u.product_id.clone()),
        or_unknown(u.bcd_device.clone()),
        or_unknown(u.manufacturer.clone()),
        or_unknown(u.product.clone()),
        or_unknown(u.serial.clone())
    )
}

/// An SD or MMC card: its registers, erase size and claimed classes.
fn put_card(lines: &mut Lines, m: &MmcInfo) {
    lines.put(
        "card",
        format!(
            "{} · manfid {} ({}) · oemid {} ({}) · name {} · rev {} · date {} · serial {}",
            or_unknown(m.card_type.clone()),
            or_unknown(m.manfid.map(|v| format!("0x{v:02x}"))),
            or_unknown(m.manufacturer.clone()),
            or_unknown(m.oemid.clone()),
            or_unknown(m.oem.clone()),
            or_unknown(m.name.clone()),
            or_unknown(m.revision.clone()),
            or_unknown(m.date.clone()),
            or_unknown(m.serial.clone())
        ),
    );
    lines.put(
        "erase size",
        or_unknown(m.preferred_erase_size.map(format_size)),
    );
    lines.put("classes", card_classes(m.classes.as_ref()));
}

/// The speed, UHS, video and application classes the card claims.
fn card_classes(classes: Option<&SdClasses>) -> String {
    classes.map_or("unknown (SSR not readable)".into(), |c| {
        let parts: Vec<String> = [&c.speed_class, &c.uhs_grade, &c.video_class, &c.app_class]
            .iter()
            .filter_map(|v| (*v).clone())
            .collect();
        if parts.is_empty() {
            "none claimed".into()
        } else {
            parts.join(" ")
        }
    })
}

/// The NVMe controller and what it says it is.
fn nvme(n: &NvmeInfo) -> String {
    format!(
        "{} · model {} · firmware {} · serial {}",
        or_unknown(n.controller.clone()),
        or_unknown(n.model.clone()),
        or_unknown(n.firmware.clone()),
        or_unknown(n.serial.clone())
    )
}

/// The mounted file system and the features that change what a write
/// costs. `encrypted_below` is an encrypting layer under it, which counts
/// when the file system itself does not say.
fn put_file_system(lines: &mut Lines, f: &FsInfo, encrypted_below: bool) {
    lines.put(
        "file system",
        format!(
            "{} on {} at {} ({})",
            f.fstype, f.source, f.mount_point, f.options
        ),
    );
    lines.put("compression", yes_no(f.compression));
    lines.put(
        "encryption",
        yes_no(f.encryption.or(encrypted_below.then_some(true))),
    );
    lines.put("copy-on-write", yes_no(f.copy_on_write));
    lines.put(
        "free space",
        match (f.free_bytes, f.total_bytes) {
            (Some(a), Some(t)) => format!("{} of {}", format_size(a), format_size(t)),
            _ => "unknown".into(),
        },
    );
}

/// The machine that measured.
fn host(h: &HostFacts) -> String {
    format!(
        "{} · Linux {} · {}",
        h.hostname,
        h.kernel,
        or_unknown(h.cpu_model.clone())
    )
}
