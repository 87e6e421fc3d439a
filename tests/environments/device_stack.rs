//! Identity follows the device stack on real block devices: a loop device,
//! a partition, a dm device over a loop is a device of its own (its name,
//! size and key), with what lies beneath as its stack; a cache anywhere in
//! the stack puts the cache caveat on a result taken through it.

use crate::common;

use common::{LoopDevice, MIB, iocurve, json, ok_json, skipped};
use serde_json::Value;

/// What `probe --json` says of `path`.
fn probe(path: &str) -> Value {
    ok_json(iocurve().args(["probe", path, "--json"]))
}

/// A stack built for one case, kept alive while it is probed; Err is why
/// this machine cannot build it.
struct Built {
    /// The device node to probe.
    node: String,
    /// Its kernel name.
    name: String,
    /// Its size, bytes.
    size: u64,
    /// The layers' kinds, top first, down to the disk the loop's file is on.
    kinds: Vec<&'static str>,
    _keep: Vec<LoopDevice>,
    _cleanup: Option<Cleanup>,
}

/// A command that undoes part of a stack when the case ends.
struct Cleanup(&'static str, Vec<String>);

impl Drop for Cleanup {
    fn drop(&mut self) {
        let args: Vec<&str> = self.1.iter().map(String::as_str).collect();
        let _ = common::sh(self.0, &args);
    }
}

fn plain_loop() -> Result<Built, String> {
    let dev = LoopDevice::new(24 * MIB)?;
    Ok(Built {
        node: dev.path().into(),
        name: dev.name(),
        size: 24 * MIB,
        kinds: vec!["loop"],
        _keep: vec![dev],
        _cleanup: None,
    })
}

/// A loop device over a file holding an MBR with one partition from 1 MiB
/// to the end, attached with partition scanning.
fn partition_of_a_loop() -> Result<Built, String> {
    let dev = LoopDevice::with_options(16 * MIB, &["-P"])?;
    let mut mbr = vec![0u8; 512];
    let sectors = (16 * MIB / 512 - 2048) as u32;
    mbr[446 + 4] = 0x83;
    mbr[446 + 8..446 + 12].copy_from_slice(&2048u32.to_le_bytes());
    mbr[446 + 12..446 + 16].copy_from_slice(&sectors.to_le_bytes());
    mbr[510] = 0x55;
    mbr[511] = 0xaa;
    std::fs::write(&dev.dev, &mbr).map_err(|e| e.to_string())?;
    let _ = common::sh("blockdev", &["--rereadpt", dev.path()]);
    let name = format!("{}p1", dev.name());
    let sys = format!("/sys/class/block/{name}");
    for _ in 0..50 {
        if std::path::Path::new(&sys).exists()
            && std::path::Path::new(&format!("/dev/{name}")).exists()
        {
            return Ok(Built {
                node: format!("/dev/{name}"),
                name,
                size: u64::from(sectors) * 512,
                kinds: vec!["partition", "loop"],
                _keep: vec![dev],
                _cleanup: None,
            });
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    Err(
        "this kernel read no MBR partition table on a loop device (CONFIG_MSDOS_PARTITION off?)"
            .into(),
    )
}

/// A dm-linear device over the first 8 MiB of a loop device.
fn dm_linear_over_a_loop() -> Result<Built, String> {
    let dev = LoopDevice::new(16 * MIB)?;
    let dm_name = format!("iocurve-test-{}", std::process::id());
    let table = format!("0 {} linear {} 0", 8 * MIB / 512, dev.path());
    common::sh("dmsetup", &["create", &dm_name, "--table", &table])
        .map_err(|e| format!("no device mapper here: {e}"))?;
    let cleanup = Cleanup("dmsetup", vec!["remove".into(), dm_name.clone()]);
    let node = std::fs::canonicalize(format!("/dev/mapper/{dm_name}"))
        .map_err(|e| format!("/dev/mapper/{dm_name}: {e}"))?;
    let name = node.file_name().unwrap().to_string_lossy().into_owned();
    Ok(Built {
        node: node.display().to_string(),
        name,
        size: 8 * MIB,
        kinds: vec!["dm", "loop"],
        _keep: vec![dev],
        _cleanup: Some(cleanup),
    })
}

/// Builds one stack, or says why this machine cannot.
type Build = fn() -> Result<Built, String>;

/// Each kind of stack on its own: the device probed is named, with its
/// own size and a key of its own, and its stack lists each layer down to
/// the loop's file; no two stacks share a key, nor any with the disk the
/// files are on.
#[test]
fn each_device_in_a_stack_is_its_own() {
    let cases: [(&str, Build); 4] = [
        ("a loop device", plain_loop),
        ("a second loop device", plain_loop),
        ("a partition of a loop device", partition_of_a_loop),
        ("dm-linear over a loop device", dm_linear_over_a_loop),
    ];
    let here = probe(std::env::temp_dir().to_str().unwrap());
    let mut keys = vec![here["key"].as_str().unwrap().to_string()];
    let mut built = Vec::new();
    for (what, build) in cases {
        let b = match build() {
            Ok(b) => b,
            Err(why) => {
                skipped(&format!("{what}: {why}"));
                continue;
            }
        };
        let id = probe(&b.node);
        assert_eq!(id["device"], b.name.as_str(), "{what}: {id:#}");
        assert_eq!(id["top"]["size_bytes"], b.size, "{what}: {id:#}");
        assert!(id["top"]["rotational"].is_boolean() || id["top"]["rotational"].is_null());
        let label = id["label"].as_str().unwrap();
        assert!(label.contains(&b.name), "{what}: {label}");
        let kinds: Vec<&str> = id["stack"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l["kind"].as_str().unwrap())
            .collect();
        assert_eq!(kinds[..b.kinds.len()], b.kinds[..], "{what}: {id:#}");
        let text = common::text(&common::ok(iocurve().args(["probe", &b.node])).stdout);
        assert!(
            text.contains("stack") && text.contains("medium"),
            "{what}: {text}"
        );
        keys.push(id["key"].as_str().unwrap().to_string());
        built.push(b);
    }
    let distinct: std::collections::BTreeSet<&String> = keys.iter().collect();
    assert_eq!(distinct.len(), keys.len(), "{keys:#?}");
}

/// A profile in a directory on ext4 over a loop device that reads its file
/// through the page cache carries the cache caveat, in the JSON and in the
/// text, as the loop device named directly does.
#[test]
fn a_file_system_over_a_cached_loop_carries_the_cache_caveat() {
    let mut dev = match LoopDevice::new(64 * MIB) {
        Ok(d) => d,
        Err(why) => return skipped(&why),
    };
    let dio =
        std::fs::read_to_string(format!("/sys/block/{}/loop/dio", dev.name())).unwrap_or_default();
    if dio.trim() != "0" {
        return skipped("the loop device reads its file with direct I/O already");
    }
    let mnt = match dev.mkfs_and_mount() {
        Ok(m) => m,
        Err(why) => return skipped(&why),
    };
    let dir = mnt.display().to_string();
    let quick = [
        "--time",
        "0.3s",
        "--repeat",
        "1",
        "--size",
        "8M",
        "--no-save",
    ];
    let out = common::ok(iocurve().args(["profile", &dir]).args(quick).arg("--json"));
    let doc = json(&out.stdout);
    let notes: &Vec<Value> = doc["target"]["notes"].as_array().unwrap();
    let name = dev.name();
    assert!(
        notes.iter().any(|n| n["caveat"] == "stack_cache"
            && n["layer"] == name.as_str()
            && n["cache"] == "page_cache"),
        "{notes:?}"
    );
    let text = common::text(&common::ok(iocurve().args(["profile", &dir]).args(quick)).stdout);
    assert!(text.contains("CACHE:"), "{text}");
    // The device named directly says the same.
    let raw = ok_json(iocurve().args([
        "run",
        dev.path(),
        "--rw",
        "read",
        "--bs",
        "128k",
        "--size",
        "4M",
        "--ramp",
        "0",
        "--no-save",
        "--json",
    ]));
    assert!(
        raw["target"]["notes"]
            .to_string()
            .contains("\"caveat\":\"stack_cache\""),
        "{raw:#}"
    );
}

/// The results database files a run on a loop device and a run in a
/// directory of the disk beneath it under two devices.
#[test]
fn history_keeps_a_loop_apart_from_the_disk_beneath() {
    let dev = match LoopDevice::new(16 * MIB) {
        Ok(d) => d,
        Err(why) => return skipped(&why),
    };
    let home = tempfile::tempdir().unwrap();
    let db = home.path().join("results.db");
    let db = db.to_str().unwrap();
    let below = dev.backing.parent().unwrap().to_str().unwrap().to_string();
    for target in [dev.path(), below.as_str()] {
        common::ok(iocurve().args([
            "run", target, "--rw", "read", "--bs", "128k", "--size", "4M", "--ramp", "0", "--db",
            db,
        ]));
    }
    let doc = ok_json(iocurve().args(["history", "--db", db, "--json"]));
    let devices = doc["devices"].as_array().unwrap();
    assert_eq!(devices.len(), 2, "{doc:#}");
    assert_ne!(devices[0]["device"]["key"], devices[1]["device"]["key"]);
    assert!(
        devices
            .iter()
            .any(|d| d["device"]["key"].as_str().unwrap().starts_with("loop:")),
        "{doc:#}"
    );
}
