//! The unit tests of [`super`]: who a device is, from fixture sysfs trees.

use super::*;
use crate::probe::block::StackCache;
use crate::probe::fixture::Tree;

const USB: &str = "pci0000:00/0000:00:14.0/usb2/2-1";

/// A simulated card says so, with its claimed size; a spec that does
/// not parse is still a simulated card.
#[test]
fn a_simulated_card_is_named_as_one() {
    let t = Tree::new();
    let id = identify_in(t.root(), Path::new("sim:size=8G,real=2G"));
    assert_eq!(id.label, "simulated card, 8 GiB");
    assert!(id.key.ends_with(":sim:size=8G,real=2G"), "{}", id.key);
    let id = identify_in(t.root(), Path::new("sim:size=1X"));
    assert_eq!(id.label, "simulated card");
    let id = identify_in(t.root(), Path::new("sim:"));
    assert_eq!(id.label, "simulated card, 4 GiB");
}

/// A SanDisk Cruzer on USB 2.0.
fn usb_stick(t: &Tree) {
    let disk = t.disk(
        &format!("{USB}/2-1:1.0/host6/target6:0:0/6:0:0:0"),
        "sdb",
        "8:16",
        30_031_872,
    );
    t.file(&format!("devices/{USB}/idVendor"), "0781");
    t.file(&format!("devices/{USB}/idProduct"), "5567");
    t.file(&format!("devices/{USB}/bcdDevice"), "0100");
    t.file(&format!("devices/{USB}/speed"), "480");
    t.file(&format!("devices/{USB}/manufacturer"), "SanDisk");
    t.file(&format!("devices/{USB}/product"), "Cruzer Blade");
    t.file(&format!("devices/{USB}/serial"), "4C530001230531115093");
    t.link(
        &format!("{disk}/device"),
        &format!("devices/{USB}/2-1:1.0/host6/target6:0:0/6:0:0:0"),
    );
    t.file(
        &format!("devices/{USB}/2-1:1.0/host6/target6:0:0/6:0:0:0/vendor"),
        "SanDisk ",
    );
    t.file(
        &format!("devices/{USB}/2-1:1.0/host6/target6:0:0/6:0:0:0/model"),
        "Cruzer Blade    ",
    );
    t.file(
        &format!("devices/{USB}/2-1:1.0/host6/target6:0:0/6:0:0:0/rev"),
        "1.00",
    );
    t.file(&format!("{disk}/queue/max_hw_sectors_kb"), "240");
    t.file(&format!("{disk}/queue/rotational"), "1");
    t.file(&format!("{disk}/queue/write_cache"), "write through");
}

#[test]
fn usb_stick_fields() {
    let t = Tree::new();
    usb_stick(&t);
    let d = describe_in(t.root(), "sdb");
    let u = d.usb.as_ref().unwrap();
    assert_eq!(u.vendor_id.as_deref(), Some("0781"));
    assert_eq!(u.product_id.as_deref(), Some("5567"));
    assert_eq!(u.bcd_device.as_deref(), Some("0100"));
    assert_eq!(u.speed_mbit_s, Some(480.0));
    let b = d.block.as_ref().unwrap();
    assert_eq!(b.vendor.as_deref(), Some("SanDisk"));
    assert_eq!(b.model.as_deref(), Some("Cruzer Blade"));
    assert_eq!(b.revision.as_deref(), Some("1.00"));
    assert_eq!(b.max_hw_sectors_kb, Some(240));
    assert_eq!(b.rotational, Some(true));
    assert_eq!(b.write_cache.as_deref(), Some("write through"));
    assert_eq!(b.discard, None);
    let i = d.interface.as_ref().unwrap();
    assert_eq!(
        (i.kind.as_str(), i.practical_limit_mb_s),
        ("usb", Some(40.0))
    );
    assert!(d.mmc.is_none() && d.nvme.is_none());
    assert_eq!(
        device_key(&d, "h", Path::new("/")),
        "serial:4C530001230531115093"
    );
    assert_eq!(label(&d, None), "USB SanDisk Cruzer Blade, 14.32 GiB");
}

const MMC: &str = "platform/fe340000.mmc/mmc_host/mmc0/mmc0:aaaa";

/// A SanDisk 8 GB SD card with CID attributes and an SSR.
fn sd_card(t: &Tree) -> String {
    let disk = t.disk(MMC, "mmcblk0", "179:0", 15_523_840);
    let card = format!("devices/{MMC}");
    for (k, v) in [
        ("type", "SD"),
        ("manfid", "0x000003"),
        ("oemid", "0x5344"),
        ("name", "SD08G"),
        ("hwrev", "0x8"),
        ("fwrev", "0x0"),
        ("date", "12/2008"),
        ("serial", "0x6051fd1c"),
        ("cid", "0353445344303847806051fd1c008c01"),
        ("preferred_erase_size", "4194304"),
    ] {
        t.file(&format!("{card}/{k}"), v);
    }
    let ssr = crate::probe::mmc::tests::ssr_hex(&[
        (447, 440, 4),
        (431, 428, 9),
        (399, 396, 1),
        (391, 384, 10),
        (339, 336, 1),
    ]);
    t.file(&format!("{card}/ssr"), &ssr);
    t.link(&format!("{disk}/device"), &card);
    t.file(
        "kernel/debug/mmc0/ios",
        "clock:\t\t50000000 Hz\nbus width:\t2 (4 bits)\ntiming spec:\t2 (sd high-speed)\n",
    );
    disk
}

#[test]
fn sd_card_fields() {
    let t = Tree::new();
    sd_card(&t);
    let d = describe_in(t.root(), "mmcblk0");
    let m = d.mmc.as_ref().unwrap();
    assert_eq!(m.card_type.as_deref(), Some("SD"));
    assert_eq!(m.host.as_deref(), Some("mmc0"));
    assert_eq!(m.manfid, Some(3));
    assert_eq!(m.manufacturer.as_deref(), Some("SanDisk"));
    assert_eq!(m.oemid.as_deref(), Some("0x5344"));
    assert_eq!(m.oem.as_deref(), Some("SD"));
    assert_eq!(m.name.as_deref(), Some("SD08G"));
    assert_eq!(m.revision.as_deref(), Some("8.0"));
    assert_eq!(m.date.as_deref(), Some("2008-12"));
    assert_eq!(m.serial.as_deref(), Some("0x6051fd1c"));
    assert_eq!(m.preferred_erase_size, Some(4 << 20));
    let c = m.classes.as_ref().unwrap();
    assert_eq!(c.speed_class.as_deref(), Some("Class 10"));
    assert_eq!(c.uhs_grade.as_deref(), Some("U1"));
    assert_eq!(c.video_class.as_deref(), Some("V10"));
    assert_eq!(c.app_class.as_deref(), Some("A1"));
    assert_eq!(c.au_size, Some(4 << 20));
    let i = d.interface.as_ref().unwrap();
    assert_eq!(i.description, "SD/MMC sd high-speed, 200 Mb/s");
    assert_eq!(
        device_key(&d, "h", Path::new("/")),
        "cid:0353445344303847806051fd1c008c01"
    );
    assert_eq!(label(&d, None), "SD SanDisk SD08G, 7.40 GiB");
}

#[test]
fn nvme_drive_fields() {
    let t = Tree::new();
    let pci = "devices/pci0000:00/0000:00:1d.0/0000:3d:00.0";
    let disk = t.disk(
        "pci0000:00/0000:00:1d.0/0000:3d:00.0/nvme/nvme0",
        "nvme0n1",
        "259:0",
        1_000_215_216,
    );
    t.file(
        &format!("{pci}/nvme/nvme0/model"),
        "Samsung SSD 970 EVO Plus 500GB",
    );
    t.file(&format!("{pci}/nvme/nvme0/serial"), "S4EVNF0M123456A");
    t.file(&format!("{pci}/nvme/nvme0/firmware_rev"), "2B2QEXM7");
    t.link(&format!("{disk}/device"), &format!("{pci}/nvme/nvme0"));
    t.file(&format!("{pci}/current_link_speed"), "8.0 GT/s PCIe");
    t.file(&format!("{pci}/current_link_width"), "4");
    t.file(&format!("{disk}/queue/discard_max_bytes"), "2199023255040");
    t.file(&format!("{disk}/queue/nr_requests"), "1023");
    let d = describe_in(t.root(), "nvme0n1");
    let n = d.nvme.as_ref().unwrap();
    assert_eq!(n.controller.as_deref(), Some("nvme0"));
    assert_eq!(n.model.as_deref(), Some("Samsung SSD 970 EVO Plus 500GB"));
    assert_eq!(n.serial.as_deref(), Some("S4EVNF0M123456A"));
    assert_eq!(n.firmware.as_deref(), Some("2B2QEXM7"));
    let b = d.block.as_ref().unwrap();
    assert_eq!((b.discard, b.nr_requests), (Some(true), Some(1023)));
    assert_eq!(b.revision.as_deref(), Some("2B2QEXM7"));
    let i = d.interface.as_ref().unwrap();
    assert_eq!(i.description, "NVMe over PCIe 3.0 x4");
    assert_eq!(i.practical_limit_mb_s, Some(3545.0));
    assert_eq!(
        device_key(&d, "h", Path::new("/")),
        "serial:S4EVNF0M123456A"
    );
}

#[test]
fn loop_over_a_file_reaches_the_files_disk() {
    let t = Tree::new();
    let backing = t.root().join("disk.img");
    std::fs::write(&backing, vec![0u8; 4096]).unwrap();
    let st = rustix::fs::stat(&backing).unwrap();
    let file_dev = format!(
        "{}:{}",
        rustix::fs::major(st.st_dev),
        rustix::fs::minor(st.st_dev)
    );
    let host = t.disk(
        "pci0000:00/0000:00:1f.2/ata2/host1/target1:0:0/1:0:0:0",
        "sda",
        "8:0",
        1 << 30,
    );
    t.partition(&host, "sda1", &file_dev, 1, 1 << 29);
    t.file("class/ata_link/link2/sata_spd", "3.0 Gbps");
    let lo = t.disk("virtual", "loop0", "7:0", 8);
    t.file(
        &format!("{lo}/loop/backing_file"),
        &backing.display().to_string(),
    );
    let d = describe_in(t.root(), "loop0");
    let names: Vec<(&str, LayerKind)> = d.stack.iter().map(|l| (l.name.as_str(), l.kind)).collect();
    assert_eq!(
        names,
        vec![("loop0", LayerKind::Loop), ("sda1", LayerKind::Partition)]
    );
    assert_eq!(
        d.stack[0].detail.as_deref(),
        Some(backing.to_str().unwrap())
    );
    assert_eq!(d.block.as_ref().unwrap().name, "sda");
    let i = d.interface.as_ref().unwrap();
    assert_eq!(
        (i.description.as_str(), i.practical_limit_mb_s),
        ("SATA 3.0 Gb/s", Some(279.0))
    );
    // The loop is a device of its own: its size, its key (its file's
    // inode over the partition over the disk), the disk below it.
    assert_eq!(d.top.as_ref().unwrap().size_bytes, 8 * 512);
    assert_eq!(
        device_key(&d, "h", Path::new("/")),
        format!(
            "loop:ino={}/part:1@1048576/model:sda@h|549755813888|sata",
            st.st_ino
        )
    );
    assert_eq!(label(&d, None), "loop0 over disk.img, 4 KiB");
}

#[test]
fn partition_of_a_disk_without_identity() {
    let t = Tree::new();
    let disk = t.disk("pci0000:00/0000:00:05.0/virtio2", "vda", "254:0", 1 << 20);
    t.partition(&disk, "vda1", "254:1", 1, 1 << 19);
    let d = describe_in(t.root(), "vda1");
    assert_eq!(d.device.as_deref(), Some("vda1"));
    assert_eq!(d.stack.len(), 1);
    let b = d.block.as_ref().unwrap();
    assert_eq!(
        (b.name.as_str(), b.dev.as_str(), b.size_bytes),
        ("vda", "254:0", 512 << 20)
    );
    assert_eq!(
        (b.vendor.clone(), b.model.clone(), b.serial.clone()),
        (None, None, None)
    );
    assert_eq!(d.interface.as_ref().unwrap().kind, "virtio");
    assert!(d.usb.is_none() && d.mmc.is_none() && d.nvme.is_none());
    assert_eq!(d.top.as_ref().unwrap().size_bytes, 256 << 20);
    assert_eq!(label(&d, None), "vda partition 1, 256 MiB");
    assert_eq!(
        device_key(&d, "h", Path::new("/")),
        "part:1@1048576/model:vda@h|536870912|virtio"
    );
    let whole = describe_in(t.root(), "vda");
    assert_eq!(whole.top, None);
    assert_eq!(label(&whole, None), "vda, 512 MiB");
    assert_eq!(
        device_key(&whole, "h", Path::new("/")),
        "model:vda@h|536870912|virtio"
    );
}

/// Each layer's kind and cache, top first.
type Layers = Vec<(LayerKind, Option<StackCache>)>;

/// One stack of each kind over one disk: each device is its own (its
/// size, its key, distinct from the disk's and from each other's), what
/// lies below is its stack, and the caches in it are named.
#[test]
fn every_kind_of_stack_is_a_device_of_its_own() {
    let t = Tree::new();
    // The fixture's disk stands for the real file system the loops'
    // files are made on, so it takes that file system's number.
    let files = tempfile::tempdir().unwrap();
    let st = rustix::fs::stat(files.path()).unwrap();
    let here = format!(
        "{}:{}",
        rustix::fs::major(st.st_dev),
        rustix::fs::minor(st.st_dev)
    );
    let in_ram = crate::probe::sysfs::mount_of(files.path())
        .unwrap()
        .is_some_and(|m| m.fstype == "tmpfs" || m.fstype == "ramfs");
    let vda = t.disk("pci0000:00/0000:00:05.0/virtio2", "vda", &here, 1 << 24);
    t.file(&format!("{vda}/device/serial"), "DISK-1");
    t.partition(&vda, "vda1", "240:1", 1, 1 << 20);
    for (n, dio) in [(0, "1"), (1, "0")] {
        let file = files.path().join(format!("f{n}.img"));
        std::fs::write(&file, b"x").unwrap();
        let lo = t.disk("virtual", &format!("loop{n}"), &format!("240:1{n}"), 2048);
        t.file(&format!("{lo}/loop/backing_file"), file.to_str().unwrap());
        t.file(&format!("{lo}/loop/dio"), dio);
        t.file(&format!("{lo}/loop/offset"), "0");
    }
    let over_vda1 = |name: &str, dev: &str, sectors: u64| {
        let dir = t.disk("virtual", name, dev, sectors);
        t.link(&format!("{dir}/slaves/vda1"), &format!("{vda}/vda1"));
        dir
    };
    let dm = over_vda1("dm-0", "240:2", 4096);
    t.file(&format!("{dm}/dm/name"), "vg-data");
    t.file(&format!("{dm}/dm/uuid"), "LVM-abcdef");
    let md = over_vda1("md0", "240:3", 8192);
    t.file(&format!("{md}/md/uuid"), "1a2b:3c4d");
    over_vda1("bcache0", "240:4", 16384);

    let loop_key = |n: &str| {
        let ino = rustix::fs::stat(files.path().join(format!("f{n}.img")))
            .unwrap()
            .st_ino;
        format!("loop:ino={ino}/serial:DISK-1")
    };
    let loop_cache = |c: Option<StackCache>| if in_ram { Some(StackCache::Memory) } else { c };
    let part = "part:1@1048576/serial:DISK-1".to_string();
    use LayerKind::{Bcache, Dm, Loop, Md, Partition};
    #[rustfmt::skip]
    let cases: [(&str, String, &str, Layers, &str); 6] = [
        ("vda1", part.clone(), "vda partition 1, 512 MiB",
         vec![(Partition, None)], "vda1 (partition 1) → vda"),
        ("loop0", loop_key("0"), "loop0 over f0.img, 1 MiB",
         vec![(Loop, loop_cache(None))], "loop0 (loop, file "),
        ("loop1", loop_key("1"), "loop1 over f1.img, 1 MiB",
         vec![(Loop, loop_cache(Some(StackCache::PageCache)))], "loop1 (loop, file "),
        ("dm-0", "dm:LVM-abcdef".into(), "dm-0 (vg-data), 2 MiB",
         vec![(Dm, None), (Partition, None)], "dm-0 (dm vg-data) → vda1 (partition 1) → vda"),
        ("md0", "md:1a2b:3c4d".into(), "md0, 4 MiB",
         vec![(Md, None), (Partition, None)], "md0 (md) → vda1"),
        ("bcache0", format!("bcache:bcache0/{part}"), "bcache0, 8 MiB",
         vec![(Bcache, Some(StackCache::Bcache)), (Partition, None)], "bcache0 (bcache, a bcache cache) → vda1"),
    ];
    let mut keys = vec![device_key(
        &describe_in(t.root(), "vda"),
        "h",
        Path::new("/"),
    )];
    assert_eq!(keys[0], "serial:DISK-1");
    for (name, key, label_text, kinds, stack_text) in cases {
        let d = describe_in(t.root(), name);
        let bottom = d.block.as_ref().map(|b| b.name.as_str());
        assert_eq!(bottom, Some("vda"), "{name}");
        assert_eq!(device_key(&d, "h", Path::new("/")), key, "{name}");
        assert_eq!(label(&d, None), label_text, "{name}");
        let got: Vec<_> = d.stack.iter().map(|l| (l.kind, l.cache)).collect();
        assert_eq!(got, kinds, "{name}");
        let line = block::describe_stack(&d.stack, bottom);
        assert!(line.contains(stack_text), "{name}: {line}");
        keys.push(key);
    }
    let distinct: std::collections::BTreeSet<_> = keys.iter().collect();
    assert_eq!(distinct.len(), keys.len(), "{keys:#?}");
}

/// A loop device attached again over the same file keeps its key,
/// whatever its number; over another file it gets another.
#[test]
fn a_loop_keeps_its_key_over_the_same_file() {
    let t = Tree::new();
    let files = tempfile::tempdir().unwrap();
    let (a, b) = (files.path().join("a.img"), files.path().join("b.img"));
    std::fs::write(&a, b"a").unwrap();
    std::fs::write(&b, b"b").unwrap();
    let attach = |name: &str, dev: &str, file: &Path| {
        let lo = t.disk("virtual", name, dev, 2048);
        t.file(&format!("{lo}/loop/backing_file"), file.to_str().unwrap());
    };
    attach("loop3", "7:3", &a);
    attach("loop4", "7:4", &b);
    let key_of = |name: &str| device_key(&describe_in(t.root(), name), "h", Path::new("/"));
    let (first, other) = (key_of("loop3"), key_of("loop4"));
    assert_ne!(first, other);
    // loop3 detached, the same file attached as loop5.
    attach("loop5", "7:5", &a);
    assert_eq!(key_of("loop5"), first);
}
