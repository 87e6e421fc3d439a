//! The steps every rank takes together: rank 0's verdict on the
//! arguments, the identity check, the clocks, the checked barrier before
//! each counted pass, and the hand-over of results to rank 0.
//!
//! Rank 0 never trusts the hosts' clocks to agree: it measures each rank's
//! offset by ping-pong before and after the tests (see
//! [`crate::analysis::cluster::clock`]). A rank the job lost (see
//! [`liveness`](super::liveness)) is skipped at every step, and rank 0
//! merges the ranks that are left, marked interrupted, naming the lost.

use super::codec::{decode, encode};
use super::job::{Job, Stop};
use super::liveness::loss_words;
use super::wire::Tag;
use crate::analysis::cluster::clock::{ClockMap, OffsetEstimate, PingSample, estimate_offset};
use crate::analysis::cluster::merge::{MergeOptions, RankResult, merge};
use crate::engine::monotonic_now_ns;
use crate::result::RunResult;
use crate::result::cluster::{LostRank, RankIdentity};
use std::time::Duration;

/// Round trips per rank and per clock measurement; the shortest is kept.
const PINGS: usize = 24;

/// How far ahead rank 0 sets a scheduled start: time for the go messages
/// to reach every rank (sent one by one), for a rank that waited a while
/// and looks every [`POLL_MEDIUM`](super::job::POLL_MEDIUM) to see its
/// go, and to sleep until it. (A rank that waited over a second looks
/// every 5 ms and may start up to 2 ms late; the start skew shows it.)
const START_LEAD_NS: u64 = 3_000_000;
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

/// What rank 0 hands every rank before anything runs: its command line
/// (placeholders not yet filled in) and a name for the job's files.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Agreed {
    pub args: Vec<String>,
    /// Rank 0's host and process id: unique to this job, the same on
    /// every rank.
    pub job_key: String,
}

impl Job {
    /// The stop of a message that did not encode or decode: an internal
    /// failure, said by this rank.
    fn broken(&self, why: String) -> Stop {
        Stop {
            code: crate::error::EXIT_INTERNAL,
            line: Some(format!("{}: {why}", self.who())),
        }
    }

    /// The stop of a rank whose job ended elsewhere (or lost rank 0).
    fn ended(&self) -> Stop {
        Stop {
            code: self.end_code(),
            line: None,
        }
    }

    /// Rank 0 decides (`verdict`: the arguments, or why they are refused)
    /// and every rank learns it: the arguments to go on with, else the stop.
    pub fn agree(&self, verdict: Option<Result<Agreed, Stop>>) -> Result<Agreed, Stop> {
        let bytes = match verdict {
            Some(v) => {
                let message = match v {
                    Ok(agreed) => encode(&Ok::<_, (i32, Option<String>)>(agreed), "the arguments"),
                    Err(stop) => encode(&Err::<Agreed, _>((stop.code, stop.line)), "the refusal"),
                };
                // Sent even when broken (empty), so that no rank waits.
                let bytes = message.as_ref().map_or(Vec::new(), Clone::clone);
                for rank in 1..self.size() {
                    self.send(rank, Tag::Config, &bytes);
                }
                message.map_err(|e| self.broken(e))?
            }
            None => match self.receive(Some(0), Tag::Config) {
                Some((_, bytes)) => bytes,
                None => return Err(self.ended()),
            },
        };
        match serde_json::from_slice::<Result<Agreed, (i32, Option<String>)>>(&bytes) {
            Ok(Ok(agreed)) => Ok(agreed),
            Ok(Err((code, line))) => Err(Stop {
                code,
                // Only rank 0 prints the reason.
                line: line.filter(|_| self.is_root()),
            }),
            Err(e) => Err(Stop {
                code: crate::error::EXIT_INTERNAL,
                line: Some(format!(
                    "{}: rank 0's arguments did not arrive whole: {e}",
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
        let bytes = encode(mine, "this rank's identity").map_err(|e| self.broken(e))?;
        let shared = if self.is_root() {
            let mut all = vec![bytes];
            for rank in 1..self.size() {
                match self.receive(Some(rank), Tag::Identity) {
                    Some((_, theirs)) => all.push(theirs),
                    // Lost before anything was opened: the line is out.
                    None if self.lost_any() => {
                        return Err(Stop {
                            code: crate::error::EXIT_IO,
                            line: None,
                        });
                    }
                    None => return Err(self.ended()),
                }
            }
            let ids: Vec<RankIdentity> = all
                .iter()
                .enumerate()
                .map(|(rank, b)| decode(b, &format!("rank {rank}'s identity")))
                .collect::<Result<_, _>>()
                .map_err(|e| self.broken(e))?;
            let targets: Vec<String> = ids.iter().map(|i| i.target.clone()).collect();
            let verdict = encode(&(compare(&ids).unwrap_or_default(), targets), "the verdict")
                .map_err(|e| self.broken(e))?;
            for rank in 1..self.size() {
                self.send(rank, Tag::Identity, &verdict);
            }
            verdict
        } else {
            self.send(0, Tag::Identity, &bytes);
            let Some((_, verdict)) = self.receive(Some(0), Tag::Identity) else {
                return Err(self.ended());
            };
            verdict
        };
        let (line, targets): (String, Vec<String>) =
            decode(&shared, "rank 0's verdict on the identities").map_err(|e| self.broken(e))?;
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
    /// estimates by rank (rank 0's own is zero, as is a lost rank's).
    /// Other ranks answer.
    pub(super) fn measure_clocks(&self) -> Vec<OffsetEstimate> {
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

    /// One round trip to `rank`. The answer is awaited by spinning (no
    /// sleep) for up to 2 ms, since a sleep would lengthen the round trip
    /// and with it the bound.
    fn ping(&self, rank: u32) -> Option<PingSample> {
        let sent_ns = monotonic_now_ns();
        self.send(rank, Tag::Ping, &[]);
        let deadline = std::time::Instant::now() + Duration::from_millis(2);
        let mut answer = None;
        while answer.is_none() && std::time::Instant::now() < deadline {
            answer = self.wire.try_receive(Some(rank), Tag::Pong);
            std::hint::spin_loop();
        }
        let (_, answer) = match answer {
            Some(a) => a,
            None => self.receive(Some(rank), Tag::Pong)?,
        };
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
    pub(super) fn arrive_then(&self, label: &str, scheduled: bool) {
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
            let theirs = match self.receive(Some(rank), Tag::Arrive) {
                Some((_, theirs)) => theirs,
                None if self.live.is_lost(rank) => continue,
                None => return,
            };
            if theirs != label.as_bytes() {
                let line = format!(
                    "Error: the ranks went different ways: rank 0 ({}) is at \"{label}\" while rank {rank} ({}) is at \"{}\"; run the same command on targets alike",
                    self.host(),
                    self.host_of(rank),
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
    /// merged result (of the ranks left, when the job lost some). Other
    /// ranks return `None`.
    pub fn hand_over(&self, result: &RunResult) -> Option<Result<RunResult, String>> {
        self.arrive("end");
        let after = self.measure_clocks();
        let bytes = encode(result, "this rank's result");
        if !self.is_root() {
            // Sent even when broken (empty): rank 0 names it.
            self.send(0, Tag::Result, bytes.as_deref().unwrap_or_default());
            return bytes.err().map(Err);
        }
        let bytes = match bytes {
            Ok(bytes) => bytes,
            Err(e) => return Some(Err(e)),
        };
        let mut all = vec![(0, bytes)];
        for rank in 1..self.size() {
            match self.receive(Some(rank), Tag::Result) {
                Some((_, theirs)) => all.push((rank, theirs)),
                None if self.live.is_lost(rank) => continue,
                None => return None,
            }
        }
        Some(self.merge_at_root(all, after))
    }

    fn merge_at_root(
        &self,
        all: Vec<(u32, Vec<u8>)>,
        after: Vec<OffsetEstimate>,
    ) -> Result<RunResult, String> {
        let before = self.clocks_before.lock().unwrap().clone();
        let targets = self.targets.lock().unwrap().clone();
        let mut ranks = Vec::new();
        for (rank, bytes) in &all {
            let rank = *rank as usize;
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
        let mut merged = merge(ranks, merge_options).map_err(|e| e.to_string())?;
        self.note_lost(&mut merged);
        Ok(merged)
    }

    /// A merge without every rank: interrupted, the job's size kept, and
    /// each lost rank named.
    fn note_lost(&self, merged: &mut RunResult) {
        let lost = self.live.lost();
        if lost.is_empty() {
            return;
        }
        merged.interrupted = true;
        if let Some(mpi) = merged.mpi.as_mut() {
            mpi.size = self.size();
            mpi.lost = lost
                .into_iter()
                .map(|(rank, why, after)| LostRank {
                    rank,
                    host: self.host_of(rank).to_string(),
                    why,
                    after_ns: after.as_nanos() as u64,
                    legacy_after_ms: None,
                })
                .collect();
        }
    }

    /// Rank 0 sends every rank the job's exit code; every rank returns it.
    /// A job that lost a rank to silence ends as an I/O failure; a rank
    /// that gave up on the job ends with the code it was given.
    pub fn share_exit(&self, code: Option<i32>) -> i32 {
        let bytes = match code {
            Some(code) => {
                let code = self.with_losses(code);
                for rank in 1..self.size() {
                    self.send(rank, Tag::Exit, &code.to_le_bytes());
                }
                code.to_le_bytes().to_vec()
            }
            None => match self.receive(Some(0), Tag::Exit) {
                Some((_, bytes)) => bytes,
                None => return self.end_code(),
            },
        };
        bytes
            .get(..4)
            .and_then(|b| b.try_into().ok())
            .map_or(crate::error::EXIT_INTERNAL, i32::from_le_bytes)
    }

    /// The job's code once it lost a rank: an I/O failure (3) in place of
    /// success or an interruption the loss caused.
    fn with_losses(&self, code: i32) -> i32 {
        let silent = self
            .live
            .lost()
            .iter()
            .any(|(_, why, _)| *why != crate::result::cluster::RankLoss::Vanished);
        match (silent, code) {
            (true, 0 | crate::error::EXIT_INTERRUPTED) => crate::error::EXIT_IO,
            _ => code,
        }
    }

    /// The line naming a lost rank.
    pub(super) fn loss_line(
        &self,
        rank: u32,
        why: crate::result::cluster::RankLoss,
        after: Duration,
    ) -> String {
        format!(
            "Error: rank {rank} ({}) {}; the job ends without it",
            self.host_of(rank),
            loss_words(why, after)
        )
    }
}
