//! Pw timed again at places spread toward the card's end, after the
//! cache-exhausting writes: a card whose speed falls with the offset meets
//! a class only where it is slowest.

use super::{ClassPlan, mb_s, write_au};
use crate::flash::FlashIo;
use std::io;

/// Places over the rest of the card where Pw is timed again.
const PLACES: u64 = 4;

/// Pw at [`PLACES`] places spread from the region written to the card's
/// end, two whole AUs at each, the better of the two (a pause of the card
/// slows one write, not two): the slowest place's, MB/s. Issue 37: a card
/// whose speed falls toward its end (to 30% of its start) met C10 at
/// medium from the region near its start. Each place's AUs beyond what
/// the Pw writes claimed are claimed before they are written. Behind a
/// cache that queues the medium's work, a write pays for what was written
/// a cache's worth before it: the pair at the card's end, the last and
/// on such cards the slowest, is first written over `lead` bytes, so that
/// the pair timed pays for its own place (issue 37: a card slowest at its
/// end was timed there at its region's speed). The places before it pay
/// for the region's work or an earlier place's, no slower than their own
/// where the speed falls toward the end; leading each would cost four
/// times the cache. The lead is not capped: at 2 GiB, 10 more answers at
/// high went wrong over 6,000 cards.
pub(super) fn slowest_place(
    io: &mut dyn FlashIo,
    plan: &ClassPlan,
    ru: &[u8],
    claimed: u64,
    lead: u64,
) -> io::Result<Option<f64>> {
    let claimed_end = plan.pw_offset().saturating_add(claimed);
    let pair = plan.au.saturating_mul(2);
    let spacing = |room: u64| room / PLACES / plan.au.max(1) * plan.au;
    // Beyond the region the Pw writes claimed; when the card has no room
    // there, they covered it to its end, and the places lie within it.
    let beyond = spacing(plan.card_bytes.saturating_sub(claimed_end));
    let (base, spacing) = match beyond >= pair {
        true => (claimed_end, beyond),
        false => (plan.pw_offset(), spacing(claimed)),
    };
    if spacing < pair {
        return Ok(None);
    }
    let mut slowest = f64::INFINITY;
    for k in 1..=PLACES {
        let at = base + spacing * k - pair;
        if at + pair > claimed_end {
            io.claim(&[(at, pair)])?;
        }
        let led = if k == PLACES { lead } else { 0 };
        for _ in 0..led.div_ceil(pair) {
            write_au(io, plan, at, ru)?;
            write_au(io, plan, at + plan.au, ru)?;
        }
        let first = mb_s(plan.au, write_au(io, plan, at, ru)?);
        let second = mb_s(plan.au, write_au(io, plan, at + plan.au, ru)?);
        slowest = slowest.min(first.max(second));
    }
    Ok(Some(slowest))
}
