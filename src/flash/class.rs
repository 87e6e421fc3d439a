//! SD speed-class verdicts, measured the way the SD Association's
//! simplified physical layer specification describes: the write
//! performance is the average speed of writing whole free AUs as
//! consecutive recording units (512 KiB, the RU of Class 10 and UHS), and
//! the application classes add random 4 KiB reads and writes (IOPS) and a
//! sustained sequential speed (here the second half of the AU writes).
//! Random writes stay in a 16 MiB region beyond the FAT area, random reads
//! cover the card.
//!
//! Each requirement is PASS or FAIL with the measured value beside it;
//! when the link (reader, bus) cannot carry the requirement and the card
//! went at about the link's speed, the verdict is LINK: the host, not the
//! card, set the limit (a USB 2 reader cannot show U3).

use super::{FAT_AREA, FlashIo, mb_s};
use crate::error::usage_io;
use crate::units::format_size;
use serde::Serialize;
use std::io;

/// Bytes of each random read and write.
const SMALL: u64 = 4096;

/// What a class asks for.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub enum Need {
    /// Sequential write, MB/s.
    SeqWrite(f64),
    RandomReadIops(f64),
    RandomWriteIops(f64),
    /// Sustained sequential write, MB/s.
    Sustained(f64),
}

/// The requirements of a class label (`C10`, `U3`, `V30`, `A1`, ...).
pub fn requirements(class: &str) -> Option<Vec<Need>> {
    let c = class
        .trim()
        .to_ascii_uppercase()
        .replace("CLASS", "C")
        .replace(' ', "");
    let seq = |mb| Some(vec![Need::SeqWrite(mb)]);
    match c.as_str() {
        "C2" => seq(2.0),
        "C4" => seq(4.0),
        "C6" | "V6" => seq(6.0),
        "C10" | "V10" | "U1" => seq(10.0),
        "U3" | "V30" => seq(30.0),
        "V60" => seq(60.0),
        "V90" => seq(90.0),
        "A1" => Some(app(1500.0, 500.0)),
        "A2" => Some(app(4000.0, 2000.0)),
        _ => None,
    }
}

fn app(read: f64, write: f64) -> Vec<Need> {
    vec![
        Need::RandomReadIops(read),
        Need::RandomWriteIops(write),
        Need::Sustained(10.0),
    ]
}

/// Every class the command knows, in order.
pub const CLASSES: [&str; 12] = [
    "C2", "C4", "C6", "C10", "U1", "U3", "V6", "V10", "V30", "V60", "V90", "A1",
];

#[derive(Debug, Clone, Copy, Serialize)]
pub struct ClassPlan {
    pub au: u64,
    pub ru: u64,
    /// Bytes of sequential writing (whole AUs).
    pub seq_bytes: u64,
    pub random_ops: u32,
    pub random_region: u64,
}

impl ClassPlan {
    /// The plan for an AU of `au` bytes on a device of `size`; any AU gives
    /// a plan, and [`ClassPlan::unusable`] says whether it can run.
    pub fn new(au: u64, size: u64) -> ClassPlan {
        let unit = au.max(1);
        let aus = (64 << 20) / unit;
        ClassPlan {
            au,
            ru: (512 << 10).min(au),
            seq_bytes: au.saturating_mul(aus.max(4).min((size / 4 / unit).max(1))),
            random_ops: 500,
            random_region: 16 << 20,
        }
    }

    pub fn seq_offset(&self) -> u64 {
        FAT_AREA.div_ceil(self.au.max(1)).saturating_mul(self.au)
    }

    pub fn random_offset(&self) -> u64 {
        self.seq_offset().saturating_add(self.seq_bytes)
    }

    /// Why this plan cannot run on a device of `size` bytes: an AU too
    /// small to hold the test's recording units and 4 KiB transfers, or a
    /// device too small for the regions written.
    pub fn unusable(&self, size: u64) -> Option<String> {
        if !super::usable_au(self.au) {
            return Some(format!(
                "an AU of {} is too small for the class test: it writes 4 KiB and recording units in whole AUs of at least {}, in 512-byte sectors (give --au, e.g. 4M)",
                format_size(self.au),
                format_size(super::MIN_AU)
            ));
        }
        let end = self.random_offset().saturating_add(self.random_region);
        (end > size).then(|| {
            format!(
                "the class test with AUs of {} writes up to {}, beyond the end of this {} device: give a smaller --au or a larger device",
                format_size(self.au),
                format_size(end),
                format_size(size)
            )
        })
    }
}

/// What was measured.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct ClassFigures {
    pub seq_write_mb_s: f64,
    pub sustained_mb_s: f64,
    pub random_read_iops: f64,
    pub random_write_iops: f64,
}

pub fn measure(io: &mut dyn FlashIo, plan: &ClassPlan, seed: u64) -> io::Result<ClassFigures> {
    if let Some(why) = plan.unusable(io.size()) {
        return Err(usage_io(why));
    }
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut buf = io.buffer(plan.ru as usize);
    rng.fill(buf.as_mut_slice());
    let (mut first, mut second) = (0, 0);
    let units = plan.seq_bytes / plan.ru;
    for i in 0..units {
        let ns = io.write(plan.seq_offset() + i * plan.ru, buf.as_slice())?;
        match i < units / 2 {
            true => first += ns,
            false => second += ns,
        }
    }
    let small = SMALL as usize;
    let mut read_ns = 0;
    for _ in 0..plan.random_ops {
        let at = rng.u64(0..io.size() / SMALL) * SMALL;
        read_ns += io.read(at, &mut buf.as_mut_slice()[..small])?;
    }
    let mut write_ns = 0;
    for _ in 0..plan.random_ops {
        let at = plan.random_offset() + rng.u64(0..plan.random_region / SMALL) * SMALL;
        write_ns += io.write(at, &buf.as_slice()[..small])?;
    }
    let iops = |ns: u64| f64::from(plan.random_ops) * 1e9 / ns.max(1) as f64;
    Ok(ClassFigures {
        seq_write_mb_s: mb_s(plan.seq_bytes, first + second),
        sustained_mb_s: mb_s(plan.seq_bytes - units / 2 * plan.ru, second),
        random_read_iops: iops(read_ns),
        random_write_iops: iops(write_ns),
    })
}

/// One requirement's verdict.
#[derive(Debug, Clone, Serialize)]
pub struct Check {
    pub class: String,
    pub need: Need,
    pub measured: f64,
    /// `PASS`, `FAIL` or `LINK`.
    pub status: &'static str,
}

/// Checks the figures against each class's requirements; `link_mb_s` is
/// the link's practical ceiling when known.
pub fn judge(classes: &[String], f: &ClassFigures, link_mb_s: Option<f64>) -> Vec<Check> {
    let mut checks = Vec::new();
    for class in classes {
        for need in requirements(class).unwrap_or_default() {
            let (measured, wanted, is_rate) = match need {
                Need::SeqWrite(mb) => (f.seq_write_mb_s, mb, true),
                Need::Sustained(mb) => (f.sustained_mb_s, mb, true),
                Need::RandomReadIops(n) => (f.random_read_iops, n, false),
                Need::RandomWriteIops(n) => (f.random_write_iops, n, false),
            };
            let capped = is_rate && link_mb_s.is_some_and(|l| l < wanted && measured >= 0.8 * l);
            let status = match (measured >= wanted, capped) {
                (true, _) => "PASS",
                (false, true) => "LINK",
                (false, false) => "FAIL",
            };
            checks.push(Check {
                class: class.clone(),
                need,
                measured,
                status,
            });
        }
    }
    checks
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::sim::{SimDevice, SimParams};
    use crate::flash::SimIo;

    fn figures(spec: &str) -> (ClassFigures, Option<f64>) {
        let p = SimParams::parse(spec).unwrap();
        let link = p.link.map(|l| l as f64 / 1e6);
        let dev = SimDevice::new(p);
        let plan = ClassPlan::new(dev.params().au, dev.params().size);
        (measure(&mut SimIo(&dev), &plan, 1).unwrap(), link)
    }

    fn status(class: &str, spec: &str) -> Vec<&'static str> {
        let (f, link) = figures(spec);
        judge(&[class.to_string()], &f, link)
            .iter()
            .map(|c| c.status)
            .collect()
    }

    /// A card writing at `mb` MB/s sequentially in 512 KiB units (page
    /// programs plus a command each).
    fn seq_card(mb: f64) -> String {
        format!(
            "size=4G,au=4M,write={}kB/s,cmd=1us,open_au=4",
            (mb * 1000.0) as u64
        )
    }

    #[test]
    fn speed_classes_pass_just_above_and_fail_just_below_their_threshold() {
        for (class, mb) in [
            ("C2", 2.0),
            ("C4", 4.0),
            ("C6", 6.0),
            ("C10", 10.0),
            ("U1", 10.0),
            ("U3", 30.0),
            ("V6", 6.0),
            ("V10", 10.0),
            ("V30", 30.0),
            ("V60", 60.0),
            ("V90", 90.0),
        ] {
            assert_eq!(
                status(class, &seq_card(mb * 1.03)),
                ["PASS"],
                "{class} above"
            );
            assert_eq!(
                status(class, &seq_card(mb * 0.97)),
                ["FAIL"],
                "{class} below"
            );
        }
    }

    /// 4 KiB random I/O at about `iops`: the command time dominates.
    fn app_card(read_iops: f64, write_iops: f64) -> String {
        let cmd_ns = 1e9 / read_iops - 4096.0 * 1e9 / 200e6;
        let page = 1e9 / write_iops - cmd_ns;
        let write = (4096.0 * 1e9 / page) as u64;
        format!(
            "size=4G,au=4M,page=4k,open_au=8,read=200MB/s,write={write}B/s,cmd={}ns",
            cmd_ns as u64
        )
    }

    #[test]
    fn application_classes_check_each_of_their_three_requirements() {
        for (class, r, w) in [("A1", 1500.0, 500.0), ("A2", 4000.0, 2000.0)] {
            let above = status(class, &app_card(r * 1.05, w * 1.05));
            assert_eq!(above[..2], ["PASS", "PASS"], "{class} above");
            assert_eq!(
                status(class, &app_card(r * 0.95, w * 1.05))[0],
                "FAIL",
                "{class} read below"
            );
            assert_eq!(
                status(class, &app_card(r * 1.05, w * 0.95))[1],
                "FAIL",
                "{class} write below"
            );
        }
    }

    #[test]
    fn a_slow_link_is_named_instead_of_failing_the_card() {
        let spec = "size=4G,au=4M,write=80MB/s,cmd=1us,open_au=4,link=38MB/s";
        assert_eq!(status("U3", spec), ["PASS"]);
        assert_eq!(status("V60", spec), ["LINK"]);
        assert_eq!(status("V60", &seq_card(50.0)), ["FAIL"]);
    }
}
