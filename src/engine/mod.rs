//! I/O backends: the code that moves bytes and times each transfer.
//!
//! An engine pulls operations from an [`OpSource`], executes them against one
//! file descriptor and reports each completion with its submit and completion
//! time on the engine's own clock. Keeping the clock on the engine side is
//! what lets a simulated device run on a virtual clock later: the workload
//! never reads the time itself.
//!
//! The timed path (from `OpSource::next` to `OpSource::completed`) allocates
//! nothing, takes no lock and formats nothing. The engines hold no `unsafe`:
//! the io_uring ring, the memory mapping and the C library stream they use
//! are safe types in [`crate::sys`].

pub mod access;
mod clock;
pub mod population;
pub mod sim;
pub mod sync;
pub mod uring;

use crate::vocab::options::EngineKind;

pub use clock::{MonotonicClock, monotonic_now_ns};

use std::fmt;
use std::io;

/// Read or write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpKind {
    Read,
    Write,
}

impl fmt::Display for OpKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            OpKind::Read => "read",
            OpKind::Write => "write",
        })
    }
}

/// One transfer to execute.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Op {
    pub kind: OpKind,
    pub offset: u64,
    pub len: u32,
    /// Position in this job's stream; selects the data-pool block for writes.
    pub seq: u64,
    /// False during the warm-up, whose I/Os are executed but not counted.
    pub counted: bool,
}

/// What an engine needs from a workload.
pub trait OpSource {
    /// The next operation, or `None` when the workload is done (or stopped).
    /// `now_ns` is the engine's clock.
    fn next(&mut self, now_ns: u64) -> Option<Op>;

    /// Called once per completed operation, with the data transferred.
    fn completed(&mut self, op: &Op, submit_ns: u64, complete_ns: u64, data: &[u8]);

    /// True when writes must carry per-block content (`--verify`); the engine
    /// then calls [`OpSource::fill_write`] with a private buffer for each write
    /// instead of using the shared data pool.
    fn stamps_writes(&self) -> bool {
        false
    }

    /// Fills the buffer of a write about to be issued.
    fn fill_write(&mut self, _op: &Op, _buf: &mut [u8]) {}
}

/// A failed transfer: which one, and what the kernel said.
#[derive(Debug)]
pub struct IoError {
    pub kind: OpKind,
    pub offset: u64,
    pub len: u32,
    pub error: io::Error,
}

impl IoError {
    /// A plan refused before any transfer: no length, so it reads as
    /// `why` alone.
    pub fn refused(kind: OpKind, offset: u64, why: &str) -> IoError {
        IoError {
            kind,
            offset,
            len: 0,
            error: io::Error::new(io::ErrorKind::InvalidInput, why),
        }
    }
}

impl fmt::Display for IoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.len == 0 {
            // Not a transfer: the engine itself could not be set up.
            return write!(f, "{}", self.error);
        }
        write!(
            f,
            "{} of {} bytes at offset {} failed: {}",
            self.kind, self.len, self.offset, self.error
        )
    }
}

impl std::error::Error for IoError {}

/// The message of an I/O failure in the middle of a run, with the fix.
pub fn io_failure_message(e: &IoError) -> String {
    let hint = match e.error.raw_os_error() {
        Some(libc::EIO) => {
            "the device reported an error: check `dmesg`; the medium or its connection may be failing"
        }
        Some(libc::ENOSPC) => "out of space: free some space or measure a smaller --span",
        Some(libc::EINVAL) => {
            "the kernel refused the transfer (alignment or size): try --buffered or a multiple of the logical block size"
        }
        Some(libc::ENODEV) | Some(libc::ENXIO) => "the device disappeared (unplugged or reset)",
        Some(libc::EROFS) => {
            "the device became read-only (write-protect, or the kernel remounted it after errors)"
        }
        _ => "the device or the system refused the transfer",
    };
    format!("{}: {hint}", e)
}

/// Where engines read the time: the wall clock ([`MonotonicClock`]), or the
/// virtual clock of a simulated card ([`sim::SimClock`]) that its own
/// engine advances, so the workload and the statistics run unchanged.
pub trait Clock: Copy + Send + Sync {
    /// Nanoseconds since an origin shared by every job of a measurement.
    fn now_ns(&self) -> u64;
}

/// An I/O backend. It pulls operations from a source until the source is
/// exhausted, executes them, and reports every completion with its submit
/// and completion time on its clock.
pub trait Engine {
    /// The engine's name as results record it.
    fn name(&self) -> &'static str;

    /// Runs until the source is exhausted; on a failed transfer, stops
    /// taking new operations, waits for those in flight and returns the
    /// first failure.
    fn run<S: OpSource>(&mut self, source: &mut S) -> Result<(), IoError>;

    /// The engine's clock, for phase boundaries shared by jobs.
    fn now_ns(&self) -> u64;

    /// A fallback the engine had to take: what it could not register.
    fn note(&self) -> Option<Registered> {
        None
    }
}

/// What io_uring registered; a `false` is a fallback to plain buffers or
/// a plain descriptor (worded in `report`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Registered {
    pub buffers: bool,
    pub file: bool,
}

/// Everything an engine is built from.
pub struct EngineSetup<'a, C: Clock> {
    pub fd: std::os::fd::BorrowedFd<'a>,
    pub block_size: usize,
    pub queue_depth: usize,
    /// Buffer alignment (the device's logical block size, at least a page).
    pub align: usize,
    /// Write data: a whole number of blocks, filled before timing starts.
    pub pool: crate::sys::buffer::AlignedBuf,
    /// Shared by every job of a measurement so their times compare.
    pub clock: C,
}

/// The clock of a measurement: the wall clock, or a simulated card's own.
#[derive(Debug, Clone, Copy)]
pub enum AnyClock<'a> {
    Wall(MonotonicClock),
    Sim(sim::SimClock<'a>),
}

impl Clock for AnyClock<'_> {
    #[inline]
    fn now_ns(&self) -> u64 {
        match self {
            AnyClock::Wall(c) => c.now_ns(),
            AnyClock::Sim(c) => c.now_ns(),
        }
    }
}

/// A ready engine of any kind, chosen at run time.
pub enum AnyEngine<'a> {
    Sync(sync::SyncEngine<'a, AnyClock<'a>>),
    Uring(Box<uring::UringEngine<'a, AnyClock<'a>>>),
    Sim(sim::SimEngine<'a>),
    Mmap(access::MmapEngine<AnyClock<'a>>),
    Stdio(access::StdioEngine<AnyClock<'a>>),
}

impl<'a> AnyEngine<'a> {
    /// The engine of `kind` on `setup`; `sqpoll` asks io_uring for a
    /// kernel thread polling its submission queue (io_uring only: a spec
    /// with it and another engine does not pass its checks).
    pub fn build(
        kind: EngineKind,
        setup: EngineSetup<'a, AnyClock<'a>>,
        sqpoll: bool,
    ) -> io::Result<AnyEngine<'a>> {
        Ok(match kind {
            EngineKind::Sync => AnyEngine::Sync(sync::SyncEngine::new(setup)),
            EngineKind::Uring => {
                AnyEngine::Uring(Box::new(uring::UringEngine::new(setup, sqpoll)?))
            }
            EngineKind::Mmap => AnyEngine::Mmap(access::MmapEngine::new(setup)?),
            EngineKind::Stdio(call) => AnyEngine::Stdio(access::StdioEngine::new(setup, call)?),
        })
    }

    /// The write data pool, unchanged, for a later pass to use without
    /// filling it again; None where the engine keeps it (a ring that
    /// registered it with the kernel, the engines that copy it away).
    pub fn into_pool(self) -> Option<crate::sys::buffer::AlignedBuf> {
        match self {
            AnyEngine::Sync(engine) => Some(engine.into_pool()),
            AnyEngine::Sim(engine) => Some(engine.into_pool()),
            AnyEngine::Uring(_) | AnyEngine::Mmap(_) | AnyEngine::Stdio(_) => None,
        }
    }
}

impl Engine for AnyEngine<'_> {
    fn name(&self) -> &'static str {
        match self {
            AnyEngine::Sync(e) => e.name(),
            AnyEngine::Uring(e) => e.name(),
            AnyEngine::Sim(e) => e.name(),
            AnyEngine::Mmap(e) => e.name(),
            AnyEngine::Stdio(e) => e.name(),
        }
    }

    fn run<S: OpSource>(&mut self, source: &mut S) -> Result<(), IoError> {
        match self {
            AnyEngine::Sync(e) => e.run(source),
            AnyEngine::Uring(e) => e.run(source),
            AnyEngine::Sim(e) => e.run(source),
            AnyEngine::Mmap(e) => e.run(source),
            AnyEngine::Stdio(e) => e.run(source),
        }
    }

    fn now_ns(&self) -> u64 {
        match self {
            AnyEngine::Sync(e) => e.now_ns(),
            AnyEngine::Uring(e) => e.now_ns(),
            AnyEngine::Sim(e) => e.now_ns(),
            AnyEngine::Mmap(e) => e.now_ns(),
            AnyEngine::Stdio(e) => e.now_ns(),
        }
    }

    fn note(&self) -> Option<Registered> {
        match self {
            AnyEngine::Sync(e) => e.note(),
            AnyEngine::Uring(e) => e.note(),
            AnyEngine::Sim(e) => e.note(),
            AnyEngine::Mmap(e) => e.note(),
            AnyEngine::Stdio(e) => e.note(),
        }
    }
}

/// The pool block used by a write with sequence number `seq`.
#[inline]
pub(crate) fn pool_slice(
    pool: &crate::sys::buffer::AlignedBuf,
    block_size: usize,
    seq: u64,
) -> &[u8] {
    let blocks = pool.len() / block_size;
    let start = (seq % blocks as u64) as usize * block_size;
    &pool.as_slice()[start..start + block_size]
}
