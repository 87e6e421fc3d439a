//! The beat thread of a rank (see [`liveness`](super::liveness)): every
//! [`TICK`] it takes the beats and losses that came in and any `End`,
//! beats when one is due, and, on rank 0, gives up a rank silent for the
//! timeout; on another rank, gives up the job when rank 0 is silent.

use super::job::Job;
use super::liveness::{TICK, decode_loss, encode_loss};
use super::wire::Tag;
use crate::interrupt;
use crate::result::cluster::RankLoss;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

impl Job {
    /// Runs the beat thread until [`Job::close`]: the process leaves MPI.
    pub fn start_beating(&'static self) {
        if self.size() == 1 {
            return;
        }
        let spawned = std::thread::Builder::new()
            .name("iocurve-beat".into())
            .spawn(move || {
                let mut last_beat = None;
                while !self.live.closing.load(Ordering::Acquire) {
                    self.tick(&mut last_beat);
                    std::thread::sleep(TICK);
                }
            });
        if spawned.is_err() {
            eprintln!(
                "Warning: {}: no thread for the liveness beat; a rank that stops answering will hold the job",
                self.who()
            );
        }
    }

    /// Stops the beat thread (before MPI is finalized), waiting out its
    /// current tick.
    pub fn close(&self) {
        self.live.closing.store(true, Ordering::Release);
        std::thread::sleep(TICK + Duration::from_millis(10));
    }

    fn tick(&self, last_beat: &mut Option<Instant>) {
        self.heed_end();
        while let Some((from, _)) = self.wire.try_receive(None, Tag::Beat) {
            self.live.heard_from(from);
        }
        while let Some((from, bytes)) = self.wire.try_receive(None, Tag::Lost) {
            self.heed_loss(from, &bytes);
        }
        if self.abandoned() {
            return;
        }
        let stopping = interrupt::stop_flag().load(Ordering::Relaxed);
        let due = last_beat.is_none_or(|at| at.elapsed() >= self.live.beat_every(stopping));
        if due && !self.live.stalled() {
            let to: Vec<u32> = match self.is_root() {
                true => (1..self.size()).collect(),
                false => vec![0],
            };
            for rank in to {
                self.send(rank, Tag::Beat, &[]);
            }
            *last_beat = Some(Instant::now());
        }
        self.look_for_silence();
    }

    /// A loss rank 0 announced, or (on rank 0) a rank saying its own
    /// measurement stalled.
    fn heed_loss(&self, from: u32, bytes: &[u8]) {
        let Some((rank, why, after)) = decode_loss(bytes) else {
            return;
        };
        match self.is_root() {
            true => self.lose(from, RankLoss::Stalled, after),
            false => {
                self.live.mark_lost(rank, why, after);
                interrupt::stop_flag().store(true, Ordering::SeqCst);
            }
        }
    }

    fn look_for_silence(&self) {
        let timeout = self.live.timeout();
        let watched: Vec<u32> = match self.is_root() {
            true => (1..self.size()).collect(),
            false => vec![0],
        };
        for rank in watched {
            let silent = self.live.silent_for(rank);
            if silent >= timeout && !self.live.is_lost(rank) {
                self.lose(rank, RankLoss::StoppedAnswering, silent);
            }
        }
    }

    /// Goes on without `rank`: rank 0 names it (with its host) and tells
    /// every other rank, and the job stops, each rank restoring what it
    /// overwrote, handing over and exiting. A rank that loses rank 0 gives
    /// up on the job (rank 1 says so).
    pub(super) fn lose(&self, rank: u32, why: RankLoss, after: Duration) {
        if rank == self.rank() || !self.live.mark_lost(rank, why, after) {
            return;
        }
        interrupt::stop_flag().store(true, Ordering::SeqCst);
        if self.is_root() {
            eprintln!("{}", self.loss_line(rank, why, after));
            let bytes = encode_loss(rank, why, after);
            for other in 1..self.size() {
                self.send(other, Tag::Lost, &bytes);
            }
        } else if rank == 0 {
            self.end_code
                .store(crate::error::EXIT_IO, Ordering::Relaxed);
            self.abandoned.store(true, Ordering::Relaxed);
            // Once the job is stopping the launcher says why.
            if self.rank() == 1 && why != RankLoss::Vanished {
                eprintln!("{}", self.loss_line(rank, why, after));
            }
        }
    }

    /// This rank's own measurement moved nothing for the timeout: rank 0
    /// is told, and this rank stops beating (it cannot end a stuck I/O).
    pub(super) fn report_stall(&self, after: Duration) {
        self.live.set_stalled();
        match self.is_root() {
            // The others hear rank 0 fall silent.
            true => {}
            false => self.send(
                0,
                Tag::Lost,
                &encode_loss(self.rank(), RankLoss::Stalled, after),
            ),
        }
    }
}
