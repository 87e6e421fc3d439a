//! What the card says about itself, read once before a flash test: the
//! kernel's erase-block size, the classes it claims and the link's speed.
//!
//! Why a module of its own: these come from the device's identity (sysfs
//! and the SD Status Register) or from the simulated card's parameters,
//! not from timing; the detectors and their verdicts take them as plain
//! values, so the choice of source lives here and nowhere else.

use crate::medium::OpenTarget;
use crate::probe::DeviceIdentity;
use crate::result::flash::ClaimSource;

/// The erase-block size the kernel reports (`preferred_erase_size`).
pub fn kernel_au(identity: &DeviceIdentity) -> Option<u64> {
    identity
        .device
        .mmc
        .as_ref()
        .and_then(|m| m.preferred_erase_size)
}

/// Whether a layer between the device and the medium can answer for the
/// medium (see [`crate::probe::block::StackCache`]): a loop device whose
/// file goes through the host's page cache or lives in RAM, a dm-cache, a
/// bcache. A collapse of speed through it shows the cache's limits (dirty
/// pages written back, extents allocated), not a flash controller's, so
/// geometry read from its timing is at most low.
pub fn cached_beneath(identity: &DeviceIdentity) -> bool {
    identity
        .device
        .stack
        .iter()
        .any(|layer| layer.cache.is_some())
}

/// The classes to check: the one given with `--claim`, else those the card
/// states in its SD Status Register, else every class iocurve knows.
pub fn claimed_classes(claim: Option<&str>, identity: &DeviceIdentity) -> Vec<String> {
    if let Some(c) = claim {
        return vec![c.to_string()];
    }
    let ssr = identity
        .device
        .mmc
        .as_ref()
        .and_then(|m| m.classes.as_ref());
    let from_ssr: Vec<String> = ssr
        .map(|c| {
            [&c.speed_class, &c.uhs_grade, &c.video_class, &c.app_class]
                .into_iter()
                .flatten()
                .cloned()
                .collect()
        })
        .unwrap_or_default();
    match from_ssr.is_empty() {
        true => every_class(),
        false => from_ssr,
    }
}

/// Where [`claimed_classes`] takes the classes from.
pub fn claim_source(claim: Option<&str>, identity: &DeviceIdentity) -> ClaimSource {
    match (claim, claimed_classes(None, identity) == every_class()) {
        (Some(_), _) => ClaimSource::Given,
        (None, true) => ClaimSource::None,
        (None, false) => ClaimSource::Card,
    }
}

/// Every class iocurve checks when the card states none.
fn every_class() -> Vec<String> {
    crate::analysis::flash::class::CLASSES
        .iter()
        .map(|s| s.to_string())
        .chain(["A2".into()])
        .collect()
}

/// The link's practical ceiling in MB/s: the simulated card's link, or
/// what the interface probe found for a real one.
pub fn link_mb_s(target: &OpenTarget, identity: &DeviceIdentity) -> Option<f64> {
    if let Some(dev) = target.sim() {
        return dev.params().link.map(|l| l as f64 / 1e6);
    }
    identity
        .device
        .interface
        .as_ref()
        .and_then(|i| i.practical_limit_mb_s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::mmc::SdClasses;
    use crate::testdata::sd_identity;

    fn card() -> DeviceIdentity {
        sd_identity("SD08G", 3, "SD", "1234", "2020-01")
    }

    #[test]
    fn a_claim_given_is_the_only_class_checked() {
        assert_eq!(
            claimed_classes(Some("V30"), &card()),
            vec!["V30".to_string()]
        );
    }

    #[test]
    fn with_no_claim_and_no_register_every_class_and_a2_are_checked() {
        let all = claimed_classes(None, &card());
        assert_eq!(all.len(), crate::analysis::flash::class::CLASSES.len() + 1);
        assert_eq!(all.last().map(String::as_str), Some("A2"));
    }

    #[test]
    fn the_register_names_the_classes_in_its_order() {
        let mut id = card();
        let mmc = id.device.mmc.as_mut().unwrap();
        mmc.classes = Some(SdClasses {
            speed_class: Some("Class 10".into()),
            uhs_grade: None,
            video_class: Some("V30".into()),
            app_class: Some("A1".into()),
            au_size: None,
        });
        assert_eq!(claimed_classes(None, &id), ["Class 10", "V30", "A1"]);
    }

    #[test]
    fn the_kernel_au_is_the_preferred_erase_size() {
        assert_eq!(kernel_au(&card()), Some(4 << 20));
    }
}
