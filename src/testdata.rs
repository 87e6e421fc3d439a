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
        host: None,
        ramp: RampInfo::default(),
        sync_ns: 0,
        verify: None,
        warnings: Vec::new(),
        interrupted: false,
        raw: None,
    }
}

/// The device counters of a 64 MiB read that reached the device whole.
pub fn device_io() -> crate::result::DeviceIo {
    crate::result::DeviceIo {
        device: "vdb".into(),
        read_requests: 16,
        write_requests: 0,
        read_merges: 0,
        write_merges: 0,
        read_bytes: 64 << 20,
        write_bytes: 0,
        busy_ms: 40,
        avg_read_request_bytes: Some(4.0 * 1048576.0),
        avg_write_request_bytes: None,
        iocurve_read_bytes: 64 << 20,
        iocurve_write_bytes: 0,
        cache_served_fraction: 0.0,
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

/// Whether two JSON documents say the same, numbers equal to 12
/// significant digits (serde_json may read a float back one unit in the
/// last place away from the one it wrote).
pub fn same_json(a: &serde_json::Value, b: &serde_json::Value) -> bool {
    use serde_json::Value;
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_f64(), y.as_f64()) {
            (Some(x), Some(y)) => (x - y).abs() <= 1e-12 * x.abs().max(y.abs()),
            _ => x == y,
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same_json(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| same_json(v, w)))
        }
        _ => a == b,
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
        raw: None,
    }
}

/// The run of an 8 GB SD card the report snapshots show: SEQ reads
/// steady, writes spread.
pub fn sd_card_run() -> RunResult {
    run(
        Some(sd_identity("SD08G", 3, "SD", "0x6051fd1c", "2008-12")),
        "2024-03-01T10:00:00Z",
        &[20.1, 19.9, 20.2],
        &[12.2, 17.1, 15.0],
    )
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

/// A `profile` run on 4 ranks, two on `node-a` and two on `node-b`, as
/// rank 0 would merge it: one repetition of a read and a write test whose
/// bytes, elapsed times and rates are the exact sums and spans of the
/// ranks' (each rank's bytes add up to the tests'), the clocks of
/// `node-b` thousands of seconds off and measured, and rank 3 a straggler
/// (under 80% of the median rank's rate).
pub fn mpi_result() -> RunResult {
    use crate::result::cluster::{MpiSection, ReadOtherHost};
    // Per test: its start on the common clock, each rank's MiB, lateness
    // of its start and its own elapsed time (ns).
    type Plan = (i64, [u64; 4], [i64; 4], [i64; 4]);
    let plans: [Plan; 2] = [
        (
            0,
            [18, 18, 18, 10],
            [0, 20_000, 310_000, 1_200_000],
            [160_000_000; 4],
        ),
        (
            500_000_000,
            [17, 17, 17, 13],
            [0, 15_000, 280_000, 950_000],
            [320_000_000, 330_000_000, 325_000_000, 340_000_000],
        ),
    ];
    let mut r = run(None, "2024-03-01T10:00:00Z", &[1.0], &[1.0]);
    for t in &mut r.tests {
        t.workload.queue_depth = 8;
    }
    let mut tests = Vec::new();
    for (plan, test) in plans.iter().zip(r.tests.iter_mut()) {
        tests.push(mpi_test(plan, test));
    }
    let ranks = mpi_ranks(&tests);
    r.target.path = "/scratch/{host}".into();
    r.target.kind = TargetKind::Directory;
    r.target.scratch_file = Some("/scratch/node-a/iocurve-scratch-rank0".into());
    r.host.hostname = "node-a".into();
    r.mpi = Some(MpiSection {
        size: 4,
        ranks,
        tests,
        stonewall: false,
        shared_file: false,
        read_other_host: Some(ReadOtherHost {
            done: true,
            why_not: None,
            read_from: vec![2, 3, 0, 1],
        }),
        note: None,
        whole: None,
        lost: Vec::new(),
    });
    r
}

/// The hosts of [`mpi_result`]'s ranks, by rank.
const MPI_HOSTS: [&str; 4] = ["node-a", "node-a", "node-b", "node-b"];

/// The rank rows of [`mpi_result`]: each rank's sums and spans over
/// `tests`, its clock (`node-b` thousands of seconds off) and latency
/// (rank 3 the straggler's).
fn mpi_ranks(tests: &[crate::result::cluster::MpiTest]) -> Vec<crate::result::cluster::RankRow> {
    use crate::result::cluster::{MpiRepetition, RankRow, RankSpan};
    use crate::units::mb_per_s;
    let offsets: [(i64, u64, f64); 4] = [
        (0, 0, 0.0),
        (3_000, 2_000, 0.1),
        (4_812_000_000_123, 18_500, 2.4),
        (4_812_000_004_870, 21_000, 2.6),
    ];
    let latency: [(u64, u64); 4] = [
        (2_400_000, 6_100_000),
        (2_450_000, 6_300_000),
        (2_500_000, 6_900_000),
        (4_100_000, 13_200_000),
    ];
    (0..4)
        .map(|i| {
            let spans: Vec<&RankSpan> = tests.iter().map(|t| &t.repetitions[0].ranks[i]).collect();
            let bytes: u64 = spans.iter().map(|s| s.bytes).sum();
            let took: i64 = spans.iter().map(|s| s.end_ns - s.start_ns).sum();
            let lateness = |at: fn(&MpiRepetition) -> i64, of: fn(&RankSpan) -> i64| {
                tests
                    .iter()
                    .map(|t| of(&t.repetitions[0].ranks[i]).abs_diff(at(&t.repetitions[0])))
                    .max()
                    .unwrap_or(0)
            };
            RankRow {
                rank: i as u32,
                host: MPI_HOSTS[i].into(),
                local_rank: (i % 2) as u32,
                target: format!("/scratch/{}", MPI_HOSTS[i]),
                clock_offset_ns: offsets[i].0,
                clock_offset_bound_ns: offsets[i].1,
                clock_drift_ns_per_s: offsets[i].2,
                clock_drift_uncertainty_ns_per_s: 0.0,
                start_ns: spans[0].start_ns,
                end_ns: spans[spans.len() - 1].end_ns,
                bytes,
                ops: spans.iter().map(|s| s.ops).sum(),
                mb_per_s: mb_per_s(bytes, took as u64),
                p50_ns: Some(latency[i].0),
                p99_ns: Some(latency[i].1),
                start_skew_ns: lateness(|t| t.first_start_ns, |s| s.start_ns),
                end_skew_ns: lateness(|t| t.first_end_ns, |s| s.end_ns),
            }
        })
        .collect()
}

/// One test of [`mpi_result`]: its ranks' spans from `plan` (its start on
/// the common clock, each rank's MiB, lateness of its start and its own
/// elapsed time, ns), and `test`'s figures made their exact sums.
fn mpi_test(
    plan: &(i64, [u64; 4], [i64; 4], [i64; 4]),
    test: &mut TestResult,
) -> crate::result::cluster::MpiTest {
    use crate::analysis::cluster::merge::from_spans;
    use crate::result::cluster::{MpiTest, RankSpan};
    use crate::units::mb_per_s;
    const MIB: u64 = 1 << 20;
    let (t0, mib, late, took) = plan;
    let spans: Vec<RankSpan> = (0..4)
        .map(|i| RankSpan {
            rank: i as u32,
            start_ns: t0 + late[i],
            end_ns: t0 + late[i] + took[i],
            bytes: mib[i] * MIB,
            ops: mib[i],
            mb_per_s: mb_per_s(mib[i] * MIB, took[i] as u64),
            bytes_at_first_done: 0,
        })
        .collect();
    let first_start = spans.iter().map(|s| s.start_ns).min().unwrap_or(0);
    let first_end = spans.iter().map(|s| s.end_ns).min().unwrap_or(0);
    let last_end = spans.iter().map(|s| s.end_ns).max().unwrap_or(0);
    // What each rank had moved when the first finished, at its own
    // steady rate.
    let spans: Vec<RankSpan> = spans
        .into_iter()
        .map(|mut s| {
            let share = (first_end - s.start_ns) as f64 / (s.end_ns - s.start_ns) as f64;
            s.bytes_at_first_done = (s.bytes as f64 * share.min(1.0)) as u64;
            s
        })
        .collect();
    let bytes: u64 = spans.iter().map(|s| s.bytes).sum();
    let elapsed = (last_end - first_start) as u64;
    let m = &mut test.repetitions[0];
    m.bytes = bytes;
    m.ops = bytes / MIB;
    m.elapsed_ns = elapsed;
    m.mb_per_s = mb_per_s(bytes, elapsed);
    m.mib_per_s = m.mb_per_s * 1e6 / MIB as f64;
    m.iops = m.ops as f64 * 1e9 / elapsed as f64;
    test.mb_per_s = Spread::of(&[m.mb_per_s]);
    test.iops = Spread::of(&[m.iops]);
    MpiTest {
        name: test.name.clone(),
        repetitions: vec![from_spans(spans, bytes, first_start)],
    }
}

/// A sustained write's drop from 400 to 5 MB/s at request 24 of 40, with
/// the spreads of both sides and a medium confidence.
pub fn sustain_drop() -> crate::result::apps::SpeedDrop {
    crate::result::apps::SpeedDrop {
        at_interval: 3,
        bytes_before_drop: 24 << 20,
        seconds_before_drop: 0.06,
        mb_per_s_before: 400.0,
        mb_per_s_after: 5.0,
        ratio: 0.0125,
        at_request: 24,
        requests: 40,
        bytes_low: 23 << 20,
        bytes_high: 25 << 20,
        fast_from_bytes: 0,
        mb_per_s_start: 0.0,
        before_spread: Spread::of(&[390.0, 400.0, 410.0]),
        after_spread: Spread::of(&[4.5, 5.0, 5.5]),
        confidence: Some(crate::result::flash::Confidence::Medium),
    }
}
