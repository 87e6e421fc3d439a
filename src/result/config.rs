//! How each command was configured, as its result records it.
//!
//! A command hands over its own typed configuration ([`Recorded::Typed`]);
//! the document stores it as JSON. Read back, a configuration stays the JSON
//! it was stored as ([`Recorded::Stored`]): configurations change with the
//! options, and a run measured with older options must still load.

use crate::vocab::config::{ProfileConfig, TargetConfig};
use crate::vocab::options::{CopySync, FileReadMethod, StreamDirection};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::path::PathBuf;

/// A command's configuration: typed when the command made it, the stored
/// JSON when it was read back.
#[derive(Debug, Clone)]
pub enum Recorded<T> {
    Typed(T),
    Stored(serde_json::Value),
}

impl<T: Serialize + SeedPlace> Recorded<T> {
    /// The configuration as JSON, whichever way it is held.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }
}

impl<T> From<T> for Recorded<T> {
    fn from(t: T) -> Self {
        Recorded::Typed(t)
    }
}

/// Where a configuration keeps the run's seed. The JSON has it at
/// `config.seed` for every command: `flash` and `files` settings have their
/// own `seed` field; the others keep it in their target settings
/// ([`TargetConfig`], which does not write it), and it is written beside
/// them.
pub trait SeedPlace {
    /// True when the seed is in the target settings and written beside them.
    const IN_TARGET: bool;
    /// The seed of the target settings, when [`SeedPlace::IN_TARGET`].
    fn target_seed(&self) -> Option<u64> {
        None
    }
}

/// A configuration and the seed of its target settings, written as one
/// object in the configuration's own key order, the seed last.
#[derive(Serialize)]
struct WithSeed<'a, T> {
    #[serde(flatten)]
    config: &'a T,
    #[serde(with = "crate::vocab::wide")]
    seed: u64,
}

impl<T: Serialize + SeedPlace> Serialize for Recorded<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Recorded::Typed(t) => match t.target_seed() {
                Some(seed) => WithSeed { config: t, seed }.serialize(s),
                None => t.serialize(s),
            },
            Recorded::Stored(v) => v.serialize(s),
        }
    }
}

impl<'de, T> Deserialize<'de> for Recorded<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        serde_json::Value::deserialize(d).map(Recorded::Stored)
    }
}

/// The schema is the typed configuration's: what this release writes. A
/// run stored by an older release keeps the keys it was stored with.
impl<T: schemars::JsonSchema + SeedPlace> schemars::JsonSchema for Recorded<T> {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> std::borrow::Cow<'static, str> {
        T::schema_name()
    }

    /// T's schema, with `seed` when T writes its target's seed beside it.
    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        if !T::IN_TARGET {
            return generator.subschema_for::<T>();
        }
        let mut schema = T::json_schema(generator);
        let seed = crate::vocab::wide::schema(generator).to_value();
        if let Some(props) = schema.get_mut("properties").and_then(|p| p.as_object_mut()) {
            props.insert("seed".into(), seed);
        }
        if let Some(req) = schema.get_mut("required").and_then(|r| r.as_array_mut()) {
            req.push("seed".into());
        }
        schema
    }
}

/// Settings whose target holds the seed.
macro_rules! seed_in_target {
    ($($t:ty => |$c:ident| $target:expr),* $(,)?) => {$(
        impl SeedPlace for $t {
            const IN_TARGET: bool = true;
            fn target_seed(&self) -> Option<u64> {
                let $c = self;
                Some($target.seed)
            }
        }
    )*};
}

seed_in_target! {
    crate::vocab::config::RunConfig => |c| c.target,
    crate::vocab::config::CurveConfig => |c| c.target,
    ProfileSettings => |c| c.options.target,
    StreamSettings => |c| c.target,
    SustainSettings => |c| c.target,
    SurfaceSettings => |c| c.target,
    CopySettings => |c| c.target,
    EndureSettings => |c| c.target,
}

impl SeedPlace for FilesLoadSettings {
    const IN_TARGET: bool = false;
}

impl SeedPlace for FilesSaveSettings {
    const IN_TARGET: bool = false;
}

impl SeedPlace for FlashSettings {
    const IN_TARGET: bool = false;
}

/// `iocurve profile`: its options, and the time and area each row got.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ProfileSettings {
    #[serde(flatten)]
    pub options: ProfileConfig,
    /// Counted time of each row's measurement, seconds.
    pub time_per_test_s: f64,
    /// Warm-up before each row's counted time, seconds; absent in older
    /// results.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ramp_per_test_s: Option<f64>,
    /// Size of the region the rows read and write, bytes; absent in older
    /// results.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub test_area_bytes: Option<u64>,
}

/// `iocurve files load`.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct FilesLoadSettings {
    /// Directory the files were created in (and removed from).
    pub dir: PathBuf,
    /// File sizes measured, bytes.
    pub sizes: Vec<u64>,
    /// `--count`: files of each size; null: the default (16 MiB worth, 4 to
    /// 200).
    pub count: Option<u32>,
    /// `--fps`: frames per second, to report bytes per frame; null when not
    /// given.
    pub fps: Option<f64>,
    /// Seed of the file contents and order (pass it again with --seed to
    /// repeat the run). A string of
    /// decimal digits: JSON readers round integers above 2^53.
    #[serde(with = "crate::vocab::wide")]
    #[schemars(schema_with = "crate::vocab::wide::schema")]
    pub seed: u64,
    /// `--cpu-load`: percent of every CPU kept busy in the background; null:
    /// none.
    pub cpu_load: Option<u8>,
    /// How each file was read: `read`, `mmap` or `stdio`.
    pub method: FileReadMethod,
    /// Bytes per fread call of the `stdio` method.
    pub stdio_bs: u64,
}

/// `iocurve files save`.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct FilesSaveSettings {
    /// Directory the file was written in (and removed from).
    pub dir: PathBuf,
    /// Size of the file written with each write-call size, bytes.
    pub size: u64,
    /// Write-call sizes measured, bytes.
    pub sizes: Vec<u64>,
    /// When the data had to reach the device: `none`, `end` (one fsync), `each`
    /// (O_DSYNC) or `direct` (O_DIRECT).
    pub sync: CopySync,
    /// Seed of the file contents and order (pass it again with --seed to
    /// repeat the run). A string of
    /// decimal digits: JSON readers round integers above 2^53.
    #[serde(with = "crate::vocab::wide")]
    #[schemars(schema_with = "crate::vocab::wide::schema")]
    pub seed: u64,
    /// `--cpu-load`: percent of every CPU kept busy in the background; null:
    /// none.
    pub cpu_load: Option<u8>,
}

/// `iocurve stream`: the schedule as planned.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct StreamSettings {
    /// The target and its shared settings.
    pub target: TargetConfig,
    /// `read` (a player) or `write` (a recorder).
    pub rw: StreamDirection,
    /// Bytes per request (the frame size with `--fps`).
    pub chunk: u64,
    /// Planned data rate, bytes per second (written as MB/s,
    /// `rate_mb_per_s`).
    #[serde(
        rename = "rate_mb_per_s",
        serialize_with = "crate::units::wire::bytes_per_s_as_mb_per_s"
    )]
    pub rate_bytes_per_s: f64,
    /// `--fps`: requests (frames) per second; null when `--rate` set the
    /// schedule.
    pub fps: Option<f64>,
    /// `--deadline`: time from a request's scheduled start to its deadline, ns;
    /// null: one period.
    pub deadline_ns: Option<u64>,
    /// Length of the stream (of each trial with `find_max`), ns.
    pub time_ns: u64,
    /// Whether the highest rate with no missed deadline was searched for.
    pub find_max: bool,
    /// Start of the region streamed on the target, bytes.
    pub offset: u64,
    /// Length of the region streamed, bytes.
    pub span: u64,
    /// `--cpu-load`: percent of every CPU kept busy in the background; null:
    /// none.
    pub cpu_load: Option<u8>,
}

/// `iocurve sustain`.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct SustainSettings {
    /// The target and its shared settings.
    pub target: TargetConfig,
    /// `--bytes`: bytes to write at most (the region's end also stops it).
    pub bytes: u64,
    /// `--time`: time to write at most, ns; null: no limit.
    pub time_ns: Option<u64>,
    /// Bytes per write.
    pub bs: u64,
    /// Length of one throughput interval, ns.
    pub interval_ns: u64,
    /// A throughput figure is also kept for every stretch of this many bytes.
    pub mark: u64,
    /// Start of the region written on the target, bytes.
    pub offset: u64,
    /// Length of the region written, bytes.
    pub span: u64,
    /// `--cpu-load`: percent of every CPU kept busy in the background; null:
    /// none.
    pub cpu_load: Option<u8>,
}

/// The write `sustain` runs, as the settings plan it: what the workload
/// writes and the analysis reports against.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SustainPlan {
    /// Bytes per write.
    pub block_size: u32,
    /// Where the write starts on the target, bytes.
    pub offset: u64,
    /// Bytes to write at most (also bounded by the target's end).
    pub bytes: u64,
    /// Time to write at most, ns.
    pub time_ns: Option<u64>,
    /// Length of one throughput interval, ns.
    pub interval_ns: u64,
    /// A throughput figure is also kept every this many bytes.
    pub mark_bytes: u64,
}

/// `iocurve surface`.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct SurfaceSettings {
    /// The target and its shared settings.
    pub target: TargetConfig,
    /// Positions sampled, spread evenly from the first to the last byte.
    pub samples: u32,
    /// Bytes read (and written) sequentially at each position.
    pub sample_bytes: u64,
    /// Transfer size of the sequential reads and writes, bytes.
    pub block_size: u64,
    /// Random 4 KiB reads near each position, whose median is its access time
    /// (0: none).
    pub access_reads: u32,
    /// A position below this percent of the median speed is slow.
    #[serde(rename = "threshold_pct")]
    pub threshold_percent: f64,
}

/// `iocurve copy`.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct CopySettings {
    /// The image copied: a file or a block device.
    pub source: PathBuf,
    /// The destination and its shared settings.
    pub target: TargetConfig,
    /// Bytes per read and write, as `dd bs=`.
    pub block_size: u64,
    /// When the data had to be on the medium: `none`, `end` (fsync at the end),
    /// `each` (O_DSYNC) or `direct` (O_DIRECT, then fsync).
    pub sync: CopySync,
    /// Whether the destination was read back and compared with the source.
    pub verify: bool,
}

/// `iocurve endure`.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct EndureSettings {
    /// The device worn and its shared settings.
    pub target: TargetConfig,
    /// Write-and-verify cycles asked for, each over the whole span.
    pub cycles: u32,
    /// Transfer size of the writes and reads, bytes.
    pub block_size: u64,
    /// Whether the run ends at the first cycle with a bad block or an I/O
    /// error.
    pub stop_on_error: bool,
}

/// `iocurve flash <test>`.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct FlashSettings {
    /// The flash test: `align`, `open-au`, `cache`, `capacity` or `class`.
    pub test: crate::vocab::options::FlashTest,
    /// The device tested.
    pub target: PathBuf,
    /// Seed of the data the test wrote (`--seed`; from the clock when not
    /// given), so the run can be repeated; `align` writes nothing. A string
    /// of decimal digits: JSON readers round integers above 2^53.
    #[serde(serialize_with = "crate::vocab::wide::serialize")]
    #[schemars(schema_with = "crate::vocab::wide::schema")]
    pub seed: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_typed_configuration_is_stored_as_its_json_and_read_back_as_that_json() {
        let typed: Recorded<FlashSettings> = FlashSettings {
            test: crate::vocab::options::FlashTest::Align,
            target: "/dev/mmcblk0".into(),
            seed: 7,
        }
        .into();
        let text = serde_json::to_string(&typed).unwrap();
        assert_eq!(
            text,
            r#"{"test":"align","target":"/dev/mmcblk0","seed":"7"}"#
        );
        let back: Recorded<FlashSettings> = serde_json::from_str(&text).unwrap();
        assert_eq!(back.to_json(), typed.to_json());
        assert!(matches!(back, Recorded::Stored(_)));
    }

    #[test]
    fn a_configuration_of_older_options_still_reads() {
        let old = r#"{"test":"align","target":"x","an_option_since_removed":3}"#;
        let back: Recorded<FlashSettings> = serde_json::from_str(old).unwrap();
        assert_eq!(back.to_json()["an_option_since_removed"], 3);
    }
}
