//! What one measurement is asked to do: a plain, validated description.

use crate::vocab::Rw;
use crate::vocab::options::EngineKind;
use crate::vocab::options::IoMode;
use crate::vocab::pattern::Pattern;
use serde::Serialize;
use std::time::Duration;

/// What a caller asks one measurement to be; [`MeasureSpec::new`] checks
/// it and is the only way to a [`MeasureSpec`], which carries it as it is.
#[derive(Debug, Clone, Serialize)]
pub struct SpecRequest {
    pub rw: Rw,
    /// Read share of a mixed workload, in percent.
    pub mix_read_percent: u8,
    pub block_size: u64,
    pub queue_depth: u32,
    pub threads: u32,
    pub engine: EngineKind,
    /// io_uring submits through a kernel thread polling its queue
    /// (`--sqpoll`); only with the io_uring engine.
    pub sqpoll: bool,
    /// Start of the region, bytes from the start of the target.
    pub offset: u64,
    /// Length of the region.
    pub span: u64,
    /// Offset granularity of random I/O.
    pub align: u64,
    /// Bytes to move in the counted phase (all jobs together).
    pub size: Option<u64>,
    /// Duration of the counted phase.
    #[serde(with = "duration_secs")]
    pub time: Option<Duration>,
    /// Warm-up before counting.
    #[serde(with = "duration_secs")]
    pub ramp: Option<Duration>,
    pub pattern: Pattern,
    pub seed: u64,
    /// False when the seed was made up; a verify read then takes the seed
    /// from the blocks it reads.
    pub seed_given: bool,
    pub verify: bool,
    /// O_DIRECT, or through the page cache; recorded as `buffered`.
    #[serde(rename = "buffered", serialize_with = "is_buffered")]
    pub io: IoMode,
}

/// One measurement: a workload over a region of an open target, checked by
/// [`MeasureSpec::new`]. Its request's fields read through it (it
/// dereferences to the [`SpecRequest`]); the private field keeps struct
/// literals out, so every spec has passed the checks. To vary one, change
/// its [`MeasureSpec::request`] and check that again.
#[derive(Debug, Clone, Serialize)]
#[serde(transparent)]
pub struct MeasureSpec {
    checked: SpecRequest,
}

impl std::ops::Deref for MeasureSpec {
    type Target = SpecRequest;

    fn deref(&self) -> &SpecRequest {
        &self.checked
    }
}

/// Why a [`SpecRequest`] is not a measurement the runner can carry out.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpecError {
    #[error("a block size of {0} bytes: it must be from 1 byte to 1 GiB")]
    BlockSize(u64),
    #[error("a queue depth of 0: at least one I/O must be in flight")]
    QueueDepth,
    #[error("0 threads: at least one job must run")]
    Threads,
    #[error("an empty region: the span must hold at least one byte")]
    EmptySpan,
    #[error("the region from {offset} for {span} bytes ends beyond any device")]
    RegionOverflow { offset: u64, span: u64 },
    #[error("an alignment of 0 bytes: random offsets need a granularity")]
    Align,
    #[error("a read share of {0}%: it must be from 0 to 100")]
    Mix(u8),
    #[error(
        "--verify stamps 512-byte sectors, and a block of {0} bytes is not a whole number of them"
    )]
    VerifyBlock(u64),
    #[error(
        "--sqpoll polls io_uring's submission queue, and this measurement runs without io_uring"
    )]
    PollingWithoutUring,
}

/// Largest transfer: the engines describe lengths with 32 bits.
const MAX_BLOCK: u64 = 1 << 30;

impl MeasureSpec {
    /// The one way to a spec: checks that the runner can carry `req` out.
    pub fn new(req: SpecRequest) -> Result<MeasureSpec, SpecError> {
        check_request(&req)?;
        Ok(MeasureSpec { checked: req })
    }

    /// The request this spec was made from, to derive a variant of it.
    pub fn request(&self) -> SpecRequest {
        self.checked.clone()
    }

    /// Through the page cache instead of O_DIRECT.
    pub fn buffered(&self) -> bool {
        self.io == IoMode::Buffered
    }

    /// A plain one-job, one-in-flight, O_DIRECT measurement of `size` bytes
    /// (rounded down to whole blocks) over `region` (offset, span), with no
    /// warm-up: the form every step of surface, copy and endure takes.
    /// Random reads land on [`PLAIN_RANDOM_ALIGN`] boundaries.
    pub fn plain(
        rw: Rw,
        bs: u64,
        region: (u64, u64),
        size: u64,
        seed: u64,
    ) -> Result<MeasureSpec, SpecError> {
        MeasureSpec::new(SpecRequest {
            rw,
            mix_read_percent: 0,
            block_size: bs,
            queue_depth: 1,
            threads: 1,
            engine: EngineKind::Sync,
            sqpoll: false,
            offset: region.0,
            span: region.1,
            align: if rw.is_random() {
                PLAIN_RANDOM_ALIGN
            } else {
                bs
            },
            size: Some(size / bs.max(1) * bs),
            time: None,
            ramp: None,
            pattern: Pattern::Random,
            seed,
            seed_given: true,
            verify: false,
            io: IoMode::Direct,
        })
    }
}

/// Alignment of the random transfers of [`MeasureSpec::plain`]: one 4 KiB
/// page, the access-time read of a surface scan.
pub const PLAIN_RANDOM_ALIGN: u64 = 4096;

fn check_request(req: &SpecRequest) -> Result<(), SpecError> {
    if req.block_size == 0 || req.block_size > MAX_BLOCK {
        return Err(SpecError::BlockSize(req.block_size));
    }
    if req.queue_depth == 0 {
        return Err(SpecError::QueueDepth);
    }
    if req.threads == 0 {
        return Err(SpecError::Threads);
    }
    if req.span == 0 {
        return Err(SpecError::EmptySpan);
    }
    if req.offset.checked_add(req.span).is_none() {
        return Err(SpecError::RegionOverflow {
            offset: req.offset,
            span: req.span,
        });
    }
    if req.align == 0 {
        return Err(SpecError::Align);
    }
    if req.mix_read_percent > 100 {
        return Err(SpecError::Mix(req.mix_read_percent));
    }
    if req.verify && !req.block_size.is_multiple_of(512) {
        return Err(SpecError::VerifyBlock(req.block_size));
    }
    if req.sqpoll && req.engine != EngineKind::Uring {
        return Err(SpecError::PollingWithoutUring);
    }
    Ok(())
}

fn is_buffered<S: serde::Serializer>(mode: &IoMode, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_bool(*mode == IoMode::Buffered)
}

mod duration_secs {
    use serde::Serializer;
    use std::time::Duration;

    pub fn serialize<S: Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
        match d {
            Some(d) => s.serialize_f64(d.as_secs_f64()),
            None => s.serialize_none(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request() -> SpecRequest {
        SpecRequest {
            rw: Rw::Read,
            mix_read_percent: 50,
            block_size: 4096,
            queue_depth: 1,
            threads: 1,
            engine: EngineKind::Sync,
            sqpoll: false,
            offset: 0,
            span: 1 << 20,
            align: 4096,
            size: None,
            time: None,
            ramp: None,
            pattern: Pattern::Zeros,
            seed: 1,
            seed_given: true,
            verify: false,
            io: IoMode::Direct,
        }
    }

    #[test]
    fn a_plain_spec_is_one_job_of_whole_blocks() {
        let seq =
            MeasureSpec::plain(Rw::Write, 1 << 20, (4096, 8 << 20), (3 << 20) + 5, 7).unwrap();
        assert_eq!(seq.size, Some(3 << 20));
        assert_eq!((seq.offset, seq.span, seq.align), (4096, 8 << 20, 1 << 20));
        assert_eq!(
            (seq.queue_depth, seq.threads, seq.engine),
            (1, 1, EngineKind::Sync)
        );
        assert_eq!((seq.time, seq.ramp, seq.verify), (None, None, false));
        assert_eq!(seq.io, IoMode::Direct);
        let random = MeasureSpec::plain(Rw::RandRead, 65536, (0, 1 << 20), 1 << 20, 1).unwrap();
        assert_eq!(random.align, PLAIN_RANDOM_ALIGN);
        assert!(MeasureSpec::plain(Rw::Read, 0, (0, 1 << 20), 1 << 20, 1).is_err());
    }

    #[test]
    fn a_sound_request_becomes_a_spec_and_back() {
        let spec = MeasureSpec::new(request()).unwrap();
        assert_eq!(spec.block_size, 4096);
        assert!(!spec.buffered());
        let again = MeasureSpec::new(SpecRequest {
            io: IoMode::Buffered,
            ..spec.request()
        })
        .unwrap();
        assert!(again.buffered());
        let json = serde_json::to_value(&again).unwrap();
        assert_eq!(json["buffered"], true);
        assert_eq!(json["rw"], "read");
    }

    #[test]
    fn each_unworkable_request_says_why() {
        let refused = |req: SpecRequest| MeasureSpec::new(req).unwrap_err();
        let base = request;
        assert_eq!(
            refused(SpecRequest {
                block_size: 0,
                ..base()
            }),
            SpecError::BlockSize(0)
        );
        assert_eq!(
            refused(SpecRequest {
                block_size: 2 << 30,
                ..base()
            }),
            SpecError::BlockSize(2 << 30)
        );
        assert_eq!(
            refused(SpecRequest {
                queue_depth: 0,
                ..base()
            }),
            SpecError::QueueDepth
        );
        assert_eq!(
            refused(SpecRequest {
                threads: 0,
                ..base()
            }),
            SpecError::Threads
        );
        assert_eq!(
            refused(SpecRequest { span: 0, ..base() }),
            SpecError::EmptySpan
        );
        assert!(matches!(
            refused(SpecRequest {
                offset: u64::MAX,
                ..base()
            }),
            SpecError::RegionOverflow { .. }
        ));
        assert_eq!(
            refused(SpecRequest { align: 0, ..base() }),
            SpecError::Align
        );
        assert_eq!(
            refused(SpecRequest {
                mix_read_percent: 101,
                ..base()
            }),
            SpecError::Mix(101)
        );
        let e = refused(SpecRequest {
            verify: true,
            block_size: 1000,
            ..base()
        });
        assert!(e.to_string().contains("512-byte sectors"), "{e}");
    }

    #[test]
    fn rw_spellings_match_fio() {
        use clap::ValueEnum;
        for rw in Rw::value_variants() {
            assert_eq!(Rw::parse(rw.name()), Some(*rw));
            assert_eq!(Rw::from_str(rw.name(), false), Ok(*rw));
        }
        assert_eq!(Rw::parse("readwrite"), Some(Rw::Rw));
    }
}
