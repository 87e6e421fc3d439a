//! Results of other tools, turned into iocurve results so they sit beside
//! iocurve's own runs in history, compare and export.

pub mod fio;
