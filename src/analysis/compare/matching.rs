//! Which tests of two runs are alike: a typed key per test, and the
//! reasons a test has no counterpart.
//!
//! Two tests are compared only when every field of [`TestKey`] is equal:
//! access pattern and direction (with the read share of a mix), transfer
//! size, queue depth, threads, mode (O_DIRECT or through the page cache),
//! engine, access method (pread, mmap, stdio), and whether other devices
//! ran at the same time (a `--parallel` run's "together" figures share a
//! bus and are not like a device alone). Each of these moves MB/s by
//! itself, often by more than the change a comparison looks for, so a
//! near match is still not a match; it is named in the reason instead.
//! The test area (offset, span) and the run's duration are not part of
//! the key: they change how long a figure took, not what it measures.
//!
//! Tests come from every stored run that has them: `profile`, `run`,
//! imported fio jobs, each point of a `curve` (its mode is the point's
//! own: unaligned sizes and references are buffered), and both sides of a
//! parallel run (each member's figures keyed by its target, alone or
//! together). Runs of other commands (sustain, files, stream, flash,
//! surface, copy, endure) measure something else than a repeated test and
//! are listed apart with their command.

use crate::result::compare::{
    Access, Company, Direction, EngineDifference, Method, Mode, NoTests, TestKey,
};
use crate::result::{Payload, RunResult, TestResult, TestRw};
use crate::units::format_size;
use crate::vocab::options::IoMode;

/// One comparable test of a run.
#[derive(Debug, Clone)]
pub struct Keyed<'a> {
    pub key: TestKey,
    pub test: &'a TestResult,
}

/// The access pattern and direction of a workload's `rw`; `None` for a
/// name this version does not know.
fn pattern(rw: &TestRw, mix: Option<u8>) -> Option<(Access, Direction)> {
    let rw = rw.ours()?;
    let access = match rw.is_random() {
        true => Access::Random,
        false => Access::Sequential,
    };
    let direction = match (rw.is_mixed(), rw.writes()) {
        (true, _) => Direction::Mixed { read_percent: mix },
        (false, true) => Direction::Write,
        (false, false) => Direction::Read,
    };
    Some((access, direction))
}

fn method(name: Option<&str>) -> Method {
    match name {
        None | Some("pread") => Method::Pread,
        Some("mmap") => Method::Mmap,
        Some("stdio") => Method::Stdio,
        Some(other) => Method::Other(other.to_string()),
    }
}

/// The comparable tests of a run, in order; skipped tests are left out.
pub fn tests_of(r: &RunResult) -> Result<Vec<Keyed<'_>>, NoTests> {
    // Only these commands' tests are repeated measurements of one workload.
    let repeated = matches!(
        r.payload,
        Payload::Profile { .. }
            | Payload::Run { .. }
            | Payload::Curve { .. }
            | Payload::Imported { .. }
    );
    if !repeated {
        return Err(NoTests::OtherCommand {
            command: r.command(),
        });
    }
    let keyed: Vec<Keyed<'_>> = r
        .tests
        .iter()
        .enumerate()
        .filter(|(_, t)| t.skipped.is_none())
        .filter_map(|(i, t)| {
            Some(Keyed {
                key: key_of(r, i, t)?,
                test: t,
            })
        })
        .collect();
    if keyed.is_empty() {
        return Err(NoTests::Empty);
    }
    Ok(keyed)
}

/// The key of test `index` of `r`.
fn key_of(r: &RunResult, index: usize, t: &TestResult) -> Option<TestKey> {
    let w = &t.workload;
    let (access, direction) = pattern(&w.rw, w.mix_read_percent)?;
    let access_method = r.payload.access().map(|a| a.method.as_str());
    let method = method(access_method);
    let (company, member) = company_of(r, index);
    Some(TestKey {
        access,
        direction,
        block_size: w.block_size,
        queue_depth: w.queue_depth,
        threads: w.threads,
        mode: mode_of(r, index, &method),
        engine: w.engine.clone(),
        method,
        company,
        member,
    })
}

/// The mode of test `index`: a curve point's own, buffered for mmap and
/// stdio (they go through the page cache whatever was asked), else the
/// target's.
fn mode_of(r: &RunResult, index: usize, method: &Method) -> Mode {
    let point = r.payload.curve().and_then(|c| {
        c.series
            .iter()
            .flat_map(|s| &s.points)
            .find(|p| p.test == index)
    });
    let buffered = match point {
        Some(p) => p.buffered || r.target.mode == IoMode::Buffered,
        None => *method != Method::Pread || r.target.mode == IoMode::Buffered,
    };
    if buffered {
        Mode::Buffered
    } else {
        Mode::Direct
    }
}

/// Alone or together, and the member's target, for a parallel run's test.
fn company_of(r: &RunResult, index: usize) -> (Company, Option<String>) {
    let Some(p) = r.payload.parallel() else {
        return (Company::Alone, None);
    };
    let devices = p.targets.len();
    for d in p.tests.iter().flat_map(|t| &t.devices) {
        if d.tests.0 == index {
            return (Company::Alone, Some(d.target.clone()));
        }
        if d.tests.1 == index {
            return (Company::Together { devices }, Some(d.target.clone()));
        }
    }
    (Company::Alone, None)
}

/// "4 KiB randread QD32", with threads, mode, method and company when they
/// are not the plain case.
pub fn describe(k: &TestKey) -> String {
    let rw = match (k.access, k.direction) {
        (Access::Sequential, Direction::Read) => "read".to_string(),
        (Access::Sequential, Direction::Write) => "write".to_string(),
        (Access::Random, Direction::Read) => "randread".to_string(),
        (Access::Random, Direction::Write) => "randwrite".to_string(),
        (a, Direction::Mixed { read_percent }) => {
            let name = if a == Access::Random { "randrw" } else { "rw" };
            match read_percent {
                Some(p) => format!("{name} {p}% reads"),
                None => name.to_string(),
            }
        }
    };
    let mut text = format!("{} {rw} QD{}", format_size(k.block_size), k.queue_depth);
    if k.threads != 1 {
        text.push_str(&format!(" ×{} threads", k.threads));
    }
    if k.mode == Mode::Buffered {
        text.push_str(" buffered");
    }
    match &k.method {
        Method::Pread => {}
        Method::Mmap => text.push_str(" via mmap"),
        Method::Stdio => text.push_str(" via stdio"),
        Method::Other(m) => text.push_str(&format!(" via {m}")),
    }
    if let Some(m) = &k.member {
        text.push_str(&format!(" on {m}"));
    }
    if let Company::Together { devices } = k.company {
        let others = devices.saturating_sub(1);
        let noun = if others == 1 { "device" } else { "devices" };
        text.push_str(&format!(" alongside {others} other {noun}"));
    }
    text
}

/// The fields in which `a` and `b` differ, as "queue depth 32 vs 1".
pub fn differences(a: &TestKey, b: &TestKey) -> Vec<String> {
    let mut out = Vec::new();
    let mut differ = |name: &str, x: String, y: String| {
        if x != y {
            out.push(format!("{name} {x} vs {y}"));
        }
    };
    let access = |k: &TestKey| format!("{:?}", k.access).to_lowercase();
    differ("access", access(a), access(b));
    let direction = |k: &TestKey| match k.direction {
        Direction::Read => "read".to_string(),
        Direction::Write => "write".to_string(),
        Direction::Mixed {
            read_percent: Some(p),
        } => format!("mixed {p}% reads"),
        Direction::Mixed { read_percent: None } => "mixed".to_string(),
    };
    differ("direction", direction(a), direction(b));
    differ("size", format_size(a.block_size), format_size(b.block_size));
    differ(
        "queue depth",
        a.queue_depth.to_string(),
        b.queue_depth.to_string(),
    );
    differ("threads", a.threads.to_string(), b.threads.to_string());
    let mode = |k: &TestKey| match k.mode {
        Mode::Direct => "O_DIRECT".to_string(),
        Mode::Buffered => "buffered".to_string(),
    };
    differ("mode", mode(a), mode(b));
    differ("engine", a.engine.to_string(), b.engine.to_string());
    differ(
        "method",
        format!("{:?}", a.method).to_lowercase(),
        format!("{:?}", b.method).to_lowercase(),
    );
    let company = |k: &TestKey| match k.company {
        Company::Alone => "alone".to_string(),
        Company::Together { devices } => format!("with {devices} devices at once"),
    };
    differ("company", company(a), company(b));
    let member = |k: &TestKey| {
        k.member
            .clone()
            .unwrap_or_else(|| "the run's target".into())
    };
    differ("device", member(a), member(b));
    out
}

/// The test of `among` that differs from `key` in the fewest fields (the
/// first of equals), with those fields.
pub fn nearest<'a>(key: &TestKey, among: &'a [Keyed<'a>]) -> Option<(&'a Keyed<'a>, Vec<String>)> {
    among
        .iter()
        .map(|k| (k, differences(&k.key, key)))
        .min_by_key(|(_, d)| d.len())
}

/// Tests of `base` and `other` paired by equal keys, and the tests of each
/// left without a partner. A key seen twice in one run pairs its first
/// test; the second is left over (it has no partner of its own).
///
/// Tests left over after that pair when they differ in engine alone: an
/// imported fio job and an iocurve run of the same workload, or a `sync`
/// run and a `uring` one. The engine moves MB/s, so such a pair carries
/// the difference as a caveat (see [`engines_differ`]) instead of being
/// refused: whether fio's io_uring and iocurve's agree is often the
/// question the person asks.
pub struct Pairing<'a> {
    pub pairs: Vec<(Keyed<'a>, Keyed<'a>)>,
    pub base_only: Vec<Keyed<'a>>,
    pub other_only: Vec<Keyed<'a>>,
}

pub fn pair<'a>(base: &[Keyed<'a>], other: &[Keyed<'a>]) -> Pairing<'a> {
    let mut taken = vec![false; other.len()];
    let mut pairs: Vec<(usize, usize)> = Vec::new();
    let mut paired_base = vec![false; base.len()];
    let passes: [fn(&TestKey, &TestKey) -> bool; 2] = [|a, b| a == b, alike_but_engine];
    for alike in passes {
        for (bi, b) in base.iter().enumerate() {
            if paired_base[bi] {
                continue;
            }
            let partner = (0..other.len()).find(|&i| !taken[i] && alike(&b.key, &other[i].key));
            if let Some(i) = partner {
                taken[i] = true;
                paired_base[bi] = true;
                pairs.push((bi, i));
            }
        }
    }
    // In the base's order, as a reader scans the table.
    pairs.sort_unstable();
    Pairing {
        pairs: pairs
            .into_iter()
            .map(|(b, o)| (base[b].clone(), other[o].clone()))
            .collect(),
        base_only: leftovers(base, &paired_base),
        other_only: leftovers(other, &taken),
    }
}

/// The tests of `tests` whose flag in `paired` is false.
fn leftovers<'a>(tests: &[Keyed<'a>], paired: &[bool]) -> Vec<Keyed<'a>> {
    tests
        .iter()
        .zip(paired)
        .filter(|(_, p)| !**p)
        .map(|(t, _)| t.clone())
        .collect()
}

/// True when `a` and `b` are the same workload run by different engines.
pub fn alike_but_engine(a: &TestKey, b: &TestKey) -> bool {
    a.engine != b.engine
        && TestKey {
            engine: b.engine.clone(),
            ..a.clone()
        } == *b
}

/// The two engines of a pair that differs in engine alone.
pub fn engines_differ(before: &TestKey, after: &TestKey) -> Option<EngineDifference> {
    alike_but_engine(before, after).then(|| EngineDifference {
        before: before.engine.clone(),
        after: after.engine.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata;

    fn key(rw: &str, bs: u64, qd: u32) -> TestKey {
        let (access, direction) = pattern(&TestRw::parse(rw), None).unwrap();
        TestKey {
            access,
            direction,
            block_size: bs,
            queue_depth: qd,
            threads: 1,
            mode: Mode::Direct,
            engine: crate::result::TestEngine::Uring,
            method: Method::Pread,
            company: Company::Alone,
            member: None,
        }
    }

    #[test]
    fn a_profile_row_and_a_4k_run_differ_in_size_pattern_and_depth() {
        let d = differences(&key("read", 1 << 20, 8), &key("randread", 4096, 32));
        let expected = vec![
            "access sequential vs random".to_string(),
            format!("size {} vs {}", format_size(1 << 20), format_size(4096)),
            "queue depth 8 vs 32".to_string(),
        ];
        assert_eq!(d, expected);
        assert!(differences(&key("read", 4096, 1), &key("read", 4096, 1)).is_empty());
    }

    #[test]
    fn profile_tests_pair_with_themselves_only() {
        let r = testdata::run(None, "2024-01-01T00:00:00Z", &[20.0, 21.0], &[10.0, 11.0]);
        let tests = tests_of(&r).unwrap();
        assert_eq!(tests.len(), 2);
        let p = pair(&tests, &tests);
        assert_eq!(p.pairs.len(), 2);
        assert!(p.base_only.is_empty() && p.other_only.is_empty());
        assert_ne!(tests[0].key, tests[1].key, "read and write are not alike");
    }

    #[test]
    fn other_commands_are_listed_apart() {
        let r = testdata::run(None, "2024-01-01T00:00:00Z", &[20.0], &[10.0]);
        let r = testdata::other_command(r);
        assert_eq!(
            tests_of(&r).err(),
            Some(NoTests::OtherCommand {
                command: "copy".into()
            })
        );
    }

    /// An exact partner wins; a test left over pairs with one that
    /// differs in engine alone, and that pair names both engines.
    #[test]
    fn a_different_engine_pairs_after_exact_partners_with_a_caveat() {
        let r = testdata::run(None, "2024-01-01T00:00:00Z", &[20.0], &[10.0]);
        let t = &r.tests[0];
        let uring = key("read", 4096, 8);
        let fio = TestKey {
            engine: crate::result::TestEngine::Imported("fio:io_uring".into()),
            ..uring.clone()
        };
        let deeper = key("read", 4096, 32);
        let keyed = |k: &TestKey| Keyed {
            key: k.clone(),
            test: t,
        };
        let p = pair(
            &[keyed(&fio), keyed(&deeper)],
            &[keyed(&deeper), keyed(&uring)],
        );
        assert_eq!(p.pairs.len(), 2);
        assert!(p.base_only.is_empty() && p.other_only.is_empty());
        assert_eq!(p.pairs[0].0.key, fio);
        assert_eq!(p.pairs[0].1.key, uring);
        let d = engines_differ(&p.pairs[0].0.key, &p.pairs[0].1.key).unwrap();
        assert_eq!(
            d.text(),
            "engine fio:io_uring vs uring: part of the change may be the engine's"
        );
        assert!(engines_differ(&p.pairs[1].0.key, &p.pairs[1].1.key).is_none());
        // Another field besides the engine: still no partner.
        let p = pair(&[keyed(&fio)], &[keyed(&deeper)]);
        assert!(p.pairs.is_empty());
        assert_eq!((p.base_only.len(), p.other_only.len()), (1, 1));
    }
}
