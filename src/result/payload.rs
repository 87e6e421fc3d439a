//! The per-command part of a result: one variant per command, each with the
//! command's configuration and what it found beyond the tests.
//!
//! Serialized internally tagged by `command` and flattened into
//! [`RunResult`](super::RunResult), so a document reads
//! `{"command": "curve", "config": {...}, "curve": {...}, "tests": [...]}`.
//! Version-1 documents had the same `command` and section keys, with the
//! sections of other commands present as `null`; they read as the matching
//! variant (a `flash <test>` command names its test in the flash report,
//! and `fio` is the old name of an imported run).

use super::CurveReport;
use super::apps::{FilesLoadReport, FilesSaveReport, StreamReport, SustainReport};
use super::config::{
    CopySettings, EndureSettings, FilesLoadSettings, FilesSaveSettings, FlashSettings,
    ProfileSettings, Recorded, StreamSettings, SurfaceSettings, SustainSettings,
};
use super::device::{AccessInfo, CopyReport, EndureReport, ParallelReport, SurfaceReport};
use super::flash::FlashReport;
use crate::vocab::config::{CurveConfig, RunConfig};
use serde::{Deserialize, Serialize};

/// Which command ran, how it was configured, and its own findings.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "command")]
pub enum Payload {
    /// The fixed rows of `iocurve profile` (their figures are the tests).
    #[serde(rename = "profile")]
    Profile {
        /// The options of `profile`, and the time and test area each row got.
        config: Recorded<ProfileSettings>,
        /// `--parallel`: each row on every device alone and together.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        parallel: Option<ParallelReport>,
    },
    /// One workload of `iocurve run`.
    #[serde(rename = "run")]
    Run {
        /// The options of `run`, as checked before the target opened.
        config: Recorded<RunConfig>,
        /// How the target was read (method, buffers, block size).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        access: Option<AccessInfo>,
        /// `--parallel`: the workload on every device alone and together.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        parallel: Option<ParallelReport>,
    },
    /// Throughput against transfer size.
    #[serde(rename = "curve")]
    Curve {
        /// The options of `curve`.
        config: Recorded<CurveConfig>,
        /// The measured curves: one series per target and pattern.
        curve: CurveReport,
    },
    #[serde(rename = "files load")]
    FilesLoad {
        /// The options of `files load`.
        config: Recorded<FilesLoadSettings>,
        /// What loading the files cost, size by size.
        files_load: FilesLoadReport,
    },
    #[serde(rename = "files save")]
    FilesSave {
        /// The options of `files save`.
        config: Recorded<FilesSaveSettings>,
        /// What saving one file cost, write-call size by write-call size.
        files_save: FilesSaveReport,
    },
    #[serde(rename = "stream")]
    Stream {
        /// The options of `stream`: the schedule as planned.
        config: Recorded<StreamSettings>,
        /// How the schedule was kept.
        stream: StreamReport,
    },
    #[serde(rename = "sustain")]
    Sustain {
        /// The options of `sustain`.
        config: Recorded<SustainSettings>,
        /// The long write: throughput interval by interval.
        sustain: SustainReport,
    },
    #[serde(rename = "surface")]
    Surface {
        /// The options of `surface`.
        config: Recorded<SurfaceSettings>,
        /// Speed at evenly spread positions over the whole device.
        surface: SurfaceReport,
    },
    /// An image copied onto a device; absent when the copy could not start.
    #[serde(rename = "copy")]
    Copy {
        /// The options of `copy`.
        config: Recorded<CopySettings>,
        /// What the copy took; null when it could not start.
        #[serde(default)]
        copy: Option<CopyReport>,
    },
    #[serde(rename = "endure")]
    Endure {
        /// The options of `endure`.
        config: Recorded<EndureSettings>,
        /// Speed and errors cycle by cycle.
        endure: EndureReport,
    },
    /// One of the `flash` tests; the report names which.
    #[serde(
        rename = "flash",
        alias = "flash align",
        alias = "flash open-au",
        alias = "flash cache",
        alias = "flash capacity",
        alias = "flash class"
    )]
    Flash {
        /// The options of the `flash` test.
        config: Recorded<FlashSettings>,
        /// What the test found, with the confidence of each figure.
        flash: FlashReport,
    },
    /// A run measured by another tool and imported (`iocurve import`).
    #[serde(rename = "imported", alias = "fio")]
    Imported {
        /// The tool that measured it.
        #[serde(default = "fio")]
        tool: String,
        /// The imported tool's own options, as it recorded them (free-form
        /// JSON).
        config: serde_json::Value,
    },
}

fn fio() -> String {
    "fio".to_string()
}

impl Payload {
    /// The command as a person types it.
    pub fn command(&self) -> String {
        let name = match self {
            Payload::Profile { .. } => "profile",
            Payload::Run { .. } => "run",
            Payload::Curve { .. } => "curve",
            Payload::FilesLoad { .. } => "files load",
            Payload::FilesSave { .. } => "files save",
            Payload::Stream { .. } => "stream",
            Payload::Sustain { .. } => "sustain",
            Payload::Surface { .. } => "surface",
            Payload::Copy { .. } => "copy",
            Payload::Endure { .. } => "endure",
            Payload::Flash { flash, .. } => return format!("flash {}", flash.test),
            Payload::Imported { tool, .. } => return tool.clone(),
        };
        name.to_string()
    }

    /// The configuration the command ran with, as JSON.
    pub fn config_json(&self) -> serde_json::Value {
        match self {
            Payload::Profile { config, .. } => config.to_json(),
            Payload::Run { config, .. } => config.to_json(),
            Payload::Curve { config, .. } => config.to_json(),
            Payload::FilesLoad { config, .. } => config.to_json(),
            Payload::FilesSave { config, .. } => config.to_json(),
            Payload::Stream { config, .. } => config.to_json(),
            Payload::Sustain { config, .. } => config.to_json(),
            Payload::Surface { config, .. } => config.to_json(),
            Payload::Copy { config, .. } => config.to_json(),
            Payload::Endure { config, .. } => config.to_json(),
            Payload::Flash { config, .. } => config.to_json(),
            Payload::Imported { config, .. } => config.clone(),
        }
    }

    /// The parallel section of a `--parallel` run or profile.
    pub fn parallel(&self) -> Option<&ParallelReport> {
        match self {
            Payload::Profile { parallel, .. } | Payload::Run { parallel, .. } => parallel.as_ref(),
            _ => None,
        }
    }
}

/// `pub fn $name(&self) -> Option<&$report>`: the section `$name` of
/// variant `$variant`, `None` for every other command.
macro_rules! section {
    ($name:ident, $variant:ident, $report:ty) => {
        pub fn $name(&self) -> Option<&$report> {
            match self {
                Payload::$variant { $name, .. } => Some($name),
                _ => None,
            }
        }
    };
}

/// Borrowing one command's own section, for code that reads just that one.
impl Payload {
    section!(curve, Curve, CurveReport);
    section!(files_load, FilesLoad, FilesLoadReport);
    section!(files_save, FilesSave, FilesSaveReport);
    section!(stream, Stream, StreamReport);
    section!(sustain, Sustain, SustainReport);
    section!(surface, Surface, SurfaceReport);
    section!(endure, Endure, EndureReport);
    section!(flash, Flash, FlashReport);

    /// What a command whose figures are not tests moved in all: bytes,
    /// and the time spent moving them (`sustain`'s write; the files
    /// `files` timed). A rank's row in a many-hosts run uses it.
    pub fn moved(&self) -> Option<(u64, u64)> {
        match self {
            Payload::Sustain { sustain, .. } => Some((sustain.bytes, sustain.elapsed_ns)),
            Payload::FilesLoad { files_load, .. } => {
                Some(files_load.points.iter().fold((0, 0), |(b, t), p| {
                    (
                        b + p.size * p.files,
                        t + (p.mean_ns * p.files as f64) as u64,
                    )
                }))
            }
            Payload::FilesSave { files_save, .. } => {
                Some(files_save.points.iter().fold((0, 0), |(b, t), p| {
                    (b + files_save.file_size, t + p.total_ns)
                }))
            }
            _ => None,
        }
    }

    pub fn copy(&self) -> Option<&CopyReport> {
        match self {
            Payload::Copy { copy, .. } => copy.as_ref(),
            _ => None,
        }
    }

    /// The endurance report, for the loop that adds its cycles as they end.
    pub fn endure_mut(&mut self) -> Option<&mut EndureReport> {
        match self {
            Payload::Endure { endure, .. } => Some(endure),
            _ => None,
        }
    }

    /// Records how a `run` read its target.
    pub fn set_access(&mut self, info: AccessInfo) {
        if let Payload::Run { access, .. } = self {
            *access = Some(info);
        }
    }

    /// Records a copy's report once the copy has run.
    pub fn set_copy(&mut self, report: CopyReport) {
        if let Payload::Copy { copy, .. } = self {
            *copy = Some(report);
        }
    }

    /// Records the parallel section of a `--parallel` run or profile.
    pub fn set_parallel(&mut self, report: ParallelReport) {
        if let Payload::Run { parallel, .. } | Payload::Profile { parallel, .. } = self {
            *parallel = Some(report);
        }
    }

    pub fn access(&self) -> Option<&AccessInfo> {
        match self {
            Payload::Run { access, .. } => access.as_ref(),
            _ => None,
        }
    }
}
