//! The few messages ranks exchange, as one small trait: point-to-point
//! messages of bytes with a tag, taken only when already there, and an
//! abort. Everything else (broadcast, gather, the checked barrier) is
//! built on these, so that a mismatch between ranks is seen and named
//! instead of hanging in a collective, every wait can have a deadline (a
//! rank that stops answering must not hold the others for good), and the
//! unit tests can run every exchange on threads of one process
//! ([`threads`](super::threads)) without MPI.

use std::time::{Duration, Instant};

/// What a message is for; a rank waits only for the kind it expects next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(i32)]
pub enum Tag {
    /// Rank 0's verdict on the arguments, then the arguments.
    Config = 1,
    /// A rank's identity, sent to rank 0.
    Identity = 2,
    /// Rank 0's ping and a rank's answer with its clock.
    Ping = 3,
    Pong = 4,
    /// A rank arriving at a step (a counted pass, the end), and rank 0's go.
    Arrive = 5,
    Go = 6,
    /// A rank finished its counted pass (the stonewall's signal).
    Done = 7,
    /// A rank's result, sent to rank 0 at the end.
    Result = 8,
    /// Rank 0's exit code for every rank.
    Exit = 9,
    /// The host names, sent by rank 0 to every rank.
    Hosts = 10,
    /// A rank is ending the job (an error, a panic): wind down and say so.
    End = 11,
    /// A rank wound down after another ended the job.
    Left = 12,
    /// "Still here": every rank to rank 0, rank 0 to every rank.
    Beat = 13,
    /// Rank 0 to the others: a rank is lost and left out. A rank to rank
    /// 0: its own measurement stopped moving.
    Lost = 14,
}

/// One rank's view of the job. Every call returns at once.
pub trait Wire: Send + Sync {
    fn rank(&self) -> u32;
    fn size(&self) -> u32;
    /// Sends bytes to one rank (small messages return at once).
    fn send(&self, to: u32, tag: Tag, bytes: &[u8]);
    /// Takes the next message of `tag` from `from` (any rank when `None`)
    /// if one is there: (sender, bytes).
    fn try_receive(&self, from: Option<u32>, tag: Tag) -> Option<(u32, Vec<u8>)>;
    /// Ends every rank of the job with `code`.
    fn abort(&self, code: i32) -> !;
}

/// The longest pause between two looks of [`receive_within`].
const POLL_AT_MOST: Duration = Duration::from_millis(1);

/// Waits up to `time` for a message of `tag` from `from`, looking with a
/// pause that grows to a millisecond (a wait costs no CPU to speak of).
pub fn receive_within(wire: &dyn Wire, from: u32, tag: Tag, time: Duration) -> Option<Vec<u8>> {
    let since = Instant::now();
    let mut pause = Duration::from_micros(10);
    loop {
        if let Some((_, bytes)) = wire.try_receive(Some(from), tag) {
            return Some(bytes);
        }
        if since.elapsed() >= time {
            return None;
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(POLL_AT_MOST);
    }
}

/// Rank 0 sends `bytes` to every other rank; every rank returns them, or
/// `Err(0)` when rank 0 said nothing within `time`.
pub fn broadcast(
    wire: &dyn Wire,
    tag: Tag,
    bytes: Option<Vec<u8>>,
    time: Duration,
) -> Result<Vec<u8>, u32> {
    if wire.rank() == 0 {
        let bytes = bytes.unwrap_or_default();
        for to in 1..wire.size() {
            wire.send(to, tag, &bytes);
        }
        Ok(bytes)
    } else {
        receive_within(wire, 0, tag, time).ok_or(0)
    }
}

/// Every rank sends `bytes` to rank 0, which returns them by rank; other
/// ranks return `None`. `Err(rank)` names the first rank that sent
/// nothing within `time`.
pub fn gather(
    wire: &dyn Wire,
    tag: Tag,
    bytes: Vec<u8>,
    time: Duration,
) -> Result<Option<Vec<Vec<u8>>>, u32> {
    if wire.rank() != 0 {
        wire.send(0, tag, &bytes);
        return Ok(None);
    }
    let deadline = Instant::now() + time;
    let mut all = vec![bytes];
    for from in 1..wire.size() {
        let left = deadline.saturating_duration_since(Instant::now());
        all.push(receive_within(wire, from, tag, left).ok_or(from)?);
    }
    Ok(Some(all))
}
