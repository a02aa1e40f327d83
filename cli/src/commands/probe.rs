//! The hidden `__probe-cudnn --ask JSON` subcommand: the child side of the
//! out-of-process probe (`machine::probe`). It becomes the probe helper
//! `cdtrace-probe`, extracted beside the shim (`launch::shim`), which loads
//! the library files asked about and prints the versions they report.

use std::ffi::OsString;

/// Runs the probe's child side; returns its exit status when it could not
/// become the helper.
pub fn run(args: &[OsString]) -> i32 {
    cudnn_trace_core::machine::probe::child_main(args, cudnn_trace_core::launch::shim::probe_helper)
}
