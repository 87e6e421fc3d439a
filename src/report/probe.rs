//! The probe's findings for people: one fact per line, "unknown" where the
//! kernel did not say.

use crate::probe::DeviceIdentity;
use crate::units::format_size;

fn or_unknown<T: ToString>(v: Option<T>) -> String {
    v.map_or_else(|| "unknown".to_string(), |v| v.to_string())
}

fn yes_no(v: Option<bool>) -> String {
    or_unknown(v.map(|b| if b { "yes" } else { "no" }))
}

/// Renders the identity as `key: value` lines.
pub fn render(id: &DeviceIdentity) -> String {
    let mut lines: Vec<(String, String)> = Vec::new();
    let mut put = |k: &str, v: String| lines.push((k.to_string(), v));
    let d = &id.device;
    put("target", id.target.clone());
    put("device", id.label.clone());
    put("device key", id.key.clone());
    let stack: Vec<String> = d
        .stack
        .iter()
        .map(|l| {
            format!(
                "{} ({}{})",
                l.name,
                l.kind,
                l.detail
                    .as_ref()
                    .map_or(String::new(), |x| format!(": {x}"))
            )
        })
        .collect();
    if !stack.is_empty() {
        put("stack", stack.join(" → "));
    }
    match &d.block {
        Some(b) => {
            put("kernel name", format!("{} ({})", b.name, b.dev));
            put(
                "size",
                format!("{} ({} bytes)", format_size(b.size_bytes), b.size_bytes),
            );
            put(
                "block size",
                format!(
                    "logical {} B, physical {} B",
                    b.logical_block_size, b.physical_block_size
                ),
            );
            put("rotational", yes_no(b.rotational));
            put(
                "largest transfer",
                format!(
                    "{} KiB (hardware {} KiB)",
                    or_unknown(b.max_sectors_kb),
                    or_unknown(b.max_hw_sectors_kb)
                ),
            );
            put("nr_requests", or_unknown(b.nr_requests));
            put("scheduler", or_unknown(b.scheduler.clone()));
            put("discard", yes_no(b.discard));
            put("write cache", or_unknown(b.write_cache.clone()));
            put("vendor", or_unknown(b.vendor.clone()));
            put("model", or_unknown(b.model.clone()));
            put("revision", or_unknown(b.revision.clone()));
            put("serial", or_unknown(b.serial.clone()));
        }
        None => put(
            "block device",
            "none found (tmpfs, network or FUSE file system, or unknown)".into(),
        ),
    }
    put(
        "interface",
        d.interface
            .as_ref()
            .map_or("unknown".into(), |i| match i.practical_limit_mb_s {
                Some(c) => format!("{} · practical ceiling about {c} MB/s", i.description),
                None => i.description.clone(),
            }),
    );
    if let Some(u) = &d.usb {
        put(
            "usb",
            format!(
                "{}:{} bcdDevice {} · {} {} · serial {}",
                or_unknown(u.vendor_id.clone()),
                or_unknown(u.product_id.clone()),
                or_unknown(u.bcd_device.clone()),
                or_unknown(u.manufacturer.clone()),
                or_unknown(u.product.clone()),
                or_unknown(u.serial.clone())
            ),
        );
    }
    if let Some(m) = &d.mmc {
        put(
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
        put(
            "erase size",
            or_unknown(m.preferred_erase_size.map(format_size)),
        );
        put(
            "classes",
            m.classes
                .as_ref()
                .map_or("unknown (SSR not readable)".into(), |c| {
                    let parts: Vec<String> =
                        [&c.speed_class, &c.uhs_grade, &c.video_class, &c.app_class]
                            .iter()
                            .filter_map(|v| (*v).clone())
                            .collect();
                    if parts.is_empty() {
                        "none claimed".into()
                    } else {
                        parts.join(" ")
                    }
                }),
        );
    }
    if let Some(n) = &d.nvme {
        put(
            "nvme",
            format!(
                "{} · model {} · firmware {} · serial {}",
                or_unknown(n.controller.clone()),
                or_unknown(n.model.clone()),
                or_unknown(n.firmware.clone()),
                or_unknown(n.serial.clone())
            ),
        );
    }
    match &id.filesystem {
        Some(f) => {
            put(
                "file system",
                format!(
                    "{} on {} at {} ({})",
                    f.fstype, f.source, f.mount_point, f.options
                ),
            );
            put("compression", yes_no(f.compression));
            put(
                "encryption",
                yes_no(f.encryption.or(d.encrypted.then_some(true))),
            );
            put("copy-on-write", yes_no(f.copy_on_write));
            put(
                "free space",
                match (f.free_bytes, f.total_bytes) {
                    (Some(a), Some(t)) => format!("{} of {}", format_size(a), format_size(t)),
                    _ => "unknown".into(),
                },
            );
        }
        None => put("file system", "none (raw device)".into()),
    }
    let h = &id.host;
    put(
        "host",
        format!(
            "{} · Linux {} · {}",
            h.hostname,
            h.kernel,
            or_unknown(h.cpu_model.clone())
        ),
    );
    put("iocurve", h.iocurve_version.clone());
    let width = lines.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
    lines
        .iter()
        .map(|(k, v)| format!("{k:<width$}  {v}\n"))
        .collect()
}
