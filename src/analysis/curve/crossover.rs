//! Where one device's curve overtakes another's: the sizes both measured
//! directly, scanned for a change of sign in the difference of their MB/s,
//! the crossing placed by interpolating on log size.

use super::fit::SizePoint;
use crate::result::curve::Crossover;

/// Crossovers between two curves of one pattern over the sizes both
/// measured directly.
pub fn crossovers(
    pattern: crate::vocab::Rw,
    a: (&str, &[SizePoint]),
    b: (&str, &[SizePoint]),
) -> Vec<Crossover> {
    let common: Vec<(u64, f64, f64)> =
        a.1.iter()
            .filter(|p| !p.buffered)
            .filter_map(|pa| {
                b.1.iter()
                    .find(|pb| pb.size == pa.size && !pb.buffered)
                    .map(|pb| (pa.size, pa.mb_per_s, pb.mb_per_s))
            })
            .collect();
    common
        .windows(2)
        .filter_map(|w| {
            let (s0, a0, b0) = w[0];
            let (s1, a1, b1) = w[1];
            let (d0, d1) = (a0 - b0, a1 - b1);
            if d0 == 0.0 || d1 == 0.0 || (d0 > 0.0) == (d1 > 0.0) {
                return None;
            }
            let share = d0 / (d0 - d1);
            let at =
                ((s0 as f64).log2() + share * ((s1 as f64).log2() - (s0 as f64).log2())).exp2();
            let (below, above) = if d0 > 0.0 { (a.0, b.0) } else { (b.0, a.0) };
            Some(Crossover {
                pattern,
                faster_below: below.to_string(),
                faster_above: above.to_string(),
                between: (s0, s1),
                at_bytes: at,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::curve::test_points::speed_point;

    #[test]
    fn crossovers_are_found_between_sizes() {
        let p = speed_point;
        let cf = [p(512, 2.0), p(4096, 10.0), p(65536, 20.0), p(1 << 20, 25.0)];
        let hd = [p(512, 0.1), p(4096, 0.8), p(65536, 12.0), p(1 << 20, 60.0)];
        let x = crossovers(crate::vocab::Rw::RandRead, ("cf", &cf), ("hd", &hd));
        assert_eq!(x.len(), 1);
        assert_eq!(x[0].between, (65536, 1 << 20));
        assert_eq!(
            (x[0].faster_below.as_str(), x[0].faster_above.as_str()),
            ("cf", "hd")
        );
        assert!(x[0].at_bytes > 65536.0 && x[0].at_bytes < (1 << 20) as f64);
    }
}
