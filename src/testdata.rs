//! Synthetic results for unit and snapshot tests: real types, made-up
//! figures, nothing measured.

use crate::probe::DeviceIdentity;
use crate::probe::host::HostFacts;
use crate::probe::identity::DeviceFacts;
use crate::probe::mmc::MmcInfo;
use crate::result::config::Recorded;
use crate::result::{
    CpuUsage, HostInfo, Measurement, Payload, RampInfo, RunResult, TestResult, WorkloadInfo,
};
use crate::result::{TargetInfo, TargetKind};
use crate::stats::Spread;
use crate::vocab::options::IoMode;

/// One repetition moving 64 MiB at `mb_per_s`.
pub fn measurement(mb_per_s: f64, block_size: u64) -> Measurement {
    let bytes = 64 << 20;
    Measurement {
        bytes,
        ops: bytes / block_size,
        elapsed_ns: (bytes as f64 / mb_per_s * 1e3) as u64,
        mb_per_s,
        mib_per_s: mb_per_s * 1e6 / 1048576.0,
        iops: mb_per_s * 1e6 / block_size as f64,
        read: None,
        write: None,
        latency: None,
        cpu: CpuUsage {
            user_s: 0.01,
            system_s: 0.02,
            cpu_s_per_gb: 0.4,
        },
        device_io: None,
        ramp: RampInfo::default(),
        sync_ns: 0,
        verify: None,
        warnings: Vec::new(),
        interrupted: false,
        raw: None,
    }
}

/// A test named `name` doing `rw` with the given repetitions.
pub fn test(name: &str, rw: &str, reps: &[f64]) -> TestResult {
    let bs = if name.contains("4KiB") { 4096 } else { 1 << 20 };
    TestResult {
        name: name.to_string(),
        workload: WorkloadInfo {
            rw: rw.into(),
            block_size: bs,
            queue_depth: 1,
            threads: 1,
            engine: "sync".into(),
            offset: 0,
            span: 1 << 30,
            mix_read_percent: None,
            seed: 7,
        },
        repetitions: reps.iter().map(|&v| measurement(v, bs)).collect(),
        mb_per_s: Spread::of(reps),
        iops: Spread::of(&reps.iter().map(|v| v * 1e6 / bs as f64).collect::<Vec<_>>()),
        skipped: None,
    }
}

/// An SD card's identity as the probe would give it.
pub fn sd_identity(name: &str, manfid: u32, oem: &str, serial: &str, date: &str) -> DeviceIdentity {
    let mmc = MmcInfo {
        card_type: Some("SD".into()),
        host: Some("mmc0".into()),
        manfid: Some(manfid),
        manufacturer: crate::probe::mmc::manufacturer(manfid).map(str::to_string),
        oemid: None,
        oem: Some(oem.into()),
        name: Some(name.into()),
        revision: Some("8.0".into()),
        date: Some(date.into()),
        serial: Some(serial.into()),
        cid: Some(format!("{manfid:02x}{serial}")),
        preferred_erase_size: Some(4 << 20),
        classes: None,
    };
    let device = DeviceFacts {
        device: Some("mmcblk0".into()),
        interface: Some(crate::probe::link::mmc_link(None)),
        mmc: Some(mmc),
        ..DeviceFacts::default()
    };
    DeviceIdentity {
        key: crate::probe::identity::device_key(&device, "bench", "/dev/mmcblk0".as_ref()),
        label: crate::probe::identity::label(&device, None),
        target: "/dev/mmcblk0".into(),
        device,
        filesystem: None,
        host: HostFacts {
            hostname: "bench".into(),
            kernel: "6.1.0".into(),
            cpu_model: None,
            iocurve_version: "0.1.0".into(),
        },
    }
}

/// A profile-like result of `identity` with SEQ read and write figures.
pub fn run(
    identity: Option<DeviceIdentity>,
    started_at: &str,
    read: &[f64],
    write: &[f64],
) -> RunResult {
    RunResult {
        cpu_load: None,
        schema_version: crate::result::SCHEMA_VERSION,
        iocurve_version: "0.1.0".into(),
        payload: Payload::Profile {
            config: Recorded::Stored(serde_json::json!({})),
            parallel: None,
        },
        started_at: started_at.into(),
        host: HostInfo {
            hostname: "bench".into(),
            kernel: "6.1.0".into(),
        },
        target: TargetInfo {
            path: "/dev/mmcblk0".into(),
            kind: TargetKind::BlockDevice,
            scratch_file: None,
            size_bytes: 8 << 30,
            device: None,
            filesystem: None,
            mode: IoMode::Direct,
            logical_block_size: 512,
            writable: true,
            notes: Vec::new(),
        },
        tests: vec![
            test("SEQ 1MiB Q8", "read", read),
            test("SEQ 1MiB Q8", "write", write),
        ],
        interrupted: false,
        error: None,
        device_identity: identity,
        mpi: None,
    }
}

/// A copy run that could not start: a command whose tests are not
/// repeated measurements, for the paths that list such runs apart.
pub fn other_command(mut r: RunResult) -> RunResult {
    r.payload = Payload::Copy {
        config: Recorded::Stored(serde_json::Value::Null),
        copy: None,
    };
    r
}

/// The same run, recorded as an `iocurve run`.
pub fn as_run(mut r: RunResult) -> RunResult {
    r.payload = Payload::Run {
        config: Recorded::Stored(serde_json::json!({})),
        access: None,
        parallel: None,
    };
    r
}
