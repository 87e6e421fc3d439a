//! The sentences a refusal is made of: each use of a block device or a file
//! that was found, said with what ends it (the command to run, quoted for a
//! shell), so the person reading the refusal needs no second tool.

/// One way a block device is used, as found; [`Use::sentence`] says it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Use {
    /// Mounted on these (mount point, file system type) pairs.
    Mounted {
        node: String,
        on: Vec<(String, String)>,
    },
    /// Device-mapper, md or other devices stacked on it.
    Holders { node: String, holders: Vec<Holder> },
    /// In `/proc/swaps` under this path.
    Swap { node: String, listed_as: String },
    /// Loop devices (kernel names) whose backing file is its node.
    LoopsOver { node: String, loops: Vec<String> },
    /// The kernel refused an exclusive open; these processes have one of the
    /// device's nodes open (none found: a mount in another mount namespace,
    /// a kernel user, or a process whose `/proc` this one cannot read).
    Claimed { node: String, openers: Vec<Opener> },
    /// A loop device whose backing file these processes hold open for
    /// writing (a write test on that file, a program writing it): what is
    /// written through the loop device lands under their writes, and a
    /// `--preserve` restore of either would undo the other's.
    BackingWritten { node: String, openers: Vec<Opener> },
}

/// One way a regular file is used besides backing a loop device;
/// [`FileUse::sentence`] says it, speaking of the file as "it".
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum FileUse {
    /// Active swap, listed in `/proc/swaps` under this path.
    Swap { listed_as: String },
    /// Bind-mounted on another path, where it shows too.
    BoundOn { mount_point: String },
    /// The path given is itself a bind mount (of this file, over what the
    /// path held before).
    BindMount { mount_point: String },
    /// Open for writing in these processes.
    Writers { openers: Vec<Opener> },
}

impl FileUse {
    pub(super) fn sentence(&self) -> String {
        match self {
            FileUse::Swap { listed_as } => format!(
                "it is an active swap file (listed in /proc/swaps as {listed_as}): turn it off with `swapoff {}`",
                shell_word(listed_as)
            ),
            FileUse::BoundOn { mount_point } => format!(
                "it is bind-mounted on {mount_point}, where whatever uses that path would see the test's data: unmount it with `umount {}`",
                shell_word(mount_point)
            ),
            FileUse::BindMount { mount_point } => format!(
                "it is a bind mount of another file over {mount_point}, so the test would write that other file: unmount it with `umount {}` (then give the file itself)",
                shell_word(mount_point)
            ),
            FileUse::Writers { openers } => {
                let one = openers.len() == 1;
                let mut named: Vec<String> = openers
                    .iter()
                    .take(OPENERS_NAMED)
                    .map(|o| format!("pid {} ({})", o.pid, o.command))
                    .collect();
                if openers.len() > OPENERS_NAMED {
                    named.push(format!("{} more", openers.len() - OPENERS_NAMED));
                }
                format!(
                    "it is open for writing in {}, whose data a write test would overwrite (and a --preserve restore would undo {} writes): stop {} (or let {} finish)",
                    named.join(", "),
                    if one { "its" } else { "their" },
                    if one {
                        "that process"
                    } else {
                        "those processes"
                    },
                    if one { "it" } else { "them" }
                )
            }
        }
    }
}

/// A device stacked on another (`holders/` in sysfs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Holder {
    /// Kernel name: `dm-0`, `md127`, `bcache0`.
    pub(super) name: String,
    /// For a device-mapper device, its mapping name (`dm/name` in sysfs),
    /// which `dmsetup` takes.
    pub(super) dm_name: Option<String>,
}

impl Holder {
    fn remove_command(&self) -> String {
        if let Some(dm) = &self.dm_name {
            format!("`dmsetup remove {}`", shell_word(dm))
        } else if self.name.starts_with("dm-") {
            format!("`dmsetup remove /dev/{}`", self.name)
        } else if self.name.starts_with("md") {
            format!("`mdadm --stop /dev/{}`", self.name)
        } else {
            format!("stop /dev/{}", self.name)
        }
    }
}

/// A process that has a device node open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Opener {
    pub(super) pid: u32,
    /// `/proc/<pid>/comm`: the command name, at most 15 bytes.
    pub(super) command: String,
    /// The node it has open.
    pub(super) node: String,
}

/// How many openers a message names before saying "and N more".
const OPENERS_NAMED: usize = 4;

impl Use {
    /// What uses the device, naming its node.
    pub(super) fn what(&self) -> String {
        match self {
            Use::Mounted { node, on } => {
                let on: Vec<String> = on.iter().map(|(mp, fs)| format!("{mp} ({fs})")).collect();
                format!("{node} is mounted on {}", on.join(", "))
            }
            Use::Holders { node, holders } => {
                let names: Vec<&str> = holders.iter().map(|h| h.name.as_str()).collect();
                format!("{node} has holders: {}", names.join(", "))
            }
            Use::Swap { node, listed_as } => {
                format!("{node} is active swap (listed as {listed_as})")
            }
            Use::LoopsOver { node, loops } => {
                format!(
                    "{node} has loop devices set up over it: {}",
                    loops.join(", ")
                )
            }
            Use::Claimed { node, openers } if openers.is_empty() => format!(
                "{node} is in use: the kernel refused to open it exclusively \
                 (mounted in another mount namespace, or held by a kernel driver \
                 or by a program this process cannot see)"
            ),
            Use::Claimed { node, openers } => {
                let mut named: Vec<String> = openers
                    .iter()
                    .take(OPENERS_NAMED)
                    .map(|o| {
                        if &o.node == node {
                            format!("pid {} ({})", o.pid, o.command)
                        } else {
                            format!("pid {} ({}, through {})", o.pid, o.command, o.node)
                        }
                    })
                    .collect();
                if openers.len() > OPENERS_NAMED {
                    named.push(format!("{} more", openers.len() - OPENERS_NAMED));
                }
                format!(
                    "{node} is in use: the kernel refused to open it exclusively, \
                     and it is open in {}",
                    named.join(", ")
                )
            }
            Use::BackingWritten { node, openers } => {
                let named: Vec<String> = openers
                    .iter()
                    .take(OPENERS_NAMED)
                    .map(|o| format!("pid {} ({})", o.pid, o.command))
                    .collect();
                let more = openers.len().saturating_sub(OPENERS_NAMED);
                let more = match more {
                    0 => String::new(),
                    n => format!(" and {n} more"),
                };
                format!(
                    "the file behind {node} is open for writing in {}{more}",
                    named.join(", ")
                )
            }
        }
    }

    /// What ends that use, as an instruction.
    pub(super) fn fix(&self) -> String {
        match self {
            Use::Mounted { on, .. } => {
                let points: Vec<String> = on.iter().map(|(mp, _)| shell_word(mp)).collect();
                format!("unmount {}", points.join(" and "))
            }
            Use::Holders { holders, .. } => {
                let commands: Vec<String> = holders.iter().map(Holder::remove_command).collect();
                format!("remove what is stacked on it ({})", commands.join(", "))
            }
            Use::Swap { listed_as, .. } => {
                format!("turn it off with `swapoff {}`", shell_word(listed_as))
            }
            Use::LoopsOver { loops, .. } => {
                let nodes: Vec<String> = loops.iter().map(|l| format!("/dev/{l}")).collect();
                format!("detach them with `losetup -d {}`", nodes.join(" "))
            }
            Use::Claimed { openers, .. } if openers.is_empty() => {
                "unmount or release it where it is used".into()
            }
            Use::Claimed { openers, .. } | Use::BackingWritten { openers, .. } => {
                let one = openers.len() == 1;
                format!(
                    "close {} (or let {} finish)",
                    if one {
                        "that program"
                    } else {
                        "those programs"
                    },
                    if one { "it" } else { "them" }
                )
            }
        }
    }

    pub(super) fn sentence(&self) -> String {
        format!("{}: {}", self.what(), self.fix())
    }
}

/// The uses joined into one line, or `None` when there are none.
pub(super) fn sentences(uses: &[Use]) -> Option<String> {
    (!uses.is_empty()).then(|| {
        uses.iter()
            .map(Use::sentence)
            .collect::<Vec<_>>()
            .join("; ")
    })
}

/// The sentence about one loop device over the file [`super::why_file_busy`] was
/// asked about, given what uses that loop device.
pub(super) fn backing_sentence(loop_node: &str, uses: &[Use]) -> String {
    let detach = format!("detach it with `losetup -d {loop_node}`");
    if uses.is_empty() {
        return format!(
            "it backs loop device {loop_node}, which is attached though nothing uses it now: {detach}"
        );
    }
    let whats: Vec<String> = uses.iter().map(Use::what).collect();
    let fixes: Vec<String> = uses.iter().map(Use::fix).collect();
    format!(
        "it backs loop device {loop_node}, and {}: {} and {detach}",
        whats.join(" and "),
        fixes.join(", ")
    )
}

/// `s` as one shell word: unchanged when it has nothing the shell would
/// interpret, else single-quoted.
fn shell_word(s: &str) -> String {
    let plain = !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-+:,=@%".contains(&b));
    if plain {
        s.to_owned()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_uses_name_their_fixes() {
        let said = |u: FileUse| u.sentence();
        assert_eq!(
            said(FileUse::Swap {
                listed_as: "/swap file".into()
            }),
            "it is an active swap file (listed in /proc/swaps as /swap file): turn it off with `swapoff '/swap file'`"
        );
        assert!(
            said(FileUse::BoundOn {
                mount_point: "/srv/b".into()
            })
            .ends_with("unmount it with `umount /srv/b`")
        );
        assert!(
            said(FileUse::BindMount {
                mount_point: "/srv/b".into()
            })
            .contains("bind mount of another file over /srv/b")
        );
        let opener = |pid| Opener {
            pid,
            command: "sleep".into(),
            node: String::new(),
        };
        let one = said(FileUse::Writers {
            openers: vec![opener(7)],
        });
        assert!(
            one.starts_with("it is open for writing in pid 7 (sleep),")
                && one.contains("stop that process"),
            "{one}"
        );
        let many = said(FileUse::Writers {
            openers: (1..=6).map(opener).collect(),
        });
        assert!(many.contains("pid 4 (sleep), 2 more"), "{many}");
        assert!(many.contains("stop those processes"), "{many}");
    }

    #[test]
    fn loops_and_exclusive_openers_are_named_with_their_fixes() {
        let loops = Use::LoopsOver {
            node: "/dev/sdb".into(),
            loops: vec!["loop4".into(), "loop5".into()],
        };
        assert_eq!(
            loops.sentence(),
            "/dev/sdb has loop devices set up over it: loop4, loop5: \
             detach them with `losetup -d /dev/loop4 /dev/loop5`"
        );
        let unseen = Use::Claimed {
            node: "/dev/sdb".into(),
            openers: Vec::new(),
        };
        assert!(unseen.sentence().starts_with(
            "/dev/sdb is in use: the kernel refused to open it exclusively (mounted in another"
        ));
        assert!(
            unseen
                .sentence()
                .ends_with(": unmount or release it where it is used")
        );
        let opener = |pid, node: &str| Opener {
            pid,
            command: "mkfs.ext4".into(),
            node: node.into(),
        };
        let one = Use::Claimed {
            node: "/dev/sdb".into(),
            openers: vec![opener(812, "/dev/sdb")],
        };
        assert_eq!(
            one.sentence(),
            "/dev/sdb is in use: the kernel refused to open it exclusively, and it is \
             open in pid 812 (mkfs.ext4): close that program (or let it finish)"
        );
        let many = Use::Claimed {
            node: "/dev/sdb".into(),
            openers: (1..=6).map(|pid| opener(pid, "/dev/sdb1")).collect(),
        };
        assert_eq!(
            many.what(),
            "/dev/sdb is in use: the kernel refused to open it exclusively, and it is \
             open in pid 1 (mkfs.ext4, through /dev/sdb1), pid 2 (mkfs.ext4, through \
             /dev/sdb1), pid 3 (mkfs.ext4, through /dev/sdb1), pid 4 (mkfs.ext4, \
             through /dev/sdb1), 2 more"
        );
        assert_eq!(many.fix(), "close those programs (or let them finish)");
        assert_eq!(sentences(&[]), None);
        assert_eq!(
            sentences(&[loops.clone(), one.clone()]),
            Some(format!("{}; {}", loops.sentence(), one.sentence()))
        );
    }

    #[test]
    fn backing_sentences_name_the_loop_its_users_and_the_detach() {
        assert_eq!(
            backing_sentence("/dev/loop3", &[]),
            "it backs loop device /dev/loop3, which is attached though nothing uses \
             it now: detach it with `losetup -d /dev/loop3`"
        );
        let mounted = Use::Mounted {
            node: "/dev/loop3".into(),
            on: vec![("/mnt/img".into(), "ext4".into())],
        };
        assert_eq!(
            backing_sentence("/dev/loop3", std::slice::from_ref(&mounted)),
            "it backs loop device /dev/loop3, and /dev/loop3 is mounted on /mnt/img \
             (ext4): unmount /mnt/img and detach it with `losetup -d /dev/loop3`"
        );
        let swap = Use::Swap {
            node: "/dev/loop3p2".into(),
            listed_as: "/dev/loop3p2".into(),
        };
        assert_eq!(
            backing_sentence("/dev/loop3", &[mounted, swap]),
            "it backs loop device /dev/loop3, and /dev/loop3 is mounted on /mnt/img \
             (ext4) and /dev/loop3p2 is active swap (listed as /dev/loop3p2): unmount \
             /mnt/img, turn it off with `swapoff /dev/loop3p2` and detach it with \
             `losetup -d /dev/loop3`"
        );
    }

    #[test]
    fn shell_words_are_quoted_only_when_needed() {
        assert_eq!(shell_word("/mnt/usb-1_A.b+c"), "/mnt/usb-1_A.b+c");
        assert_eq!(shell_word("/mnt/my data"), "'/mnt/my data'");
        assert_eq!(shell_word("/mnt/it's"), r"'/mnt/it'\''s'");
        assert_eq!(shell_word("/mnt/$HOME"), "'/mnt/$HOME'");
        assert_eq!(shell_word(""), "''");
    }
}
