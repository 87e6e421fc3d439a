//! Where the steps shared by the measuring commands now live; kept as one
//! list of names while the commands move to calling them directly.

pub use crate::error::io_failure_message;
pub use crate::output::{exit_code_of, exit_code_unsaved, finish, report_to};
pub use crate::probe::record::{new_result, new_result_for, now_rfc3339};
pub use crate::safety::restore::{restore, restore_after_error};
pub use crate::target::open::{
    open_target, refuse_simulated, writes_may_be_asked, writes_skipped_because,
};
pub use crate::workload::prepare::prepare;
pub use crate::workload::repeat::{measure, measure_repeated, measure_repeated_on, test_result};
