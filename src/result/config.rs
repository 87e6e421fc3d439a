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

impl<T: Serialize> Recorded<T> {
    /// The configuration as JSON, whichever way it is held.
    pub fn to_json(&self) -> serde_json::Value {
        match self {
            Recorded::Typed(t) => serde_json::to_value(t).unwrap_or(serde_json::Value::Null),
            Recorded::Stored(v) => v.clone(),
        }
    }
}

impl<T> From<T> for Recorded<T> {
    fn from(t: T) -> Self {
        Recorded::Typed(t)
    }
}

impl<T: Serialize> Serialize for Recorded<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Recorded::Typed(t) => t.serialize(s),
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
impl<T: schemars::JsonSchema> schemars::JsonSchema for Recorded<T> {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> std::borrow::Cow<'static, str> {
        T::schema_name()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        generator.subschema_for::<T>()
    }
}

/// `iocurve profile`: its options, and the time and area each row got.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ProfileSettings {
    #[serde(flatten)]
    pub options: ProfileConfig,
    pub time_per_test_s: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ramp_per_test_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub test_area_bytes: Option<u64>,
}

/// `iocurve files load`.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct FilesLoadSettings {
    pub dir: PathBuf,
    pub sizes: Vec<u64>,
    pub count: Option<u32>,
    pub fps: Option<f64>,
    /// Seed of the file contents and order (pass it again with --seed to
    /// repeat the run). A string of
    /// decimal digits: JSON readers round integers above 2^53.
    #[serde(with = "crate::vocab::wide")]
    #[schemars(schema_with = "crate::vocab::wide::schema")]
    pub seed: u64,
    pub cpu_load: Option<u8>,
    pub method: FileReadMethod,
    pub stdio_bs: u64,
}

/// `iocurve files save`.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct FilesSaveSettings {
    pub dir: PathBuf,
    pub size: u64,
    pub sizes: Vec<u64>,
    pub sync: CopySync,
    /// Seed of the file contents and order (pass it again with --seed to
    /// repeat the run). A string of
    /// decimal digits: JSON readers round integers above 2^53.
    #[serde(with = "crate::vocab::wide")]
    #[schemars(schema_with = "crate::vocab::wide::schema")]
    pub seed: u64,
    pub cpu_load: Option<u8>,
}

/// `iocurve stream`: the schedule as planned.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct StreamSettings {
    pub target: TargetConfig,
    pub rw: StreamDirection,
    pub chunk: u64,
    pub rate_bytes_per_s: f64,
    pub fps: Option<f64>,
    pub deadline_ns: Option<u64>,
    pub time_ns: u64,
    pub find_max: bool,
    pub offset: u64,
    pub span: u64,
    pub cpu_load: Option<u8>,
}

/// `iocurve sustain`.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct SustainSettings {
    pub target: TargetConfig,
    pub bytes: u64,
    pub time_ns: Option<u64>,
    pub bs: u64,
    pub interval_ns: u64,
    pub mark: u64,
    pub offset: u64,
    pub span: u64,
    pub cpu_load: Option<u8>,
}

/// The write `sustain` runs, as the settings plan it: what the workload
/// writes and the analysis reports against.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SustainPlan {
    pub block_size: u32,
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
    pub target: TargetConfig,
    pub samples: u32,
    pub sample_bytes: u64,
    pub block_size: u64,
    pub access_reads: u32,
    pub threshold_percent: f64,
}

/// `iocurve copy`.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct CopySettings {
    pub source: PathBuf,
    pub target: TargetConfig,
    pub block_size: u64,
    pub sync: CopySync,
    pub verify: bool,
}

/// `iocurve endure`.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct EndureSettings {
    pub target: TargetConfig,
    pub cycles: u32,
    pub block_size: u64,
    pub stop_on_error: bool,
}

/// `iocurve flash <test>`.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct FlashSettings {
    pub test: crate::vocab::options::FlashTest,
    pub target: PathBuf,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_typed_configuration_is_stored_as_its_json_and_read_back_as_that_json() {
        let typed: Recorded<FlashSettings> = FlashSettings {
            test: crate::vocab::options::FlashTest::Align,
            target: "/dev/mmcblk0".into(),
        }
        .into();
        let text = serde_json::to_string(&typed).unwrap();
        assert_eq!(text, r#"{"test":"align","target":"/dev/mmcblk0"}"#);
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
