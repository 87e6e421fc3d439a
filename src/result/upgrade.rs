//! Documents written before the JSON naming rule (schema 4 and earlier),
//! brought to the current keys before they are read.
//!
//! Renamed keys whose unit did not change read through `#[serde(alias)]`
//! on their field. What an alias cannot do is here: a key whose unit
//! changed (its value is converted), the seed moved from
//! `config.target.seed` to `config.seed`, and the keys of a configuration,
//! which is kept as the JSON it was stored as ([`super::config::Recorded`])
//! and so never meets a field's alias.

use serde_json::{Map, Value};

/// The first schema version written under the naming rule.
pub const NAMING_RULE: u64 = 5;

/// A key whose unit changed: the old key, the new key, and the factor from
/// the old unit to the new.
const CONVERTED: [(&str, &str, f64); 8] = [
    ("t0_us", "t0_s", 1e-6),
    ("t0_se_us", "t0_se_s", 1e-6),
    ("busy_ms", "busy_ns", 1e6),
    ("period_us", "period_ns", 1e3),
    ("max_sectors_kb", "max_sectors_bytes", 1024.0),
    ("max_hw_sectors_kb", "max_hw_sectors_bytes", 1024.0),
    ("link_mbit_s", "link_mb_per_s", 0.125),
    ("speed_mbit_s", "speed_mb_per_s", 0.125),
];

/// Keys of a stored configuration renamed by the rule.
const CONFIG_RENAMED: [(&str, &str); 3] = [
    ("threshold_percent", "threshold_pct"),
    ("mix_read_percent", "mix_read_pct"),
    ("rate_bytes_per_s", "rate_mb_per_s"),
];

/// Brings a result document of an earlier schema to the current keys and
/// units; a current document is left as it is.
pub fn to_current(doc: &mut Value) {
    let version = doc.get("schema_version").and_then(Value::as_u64);
    if version.is_some_and(|v| v >= NAMING_RULE) {
        return;
    }
    convert_units(doc);
    if let Some(config) = doc.get_mut("config").and_then(Value::as_object_mut) {
        upgrade_config(config);
    }
}

/// Every key of [`CONVERTED`], anywhere in the document, renamed and its
/// value converted (integers stay integers).
fn convert_units(v: &mut Value) {
    match v {
        Value::Object(map) => {
            for (old, new, factor) in CONVERTED {
                if let Some(value) = map.remove(old) {
                    map.insert(new.to_string(), scaled(value, factor));
                }
            }
            if let Some(times) = map.remove("fat_writes") {
                map.insert("fat_write_times".into(), fat_write_times(times));
            }
            map.values_mut().for_each(convert_units);
        }
        Value::Array(items) => items.iter_mut().for_each(convert_units),
        _ => {}
    }
}

/// A flash class figure of FAT write times stored in float milliseconds,
/// as the integer nanoseconds the current figure holds.
fn fat_write_times(mut times: Value) -> Value {
    if let Some(map) = times.as_object_mut() {
        for key in ["worst_mean8", "max", "median"] {
            if let Some(ms) = map.remove(&format!("{key}_ms")).and_then(|v| v.as_f64()) {
                map.insert(format!("{key}_ns"), Value::from((ms * 1e6).round() as u64));
            }
        }
    }
    times
}

fn scaled(value: Value, factor: f64) -> Value {
    match (&value, value.as_u64()) {
        (_, Some(n)) if factor >= 1.0 => Value::from(n.saturating_mul(factor as u64)),
        (Value::Number(n), _) => n
            .as_f64()
            .map_or(value.clone(), |x| Value::from(x * factor)),
        _ => value,
    }
}

/// The seed to `config.seed`, renamed keys to their new names, and the
/// planned stream rate from bytes per second to MB/s.
fn upgrade_config(config: &mut Map<String, Value>) {
    let seed = config
        .get_mut("target")
        .and_then(Value::as_object_mut)
        .and_then(|t| t.remove("seed"));
    if let Some(seed) = seed {
        config.entry("seed").or_insert(seed);
    }
    for (old, new) in CONFIG_RENAMED {
        if let Some(mut value) = config.remove(old) {
            if old == "rate_bytes_per_s" {
                value = value.as_f64().map_or(value, |r| Value::from(r / 1e6));
            }
            config.insert(new.to_string(), value);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_older_document_gets_the_current_keys_in_their_units() {
        let mut doc = json!({
            "schema_version": 4,
            "config": {"target": {"path": "/dev/x", "seed": "7"}, "rate_bytes_per_s": 2.5e6,
                       "threshold_percent": 50.0},
            "curve": {"model": {"t0_us": 250.0, "t0_se_us": null}},
            "tests": [{"repetitions": [{"device": {"busy_ms": 40}}]}],
            "cpu_load": {"period_us": 10000}
        });
        to_current(&mut doc);
        assert_eq!(doc["config"]["seed"], "7");
        assert!(doc["config"]["target"].get("seed").is_none());
        assert_eq!(doc["config"]["rate_mb_per_s"], 2.5);
        assert_eq!(doc["config"]["threshold_pct"], 50.0);
        assert_eq!(doc["curve"]["model"]["t0_s"], 0.00025);
        assert!(doc["curve"]["model"]["t0_se_s"].is_null());
        assert_eq!(
            doc["tests"][0]["repetitions"][0]["device"]["busy_ns"],
            40_000_000u64
        );
        assert_eq!(doc["cpu_load"]["period_ns"], 10_000_000u64);
    }

    #[test]
    fn a_current_document_is_left_alone() {
        let mut doc = json!({"schema_version": NAMING_RULE, "t0_us": 1.0});
        let before = doc.clone();
        to_current(&mut doc);
        assert_eq!(doc, before);
    }
}
