//! Whether the other ranks are still there: a beat every second between
//! rank 0 and every other rank, from a thread of its own, so that a rank
//! that stops answering (stopped, its host gone, a mount hung under its
//! measurement) is named and left out instead of holding the job for good.
//!
//! The beat comes from its own thread, not from the command's, because a
//! command may legitimately be busy for minutes without a message (filling
//! a scratch file, a slow rank's longer pass); what the beat cannot see, a
//! measurement stuck inside one I/O, the stonewall's watcher reports
//! instead (see [`crate::cluster::counted`]). Only rank 0 decides that a
//! rank is lost and tells the others; a rank that loses rank 0 gives up on
//! the job.

use crate::result::cluster::RankLoss;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// `--rank-timeout`'s default: how long a rank may be silent.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// How often the beat thread looks for messages.
pub const TICK: Duration = Duration::from_millis(50);

/// The longest gap between two beats (shorter for a short timeout, and a
/// beat every tick once the job is stopping, when silence must be told
/// from a rank busy restoring within a fraction of a second).
const BEAT_AT_MOST: Duration = Duration::from_secs(1);

/// What this rank knows of the others' liveness.
pub struct Liveness {
    timeout_ms: AtomicU64,
    /// When each rank was last heard from, by rank.
    heard: Mutex<Vec<Instant>>,
    /// Each rank given up, with how and after how long silent.
    lost: Mutex<Vec<Option<(RankLoss, Duration)>>>,
    /// This rank's own measurement moved nothing for the timeout: it no
    /// longer beats, so the others treat it as silent.
    stalled: AtomicBool,
    /// Set when the process leaves MPI: the beat thread ends.
    pub(super) closing: AtomicBool,
}

impl Liveness {
    pub fn new(size: u32) -> Liveness {
        let now = Instant::now();
        Liveness {
            timeout_ms: AtomicU64::new(DEFAULT_TIMEOUT.as_millis() as u64),
            heard: Mutex::new(vec![now; size as usize]),
            lost: Mutex::new(vec![None; size as usize]),
            stalled: AtomicBool::new(false),
            closing: AtomicBool::new(false),
        }
    }

    pub fn set_timeout(&self, timeout: Duration) {
        let ms = timeout.as_millis().clamp(1, u128::from(u64::MAX)) as u64;
        self.timeout_ms.store(ms, Ordering::Relaxed);
        // Silence is counted from when the bound is known.
        self.heard_from_all();
    }

    pub fn timeout(&self) -> Duration {
        Duration::from_millis(self.timeout_ms.load(Ordering::Relaxed))
    }

    /// The gap between two beats: a fifth of the timeout, at most a second,
    /// at least a tick.
    pub fn beat_every(&self, stopping: bool) -> Duration {
        match stopping {
            true => TICK,
            false => (self.timeout() / 5).clamp(TICK, BEAT_AT_MOST),
        }
    }

    pub fn heard_from(&self, rank: u32) {
        if let Some(at) = self.heard.lock().unwrap().get_mut(rank as usize) {
            *at = Instant::now();
        }
    }

    fn heard_from_all(&self) {
        let now = Instant::now();
        self.heard
            .lock()
            .unwrap()
            .iter_mut()
            .for_each(|at| *at = now);
    }

    /// How long since `rank` was last heard from.
    pub fn silent_for(&self, rank: u32) -> Duration {
        self.heard
            .lock()
            .unwrap()
            .get(rank as usize)
            .map_or(Duration::ZERO, Instant::elapsed)
    }

    pub fn is_lost(&self, rank: u32) -> bool {
        self.lost
            .lock()
            .unwrap()
            .get(rank as usize)
            .is_some_and(Option::is_some)
    }

    /// Records `rank` as lost; true the first time.
    pub fn mark_lost(&self, rank: u32, why: RankLoss, after: Duration) -> bool {
        let mut lost = self.lost.lock().unwrap();
        match lost.get_mut(rank as usize) {
            Some(slot @ None) => {
                *slot = Some((why, after));
                true
            }
            _ => false,
        }
    }

    /// Every rank lost so far: (rank, how, after how long).
    pub fn lost(&self) -> Vec<(u32, RankLoss, Duration)> {
        self.lost
            .lock()
            .unwrap()
            .iter()
            .enumerate()
            .filter_map(|(r, l)| l.map(|(why, after)| (r as u32, why, after)))
            .collect()
    }

    pub fn any_lost(&self) -> bool {
        self.lost.lock().unwrap().iter().any(Option::is_some)
    }

    pub fn set_stalled(&self) {
        self.stalled.store(true, Ordering::Relaxed);
    }

    pub fn stalled(&self) -> bool {
        self.stalled.load(Ordering::Relaxed)
    }
}

/// A lost rank on the wire: its rank, how, and after how many ms.
pub fn encode_loss(rank: u32, why: RankLoss, after: Duration) -> Vec<u8> {
    let code: u8 = match why {
        RankLoss::StoppedAnswering => 0,
        RankLoss::Stalled => 1,
        RankLoss::Vanished => 2,
    };
    let mut bytes = rank.to_le_bytes().to_vec();
    bytes.push(code);
    bytes.extend((after.as_millis() as u64).to_le_bytes());
    bytes
}

pub fn decode_loss(bytes: &[u8]) -> Option<(u32, RankLoss, Duration)> {
    let rank = u32::from_le_bytes(bytes.get(..4)?.try_into().ok()?);
    let why = match bytes.get(4)? {
        0 => RankLoss::StoppedAnswering,
        1 => RankLoss::Stalled,
        _ => RankLoss::Vanished,
    };
    let ms = u64::from_le_bytes(bytes.get(5..13)?.try_into().ok()?);
    Some((rank, why, Duration::from_millis(ms)))
}

/// The words for a lost rank's line: "stopped answering for 30 s".
pub fn loss_words(why: RankLoss, after: Duration) -> String {
    let secs = format!("{:.1} s", after.as_secs_f64());
    match why {
        RankLoss::StoppedAnswering => format!("stopped answering for {secs}"),
        RankLoss::Stalled => format!("moved no data for {secs} (a hung mount or device?)"),
        RankLoss::Vanished => "did not answer once the job was stopped (it died?)".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_loss_crosses_the_wire_whole_and_is_recorded_once() {
        let bytes = encode_loss(7, RankLoss::Stalled, Duration::from_millis(30_500));
        assert_eq!(
            decode_loss(&bytes),
            Some((7, RankLoss::Stalled, Duration::from_millis(30_500)))
        );
        assert_eq!(decode_loss(&bytes[..6]), None);
        let live = Liveness::new(3);
        assert!(live.mark_lost(2, RankLoss::Vanished, Duration::ZERO));
        assert!(!live.mark_lost(2, RankLoss::StoppedAnswering, Duration::ZERO));
        assert!(!live.mark_lost(9, RankLoss::Vanished, Duration::ZERO));
        assert_eq!(live.lost(), [(2, RankLoss::Vanished, Duration::ZERO)]);
        assert!(live.is_lost(2) && !live.is_lost(1));
    }

    #[test]
    fn beats_come_five_times_per_timeout_within_bounds() {
        let live = Liveness::new(2);
        assert_eq!(live.beat_every(false), Duration::from_secs(1));
        live.set_timeout(Duration::from_secs(2));
        assert_eq!(live.beat_every(false), Duration::from_millis(400));
        live.set_timeout(Duration::from_millis(100));
        assert_eq!(live.beat_every(false), TICK);
        assert_eq!(live.beat_every(true), TICK);
    }
}
