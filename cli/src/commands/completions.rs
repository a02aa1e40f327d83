//! `cudnn-trace completions SHELL`: a completion script, generated from the
//! same definitions as the parser (`args::definition`).

use crate::args;

/// Prints the completion script for `shell`; returns the exit status.
pub fn run(shell: clap_complete::Shell) -> i32 {
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut args::definition(), "cudnn-trace", &mut out);
    super::print_stdout(&String::from_utf8_lossy(&out));
    0
}
