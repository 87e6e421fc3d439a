//! Figures whose Rust unit differs from the unit their JSON key names.
//!
//! The JSON naming rule (README, "JSON naming") allows one suffix per unit:
//! integer times in `_ns`, float times in `_s`, rates in `_mb_per_s`. A few
//! fields are kept in the unit their measurement or analysis works in (µs
//! for the curve model's fixed cost, ms for the kernel's busy time); they
//! are written and read through these converters, so the JSON value always
//! matches its key. Documents written before the rule are converted when
//! they are read (`result::upgrade`).

use serde::{Deserialize, Deserializer, Serializer};

/// An optional float written divided by `unit` (its value in the JSON
/// key's larger unit).
fn serialize_opt_over<S: Serializer>(v: &Option<f64>, unit: f64, s: S) -> Result<S::Ok, S::Error> {
    match v {
        Some(v) => s.serialize_some(&(*v / unit)),
        None => s.serialize_none(),
    }
}

/// An optional float read back multiplied by `unit`: the inverse of
/// [`serialize_opt_over`].
fn deserialize_opt_times<'de, D: Deserializer<'de>>(
    d: D,
    unit: f64,
) -> Result<Option<f64>, D::Error> {
    Option::<f64>::deserialize(d).map(|v| v.map(|v| v * unit))
}

/// A float in µs, written as float seconds.
pub mod us_as_s {
    use super::*;

    pub fn serialize<S: Serializer>(us: &f64, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(*us / 1e6)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        f64::deserialize(d).map(|secs| secs * 1e6)
    }
}

/// An optional float in µs, written as float seconds.
pub mod opt_us_as_s {
    use super::*;

    pub fn serialize<S: Serializer>(us: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
        serialize_opt_over(us, 1e6, s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
        deserialize_opt_times(d, 1e6)
    }
}

/// Whole milliseconds, written as integer nanoseconds.
pub mod ms_as_ns {
    use super::*;

    pub fn serialize<S: Serializer>(ms: &u64, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(ms.saturating_mul(1_000_000))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
        u64::deserialize(d).map(|ns| ns / 1_000_000)
    }
}

/// Whole microseconds, written as integer nanoseconds.
pub mod us_as_ns {
    use super::*;

    pub fn serialize<S: Serializer>(us: &u64, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(us.saturating_mul(1_000))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
        u64::deserialize(d).map(|ns| ns / 1_000)
    }
}

/// An optional count of KiB (as sysfs gives `max_sectors_kb`), written as
/// bytes.
pub mod opt_kib_as_bytes {
    use super::*;

    pub fn serialize<S: Serializer>(kib: &Option<u64>, s: S) -> Result<S::Ok, S::Error> {
        match kib {
            Some(kib) => s.serialize_some(&kib.saturating_mul(1024)),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
        Option::<u64>::deserialize(d).map(|b| b.map(|b| b / 1024))
    }
}

/// An optional link rate in Mbit/s, written as MB/s (10^6 bytes per
/// second, an eighth of it).
pub mod opt_mbit_as_mb_per_s {
    use super::*;

    pub fn serialize<S: Serializer>(mbit: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
        serialize_opt_over(mbit, 8.0, s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
        deserialize_opt_times(d, 8.0)
    }
}

/// Bytes per second, written as MB/s (10^6 bytes per second).
pub fn bytes_per_s_as_mb_per_s<S: Serializer>(rate: &f64, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(*rate / 1e6)
}

#[cfg(test)]
mod tests {
    use serde::{Deserialize, Serialize};

    #[derive(Serialize, Deserialize, PartialEq, Debug)]
    struct Holder {
        #[serde(with = "super::us_as_s")]
        t0_s: f64,
        #[serde(with = "super::opt_us_as_s")]
        se_s: Option<f64>,
        #[serde(with = "super::ms_as_ns")]
        busy_ns: u64,
        #[serde(with = "super::us_as_ns")]
        period_ns: u64,
    }

    #[test]
    fn each_value_is_written_in_the_unit_its_key_names_and_read_back() {
        let h = Holder {
            t0_s: 250.0,
            se_s: Some(2.0),
            busy_ns: 37,
            period_ns: 10_000,
        };
        let json = serde_json::to_value(&h).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"t0_s": 0.00025, "se_s": 0.000002, "busy_ns": 37_000_000u64, "period_ns": 10_000_000u64})
        );
        let back: Holder = serde_json::from_value(json).unwrap();
        assert!((back.t0_s - 250.0).abs() < 1e-9);
        assert_eq!(back.busy_ns, 37);
        assert_eq!(back.period_ns, 10_000);
    }
}
