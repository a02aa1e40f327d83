//! The hidden `__probe-cudnn DIR MAJOR` subcommand: the child side of the
//! out-of-process probe (`machine::probe`), which loads a cuDNN copy's
//! libraries and prints the versions they report.

use std::ffi::OsString;

/// Runs the probe's child side; returns its exit status.
pub fn run(args: &[OsString]) -> i32 {
    cudnn_trace_core::machine::probe::child_main(args)
}
