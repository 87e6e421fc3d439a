//! `{rank}`, `{host}` and `{local_rank}` in a rank's arguments: one command
//! line for the whole job, a different target on every rank
//! (`/scratch/{host}/{local_rank}`, `/dev/nvme{local_rank}n1`).

/// Who a rank is, as far as its arguments may say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RankNames<'a> {
    pub rank: u32,
    pub host: &'a str,
    pub local_rank: u32,
}

/// `arg` with every placeholder filled in; any other text, braces
/// included, is left as it is.
pub fn expand(arg: &str, names: &RankNames<'_>) -> String {
    arg.replace("{rank}", &names.rank.to_string())
        .replace("{local_rank}", &names.local_rank.to_string())
        .replace("{host}", names.host)
}

/// True when `arg` holds a placeholder.
pub fn has_placeholder(arg: &str) -> bool {
    ["{rank}", "{host}", "{local_rank}"]
        .iter()
        .any(|p| arg.contains(p))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn names() -> RankNames<'static> {
        RankNames {
            rank: 12,
            host: "node7",
            local_rank: 3,
        }
    }

    #[test]
    fn every_placeholder_is_filled() {
        assert_eq!(
            expand("/scratch/{host}/r{rank}-{local_rank}", &names()),
            "/scratch/node7/r12-3"
        );
        assert_eq!(expand("/dev/nvme{local_rank}n1", &names()), "/dev/nvme3n1");
    }

    #[test]
    fn other_braces_stay() {
        assert_eq!(expand("{ranks}/{}/{host", &names()), "{ranks}/{}/{host");
        assert!(!has_placeholder("{ranks}"));
        assert!(has_placeholder("a{host}"));
    }

    proptest! {
        #[test]
        fn expansion_never_panics_and_leaves_no_placeholder(arg in ".{0,40}", host in "[a-z0-9.-]{1,20}") {
            let n = RankNames { rank: 1, host: &host, local_rank: 0 };
            let out = expand(&arg, &n);
            // A host name cannot bring a placeholder back, so none is left.
            prop_assert!(!has_placeholder(&out));
        }
    }
}
