//! The published JSON contract: a JSON Schema (draft 2020-12) for each
//! document iocurve prints, made from the very types it serializes, so the
//! schema cannot drift from the output (schemars derives it from the serde
//! attributes and takes each field's `///` as its description).
//!
//! The schemas are shipped in the repository's schema/ directory, for
//! script authors to validate what they parse; a unit test fails when a
//! shipped file differs from what the types give
//! (`IOCURVE_BLESS_SCHEMA=1 cargo test --lib result::schema` writes them
//! anew), and tests/promises/json_schema.rs validates every command's
//! output against them.

use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, Schema};

/// A schema file of schema/, and what it describes.
pub struct Shipped {
    /// The file name under schema/.
    pub file: &'static str,
    /// The schema, from the types.
    pub make: fn() -> Schema,
}

/// Every schema iocurve ships.
pub const SHIPPED: [Shipped; 6] = [
    Shipped {
        file: "iocurve-result.schema.json",
        make: result,
    },
    Shipped {
        file: "iocurve-json-lines.schema.json",
        make: json_lines,
    },
    Shipped {
        file: "iocurve-compare.schema.json",
        make: compare,
    },
    Shipped {
        file: "iocurve-probe.schema.json",
        make: probe,
    },
    Shipped {
        file: "iocurve-list.schema.json",
        make: list,
    },
    Shipped {
        file: "iocurve-history.schema.json",
        make: history,
    },
];

/// The document `--json` prints for a measuring command (and `export`):
/// one [`super::RunResult`].
pub fn result() -> Schema {
    titled::<super::RunResult>(
        "iocurve result",
        "What one run of a measuring command found, as `--json` prints it and `export --json` gives back. Keys are snake_case and a figure's unit is its suffix: sizes `_bytes`, integer times nanoseconds (`_ns`), float times seconds (`_s`), rates MB/s = 10^6 bytes per second (`_mb_per_s`), `_iops`, percent (`_pct`), plain ratios (`_ratio`). The run's seed is `config.seed`. `schema_version` changes when a field changes meaning or type; added optional fields do not change it. Documents of schema_version 4 and before used other keys (`t0_us`, `read_mb_s`, `threshold_percent`, ...); iocurve reads them and writes them anew under this schema.",
    )
}

/// One line of `--json-lines`: `start`, `interval` or `result`, by `type`.
pub fn json_lines() -> Schema {
    titled::<super::live::JsonLine>(
        "iocurve JSON line",
        "One line of `--json-lines`, selected by `type`: `start` (first, before measuring), `interval` (about one a second while measuring), `result` (last: the whole result, as `--json` prints it, with `type` added).",
    )
}

/// What `compare --json` prints.
pub fn compare() -> Schema {
    titled::<super::compare::Comparison>(
        "iocurve comparison",
        "What `compare --json` prints: every later run against the first, test by test, with a verdict where the difference is beyond noise.",
    )
}

/// What `probe --json` prints.
pub fn probe() -> Schema {
    titled::<crate::probe::DeviceIdentity>(
        "iocurve device identity",
        "What `probe --json` prints: who the device is, what it sits behind, and where; also the `device_identity` of a result.",
    )
}

/// What `list --json` prints.
pub fn list() -> Schema {
    titled::<super::stored::Listing>(
        "iocurve list",
        "What `list --json` prints: every device in the results database, then every run by number, each with its headline figures (median MB/s and range per test).",
    )
}

/// What `history --json` prints.
pub fn history() -> Schema {
    titled::<super::stored::Histories>(
        "iocurve history",
        "What `history --json` prints: each device asked for, with its runs oldest first and each run's headline figures (median MB/s and range per test).",
    )
}

/// The schema of `T` as serialized, with a title and a description.
fn titled<T: JsonSchema>(title: &str, description: &str) -> Schema {
    let mut schema = SchemaSettings::draft2020_12()
        .for_serialize()
        .into_generator()
        .into_root_schema_for::<T>();
    schema.insert("title".into(), title.into());
    schema.insert("description".into(), description.into());
    schema
}

/// A schema as the file holds it: pretty JSON and a final newline.
pub fn file_text(schema: &Schema) -> String {
    let mut text = serde_json::to_string_pretty(schema).unwrap_or_default();
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;
    use std::path::Path;

    /// The shipped files are what the types give; `IOCURVE_BLESS_SCHEMA=1`
    /// writes them anew after a type changed on purpose.
    #[test]
    fn the_shipped_schemas_are_what_the_types_give() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("schema");
        let bless = std::env::var_os("IOCURVE_BLESS_SCHEMA").is_some();
        for shipped in SHIPPED {
            let path = dir.join(shipped.file);
            let made = file_text(&(shipped.make)());
            if bless {
                std::fs::create_dir_all(&dir).unwrap();
                std::fs::write(&path, &made).unwrap();
            }
            let stored = std::fs::read_to_string(&path).unwrap_or_default();
            assert!(
                stored == made,
                "schema/{} is not what the types give: run \
                 `IOCURVE_BLESS_SCHEMA=1 cargo test --lib result::schema` and commit schema/",
                shipped.file
            );
        }
    }

    #[test]
    fn every_property_is_described() {
        let mut missing = Vec::new();
        for shipped in SHIPPED {
            let schema = (shipped.make)().to_value();
            undescribed(&schema, "", &mut missing);
        }
        missing.sort();
        missing.dedup();
        assert!(
            missing.is_empty(),
            "{} properties without a description: add a /// (what it is, its unit, what \
             null means) to each field or variant field: {missing:?}",
            missing.len()
        );
    }

    /// Paths of properties in `v` with no description of their own (a
    /// `$ref`'d type's description counts).
    fn undescribed(v: &Value, at: &str, out: &mut Vec<String>) {
        match v {
            Value::Object(map) => {
                if let Some(Value::Object(props)) = map.get("properties") {
                    for (name, prop) in props {
                        if !has_description(prop) {
                            out.push(format!("{at}.{name}"));
                        }
                    }
                }
                for (k, child) in map {
                    undescribed(child, &format!("{at}/{k}"), out);
                }
            }
            Value::Array(items) => {
                for (i, child) in items.iter().enumerate() {
                    undescribed(child, &format!("{at}[{i}]"), out);
                }
            }
            _ => {}
        }
    }

    fn has_description(prop: &Value) -> bool {
        prop.get("description").is_some() || prop.get("const").is_some()
    }

    #[test]
    fn a_seed_is_a_string_of_digits_in_the_schema() {
        let schema = result().to_value();
        let seed = &schema["$defs"]["WorkloadInfo"]["properties"]["seed"];
        assert_eq!(seed["type"], "string", "{seed}");
        assert_eq!(seed["pattern"], "^[0-9]+$", "{seed}");
        assert!(seed["description"].as_str().unwrap().contains("2^53"));
    }
}
