//! One rank's part in a job: who the ranks are, the checked steps every
//! rank takes together, the clocks, and the hand-over of results to rank 0.
//!
//! Every exchange is point-to-point through rank 0, with a label: a rank
//! that arrives at a different step than rank 0 (a test skipped on one
//! host, say) is named and the job ends, instead of two collectives
//! pairing up wrongly or waiting forever. Rank 0 never trusts the hosts'
//! clocks to agree: it measures each rank's offset by ping-pong before and
//! after the tests (see [`crate::analysis::cluster::clock`]).

use super::placeholders::RankNames;
use super::wire::{Tag, Wire, broadcast, gather};
use crate::analysis::cluster::clock::{ClockMap, OffsetEstimate, PingSample, estimate_offset};
use crate::analysis::cluster::merge::{MergeOptions, RankResult, merge};
use crate::engine::monotonic_now_ns;
use crate::interrupt;
use crate::result::RunResult;
use crate::result::cluster::{RankIdentity, ReadOtherHost};
use crate::workload::coordinate::Coordinator;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

/// Round trips per rank and per clock measurement; the shortest is kept.
const PINGS: usize = 24;

/// How often the stonewall's watcher looks for a finished rank. It shares
/// a core with the measuring thread when the launcher binds a rank to one
/// (Open MPI does by default): waking every 200 µs cost 13% of 400k IOPS
/// there, every 1 ms 4%, every 5 ms nothing measurable. The first-done
/// figure and `--stonewall` are then late by at most 5 ms.
const WATCH_EVERY: Duration = Duration::from_millis(5);

/// How long a wait for a message looks without pausing.
const SPIN_FIRST: Duration = Duration::from_micros(300);

/// How far ahead rank 0 sets a scheduled start: time for the go messages
/// to reach every rank (sent one by one) and for each to sleep until it.
const START_LEAD_NS: u64 = 2_000_000;
const START_LEAD_PER_RANK_NS: u64 = 20_000;

/// Sleeps until CLOCK_MONOTONIC reads `at` (at once for `None` or a time
/// past): sleeping most of the way, spinning the last stretch, since a
/// sleep overshoots by the scheduler's slack.
fn wait_until(at: Option<u64>) {
    let Some(at) = at else { return };
    // Never longer than the lead could ask: a wrong time must not hang.
    let latest = monotonic_now_ns() + 1_000_000_000;
    let at = at.min(latest);
    let spin = 200_000;
    let now = monotonic_now_ns();
    if at > now + spin {
        std::thread::sleep(Duration::from_nanos(at - now - spin));
    }
    while monotonic_now_ns() < at {
        std::hint::spin_loop();
    }
}

/// How long a rank ending the job waits for the others to wind down
/// (restore what they overwrote, remove their scratch files) before
/// `MPI_Abort` ends whatever is left.
const WIND_DOWN: Duration = Duration::from_secs(10);

/// The longest pause between two looks for an awaited message.
const POLL_AT_MOST: Duration = Duration::from_micros(100);

/// How long a rank asked to stop (the launcher's SIGTERM, Ctrl-C) still
/// waits for the others before it gives up on the job: long enough for
/// ranks that all stopped together to finish their exchanges, short enough
/// to restore preserved data before the launcher's SIGKILL (Open MPI waits
/// one second by default).
const GRACE_AFTER_STOP: Duration = Duration::from_millis(300);

/// The job's options that change how ranks work together.
#[derive(Debug, Clone, Copy, Default)]
pub struct JobOptions {
    pub stonewall: bool,
    pub shared_file: bool,
    pub read_other_host: bool,
}

/// This process's place in the job.
pub struct Job {
    wire: Box<dyn Wire>,
    /// Host names by rank, as the ranks reported them.
    hosts: Vec<String>,
    options: Mutex<JobOptions>,
    /// Rank 0: each rank's clock before the tests.
    clocks_before: Mutex<Vec<OffsetEstimate>>,
    /// Rank 0: each rank's filled-in target.
    targets: Mutex<Vec<String>>,
    /// Where each rank reads from under `--read-other-host`.
    partners: Mutex<Option<ReadOtherHost>>,
    /// Set when this rank gave up waiting for the others (a rank died and
    /// the launcher is ending the job): no more messages, no merge.
    abandoned: AtomicBool,
    /// The rank that ended the job (see [`Job::end_job`]), +1; 0 for none.
    ended_by: std::sync::atomic::AtomicU32,
}

/// What rank 0 hands every rank before anything runs: its command line
/// (placeholders not yet filled in) and a name for the job's files.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Agreed {
    pub args: Vec<String>,
    /// Rank 0's host and process id: unique to this job, the same on
    /// every rank.
    pub job_key: String,
}

/// Why a rank stops: the exit code and, on the rank that found it, the
/// line to print (other ranks were told and print nothing).
#[derive(Debug)]
pub struct Stop {
    pub code: i32,
    pub line: Option<String>,
}

impl Job {
    /// Joins the job: the ranks tell each other their host names.
    pub fn join(wire: Box<dyn Wire>, host: String) -> Job {
        let gathered = gather(&*wire, Tag::Hosts, host.into_bytes());
        let list = gathered.map(|all| {
            let names: Vec<String> = all
                .into_iter()
                .map(|b| String::from_utf8_lossy(&b).into_owned())
                .collect();
            serde_json::to_vec(&names).unwrap_or_default()
        });
        let shared = broadcast(&*wire, Tag::Hosts, list);
        let hosts: Vec<String> = serde_json::from_slice(&shared).unwrap_or_default();
        Job {
            wire,
            hosts,
            options: Mutex::new(JobOptions::default()),
            clocks_before: Mutex::new(Vec::new()),
            targets: Mutex::new(Vec::new()),
            partners: Mutex::new(None),
            abandoned: AtomicBool::new(false),
            ended_by: std::sync::atomic::AtomicU32::new(0),
        }
    }

    /// The rank that ended the job, when another rank did.
    pub fn ended_by(&self) -> Option<u32> {
        self.ended_by.load(Ordering::Relaxed).checked_sub(1)
    }

    /// Takes a waiting `End` from another rank, if any: this rank then
    /// stops, gives up on the job and winds down. True when one was there.
    fn heed_end(&self) -> bool {
        if self.ended_by().is_some() {
            return true;
        }
        if !self.wire.probe(Tag::End) {
            return false;
        }
        let (from, _) = self.wire.receive_any(Tag::End);
        self.ended_by.store(from + 1, Ordering::Relaxed);
        self.abandoned.store(true, Ordering::Relaxed);
        interrupt::stop_flag().store(true, Ordering::SeqCst);
        true
    }

    /// Ends the job from this rank (after an error or a panic here): every
    /// other rank is told, stops, restores what it overwrote, removes its
    /// scratch files and says it left; after at most [`WIND_DOWN`],
    /// `MPI_Abort` ends whatever is still running.
    pub fn end_job(&self, code: i32) -> ! {
        let mut waiting: Vec<u32> = (0..self.size()).filter(|r| *r != self.rank()).collect();
        for &rank in &waiting {
            self.wire.send(rank, Tag::End, &code.to_le_bytes());
        }
        let since = std::time::Instant::now();
        while !waiting.is_empty() && since.elapsed() < WIND_DOWN {
            let gone = if self.wire.probe(Tag::Left) {
                Some(self.wire.receive_any(Tag::Left).0)
            } else if self.wire.probe(Tag::End) {
                // Another rank is ending the job too; it will not wait
                // for this one's message to be answered.
                Some(self.wire.receive_any(Tag::End).0)
            } else {
                None
            };
            match gone {
                Some(rank) => waiting.retain(|r| *r != rank),
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
        let since = std::time::Instant::now();
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

    /// Waits for the next message of `tag` from `from` (any rank when
    /// `None`). MPI's receive cannot be interrupted, and a rank that died
    /// never sends: so this polls, and once this process is asked to stop
    /// it waits [`GRACE_AFTER_STOP`] more, then gives up on the job, so
    /// that the command can restore what it overwrote and exit.
    fn receive(&self, from: Option<u32>, tag: Tag) -> Option<(u32, Vec<u8>)> {
        let mut pause = Duration::from_micros(1);
        let mut stopped_at = None;
        let waiting = std::time::Instant::now();
        loop {
            if self.abandoned() || self.heed_end() {
                return None;
            }
            let ready = match from {
                Some(rank) => self.wire.probe_from(rank, tag),
                None => self.wire.probe(tag),
            };
            if ready {
                return Some(match from {
                    Some(rank) => (rank, self.wire.receive(rank, tag)),
                    None => self.wire.receive_any(tag),
                });
            }
            if interrupt::stop_flag().load(Ordering::Relaxed) {
                let since = *stopped_at.get_or_insert_with(std::time::Instant::now);
                if since.elapsed() >= GRACE_AFTER_STOP {
                    self.abandoned.store(true, Ordering::Relaxed);
                    return None;
                }
            }
            // Spin first (the start of a pass and a clock's round trip
            // are timed by how soon the message is seen), then back off.
            if waiting.elapsed() < SPIN_FIRST {
                std::hint::spin_loop();
                continue;
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(POLL_AT_MOST);
        }
    }

    /// Sends, unless this rank gave up on the job.
    fn send(&self, to: u32, tag: Tag, bytes: &[u8]) {
        if !self.abandoned() {
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
        self.hosts
            .get(self.rank() as usize)
            .map_or("", String::as_str)
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

    /// "rank R (HOST)" for messages.
    pub fn who(&self) -> String {
        format!("rank {} ({})", self.rank(), self.host())
    }

    /// Rank 0 decides (`verdict`: the arguments, or why they are refused)
    /// and every rank learns it: the arguments to go on with, else the stop.
    pub fn agree(&self, verdict: Option<Result<Agreed, Stop>>) -> Result<Agreed, Stop> {
        let message = verdict.map(|v| match v {
            Ok(agreed) => serde_json::to_vec(&Ok::<_, (i32, Option<String>)>(agreed)),
            Err(stop) => serde_json::to_vec(&Err::<Agreed, _>((stop.code, stop.line))),
        });
        let bytes = broadcast(
            &*self.wire,
            Tag::Config,
            message.map(|m| m.unwrap_or_default()),
        );
        match serde_json::from_slice::<Result<Agreed, (i32, Option<String>)>>(&bytes) {
            Ok(Ok(agreed)) => Ok(agreed),
            Ok(Err((code, line))) => Err(Stop {
                code,
                // Only rank 0 prints the reason.
                line: line.filter(|_| self.is_root()),
            }),
            Err(_) => Err(Stop {
                code: crate::error::EXIT_INTERNAL,
                line: Some(format!(
                    "{}: rank 0's arguments did not arrive whole",
                    self.who()
                )),
            }),
        }
    }

    /// Every rank's identity to rank 0, which compares them (`compare`
    /// names the hosts that differ) and tells every rank to go on or stop.
    pub fn check_identities(
        &self,
        mine: &RankIdentity,
        compare: impl Fn(&[RankIdentity]) -> Option<String>,
    ) -> Result<(), Stop> {
        // Waits here poll (a rank that fails before it reports ends the
        // job, and the others must hear it).
        let ended = || Stop {
            code: crate::error::EXIT_INTERRUPTED,
            line: None,
        };
        let bytes = serde_json::to_vec(mine).unwrap_or_default();
        let shared = if self.is_root() {
            let mut all = vec![bytes];
            for rank in 1..self.size() {
                all.push(self.receive(Some(rank), Tag::Identity).ok_or_else(ended)?.1);
            }
            let ids: Vec<RankIdentity> = all
                .iter()
                .map(|b| serde_json::from_slice(b).unwrap_or_default())
                .collect();
            let targets: Vec<String> = ids.iter().map(|i| i.target.clone()).collect();
            let verdict = serde_json::to_vec(&(compare(&ids).unwrap_or_default(), targets))
                .unwrap_or_default();
            for rank in 1..self.size() {
                self.send(rank, Tag::Identity, &verdict);
            }
            verdict
        } else {
            self.send(0, Tag::Identity, &bytes);
            self.receive(Some(0), Tag::Identity).ok_or_else(ended)?.1
        };
        let (line, targets): (String, Vec<String>) =
            serde_json::from_slice(&shared).unwrap_or_default();
        *self.targets.lock().unwrap() = targets;
        match line.is_empty() {
            true => Ok(()),
            false => Err(Stop {
                code: crate::error::EXIT_USAGE,
                line: self.is_root().then_some(line),
            }),
        }
    }

    /// Rank 0 measures every other rank's clock by ping-pong; returns the
    /// estimates by rank (rank 0's own is zero). Other ranks answer.
    fn measure_clocks(&self) -> Vec<OffsetEstimate> {
        let zero = OffsetEstimate {
            offset_ns: 0,
            bound_ns: 0,
            at_ns: monotonic_now_ns(),
        };
        if !self.is_root() {
            for _ in 0..PINGS {
                if self.receive(Some(0), Tag::Ping).is_none() {
                    break;
                }
                self.send(0, Tag::Pong, &monotonic_now_ns().to_le_bytes());
            }
            return Vec::new();
        }
        let mut all = vec![zero];
        for rank in 1..self.size() {
            let samples: Vec<PingSample> = (0..PINGS).map_while(|_| self.ping(rank)).collect();
            all.push(estimate_offset(&samples).unwrap_or(zero));
        }
        all
    }

    /// One round trip to `rank`. The answer is awaited by spinning on the
    /// probe (no sleep), since the sleep would lengthen the round trip and
    /// with it the bound.
    fn ping(&self, rank: u32) -> Option<PingSample> {
        let sent_ns = monotonic_now_ns();
        self.send(rank, Tag::Ping, &[]);
        let deadline = std::time::Instant::now() + Duration::from_millis(2);
        while !self.wire.probe_from(rank, Tag::Pong) && std::time::Instant::now() < deadline {
            std::hint::spin_loop();
        }
        let (_, answer) = self.receive(Some(rank), Tag::Pong)?;
        let received_ns = monotonic_now_ns();
        let remote_ns = answer
            .get(..8)
            .and_then(|b| b.try_into().ok())
            .map_or(0, u64::from_le_bytes);
        Some(PingSample {
            sent_ns,
            remote_ns,
            received_ns,
        })
    }

    /// The clocks before the tests (every rank takes part).
    pub fn clocks_before_tests(&self) {
        let measured = self.measure_clocks();
        *self.clocks_before.lock().unwrap() = measured;
    }

    /// Every rank arrives at `label`; rank 0 checks they all name the same
    /// step and lets them go. A rank at another step ends the job.
    pub fn arrive(&self, label: &str) {
        self.arrive_then(label, false);
    }

    /// [`Job::arrive`], and with `scheduled` every rank leaves at one
    /// instant rank 0 sets a little ahead: its own clock's time of it,
    /// mapped by the offset rank 0 measured, is in the go message, and the
    /// rank sleeps until then. Released one by one instead, the ranks of
    /// a big or oversubscribed job would start milliseconds apart.
    fn arrive_then(&self, label: &str, scheduled: bool) {
        if !self.is_root() {
            self.send(0, Tag::Arrive, label.as_bytes());
            if let Some((_, at)) = self.receive(Some(0), Tag::Go) {
                wait_until(
                    at.get(..8)
                        .and_then(|b| b.try_into().ok())
                        .map(u64::from_le_bytes),
                );
            }
            return;
        }
        for rank in 1..self.size() {
            let Some((_, theirs)) = self.receive(Some(rank), Tag::Arrive) else {
                return;
            };
            if theirs != label.as_bytes() {
                let line = format!(
                    "Error: the ranks went different ways: rank 0 ({}) is at \"{label}\" while rank {rank} ({}) is at \"{}\"; run the same command on targets alike",
                    self.host(),
                    self.hosts.get(rank as usize).map_or("", String::as_str),
                    String::from_utf8_lossy(&theirs)
                );
                eprintln!("{line}");
                self.end_job(crate::error::EXIT_INTERNAL);
            }
        }
        let clocks = self.clocks_before.lock().unwrap().clone();
        let start = (scheduled && clocks.len() == self.size() as usize).then(|| {
            monotonic_now_ns() + START_LEAD_NS + START_LEAD_PER_RANK_NS * u64::from(self.size())
        });
        for rank in 1..self.size() {
            let theirs = start.map(|t| t.saturating_add_signed(clocks[rank as usize].offset_ns));
            let go = theirs.map(u64::to_le_bytes);
            self.send(rank, Tag::Go, go.as_ref().map_or(&[][..], |b| &b[..]));
        }
        wait_until(start);
    }

    /// The end of the command: every rank arrives, the clocks are measured
    /// again, and every rank's result goes to rank 0, which returns the
    /// merged result. Other ranks return `None`.
    pub fn hand_over(&self, result: &RunResult) -> Option<Result<RunResult, String>> {
        self.arrive("end");
        let after = self.measure_clocks();
        let bytes = serde_json::to_vec(result).unwrap_or_default();
        if !self.is_root() {
            self.send(0, Tag::Result, &bytes);
            return None;
        }
        let mut all = vec![bytes];
        for rank in 1..self.size() {
            all.push(self.receive(Some(rank), Tag::Result)?.1);
        }
        Some(self.merge_at_root(all, after))
    }

    fn merge_at_root(
        &self,
        all: Vec<Vec<u8>>,
        after: Vec<OffsetEstimate>,
    ) -> Result<RunResult, String> {
        let before = self.clocks_before.lock().unwrap().clone();
        let targets = self.targets.lock().unwrap().clone();
        let mut ranks = Vec::new();
        for (rank, bytes) in all.iter().enumerate() {
            let result = RunResult::from_json(&String::from_utf8_lossy(bytes))
                .map_err(|e| format!("rank {rank}'s result did not arrive whole: {e}"))?;
            let host = self.hosts.get(rank).cloned().unwrap_or_default();
            let local_rank = self.hosts.iter().take(rank).filter(|h| **h == host).count() as u32;
            let clock = match (rank, before.get(rank), after.get(rank)) {
                (0, _, _) | (_, None, None) => ClockMap::identity(),
                (_, Some(&b), a) => ClockMap {
                    before: b,
                    after: a.copied(),
                },
                (_, None, Some(&a)) => ClockMap {
                    before: a,
                    after: None,
                },
            };
            ranks.push(RankResult {
                rank: rank as u32,
                host,
                local_rank,
                target: targets.get(rank).cloned().unwrap_or_default(),
                clock,
                result,
            });
        }
        let options = self.options();
        let merge_options = MergeOptions {
            stonewall: options.stonewall,
            shared_file: options.shared_file,
            read_other_host: self.partners.lock().unwrap().clone(),
        };
        merge(ranks, merge_options).map_err(|e| e.to_string())
    }

    /// Rank 0 sends every rank the job's exit code; every rank returns it.
    /// A rank that gave up on the job ends as interrupted.
    pub fn share_exit(&self, code: Option<i32>) -> i32 {
        let bytes = match code {
            Some(code) => {
                for rank in 1..self.size() {
                    self.send(rank, Tag::Exit, &code.to_le_bytes());
                }
                code.to_le_bytes().to_vec()
            }
            None => match self.receive(Some(0), Tag::Exit) {
                Some((_, bytes)) => bytes,
                None => return crate::error::EXIT_INTERRUPTED,
            },
        };
        bytes
            .get(..4)
            .and_then(|b| b.try_into().ok())
            .map_or(crate::error::EXIT_INTERNAL, i32::from_le_bytes)
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

    /// Tells every other rank this one finished its counted pass (and
    /// whether it failed), and waits until each has said the same; `heard`
    /// were received already. True when any rank failed.
    fn exchange_done(&self, failed: bool, heard: u32) -> bool {
        for rank in (0..self.size()).filter(|r| *r != self.rank()) {
            self.send(rank, Tag::Done, &[u8::from(failed)]);
        }
        let mut any_failed = failed;
        for _ in heard..self.size() - 1 {
            match self.receive(None, Tag::Done) {
                Some((_, bytes)) => any_failed |= bytes.first() == Some(&1),
                None => break,
            }
        }
        any_failed
    }

    /// A rank failed: every rank ends its command as if stopped, so that
    /// all of them reach the end together and rank 0 reports the failure.
    fn stop_everywhere(&self) {
        interrupt::stop_flag().store(true, Ordering::SeqCst);
    }
}

impl Coordinator for Job {
    fn before_counted(&self, label: &str) {
        self.arrive(label);
    }

    fn during_counted(
        &self,
        label: &str,
        stop: &AtomicBool,
        moved: &(dyn Fn() -> u64 + Sync),
        pass: &mut dyn FnMut(&(dyn Fn() + Sync)) -> bool,
    ) -> u64 {
        if self.abandoned() || self.size() == 1 {
            // No one to wait or watch for (and, alone, no watcher thread
            // to take time from the measuring one); a signal reaches the
            // pass through its own flag.
            pass(&|| {});
            return moved();
        }
        // Until `ready` has run, the step is in progress on the thread
        // that called it; the watcher touches MPI only after (MPI is
        // serialized, not multi-threaded).
        let armed = AtomicBool::new(false);
        let called = AtomicBool::new(false);
        let ready = || {
            if !called.swap(true, Ordering::AcqRel) {
                self.arrive_then(label, true);
                armed.store(true, Ordering::Release);
            }
        };
        let over = AtomicBool::new(false);
        let at_first_done = AtomicU64::new(u64::MAX);
        let heard = std::sync::atomic::AtomicU32::new(0);
        let peer_failed = AtomicBool::new(false);
        let stonewall = self.options().stonewall;
        let failed = std::thread::scope(|scope| {
            // The watcher alone calls MPI while the pass runs (the main
            // thread is measuring): MPI_THREAD_SERIALIZED holds.
            scope.spawn(|| {
                while !over.load(Ordering::Acquire) {
                    if self.abandoned() || !armed.load(Ordering::Acquire) {
                        std::thread::sleep(WATCH_EVERY);
                        continue;
                    }
                    if self.heed_end() {
                        stop.store(true, Ordering::Relaxed);
                    }
                    if heard.load(Ordering::Relaxed) < self.size() - 1 && self.wire.probe(Tag::Done)
                    {
                        let (_, bytes) = self.wire.receive_any(Tag::Done);
                        heard.fetch_add(1, Ordering::Relaxed);
                        if at_first_done.load(Ordering::Relaxed) == u64::MAX {
                            at_first_done.store(moved(), Ordering::Relaxed);
                        }
                        let failed = bytes.first() == Some(&1);
                        peer_failed.fetch_or(failed, Ordering::Relaxed);
                        if stonewall || failed {
                            stop.store(true, Ordering::Relaxed);
                        }
                    }
                    std::thread::sleep(WATCH_EVERY);
                }
            });
            let failed = pass(&ready);
            over.store(true, Ordering::Release);
            failed
        });
        // A pass that never got as far keeps the ranks in step all the same.
        ready();
        let first = match at_first_done.load(Ordering::Relaxed) {
            u64::MAX => moved(),
            seen => seen,
        };
        let heard = heard.load(Ordering::Relaxed);
        if self.exchange_done(failed, heard) || peer_failed.load(Ordering::Relaxed) {
            self.stop_everywhere();
        }
        first
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::threads::ThreadWire;
    use std::sync::atomic::AtomicU32;

    /// Runs `each` on every rank of an in-process job whose ranks sit on
    /// the given hosts; returns what each rank returned, by rank.
    fn on_ranks<T: Send>(hosts: &[&str], each: impl Fn(Job) -> T + Sync) -> Vec<T> {
        let wires = ThreadWire::job(hosts.len() as u32);
        std::thread::scope(|s| {
            let handles: Vec<_> = wires
                .into_iter()
                .zip(hosts)
                .map(|(wire, host)| {
                    let each = &each;
                    s.spawn(move || each(Job::join(Box::new(wire), host.to_string())))
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        })
    }

    #[test]
    fn ranks_learn_every_host_and_their_place_on_theirs() {
        let got = on_ranks(&["b", "a", "b", "a", "b"], |job| {
            (job.hosts().to_vec(), job.local_rank(), job.who())
        });
        for (rank, (hosts, _, _)) in got.iter().enumerate() {
            assert_eq!(hosts, &["b", "a", "b", "a", "b"], "rank {rank}");
        }
        let local: Vec<u32> = got.iter().map(|g| g.1).collect();
        assert_eq!(local, [0, 0, 1, 1, 2]);
        assert_eq!(got[3].2, "rank 3 (a)");
    }

    #[test]
    fn rank_zeros_verdict_reaches_every_rank_and_only_rank_zero_prints_it() {
        let got = on_ranks(&["h", "h", "h"], |job| {
            let verdict = job.is_root().then(|| {
                Err(Stop {
                    code: 2,
                    line: Some("Error: no".into()),
                })
            });
            job.agree(verdict).unwrap_err()
        });
        assert!(got.iter().all(|s| s.code == 2));
        assert_eq!(got[0].line.as_deref(), Some("Error: no"));
        assert!(got[1].line.is_none() && got[2].line.is_none());
    }

    #[test]
    fn the_targets_of_every_rank_reach_every_rank_and_a_difference_stops_all() {
        let got = on_ranks(&["a", "b"], |job| {
            let id = RankIdentity {
                rank: job.rank(),
                host: job.host().into(),
                build: ["x", "y"][job.rank() as usize].into(),
                target: format!("/t/{}", job.rank()),
                ..RankIdentity::default()
            };
            let verdict = job.check_identities(&id, |ids| {
                (ids[0].build != ids[1].build).then(|| "builds differ".to_string())
            });
            (verdict.map_err(|s| (s.code, s.line)), job.targets())
        });
        assert_eq!(
            got[0].0,
            Err((EXIT_USAGE_CODE, Some("builds differ".into())))
        );
        assert_eq!(got[1].0, Err((EXIT_USAGE_CODE, None)));
        assert_eq!(got[1].1, ["/t/0", "/t/1"]);
    }

    const EXIT_USAGE_CODE: i32 = crate::error::EXIT_USAGE;

    #[test]
    fn clocks_of_threads_in_one_process_agree_within_their_bound() {
        let got = on_ranks(&["a", "b", "c"], |job| job.measure_clocks());
        let at_root = &got[0];
        assert_eq!(at_root.len(), 3);
        for estimate in &at_root[1..] {
            // One clock for all threads: the true offset is 0.
            assert!(
                estimate.offset_ns.unsigned_abs() <= estimate.bound_ns,
                "{estimate:?}"
            );
        }
    }

    #[test]
    fn a_stonewall_stops_the_slower_ranks_when_the_first_finishes() {
        let finished = AtomicU32::new(0);
        let got = on_ranks(&["a", "b", "c"], |job| {
            job.set_options(JobOptions {
                stonewall: true,
                ..JobOptions::default()
            });
            let stop = AtomicBool::new(false);
            let moved = AtomicU64::new(0);
            let read_moved = || moved.load(Ordering::Relaxed);
            let at_first = job.during_counted("pass", &stop, &read_moved, &mut |ready| {
                // Held until every rank is built.
                ready();
                // Rank 0 finishes at once; the others would run for a
                // minute unless stopped.
                let limit = if job.rank() == 0 { 1 } else { 60_000 };
                for _ in 0..limit {
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    moved.fetch_add(1, Ordering::Relaxed);
                    std::thread::sleep(Duration::from_millis(1));
                }
                finished.fetch_add(1, Ordering::Relaxed);
                false
            });
            (at_first, read_moved(), stop.load(Ordering::Relaxed))
        });
        assert_eq!(finished.load(Ordering::Relaxed), 3);
        assert_eq!(got[0], (1, 1, false), "the first rank counts its own total");
        for (at_first, total, stopped) in &got[1..] {
            assert!(stopped, "{got:?}");
            assert!(at_first <= total && *total < 60_000, "{got:?}");
        }
    }

    #[test]
    fn ranks_at_the_same_steps_pass_them_together() {
        let got = on_ranks(&["a", "a", "b"], |job| {
            for step in ["one", "two", "three"] {
                job.arrive(step);
            }
            job.share_exit(job.is_root().then_some(7))
        });
        assert_eq!(got, [7, 7, 7]);
    }
}
