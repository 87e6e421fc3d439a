//! The marks and labels every text table shares (a test's row label, the
//! unstable mark and its legend), apart from [`super::text`] so that the
//! tables of each command's own file use them without naming it.

use crate::result::TestResult;
use crate::stats::Spread;

/// A test's name with its threads after its queue depth: `SEQ 1MiB Q8`
/// run by 4 threads is `SEQ 1MiB Q8T4`, as CrystalDiskMark labels rows. A
/// name that already says its threads, or does not end in its queue depth,
/// is kept.
pub(super) fn row_label(t: &TestResult) -> String {
    let queue = format!("Q{}", t.workload.queue_depth);
    match t.name.strip_suffix(&queue) {
        Some(_) => format!("{}T{}", t.name, t.workload.threads),
        None => t.name.clone(),
    }
}

/// The marker of a figure whose repetitions disagree ([`Spread::is_unstable`]).
pub(super) fn unstable_mark(s: &Spread) -> &'static str {
    if s.is_unstable() { "~" } else { "" }
}

/// The line explaining [`unstable_mark`], printed once below a table that has one.
pub(super) const UNSTABLE_LEGEND: &str =
    "~           unstable: range over 30% of the median (raise --time or --repeat)";
