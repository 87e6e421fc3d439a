//! One flash test on an open target: choose the allocation unit, plan what
//! the detector writes, journal it, run the detector through the right
//! [`FlashIo`], and hand back its figures.
//!
//! Why a module of its own: every test follows the same order (the regions
//! a test writes are known and checked against the device before anything
//! is journalled or written), and the choice between the simulated card
//! and the target's descriptor is made once, here. The figures go on to
//! `super::findings` to become the result; nothing here judges or words them.

use super::{FdIo, FlashIo, SimIo, align, cache, capacity, class, device, open_au};
use crate::analysis::flash::{align::AlignResult, capacity::CapacityResult, class::ClassFigures};
use crate::engine::sim::SimDevice;
use crate::medium::OpenTarget;
use crate::probe::DeviceIdentity;
use crate::probe::bus::HostBus;
use crate::result::flash::{AuFrom, ClaimSource, Confidence};
use crate::units::format_size;
use anyhow::Result;

/// Fallback AU when neither the user, the kernel nor the timing gives one.
pub const DEFAULT_AU: u64 = 4 << 20;

use crate::vocab::options::FlashTest;

/// Whether the test works in allocation units, so the AU is chosen first.
fn needs_au(test: FlashTest) -> bool {
    matches!(test, FlashTest::OpenAu | FlashTest::Class)
}

/// What the user asked beyond the test itself.
pub struct FlashOptions {
    pub au: Option<u64>,
    pub flush: Option<u64>,
    pub claim: Option<String>,
    pub seed: u64,
}

/// A detector's figures, with what its verdict needs besides.
pub enum Figures {
    Align {
        result: AlignResult,
        kernel_au: Option<u64>,
    },
    OpenAu(open_au::OpenAuResult),
    Cache(cache::CacheResult),
    Capacity {
        result: CapacityResult,
        /// The kernel's erase size, to align a repair partition to.
        kernel_au: Option<u64>,
    },
    Class {
        classes: Vec<String>,
        /// Where the classes came from: `--claim`, the card, or none.
        claim: ClaimSource,
        figures: Box<ClassFigures>,
        link_mb_s: Option<f64>,
        /// The bus the card runs on, named in the result.
        host: Box<HostBus>,
    },
}

/// The AU a test used, where it came from, and (found by timing) how sure.
pub struct AuChoice {
    pub au: u64,
    pub from: AuFrom,
    pub confidence: Option<Confidence>,
}

/// What one test measured.
pub struct Measured {
    pub figures: Figures,
    /// For the tests that work in AUs.
    pub au: Option<AuChoice>,
}

/// A planned detector, run once the regions it writes are journalled.
type Detector = Box<dyn FnOnce(&mut dyn FlashIo) -> Result<Figures>>;

/// A test ready to run: its regions are journalled (armed) already.
pub struct Planned {
    test: FlashTest,
    au: Option<AuChoice>,
    detector: Detector,
}

/// Chooses the AU (reading the card when it must), plans the test, refuses
/// one that does not fit, and journals the regions it will write. An error
/// here comes before anything was written.
pub fn plan(
    test: FlashTest,
    opts: &FlashOptions,
    target: &mut OpenTarget,
    identity: &DeviceIdentity,
) -> Result<Planned> {
    let kernel_au = device::kernel_au(identity);
    let au = match needs_au(test) {
        true => {
            let choose = watched(test, target, |io| choose_au(opts.au, kernel_au, io));
            Some(with_io(target, choose)?)
        }
        false => None,
    };
    let size = target.info.size_bytes;
    let (regions, detector) = detector(test, opts, au.as_ref(), size, target, identity);
    if test.writes() {
        refuse_beyond_end(test.name(), &regions, size, &target.info.path)?;
        target.arm(&regions)?;
    }
    Ok(Planned { test, au, detector })
}

/// The regions a test writes, and the detector that measures it.
fn detector(
    test: FlashTest,
    opts: &FlashOptions,
    au: Option<&AuChoice>,
    size: u64,
    target: &OpenTarget,
    identity: &DeviceIdentity,
) -> (Vec<(u64, u64)>, Detector) {
    let au_bytes = au.map_or(DEFAULT_AU, |a| a.au);
    match test {
        FlashTest::Align => {
            let kernel_au = device::kernel_au(identity);
            // Through a cache beneath (a buffered loop device's page cache)
            // the reads time the cache: a boundary is at most low.
            let cached_beneath = device::cached_beneath(identity);
            let run = move |io: &mut dyn FlashIo| {
                let mut result = align::detect(io, align::AlignPlan::default())?;
                if cached_beneath {
                    result.au_confidence = Confidence::Low;
                    result.page_confidence = Confidence::Low;
                }
                Ok(Figures::Align { result, kernel_au })
            };
            (Vec::new(), Box::new(run))
        }
        FlashTest::OpenAu => {
            let plan = open_au::OpenAuPlan {
                au_assumed: au.is_some_and(|a| a.from == AuFrom::Assumed),
                au_cap: au.map_or(Confidence::Low, AuChoice::cap),
                cached_beneath: device::cached_beneath(identity),
                seed: opts.seed,
                ..open_au::OpenAuPlan::fitting(au_bytes, size)
            };
            let run = move |io: &mut dyn FlashIo| Ok(Figures::OpenAu(open_au::detect(io, plan)?));
            (vec![(plan.base(), plan.span())], Box::new(run))
        }
        FlashTest::Cache => {
            let plan = cache::CachePlan {
                seed: opts.seed,
                ..cache::CachePlan::new(size)
            };
            let run = move |io: &mut dyn FlashIo| Ok(Figures::Cache(cache::detect(io, plan)?));
            (vec![(super::FAT_AREA, plan.max_bytes)], Box::new(run))
        }
        FlashTest::Capacity => {
            // The first round is journalled here; later rounds and a flush
            // beyond the listed part claim their blocks through the flash
            // I/O before writing them.
            let flush = opts.flush.unwrap_or(capacity::AUTO_FLUSH);
            let plan = capacity::CapacityPlan::new(size, flush, opts.seed);
            let regions = plan.regions();
            let kernel_au = device::kernel_au(identity);
            let run = move |io: &mut dyn FlashIo| {
                let result = capacity::detect(io, &plan)?;
                Ok(Figures::Capacity { result, kernel_au })
            };
            (regions, Box::new(run))
        }
        FlashTest::Class => {
            let plan = class::ClassPlan {
                au_assumed: au.is_some_and(|a| a.from == AuFrom::Assumed),
                au_cap: au.map(|a| (a.from, a.cap())),
                ..class::ClassPlan::new(au_bytes, size)
            };
            let classes = device::claimed_classes(opts.claim.as_deref(), identity);
            let claim = device::claim_source(opts.claim.as_deref(), identity);
            let link_mb_s = device::link_mb_s(target, identity);
            let host = Box::new(device::host_bus(target, identity));
            let seed = opts.seed;
            let regions = plan.regions();
            let run = move |io: &mut dyn FlashIo| {
                let figures = Box::new(class::measure(io, &plan, seed)?);
                Ok(Figures::Class {
                    classes,
                    claim,
                    figures,
                    link_mb_s,
                    host,
                })
            };
            (regions, Box::new(run))
        }
    }
}

/// Runs the planned detector. On an error the caller restores what was
/// journalled.
pub fn measure(planned: Planned, target: &mut OpenTarget) -> Result<Measured> {
    let watched = watched(planned.test, target, planned.detector);
    let figures = match (planned.test, target.sim()) {
        // The class test reads back nothing it wrote, and writes up to
        // 16 GiB: on a timing-only twin of the simulated card that holds
        // no memory.
        (FlashTest::Class, Some(dev)) => {
            watched(&mut SimIo(&SimDevice::timing_only(dev.params().clone())))
        }
        _ => with_io(target, watched),
    }?;
    Ok(Measured {
        figures,
        au: planned.au,
    })
}

/// Runs `f` on the target's flash I/O: the simulated card, or the
/// target's descriptor (the writable one once the write gate is open). A
/// claim or write the gate refused is the error, whatever `f` made of it.
fn with_io<T>(target: &mut OpenTarget, f: impl FnOnce(&mut dyn FlashIo) -> Result<T>) -> Result<T> {
    if let Some(dev) = target.sim() {
        return f(&mut SimIo(dev));
    }
    let mut io = FdIo::new(target);
    let outcome = f(&mut io);
    match io.take_failure() {
        Some(refused) => Err(refused),
        None => outcome,
    }
}

/// `f`, run on a [`Watch`] of the I/O it is given: an I/O error at a
/// transfer the card failed becomes [`name_the_failure`]'s sentence.
fn watched<T, F: FnOnce(&mut dyn FlashIo) -> Result<T>>(
    test: FlashTest,
    target: &OpenTarget,
    f: F,
) -> impl FnOnce(&mut dyn FlashIo) -> Result<T> + use<T, F> {
    let size = target.info.size_bytes;
    let path = target.info.path.clone();
    move |io: &mut dyn FlashIo| {
        let mut watch = Watch { io, failed: None };
        let outcome = f(&mut watch);
        let failed = watch.failed;
        outcome.map_err(|e| name_the_failure(e, test, failed, size, &path))
    }
}

/// A flash I/O that remembers the first transfer the device failed, so
/// that the error can say where.
struct Watch<'a> {
    io: &'a mut dyn FlashIo,
    failed: Option<u64>,
}

impl Watch<'_> {
    fn note<T>(&mut self, offset: u64, r: std::io::Result<T>) -> std::io::Result<T> {
        if r.is_err() && self.failed.is_none() {
            self.failed = Some(offset);
        }
        r
    }
}

impl FlashIo for Watch<'_> {
    fn size(&self) -> u64 {
        self.io.size()
    }

    fn buffer(&self, len: usize) -> crate::sys::buffer::AlignedBuf {
        self.io.buffer(len)
    }

    fn read(&mut self, offset: u64, buf: &mut [u8]) -> std::io::Result<u64> {
        let r = self.io.read(offset, buf);
        self.note(offset, r)
    }

    fn write(&mut self, offset: u64, buf: &[u8]) -> std::io::Result<u64> {
        let r = self.io.write(offset, buf);
        self.note(offset, r)
    }

    fn claim(&mut self, regions: &[(u64, u64)]) -> std::io::Result<()> {
        self.io.claim(regions)
    }

    fn write_zeros(&mut self, offset: u64, len: u64) -> std::io::Result<u64> {
        let r = self.io.write_zeros(offset, len);
        self.note(offset, r)
    }
}

/// An I/O error of a test other than `capacity`, at a transfer the card
/// failed: the one sentence that says where, and that a card failing
/// beyond some offset of its claim is what a fake does, so `flash
/// capacity` comes first. Any other error is left as it is.
fn name_the_failure(
    err: anyhow::Error,
    test: FlashTest,
    failed: Option<u64>,
    size: u64,
    path: &str,
) -> anyhow::Error {
    let io = crate::error::exit_code(&err) == crate::error::EXIT_IO;
    match (failed, test, io) {
        (Some(offset), t, true) if t != FlashTest::Capacity => {
            crate::error::IoFailure::new(beyond_sentence(offset, size, path), None).into()
        }
        _ => err,
    }
}

/// "I/O error at offset 1.00 GiB (byte 1073741824) of a card that claims
/// 8 GiB — it may be a fake: run '…' first".
pub fn beyond_sentence(offset: u64, size: u64, path: &str) -> String {
    format!(
        "I/O error at offset {} (byte {offset}) of a card that claims {} — it may be a fake: run 'iocurve flash capacity {path} --destructive' first",
        crate::units::format_size(offset),
        crate::units::format_size(size)
    )
}

/// Writes `table` (a partition table: [`super::partition`]) to the start
/// of the target through its write gate and reads it back; an error when
/// the gate refuses (the command opens it only with `--destructive`) or
/// the card does not give back what was written.
pub fn write_partition_table(target: &mut OpenTarget, table: &super::partition::Mbr) -> Result<()> {
    with_io(target, |io| Ok(super::partition::write(io, table)?))
}

/// A test whose regions do not fit is refused before anything is journalled
/// or written.
fn refuse_beyond_end(name: &str, regions: &[(u64, u64)], size: u64, path: &str) -> Result<()> {
    let need = regions
        .iter()
        .map(|&(offset, len)| offset.saturating_add(len))
        .max()
        .unwrap_or(0);
    if need > size {
        // Only the tests that take --au are advised it.
        let fix = match name {
            "class" | "open-au" => "give a smaller --au (or a larger device)",
            _ => "give a larger device",
        };
        return Err(crate::error::usage(format!(
            "flash {name} needs the first {} of {path}, which holds {}: {fix}",
            format_size(need),
            format_size(size)
        )));
    }
    Ok(())
}

/// The AU: from `--au`, else the kernel's (when usable), else boundary
/// timing when it is at least of medium confidence, else [`DEFAULT_AU`].
///
/// The kernel's size is what the card's register states (AU_SIZE of the
/// SD Status), which a card whose controller writes in TLC erase blocks
/// need not keep to; it is checked against the read-only boundary timing,
/// and the tests' confidence is capped by how well the two agree
/// ([`AuChoice::cap`]).
fn choose_au(asked: Option<u64>, kernel: Option<u64>, io: &mut dyn FlashIo) -> Result<AuChoice> {
    let chosen = |au: u64, from: AuFrom, confidence: Option<Confidence>| {
        Ok(AuChoice {
            au,
            from,
            confidence,
        })
    };
    if let Some(au) = asked {
        return chosen(au, AuFrom::Option, None);
    }
    let timing = align::detect(io, align::AlignPlan::default())?;
    let found = timing
        .au
        .filter(|_| timing.au_confidence >= Confidence::Medium);
    if let Some(au) = kernel.filter(|a| super::usable_au(*a)) {
        return chosen(au, AuFrom::Kernel, Some(kernel_au_confidence(au, &timing)));
    }
    match found {
        Some(au) => chosen(au, AuFrom::Timing, Some(timing.au_confidence)),
        None => chosen(DEFAULT_AU, AuFrom::Assumed, None),
    }
}

/// How sure the kernel's AU is, by the timing of the same card: high when
/// boundary timing finds the same size at high, medium when timing finds
/// nothing sure (the register is all there is), low when timing finds
/// another size at medium or better (the register and the flash disagree).
fn kernel_au_confidence(kernel: u64, timing: &AlignResult) -> Confidence {
    match timing.au {
        Some(au) if au == kernel => timing.au_confidence.max(Confidence::Medium),
        Some(_) if timing.au_confidence >= Confidence::Medium => Confidence::Low,
        _ => Confidence::Medium,
    }
}

impl AuChoice {
    /// The most a test that works in this AU may say: what the user gave
    /// stands; an AU found by timing or stated by the kernel is as sure as
    /// its finding; an assumed one makes every figure tied to it low.
    pub fn cap(&self) -> Confidence {
        match self.from {
            AuFrom::Option => Confidence::High,
            AuFrom::Kernel | AuFrom::Timing => self.confidence.unwrap_or(Confidence::Low),
            AuFrom::Assumed => Confidence::Low,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regions_beyond_the_device_are_refused_naming_the_need() {
        let fits = refuse_beyond_end("cache", &[(0, 1 << 20), (4 << 20, 4 << 20)], 8 << 20, "x");
        assert!(fits.is_ok());
        let err = refuse_beyond_end("cache", &[(4 << 20, 8 << 20)], 8 << 20, "card.img")
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("flash cache needs the first 12 MiB of card.img, which holds 8 MiB"),
            "{err}"
        );
    }

    #[test]
    fn only_align_reads_without_writing_and_only_open_au_and_class_need_an_au() {
        let all = [
            FlashTest::Align,
            FlashTest::OpenAu,
            FlashTest::Cache,
            FlashTest::Capacity,
            FlashTest::Class,
        ];
        let writing: Vec<_> = all
            .iter()
            .filter(|t| t.writes())
            .map(|t| t.name())
            .collect();
        assert_eq!(writing, ["open-au", "cache", "capacity", "class"]);
        let au: Vec<_> = all
            .iter()
            .filter(|t| needs_au(**t))
            .map(|t| t.name())
            .collect();
        assert_eq!(au, ["open-au", "class"]);
    }

    #[test]
    fn the_kernels_au_is_as_sure_as_the_timing_that_checks_it() {
        use crate::engine::sim::SimParams;
        let card = SimDevice::new(SimParams::parse("size=1G,au=4M,page=16k,cmd=200us").unwrap());
        let choose = |kernel: u64| choose_au(None, Some(kernel), &mut SimIo(&card)).unwrap();
        // Timing finds the same 4 MiB: the register is confirmed.
        let same = choose(4 << 20);
        assert_eq!(
            (same.au, same.from, same.cap()),
            (4 << 20, AuFrom::Kernel, Confidence::High)
        );
        // The register says 8 MiB, the flash steps every 4 MiB: low.
        let other = choose(8 << 20);
        assert_eq!((other.au, other.cap()), (8 << 20, Confidence::Low));
        // A card whose reads show no step (a stick): the register is all
        // there is, at medium.
        let flat = SimDevice::new(SimParams::parse("size=1G,au=4M,page=16k,cmd=0us").unwrap());
        let c = choose_au(None, Some(4 << 20), &mut SimIo(&flat)).unwrap();
        assert_eq!(c.cap(), Confidence::Medium);
        // Given with --au, it stands; assumed, every figure is low.
        assert_eq!(
            choose_au(Some(8 << 20), None, &mut SimIo(&card))
                .unwrap()
                .cap(),
            Confidence::High
        );
        let none = choose_au(None, None, &mut SimIo(&flat)).unwrap();
        assert_eq!((none.from, none.cap()), (AuFrom::Assumed, Confidence::Low));
    }
}
