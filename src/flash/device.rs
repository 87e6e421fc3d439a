//! What the card says about itself, read once before a flash test: the
//! kernel's erase-block size, the classes it claims, the link's speed and
//! the bus it runs on.
//!
//! Why a module of its own: these come from the device's identity (sysfs
//! and the SD Status Register) or from the simulated card's parameters,
//! not from timing; the detectors and their verdicts take them as plain
//! values, so the choice of source lives here and nowhere else.

use crate::engine::sim::SimDevice;
use crate::medium::OpenTarget;
use crate::probe::DeviceIdentity;
use crate::probe::bus::{self, BusUnknown, HostBus};
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
    match target.sim() {
        Some(dev) => sim_link_mb_s(dev),
        None => interface_ceiling(identity),
    }
}

/// A simulated card's `link=`, MB/s.
fn sim_link_mb_s(dev: &SimDevice) -> Option<f64> {
    dev.params().link.map(|l| l as f64 / 1e6)
}

/// The practical ceiling the interface probe found.
fn interface_ceiling(identity: &DeviceIdentity) -> Option<f64> {
    identity
        .device
        .interface
        .as_ref()
        .and_then(|i| i.practical_limit_mb_s)
}

/// The bus the card runs on, for the class result: the simulated card's
/// link, or what the kernel tells of the device's bus on this machine.
pub fn host_bus(target: &OpenTarget, identity: &DeviceIdentity) -> HostBus {
    match (target.sim(), identity.device.device.as_deref()) {
        (Some(dev), _) => bus::simulated(sim_link_mb_s(dev)),
        (None, Some(name)) => bus::host_bus_of(name),
        (None, None) => bus::unknown(BusUnknown::NoDevice),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::flash::class::{Check, Need, judge};
    use crate::engine::sim::SimParams;
    use crate::flash::SimIo;
    use crate::flash::class::{ClassPlan, measure};
    use crate::probe::fixture::Tree;
    use crate::probe::identity::describe_in;
    use crate::probe::mmc::SdClasses;
    use crate::result::flash::{Reason, Status};
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

    /// Every class's checks of a fast card behind a link of `link`
    /// (sim syntax), judged against a ceiling of `ceiling` MB/s.
    fn judged(link: &str, ceiling: Option<f64>) -> Vec<Check> {
        let spec = format!("size=4G,au=4M,write=80MB/s,read=200MB/s,cmd=1us,open_au=4,link={link}");
        let dev = SimDevice::timing_only(SimParams::parse(&spec).unwrap());
        let plan = ClassPlan::new(dev.params().au, dev.params().size);
        let figures = measure(&mut SimIo(&dev), &plan, 1).unwrap();
        judge(&every_class(), &figures, ceiling)
    }

    /// The statuses, by class and need, that a bus of `ceiling` MB/s
    /// must give a card faster than every class: LINK wherever the bus
    /// caps the requirement below its limit, PASS everywhere else.
    fn assert_capped_exactly(checks: &[Check], ceiling: f64) {
        for c in checks {
            let cap = match c.need {
                Need::SeqWrite(_) | Need::RuRead(_) | Need::Sustained(_) => Some(ceiling),
                Need::RandomReadIops(_) | Need::RandomWriteIops(_) => Some(ceiling * 1e6 / 4096.0),
                Need::FatMean(_) | Need::FatMax(_) => None,
            };
            let want = match cap {
                Some(cap) if cap < c.limit => Status::Link,
                _ => Status::Pass,
            };
            assert_eq!(c.status, want, "{} {:?} at {}", c.class, c.need, c.measured);
            if want == Status::Link {
                assert!(
                    matches!(
                        c.reason,
                        Some(Reason::LinkCaps { .. } | Reason::LinkCapsIops { .. })
                    ),
                    "{c:?}"
                );
            }
        }
    }

    #[test]
    fn a_simulated_bus_of_12_5_mb_s_caps_every_requirement_above_it() {
        let checks = judged("12.5MB/s", Some(12.5));
        assert_capped_exactly(&checks, 12.5);
        // C10 fits under the bus; U3, V30-V90 and A2's reads do not.
        let link: Vec<String> = checks
            .iter()
            .filter(|c| c.status == Status::Link)
            .map(|c| format!("{} {:?}", c.class, c.need.kind()))
            .collect();
        assert!(link.contains(&"U3 SeqWrite".to_string()), "{link:?}");
        assert!(link.contains(&"V90 RuRead".to_string()), "{link:?}");
        assert!(link.contains(&"A2 RandomReadIops".to_string()), "{link:?}");
        assert!(!link.iter().any(|l| l.starts_with("C10")), "{link:?}");
    }

    /// An SD card whose host runs in default speed: 25 MHz over 4 lines.
    fn default_speed_card(t: &Tree) {
        let host = "platform/fe340000.mmc/mmc_host/mmc0";
        let disk = t.disk(&format!("{host}/mmc0:aaaa"), "mmcblk0", "179:0", 1 << 24);
        let card = format!("devices/{host}/mmc0:aaaa");
        t.file(&format!("{card}/type"), "SD");
        t.file(&format!("{card}/cid"), "0353445344303847806051fd1c008c01");
        t.link(&format!("{disk}/device"), &card);
        t.file(
            "kernel/debug/mmc0/ios",
            "clock:\t\t25000000 Hz\nbus width:\t2 (4 bits)\ntiming spec:\t0 (legacy)\n",
        );
    }

    #[test]
    fn an_sd_bus_in_default_speed_caps_what_it_cannot_carry() {
        let t = Tree::new();
        default_speed_card(&t);
        let mut id = card();
        id.device = describe_in(t.root(), "mmcblk0");
        // 25 MHz × 4 lines = 12.5 MB/s, 90% of it payload.
        let ceiling = interface_ceiling(&id);
        assert_eq!(ceiling, Some(11.3));
        let host = crate::probe::bus::host_bus_in(t.root(), "mmcblk0");
        assert_eq!(host.ceiling_mb_per_s, ceiling);
        // A card faster than every class behind that bus.
        let checks = judged("11.3MB/s", ceiling);
        assert_capped_exactly(&checks, 11.3);
        let c10 = checks.iter().filter(|c| c.class == "C10");
        assert!(c10.clone().count() == 4 && c10.clone().all(|c| c.status == Status::Pass));
    }
}
