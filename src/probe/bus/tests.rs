//! The unit tests of [`super`]: the host bus of every kind of target,
//! from fixture sysfs trees with and without debugfs.

use super::*;
use crate::probe::fixture::Tree;
use crate::probe::ios::MmcTiming;
use std::io::ErrorKind;

const MMC_HOST: &str = "platform/fe340000.mmc/mmc_host/mmc0";
const USB: &str = "pci0000:00/0000:00:14.0/usb2/2-1";

/// An SD card of `card_type` on host mmc0, with `cmdq_en` when given and
/// debugfs `ios` when given.
fn mmc_card(t: &Tree, card_type: &str, cmdq_en: Option<&str>, ios: Option<&str>) {
    let card = format!("devices/{MMC_HOST}/mmc0:aaaa");
    let disk = t.disk(
        &format!("{MMC_HOST}/mmc0:aaaa"),
        "mmcblk0",
        "179:0",
        1 << 24,
    );
    t.partition(&disk, "mmcblk0p1", "179:1", 1, 1 << 23);
    t.file(&format!("{card}/type"), card_type);
    t.file(&format!("{card}/cid"), "0353445344303847806051fd1c008c01");
    if let Some(c) = cmdq_en {
        t.file(&format!("{card}/cmdq_en"), c);
    }
    t.link(&format!("{disk}/device"), &card);
    if let Some(text) = ios {
        t.file("kernel/debug/mmc0/ios", text);
    }
}

const SDR104: &str = "clock:\t\t208000000 Hz\nactual clock:\t200000000 Hz\nvdd:\t\t21 (3.3 ~ 3.4 V)\nbus mode:\t2 (push-pull)\nchip select:\t0 (don't care)\npower mode:\t2 (on)\nbus width:\t2 (4 bits)\ntiming spec:\t6 (sd uhs SDR104)\nsignal voltage:\t1 (1.80 V)\ndriver type:\t0 (driver type B)";

/// A USB reader on USB 2.0 whose interface is bound to `driver`.
fn usb_reader(t: &Tree, driver: Option<&str>) {
    let scsi = format!("{USB}/2-1:1.0/host6/target6:0:0/6:0:0:0");
    let disk = t.disk(&scsi, "sdb", "8:16", 1 << 24);
    t.file(&format!("devices/{USB}/idVendor"), "05e3");
    t.file(&format!("devices/{USB}/speed"), "480");
    t.link(&format!("{disk}/device"), &format!("devices/{scsi}"));
    if let Some(d) = driver {
        t.link(
            &format!("devices/{USB}/2-1:1.0/driver"),
            &format!("bus/usb/drivers/{d}"),
        );
    }
}

/// What the record says, and that its ceiling is the interface's (the
/// one the LINK verdicts are judged against).
fn bus_of(t: &Tree, name: &str) -> HostBus {
    let host = host_bus_in(t.root(), name);
    let interface = link::disk_interface(t.root(), name);
    assert_eq!(
        host.ceiling_mb_per_s,
        interface.and_then(|i| i.practical_limit_mb_s),
        "{name}"
    );
    host
}

#[test]
fn an_sd_card_with_debugfs_names_its_mode_lines_and_clock() {
    let t = Tree::new();
    mmc_card(&t, "SD", None, Some(SDR104));
    let host = bus_of(&t, "mmcblk0");
    let Bus::SdMmc {
        mode: Some(m),
        unread: None,
    } = host.bus
    else {
        panic!("{host:?}");
    };
    assert_eq!(m.timing, MmcTiming::UhsSdr104);
    assert_eq!(
        (m.data_lines, m.clock_hz, m.actual_clock_hz),
        (Some(4), Some(208_000_000), Some(200_000_000))
    );
    // 200 MHz × 4 lines = 100 MB/s, 90% of it payload.
    assert_eq!(host.ceiling_mb_per_s, Some(90.0));
    assert_eq!(
        host.command_queueing,
        Queueing::Unknown {
            why: QueueingUnknown::SdNotExposed
        }
    );
    // A partition's bus is its disk's.
    assert_eq!(host_bus_in(t.root(), "mmcblk0p1"), host);
}

#[test]
fn an_sd_card_without_debugfs_is_an_sd_bus_of_unknown_mode() {
    let t = Tree::new();
    mmc_card(&t, "SD", None, None);
    let host = bus_of(&t, "mmcblk0");
    assert_eq!(
        host.bus,
        Bus::SdMmc {
            mode: None,
            unread: Some(IosUnread::DebugfsAbsent)
        }
    );
    assert_eq!(host.ceiling_mb_per_s, None);
    // Not root: debugfs is root's.
    assert_eq!(
        IosUnread::of_error(ErrorKind::PermissionDenied),
        IosUnread::DebugfsDenied
    );
    // `ios` that names no mode.
    let t = Tree::new();
    mmc_card(&t, "SD", None, Some("vdd: 21"));
    let host = bus_of(&t, "mmcblk0");
    assert!(
        matches!(
            host.bus,
            Bus::SdMmc {
                unread: Some(IosUnread::NotUnderstood),
                ..
            }
        ),
        "{host:?}"
    );
}

#[test]
fn an_emmc_says_whether_its_command_queue_is_on() {
    let hs400 = "clock:\t\t200000000 Hz\nbus width:\t3 (8 bits)\ntiming spec:\t10 (mmc HS400)\n";
    for (cmdq, state) in [
        (
            Some("1"),
            Queueing::On {
                from: QueueingFrom::CardCmdqEn,
            },
        ),
        (
            Some("0"),
            Queueing::Off {
                from: QueueingFrom::CardCmdqEn,
            },
        ),
        (
            None,
            Queueing::Unknown {
                why: QueueingUnknown::CardAttributeAbsent,
            },
        ),
    ] {
        let t = Tree::new();
        mmc_card(&t, "MMC", cmdq, Some(hs400));
        let host = bus_of(&t, "mmcblk0");
        assert_eq!(host.command_queueing, state, "{cmdq:?}");
        assert_eq!(host.ceiling_mb_per_s, Some(360.0));
    }
}

#[test]
fn a_usb_reader_names_its_speed_and_driver() {
    for (driver, said, state) in [
        (
            Some("uas"),
            Some(UsbDriver::Uas),
            Queueing::On {
                from: QueueingFrom::UasDriver,
            },
        ),
        (
            Some("usb-storage"),
            Some(UsbDriver::UsbStorage),
            Queueing::Off {
                from: QueueingFrom::UsbStorageDriver,
            },
        ),
        (
            Some("ums-realtek"),
            Some(UsbDriver::Other),
            Queueing::Unknown {
                why: QueueingUnknown::OtherUsbDriver,
            },
        ),
        (
            None,
            None,
            Queueing::Unknown {
                why: QueueingUnknown::UsbDriverUnread,
            },
        ),
    ] {
        let t = Tree::new();
        usb_reader(&t, driver);
        let host = bus_of(&t, "sdb");
        assert_eq!(
            host.bus,
            Bus::Usb {
                speed: Some(UsbSpeed::High),
                driver: said
            },
            "{driver:?}"
        );
        assert_eq!(host.ceiling_mb_per_s, Some(40.0));
        assert_eq!(host.command_queueing, state, "{driver:?}");
    }
}

#[test]
fn nvme_sata_loop_and_zram_are_not_an_sd_bus() {
    let t = Tree::new();
    let pci = "devices/pci0000:00/0000:00:1d.0/0000:3d:00.0";
    let nvme = t.disk(
        "pci0000:00/0000:00:1d.0/0000:3d:00.0/nvme/nvme0",
        "nvme0n1",
        "259:0",
        1 << 30,
    );
    t.file(&format!("{pci}/nvme/nvme0/firmware_rev"), "2B2QEXM7");
    t.file(&format!("{pci}/current_link_speed"), "8.0 GT/s PCIe");
    t.file(&format!("{pci}/current_link_width"), "4");
    t.link(&format!("{nvme}/device"), &format!("{pci}/nvme/nvme0"));
    t.disk(
        "pci0000:00/0000:00:1f.2/ata2/host1/target1:0:0/1:0:0:0",
        "sda",
        "8:0",
        1 << 30,
    );
    t.file("class/ata_link/link2/sata_spd", "6.0 Gbps");
    t.disk("virtual", "zram0", "252:0", 1 << 20);
    t.disk("virtual", "loop0", "7:0", 1 << 20);
    for (name, transport) in [
        ("nvme0n1", Transport::Nvme),
        ("sda", Transport::Sata),
        ("zram0", Transport::Zram),
        ("loop0", Transport::Loop),
    ] {
        let host = bus_of(&t, name);
        assert_eq!(host.bus, Bus::NotSd { transport }, "{name}");
        assert_eq!(
            host.command_queueing,
            Queueing::Unknown {
                why: QueueingUnknown::NotSdBus
            }
        );
    }
    assert_eq!(bus_of(&t, "nvme0n1").ceiling_mb_per_s, Some(3545.0));
    assert_eq!(bus_of(&t, "sda").ceiling_mb_per_s, Some(558.0));
}

#[test]
fn a_simulated_card_and_a_missing_device() {
    let sim = simulated(Some(12.5));
    assert_eq!(
        (sim.bus, sim.ceiling_mb_per_s, sim.command_queueing),
        (
            Bus::Simulated {
                link_mb_per_s: Some(12.5)
            },
            Some(12.5),
            Queueing::NotModelled
        )
    );
    let t = Tree::new();
    assert_eq!(
        host_bus_in(t.root(), "sdz").bus,
        Bus::Unknown {
            why: BusUnknown::NoDevice
        }
    );
}

#[test]
fn usb_speeds_from_the_kernels_mbit() {
    assert_eq!(UsbSpeed::from_mbit_s(1.5), Some(UsbSpeed::Low));
    assert_eq!(UsbSpeed::from_mbit_s(12.0), Some(UsbSpeed::Full));
    assert_eq!(UsbSpeed::from_mbit_s(5000.0), Some(UsbSpeed::Super));
    assert_eq!(
        UsbSpeed::from_mbit_s(20000.0),
        Some(UsbSpeed::SuperPlusGen2x2)
    );
    assert_eq!(UsbSpeed::from_mbit_s(40000.0), None);
    assert_eq!(UsbSpeed::from_mbit_s(f64::NAN), None);
}
