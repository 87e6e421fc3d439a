//! The two ends of `iocurve copy`: the image read from, and the file or
//! device written to. A destination file that does not exist yet is made
//! as large as the image; one that exists must hold it.

use crate::error::{IoFailure, usage};
use crate::medium;
use crate::medium::{OpenTarget, TargetRequest};
use crate::result::TargetKind;
use crate::vocab::config::TargetConfig;
use anyhow::Result;
use std::fs::File;
use std::os::fd::AsFd;
use std::path::Path;

/// Opens the image read-only; a directory holds no image.
pub fn open_source(source: &Path, buffered: bool) -> Result<OpenTarget> {
    let opened = medium::open(&TargetRequest {
        path: source.to_path_buf(),
        want_write: false,
        buffered,
        destructive: false,
        preserve: false,
        journal_dir: None,
        scratch_size: 0,
    })?;
    if opened.info.kind == TargetKind::Directory {
        return Err(usage(format!(
            "copy reads an image file or a device; {} is a directory",
            source.display()
        )));
    }
    Ok(opened)
}

/// A destination file that does not exist yet is made, as large as the
/// image: nothing can be lost by writing it. The file made is returned,
/// open, so [`check_destination`] can tell that the destination opened
/// afterwards is that very file and not one put at its name meanwhile.
pub fn create_destination(cfg: &mut TargetConfig, bytes: u64) -> Result<Option<File>> {
    if cfg.path.exists() {
        return Ok(None);
    }
    let file = File::create_new(&cfg.path).map_err(|e| {
        IoFailure::new(
            format!("cannot create {}: {e}", cfg.path.display()),
            Some(e),
        )
    })?;
    file.set_len(bytes)?;
    // iocurve made it: nothing to preserve, nothing to lose.
    cfg.destructive = true;
    cfg.preserve = false;
    Ok(Some(file))
}

/// The destination must be a file or device at least as large as the image
/// and, when iocurve made it (`created`), that very file: `--destructive`
/// was assumed only for it.
pub fn check_destination(
    dst: &OpenTarget,
    created: Option<&File>,
    bytes: u64,
    source: &Path,
) -> Result<()> {
    if let Some(made) = created {
        let same = crate::sys::reopen::same_object(made.as_fd(), dst.fd()).unwrap_or(false);
        if !same {
            return Err(usage(format!(
                "{} was replaced after iocurve created it (another file has that name now), so nothing was written: make sure nothing renames or relinks it, then run the command again",
                dst.info.path
            )));
        }
    }
    if dst.info.kind == TargetKind::Directory {
        return Err(usage(
            "the destination of copy is a file or a device, not a directory: name the file to write",
        ));
    }
    if dst.info.size_bytes < bytes {
        return Err(usage(format!(
            "{} ({} bytes) is smaller than the image {} ({bytes} bytes)",
            dst.info.path,
            dst.info.size_bytes,
            source.display()
        )));
    }
    Ok(())
}
