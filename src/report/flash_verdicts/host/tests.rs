//! The unit tests of [`super`]: one line per kind of host bus.

use super::*;

fn sd(mode: Option<MmcMode>, unread: Option<IosUnread>, ceiling: Option<f64>) -> HostBus {
    HostBus {
        bus: Bus::SdMmc { mode, unread },
        ceiling_mb_per_s: ceiling,
        command_queueing: Queueing::Unknown {
            why: QueueingUnknown::SdNotExposed,
        },
    }
}

#[test]
fn an_sd_bus_names_its_mode_lines_clock_ceiling_and_queueing() {
    let mode = MmcMode {
        timing: MmcTiming::UhsSdr104,
        timing_code: Some(6),
        data_lines: Some(4),
        clock_hz: Some(208_000_000),
        actual_clock_hz: Some(187_500_000),
    };
    assert_eq!(
        host_line(&sd(Some(mode), None, Some(84.4))),
        "SD/MMC bus, UHS-I SDR104, 4 bits at 187.5 MHz (208 MHz asked), at most 84.4 MB/s, command queueing unknown (the kernel does not expose it for SD cards)"
    );
    let legacy = MmcMode {
        timing: MmcTiming::Legacy,
        actual_clock_hz: None,
        clock_hz: Some(25_000_000),
        ..mode
    };
    let mut emmc = sd(Some(legacy), None, Some(11.3));
    emmc.command_queueing = Queueing::Off {
        from: QueueingFrom::CardCmdqEn,
    };
    assert_eq!(
        host_line(&emmc),
        "SD/MMC bus, default speed, 4 bits at 25 MHz, at most 11.3 MB/s, command queueing off (the card's cmdq_en)"
    );
}

#[test]
fn an_unread_mode_says_why() {
    assert_eq!(
        host_line(&sd(None, Some(IosUnread::DebugfsDenied), None)),
        "SD/MMC bus, mode unknown (debugfs is readable by root only), command queueing unknown (the kernel does not expose it for SD cards)"
    );
}

#[test]
fn usb_sim_and_other_buses() {
    let usb = HostBus {
        bus: Bus::Usb {
            speed: Some(UsbSpeed::High),
            driver: Some(UsbDriver::UsbStorage),
        },
        ceiling_mb_per_s: Some(40.0),
        command_queueing: Queueing::Off {
            from: QueueingFrom::UsbStorageDriver,
        },
    };
    assert_eq!(
        host_line(&usb),
        "USB, USB 2.0 High Speed (480 Mb/s), usb-storage driver, at most 40.0 MB/s, command queueing off (usb-storage: one command at a time)"
    );
    assert_eq!(
        host_line(&crate::probe::bus::simulated(Some(12.5))),
        "simulated card behind a 12.5 MB/s link, at most 12.5 MB/s, command queueing not modelled"
    );
    let nvme = HostBus {
        bus: Bus::NotSd {
            transport: Transport::Nvme,
        },
        ceiling_mb_per_s: Some(3545.0),
        command_queueing: Queueing::Unknown {
            why: QueueingUnknown::NotSdBus,
        },
    };
    assert_eq!(host_line(&nvme), "not an SD bus: NVMe, at most 3545 MB/s");
    assert_eq!(
        host_line(&crate::probe::bus::unknown(BusUnknown::NoDevice)),
        "bus unknown (no block device sysfs knows)"
    );
}
