//! Starting a result: what every result records about where and when it
//! was measured (the host, the device's identity, the start time), before a
//! workload or flash test adds its tests.

use crate::medium::OpenTarget;
use crate::result::{HostInfo, Payload, RunResult, SCHEMA_VERSION};

/// Host name and kernel release.
pub fn host_info() -> HostInfo {
    let uname = rustix::system::uname();
    HostInfo {
        hostname: uname.nodename().to_string_lossy().into_owned(),
        kernel: uname.release().to_string_lossy().into_owned(),
    }
}

/// Now, as RFC 3339 UTC to the second.
pub fn now_rfc3339() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()
}

/// Starts a result of the command `payload` names; tests are added by the
/// command.
pub fn new_result(payload: Payload, target: &OpenTarget, started_at: String) -> RunResult {
    new_result_for(payload, target.info.clone(), started_at)
}

/// [`new_result`] for a target described without opening it (a directory
/// the command works in itself).
pub fn new_result_for(
    payload: Payload,
    target: crate::result::TargetInfo,
    started_at: String,
) -> RunResult {
    let identity = crate::probe::identify(std::path::Path::new(&target.path));
    new_result_identified(payload, target, started_at, identity)
}

/// [`new_result_for`] with the device's identity already probed (a
/// command that needed it before measuring does not probe twice).
pub fn new_result_identified(
    payload: Payload,
    target: crate::result::TargetInfo,
    started_at: String,
    identity: crate::probe::DeviceIdentity,
) -> RunResult {
    RunResult {
        schema_version: SCHEMA_VERSION,
        iocurve_version: env!("CARGO_PKG_VERSION").to_string(),
        started_at,
        host: host_info(),
        target,
        tests: Vec::new(),
        cpu_load: None,
        interrupted: false,
        error: None,
        device_identity: Some(identity),
        payload,
        mpi: None,
        raw: None,
    }
}
