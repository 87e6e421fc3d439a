//! Whether the ranks ran alike: the one line that stops a job whose hosts
//! run different builds of iocurve, kernels or file systems before
//! anything is opened.
//!
//! Why stop: a merged figure is only one measurement when every rank
//! measured the same way; a rank on another build (or another file system)
//! measures something else, and fio's client/server mode quitting silently
//! on a version mismatch (fio #620) shows what a reader is left with
//! otherwise. The line names rank 0's identity once, then each host that
//! differs, once, with its ranks and only the fields that differ, and
//! ends with what to do: `--mixed-hosts` lets kernels and file systems
//! differ (the spine blanks them before asking), never builds.

use crate::result::cluster::RankIdentity;

/// One line naming the hosts that differ from rank 0 in version, build,
/// kernel or file system, or `None` when all agree.
pub fn differences(ids: &[RankIdentity]) -> Option<String> {
    let base = ids.iter().min_by_key(|id| id.rank)?;
    let mut hosts: Vec<HostDifference> = Vec::new();
    for id in ids {
        let fields: Vec<Field> = Field::ALL
            .into_iter()
            .filter(|f| f.of(id) != f.of(base))
            .collect();
        if fields.is_empty() {
            continue;
        }
        let at = match hosts.iter().position(|h| h.host == id.host) {
            Some(at) => at,
            None => {
                hosts.push(HostDifference::new(&id.host));
                hosts.len() - 1
            }
        };
        hosts[at].add(id, &fields);
    }
    if hosts.is_empty() {
        return None;
    }
    let listed: Vec<String> = hosts.iter().map(HostDifference::describe).collect();
    Some(format!(
        "ranks differ from rank {} (host {}: {}): {} — {}",
        base.rank,
        base.host,
        describe_base(base),
        listed.join("; "),
        remedy(&hosts)
    ))
}

/// `iocurve 0.1.0 build 1a2b3c4d, Linux 6.1.0, ext4`, leaving out what is
/// blank (`--mixed-hosts` blanks the kernel and file system before the
/// comparison).
fn describe_base(base: &RankIdentity) -> String {
    let parts = [
        format!("iocurve {} build {}", base.version, base.build),
        if base.kernel.is_empty() {
            String::new()
        } else {
            format!("Linux {}", base.kernel)
        },
        base.file_system.clone(),
    ];
    let kept: Vec<String> = parts.into_iter().filter(|p| !p.is_empty()).collect();
    kept.join(", ")
}

/// What the user can do: `--mixed-hosts` lets kernels and file systems
/// differ, never builds.
fn remedy(hosts: &[HostDifference]) -> &'static str {
    let differ = |fields: &[Field]| {
        hosts
            .iter()
            .flat_map(|h| &h.values)
            .any(|(f, _)| fields.contains(f))
    };
    let builds = differ(&[Field::Version, Field::Build]);
    let systems = differ(&[Field::Kernel, Field::FileSystem]);
    match (builds, systems) {
        (true, true) => {
            "run one build of iocurve on every host, and hosts alike or pass --mixed-hosts"
        }
        (true, false) => "run one build of iocurve on every host",
        _ => "run on hosts alike, or pass --mixed-hosts",
    }
}

/// The fields compared, in the order they are named.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    Version,
    Build,
    Kernel,
    FileSystem,
}

impl Field {
    const ALL: [Field; 4] = [
        Field::Version,
        Field::Build,
        Field::Kernel,
        Field::FileSystem,
    ];

    fn of(self, id: &RankIdentity) -> &str {
        match self {
            Field::Version => &id.version,
            Field::Build => &id.build,
            Field::Kernel => &id.kernel,
            Field::FileSystem => &id.file_system,
        }
    }

    /// The word before the value, as the line reads it.
    fn label(self) -> &'static str {
        match self {
            Field::Version => "iocurve",
            Field::Build => "build",
            Field::Kernel => "kernel",
            Field::FileSystem => "file system",
        }
    }
}

/// One host's ranks that differ, and the values they differ in (each kept
/// once, in the order met: ranks of one host may differ from each other
/// too, e.g. targets on two file systems).
struct HostDifference {
    host: String,
    ranks: Vec<u32>,
    values: Vec<(Field, String)>,
}

impl HostDifference {
    fn new(host: &str) -> HostDifference {
        HostDifference {
            host: host.to_string(),
            ranks: Vec::new(),
            values: Vec::new(),
        }
    }

    fn add(&mut self, id: &RankIdentity, fields: &[Field]) {
        self.ranks.push(id.rank);
        for &field in fields {
            let value = (field, field.of(id).to_string());
            if !self.values.contains(&value) {
                self.values.push(value);
            }
        }
    }

    /// `host b (ranks 2, 3) build 9f8e7d6c, file system xfs or btrfs`.
    fn describe(&self) -> String {
        let mut ranks = self.ranks.clone();
        ranks.sort_unstable();
        let numbers: Vec<String> = ranks.iter().map(u32::to_string).collect();
        let noun = if ranks.len() == 1 { "rank" } else { "ranks" };
        let fields: Vec<String> = Field::ALL
            .into_iter()
            .filter_map(|field| {
                let values: Vec<&str> = self
                    .values
                    .iter()
                    .filter(|(f, _)| *f == field)
                    .map(|(_, v)| v.as_str())
                    .collect();
                (!values.is_empty()).then(|| format!("{} {}", field.label(), values.join(" or ")))
            })
            .collect();
        format!(
            "host {} ({noun} {}) {}",
            self.host,
            numbers.join(", "),
            fields.join(", ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(rank: u32, host: &str) -> RankIdentity {
        RankIdentity {
            rank,
            host: host.into(),
            local_rank: 0,
            version: "0.1.0".into(),
            build: "1a2b3c4d".into(),
            kernel: "6.1.0".into(),
            file_system: "ext4".into(),
            target: format!("/scratch/{host}"),
        }
    }

    #[test]
    fn ranks_alike_give_no_line() {
        let ids = [id(0, "a"), id(1, "a"), id(2, "b")];
        assert_eq!(differences(&ids), None);
        assert_eq!(differences(&[]), None);
        // The host name, local rank and target are expected to differ.
        let mut other = id(3, "c");
        other.local_rank = 5;
        other.target = "/elsewhere".into();
        assert_eq!(differences(&[id(0, "a"), other]), None);
    }

    #[test]
    fn each_differing_host_is_named_once_with_its_ranks_and_only_what_differs() {
        let mut ids = vec![id(0, "a"), id(1, "a"), id(2, "b"), id(3, "b"), id(4, "c")];
        ids[2].build = "9f8e7d6c".into();
        ids[3].build = "9f8e7d6c".into();
        ids[4].file_system = "xfs".into();
        assert_eq!(
            differences(&ids).unwrap(),
            "ranks differ from rank 0 (host a: iocurve 0.1.0 build 1a2b3c4d, Linux 6.1.0, ext4): \
             host b (ranks 2, 3) build 9f8e7d6c; host c (rank 4) file system xfs \
             — run one build of iocurve on every host, and hosts alike or pass --mixed-hosts"
        );
    }

    #[test]
    fn the_remedy_fits_what_differs_and_blank_fields_are_left_out() {
        let mut ids = vec![id(0, "a"), id(1, "b")];
        ids[1].kernel = "6.5.0".into();
        assert!(
            differences(&ids).unwrap().ends_with(
                "host b (rank 1) kernel 6.5.0 — run on hosts alike, or pass --mixed-hosts"
            )
        );
        // `--mixed-hosts` blanks kernels and file systems; builds still count.
        for i in &mut ids {
            i.kernel.clear();
            i.file_system.clear();
        }
        assert_eq!(differences(&ids), None);
        ids[1].version = "0.2.0".into();
        assert_eq!(
            differences(&ids).unwrap(),
            "ranks differ from rank 0 (host a: iocurve 0.1.0 build 1a2b3c4d): \
             host b (rank 1) iocurve 0.2.0 — run one build of iocurve on every host"
        );
    }

    #[test]
    fn only_the_differing_ranks_of_a_host_are_named_and_every_value_once() {
        let mut ids = vec![id(0, "a"), id(1, "b"), id(2, "b"), id(3, "b")];
        ids[1].version = "0.2.0".into();
        ids[1].kernel = "6.5.0".into();
        ids[3].file_system = "xfs".into();
        ids[3].kernel = "6.5.0".into();
        let line = differences(&ids).unwrap();
        assert!(
            line.contains(": host b (ranks 1, 3) iocurve 0.2.0, kernel 6.5.0, file system xfs — "),
            "{line}"
        );
        assert!(!line.contains('\n'));
    }

    #[test]
    fn the_base_is_rank_zero_whatever_the_order_given() {
        let mut ids = vec![id(2, "c"), id(0, "a"), id(1, "b")];
        ids[0].kernel = "5.15.0".into();
        let line = differences(&ids).unwrap();
        assert!(
            line.starts_with("ranks differ from rank 0 (host a:"),
            "{line}"
        );
        assert!(line.contains("host c (rank 2) kernel 5.15.0"), "{line}");
        // Two values on one host read as alternatives.
        let mut ids = vec![id(0, "a"), id(1, "b"), id(2, "b")];
        ids[1].file_system = "xfs".into();
        ids[2].file_system = "btrfs".into();
        assert!(
            differences(&ids)
                .unwrap()
                .contains("host b (ranks 1, 2) file system xfs or btrfs")
        );
    }
}
