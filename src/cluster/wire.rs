//! The few messages ranks exchange, as one small trait: point-to-point
//! messages of bytes with a tag, a probe, and an abort. Everything else
//! (broadcast, gather, the checked barrier) is built on these here, so that
//! a mismatch between ranks is seen and named instead of hanging in a
//! collective, and so that the unit tests can run every exchange on threads
//! of one process ([`threads`](super::threads)) without MPI.

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
}

/// One rank's view of the job.
pub trait Wire: Send + Sync {
    fn rank(&self) -> u32;
    fn size(&self) -> u32;
    /// Sends bytes to one rank (small messages return at once).
    fn send(&self, to: u32, tag: Tag, bytes: &[u8]);
    /// Waits for the next message of `tag` from `from`.
    fn receive(&self, from: u32, tag: Tag) -> Vec<u8>;
    /// Waits for the next message of `tag` from any rank: (rank, bytes).
    fn receive_any(&self, tag: Tag) -> (u32, Vec<u8>);
    /// True when a message of `tag` from any rank is waiting.
    fn probe(&self, tag: Tag) -> bool;
    /// True when a message of `tag` from `from` is waiting.
    fn probe_from(&self, from: u32, tag: Tag) -> bool;
    /// Ends every rank of the job with `code`.
    fn abort(&self, code: i32) -> !;
}

/// Rank 0 sends `bytes` to every other rank; every rank returns them.
pub fn broadcast(wire: &dyn Wire, tag: Tag, bytes: Option<Vec<u8>>) -> Vec<u8> {
    if wire.rank() == 0 {
        let bytes = bytes.unwrap_or_default();
        for to in 1..wire.size() {
            wire.send(to, tag, &bytes);
        }
        bytes
    } else {
        wire.receive(0, tag)
    }
}

/// Every rank sends `bytes` to rank 0, which returns them by rank; other
/// ranks return `None`.
pub fn gather(wire: &dyn Wire, tag: Tag, bytes: Vec<u8>) -> Option<Vec<Vec<u8>>> {
    if wire.rank() != 0 {
        wire.send(0, tag, &bytes);
        return None;
    }
    let mut all = vec![bytes];
    for from in 1..wire.size() {
        all.push(wire.receive(from, tag));
    }
    Some(all)
}
