//! One rank's part in a job: who the ranks are, how a rank waits for
//! another (never for good), and how a job ends on one rank's error.
//!
//! Every exchange is point-to-point through rank 0, with a label: a rank
//! that arrives at a different step than rank 0 (a test skipped on one
//! host, say) is named and the job ends, instead of two collectives
//! pairing up wrongly or waiting forever (the steps are in
//! [`steps`](super::steps)). Every wait polls, with a pause that grows to
//! a millisecond, and gives up on a rank the job lost (see
//! [`liveness`](super::liveness)).

use super::codec::{decode, encode};
use super::liveness::Liveness;
use super::placeholders::RankNames;
use super::wire::{Tag, Wire, broadcast, gather};
use crate::analysis::cluster::clock::OffsetEstimate;
use crate::interrupt;
use crate::result::cluster::{RankLoss, ReadOtherHost};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// How long a rank ending the job waits for the others to wind down
/// (restore what they overwrote, remove their scratch files) before
/// `MPI_Abort` ends whatever is left.
const WIND_DOWN: Duration = Duration::from_secs(10);

/// How long a wait for a message looks without pausing (the start of a
/// pass and a clock's round trip are timed by how soon it is seen).
const SPIN_FIRST: Duration = Duration::from_micros(300);

/// The pause between two looks: growing to [`POLL_SHORT`] for the first
/// [`SHORT_WAIT`], to [`POLL_MEDIUM`] until [`MEDIUM_WAIT`], then to
/// [`POLL_LONG`]. Each look drives MPI's progress engine (about 30 µs
/// here): a look every millisecond cost 3% of a core, every 5 ms under
/// 1%, so a rank waiting for a slower one (or a silent one, up to the
/// rank timeout) costs next to nothing.
const POLL_SHORT: Duration = Duration::from_micros(100);
const SHORT_WAIT: Duration = Duration::from_millis(20);
pub(super) const POLL_MEDIUM: Duration = Duration::from_millis(1);
const MEDIUM_WAIT: Duration = Duration::from_secs(1);
const POLL_LONG: Duration = Duration::from_millis(5);

/// How long a rank asked to stop (the launcher's SIGTERM, Ctrl-C) waits
/// for a rank that has stopped beating too: its process is gone (the
/// launcher stops the job when a rank dies), and the others must hand
/// over, restore and print before the launcher's SIGKILL (Open MPI's
/// comes one second after its SIGTERM). A rank still beating is busy
/// (restoring, say) and is waited for, up to the rank timeout.
const GRACE_AFTER_STOP: Duration = Duration::from_millis(300);

/// How long the first exchanges (host names, rank 0's verdict) may take,
/// before any option is known.
const JOIN_TIMEOUT: Duration = super::liveness::DEFAULT_TIMEOUT;

/// The job's options that change how ranks work together.
#[derive(Debug, Clone, Copy, Default)]
pub struct JobOptions {
    pub stonewall: bool,
    pub shared_file: bool,
    pub read_other_host: bool,
}

/// This process's place in the job.
pub struct Job {
    pub(super) wire: Box<dyn Wire>,
    /// Host names by rank, as the ranks reported them.
    pub(super) hosts: Vec<String>,
    pub(super) options: Mutex<JobOptions>,
    /// Rank 0: each rank's clock before the tests.
    pub(super) clocks_before: Mutex<Vec<OffsetEstimate>>,
    /// Rank 0: each rank's filled-in target.
    pub(super) targets: Mutex<Vec<String>>,
    /// Where each rank reads from under `--read-other-host`.
    pub(super) partners: Mutex<Option<ReadOtherHost>>,
    /// Set when this rank gave up on the job (another rank ended it, or
    /// rank 0 was lost): no more messages, no merge.
    pub(super) abandoned: AtomicBool,
    /// The rank that ended the job (see [`Job::end_job`]), +1; 0 for none.
    pub(super) ended_by: AtomicU32,
    /// The exit code that rank ended the job with.
    pub(super) end_code: AtomicI32,
    /// Who is still there.
    pub(super) live: Liveness,
}

/// Why a rank stops: the exit code and, on the rank that found it, the
/// line to print (other ranks were told and print nothing).
#[derive(Debug)]
pub struct Stop {
    pub code: i32,
    pub line: Option<String>,
}

impl Job {
    /// Joins the job: the ranks tell each other their host names. A rank
    /// that does not answer within [`JOIN_TIMEOUT`] ends the job.
    pub fn join(wire: Box<dyn Wire>, host: String) -> Job {
        let gathered = gather(&*wire, Tag::Hosts, host.into_bytes(), JOIN_TIMEOUT);
        let list = match gathered {
            Ok(all) => all.map(|all| {
                let names: Vec<String> = all
                    .into_iter()
                    .map(|b| String::from_utf8_lossy(&b).into_owned())
                    .collect();
                encode(&names, "the host names").unwrap_or_else(|e| broken_at_start(&*wire, &e))
            }),
            Err(rank) => silent_at_start(&*wire, rank),
        };
        let shared = broadcast(&*wire, Tag::Hosts, list, JOIN_TIMEOUT)
            .unwrap_or_else(|rank| silent_at_start(&*wire, rank));
        let hosts: Vec<String> =
            decode(&shared, "the host names").unwrap_or_else(|e| broken_at_start(&*wire, &e));
        let size = wire.size();
        Job {
            wire,
            hosts,
            options: Mutex::new(JobOptions::default()),
            clocks_before: Mutex::new(Vec::new()),
            targets: Mutex::new(Vec::new()),
            partners: Mutex::new(None),
            abandoned: AtomicBool::new(false),
            ended_by: AtomicU32::new(0),
            end_code: AtomicI32::new(crate::error::EXIT_INTERRUPTED),
            live: Liveness::new(size),
        }
    }

    /// The rank that ended the job, when another rank did.
    pub fn ended_by(&self) -> Option<u32> {
        self.ended_by.load(Ordering::Relaxed).checked_sub(1)
    }

    /// The exit code of the rank that ended the job: every rank told to
    /// stop exits with it, so the launcher reports the failing rank's own
    /// (2 for a usage error, 3 for I/O) whichever rank it hears from first.
    pub fn end_code(&self) -> i32 {
        self.end_code.load(Ordering::Relaxed)
    }

    /// Takes a waiting `End` from another rank, if any: this rank then
    /// stops, gives up on the job and winds down. True when one was there.
    pub(super) fn heed_end(&self) -> bool {
        if self.ended_by().is_some() {
            return true;
        }
        let Some((from, code)) = self.wire.try_receive(None, Tag::End) else {
            return false;
        };
        let code = code
            .get(..4)
            .and_then(|b| b.try_into().ok())
            .map_or(crate::error::EXIT_INTERNAL, i32::from_le_bytes);
        self.end_code.store(code, Ordering::Relaxed);
        self.ended_by.store(from + 1, Ordering::Relaxed);
        self.abandoned.store(true, Ordering::Relaxed);
        interrupt::stop_flag().store(true, Ordering::SeqCst);
        true
    }

    /// Ends the job from this rank (after an error or a panic here): every
    /// other rank is told (with `code`, which it exits with), stops,
    /// restores what it overwrote, removes its scratch files and says it
    /// left; after at most [`WIND_DOWN`], `MPI_Abort` ends whatever is
    /// still running.
    pub fn end_job(&self, code: i32) -> ! {
        let mut waiting: Vec<u32> = (0..self.size())
            .filter(|r| *r != self.rank() && !self.live.is_lost(*r))
            .collect();
        for &rank in &waiting {
            self.wire.send(rank, Tag::End, &code.to_le_bytes());
        }
        let since = Instant::now();
        while !waiting.is_empty() && since.elapsed() < WIND_DOWN {
            // Another rank ending the job too will not wait for this
            // one's message to be answered.
            let gone = self
                .wire
                .try_receive(None, Tag::Left)
                .or_else(|| self.wire.try_receive(None, Tag::End));
            match gone {
                Some((rank, _)) => waiting.retain(|r| *r != rank),
                None => std::thread::sleep(Duration::from_millis(1)),
            }
        }
        self.wire.abort(code)
    }

    /// Tells the rank that ended the job that this one wound down.
    pub fn say_left(&self) {
        if let Some(rank) = self.ended_by() {
            self.wire.send(rank, Tag::Left, &[]);
        }
    }

    /// Waits up to `time` for another rank to end the job (this rank's own
    /// error is then the same as theirs, or a consequence): true when one
    /// did.
    pub fn ended_elsewhere_within(&self, time: Duration) -> bool {
        let since = Instant::now();
        loop {
            if self.heed_end() {
                return true;
            }
            if since.elapsed() >= time {
                return false;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    /// True once this rank gave up on the job (see [`Job::receive`]).
    pub fn abandoned(&self) -> bool {
        self.abandoned.load(Ordering::Relaxed)
    }

    /// True when the job went on without a rank: MPI cannot be finalized
    /// (it would wait for that rank).
    pub fn lost_any(&self) -> bool {
        self.live.any_lost()
    }

    /// Waits for the next message of `tag` from `from` (any rank when
    /// `None`). MPI's receive cannot be interrupted and a rank that died
    /// never sends, so this polls; it returns `None` once this rank gave
    /// up on the job or on `from` (lost: silent for `--rank-timeout`, or
    /// not beating once the job is stopping).
    pub(super) fn receive(&self, from: Option<u32>, tag: Tag) -> Option<(u32, Vec<u8>)> {
        let mut pause = Duration::from_micros(1);
        let waiting = Instant::now();
        let mut stopped_at = None;
        loop {
            if self.abandoned() || self.heed_end() || from.is_some_and(|r| self.live.is_lost(r)) {
                return None;
            }
            if let Some(got) = self.wire.try_receive(from, tag) {
                return Some(got);
            }
            if interrupt::stop_flag().load(Ordering::Relaxed) {
                let since = *stopped_at.get_or_insert_with(Instant::now);
                if self.give_up_after_stop(from, since) {
                    return None;
                }
            }
            if waiting.elapsed() < SPIN_FIRST {
                std::hint::spin_loop();
                continue;
            }
            std::thread::sleep(pause);
            let most = match waiting.elapsed() {
                w if w < SHORT_WAIT => POLL_SHORT,
                w if w < MEDIUM_WAIT => POLL_MEDIUM,
                _ => POLL_LONG,
            };
            pause = (pause * 2).min(most);
        }
    }

    /// Once stopped: true when the rank waited for is gone (no beat for
    /// [`GRACE_AFTER_STOP`], or nothing for the rank timeout), after it
    /// was recorded lost; a wait for any rank gives up on the job.
    fn give_up_after_stop(&self, from: Option<u32>, since: Instant) -> bool {
        if since.elapsed() < GRACE_AFTER_STOP {
            return false;
        }
        let Some(rank) = from else {
            self.abandoned.store(true, Ordering::Relaxed);
            return true;
        };
        let silent = self.live.silent_for(rank);
        if silent < GRACE_AFTER_STOP && since.elapsed() < self.live.timeout() {
            return false;
        }
        self.lose(rank, RankLoss::Vanished, silent);
        true
    }

    /// Sends, unless this rank gave up on the job or on `to`.
    pub(super) fn send(&self, to: u32, tag: Tag, bytes: &[u8]) {
        if !self.abandoned() && !self.live.is_lost(to) {
            self.wire.send(to, tag, bytes);
        }
    }

    pub fn rank(&self) -> u32 {
        self.wire.rank()
    }

    pub fn size(&self) -> u32 {
        self.wire.size()
    }

    pub fn is_root(&self) -> bool {
        self.rank() == 0
    }

    pub fn host(&self) -> &str {
        self.host_of(self.rank())
    }

    /// The host of `rank`, as it reported it.
    pub fn host_of(&self, rank: u32) -> &str {
        self.hosts.get(rank as usize).map_or("", String::as_str)
    }

    /// Host names by rank.
    pub fn hosts(&self) -> &[String] {
        &self.hosts
    }

    /// This rank's place among the ranks on its host, by rank order.
    pub fn local_rank(&self) -> u32 {
        let me = self.rank() as usize;
        self.hosts[..me.min(self.hosts.len())]
            .iter()
            .filter(|h| *h == self.host())
            .count() as u32
    }

    /// The names this rank's arguments may use.
    pub fn names(&self) -> RankNames<'_> {
        RankNames {
            rank: self.rank(),
            host: self.host(),
            local_rank: self.local_rank(),
        }
    }

    pub fn set_options(&self, options: JobOptions) {
        *self.options.lock().unwrap() = options;
    }

    pub fn options(&self) -> JobOptions {
        *self.options.lock().unwrap()
    }

    /// How long a rank may be silent before the job goes on without it.
    pub fn set_rank_timeout(&self, timeout: Duration) {
        self.live.set_timeout(timeout);
    }

    /// "rank R (HOST)" for messages.
    pub fn who(&self) -> String {
        format!("rank {} ({})", self.rank(), self.host())
    }

    /// Records where each rank reads from (`--read-other-host`).
    pub fn set_partners(&self, partners: ReadOtherHost) {
        *self.partners.lock().unwrap() = Some(partners);
    }

    /// Each rank's target by rank, after its placeholders were filled in.
    pub fn targets(&self) -> Vec<String> {
        self.targets.lock().unwrap().clone()
    }

    pub fn partners(&self) -> Option<ReadOtherHost> {
        self.partners.lock().unwrap().clone()
    }

    /// Ends the whole job at once (an error or a panic on this rank).
    pub fn abort(&self, code: i32) -> ! {
        self.wire.abort(code)
    }
}

/// A rank sent nothing in the job's first exchange: nothing is open yet,
/// so the job ends at once, naming it.
fn silent_at_start(wire: &dyn Wire, rank: u32) -> ! {
    eprintln!(
        "Error: rank {rank} did not answer within {} s of the job's start: check that host (or give the launcher fewer ranks)",
        JOIN_TIMEOUT.as_secs()
    );
    wire.abort(crate::error::EXIT_IO)
}

/// The job's first exchange did not decode: nothing is open yet, so the
/// job ends at once, saying what arrived broken.
fn broken_at_start(wire: &dyn Wire, why: &str) -> ! {
    eprintln!(
        "Error: rank {}: {why}: check that every rank runs the same iocurve build",
        wire.rank()
    );
    wire.abort(crate::error::EXIT_INTERNAL)
}

#[cfg(test)]
#[path = "job_tests.rs"]
mod tests;
