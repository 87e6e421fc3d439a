//! A command's outcome, for the formats that have no words of their own
//! for it: the figures CSV and Markdown carry for the commands whose
//! results are not a table of tests (sustain's drop, surface's positions,
//! stream's misses, files, copy's bottleneck, endure's cycles), and the one
//! line `history` shows for every run that has one. Made from the typed
//! result only, so that every format shows the same outcome.

mod apps;
mod device;
pub mod figure;

use crate::result::Payload;
use crate::result::RunResult;
use figure::{Figure, Rows};

/// The figures of `r`'s outcome, section by section; empty for the
/// commands whose figures are their tests (`run`, `profile`, an import),
/// or their curve points (`curve`); a flash test's are its own rows.
pub fn figures(r: &RunResult) -> Vec<Figure> {
    let mut rows = Rows::default();
    match &r.payload {
        Payload::Sustain { sustain, .. } => apps::sustain(sustain, &mut rows),
        Payload::Stream { stream, .. } => apps::stream(stream, &mut rows),
        Payload::FilesLoad { files_load, .. } => apps::files_load(files_load, &mut rows),
        Payload::FilesSave { files_save, .. } => apps::files_save(files_save, &mut rows),
        Payload::Surface { surface, .. } => device::surface(surface, &mut rows),
        Payload::Copy { copy: Some(c), .. } => device::copy(c, &mut rows),
        Payload::Endure { endure, .. } => device::endure(endure, &mut rows),
        _ => {}
    }
    rows.out
}

/// The outcome of `r` on one line, as `history` shows it in place of a
/// figure per test: the drop, the misses, the bottleneck, the cycles, each
/// series of a curve, a flash test's verdict. None for the runs whose
/// headline figures are their tests.
pub fn headline(r: &RunResult) -> Option<String> {
    headline_of(&r.payload)
}

/// [`headline`] of a run's command section alone.
pub fn headline_of(payload: &Payload) -> Option<String> {
    match payload {
        Payload::Sustain { sustain, .. } => Some(apps::sustain_line(sustain)),
        Payload::Stream { stream, .. } => Some(apps::stream_line(stream)),
        Payload::FilesLoad { files_load, .. } => apps::files_load_line(files_load),
        Payload::FilesSave { files_save, .. } => apps::files_save_line(files_save),
        Payload::Surface { surface, .. } => Some(device::surface_line(surface)),
        Payload::Copy { copy: Some(c), .. } => Some(device::copy_line(c)),
        Payload::Endure { endure, .. } => Some(device::endure_line(endure)),
        Payload::Curve { curve, .. } => device::curve_line(curve),
        Payload::Flash { flash, .. } => Some(device::flash_line(flash)),
        _ => None,
    }
}

/// A run of tests on one line, as `list` shows it (`history` shows the
/// stored figures with their ranges): each measured test's name,
/// direction and median MB/s.
pub fn tests_line(r: &RunResult) -> Option<String> {
    let parts: Vec<String> = r
        .tests
        .iter()
        .filter_map(|t| {
            let median = t.mb_per_s?.median;
            Some(format!(
                "{} {} {} MB/s",
                t.name,
                t.workload.rw,
                crate::units::format_mbps(median)
            ))
        })
        .collect();
    (!parts.is_empty()).then(|| parts.join(" · "))
}

/// The sections of `figures` in first-seen order, each with its figures.
pub fn sections(figures: &[Figure]) -> Vec<(&'static str, Vec<&Figure>)> {
    let mut out: Vec<(&'static str, Vec<&Figure>)> = Vec::new();
    for f in figures {
        match out.iter_mut().find(|(s, _)| *s == f.section) {
            Some((_, list)) => list.push(f),
            None => out.push((f.section, vec![f])),
        }
    }
    out
}
