//! The machine a result was measured on: the same card in another reader
//! or another kernel can give other figures.

use serde::{Deserialize, Serialize};
use std::path::Path;

/// Host facts of the probe.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HostFacts {
    /// The machine's host name.
    pub hostname: String,
    /// Kernel release (`uname -r`).
    pub kernel: String,
    /// CPU model from `/proc/cpuinfo`; null when it names none.
    pub cpu_model: Option<String>,
    /// The iocurve version that measured.
    pub iocurve_version: String,
}

/// This machine.
pub fn this_host() -> HostFacts {
    let uname = rustix::system::uname();
    HostFacts {
        hostname: uname.nodename().to_string_lossy().into_owned(),
        kernel: uname.release().to_string_lossy().into_owned(),
        cpu_model: std::fs::read_to_string(Path::new("/proc/cpuinfo"))
            .ok()
            .and_then(|t| cpu_model(&t)),
        iocurve_version: env!("CARGO_PKG_VERSION").to_string(),
    }
}

/// The CPU model from `/proc/cpuinfo` text: `model name` on x86, `Model`
/// or `Hardware` on ARM boards, `cpu` on POWER.
pub fn cpu_model(cpuinfo: &str) -> Option<String> {
    for key in ["model name", "Model", "Hardware", "cpu"] {
        let found = cpuinfo.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            (k.trim() == key).then(|| v.trim().to_string())
        });
        if let Some(v) = found.filter(|v| !v.is_empty()) {
            return Some(v);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_models() {
        let x86 = "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) CPU @ 2.20GHz\n";
        assert_eq!(cpu_model(x86).unwrap(), "Intel(R) Xeon(R) CPU @ 2.20GHz");
        let pi =
            "processor\t: 0\nBogoMIPS\t: 108.00\n\nModel\t\t: Raspberry Pi 4 Model B Rev 1.4\n";
        assert_eq!(cpu_model(pi).unwrap(), "Raspberry Pi 4 Model B Rev 1.4");
        assert_eq!(cpu_model("processor : 0\n"), None);
    }
}
