//! A simulated flash card on a virtual clock: the ground truth the flash
//! detectors are tested against, deterministically and in milliseconds.
//!
//! Why: the detectors of `iocurve flash` read geometry out of timings, and
//! the only honest test of such a reading is a device whose geometry is
//! known. The model follows the published descriptions of cheap flash
//! controllers (Arnd Bergmann's flashbench notes, the SD Association's
//! simplified physical layer, the f3 documentation), not any real card:
//!
//! * every command costs a fixed `cmd` time plus the transfer at `read` or
//!   `write` speed;
//! * a read that straddles an allocation-unit (AU) boundary costs a second
//!   command time (two erase blocks are looked up); one that straddles a
//!   page boundary costs a quarter of one;
//! * a write programs whole pages, so a write smaller than a page costs a
//!   whole page;
//! * the controller keeps `open_au` AUs open, least recently used first out;
//!   writing to another one closes the oldest, which costs copying the part
//!   of it that was not written (garbage collection of a whole AU for a few
//!   small writes, nothing for an AU written from end to end);
//! * with `cache` bytes of write cache (an SLC region), writes land at
//!   `burst` speed while the cache drains at `write` speed in the
//!   background; a full cache makes a write wait for room;
//! * beyond `real` bytes (any multiple of 512) the card is a counterfeit of
//!   one of the kinds the f3 documentation and its issue tracker describe
//!   (`fake=`): addresses wrap around (`wrap`, `address mod real`, the
//!   default), writes are dropped and reads return zeros (`zeros`) or the
//!   old contents (`stale`, a fixed pattern per address), or transfers fail
//!   with an I/O error (`eio`); with a cache, the last `cache` bytes written
//!   read back from the cache by their logical address, which hides every
//!   kind from an immediate check (and, for `eio`, accepts the write);
//! * `link`, when given, caps every transfer like a slow reader would;
//! * with `move` (the move performance Pm of the SD specification's
//!   performance model, which SDHC cards have and SDXC cards do not), the
//!   controller knows which parts of each AU hold data ("used", tracked in
//!   64ths of an AU): closing an AU relocates, at `move` speed, the used
//!   parts that were not rewritten while it was open, and nothing else (a
//!   free part needs no copy). An AU in which Nu of Nt recording units are
//!   used, its Nt − Nu free ones written, therefore costs
//!   (Nt − Nu)·RU/Pw + Nu·RU/Pm: the specification's P(Nu) curve. Without
//!   `move` the close law above (copy what was not written) stays. Behind a
//!   write cache the model keeps no AU state, so neither law shows there;
//! * with `fat` (a busy time), writes starting in the first 16 MiB (the FAT
//!   area, which cheap controllers manage apart) cost the command, their
//!   page programs and that busy time, and leave the open AUs and the cache
//!   alone; with `fat_max` every `fat_every`-th of them is busy that long
//!   instead (the periodic spikes of a FAT-area merge), which is what the
//!   SD specification's T_FW limits (mean of 8, maximum) are about.
//!
//! Real cards do more than that (issue 37); each law below has an option
//! whose default leaves the card exactly as above (`laws`, `cache`):
//!
//! * `slow_end`: read and write speeds fall linearly from 1× at offset 0 to
//!   that fraction at the card's end (dies or zones slower than others);
//!   a transfer goes at the speed where it starts;
//! * `cache_min`: the usable cache shrinks linearly from `cache` on an
//!   empty card to `cache_min` once every part of it holds data (a dynamic
//!   SLC cache is made of free blocks; counted in 4096ths of the card);
//! * `drain`: the speed the cache drains at, if not `write`;
//! * `pause`, `pause_every`, `jitter`, `seed`: a write that completes
//!   `pause_every` bytes written (anywhere) waits `pause` more (garbage
//!   collection, thermal throttling); with `jitter` each period, and each
//!   period of the FAT spikes, is moved by up to ±that percentage, from a
//!   stream seeded by `seed` (the same spec, the same pauses);
//! * `through`: with a cache, a write's medium work (its page programs at
//!   the drain speed, the AU it closes or the used data it moves, its FAT
//!   busy time) queues behind the cache and drains in order; the write
//!   costs the command and its transfer at `burst`, and waits only until
//!   the bytes the cache still holds fit it (without, a cache bypasses
//!   those laws);
//! * `read_step`, `read_jitter`: a read across an AU boundary costs that
//!   many commands more (0: a stick whose reads show no erase-block step;
//!   never less than a page boundary's quarter), varied per boundary by
//!   up to ±`read_jitter` percent, the same for the same boundary;
//! * `hide_for`: a counterfeit's cache hides a write for that long only,
//!   then has drained it to the medium, where what lies beyond the real
//!   size is lost as the fake kind says.
//!
//! Data is really kept (a sparse map of written 4 KiB chunks at their
//! physical address), so wrap-around is visible to reads. Unwritten chunks
//! read as zeros. The clock is the device's own: the engine advances it by
//! the cost of each operation, so a run of "ten seconds" takes the
//! milliseconds the host needs to simulate it, and allocations on the host
//! cannot disturb the figures.
//!
//! The parts: `params` (the `sim:` options, defaults and checks), `card`
//! (the timing model, device and clock), `laws` (the laws of real cards
//! above), `cache` (the write cache's two laws), `contents` (what the card
//! holds, the counterfeit kinds and the cache's copy) and `engine` (the
//! [`Engine`](crate::engine::Engine) on it).

mod cache;
mod card;
mod contents;
mod engine;
mod laws;
mod params;

pub use card::{SimClock, SimDevice};
pub use engine::SimEngine;
pub use params::{FAT_AREA, FakeKind, SECTOR, SIM_HELP, SimParams};
