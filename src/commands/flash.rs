//! `iocurve flash ...`: open the target, decide what may be written (the
//! usual rules: `--preserve` journals and restores, `--destructive` allows
//! loss, a `sim:` card holds nothing), run one detector, turn its figures
//! into a [`FlashReport`] inside the one [`RunResult`], print, save.

use super::common;
use crate::cli::config::TargetConfig;
use crate::cli::{FlashArgs, FlashCommand};
use crate::engine::sim::SimDevice;
use crate::flash::{
    Confidence, FdIo, Finding, FlashIo, FlashReport, SimIo, align, cache, capacity, class, open_au,
};
use crate::probe::DeviceIdentity;
use crate::report::{Export, Json};
use crate::result::config::FlashSettings;
use crate::result::{Payload, RunResult};
use crate::target::OpenTarget;
use crate::units::{format_mbps, format_size};
use anyhow::Result;
use std::io::Write;

/// Exit code of a fake card or a failed class.
pub const EXIT_FLASH_FAIL: i32 = 5;

/// Fallback AU when neither the user, the kernel nor the timing gives one.
const DEFAULT_AU: u64 = 4 << 20;
const ASSUMED_AU_NOTE: &str = "no AU found by boundary timing: assumed 4 MiB (give --au)";

pub fn flash(cmd: &FlashCommand) -> Result<i32> {
    let (name, args) = match cmd {
        FlashCommand::Align(a) => ("align", a),
        FlashCommand::OpenAu(a) => ("open-au", a),
        FlashCommand::Cache(a) => ("cache", a),
        FlashCommand::Capacity(a) => ("capacity", a),
        FlashCommand::Class(a) => ("class", a),
    };
    if args.target.is_dir() {
        return Err(crate::error::usage(format!(
            "{} is a directory: flash {name} measures the card itself (a block device such as /dev/sdb), an image file or sim:...",
            args.target.display()
        )));
    }
    let cfg = target_config(args);
    let writes = name != "align";
    let mut target = common::open_target(&cfg, writes, 0)?;
    let started_at = common::now_rfc3339();
    let identity = crate::probe::identify(std::path::Path::new(&target.info.path));
    let flash = run(name, args, &mut target, &cfg, &identity)?;
    let config = FlashSettings {
        test: name.to_string(),
        target: args.target.clone(),
    }
    .into();
    let mut result = common::new_result(Payload::Flash { config, flash }, &target, started_at);
    common::restore(&mut target, &mut result);
    print(&result, args)
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

fn target_config(args: &FlashArgs) -> TargetConfig {
    TargetConfig {
        path: args.target.clone(),
        io_mode: crate::target::IoMode::Direct,
        destructive: args.destructive,
        preserve: args.preserve,
        journal_dir: args.journal_dir.clone(),
        offset: None,
        span: None,
        threads: 1,
        seed: args.seed.unwrap_or_else(|| fastrand::u64(..)),
        seed_given: args.seed.is_some(),
        json: args.json,
        report: None,
        engine: None,
    }
}

/// A planned detector, run once the regions it writes are journalled.
type Detector = Box<dyn FnOnce(&mut dyn FlashIo) -> Result<FlashReport>>;

fn run(
    name: &str,
    args: &FlashArgs,
    target: &mut OpenTarget,
    cfg: &TargetConfig,
    identity: &DeviceIdentity,
) -> Result<FlashReport> {
    let kernel_au = identity
        .device
        .mmc
        .as_ref()
        .and_then(|m| m.preferred_erase_size);
    if name == "align" {
        let r = with_io(target, |io| {
            Ok(align::detect(io, align::AlignPlan::default())?)
        })?;
        return Ok(align_report(&r, kernel_au));
    }
    let needs_au = matches!(name, "open-au" | "class");
    let (au, au_note) = match needs_au {
        true => with_io(target, |io| choose_au(args.au, kernel_au, io))?,
        false => (DEFAULT_AU, String::new()),
    };
    let size = target.info.size_bytes;
    let seed = cfg.seed;
    let (regions, report): (Vec<(u64, u64)>, Detector) = match name {
        "open-au" => {
            let plan = open_au::OpenAuPlan {
                au_assumed: au_note == ASSUMED_AU_NOTE,
                ..open_au::OpenAuPlan::fitting(au, size)
            };
            let report =
                move |io: &mut dyn FlashIo| Ok(open_au_report(&open_au::detect(io, plan)?));
            (vec![(plan.base(), plan.span())], Box::new(report))
        }
        "cache" => {
            let plan = cache::CachePlan::new(size);
            let report = move |io: &mut dyn FlashIo| Ok(cache_report(&cache::detect(io, plan)?));
            (
                vec![(crate::flash::FAT_AREA, plan.max_bytes)],
                Box::new(report),
            )
        }
        "capacity" => {
            // The first round is journalled here; later rounds and a flush
            // beyond the listed part claim their blocks through the flash
            // I/O before writing them.
            let flush = args.flush.unwrap_or(capacity::AUTO_FLUSH);
            let plan = capacity::CapacityPlan::new(size, flush, seed);
            let regions = plan.regions();
            let report =
                move |io: &mut dyn FlashIo| Ok(capacity_report(&capacity::detect(io, &plan)?));
            (regions, Box::new(report))
        }
        _ => {
            let plan = class::ClassPlan::new(au, size);
            let classes = claimed_classes(args, identity);
            let link = link_mb_s(target, identity);
            let report = move |io: &mut dyn FlashIo| {
                let figures = class::measure(io, &plan, seed)?;
                Ok(class_report(&classes, &figures, link))
            };
            let regions = plan.regions();
            (regions, Box::new(report))
        }
    };
    refuse_beyond_end(name, &regions, size, &target.info.path)?;
    target.arm(&regions)?;
    let done = match (name, target.sim()) {
        // The class test reads back nothing it wrote, and writes up to
        // 16 GiB: on a timing-only twin of the simulated card that holds
        // no memory.
        ("class", Some(dev)) => report(&mut SimIo(&SimDevice::timing_only(dev.params().clone()))),
        _ => with_io(target, report),
    };
    match done {
        Ok(mut r) => {
            if needs_au {
                r.findings
                    .push(Finding::new("AU used", format_size(au), None).with_note(au_note));
            }
            Ok(r)
        }
        Err(e) => Err(common::restore_after_error(target, e)),
    }
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
        return Err(crate::error::usage(format!(
            "flash {name} needs the first {} of {path}, which holds {}: give a smaller --au (or a larger device)",
            format_size(need),
            format_size(size)
        )));
    }
    Ok(())
}

fn choose_au(
    asked: Option<u64>,
    kernel: Option<u64>,
    io: &mut dyn FlashIo,
) -> Result<(u64, String)> {
    if let Some(au) = asked {
        return Ok((au, "from --au".into()));
    }
    if let Some(au) = kernel.filter(|a| crate::flash::usable_au(*a)) {
        return Ok((au, "the kernel's preferred_erase_size".into()));
    }
    let r = align::detect(io, align::AlignPlan::default())?;
    match r.au {
        Some(au) if r.au_confidence >= Confidence::Medium => Ok((
            au,
            format!(
                "detected by boundary timing ({} confidence)",
                r.au_confidence.name()
            ),
        )),
        _ => Ok((DEFAULT_AU, ASSUMED_AU_NOTE.into())),
    }
}

fn claimed_classes(args: &FlashArgs, identity: &DeviceIdentity) -> Vec<String> {
    if let Some(c) = &args.claim {
        return vec![c.clone()];
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
        true => class::CLASSES
            .iter()
            .map(|s| s.to_string())
            .chain(["A2".into()])
            .collect(),
        false => from_ssr,
    }
}

fn link_mb_s(target: &OpenTarget, identity: &DeviceIdentity) -> Option<f64> {
    if let Some(dev) = target.sim() {
        return dev.params().link.map(|l| l as f64 / 1e6);
    }
    identity
        .device
        .interface
        .as_ref()
        .and_then(|i| i.practical_limit_mb_s)
}

fn ns_us(ns: u64) -> String {
    format!("{:.1}", ns as f64 / 1000.0)
}

fn align_report(r: &align::AlignResult, kernel: Option<u64>) -> FlashReport {
    let size_or = |v: Option<u64>| v.map_or("not seen".to_string(), format_size);
    let mut au = Finding::new("AU (erase block)", size_or(r.au), Some(r.au_confidence));
    if let Some(k) = kernel {
        let agrees = if r.au == Some(k) { "agrees" } else { "differs" };
        au = au.with_note(format!(
            "kernel preferred_erase_size {} {agrees}",
            format_size(k)
        ));
    }
    let page = Finding::new("page", size_or(r.page), Some(r.page_confidence));
    let verdict = match (r.au, r.page) {
        (Some(a), Some(p)) => format!("AU {}, page {}", format_size(a), format_size(p)),
        (Some(a), None) => format!("AU {}, no page step seen", format_size(a)),
        _ => "no boundary pattern: the geometry cannot be read from timing here".into(),
    };
    let mut table = vec![vec![
        "align".into(),
        "pre µs".into(),
        "on µs".into(),
        "post µs".into(),
        "diff µs".into(),
    ]];
    for row in &r.rows {
        table.push(vec![
            format_size(row.align),
            ns_us(row.before_ns),
            ns_us(row.on_ns),
            ns_us(row.after_ns),
            format!("{:.1}", row.diff_ns as f64 / 1000.0),
        ]);
    }
    report("align", verdict, vec![au, page], table, false, r)
}

fn open_au_report(r: &open_au::OpenAuResult) -> FlashReport {
    let verdict = match (r.open_aus, r.why_none) {
        (Some(n), _) => format!(
            "{n} open AU(s): writing to more in turn collapses throughput {:.1}× (noise {:.2}×)",
            r.collapse, r.spread
        ),
        (None, Some(open_au::NoCount::NotFromTheCount)) => {
            "throughput fell but stayed low with fewer AUs again: not the open-AU limit (a write cache filling?)".into()
        }
        (None, Some(open_au::NoCount::InTheNoise)) => format!(
            "a collapse of {:.2}× is within the noise ({:.2}×): no count",
            r.collapse, r.spread
        ),
        (None, _) => format!(
            "no collapse up to {} AUs: no open-AU limit seen (none, more than {}, or hidden by a write cache)",
            r.plan.max_n,
            r.plan.max_n.saturating_sub(2)
        ),
    };
    let value = r.open_aus.map_or("not seen".into(), |n| n.to_string());
    let findings = vec![Finding::new("open AUs", value, Some(r.confidence))];
    let mut table = vec![vec!["AUs".into(), "MB/s".into()]];
    table.extend(
        r.points
            .iter()
            .map(|p| vec![p.aus.to_string(), format_mbps(p.mb_per_s)]),
    );
    if let Some(c) = r.check {
        table.push(vec![format!("{} again", c.aus), format_mbps(c.mb_per_s)]);
    }
    report("open-au", verdict, findings, table, false, r)
}

fn cache_report(r: &cache::CacheResult) -> FlashReport {
    let mut findings = vec![Finding::new(
        "burst",
        format!("{} MB/s", format_mbps(r.burst_mb_s)),
        None,
    )];
    let verdict = match (r.cache_bytes, r.absorbed, r.sustained_mb_s) {
        (Some(c), Some(a), Some(s)) => {
            findings.push(Finding::new("cache", format_size(c), Some(r.confidence)));
            findings.push(Finding::new("absorbed", format_size(a), None));
            findings.push(Finding::new(
                "sustained",
                format!("{} MB/s", format_mbps(s)),
                None,
            ));
            // The net size assumes the cache drained at the sustained speed
            // while it filled; a cache that does not drain then holds all
            // that was absorbed. Both are named.
            format!(
                "write cache of {}–{} ({} if it drains while it fills): {} MB/s, then {} MB/s",
                format_size(c),
                format_size(a.max(c)),
                format_size(c),
                format_mbps(r.burst_mb_s),
                format_mbps(s)
            )
        }
        _ => {
            findings.push(Finding::new(
                "cache",
                "not seen".into(),
                Some(Confidence::Low),
            ));
            format!(
                "no fall in speed within {}: no cache seen (or a larger one)",
                format_size(r.plan.max_bytes)
            )
        }
    };
    let mut table = vec![vec!["written".into(), "MB/s".into()]];
    for (i, s) in r.speeds.iter().enumerate() {
        table.push(vec![
            format_size((i as u64 + 1) * r.plan.chunk),
            format_mbps(*s),
        ]);
    }
    report("cache", verdict, findings, table, false, r)
}

fn capacity_report(r: &capacity::CapacityResult) -> FlashReport {
    let verdict = match r.usable {
        None => format!("genuine: all {} probe blocks held their data", r.probes),
        Some(u) if r.precision == 0 => format!(
            "FAKE: claims {}, really holds {} (exactly: blocks read back at their alias)",
            format_size(r.claimed),
            format_size(u)
        ),
        Some(u) => format!(
            "FAKE: claims {}, really holds {} ({u} bytes, searched to within {})",
            format_size(r.claimed),
            format_size(u),
            format_size(r.precision)
        ),
    };
    let mut findings = vec![Finding::new(
        "usable capacity",
        format_size(r.usable.unwrap_or(r.claimed)),
        Some(r.confidence),
    )];
    if r.wraps {
        findings.push(Finding::new(
            "wrap-around",
            "blocks read back naming other addresses".into(),
            None,
        ));
    }
    if let (true, Some(at)) = (r.flush_short, r.cache_filled_at) {
        findings.push(Finding::new(
            "cache",
            format!(
                "the write cache filled after {} of flush, which stopped at {}: below the {} the measured cache needs, it may still hold probes (give --flush {})",
                format_size(at),
                format_size(r.flush_written),
                format_size(capacity::flush_needed(at)),
                format_size(capacity::flush_needed(at))
            ),
            None,
        ));
    } else if r.genuine && !r.cache_beaten {
        findings.push(Finding::new(
            "cache",
            format!(
                "no write cache filled within the {} flush: a larger one could hide a fake (give a larger --flush)",
                format_size(r.flush_written)
            ),
            None,
        ));
    }
    if let Some(kind) = r.lost_kind.filter(|_| !r.wraps) {
        let how = match kind {
            capacity::Held::Error => "I/O errors beyond the real size",
            _ => {
                "data written beyond the real size reads back as something else (zeros or old data)"
            }
        };
        findings.push(Finding::new("beyond", how.into(), None));
    }
    if r.cache_hid {
        findings.push(Finding::new(
            "cache",
            "hid the fraud from an immediate read-back".into(),
            None,
        ));
    }
    let mut table = vec![vec!["offset".into(), "verdict".into()]];
    table.extend(
        r.bad
            .iter()
            .map(|b| vec![b.offset.to_string(), format!("{:?}", b.verdict)]),
    );
    report("capacity", verdict, findings, table, !r.genuine, r)
}

fn class_report(classes: &[String], f: &class::ClassFigures, link: Option<f64>) -> FlashReport {
    let checks = class::judge(classes, f, link);
    let mut findings = class_figures(f);
    findings.extend(checks.iter().map(class_finding));
    let failed = checks.iter().any(|c| c.status == class::Status::Fail);
    let verdict = class_verdict(classes, &checks);
    let details = serde_json::json!({ "figures": f, "checks": checks });
    report("class", verdict, findings, pw_table(f), failed, &details)
}

/// The figures behind every verdict: Pw after the cache, Pr, T_FW, P(Nu).
fn class_figures(f: &class::ClassFigures) -> Vec<Finding> {
    let pw = &f.pw;
    let cache = match (pw.exhaustion, pw.fell_after) {
        (class::Exhaustion::Exhausted, Some(at)) => format!(
            "burst {} MB/s, fell after {}, steady after {}",
            format_mbps(pw.burst_mb_s),
            format_size(at),
            format_size(pw.written)
        ),
        (class::Exhaustion::NoFall, _) => format!(
            "no fall within {}: no cache seen (or a larger one)",
            format_size(pw.written)
        ),
        _ => format!(
            "speed after {}, cache not exhausted (burst {} MB/s)",
            format_size(pw.written),
            format_mbps(pw.burst_mb_s)
        ),
    };
    let mut out = vec![
        Finding::new("write cache", cache, None),
        Finding::new(
            "Pw (whole free AUs)",
            format!(
                "{} MB/s mean, {} min over {} AUs of {} RUs",
                format_mbps(pw.mean_mb_s),
                format_mbps(pw.min_mb_s),
                pw.aus,
                format_size(f.ru)
            ),
            None,
        ),
        Finding::new(
            "Pr (256 random RUs)",
            format!(
                "{} MB/s{}",
                format_mbps(f.pr_mb_s),
                match f.pr_mb_s >= pw.mean_mb_s {
                    true => ", at least Pw as the specification asks",
                    false => ", BELOW Pw: the specification asks Pr >= Pw",
                }
            ),
            None,
        ),
        Finding::new(
            "T_FW (FAT writes)",
            format!(
                "worst mean of 8 {:.1} ms, max {:.1} ms, median {:.1} ms over {} writes",
                f.fat.worst_mean8_ms, f.fat.max_ms, f.fat.median_ms, f.fat.writes
            ),
            None,
        ),
    ];
    out.push(Finding::new("P(Nu)", pnu_text(f), None));
    out
}

fn pnu_text(f: &class::ClassFigures) -> String {
    if f.pnu.is_empty() {
        return "not measured (an AU of one RU, or no room for it on this device)".into();
    }
    let curve: Vec<String> = f
        .pnu
        .iter()
        .map(|p| {
            format!(
                "{:.0}% used {} MB/s",
                100.0 * p.used_share,
                format_mbps(p.mb_s)
            )
        })
        .collect();
    let moves = match f.pm_mb_s {
        Some(pm) => format!("move speed about {} MB/s", format_mbps(pm)),
        None => "no move cost (SDXC-like)".into(),
    };
    format!("{}; {moves}", curve.join(", "))
}

fn class_finding(c: &class::Check) -> Finding {
    let mut x = Finding::new(
        &format!("{} {}", c.class, c.need.what()),
        format!(
            "{:.1} ({} {})",
            c.measured,
            if c.need.limit().1 {
                "needs >="
            } else {
                "limit <="
            },
            c.limit
        ),
        Some(c.confidence),
    );
    x.status = Some(c.status.name().to_string());
    x.note = match c.status {
        class::Status::Link => Some("the link, not the card, sets this limit".into()),
        _ => c.note.clone(),
    };
    x
}

/// Which classes are met, the figure that binds (the first failed
/// requirement, or the one with the least room when all pass), and how sure
/// the verdict is: the least sure requirement of the classes met, so that a
/// class met only at burst speed (no cache ruled out) is not read as certain.
fn class_verdict(classes: &[String], checks: &[class::Check]) -> String {
    let of = |cl: &str| -> Vec<&class::Check> { checks.iter().filter(|c| c.class == cl).collect() };
    let passed: Vec<&String> = classes
        .iter()
        .filter(|cl| of(cl).iter().all(|c| c.status == class::Status::Pass))
        .collect();
    let binding = checks
        .iter()
        .find(|c| c.status != class::Status::Pass)
        .or_else(|| checks.iter().min_by(|a, b| room(a).total_cmp(&room(b))));
    let met = match passed.is_empty() {
        true => "none".to_string(),
        false => passed
            .iter()
            .map(|c| c.as_str())
            .collect::<Vec<_>>()
            .join(" "),
    };
    let mut verdict = format!("meets: {met}");
    let weakest = passed
        .iter()
        .flat_map(|cl| of(cl))
        .min_by_key(|c| c.confidence);
    if let Some(w) = weakest {
        verdict += &format!(" ({} confidence", w.confidence.name());
        if w.confidence < Confidence::High {
            verdict += &format!(", set by {} {}", w.class, w.need.what());
            if let Some(why) = &w.note {
                verdict += &format!(": {why}");
            }
        }
        verdict += ")";
    }
    if let Some(c) = binding {
        verdict += &format!(
            "; binding: {} needs {} {} {}, measured {:.1}: {}",
            c.class,
            c.need.what(),
            if c.need.limit().1 { ">=" } else { "<=" },
            c.limit,
            c.measured,
            c.status.name()
        );
    }
    verdict
}

/// How far a requirement is from its limit, as a factor (1: at the limit):
/// measured over limit for a floor, limit over measured for a ceiling.
fn room(c: &class::Check) -> f64 {
    let floor = c.need.limit().1;
    match floor {
        true => c.measured / c.limit,
        false => c.limit / c.measured.max(f64::MIN_POSITIVE),
    }
}

/// The per-AU speeds of the cache-exhausting writes (`--verbose`).
fn pw_table(f: &class::ClassFigures) -> Vec<Vec<String>> {
    let mut table = vec![vec!["written".into(), "AU MB/s".into()]];
    table.extend(
        f.pw.samples
            .iter()
            .map(|(at, mb)| vec![format_size(*at), format_mbps(*mb)]),
    );
    table
}

fn report<T: serde::Serialize>(
    test: &str,
    verdict: String,
    findings: Vec<Finding>,
    table: Vec<Vec<String>>,
    failed: bool,
    details: &T,
) -> FlashReport {
    FlashReport {
        test: test.into(),
        verdict,
        findings,
        table,
        failed,
        details: serde_json::to_value(details).unwrap_or_default(),
    }
}

fn print(result: &RunResult, args: &FlashArgs) -> Result<i32> {
    let text = match args.json {
        true => Json.render(result),
        false => crate::report::flash::render(result, args.verbose),
    };
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(text.as_bytes());
    let _ = stdout.flush();
    let code = common::exit_code_of(result)?;
    let failed = result.payload.flash().is_some_and(|f| f.failed);
    Ok(if code == 0 && failed {
        EXIT_FLASH_FAIL
    } else {
        code
    })
}
