//! `--read-other-host`: whose data each rank reads, so that no read is
//! answered by the reader's own page cache.
//!
//! The partner is chosen from the host names the ranks reported, never from
//! rank numbers: a launcher may place ranks round-robin, in blocks or in
//! any order, and an offset in rank numbers lands on the same host under
//! some of them (IOR's `-C` shift, issues #181 and #136). Hosts are sorted
//! by name and ranks within a host by rank; the rank at position k of host
//! g reads from the rank at position k (wrapped) of host g + 1 (wrapped),
//! so every host's data is read by the next host and uneven counts per host
//! still give everyone a partner elsewhere.

use crate::result::cluster::{NoPartner, NoPartnerKind, ReadOtherHost};
use std::collections::BTreeMap;

/// Each rank's partner on another host, chosen from the gathered host
/// names (index = rank), or why there is none.
pub fn read_partners(hosts: &[String]) -> ReadOtherHost {
    let groups = by_host(hosts);
    let itself: Vec<u32> = (0..hosts.len()).map(rank_number).collect();
    if groups.len() < 2 {
        let why = match groups.first() {
            Some((host, _)) => NoPartnerKind::OneHost {
                host: host.to_string(),
                ranks: rank_number(hosts.len()),
            },
            None => NoPartnerKind::NoRanks,
        };
        return ReadOtherHost {
            done: false,
            why_not: Some(NoPartner::Typed(why)),
            read_from: itself,
        };
    }
    let mut read_from = itself;
    for (g, (_, ranks)) in groups.iter().enumerate() {
        let (_, next) = &groups[(g + 1) % groups.len()];
        for (k, &rank) in ranks.iter().enumerate() {
            read_from[rank] = rank_number(next[k % next.len()]);
        }
    }
    ReadOtherHost {
        done: true,
        why_not: None,
        read_from,
    }
}

/// Ranks grouped by host, hosts in name order, ranks in rank order.
fn by_host(hosts: &[String]) -> Vec<(&str, Vec<usize>)> {
    let mut groups: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (rank, host) in hosts.iter().enumerate() {
        groups.entry(host.as_str()).or_default().push(rank);
    }
    groups.into_iter().collect()
}

/// A rank index as MPI numbers it (a job has far fewer than 2^32 ranks).
fn rank_number(index: usize) -> u32 {
    u32::try_from(index).expect("an MPI rank fits in u32")
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    /// Every rank reads from a rank on another host.
    fn all_elsewhere(hosts: &[String], plan: &ReadOtherHost) -> bool {
        plan.read_from.len() == hosts.len()
            && plan
                .read_from
                .iter()
                .enumerate()
                .all(|(r, &from)| hosts[from as usize] != hosts[r])
    }

    /// Each placement, and whom each rank reads from: always a rank on
    /// the next host by name.
    #[test]
    fn each_rank_reads_a_rank_on_the_next_host() {
        let cases: [(&[&str], &[u32]); 4] = [
            // Round robin: a's ranks 0, 3 read b's 1, 4; b's read c's; c's
            // read a's.
            (&["a", "b", "c", "a", "b", "c"], &[1, 2, 0, 4, 5, 3]),
            // Blocks.
            (&["a", "a", "b", "b", "c", "c"], &[2, 3, 4, 5, 0, 1]),
            // Hosts ordered by name, not by first rank: rank 0 on c, still
            // a → b → c → a.
            (&["c", "b", "a"], &[2, 0, 1]),
            // Uneven counts wrap around: a's three ranks all read b's only
            // rank; b reads c's first; c's two read a's first two.
            (&["a", "a", "a", "b", "c", "c"], &[3, 3, 3, 4, 0, 1]),
        ];
        for (hosts, from) in cases {
            let hosts = names(hosts);
            let plan = read_partners(&hosts);
            assert!(plan.done && plan.why_not.is_none(), "{hosts:?}");
            assert!(all_elsewhere(&hosts, &plan), "{hosts:?}");
            assert_eq!(plan.read_from, from, "{hosts:?}");
        }
    }

    #[test]
    fn one_host_reads_itself_and_says_why() {
        let hosts = names(&["node7", "node7", "node7"]);
        let plan = read_partners(&hosts);
        assert!(!plan.done);
        assert_eq!(plan.read_from, vec![0, 1, 2]);
        let one_host = NoPartnerKind::OneHost {
            host: "node7".into(),
            ranks: 3,
        };
        assert_eq!(plan.why_not, Some(NoPartner::Typed(one_host)));
        let none = read_partners(&[]);
        assert!(!none.done);
        assert_eq!(none.why_not, Some(NoPartner::Typed(NoPartnerKind::NoRanks)));
    }

    proptest! {
        #[test]
        fn any_placement_on_two_or_more_hosts_reads_elsewhere(
            hosts in prop::collection::vec(0u8..5, 1..40)
        ) {
            let hosts: Vec<String> = hosts.iter().map(|h| format!("h{h}")).collect();
            let plan = read_partners(&hosts);
            let distinct = hosts.iter().collect::<std::collections::BTreeSet<_>>().len();
            prop_assert_eq!(plan.done, distinct > 1);
            prop_assert_eq!(plan.read_from.len(), hosts.len());
            if distinct > 1 {
                prop_assert!(all_elsewhere(&hosts, &plan));
            }
        }
    }
}
