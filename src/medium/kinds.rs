//! The open path of each kind of target: a directory (through a scratch
//! file iocurve makes), an existing file, a block device, a simulated card.
//! Each applies the write rules its kind needs before the gate is made, and
//! fills in what the target is for the results.

use super::descriptors::{dev_null, dio_alignment, open_reader, scratch_file, write_gate};
use super::gate::{Permit, WriteGate};
use super::scratch::ScratchFile;
use super::write_rules::advice;
use super::{OpenTarget, TargetRequest, storage, write_rules};
use crate::engine::sim::{SimDevice, SimParams};
use crate::error::usage;
use crate::probe::sysfs::{BlockDevice, Mount};
use crate::result::Caveat;
use crate::result::{TargetInfo, TargetKind};
use crate::vocab::options::IoMode;
use anyhow::Result;
use std::fs::File;
use std::io;
use std::path::Path;

/// The two ways to allow a write test on a medium that may hold data.
const PRESERVE_OR_DESTRUCTIVE: &str = "Pass --preserve to have iocurve copy the region the test writes to a journal on another file system and put it back afterwards (crash-safe: `iocurve recover` finishes an interrupted restore), or --destructive if its contents may be lost";

pub(super) fn open_directory(
    req: &TargetRequest,
    held: &storage::Held,
    device: Option<BlockDevice>,
    filesystem: Option<Mount>,
) -> Result<OpenTarget> {
    let scratch = scratch_file(req)?;
    scratch_in_examined(&scratch, &held.examined, &req.path)?;
    let mut notes = Vec::new();
    if let Some(note) = scratch.size_note() {
        notes.push(note);
    }
    // iocurve's own file: writable whatever the command, since the
    // preparation pass fills it even for a read test.
    let reader = scratch.file().try_clone()?;
    let gate = WriteGate::new(scratch.file().try_clone()?, Permit::Scratch, scratch.path());
    let align = dio_alignment(&reader, device.as_ref());
    let info = TargetInfo {
        path: display(&req.path),
        kind: TargetKind::Directory,
        scratch_file: Some(display(scratch.path())),
        size_bytes: scratch.size(),
        device,
        filesystem,
        mode: mode(req),
        logical_block_size: align as u32,
        writable: true,
        notes,
    };
    Ok(on_file(reader, gate, info, Some(scratch)))
}

pub(super) fn open_file(
    req: &TargetRequest,
    held: &storage::Held,
    device: Option<BlockDevice>,
    filesystem: Option<Mount>,
) -> Result<OpenTarget> {
    let examined = &held.examined;
    // A file behind a loop device is that device's medium, a swap file the
    // kernel's, a file another program writes that program's, a file
    // mounted elsewhere visible there: in use, whatever the flags.
    if req.want_write
        && let Some(why) = write_rules::why_file_in_use(&req.path, examined.id)?
    {
        return Err(usage(format!(
            "refusing to write to {}: {why}",
            req.path.display()
        )));
    }
    let reader = open_reader(held, &req.path, req)?;
    if req.want_write && !req.destructive && !req.preserve {
        let found = first_bytes(&reader)
            .ok()
            .and_then(|b| write_rules::has_data_signature(&b));
        let holds = found.map(|sig| format!(" It holds data ({sig} signature found)."));
        return Err(usage(format!(
            "refusing to write to {}: it is an existing file, not a scratch file of iocurve's.{} {PRESERVE_OR_DESTRUCTIVE}, or give a directory so iocurve tests with a scratch file it removes afterwards",
            req.path.display(),
            holds.unwrap_or_default()
        )));
    }
    let gate = write_gate(req, held, false)?;
    opened_as_examined(&reader, &gate, examined, &req.path)?;
    let align = dio_alignment(&reader, device.as_ref());
    let found = (device, filesystem);
    let info = existing_info(req, TargetKind::File, examined.len, align, found);
    Ok(on_file(reader, gate, info, None))
}

pub(super) fn open_block_device(
    req: &TargetRequest,
    held: &storage::Held,
    device: Option<BlockDevice>,
) -> Result<OpenTarget> {
    let examined = &held.examined;
    let name = req.path.display();
    if req.want_write && device.is_none() {
        return Err(usage(format!(
            "refusing to write to {name}: it cannot be identified in /sys/class/block, so iocurve cannot check that nothing uses it; {}",
            advice::reads_only("give a block device the kernel lists there")
        )));
    }
    if req.want_write {
        if let Some(dev) = &device {
            if let Some(why) = write_rules::why_busy(dev)? {
                return Err(usage(format!(
                    "refusing to write to {name}: {why}. A write test overwrites the device, so nothing may use it: release it first{}",
                    advice::or_reads_only()
                )));
            }
            if dev.read_only {
                return Err(usage(format!(
                    "{name} is read-only (write-protect switch or kernel setting): {}",
                    advice::reads_only(
                        "slide the card's switch off, or clear the kernel's flag (blockdev --setrw)"
                    )
                )));
            }
        }
        if !req.destructive && !req.preserve {
            let found = open_reader(held, &req.path, req)
                .and_then(|r| Ok(first_bytes(&r)?))
                .ok()
                .and_then(|b| write_rules::has_data_signature(&b));
            let holds = found.map(|sig| format!(" It holds data ({sig} signature found)."));
            return Err(usage(format!(
                "refusing to write to {name}: a write test overwrites the device and destroys its data.{} {PRESERVE_OR_DESTRUCTIVE}{}",
                holds.unwrap_or_default(),
                advice::or_reads_only()
            )));
        }
    }
    let reader = open_reader(held, &req.path, req)?;
    let gate = write_gate(req, held, true)?;
    opened_as_examined(&reader, &gate, examined, &req.path)?;
    let size = device_size(&reader)?;
    let lbs = rustix::fs::ioctl_blksszget(&reader)
        .map(|v| v as usize)
        .unwrap_or_else(|_| {
            device
                .as_ref()
                .map_or(512, |d| d.logical_block_size as usize)
        });
    let info = existing_info(req, TargetKind::BlockDevice, size, lbs, (device, None));
    Ok(on_file(reader, gate, info, None))
}

/// What an existing file or block device is, `align` its logical block
/// size: writable as asked, with no notes of its own.
fn existing_info(
    req: &TargetRequest,
    kind: TargetKind,
    size_bytes: u64,
    align: usize,
    (device, filesystem): (Option<BlockDevice>, Option<Mount>),
) -> TargetInfo {
    TargetInfo {
        path: display(&req.path),
        kind,
        scratch_file: None,
        size_bytes,
        device,
        filesystem,
        mode: mode(req),
        logical_block_size: align as u32,
        writable: req.want_write,
        notes: Vec::new(),
    }
}

/// A target on a file or device of the system: read through `reader`,
/// written only through `gate`, its buffers aligned to its logical block
/// size (at least [`MIN_ALIGN`](crate::sys::buffer::MIN_ALIGN)).
fn on_file(
    reader: File,
    gate: WriteGate,
    info: TargetInfo,
    scratch: Option<ScratchFile>,
) -> OpenTarget {
    let align = (info.logical_block_size as usize).max(crate::sys::buffer::MIN_ALIGN);
    OpenTarget {
        reader,
        gate,
        info,
        align,
        scratch,
        sim: None,
    }
}

/// A simulated card: always writable (it holds nothing of the user's), and
/// with no file behind it. `/dev/null` stands in for the descriptor, so the
/// steps that take one (preparation fills) are harmless no-ops; measuring
/// goes to the simulator's engine.
pub(super) fn open_sim(req: &TargetRequest, spec: &str) -> Result<OpenTarget> {
    let params = SimParams::parse(spec).map_err(usage)?;
    let file = dev_null()?;
    let reader = file.try_clone()?;
    let gate = WriteGate::new(file, Permit::Simulated, &req.path);
    let info = TargetInfo {
        path: display(&req.path),
        kind: TargetKind::Simulated,
        scratch_file: None,
        size_bytes: params.size,
        device: None,
        filesystem: None,
        mode: IoMode::Direct,
        logical_block_size: crate::engine::sim::SECTOR as u32,
        writable: true,
        notes: vec![simulated_caveat(&params)],
    };
    Ok(OpenTarget {
        reader,
        gate,
        info,
        align: crate::sys::buffer::MIN_ALIGN,
        scratch: None,
        sim: Some(Box::new(SimDevice::new(params))),
    })
}

/// Checks that the descriptors a file or device target was opened with
/// (the reader and, when held, the writer) are the file that was examined
/// and found to be storage.
fn opened_as_examined(
    reader: &File,
    gate: &WriteGate,
    examined: &storage::Examined,
    path: &Path,
) -> Result<()> {
    examined.same_file(reader, path)?;
    if let WriteGate::Held(guard) = gate {
        examined.same_file(guard.file(), path)?;
    }
    Ok(())
}

/// Checks that the scratch file was made on storage, on the file system of
/// the directory that was examined (not in one swapped in meanwhile).
fn scratch_in_examined(
    scratch: &ScratchFile,
    examined: &storage::Examined,
    dir: &Path,
) -> Result<()> {
    let made = storage::classify(scratch.file())?.map_err(|why| why.refusal(dir))?;
    if (made.id.0, made.id.1) != (examined.id.0, examined.id.1) {
        return Err(usage(format!(
            "{} was replaced while iocurve made its scratch file there (it is on another file system now), so nothing was measured: make sure nothing renames or remounts it, then run the command again",
            dir.display()
        )));
    }
    Ok(())
}

fn mode(req: &TargetRequest) -> IoMode {
    if req.buffered {
        IoMode::Buffered
    } else {
        IoMode::Direct
    }
}

fn display(path: &Path) -> String {
    path.display().to_string()
}

fn device_size(file: &File) -> Result<u64> {
    let end = rustix::fs::seek(file, rustix::fs::SeekFrom::End(0))?;
    Ok(end)
}

fn first_bytes(reader: &File) -> io::Result<Vec<u8>> {
    // Through the reader (O_DIRECT unless buffered): whole aligned blocks
    // into an aligned buffer, by offset, so the descriptor's position is
    // left alone.
    let want = write_rules::SIGNATURE_PROBE_BYTES;
    let mut buf = crate::sys::buffer::AlignedBuf::new(want, 4096);
    let mut filled = 0;
    while filled < want {
        match rustix::io::pread(reader, &mut buf.as_mut_slice()[filled..], filled as u64)? {
            0 => break,
            n => filled += n,
        }
    }
    Ok(buf.as_slice()[..filled].to_vec())
}

/// What the result says of a simulated card: its figures, worded in
/// `report`.
fn simulated_caveat(params: &crate::engine::sim::SimParams) -> Caveat {
    Caveat::Simulated(crate::result::SimulatedCard {
        claimed_bytes: params.size,
        real_bytes: params.real,
        beyond: (params.real < params.size).then(|| params.fake.name().to_string()),
        au_bytes: params.au,
        page_bytes: params.page,
        open_au: params.open_au,
        cache_bytes: params.cache,
        move_mb_per_s: params.move_speed.map(|m| m as f64 / 1e6),
    })
}
