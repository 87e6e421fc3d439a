//! A curve against the ceiling of the link the device sits behind: a
//! plateau at the link's practical limit is the link's, not the medium's,
//! and a figure above it cannot have crossed the link (a cache answered).

use super::fit::SizePoint;
use crate::probe::Interface;
use crate::result::curve::CeilingVerdict;

/// A plateau within this share of the link's ceiling is the link's.
pub const PLATEAU_SHARE: f64 = 0.85;
/// A figure this far above the link's ceiling cannot have crossed it.
pub const IMPOSSIBLE_MARGIN: f64 = 1.05;

/// Judges a curve against the link's practical ceiling, when one is known.
pub fn ceiling_verdict(
    points: &[SizePoint],
    interface: Option<&Interface>,
) -> Option<CeilingVerdict> {
    let interface = interface?;
    let limit = interface.practical_limit_mb_s?;
    let best = points.iter().map(|p| p.mb_per_s).fold(0.0, f64::max);
    let impossible = points
        .iter()
        .filter(|p| p.mb_per_s > limit * IMPOSSIBLE_MARGIN)
        .map(|p| (p.size, p.mb_per_s))
        .collect();
    Some(CeilingVerdict {
        interface: interface.description.clone(),
        limit_mb_s: limit,
        plateau_is_interface: best >= limit * PLATEAU_SHARE && best <= limit * IMPOSSIBLE_MARGIN,
        impossible,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_above_the_link_are_impossible() {
        let usb2 = Interface {
            kind: "usb".into(),
            description: "USB 2.0".into(),
            link_mbit_s: Some(480.0),
            practical_limit_mb_s: Some(40.0),
        };
        let p = |size: u64, mbps: f64| SizePoint {
            size,
            time_per_op_ns: 1.0,
            mb_per_s: mbps,
            buffered: false,
        };
        let v = ceiling_verdict(&[p(4096, 10.0), p(1 << 20, 38.0)], Some(&usb2)).unwrap();
        assert!(v.plateau_is_interface && v.impossible.is_empty());
        let v = ceiling_verdict(&[p(4096, 10.0), p(1 << 20, 500.0)], Some(&usb2)).unwrap();
        assert_eq!(v.impossible, vec![(1 << 20, 500.0)]);
        assert!(!v.plateau_is_interface);
    }
}
